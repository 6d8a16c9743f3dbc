/* Unit tests for the SigV4 signer (modules/http/sigv4.c) against AWS's published examples:
 * the signing-key derivation examples of the SigV4 documentation (IAM, 2012-02-15 and
 * 2015-08-30) and the S3 examples of "Signature Calculations for the Authorization Header"
 * (GET object with a range, GET bucket lifecycle, list objects), whose canonical requests
 * the signer's own builder must reproduce; and the signing-key cache (the same day reuses
 * the key, a new day derives another). Deterministic, no network. */
#include "check.h"
#include "sigv4.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define S3_ACCESS    "AKIAIOSFODNN7EXAMPLE"
#define S3_SECRET    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_HOST      "examplebucket.s3.amazonaws.com"

static void key_hex(const struct cm_sigv4 *signer, char out[65])
{
    for (size_t i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", signer->key[i]);
}

/* The derivation examples: secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, us-east-1, iam. */
static void test_signing_key(void)
{
    struct cm_sigv4 signer;
    char error[256], got[65];
    CHECK(cm_sigv4_init(&signer, "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                        "us-east-1", "iam", error, sizeof error) == 0);
    CHECK(cm_sigv4_use_date(&signer, "20120215") == 0);
    key_hex(&signer, got);
    CHECK_STR(got, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
    CHECK(cm_sigv4_use_date(&signer, "20150830") == 0);
    key_hex(&signer, got);
    CHECK_STR(got, "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
    cm_sigv4_fini(&signer);
}

/* S3's GET object example signs a Range header too: its canonical request, as published. */
static void test_get_object_example(struct cm_sigv4 *signer)
{
    const char *canonical = "GET\n/test.txt\n\nhost:" S3_HOST "\nrange:bytes=0-9\n"
                            "x-amz-content-sha256:" EMPTY_SHA256 "\nx-amz-date:20130524T000000Z\n\n"
                            "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA256;
    char signature[65];
    CHECK(cm_sigv4_signature(signer, "20130524T000000Z", canonical, strlen(canonical), signature) ==
          0);
    CHECK_STR(signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

/* The two examples that sign exactly the headers the native transport sends: the builder's
 * canonical request and the header lines. */
static void test_bucket_examples(struct cm_sigv4 *signer)
{
    char canonical[1024];
    size_t n = cm_sigv4_canonical(canonical, sizeof canonical, "GET", "/", "lifecycle=", S3_HOST,
                                  EMPTY_SHA256, "20130524T000000Z");
    CHECK_STR(
        canonical,
        "GET\n/\nlifecycle=\nhost:" S3_HOST "\nx-amz-content-sha256:" EMPTY_SHA256
        "\nx-amz-date:20130524T000000Z\n\nhost;x-amz-content-sha256;x-amz-date\n" EMPTY_SHA256);
    char signature[65];
    CHECK(n == strlen(canonical));
    CHECK(cm_sigv4_signature(signer, "20130524T000000Z", canonical, n, signature) == 0);
    CHECK_STR(signature, "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");

    /* 2013-05-24 00:00:00 UTC */
    char headers[1024];
    int length = cm_sigv4_headers(signer, (time_t)1369353600, "GET", "/", "max-keys=2&prefix=J",
                                  S3_HOST, EMPTY_SHA256, headers, sizeof headers);
    CHECK(length > 0 && (size_t)length == strlen(headers));
    CHECK_STR(headers, "x-amz-date: 20130524T000000Z\r\nx-amz-content-sha256: " EMPTY_SHA256
                       "\r\nAuthorization: AWS4-HMAC-SHA256 Credential=" S3_ACCESS
                       "/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;"
                       "x-amz-content-sha256;x-amz-date, Signature="
                       "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7\r\n");
    /* a canonical request that does not fit is refused, not cut */
    CHECK(cm_sigv4_canonical(canonical, 16, "GET", "/", "", S3_HOST, EMPTY_SHA256,
                             "20130524T000000Z") == 0);
    CHECK(cm_sigv4_headers(signer, (time_t)1369353600, "GET", "/", "", S3_HOST, EMPTY_SHA256,
                           headers, 40) == -ENAMETOOLONG);
}

/* One derivation per day: requests of the same day reuse the key, the next day derives. */
static void test_key_cache(struct cm_sigv4 *signer)
{
    char headers[1024];
    uint64_t before = signer->derivations;
    for (int i = 0; i < 100; i++)
        CHECK(cm_sigv4_headers(signer, (time_t)1369353600 + i * 600, "PUT", "/b/o", "", S3_HOST,
                               CM_SIGV4_UNSIGNED_PAYLOAD, headers, sizeof headers) > 0);
    /* 100 requests over 16.5 hours of 2013-05-24, and the key was already that day's */
    CHECK_MSG(signer->derivations == before, "%llu derivations",
              (unsigned long long)(signer->derivations - before));
    CHECK_STR(signer->key_date, "20130524");
    CHECK(cm_sigv4_headers(signer, (time_t)1369353600 + 86400, "GET", "/b/o", "", S3_HOST,
                           CM_SIGV4_UNSIGNED_PAYLOAD, headers, sizeof headers) > 0);
    CHECK(signer->derivations == before + 1);
    CHECK_STR(signer->key_date, "20130525");
    CHECK(strstr(headers, "Credential=" S3_ACCESS "/20130525/us-east-1/s3/aws4_request") != NULL);
    CHECK(strstr(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD\r\n") != NULL);
    /* back to the first day: derived again, and the example still signs as published */
    test_bucket_examples(signer);
    CHECK(signer->derivations == before + 2);
}

int main(void)
{
    test_signing_key();
    struct cm_sigv4 signer;
    char error[256];
    CHECK(cm_sigv4_init(&signer, S3_ACCESS, S3_SECRET, "us-east-1", "s3", error, sizeof error) ==
          0);
    CHECK(signer.derivations == 0);
    test_get_object_example(&signer);
    CHECK(signer.derivations == 1);
    test_bucket_examples(&signer);
    CHECK(signer.derivations == 1);
    test_key_cache(&signer);
    cm_sigv4_fini(&signer);
    CHECK(signer.key_date[0] == '\0' && signer.derive == NULL);
    /* the key's pad states are wiped with it */
    static const SHA256_CTX wiped;
    CHECK(memcmp(&signer.inner, &wiped, sizeof wiped) == 0 &&
          memcmp(&signer.outer, &wiped, sizeof wiped) == 0);
    /* a field too long is refused with a sentence, never the secret */
    char long_region[100];
    memset(long_region, 'r', sizeof long_region - 1);
    long_region[sizeof long_region - 1] = '\0';
    CHECK(cm_sigv4_init(&signer, S3_ACCESS, S3_SECRET, long_region, "s3", error, sizeof error) ==
          -EINVAL);
    CHECK(strstr(error, "EXAMPLEKEY") == NULL);
    cm_sigv4_fini(&signer);
    return check_summary("test_sigv4");
}
