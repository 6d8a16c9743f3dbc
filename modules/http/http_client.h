/* The HTTP client layer under cephmark.swift and cephmark.s3: one object-store endpoint
 * (Swift with auth v1.0 tokens, or S3 with SigV4 signing by libcurl, path-style), URL
 * building, blocking control requests (containers, single objects) with at most one
 * re-authentication on 401, and the common libcurl options (timeouts, keep-alive) that the
 * engine target (http_target.h) applies to its own handles. Pure C, no Lua.
 *
 * Secrets (the Swift key, the S3 secret, the Swift token) live only in this struct and in
 * libcurl's options; nothing here prints them or puts them in an error message. */
#ifndef CEPHMARK_HTTP_CLIENT_H
#define CEPHMARK_HTTP_CLIENT_H

#include "curl_api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cm_http_api { CM_HTTP_SWIFT, CM_HTTP_S3 };

#define CM_HTTP_URL_MAX    1024
#define CM_HTTP_SECRET_MAX 256
#define CM_HTTP_TOKEN_MAX  1024

/* What the caller gives; every string is NUL-terminated and copied. */
struct cm_http_credentials {
    enum cm_http_api api;
    const char *auth_url;    /* Swift: the auth v1.0 URL (.../auth/v1.0) */
    const char *storage_url; /* Swift: overrides the X-Storage-Url of auth; NULL: use it */
    const char *endpoint;    /* S3: http://host:port */
    const char *user;        /* Swift user ("account:user"), or the S3 access key */
    const char *key;         /* Swift key, or the S3 secret key */
    const char *region;      /* S3 SigV4 region; NULL: us-east-1 */
    double connect_timeout;  /* seconds to connect; 0: 10 */
    double timeout;          /* seconds without progress before a request fails; 0: 10 */
};

struct cm_http_client {
    enum cm_http_api api;
    char auth_url[CM_HTTP_URL_MAX];
    char storage_url[CM_HTTP_URL_MAX]; /* Swift: from auth (or the override); S3: endpoint */
    bool storage_url_fixed;
    char user[CM_HTTP_SECRET_MAX];
    char key[CM_HTTP_SECRET_MAX];
    char region[64];
    char userpwd[2 * CM_HTTP_SECRET_MAX + 2]; /* S3 "access:secret" for CURLOPT_USERPWD */
    char sigv4[96];                           /* S3 "aws:amz:REGION:s3" */
    char auth_header[CM_HTTP_TOKEN_MAX + 32]; /* Swift "X-Auth-Token: ..." */
    long connect_timeout_ms;
    long low_speed_seconds;
    unsigned token_generation;  /* bumped by every successful authentication */
    uint64_t auth_requests;     /* authentication requests sent (successful or not) */
    struct curl_slist *headers; /* the auth header (Swift) or x-amz-content-sha256 (S3) */
    CURL *easy;                 /* for control requests; reused, so connections are too */
};

/* A response to a control request. `body` grows as needed (free with cm_http_response_fini). */
struct cm_http_response {
    long status;
    char *body;
    size_t body_len, body_cap;
    uint64_t content_length; /* HEAD: the Content-Length header; else the body length */
    bool has_content_length;
    char etag[80];
    char content_type[128];
};

void cm_http_response_fini(struct cm_http_response *response);

/* Error codes: a negative errno for transport failures (-ECONNREFUSED, -ETIMEDOUT,
 * -EHOSTUNREACH, -EIO, ...) and -EACCES when authentication was refused. */

/* Sets up the client; Swift authenticates now (one request). 0, or -errno with a sentence
 * (never naming the key) in `error`. The client must be finished with cm_http_client_fini
 * even when this fails. */
int cm_http_client_init(struct cm_http_client *client, const struct cm_http_credentials *creds,
                        char *error, size_t error_size);
void cm_http_client_fini(struct cm_http_client *client);

/* Swift: (re)authenticates with auth v1.0. 0, -EACCES (401/403: wrong user or key), or
 * another -errno with a sentence. S3: nothing to do. */
int cm_http_authenticate(struct cm_http_client *client, char *error, size_t error_size);

/* Applies the client's timeouts, keep-alive, signing (S3) and headers to an easy handle.
 * The engine target calls it once per slot; `headers` must outlive the handle's requests. */
void cm_http_easy_defaults(const struct cm_http_client *client, CURL *easy);

/* Writes the URL of a container (object NULL) or an object, percent-encoding both names
 * ('/' kept in object names), with an optional raw query ("format=json"). 0, or -ENAMETOOLONG. */
int cm_http_url(const struct cm_http_client *client, const char *container, const char *object,
                const char *query, char *out, size_t out_size);

/* Percent-encodes `text` (unreserved characters and, if keep_slash, '/' pass through). 0 or
 * -ENAMETOOLONG. */
int cm_http_escape(const char *text, bool keep_slash, char *out, size_t out_size);

/* One blocking request: method ("GET", "PUT", "HEAD", "DELETE", "POST") on a container or
 * object, with an optional body and extra header lines (NULL-terminated array, may be NULL).
 * Returns 0 when a response came (any status; see response->status), or -errno with a
 * sentence when none did. Swift: a 401 re-authenticates once and retries the request once;
 * a second 401 is returned as it is. */
int cm_http_request(struct cm_http_client *client, const char *method, const char *container,
                    const char *object, const char *query, const void *body, size_t body_length,
                    const char *const *extra_headers, struct cm_http_response *response,
                    char *error, size_t error_size);

/* One request on an easy handle the caller runs itself (curl_easy_perform, or a multi
 * handle on an event loop): the same request as cm_http_request's, without its retry on
 * 401. start resets `easy` and sets it up (0, or -ENOMEM with a sentence); once the
 * transfer is done, finish takes curl's code and returns like cm_http_request (0 with
 * response.status, or -errno with a sentence naming the URL). The exchange, and the body
 * it sends, must stay in place from start to finish; free the response with
 * cm_http_response_fini. */
struct cm_http_upload {
    const char *data;
    size_t length, offset;
};
struct cm_http_header_capture {
    struct cm_http_response *response;
    char *storage_url; /* auth only */
    char *token;       /* auth only */
};
struct cm_http_exchange {
    CURL *easy; /* set by the caller */
    struct cm_http_response response;
    /* private */
    struct curl_slist *headers;
    struct cm_http_upload upload;
    struct cm_http_header_capture capture;
    char curl_error[CURL_ERROR_SIZE];
    char url[CM_HTTP_URL_MAX + 600];
};
int cm_http_exchange_start(const struct cm_http_client *client, struct cm_http_exchange *exchange,
                           const char *method, const char *url, const void *body,
                           size_t body_length, const char *const *extra_headers, char *error,
                           size_t error_size);
int cm_http_exchange_finish(struct cm_http_exchange *exchange, CURLcode code, char *error,
                            size_t error_size);

/* One blocking GET of an absolute URL on `easy`, a handle the caller keeps between calls so
 * that the connection is reused (it is reset here). The whole request, connecting included,
 * ends after `timeout` seconds; no proxy from the environment, no redirect followed. Returns
 * 0 when a response came (any status; see response->status), or -errno with a sentence
 * naming the URL without its query when none did. For the small JSON APIs cephmark reads
 * (Prometheus), not for object stores. */
int cm_http_get(CURL *easy, const char *url, double timeout, struct cm_http_response *response,
                char *error, size_t error_size);

/* A negative errno for a curl transport error, and a sentence naming the URL (without any
 * credentials) and curl's reason. */
int cm_http_transport_error(CURLcode code, const char *url, const char *detail, char *error,
                            size_t error_size);

/* "Not Found" for 404, ...; "" for codes it does not know. */
const char *cm_http_reason(long status);

/* The best -errno for an HTTP error status: 404 -ENOENT, 401/403 -EACCES, 409 -EEXIST or
 * -ENOTEMPTY (by method), 5xx -EIO, other 4xx -EINVAL. */
int cm_http_status_errno(long status);

#endif
