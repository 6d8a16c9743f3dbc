/* AWS Signature Version 4 signing with libcrypto's HMAC-SHA256 and SHA-256; see sigv4.h. */
#include "sigv4.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <string.h>

static void copy_field(char *out, size_t out_size, const char *text)
{
    snprintf(out, out_size, "%s", text ? text : "");
}

int cm_sigv4_init(struct cm_sigv4 *signer, const char *access_key, const char *secret,
                  const char *region, const char *service, char *error, size_t error_size)
{
    memset(signer, 0, sizeof *signer);
    if (!access_key || !secret || !region || !service ||
        strlen(access_key) >= sizeof signer->access_key ||
        strlen(secret) + 4 >= sizeof signer->secret || strlen(region) >= sizeof signer->region ||
        strlen(service) >= sizeof signer->service || !*region || !*service) {
        snprintf(error, error_size,
                 "cannot sign S3 requests: the access key, secret, region or "
                 "service is missing or too long");
        return -EINVAL;
    }
    copy_field(signer->access_key, sizeof signer->access_key, access_key);
    snprintf(signer->secret, sizeof signer->secret, "AWS4%s", secret);
    copy_field(signer->region, sizeof signer->region, region);
    copy_field(signer->service, sizeof signer->service, service);
    snprintf(signer->scope, sizeof signer->scope, "/%s/%s/aws4_request", region, service);
    signer->amz_second = (time_t)-1;
    signer->hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (!signer->hmac) {
        snprintf(error, error_size, "cannot sign S3 requests: libcrypto has no SHA-256 or HMAC");
        return -ENOSYS;
    }
    signer->derive = EVP_MAC_CTX_new(signer->hmac);
    if (!signer->derive) {
        snprintf(error, error_size, "out of memory for the S3 signer");
        return -ENOMEM;
    }
    return 0;
}

void cm_sigv4_fini(struct cm_sigv4 *signer)
{
    EVP_MAC_CTX_free(signer->derive);
    EVP_MAC_free(signer->hmac);
    signer->derive = NULL;
    signer->hmac = NULL;
    explicit_bzero(signer->secret, sizeof signer->secret);
    explicit_bzero(signer->key, sizeof signer->key);
    OPENSSL_cleanse(&signer->inner, sizeof signer->inner);
    OPENSSL_cleanse(&signer->outer, sizeof signer->outer);
    signer->key_date[0] = '\0';
}

/* HMAC-SHA256(key, data) into out (32 bytes) on `context`, keyed anew. */
static int hmac_keyed(EVP_MAC_CTX *context, const unsigned char *key, size_t key_len,
                      const void *data, size_t data_len, unsigned char out[32])
{
    char digest_name[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
        OSSL_PARAM_construct_end(),
    };
    size_t out_len = 0;
    if (EVP_MAC_init(context, key, key_len, params) != 1 ||
        EVP_MAC_update(context, data, data_len) != 1 ||
        EVP_MAC_final(context, out, &out_len, 32) != 1 || out_len != 32)
        return -EIO;
    return 0;
}

/* The SHA-256 states after the signing key's inner and outer pad blocks: a request's HMAC
 * starts from copies of them, two compressions fewer and no keying per request. */
static int hmac_midstates(struct cm_sigv4 *signer, const unsigned char key[32])
{
    unsigned char pad[64];
    memset(pad, 0x36, sizeof pad);
    for (size_t i = 0; i < 32; i++)
        pad[i] ^= key[i];
    int ok = SHA256_Init(&signer->inner) == 1 && SHA256_Update(&signer->inner, pad, 64) == 1;
    memset(pad, 0x5c, sizeof pad);
    for (size_t i = 0; i < 32; i++)
        pad[i] ^= key[i];
    ok = ok && SHA256_Init(&signer->outer) == 1 && SHA256_Update(&signer->outer, pad, 64) == 1;
    OPENSSL_cleanse(pad, sizeof pad);
    return ok ? 0 : -EIO;
}

int cm_sigv4_use_date(struct cm_sigv4 *signer, const char *date)
{
    if (strncmp(signer->key_date, date, 8) == 0 && signer->key_date[0])
        return 0;
    /* kDate = HMAC("AWS4" + secret, date), kRegion = HMAC(kDate, region),
     * kService = HMAC(kRegion, service), kSigning = HMAC(kService, "aws4_request") */
    unsigned char chain[32];
    const char *const steps[] = {signer->region, signer->service, "aws4_request"};
    int rc = hmac_keyed(signer->derive, (const unsigned char *)signer->secret,
                        strlen(signer->secret), date, 8, chain);
    for (size_t i = 0; rc == 0 && i < sizeof steps / sizeof steps[0]; i++)
        rc = hmac_keyed(signer->derive, chain, sizeof chain, steps[i], strlen(steps[i]), chain);
    if (rc == 0)
        rc = hmac_midstates(signer, chain);
    if (rc < 0) {
        signer->key_date[0] = '\0';
        explicit_bzero(chain, sizeof chain);
        return rc;
    }
    memcpy(signer->key, chain, sizeof chain);
    explicit_bzero(chain, sizeof chain);
    memcpy(signer->key_date, date, 8);
    signer->key_date[8] = '\0';
    signer->derivations++;
    return 0;
}

static void hex(const unsigned char *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Text appended piece by piece into a fixed buffer (the hot path uses no printf): `used`
 * stops growing and `overflow` is set once a piece does not fit. */
struct text {
    char *out;
    size_t size, used;
    bool overflow;
};

/* An empty text in `out` (of `size` bytes; 0: every piece overflows). */
static struct text text_start(char *out, size_t size)
{
    if (size)
        out[0] = '\0';
    return (struct text){out, size, 0, size == 0};
}

static void put(struct text *text, const char *piece, size_t length)
{
    if (text->overflow || length >= text->size - text->used) {
        text->overflow = true;
        return;
    }
    memcpy(text->out + text->used, piece, length);
    text->used += length;
    text->out[text->used] = '\0';
}

static void put_string(struct text *text, const char *piece)
{
    put(text, piece, strlen(piece));
}

#define PUT_LITERAL(text, literal) put((text), (literal), sizeof(literal) - 1)

int cm_sigv4_signature(struct cm_sigv4 *signer, const char *amz_date, const char *canonical,
                       size_t canonical_len, char signature[65])
{
    if (strlen(amz_date) != 16 || cm_sigv4_use_date(signer, amz_date) < 0)
        return -EIO;
    unsigned char digest[32];
    SHA256_CTX hash;
    if (SHA256_Init(&hash) != 1 || SHA256_Update(&hash, canonical, canonical_len) != 1 ||
        SHA256_Final(digest, &hash) != 1)
        return -EIO;
    /* the string to sign: algorithm, time, scope, hash of the canonical request */
    char to_sign[64 + 17 + 9 + sizeof signer->region + sizeof signer->service + 16 + 65];
    char digest_hex[65];
    hex(digest, sizeof digest, digest_hex);
    struct text text = text_start(to_sign, sizeof to_sign);
    PUT_LITERAL(&text, "AWS4-HMAC-SHA256\n");
    put(&text, amz_date, 16);
    PUT_LITERAL(&text, "\n");
    put(&text, amz_date, 8);
    put_string(&text, signer->scope);
    PUT_LITERAL(&text, "\n");
    put(&text, digest_hex, 64);
    if (text.overflow)
        return -EIO;
    /* HMAC = H(key ^ opad || H(key ^ ipad || to_sign)), from the pads' kept states */
    unsigned char inner[32], mac[32];
    hash = signer->inner;
    if (SHA256_Update(&hash, to_sign, text.used) != 1 || SHA256_Final(inner, &hash) != 1)
        return -EIO;
    hash = signer->outer;
    if (SHA256_Update(&hash, inner, sizeof inner) != 1 || SHA256_Final(mac, &hash) != 1)
        return -EIO;
    hex(mac, sizeof mac, signature);
    return 0;
}

size_t cm_sigv4_canonical(char *out, size_t out_size, const char *method, const char *uri,
                          const char *query, const char *host, const char *payload_hash,
                          const char *amz_date)
{
    struct text text = text_start(out, out_size);
    put_string(&text, method);
    PUT_LITERAL(&text, "\n");
    put_string(&text, *uri ? uri : "/");
    PUT_LITERAL(&text, "\n");
    put_string(&text, query);
    PUT_LITERAL(&text, "\nhost:");
    put_string(&text, host);
    PUT_LITERAL(&text, "\nx-amz-content-sha256:");
    put_string(&text, payload_hash);
    PUT_LITERAL(&text, "\nx-amz-date:");
    put_string(&text, amz_date);
    PUT_LITERAL(&text, "\n\nhost;x-amz-content-sha256;x-amz-date\n");
    put_string(&text, payload_hash);
    return text.overflow ? 0 : text.used;
}

/* x-amz-date of `now`, formatted once per second; NULL for a time gmtime cannot break up. */
static const char *amz_date(struct cm_sigv4 *signer, time_t now)
{
    if (now != signer->amz_second) {
        struct tm utc;
        if (!gmtime_r(&now, &utc) ||
            strftime(signer->amz_date, sizeof signer->amz_date, "%Y%m%dT%H%M%SZ", &utc) != 16) {
            signer->amz_second = (time_t)-1;
            return NULL;
        }
        signer->amz_second = now;
    }
    return signer->amz_date;
}

int cm_sigv4_headers(struct cm_sigv4 *signer, time_t now, const char *method, const char *uri,
                     const char *query, const char *host, const char *payload_hash, char *out,
                     size_t out_size)
{
    const char *date = amz_date(signer, now);
    if (!date)
        return -EIO;
    char canonical[4096];
    size_t canonical_len = cm_sigv4_canonical(canonical, sizeof canonical, method, uri, query, host,
                                              payload_hash, date);
    if (canonical_len == 0)
        return -ENAMETOOLONG;
    char signature[65];
    int rc = cm_sigv4_signature(signer, date, canonical, canonical_len, signature);
    if (rc < 0)
        return rc;
    struct text text = text_start(out, out_size);
    PUT_LITERAL(&text, "x-amz-date: ");
    put(&text, date, 16);
    PUT_LITERAL(&text, "\r\nx-amz-content-sha256: ");
    put_string(&text, payload_hash);
    PUT_LITERAL(&text, "\r\nAuthorization: AWS4-HMAC-SHA256 Credential=");
    put_string(&text, signer->access_key);
    PUT_LITERAL(&text, "/");
    put(&text, date, 8);
    put_string(&text, signer->scope);
    PUT_LITERAL(&text, ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=");
    put(&text, signature, 64);
    PUT_LITERAL(&text, "\r\n");
    return text.overflow ? -ENAMETOOLONG : (int)text.used;
}
