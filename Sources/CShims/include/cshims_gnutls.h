#ifndef CSHIMS_GNUTLS_H
#define CSHIMS_GNUTLS_H

// Shims for what Swift cannot import from GnuTLS. Nothing else belongs here.

#include <gnutls/gnutls.h>

// MARK: Macros and global function pointers
// gnutls_free is a macro over a mutable global function pointer, which Swift 6 refuses to read from
// concurrent code. Memory GnuTLS allocates for its callers (exported key parameters) goes back here.
static inline void cshims_gnutls_free(void *pointer) {
    gnutls_free(pointer);
}

#endif
