#ifndef CSHIMS_CURL_H
#define CSHIMS_CURL_H

// Shims for what Swift cannot import from libcurl: curl_easy_setopt and curl_easy_getinfo are variadic, so each
// argument type they take gets one typed wrapper. Nothing else belongs here.

#include <curl/curl.h>

static inline CURLcode cshims_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode cshims_curl_setopt_pointer(CURL *curl, CURLoption option, const void *value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode cshims_curl_setopt_offset(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}

static inline CURLcode cshims_curl_setopt_write_callback(
    CURL *curl, CURLoption option, size_t (*callback)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(curl, option, callback);
}

static inline CURLcode cshims_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

// CURL_GLOBAL_DEFAULT ORs other macros; Swift imports only macros that are plain literals.
static inline CURLcode cshims_curl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

#endif
