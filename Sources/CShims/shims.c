// SwiftPM needs one C source file in a C target. Every shim is a static inline function in the
// headers under include/, so there is nothing to compile here beyond checking the headers parse.
#include "cshims_gnutls.h"
#include "cshims_mhd.h"
#include "cshims_openssl.h"
