/* AWS Signature Version 4 for the native HTTP transport (http_wire.c): the signing key of a
 * (date, region, service), derived once per day and kept, and the Authorization header of
 * one request, from HMAC-SHA256 and SHA-256 of OpenSSL's libcrypto. The key's HMAC pad
 * states are computed once per day, so signing a request allocates nothing and keys
 * nothing: one SHA-256 of the canonical request and one HMAC of the string to sign, from
 * copies of the kept states. Pure C, no Lua.
 *
 * A signer has mutable state (its derivation context, the cached key, its pad states and
 * the date): one per loop thread. The secret lives only in the struct and in OpenSSL's
 * derivation context, and is wiped by cm_sigv4_fini. */
#ifndef CEPHMARK_SIGV4_H
#define CEPHMARK_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The SHA-256 block functions (SHA256_Init/Update/Final, a plain state struct that copies
 * with `=`): deprecated in OpenSSL 3 for new code, kept through 3.x, and what makes a
 * signature cost 0.2 µs where EVP's per-call provider dispatch and context keying cost 0.6
 * (docs/performance.md, "S3 over the native transport"). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

/* x-amz-content-sha256 of a request whose body is not hashed into the signature */
#define CM_SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"
#define CM_SIGV4_KEY_MAX          256

struct evp_mac_st;
struct evp_mac_ctx_st;

struct cm_sigv4 {
    char access_key[CM_SIGV4_KEY_MAX];
    char secret[CM_SIGV4_KEY_MAX + 4]; /* "AWS4" + the secret key */
    char region[64];
    char service[32];
    char scope[64 + 32 +
               16]; /* the credential scope after its date: "/region/service/aws4_request" */
    /* the cached signing key and the day it is for ("YYYYMMDD"; "" before the first) */
    char key_date[9];
    unsigned char key[32];
    uint64_t derivations; /* signing keys derived so far (the cache's misses) */
    /* x-amz-date of the last second signed in, "YYYYMMDDTHHMMSSZ" */
    time_t amz_second;
    char amz_date[17];

    struct evp_mac_st *hmac;
    struct evp_mac_ctx_st *derive; /* re-keyed along the derivation chain, once a day */
    SHA256_CTX inner, outer;       /* after key ^ ipad and key ^ opad: a request's HMAC */
};

/* Sets a signer up for one access key, secret, region and service ("s3"). 0, or -EINVAL
 * (a field too long) / -ENOMEM / -ENOSYS (libcrypto has no SHA-256 or HMAC) with a sentence
 * that never names the secret. cm_sigv4_fini in both cases. */
int cm_sigv4_init(struct cm_sigv4 *signer, const char *access_key, const char *secret,
                  const char *region, const char *service, char *error, size_t error_size);
void cm_sigv4_fini(struct cm_sigv4 *signer);

/* Makes the signing key of `date` ("YYYYMMDD") current: kept when it is the date of the
 * cached key, else derived (four HMACs) and cached. 0, or -EIO when libcrypto failed. */
int cm_sigv4_use_date(struct cm_sigv4 *signer, const char *date);

/* The signature (64 hex digits and a NUL) of a canonical request made at `amz_date`
 * ("YYYYMMDDTHHMMSSZ"), with the signing key of that date (cached or derived). 0 or -EIO. */
int cm_sigv4_signature(struct cm_sigv4 *signer, const char *amz_date, const char *canonical,
                       size_t canonical_len, char signature[65]);

/* The canonical request of a request that signs host, x-amz-content-sha256 and x-amz-date
 * (the headers the native transport sends): `uri` is the path as sent (already
 * percent-encoded, S3 style: once), `query` its canonical query ("" for none). Returns its
 * length, or 0 when it does not fit `out`. */
size_t cm_sigv4_canonical(char *out, size_t out_size, const char *method, const char *uri,
                          const char *query, const char *host, const char *payload_hash,
                          const char *amz_date);

/* The header lines that sign a request made at `now` (UTC seconds): "x-amz-date: ...\r\n",
 * "x-amz-content-sha256: <payload_hash>\r\n" and "Authorization: AWS4-HMAC-SHA256 ...\r\n",
 * written to `out`. Returns their length, or a negative errno (-ENAMETOOLONG when they or
 * the canonical request do not fit, -EIO). */
int cm_sigv4_headers(struct cm_sigv4 *signer, time_t now, const char *method, const char *uri,
                     const char *query, const char *host, const char *payload_hash, char *out,
                     size_t out_size);

#endif
