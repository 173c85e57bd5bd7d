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

#endif
