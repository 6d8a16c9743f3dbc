/* The HTTP client layer for Swift and S3 endpoints; see http_client.h. */
#include "http_client.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* rgw (and AWS) accept an unsigned payload over SigV4: signing the body would cost a
 * SHA-256 pass over every PUT, and libcurl 7.88 does not send the header by itself, which
 * rgw then refuses with SignatureDoesNotMatch. */
#define S3_PAYLOAD_HEADER "x-amz-content-sha256: UNSIGNED-PAYLOAD"

/* Copies text into out, cut to fit (the destination sizes are the limits of each field). */
static void copy_text(char *out, size_t size, const char *text)
{
    size_t n = text ? strlen(text) : 0;
    if (n >= size)
        n = size - 1;
    if (n)
        memcpy(out, text, n);
    out[n] = '\0';
}

static void wipe(void *p, size_t n)
{
    volatile unsigned char *bytes = p;
    while (n--)
        *bytes++ = 0;
}

void cm_http_response_fini(struct cm_http_response *response)
{
    free(response->body);
    memset(response, 0, sizeof *response);
}

const char *cm_http_reason(long status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 206:
        return "Partial Content";
    case 301:
        return "Moved Permanently";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 409:
        return "Conflict";
    case 411:
        return "Length Required";
    case 412:
        return "Precondition Failed";
    case 413:
        return "Request Entity Too Large";
    case 416:
        return "Range Not Satisfiable";
    case 422:
        return "Unprocessable Entity";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "";
    }
}

int cm_http_status_errno(long status)
{
    if (status == 404)
        return -ENOENT;
    if (status == 401 || status == 403)
        return -EACCES;
    if (status == 409)
        return -EEXIST;
    if (status == 411 || status == 413)
        return -EFBIG;
    if (status >= 500)
        return -EIO;
    return -EINVAL;
}

int cm_http_transport_error(CURLcode code, const char *url, const char *detail, char *error,
                            size_t error_size)
{
    int rc;
    switch (code) {
    case CURLE_COULDNT_CONNECT:
        rc = -ECONNREFUSED;
        break;
    case CURLE_OPERATION_TIMEDOUT:
        rc = -ETIMEDOUT;
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        rc = -EHOSTUNREACH;
        break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        rc = -EINVAL;
        break;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
        rc = -ECONNRESET;
        break;
    case CURLE_OUT_OF_MEMORY:
        rc = -ENOMEM;
        break;
    default:
        rc = -EIO;
        break;
    }
    /* the URL is cut at its query: nothing secret is ever in it, but keep lines short */
    char shown[CM_HTTP_URL_MAX];
    copy_text(shown, sizeof shown, url);
    char *query = strchr(shown, '?');
    if (query)
        *query = '\0';
    if (detail && *detail)
        snprintf(error, error_size, "%s: %s", shown, detail);
    else
        snprintf(error, error_size, "%s: %s", shown, curl_easy_strerror(code));
    return rc;
}

static bool unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

int cm_http_escape(const char *text, bool keep_slash, char *out, size_t out_size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (unreserved(*p) || (keep_slash && *p == '/')) {
            if (n + 1 >= out_size)
                return -ENAMETOOLONG;
            out[n++] = (char)*p;
        } else {
            if (n + 3 >= out_size)
                return -ENAMETOOLONG;
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    if (n >= out_size)
        return -ENAMETOOLONG;
    out[n] = '\0';
    return 0;
}

int cm_http_url(const struct cm_http_client *client, const char *container, const char *object,
                const char *query, char *out, size_t out_size)
{
    char container_part[600] = "", object_part[CM_HTTP_URL_MAX] = "";
    if (container && cm_http_escape(container, false, container_part, sizeof container_part) < 0)
        return -ENAMETOOLONG;
    if (object && cm_http_escape(object, true, object_part, sizeof object_part) < 0)
        return -ENAMETOOLONG;
    int n;
    const char *q = query && *query ? "?" : "";
    const char *qs = query && *query ? query : "";
    if (!container)
        n = snprintf(out, out_size, "%s%s%s%s", client->storage_url,
                     client->api == CM_HTTP_S3 ? "/" : "", q, qs);
    else if (!object)
        n = snprintf(out, out_size, "%s/%s%s%s", client->storage_url, container_part, q, qs);
    else
        n = snprintf(out, out_size, "%s/%s/%s%s%s", client->storage_url, container_part,
                     object_part, q, qs);
    return n < 0 || (size_t)n >= out_size ? -ENAMETOOLONG : 0;
}

void cm_http_easy_defaults(const struct cm_http_client *client, CURL *easy)
{
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, client->connect_timeout_ms);
    /* no byte for this long fails the request: a hung gateway ends within the timeout, but
     * a large object moving slowly and steadily is never cut */
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, client->low_speed_seconds);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    /* benchmarks measure the gateway, never a proxy from the environment */
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, client->headers);
    if (client->api == CM_HTTP_S3) {
        curl_easy_setopt(easy, CURLOPT_AWS_SIGV4, client->sigv4);
        curl_easy_setopt(easy, CURLOPT_USERPWD, client->userpwd);
    }
}

static void trim(char *text)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\r' || text[n - 1] == '\n' || text[n - 1] == ' '))
        text[--n] = '\0';
}

/* "Name: value" into out when the line's name is `name` (case-insensitive). */
static bool header_value(const char *line, size_t length, const char *name, char *out, size_t size)
{
    size_t name_length = strlen(name);
    if (length <= name_length || strncasecmp(line, name, name_length) != 0 ||
        line[name_length] != ':')
        return false;
    const char *value = line + name_length + 1;
    size_t rest = length - name_length - 1;
    while (rest && *value == ' ') {
        value++;
        rest--;
    }
    if (rest >= size)
        rest = size - 1;
    memcpy(out, value, rest);
    out[rest] = '\0';
    trim(out);
    return true;
}

static size_t on_header(char *data, size_t size, size_t count, void *arg)
{
    struct cm_http_header_capture *capture = arg;
    size_t length = size * count;
    char value[CM_HTTP_TOKEN_MAX];
    struct cm_http_response *response = capture->response;
    /* a new status line (after a 100 Continue or a redirect) starts a new set of headers */
    if (length > 5 && strncmp(data, "HTTP/", 5) == 0) {
        response->etag[0] = response->content_type[0] = '\0';
        response->has_content_length = false;
    }
    if (header_value(data, length, "ETag", value, sizeof value)) {
        copy_text(response->etag, sizeof response->etag, value);
    } else if (header_value(data, length, "Content-Length", value, sizeof value)) {
        response->content_length = strtoull(value, NULL, 10);
        response->has_content_length = true;
    } else if (header_value(data, length, "Content-Type", value, sizeof value)) {
        copy_text(response->content_type, sizeof response->content_type, value);
    } else if (capture->storage_url &&
               header_value(data, length, "X-Storage-Url", value, sizeof value)) {
        copy_text(capture->storage_url, CM_HTTP_URL_MAX, value);
    } else if (capture->token && header_value(data, length, "X-Auth-Token", value, sizeof value)) {
        copy_text(capture->token, CM_HTTP_TOKEN_MAX, value);
    }
    wipe(value, sizeof value);
    return length;
}

static size_t on_body(char *data, size_t size, size_t count, void *arg)
{
    struct cm_http_response *response = arg;
    size_t length = size * count;
    if (response->body_len + length + 1 > response->body_cap) {
        size_t cap = response->body_cap ? response->body_cap : 4096;
        while (cap < response->body_len + length + 1)
            cap *= 2;
        char *grown = realloc(response->body, cap);
        if (!grown)
            return 0; /* curl fails the transfer with CURLE_WRITE_ERROR */
        response->body = grown;
        response->body_cap = cap;
    }
    memcpy(response->body + response->body_len, data, length);
    response->body_len += length;
    response->body[response->body_len] = '\0';
    return length;
}

static size_t on_read(char *buffer, size_t size, size_t count, void *arg)
{
    struct cm_http_upload *upload = arg;
    size_t want = size * count, left = upload->length - upload->offset;
    if (want > left)
        want = left;
    memcpy(buffer, upload->data + upload->offset, want);
    upload->offset += want;
    return want;
}

int cm_http_authenticate(struct cm_http_client *client, char *error, size_t error_size)
{
    if (client->api != CM_HTTP_SWIFT)
        return 0;
    CURL *easy = client->easy;
    curl_easy_reset(easy);
    cm_http_easy_defaults(client, easy);
    char user_header[CM_HTTP_SECRET_MAX + 16], key_header[CM_HTTP_SECRET_MAX + 16];
    snprintf(user_header, sizeof user_header, "X-Auth-User: %s", client->user);
    snprintf(key_header, sizeof key_header, "X-Auth-Key: %s", client->key);
    struct curl_slist *headers = curl_slist_append(NULL, user_header);
    struct curl_slist *both = headers ? curl_slist_append(headers, key_header) : NULL;
    wipe(key_header, sizeof key_header);
    if (!both) {
        curl_slist_free_all(headers);
        snprintf(error, error_size, "out of memory");
        return -ENOMEM;
    }
    headers = both;
    char storage_url[CM_HTTP_URL_MAX] = "", token[CM_HTTP_TOKEN_MAX] = "";
    struct cm_http_response response = {0};
    struct cm_http_header_capture capture = {&response, storage_url, token};
    char curl_message[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(easy, CURLOPT_URL, client->auth_url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &capture);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &response);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, curl_message);
    client->auth_requests++;
    CURLcode code = curl_easy_perform(easy);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, NULL);
    /* curl keeps no copy of the header list, so wiping it leaves no key in memory */
    for (struct curl_slist *h = headers; h; h = h->next)
        wipe(h->data, strlen(h->data));
    curl_slist_free_all(headers);
    int rc = 0;
    long status = 0;
    if (code != CURLE_OK) {
        char reason[768];
        rc = cm_http_transport_error(code, client->auth_url, curl_message, reason, sizeof reason);
        snprintf(error, error_size, "swift auth: cannot reach %s", reason);
        goto out;
    }
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (status == 401 || status == 403) {
        snprintf(error, error_size, "swift auth: %s refused user '%s': %ld %s (wrong user or key?)",
                 client->auth_url, client->user, status, cm_http_reason(status));
        rc = -EACCES;
        goto out;
    }
    if (status < 200 || status > 299) {
        snprintf(error, error_size, "swift auth: %s answered %ld %s (is it a Swift auth v1.0 URL?)",
                 client->auth_url, status, cm_http_reason(status));
        rc = status == 404 ? -ENOENT : -EIO;
        goto out;
    }
    if (!token[0] || (!storage_url[0] && !client->storage_url_fixed)) {
        snprintf(error, error_size,
                 "swift auth: %s answered %ld without %s (is it a Swift auth v1.0 URL?)",
                 client->auth_url, status, token[0] ? "X-Storage-Url" : "X-Auth-Token");
        rc = -EPROTO;
        goto out;
    }
    if (!client->storage_url_fixed) {
        trim(storage_url);
        size_t n = strlen(storage_url);
        while (n && storage_url[n - 1] == '/')
            storage_url[--n] = '\0';
        copy_text(client->storage_url, sizeof client->storage_url, storage_url);
    }
    struct curl_slist *auth = NULL;
    snprintf(client->auth_header, sizeof client->auth_header, "X-Auth-Token: %s", token);
    auth = curl_slist_append(NULL, client->auth_header);
    if (!auth) {
        snprintf(error, error_size, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    /* the old list may still be set on handles of a running bench: it is replaced there
     * before their next request, and freed here only when no bench holds it (the bench
     * keeps its own copy, see http_target.c) */
    curl_slist_free_all(client->headers);
    client->headers = auth;
    client->token_generation++;
out:
    wipe(token, sizeof token);
    cm_http_response_fini(&response);
    return rc;
}

int cm_http_client_init(struct cm_http_client *client, const struct cm_http_credentials *creds,
                        char *error, size_t error_size)
{
    memset(client, 0, sizeof *client);
    if (cm_curl_load(error, error_size) < 0)
        return -ENOSYS;
    client->api = creds->api;
    copy_text(client->user, sizeof client->user, creds->user);
    copy_text(client->key, sizeof client->key, creds->key);
    copy_text(client->region, sizeof client->region,
              creds->region && *creds->region ? creds->region : "us-east-1");
    double connect = creds->connect_timeout > 0 ? creds->connect_timeout : 10;
    double timeout = creds->timeout > 0 ? creds->timeout : 10;
    client->connect_timeout_ms = (long)(connect * 1000 + 0.5);
    client->low_speed_seconds = (long)(timeout + 0.999);
    if (client->low_speed_seconds < 1)
        client->low_speed_seconds = 1;
    client->easy = curl_easy_init();
    if (!client->easy) {
        snprintf(error, error_size, "cannot create a libcurl handle");
        return -ENOMEM;
    }
    if (!client->user[0] || !client->key[0]) {
        snprintf(error, error_size, "%s credentials are incomplete: %s is empty",
                 creds->api == CM_HTTP_SWIFT ? "swift" : "s3",
                 !client->user[0] ? (creds->api == CM_HTTP_SWIFT ? "the user" : "the access key")
                                  : (creds->api == CM_HTTP_SWIFT ? "the key" : "the secret key"));
        return -EINVAL;
    }
    if (creds->api == CM_HTTP_S3) {
        const char *endpoint = creds->endpoint ? creds->endpoint : "";
        if (strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0) {
            snprintf(error, error_size, "s3 endpoint must be an http:// or https:// URL, got '%s'",
                     endpoint);
            return -EINVAL;
        }
        copy_text(client->storage_url, sizeof client->storage_url, endpoint);
        size_t n = strlen(client->storage_url);
        while (n && client->storage_url[n - 1] == '/')
            client->storage_url[--n] = '\0';
        snprintf(client->userpwd, sizeof client->userpwd, "%s:%s", client->user, client->key);
        snprintf(client->sigv4, sizeof client->sigv4, "aws:amz:%s:s3", client->region);
        client->headers = curl_slist_append(NULL, S3_PAYLOAD_HEADER);
        if (!client->headers) {
            snprintf(error, error_size, "out of memory");
            return -ENOMEM;
        }
        return 0;
    }
    const char *auth = creds->auth_url ? creds->auth_url : "";
    if (strncmp(auth, "http://", 7) != 0 && strncmp(auth, "https://", 8) != 0) {
        snprintf(error, error_size, "swift auth URL must be an http:// or https:// URL, got '%s'",
                 auth);
        return -EINVAL;
    }
    copy_text(client->auth_url, sizeof client->auth_url, auth);
    if (creds->storage_url && *creds->storage_url) {
        copy_text(client->storage_url, sizeof client->storage_url, creds->storage_url);
        client->storage_url_fixed = true;
    }
    return cm_http_authenticate(client, error, error_size);
}

void cm_http_client_fini(struct cm_http_client *client)
{
    if (client->easy)
        curl_easy_cleanup(client->easy);
    client->easy = NULL;
    if (client->headers) /* libcurl is not loaded when the init failed to load it */
        curl_slist_free_all(client->headers);
    client->headers = NULL;
    wipe(client->key, sizeof client->key);
    wipe(client->userpwd, sizeof client->userpwd);
    wipe(client->auth_header, sizeof client->auth_header);
}

/* How every performed request ends, whoever set it up (perform, cm_http_get): the error
 * buffer on the caller's stack is handed back, a transport failure becomes the error text,
 * and a response gets its status and a content length (the body's, when no header gave one). */
static int finish_request(CURL *easy, CURLcode code, const char *url, const char *curl_error,
                          struct cm_http_response *response, char *error, size_t error_size)
{
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, NULL);
    if (code != CURLE_OK)
        return cm_http_transport_error(code, url, curl_error, error, error_size);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response->status);
    if (!response->has_content_length)
        response->content_length = response->body_len;
    return 0;
}

int cm_http_exchange_start(const struct cm_http_client *client, struct cm_http_exchange *exchange,
                           const char *method, const char *url, const void *body,
                           size_t body_length, const char *const *extra_headers, char *error,
                           size_t error_size)
{
    CURL *easy = exchange->easy;
    curl_easy_reset(easy);
    cm_http_easy_defaults(client, easy);
    struct curl_slist *headers = NULL;
    for (struct curl_slist *h = client->headers; h; h = h->next) {
        struct curl_slist *grown = curl_slist_append(headers, h->data);
        if (!grown)
            goto oom;
        headers = grown;
    }
    for (size_t i = 0; extra_headers && extra_headers[i]; i++) {
        struct curl_slist *grown = curl_slist_append(headers, extra_headers[i]);
        if (!grown)
            goto oom;
        headers = grown;
    }
    exchange->headers = headers;
    exchange->upload = (struct cm_http_upload){body, body_length, 0};
    exchange->capture = (struct cm_http_header_capture){&exchange->response, NULL, NULL};
    exchange->curl_error[0] = '\0';
    copy_text(exchange->url, sizeof exchange->url, url);
    cm_http_response_fini(&exchange->response);
    curl_easy_setopt(easy, CURLOPT_URL, exchange->url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &exchange->capture);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &exchange->response);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, exchange->curl_error);
    if (strcmp(method, "PUT") == 0) {
        curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(easy, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(easy, CURLOPT_READDATA, &exchange->upload);
        curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body_length);
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    } else if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
    }
    return 0;
oom:
    curl_slist_free_all(headers);
    snprintf(error, error_size, "out of memory");
    return -ENOMEM;
}

int cm_http_exchange_finish(struct cm_http_exchange *exchange, CURLcode code, char *error,
                            size_t error_size)
{
    CURL *easy = exchange->easy;
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(exchange->headers);
    exchange->headers = NULL;
    return finish_request(easy, code, exchange->url, exchange->curl_error, &exchange->response,
                          error, error_size);
}

static int perform(struct cm_http_client *client, const char *method, const char *url,
                   const void *body, size_t body_length, const char *const *extra_headers,
                   struct cm_http_response *response, char *error, size_t error_size)
{
    struct cm_http_exchange *exchange = calloc(1, sizeof *exchange);
    if (!exchange) {
        snprintf(error, error_size, "out of memory");
        return -ENOMEM;
    }
    exchange->easy = client->easy;
    exchange->response = *response; /* the exchange owns its buffers until it ends */
    memset(response, 0, sizeof *response);
    int rc = cm_http_exchange_start(client, exchange, method, url, body, body_length, extra_headers,
                                    error, error_size);
    if (rc == 0)
        rc = cm_http_exchange_finish(exchange, curl_easy_perform(client->easy), error, error_size);
    *response = exchange->response;
    free(exchange);
    return rc;
}

int cm_http_get(CURL *easy, const char *url, double timeout, struct cm_http_response *response,
                char *error, size_t error_size)
{
    long timeout_ms = timeout > 0 ? (long)(timeout * 1000) : 10000;
    if (timeout_ms < 1)
        timeout_ms = 1;
    char curl_error[CURL_ERROR_SIZE] = "";
    struct cm_http_header_capture capture = {response, NULL, NULL};
    cm_http_response_fini(response);
    curl_easy_reset(easy);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &capture);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, response);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, curl_error);
    CURLcode code = curl_easy_perform(easy);
    return finish_request(easy, code, url, curl_error, response, error, error_size);
}

int cm_http_request(struct cm_http_client *client, const char *method, const char *container,
                    const char *object, const char *query, const void *body, size_t body_length,
                    const char *const *extra_headers, struct cm_http_response *response,
                    char *error, size_t error_size)
{
    char url[CM_HTTP_URL_MAX + 600];
    if (cm_http_url(client, container, object, query, url, sizeof url) < 0) {
        snprintf(error, error_size, "the URL for '%s%s%s' is too long", container ? container : "",
                 object ? "/" : "", object ? object : "");
        return -ENAMETOOLONG;
    }
    int rc =
        perform(client, method, url, body, body_length, extra_headers, response, error, error_size);
    if (rc < 0 || response->status != 401 || client->api != CM_HTTP_SWIFT)
        return rc;
    /* the token expired (or was revoked): authenticate once and retry once */
    rc = cm_http_authenticate(client, error, error_size);
    if (rc < 0)
        return rc;
    return perform(client, method, url, body, body_length, extra_headers, response, error,
                   error_size);
}
