#ifndef CSHIMS_MHD_H
#define CSHIMS_MHD_H

// Shims for what Swift cannot import from libmicrohttpd. Nothing else belongs here.

#include <stdint.h>
#include <microhttpd.h>

// MARK: Variadic functions
// MHD_start_daemon is C-variadic, which Swift does not import. Every option is passed through one
// MHD_OPTION_ARRAY instead; the array must end with {MHD_OPTION_END, 0, NULL}.
static inline struct MHD_Daemon *cshims_mhd_start_daemon(unsigned int flags, uint16_t port,
                                                         MHD_AccessHandlerCallback handler,
                                                         void *handler_cls,
                                                         const struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls, MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

// MHD_get_connection_info and MHD_get_daemon_info are variadic as well (a few info types take extra
// arguments). None of the info types we query does, so the wrappers pass none.
static inline const union MHD_ConnectionInfo *cshims_mhd_get_connection_info(struct MHD_Connection *connection,
                                                                            enum MHD_ConnectionInfoType type) {
    return MHD_get_connection_info(connection, type);
}

static inline const union MHD_DaemonInfo *cshims_mhd_get_daemon_info(struct MHD_Daemon *daemon,
                                                                     enum MHD_DaemonInfoType type) {
    return MHD_get_daemon_info(daemon, type);
}

#endif
