#ifndef CSHIMS_OPENSSL_H
#define CSHIMS_OPENSSL_H

// Shims for what Swift cannot import from OpenSSL 3: function-like macros. Nothing else belongs here.

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/ocsp.h>

// MARK: BIO macros
// BIO_get_mem_data expands to BIO_ctrl(...); the macro itself is not visible to Swift.
static inline long cshims_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// MARK: Memory macros
// OPENSSL_free carries __FILE__/__LINE__ through a macro.
static inline void cshims_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

// MARK: Compound flag macros
// XN_FLAG_RFC2253 ORs several other macros; Swift imports only macros that are plain literals.
// ESC_MSB is removed so UTF-8 in names prints as UTF-8 instead of \XX escapes.
static inline unsigned long cshims_name_print_flags_rfc2253_utf8(void) {
    return XN_FLAG_RFC2253 & ~(unsigned long)ASN1_STRFLGS_ESC_MSB;
}

// EVP_PKEY_KEYPAIR ORs the OSSL_KEYMGMT_SELECT_* bits: what a private key decoder is asked to select.
static inline int cshims_evp_pkey_keypair_selection(void) {
    return EVP_PKEY_KEYPAIR;
}

// MARK: Typed stack macros
// sk_<TYPE>_* are macros over OPENSSL_sk_* with type checks; Swift sees neither.
static inline int cshims_sk_GENERAL_NAME_num(const GENERAL_NAMES *names) {
    return sk_GENERAL_NAME_num(names);
}

static inline GENERAL_NAME *cshims_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index) {
    return sk_GENERAL_NAME_value(names, index);
}

static inline void cshims_GENERAL_NAMES_free(GENERAL_NAMES *names) {
    GENERAL_NAMES_free(names);
}

static inline STACK_OF(X509) *cshims_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

static inline int cshims_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}

static inline void cshims_sk_X509_pop_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}

static inline STACK_OF(X509_EXTENSION) *cshims_sk_X509_EXTENSION_new_null(void) {
    return sk_X509_EXTENSION_new_null();
}

static inline int cshims_sk_X509_EXTENSION_push(STACK_OF(X509_EXTENSION) *stack, X509_EXTENSION *extension) {
    return sk_X509_EXTENSION_push(stack, extension);
}

static inline void cshims_sk_X509_EXTENSION_pop_free(STACK_OF(X509_EXTENSION) *stack) {
    sk_X509_EXTENSION_pop_free(stack, X509_EXTENSION_free);
}

static inline int cshims_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack) {
    return sk_OPENSSL_STRING_num(stack);
}

static inline const char *cshims_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index) {
    return sk_OPENSSL_STRING_value(stack, index);
}

#endif
