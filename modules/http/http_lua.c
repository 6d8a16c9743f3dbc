/* The Lua glue shared by cephmark.swift and cephmark.s3; see http_lua.h. */
#include "http_lua.h"
#include "bench_lua.h"
#include "lstate.h"
#include "registry.h"
#include "http_target.h"
#include "rados_target.h"
#include "units.h"
#include "workers.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

struct connection {
    struct cm_http_client client;
    bool open;
    bool bench_running;
    unsigned worker_targets; /* scripted-worker phases' targets using the connection */
    enum cm_http_transport worker_transport; /* what scripted workers' requests go over */
    double timeout, connect_timeout;         /* as connect was given them (connect_options) */
};

static const char *const connection_types[] = {"cephmark.swift.connection",
                                               "cephmark.s3.connection"};

static struct connection *check_connection(lua_State *L, int arg)
{
    struct connection *conn = NULL;
    for (int i = 0; i < 2 && !conn; i++)
        conn = luaL_testudata(L, arg, connection_types[i]);
    if (!conn) {
        luaL_typeerror(L, arg, "swift or s3 connection");
        return NULL; /* not reached: luaL_typeerror raises */
    }
    if (!conn->open)
        luaL_argerror(L, arg, "connection is closed");
    return conn;
}

static const char *api_name(const struct connection *conn)
{
    return conn->client.api == CM_HTTP_SWIFT ? "swift" : "s3";
}

static const char *container_word(const struct connection *conn)
{
    return conn->client.api == CM_HTTP_SWIFT ? "container" : "bucket";
}

/* The text between <tag> and </tag> in an S3 XML answer, from `from`; NULL when none. */
static const char *xml_text(const char *from, const char *tag, char *out, size_t size,
                            const char **end)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *start = from ? strstr(from, open) : NULL;
    if (!start)
        return NULL;
    start += strlen(open);
    const char *stop = strstr(start, close);
    if (!stop)
        return NULL;
    size_t n = 0;
    for (const char *p = start; p < stop && n + 1 < size; p++) {
        static const struct {
            const char *entity;
            char c;
        } entities[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        char c = *p;
        for (size_t i = 0; c == '&' && i < sizeof entities / sizeof entities[0]; i++) {
            size_t length = strlen(entities[i].entity);
            if ((size_t)(stop - p) >= length && strncmp(p, entities[i].entity, length) == 0) {
                c = entities[i].c;
                p += length - 1;
                break;
            }
        }
        out[n++] = c;
    }
    out[n] = '\0';
    if (end)
        *end = stop + strlen(close);
    return out;
}

/* "GET object 'c/o': 404 Not Found (NoSuchKey)" */
static int push_status_failure(lua_State *L, struct connection *conn, const char *method,
                               const char *container, const char *object,
                               const struct cm_http_response *response)
{
    char what[1200], code[128] = "";
    if (object)
        snprintf(what, sizeof what, "object '%s/%s'", container, object);
    else if (container)
        snprintf(what, sizeof what, "%s '%s'", container_word(conn), container);
    else
        snprintf(what, sizeof what, "the account");
    if (conn->client.api == CM_HTTP_S3 && response->body)
        xml_text(response->body, "Code", code, sizeof code, NULL);
    const char *hint = "";
    if (response->status == 404 && object)
        hint = conn->client.api == CM_HTTP_SWIFT ? " (no such object, or no such container)" : "";
    else if (response->status == 409 && !object && strcmp(method, "DELETE") == 0)
        hint = " (it is not empty)";
    return cm_lua_failure(L, response->status,
                          lua_pushfstring(L, "%s %s: %d %s%s%s%s%s", method, what,
                                          (int)response->status, cm_http_reason(response->status),
                                          code[0] ? " (" : "", code, code[0] ? ")" : "", hint));
}

/* Runs one control request; on success leaves the response for the caller and returns 0,
 * else pushes the failure triple and returns its count. */
static int request(lua_State *L, struct connection *conn, const char *method, const char *container,
                   const char *object, const char *query, const void *body, size_t length,
                   const char *const *headers, struct cm_http_response *response)
{
    char error[1024];
    if (conn->bench_running)
        return luaL_error(L, "%s: a bench is running on this connection", api_name(conn));
    int rc = cm_http_request(&conn->client, method, container, object, query, body, length, headers,
                             response, error, sizeof error);
    if (rc < 0) {
        cm_http_response_fini(response);
        return cm_lua_failure(L, rc, error);
    }
    if (response->status < 200 || response->status > 299) {
        int n = push_status_failure(L, conn, method, container, object, response);
        cm_http_response_fini(response);
        return n;
    }
    return 0;
}

static const char *check_name(lua_State *L, int arg, const char *what)
{
    size_t length;
    const char *name = luaL_checklstring(L, arg, &length);
    if (length == 0)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s name must not be empty", what));
    if (strlen(name) != length)
        luaL_argerror(L, arg, lua_pushfstring(L, "%s name must not contain NUL bytes", what));
    return name;
}

/* ---- connect ------------------------------------------------------------------------------ */

static int connection_close(lua_State *L)
{
    struct connection *conn = NULL;
    for (int i = 0; i < 2 && !conn; i++)
        conn = luaL_testudata(L, 1, connection_types[i]);
    if (!conn)
        return luaL_typeerror(L, 1, "swift or s3 connection");
    if (conn->bench_running)
        return luaL_error(L, "close: a bench is running on this connection");
    if (conn->worker_targets)
        return luaL_error(L, "close: scripted workers are using this connection (close it after "
                             "their phase)");
    if (conn->open)
        cm_http_client_fini(&conn->client);
    conn->open = false;
    return 0;
}

/* The connection's `transport` option (scripted workers' requests): auto, curl or native. */
static enum cm_http_transport connect_transport(lua_State *L, const char *what)
{
    const char *name = cm_lua_opt_string(L, 1, "transport", "auto", what);
    if (strcmp(name, "curl") == 0)
        return CM_HTTP_CURL;
    if (strcmp(name, "native") == 0)
        return CM_HTTP_NATIVE;
    if (strcmp(name, "auto") != 0)
        luaL_error(L, "%s: unknown transport '%s' (expected auto, curl or native)", what, name);
    return CM_HTTP_AUTO;
}

/* swift.connect{auth_url=, user=, key=, storage_url=, timeout=, connect_timeout=, transport=}
 * s3.connect{endpoint=, access_key=, secret_key=, region=, timeout=, connect_timeout=,
 *   transport=} -> connection | nil, message, code */
static int connect_api(lua_State *L)
{
    enum cm_http_api api = (enum cm_http_api)lua_tointeger(L, lua_upvalueindex(1));
    static const char *const swift_known[] = {"auth_url", "connect_timeout", "key",  "storage_url",
                                              "timeout",  "transport",       "user", NULL};
    static const char *const s3_known[] = {"access_key", "connect_timeout", "endpoint",  "region",
                                           "secret_key", "timeout",         "transport", NULL};
    const char *what = api == CM_HTTP_SWIFT ? "swift.connect" : "s3.connect";
    luaL_checktype(L, 1, LUA_TTABLE);
    cm_lua_check_options(L, 1, what, api == CM_HTTP_SWIFT ? swift_known : s3_known, false);
    struct cm_http_credentials creds = {.api = api};
    if (api == CM_HTTP_SWIFT) {
        creds.auth_url = cm_lua_opt_string(L, 1, "auth_url", NULL, what);
        creds.user = cm_lua_opt_string(L, 1, "user", NULL, what);
        creds.key = cm_lua_opt_string(L, 1, "key", NULL, what);
        creds.storage_url = cm_lua_opt_string(L, 1, "storage_url", NULL, what);
        if (!creds.auth_url || !creds.user || !creds.key)
            return luaL_error(L, "%s: auth_url, user and key are required (%s is missing)", what,
                              !creds.auth_url ? "auth_url"
                              : !creds.user   ? "user"
                                              : "key");
    } else {
        creds.endpoint = cm_lua_opt_string(L, 1, "endpoint", NULL, what);
        creds.user = cm_lua_opt_string(L, 1, "access_key", NULL, what);
        creds.key = cm_lua_opt_string(L, 1, "secret_key", NULL, what);
        creds.region = cm_lua_opt_string(L, 1, "region", NULL, what);
        if (!creds.endpoint || !creds.user || !creds.key)
            return luaL_error(L,
                              "%s: endpoint, access_key and secret_key are required (%s is "
                              "missing)",
                              what,
                              !creds.endpoint ? "endpoint"
                              : !creds.user   ? "access_key"
                                              : "secret_key");
    }
    creds.timeout = cm_lua_opt_duration(L, 1, "timeout", 10, what);
    creds.connect_timeout = cm_lua_opt_duration(L, 1, "connect_timeout", creds.timeout, what);
    if (creds.timeout <= 0 || creds.connect_timeout <= 0)
        return luaL_error(L, "%s: timeout and connect_timeout must be more than 0", what);
    enum cm_http_transport transport = connect_transport(L, what);
    struct connection *conn = lua_newuserdatauv(L, sizeof *conn, 0);
    memset(conn, 0, sizeof *conn);
    conn->worker_transport = transport;
    conn->timeout = creds.timeout;
    conn->connect_timeout = creds.connect_timeout;
    luaL_setmetatable(L, connection_types[api]);
    char error[1024];
    int rc = cm_http_client_init(&conn->client, &creds, error, sizeof error);
    conn->open = true; /* so that close (and __gc) release what init made, also on failure */
    if (rc < 0) {
        cm_http_client_fini(&conn->client);
        conn->open = false;
        if (rc == -EINVAL)
            return luaL_error(L, "%s: %s", what, error);
        return cm_lua_failure(L, rc, error);
    }
    return 1;
}

/* ---- containers --------------------------------------------------------------------------- */

/* conn:create_container(name [, {policy=}]) / conn:create_bucket(name [, {location=}])
 *   -> true | nil, message, code. Swift's policy is sent as X-Storage-Policy (rgw maps it to a
 * placement target); S3's location as the LocationConstraint ("zonegroup:placement"). */
static int connection_create_container(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    const char *name = check_name(L, 2, container_word(conn));
    const char *policy = NULL;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        static const char *const swift_known[] = {"policy", NULL};
        static const char *const s3_known[] = {"location", NULL};
        bool swift = conn->client.api == CM_HTTP_SWIFT;
        cm_lua_check_options(L, 3, swift ? "create_container" : "create_bucket",
                             swift ? swift_known : s3_known, false);
        policy = cm_lua_opt_string(L, 3, swift ? "policy" : "location", NULL, "create");
    }
    char header[512];
    const char *headers[2] = {NULL, NULL};
    luaL_Buffer body;
    luaL_buffinit(L, &body);
    if (policy && conn->client.api == CM_HTTP_SWIFT) {
        snprintf(header, sizeof header, "X-Storage-Policy: %s", policy);
        headers[0] = header;
    } else if (policy) {
        luaL_addstring(&body, "<CreateBucketConfiguration><LocationConstraint>");
        luaL_addstring(&body, policy);
        luaL_addstring(&body, "</LocationConstraint></CreateBucketConfiguration>");
    }
    luaL_pushresult(&body);
    size_t length;
    const char *data = lua_tolstring(L, -1, &length);
    struct cm_http_response response = {0};
    int n = request(L, conn, "PUT", name, NULL, NULL, data, length, headers, &response);
    if (n)
        return n;
    cm_http_response_fini(&response);
    lua_pushboolean(L, 1);
    return 1;
}

/* conn:delete_container(name) / conn:delete_bucket(name) -> true | nil, message, code */
static int connection_delete_container(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    const char *name = check_name(L, 2, container_word(conn));
    struct cm_http_response response = {0};
    int n = request(L, conn, "DELETE", name, NULL, NULL, NULL, 0, NULL, &response);
    if (n)
        return n;
    cm_http_response_fini(&response);
    lua_pushboolean(L, 1);
    return 1;
}

/* Appends the lines of a Swift plain-text listing to the array on top of the stack; returns
 * how many, and the last name in `last`. */
static int add_lines(lua_State *L, const char *text, size_t length, char *last, size_t last_size)
{
    int added = 0;
    const char *end = text + length;
    while (text < end) {
        const char *newline = memchr(text, '\n', (size_t)(end - text));
        const char *stop = newline ? newline : end;
        if (stop > text) {
            lua_pushlstring(L, text, (size_t)(stop - text));
            snprintf(last, last_size, "%.*s", (int)(stop - text), text);
            lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
            added++;
        }
        text = stop + 1;
    }
    return added;
}

/* The query of a listing page: S3's ListObjectsV2 (parameters sorted: SigV4 wants them so,
 * and libcurl 7.88 signs them as given) or Swift's marker and prefix; the account's
 * bucket list (S3, no container) has none. */
static void list_query(const struct connection *conn, const char *container, const char *marker,
                       const char *prefix, char *query, size_t size)
{
    char escaped[3100], escaped_prefix[1100] = "";
    cm_http_escape(marker, false, escaped, sizeof escaped);
    if (prefix)
        cm_http_escape(prefix, false, escaped_prefix, sizeof escaped_prefix);
    bool more = marker[0] != '\0';
    if (conn->client.api == CM_HTTP_S3 && !container)
        query[0] = '\0';
    else if (conn->client.api == CM_HTTP_S3)
        snprintf(query, size, "%s%s%slist-type=2%s%s", more ? "continuation-token=" : "", escaped,
                 more ? "&" : "", prefix ? "&prefix=" : "", escaped_prefix);
    else
        snprintf(query, size, "%s%s%s%s%s", more ? "marker=" : "", escaped,
                 more && prefix ? "&" : "", prefix ? "prefix=" : "", escaped_prefix);
}

/* Appends an S3 page's names to the array at `list` (buckets' <Name>s, or objects' <Key>s);
 * true when another page follows, its continuation token in `marker`. */
static bool add_s3_names(lua_State *L, const char *body, bool buckets, char *marker,
                         size_t marker_size, int list)
{
    const char *at = body;
    char name[1100];
    while (at && (at = strstr(at, buckets ? "<Bucket>" : "<Contents>")) &&
           xml_text(at, buckets ? "Name" : "Key", name, sizeof name, &at)) {
        lua_pushstring(L, name);
        lua_rawseti(L, list, (lua_Integer)luaL_len(L, list) + 1);
    }
    char truncated[16] = "";
    xml_text(body, "IsTruncated", truncated, sizeof truncated, NULL);
    return !buckets && strcmp(truncated, "true") == 0 &&
           xml_text(body, "NextContinuationToken", marker, marker_size, NULL);
}

/* Every page of a listing appended to the array at `list`: the account's containers
 * (`container` NULL) or a container's objects (with an optional prefix). Swift's pages
 * follow markers until one is empty, S3's object pages follow continuation tokens, S3's
 * bucket list is one page. 0, or the count of the failure values pushed. */
static int list_pages(lua_State *L, struct connection *conn, const char *container,
                      const char *prefix, int list)
{
    char marker[1024] = "", query[4400];
    bool more = true;
    while (more) {
        list_query(conn, container, marker, prefix, query, sizeof query);
        struct cm_http_response response = {0};
        int n = request(L, conn, "GET", container, NULL, query, NULL, 0, NULL, &response);
        if (n)
            return n;
        if (conn->client.api == CM_HTTP_S3) {
            more = add_s3_names(L, response.body, !container, marker, sizeof marker, list);
        } else {
            lua_pushvalue(L, list);
            more = add_lines(L, response.body ? response.body : "", response.body_len, marker,
                             sizeof marker) > 0;
            lua_pop(L, 1);
        }
        cm_http_response_fini(&response);
    }
    return 0;
}

/* conn:list_containers() / conn:list_buckets() -> array of names | nil, message, code */
static int connection_list_containers(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    lua_newtable(L);
    int list = lua_gettop(L);
    int n = list_pages(L, conn, NULL, NULL, list);
    if (n)
        return n;
    lua_settop(L, list);
    return 1;
}

/* conn:list_uploads(bucket) -> array of {key =, upload_id =}: S3's multipart uploads in
 * progress in the bucket (the first 1000), to see that none were left behind. */
static int connection_list_uploads(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    const char *bucket = check_name(L, 2, container_word(conn));
    if (conn->client.api != CM_HTTP_S3)
        return luaL_error(L, "list_uploads: multipart uploads are S3's");
    struct cm_http_response response = {0};
    int n = request(L, conn, "GET", bucket, NULL, "uploads=", NULL, 0, NULL, &response);
    if (n)
        return n;
    lua_newtable(L);
    const char *at = response.body;
    char key[1100], id[600];
    lua_Integer i = 0;
    while (at && (at = strstr(at, "<Upload>")) && xml_text(at, "Key", key, sizeof key, NULL) &&
           xml_text(at, "UploadId", id, sizeof id, &at)) {
        lua_createtable(L, 0, 2);
        cm_result_string(L, "key", key);
        cm_result_string(L, "upload_id", id);
        lua_rawseti(L, -2, ++i);
    }
    cm_http_response_fini(&response);
    return 1;
}

/* conn:list(container [, {prefix=}]) -> array of object names | nil, message, code (every
 * page: Swift's markers, S3's continuation tokens) */
static int connection_list(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    const char *container = check_name(L, 2, container_word(conn));
    const char *prefix = NULL;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        static const char *const known[] = {"prefix", NULL};
        cm_lua_check_options(L, 3, "list", known, false);
        prefix = cm_lua_opt_string(L, 3, "prefix", NULL, "list");
    }
    lua_newtable(L);
    int list = lua_gettop(L);
    int n = list_pages(L, conn, container, prefix, list);
    if (n)
        return n;
    lua_settop(L, list);
    return 1;
}

/* ---- objects ------------------------------------------------------------------------------ */

/* Inside a scripted worker, put, get, head and delete go through the connection's HTTP
 * target for the worker phase (its submit_request, see runtime/workers.h) and yield until
 * the answer is in; the call then returns what the blocking call returns. The target is
 * made on the connection's first use in the phase. */
struct connection_worker_target {
    struct cm_http_target target;
    struct connection *conn;
};

static void connection_worker_release(void *instance)
{
    struct connection_worker_target *worker = instance;
    cm_http_target_fini(&worker->target);
    worker->conn->worker_targets--;
    free(worker);
}

static int object_worker_continue(lua_State *L, int status, lua_KContext context)
{
    (void)status;
    (void)context;
    struct connection *conn = check_connection(L, 1);
    struct cm_op *op = cm_worker_current(L);
    const struct cm_request *asked = cm_worker_request(op);
    int64_t result = cm_worker_result(op);
    struct cm_worker_target *attached = cm_worker_target_find(L, conn);
    struct connection_worker_target *worker = cm_worker_target_instance(attached);
    const struct cm_http_response *response = cm_http_target_response(&worker->target, op);
    static const char *const methods[] = {
        [CM_REQUEST_READ] = "GET",  [CM_REQUEST_WRITE] = "PUT",     [CM_REQUEST_WRITE_FULL] = "PUT",
        [CM_REQUEST_STAT] = "HEAD", [CM_REQUEST_REMOVE] = "DELETE",
    };
    if (result < 0 && asked->status)
        return push_status_failure(L, conn, methods[asked->verb], asked->container, asked->name,
                                   response);
    if (result < 0)
        return cm_lua_failure(L, result,
                              asked->message[0] ? asked->message : strerror((int)-result));
    switch ((enum cm_request_verb)asked->verb) {
    case CM_REQUEST_READ:
        lua_pushlstring(L, asked->reply ? asked->reply : "", asked->reply_length);
        return 1;
    case CM_REQUEST_STAT: {
        lua_createtable(L, 0, 3);
        lua_pushinteger(L, (lua_Integer)response->content_length);
        lua_setfield(L, -2, "size");
        size_t etag_length = strlen(response->etag);
        const char *etag = response->etag;
        if (etag_length >= 2 && etag[0] == '"' && etag[etag_length - 1] == '"') {
            etag++;
            etag_length -= 2;
        }
        lua_pushlstring(L, etag, etag_length);
        lua_setfield(L, -2, "etag");
        lua_pushstring(L, response->content_type);
        lua_setfield(L, -2, "content_type");
        return 1;
    }
    default:
        lua_pushboolean(L, 1);
        return 1;
    }
}

/* Submits an object call of a worker on the connection at index 1. */
static int object_worker_submit(lua_State *L, struct connection *conn,
                                const struct cm_request *asked)
{
    if (conn->bench_running)
        return luaL_error(L, "%s: a bench is running on this connection", api_name(conn));
    struct cm_worker_target *attached = cm_worker_target_find(L, conn);
    if (!attached) {
        struct connection_worker_target *worker = malloc(sizeof *worker);
        if (!worker)
            return luaL_error(L, "out of memory for a worker's HTTP target");
        char error[512];
        if (cm_http_target_init_requests(&worker->target, &conn->client, conn->worker_transport,
                                         error, sizeof error) < 0) {
            cm_http_target_fini(&worker->target);
            free(worker);
            return luaL_error(L, "%s: %s", api_name(conn), error);
        }
        worker->conn = conn;
        conn->worker_targets++;
        attached = cm_worker_target_attach(L, 1, conn, cm_http_target_ops_for(&worker->target),
                                           &worker->target, connection_worker_release);
        if (!attached)
            return luaL_error(L, "out of memory for a worker's HTTP target");
    }
    return cm_worker_submit(L, attached, asked, object_worker_continue, 0);
}

/* conn:put(container, name, data) -> true | nil, message, code */
static int connection_put(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    const char *container = check_name(L, 2, container_word(conn));
    const char *name = check_name(L, 3, "object");
    size_t length;
    const char *data = luaL_checklstring(L, 4, &length);
    if (cm_worker_current(L))
        return object_worker_submit(L, conn,
                                    &(struct cm_request){.verb = CM_REQUEST_WRITE_FULL,
                                                         .container = container,
                                                         .name = name,
                                                         .data = data,
                                                         .data_length = length});
    /* no 100-continue round trip for Swift; see copy_headers in http_target.c for S3 */
    const char *headers[] = {conn->client.api == CM_HTTP_SWIFT ? "Expect:" : NULL, NULL};
    struct cm_http_response response = {0};
    int n = request(L, conn, "PUT", container, name, NULL, data, length, headers, &response);
    if (n)
        return n;
    cm_http_response_fini(&response);
    lua_pushboolean(L, 1);
    return 1;
}

/* conn:get, conn:head and conn:delete share this: inside a scripted worker the object named
 * by arguments 2 and 3 goes to the phase's target (the call yields), else it is asked for at
 * once. Returns the number of values pushed (a failure), or 0 with the answer in `response`. */
static int object_call(lua_State *L, enum cm_request_verb verb, const char *method,
                       struct cm_http_response *response)
{
    struct connection *conn = check_connection(L, 1);
    const char *container = check_name(L, 2, container_word(conn));
    const char *name = check_name(L, 3, "object");
    if (cm_worker_current(L))
        return object_worker_submit(
            L, conn, &(struct cm_request){.verb = verb, .container = container, .name = name});
    return request(L, conn, method, container, name, NULL, NULL, 0, NULL, response);
}

/* conn:get(container, name) -> data | nil, message, code */
static int connection_get(lua_State *L)
{
    struct cm_http_response response = {0};
    int n = object_call(L, CM_REQUEST_READ, "GET", &response);
    if (n)
        return n;
    lua_pushlstring(L, response.body ? response.body : "", response.body_len);
    cm_http_response_fini(&response);
    return 1;
}

/* conn:head(container, name) -> {size=, etag=, content_type=} | nil, message, code */
static int connection_head(lua_State *L)
{
    struct cm_http_response response = {0};
    int n = object_call(L, CM_REQUEST_STAT, "HEAD", &response);
    if (n)
        return n;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)response.content_length);
    lua_setfield(L, -2, "size");
    size_t etag_length = strlen(response.etag);
    const char *etag = response.etag;
    if (etag_length >= 2 && etag[0] == '"' && etag[etag_length - 1] == '"') {
        etag++;
        etag_length -= 2;
    }
    lua_pushlstring(L, etag, etag_length);
    lua_setfield(L, -2, "etag");
    lua_pushstring(L, response.content_type);
    lua_setfield(L, -2, "content_type");
    cm_http_response_fini(&response);
    return 1;
}

/* conn:delete(container, name) -> true | nil, message, code */
static int connection_delete(lua_State *L)
{
    struct cm_http_response response = {0};
    int n = object_call(L, CM_REQUEST_REMOVE, "DELETE", &response);
    if (n)
        return n;
    cm_http_response_fini(&response);
    lua_pushboolean(L, 1);
    return 1;
}

/* conn:info() -> {api=, storage_url=, auth_url=, user=, region=, auth_requests=}: nothing
 * secret (no key, no token, no S3 access key). */
static int connection_info(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    lua_createtable(L, 0, 6);
    lua_pushstring(L, api_name(conn));
    lua_setfield(L, -2, "api");
    lua_pushstring(L, conn->client.storage_url);
    lua_setfield(L, -2, conn->client.api == CM_HTTP_SWIFT ? "storage_url" : "endpoint");
    if (conn->client.api == CM_HTTP_SWIFT) {
        lua_pushstring(L, conn->client.auth_url);
        lua_setfield(L, -2, "auth_url");
        lua_pushstring(L, conn->client.user);
        lua_setfield(L, -2, "user");
    } else {
        lua_pushstring(L, conn->client.region);
        lua_setfield(L, -2, "region");
    }
    lua_pushinteger(L, (lua_Integer)conn->client.auth_requests);
    lua_setfield(L, -2, "auth_requests");
    return 1;
}

/* conn:connect_options() -> the table swift.connect / s3.connect take to open the same
 * connection elsewhere, credentials included: what a multi-client run sends to its agents
 * (docs/distributed.md). Never print it. */
static int connection_connect_options(lua_State *L)
{
    static const char *const transport_names[] = {"auto", "curl", "native"};
    struct connection *conn = check_connection(L, 1);
    const struct cm_http_client *client = &conn->client;
    bool swift = client->api == CM_HTTP_SWIFT;
    lua_createtable(L, 0, 8);
    lua_pushstring(L, swift ? "swift" : "s3");
    lua_setfield(L, -2, "api");
    if (swift) {
        lua_pushstring(L, client->auth_url);
        lua_setfield(L, -2, "auth_url");
        if (client->storage_url_fixed) {
            lua_pushstring(L, client->storage_url);
            lua_setfield(L, -2, "storage_url");
        }
    } else {
        lua_pushstring(L, client->storage_url);
        lua_setfield(L, -2, "endpoint");
        if (client->region[0]) {
            lua_pushstring(L, client->region);
            lua_setfield(L, -2, "region");
        }
    }
    lua_pushstring(L, client->user);
    lua_setfield(L, -2, swift ? "user" : "access_key");
    lua_pushstring(L, client->key);
    lua_setfield(L, -2, swift ? "key" : "secret_key");
    lua_pushnumber(L, conn->timeout);
    lua_setfield(L, -2, "timeout");
    lua_pushnumber(L, conn->connect_timeout);
    lua_setfield(L, -2, "connect_timeout");
    unsigned transport = (unsigned)conn->worker_transport;
    lua_pushstring(L, transport < 3 ? transport_names[transport] : "auto");
    lua_setfield(L, -2, "transport");
    return 1;
}

static int connection_tostring(lua_State *L)
{
    struct connection *conn = NULL;
    for (int i = 0; i < 2 && !conn; i++)
        conn = luaL_testudata(L, 1, connection_types[i]);
    if (!conn || !conn->open)
        lua_pushliteral(L, "object store connection (closed)");
    else if (conn->client.api == CM_HTTP_SWIFT)
        lua_pushfstring(L, "swift connection to %s as %s", conn->client.storage_url,
                        conn->client.user);
    else
        lua_pushfstring(L, "s3 connection to %s", conn->client.storage_url);
    return 1;
}

/* ---- bench -------------------------------------------------------------------------------- */

static void push_hist(lua_State *L, const cm_hist *hist)
{
    lua_createtable(L, 0, 10);
    uint64_t count = cm_hist_count(hist);
    lua_pushinteger(L, (lua_Integer)count);
    lua_setfield(L, -2, "count");
    if (count == 0)
        return;
    static const struct {
        const char *name;
        double p;
    } percentiles[] = {{"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99_9", 99.9}};
    lua_pushnumber(L, cm_hist_mean(hist) / 1e9);
    lua_setfield(L, -2, "avg");
    lua_pushnumber(L, (double)cm_hist_min(hist) / 1e9);
    lua_setfield(L, -2, "min");
    lua_pushnumber(L, (double)cm_hist_max(hist) / 1e9);
    lua_setfield(L, -2, "max");
    for (size_t i = 0; i < sizeof percentiles / sizeof percentiles[0]; i++) {
        lua_pushnumber(L, (double)cm_hist_percentile(hist, percentiles[i].p) / 1e9);
        lua_setfield(L, -2, percentiles[i].name);
    }
}

/* size = 4096 | "4K" | {low, high} (either may be a string) -> min, max */
static void bench_sizes(lua_State *L, int table, uint64_t *min, uint64_t *max)
{
    int type = lua_getfield(L, table, "size");
    if (type == LUA_TTABLE) {
        int range = lua_gettop(L);
        lua_createtable(L, 0, 2);
        lua_geti(L, range, 1);
        lua_setfield(L, -2, "low");
        lua_geti(L, range, 2);
        lua_setfield(L, -2, "high");
        if (luaL_len(L, range) != 2)
            luaL_error(L, "bench: a size range is {low, high}, got %I values", luaL_len(L, range));
        *min = cm_lua_opt_size(L, -1, "low", 0, "bench: size range");
        *max = cm_lua_opt_size(L, -1, "high", 0, "bench: size range");
        lua_pop(L, 2);
        if (*min > *max) {
            char low[32], high[32];
            cm_format_size(*min, low, sizeof low);
            cm_format_size(*max, high, sizeof high);
            luaL_error(L, "bench: size range {%s, %s}: the low end is above the high end", low,
                       high);
        }
        return;
    }
    lua_pop(L, 1);
    if (type != LUA_TNIL) {
        *min = *max = cm_lua_opt_size(L, table, "size", 4096, "bench");
    }
}

#define MAX_OBJECT_SIZE (5ULL << 30) /* S3's and Swift's single-PUT limit */

/* What conn:bench reads from its options table (connection_options). */
struct connection_lua_options {
    int op, transport;
    const char *bucket, *container, *prefix;
    int buckets, containers, from, mix, multipart, size; /* stack indices of tables, 0: absent */
    int64_t first_object, objects, page_size, run_id, seed, spread;
    double give_up;
    bool random, verify;
};

static const char *const http_ops[] = {"put", "get", "head", "delete", "list", "mixed", NULL};
static const char *const transports[] = {"auto", "curl", "native", NULL};

#define CONNECTION_OPTION(field) offsetof(struct connection_lua_options, field)

static const struct cm_option connection_options[] = {
    {"bucket", CM_OPTION_STRING, CONNECTION_OPTION(bucket), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "S3: the one bucket (container is the same)"},
    {"buckets", CM_OPTION_TABLE, CONNECTION_OPTION(buckets), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "S3: objects spread over these buckets (containers is the same)"},
    {"container", CM_OPTION_STRING, CONNECTION_OPTION(container), NULL, 0, 0, NULL,
     CM_OPTION_NO_RESULT, "Swift: the one container"},
    {"containers", CM_OPTION_TABLE, CONNECTION_OPTION(containers), NULL, 0, 0, NULL, 0,
     "Swift: objects spread over these containers"},
    {"first_object", CM_OPTION_INTEGER, CONNECTION_OPTION(first_object), "0", 0, INT64_MAX, NULL, 0,
     "the first object number (a put may add to a set)"},
    {"from", CM_OPTION_TABLE, CONNECTION_OPTION(from), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "a put's result: its objects, sizes, prefix, run id and containers"},
    {"give_up", CM_OPTION_DURATION, CONNECTION_OPTION(give_up),
     CM_OPTION_TEXT(CM_HTTP_GIVE_UP_SECONDS), 0, 0, NULL, 0,
     "end the run when no request succeeded for this long (a gateway that stays down)"},
    {"mix", CM_OPTION_TABLE, CONNECTION_OPTION(mix), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "mixed: ratios of the requests, {get =, put =, head =, list =, delete =}"},
    {"multipart", CM_OPTION_TABLE, CONNECTION_OPTION(multipart), NULL, 0, 0, NULL,
     CM_OPTION_NO_RESULT,
     "put (S3): upload each object in parts, {part_size = \"5M\", parts_in_flight = 4}"},
    {"objects", CM_OPTION_INTEGER, CONNECTION_OPTION(objects), "0", 0, INT64_MAX, NULL, 0,
     "put: how many (0: as the bounds allow); get, head, delete: how many exist"},
    {"op", CM_OPTION_CHOICE, CONNECTION_OPTION(op), "put", 0, 0, http_ops, 0,
     "the request each op makes"},
    {"page_size", CM_OPTION_INTEGER, CONNECTION_OPTION(page_size), "1000", 1, CM_HTTP_LIST_PAGE_MAX,
     NULL, 0, "list: names per page (S3 max-keys, Swift limit)"},
    {"prefix", CM_OPTION_STRING, CONNECTION_OPTION(prefix), NULL, 0, 0, NULL, 0,
     "object names are <prefix>_<N>; default cephmark_<run id>"},
    {"random", CM_OPTION_BOOL, CONNECTION_OPTION(random), "true", 0, 0, NULL, 0,
     "get, head: objects at random (else in order, wrapping)"},
    {"run_id", CM_OPTION_INTEGER, CONNECTION_OPTION(run_id), "0", 0, 0, NULL, 0,
     "seeds payloads and sizes; get and delete use the put's"},
    {"seed", CM_OPTION_INTEGER, CONNECTION_OPTION(seed), "0", 0, INT64_MAX, NULL, 0,
     "random picks of objects and mixed's kinds: the same seed repeats them; 0: a fresh one"},
    {"size", CM_OPTION_TABLE, CONNECTION_OPTION(size), NULL, 0, 0, NULL, CM_OPTION_NO_RESULT,
     "object size, or a range {low, high}; default 4K"},
    {"spread", CM_OPTION_INTEGER, CONNECTION_OPTION(spread), "16", 1, CM_HTTP_BENCH_MAX_CONTAINERS,
     NULL, 0, "put with no container given: new containers the objects are spread over"},
    {"transport", CM_OPTION_CHOICE, CONNECTION_OPTION(transport), "auto", 0, 0, transports, 0,
     "cephmark's own HTTP/1.1 client (native) or libcurl; auto picks native for plain http"},
    {"verify", CM_OPTION_BOOL, CONNECTION_OPTION(verify), "true", 0, 0, NULL, 0,
     "get: check every object that comes back"},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL},
};

struct connection_state {
    struct cm_http_target target;
    struct cm_http_target_options options;
    const char *names[CM_HTTP_BENCH_MAX_CONTAINERS];
    char default_prefix[64];
    bool bounded, open;
    /* containers this put makes (none given), or a delete removes after its objects (its
     * `from` made them) */
    bool make_containers, remove_containers;
    char made[CM_HTTP_BENCH_MAX_CONTAINERS][40];
    char remove_error[1024];
};

/* conn:bench{op=, container= | containers=, prefix=, objects=, first_object=, size=,
 *   run_id=, from=, random=, verify=, transport=, give_up=, threads=, seconds=, ops=, bytes=,
 *   rate=, warmup=, on_second=} -> result (raises on misuse; failed requests are counted in
 *   the result; result.gave_up is the line saying the gateway stayed down) */
static void *connection_object(lua_State *L, int arg)
{
    return check_connection(L, arg);
}

/* Defaults from a put's result (`from`), overridden by what the options give. */
static void bench_from(struct cm_bench *b, int *containers)
{
    const struct connection_lua_options *o = b->options;
    struct cm_http_target_options *options = &((struct connection_state *)b->state)->options;
    lua_State *L = b->L;
    options->size_min = options->size_max = 4096;
    if (o->from) {
        int from = o->from;
        if (!lua_istable(L, from))
            luaL_error(L, "bench: from must be the result of a put bench, got a %s",
                       luaL_typename(L, from));
        options->run_id =
            (uint64_t)cm_lua_opt_integer(L, from, "run_id", 0, INT64_MIN, INT64_MAX, "from");
        options->objects =
            (uint64_t)cm_lua_opt_integer(L, from, "objects", 0, 0, INT64_MAX, "from");
        options->first_object =
            (uint64_t)cm_lua_opt_integer(L, from, "first_object", 0, 0, INT64_MAX, "from");
        options->size_min = cm_lua_opt_size(L, from, "size_min", 4096, "from");
        options->size_max = cm_lua_opt_size(L, from, "size_max", 4096, "from");
        options->prefix = cm_lua_opt_string(L, from, "prefix", NULL, "from");
        if (lua_getfield(L, from, "containers") == LUA_TTABLE)
            *containers = lua_gettop(L);
        else
            lua_pop(L, 1);
        struct connection_state *state = b->state;
        state->remove_containers = o->op == CM_HTTP_DELETE &&
                                   cm_lua_opt_bool(L, from, "containers_made", 0, "from") &&
                                   !o->bucket && !o->container && !o->buckets && !o->containers;
    }
    if (cm_bench_given(b, "run_id"))
        options->run_id = (uint64_t)o->run_id;
    if (options->run_id == 0)
        options->run_id = cm_rados_new_run_id();
    if (cm_bench_given(b, "objects"))
        options->objects = (uint64_t)o->objects;
    if (cm_bench_given(b, "first_object"))
        options->first_object = (uint64_t)o->first_object;
    if (o->prefix)
        options->prefix = o->prefix;
}

/* containers: container/bucket (one) or containers/buckets (an array) or from `from` */
static void bench_containers(struct cm_bench *b, int containers)
{
    const struct connection_lua_options *o = b->options;
    struct connection_state *state = b->state;
    struct connection *conn = b->object;
    lua_State *L = b->L;
    const char *one = o->bucket ? o->bucket : o->container;
    int given = o->containers ? o->containers : o->buckets;
    if (given && !lua_istable(L, given))
        luaL_error(L, "bench: containers must be an array of names, got a %s",
                   luaL_typename(L, given));
    if (given)
        containers = given;
    unsigned n_names = 0;
    if (one) {
        state->names[n_names++] = one;
    } else if (containers) {
        lua_Integer n = luaL_len(L, containers);
        if (n < 1 || n > CM_HTTP_BENCH_MAX_CONTAINERS)
            luaL_error(L, "bench: containers must hold 1 to %d names, got %I",
                       CM_HTTP_BENCH_MAX_CONTAINERS, n);
        for (lua_Integer i = 1; i <= n; i++) {
            if (lua_geti(L, containers, i) != LUA_TSTRING)
                luaL_error(L, "bench: containers[%I] must be a name, got a %s", i,
                           luaL_typename(L, -1));
            state->names[n_names++] = lua_tostring(L, -1); /* the array keeps it alive */
            lua_pop(L, 1);
        }
    } else if (o->op == CM_HTTP_PUT) {
        /* many containers by default: one container's index slows small PUTs as it ages
         * (ceph#55029; docs/rgw.md) */
        state->make_containers = true;
        for (int64_t i = 0; i < o->spread; i++) {
            snprintf(state->made[i], sizeof state->made[i], "cephmark-%016llx-%d",
                     (unsigned long long)state->options.run_id, (int)i);
            state->names[n_names++] = state->made[i];
        }
    } else {
        luaL_error(L, "bench: which %s? give %s = \"name\", or from = a put result",
                   container_word(conn), container_word(conn));
    }
    state->options.containers = state->names;
    state->options.n_containers = n_names;
}

/* multipart = {part_size =, parts_in_flight =}: a put's objects go up in parts. */
static void bench_multipart(struct cm_bench *b)
{
    const struct connection_lua_options *o = b->options;
    struct cm_http_target_options *options = &((struct connection_state *)b->state)->options;
    lua_State *L = b->L;
    if (!o->multipart)
        return;
    static const char *const known[] = {"part_size", "parts_in_flight", NULL};
    if (!lua_istable(L, o->multipart))
        luaL_error(L, "bench: multipart must be a table {part_size =, parts_in_flight =}, got a %s",
                   luaL_typename(L, o->multipart));
    cm_lua_check_options(L, o->multipart, "bench: multipart", known, false);
    if (options->op != CM_HTTP_PUT)
        luaL_error(L, "bench: multipart is for op = \"put\", not \"%s\"", http_ops[options->op]);
    options->part_size = cm_lua_opt_size(L, o->multipart, "part_size", 5 << 20, "bench: multipart");
    options->parts_in_flight = (unsigned)cm_lua_opt_integer(
        L, o->multipart, "parts_in_flight", 4, 1, CM_HTTP_PARTS_IN_FLIGHT_MAX, "bench: multipart");
    if (options->part_size == 0) {
        luaL_error(L, "bench: multipart: part_size must be at least 1 byte");
        return; /* not reached: luaL_error raises */
    }
    uint64_t parts = (options->size_max + options->part_size - 1) / options->part_size;
    if (parts > CM_HTTP_PARTS_MAX)
        luaL_error(L,
                   "bench: multipart: objects of %I bytes in parts of %I are %I parts; S3 allows "
                   "at most %d (raise part_size)",
                   (lua_Integer)options->size_max, (lua_Integer)options->part_size,
                   (lua_Integer)parts, CM_HTTP_PARTS_MAX);
}

static void bench_prepare(struct cm_bench *b)
{
    const struct connection_lua_options *o = b->options;
    struct connection_state *state = b->state;
    struct cm_http_target_options *options = &state->options;
    struct connection *conn = b->object;
    lua_State *L = b->L;
    if (conn->bench_running)
        luaL_error(L, "bench: a bench is already running on this connection");
    options->op = (enum cm_http_target_op)o->op;
    int containers = 0;
    bench_from(b, &containers);
    bench_sizes(L, b->table, &options->size_min, &options->size_max);
    bench_multipart(b);
    if (options->op == CM_HTTP_MIXED && !o->mix)
        luaL_error(L, "bench: op = \"mixed\" needs mix = {get =, put =, head =, list =, delete =}");
    if (o->mix && options->op != CM_HTTP_MIXED)
        luaL_error(L, "bench: mix is for op = \"mixed\", not \"%s\"", http_ops[options->op]);
    if (o->mix)
        cm_lua_check_mix(L, o->mix, "bench", cm_http_kind_names, &options->mix);
    if (options->size_max > MAX_OBJECT_SIZE && !options->part_size)
        luaL_error(L, "bench: object size %I is above the 5 GiB a single PUT may carry",
                   (lua_Integer)options->size_max);
    if (!options->prefix) {
        snprintf(state->default_prefix, sizeof state->default_prefix, "cephmark_%016llx",
                 (unsigned long long)options->run_id);
        options->prefix = state->default_prefix;
    }
    options->random = o->random;
    options->seed = (uint64_t)o->seed;
    options->page_size = (uint64_t)o->page_size;
    /* a gateway that answers nothing for this long ends the run (docs/rgw.md) */
    options->give_up_ns = (uint64_t)(o->give_up * 1e9);
    options->verify = o->verify;
    options->transport = (enum cm_http_transport)o->transport;
    bench_containers(b, containers);
    if (options->op != CM_HTTP_PUT && options->objects == 0)
        luaL_error(L, "bench: %s needs objects (a count, or from = a put result)",
                   http_ops[options->op]);
    static const char *const bounds[] = {"seconds", "ops", "bytes"};
    for (int i = 0; i < 3; i++) {
        if (lua_getfield(L, b->table, bounds[i]) != LUA_TNIL)
            state->bounded = true;
        lua_pop(L, 1);
    }
}

/* One blocking control request on a container (create or remove): 0, or -1 with a
 * sentence in `error`. */
static int container_request(struct connection *conn, const char *method, const char *name,
                             char *error, size_t error_size)
{
    struct cm_http_response response = {0};
    int rc = cm_http_request(&conn->client, method, name, NULL, NULL, NULL, 0, NULL, &response,
                             error, error_size);
    long status = response.status;
    cm_http_response_fini(&response);
    if (rc == 0 && (status < 200 || status > 299))
        snprintf(error, error_size, "%s %s '%s': %ld %s", method, container_word(conn), name,
                 status, cm_http_reason(status));
    return rc < 0 || status < 200 || status > 299 ? -1 : 0;
}

/* A put given no container makes its own (an existing one of the user's is fine). */
static void make_containers(struct cm_bench *b)
{
    struct connection_state *state = b->state;
    char error[1024];
    for (unsigned i = 0; i < state->options.n_containers; i++)
        if (container_request(b->object, "PUT", state->names[i], error, sizeof error) < 0)
            cm_bench_raise_world(b, error);
}

static void bench_open(struct cm_bench *b)
{
    struct connection_state *state = b->state;
    struct cm_http_target_options *options = &state->options;
    struct connection *conn = b->object;
    struct cm_engine_config *config = &b->config;
    if (options->op == CM_HTTP_PUT || options->op == CM_HTTP_GET || options->op == CM_HTTP_MIXED)
        cm_bench_check_memory(b, options->size_max, 0, options->size_max + (1 << 20),
                              options->op == CM_HTTP_PUT ? "PUT bodies" : "GET buffers",
                              "lower threads (concurrency) or the object size");
    /* with no bound given, a delete removes every object and a put of N objects writes N */
    if (!state->bounded &&
        (options->op == CM_HTTP_DELETE || (options->op == CM_HTTP_PUT && options->objects))) {
        config->seconds = 0;
        config->max_ops = options->objects;
    }
    if (state->make_containers)
        make_containers(b);
    state->open = true;
    char error[640];
    if (cm_http_target_init(&state->target, &conn->client, options, error, sizeof error) < 0)
        luaL_error(b->L, "bench: %s", error);
    conn->bench_running = true;
    b->ops = cm_http_target_ops_for(&state->target);
    b->target = &state->target;
}

static void bench_after_run(struct cm_bench *b, int rc)
{
    struct connection *conn = b->object;
    struct connection_state *state = b->state;
    conn->bench_running = false;
    if (state->target.part_size_refused) {
        char message[1200];
        char part[32];
        cm_format_size(state->options.part_size, part, sizeof part);
        snprintf(message, sizeof message,
                 "the gateway refused parts of %s: %s (its minimum part size, "
                 "rgw_multipart_min_part_size, is larger; raise multipart.part_size)",
                 part, state->target.refusal);
        cm_bench_raise_world(b, message);
    }
    /* a delete of every object of a put that made its containers removes them too */
    const struct cm_engine_result *done = &b->result;
    if (rc < 0 || !state->remove_containers || done->errors || !done->drained ||
        done->interrupted || done->started != state->options.objects) {
        state->remove_containers = false;
        return;
    }
    char error[1024];
    for (unsigned i = 0; i < state->options.n_containers; i++)
        if (container_request(conn, "DELETE", state->names[i], error, sizeof error) < 0 &&
            state->remove_containers) {
            state->remove_containers = false;
            snprintf(state->remove_error, sizeof state->remove_error, "%s", error);
        }
}

/* HTTP errors by status, sorted by status */
static void push_statuses(lua_State *L, struct cm_http_target *target)
{
    lua_createtable(L, (int)target->n_statuses, 0);
    for (unsigned i = 0; i < target->n_statuses; i++) {
        unsigned smallest = i;
        for (unsigned j = i + 1; j < target->n_statuses; j++)
            if (target->statuses[j].status < target->statuses[smallest].status)
                smallest = j;
        struct cm_http_status_count swap = target->statuses[i];
        target->statuses[i] = target->statuses[smallest];
        target->statuses[smallest] = swap;
        lua_createtable(L, 0, 3);
        cm_result_integer(L, "status", (uint64_t)target->statuses[i].status);
        cm_result_string(L, "reason", cm_http_reason(target->statuses[i].status));
        cm_result_integer(L, "count", target->statuses[i].count);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "http_errors");
}

/* The failures, the gateway's answers and time to first byte. */
static void push_outcome(lua_State *L, struct cm_http_target *target, enum cm_http_target_op op)
{
    push_statuses(L, target);
    cm_result_integer(L, "transport_errors", target->transport_errors);
    if (target->first_error[0])
        cm_result_string(L, "first_error", target->first_error);
    if (target->auth_error[0])
        cm_result_string(L, "auth_error", target->auth_error);
    if (target->gave_up)
        cm_result_string(L, "gave_up", target->give_up_error);
    cm_result_integer(L, "reauths", target->reauths);
    if (op == CM_HTTP_GET) {
        push_hist(L, target->ttfb);
        lua_setfield(L, -2, "ttfb");
        if (target->transport == CM_HTTP_CURL) {
            lua_createtable(L, 0, 2);
            push_hist(L, target->curl_ttfb);
            lua_setfield(L, -2, "ttfb");
            push_hist(L, target->curl_total);
            lua_setfield(L, -2, "total");
            lua_setfield(L, -2, "curl");
        }
    }
    cm_result_strings(L, "verify_errors", target->verify_errors[0], sizeof target->verify_errors[0],
                      target->n_verify_errors);
}

static void bench_result(struct cm_bench *b)
{
    struct connection_state *state = b->state;
    struct cm_http_target_options *options = &state->options;
    struct cm_http_target *target = &state->target;
    struct connection *conn = b->object;
    lua_State *L = b->L;
    cm_result_string(L, "method", cm_http_target_op_name(options->op));
    cm_result_string(L, "api", api_name(conn));
    cm_result_string(L, "transport", cm_http_transport_name(target->transport));
    cm_result_string(L, "prefix", target->prefix);
    cm_result_integer(L, "run_id", options->run_id);
    cm_result_integer(L, "first_object", options->first_object);
    uint64_t first = options->first_object;
    uint64_t touched = options->op == CM_HTTP_PUT
                           ? (target->highest_put > first ? target->highest_put - first : 0)
                           : options->objects;
    cm_result_integer(L, "objects", touched);
    if (options->op == CM_HTTP_PUT)
        cm_result_integer(L, "objects_written", target->put_ok);
    if (options->op == CM_HTTP_MIXED)
        cm_result_integer(L, "misses", target->misses);
    if (options->op == CM_HTTP_LIST || options->op == CM_HTTP_MIXED) {
        cm_result_integer(L, "names_listed", target->names_listed);
        cm_result_integer(L, "listings", target->listings);
    }
    cm_result_integer(L, "size_min", options->size_min);
    cm_result_integer(L, "size_max", options->size_max);
    lua_createtable(L, (int)options->n_containers, 0);
    for (unsigned i = 0; i < options->n_containers; i++) {
        lua_pushstring(L, state->names[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "containers");
    if (state->make_containers)
        cm_result_bool(L, "containers_made", true);
    if (state->remove_containers)
        cm_result_bool(L, "containers_removed", true);
    if (state->remove_error[0])
        cm_result_string(L, "containers_error", state->remove_error);
    if (options->part_size) {
        lua_createtable(L, 0, 5);
        cm_result_integer(L, "part_size", options->part_size);
        cm_result_integer(L, "parts_in_flight", options->parts_in_flight);
        cm_result_integer(L, "parts", target->parts_sent);
        cm_result_integer(L, "uploads_aborted", target->uploads_aborted);
        cm_result_integer(L, "uploads_left", target->uploads_left);
        lua_setfield(L, -2, "multipart");
    }
    push_outcome(L, target, options->op);
}

static void bench_close(struct cm_bench *b)
{
    struct connection_state *state = b->state;
    struct connection *conn = b->object;
    conn->bench_running = false;
    if (state->open)
        cm_http_target_fini(&state->target);
    state->open = false;
}

/* The bench's description: the conn:bench options above, run through cm_lua_bench. */
const struct cm_bench_def cm_http_bench = {
    .what = "bench",
    .name = "swift, s3",
    .options = connection_options,
    .check_object = connection_object,
    .options_size = sizeof(struct connection_lua_options),
    .state_size = sizeof(struct connection_state),
    .default_seconds = 10,
    .prepare = bench_prepare,
    .open = bench_open,
    .after_run = bench_after_run,
    .result = bench_result,
    .close = bench_close,
};

/* ---- the module --------------------------------------------------------------------------- */

int cm_http_lua_open(lua_State *L, enum cm_http_api api, const char *connection_type)
{
    bool swift = api == CM_HTTP_SWIFT;
    /* libcurl is loaded when the module is first required (curl_api.h), before anything is
     * registered, so that a failed load leaves nothing behind */
    char error[512];
    if (cm_curl_load(error, sizeof error) < 0)
        return luaL_error(L, "%s: %s", swift ? "cephmark.swift" : "cephmark.s3", error);
    const luaL_Reg methods[] = {
        {"close", connection_close},
        {"connect_options", connection_connect_options},
        {swift ? "create_container" : "create_bucket", connection_create_container},
        {"delete", connection_delete},
        {swift ? "delete_container" : "delete_bucket", connection_delete_container},
        {"get", connection_get},
        {"head", connection_head},
        {"info", connection_info},
        {"list", connection_list},
        {swift ? "list_containers" : "list_buckets", connection_list_containers},
        {"put", connection_put},
        {NULL, NULL},
    };
    cm_lua_new_type(L, connection_type, methods, connection_close, connection_tostring);
    lua_getfield(L, -1, "__index");
    cm_bench_set_functions(L, &cm_http_bench);
    if (!swift) {
        lua_pushcfunction(L, connection_list_uploads);
        lua_setfield(L, -2, "list_uploads");
    }
    lua_pop(L, 2);

    lua_createtable(L, 0, 2);
    lua_pushinteger(L, api);
    lua_pushcclosure(L, connect_api, 1);
    lua_setfield(L, -2, "connect");
    curl_version_info_data *version = curl_version_info(CURLVERSION_NOW);
    lua_pushstring(L, version->version);
    lua_setfield(L, -2, "curl_version");
    return 1;
}
