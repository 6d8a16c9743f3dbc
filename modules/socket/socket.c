/* The `cephmark.socket` Lua module: socket.bench, an iperf-like TCP bandwidth test (streams,
 * direction, buffer size; bits/s per second, retransmits from TCP_INFO) or a
 * request/response latency test, run by the op engine against a `cephmark netserver`; and
 * socket.serve, that server (socket_server.c); socket.connect, one connection to it whose
 * send, receive and request calls block outside scripted workers and go through the
 * client target's per-request submit inside them. */
#include "bench_lua.h"
#include "exitcode.h"
#include "interrupt.h"
#include "lstate.h"
#include "registry.h"
#include "socket_net.h"
#include "workers.h"

#include <errno.h>
#include <lauxlib.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

/* The shared token, from the option token_file (a file holding it; trailing whitespace and
 * newlines are not part of it) or else $CEPHMARK_NET_TOKEN (empty: none), copied into `token` (at
 * least CM_NET_MAX_TOKEN bytes). Returns its length, 0 when there is none. A token never comes from
 * a command line: it would show in the process list. */
static size_t read_token(lua_State *L, int table, const char *what, char *token)
{
    const char *path = cm_lua_opt_string(L, table, "token_file", NULL, what);
    const char *text = NULL;
    size_t length = 0;
    char contents[CM_NET_MAX_TOKEN + 64];
    if (path) {
        FILE *file = fopen(path, "r");
        if (!file)
            cm_error_user(L, CM_EXIT_USAGE, "%s: cannot read the token file %s: %s", what, path,
                          strerror(errno));
        length = fread(contents, 1, sizeof contents, file);
        fclose(file);
        text = contents;
    } else if ((text = getenv("CEPHMARK_NET_TOKEN")) != NULL && text[0]) {
        length = strlen(text);
    } else {
        return 0;
    }
    while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == '\r' ||
                          text[length - 1] == ' ' || text[length - 1] == '\t'))
        length--;
    const char *source = path ? path : "$CEPHMARK_NET_TOKEN";
    if (length == 0)
        cm_error_user(L, CM_EXIT_USAGE, "%s: the token in %s is empty", what, source);
    if (length > CM_NET_MAX_TOKEN)
        cm_error_user(L, CM_EXIT_USAGE, "%s: the token in %s is longer than %d bytes", what, source,
                      CM_NET_MAX_TOKEN);
    memcpy(token, text, length);
    return length;
}

/* The per-second hook: samples the senders' retransmits, then runs the Lua callback. */
struct second_tap {
    struct cm_net_client *client;
    bool (*next)(void *arg, const struct cm_engine_second *second);
    void *next_arg;
};

static bool tap_second(void *arg, const struct cm_engine_second *second)
{
    struct second_tap *tap = arg;
    cm_net_client_second(tap->client);
    return tap->next ? tap->next(tap->next_arg, second) : true;
}

/* Adds bits/s and retransmits to each second of the result's series (at the top). */
static void annotate_series(lua_State *L, const struct cm_net_client *client)
{
    lua_getfield(L, -1, "series");
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, -1, i);
        lua_getfield(L, -1, "cur_mib");
        double mib = lua_tonumber(L, -1);
        lua_pop(L, 1);
        cm_result_number(L, "bits_per_second", mib * MIB * 8);
        if ((size_t)i <= client->series_len)
            cm_result_integer(L, "retransmits", client->retransmits_series[i - 1]);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* What socket.bench reads from its options table (socket_options). */
struct socket_lua_options {
    const char *host;
    int64_t port, streams;
    int mode, direction;
    uint64_t buffer_size, request_size, response_size;
    double connect_timeout;
    const char *token_file;
};

static const char *const modes[] = {"stream", "rr", NULL};
static const char *const directions[] = {"send", "recv", NULL};

#define SOCKET_OPTION(field) offsetof(struct socket_lua_options, field)

static const struct cm_option socket_options[] = {
    {"buffer_size", CM_OPTION_SIZE, SOCKET_OPTION(buffer_size), "128K", 0, 0, NULL,
     CM_OPTION_NO_RESULT, "stream mode: bytes per send or receive, 1 byte to 64M"},
    {"connect_timeout", CM_OPTION_DURATION, SOCKET_OPTION(connect_timeout), "5", 0, 0, NULL, 0,
     "give up connecting after this long"},
    {"direction", CM_OPTION_CHOICE, SOCKET_OPTION(direction), "send", 0, 0, directions,
     CM_OPTION_NO_RESULT, "stream mode: the client sends (iperf3) or receives (iperf3 -R)"},
    {"host", CM_OPTION_STRING, SOCKET_OPTION(host), NULL, 0, 0, NULL, 0,
     "where `cephmark netserver` runs (required)"},
    {"mode", CM_OPTION_CHOICE, SOCKET_OPTION(mode), "stream", 0, 0, modes, 0,
     "bandwidth streams, or request/response latency (netperf's TCP_RR)"},
    {"port", CM_OPTION_INTEGER, SOCKET_OPTION(port), CM_OPTION_TEXT(CM_NET_DEFAULT_PORT), 1, 65535,
     NULL, 0, "the netserver's port"},
    {"request_size", CM_OPTION_SIZE, SOCKET_OPTION(request_size), "1", 0, 0, NULL,
     CM_OPTION_NO_RESULT, "rr mode: bytes per request, 1 byte to 64M"},
    {"response_size", CM_OPTION_SIZE, SOCKET_OPTION(response_size), "1", 0, 0, NULL,
     CM_OPTION_NO_RESULT, "rr mode: bytes per response, 1 byte to 64M"},
    {"streams", CM_OPTION_INTEGER, SOCKET_OPTION(streams), "0", 0, CM_NET_MAX_STREAMS, NULL,
     CM_OPTION_NO_RESULT, "parallel connections (iperf3 -P); threads is the same"},
    {"token_file", CM_OPTION_STRING, SOCKET_OPTION(token_file), NULL, 0, 0, NULL,
     CM_OPTION_NO_RESULT, "a file holding the netserver's token (else $CEPHMARK_NET_TOKEN)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL},
};

struct socket_state {
    struct cm_net_client client;
    struct cm_net_options options;
    char token[CM_NET_MAX_TOKEN];
    struct second_tap tap;
    bool open;
    uint32_t local_retransmits;
    char remote_error[512];
};

static void socket_prepare(struct cm_bench *b)
{
    const struct socket_lua_options *o = b->options;
    struct socket_state *state = b->state;
    struct cm_net_options *options = &state->options;
    lua_State *L = b->L;
    const char *what = b->def->what;
    if (!o->host || !o->host[0])
        luaL_error(L, "%s: host is required (where `cephmark netserver` runs)", what);
    options->host = o->host;
    options->port = (int)o->port;
    options->mode = o->mode == 1 ? CM_NET_RR : o->direction == 1 ? CM_NET_RECV : CM_NET_SEND;
    uint64_t first = o->mode == 1 ? o->request_size : o->buffer_size;
    if (first == 0 || first > (64U << 20) || o->response_size == 0 ||
        o->response_size > (64U << 20))
        luaL_error(L,
                   "%s: buffer_size, request_size and response_size must be between 1 "
                   "byte and 64M",
                   what);
    options->buffer_size = (uint32_t)first;
    options->response_size = (uint32_t)o->response_size;
    options->token_len = read_token(L, b->table, what, state->token);
    options->token = state->token;
    options->connect_timeout = o->connect_timeout > 0 ? o->connect_timeout : 5;
    bool threads = lua_getfield(L, b->table, "threads") != LUA_TNIL;
    lua_pop(L, 1);
    if (threads && o->streams)
        luaL_error(L, "%s: give streams or threads, not both", what);
    b->defaults.threads = o->streams ? (unsigned)o->streams : 1;
}

static void socket_open(struct cm_bench *b)
{
    struct socket_state *state = b->state;
    struct cm_net_options *options = &state->options;
    struct cm_engine_config *config = &b->config;
    uint32_t largest = options->buffer_size > options->response_size ? options->buffer_size
                                                                     : options->response_size;
    cm_bench_check_memory(b, largest, 0, 0, "stream buffers", "lower streams or buffer_size");
    if (config->depth > CM_NET_MAX_STREAMS)
        luaL_error(b->L, "%s: streams must be between 1 and %d, got %d", b->def->what,
                   CM_NET_MAX_STREAMS, (int)config->depth);
    options->streams = config->depth;
    char error[512];
    if (cm_net_client_open(&state->client, options, error, sizeof error) < 0)
        cm_bench_raise_world(b, error);
    state->open = true;
    state->tap = (struct second_tap){&state->client, config->on_second, config->on_second_arg};
    config->on_second = tap_second;
    config->on_second_arg = &state->tap;
    b->ops = &cm_net_client_ops;
    b->target = &state->client;
}

static void socket_after_run(struct cm_bench *b, int rc)
{
    struct socket_state *state = b->state;
    if (rc < 0)
        return;
    state->local_retransmits = cm_net_client_second(&state->client);
    if (cm_net_client_finish(&state->client, state->remote_error, sizeof state->remote_error) < 0 &&
        b->result.interrupted)
        state->remote_error[0] = '\0';
}

/* The server's side of the run, and which side's retransmits count. */
static void push_server(lua_State *L, const struct socket_state *state)
{
    const struct cm_net_client *client = &state->client;
    uint64_t remote_bytes = 0, remote_ns = 0;
    uint32_t remote_retransmits = 0;
    for (unsigned i = 0; i < state->options.streams; i++) {
        remote_bytes += client->remote[i].bytes;
        remote_retransmits += client->remote[i].retransmits;
        if (client->remote[i].elapsed_ns > remote_ns)
            remote_ns = client->remote[i].elapsed_ns;
    }
    lua_createtable(L, 0, 4);
    cm_result_integer(L, "bytes", remote_bytes);
    cm_result_number(L, "seconds", (double)remote_ns / 1e9);
    cm_result_number(L, "bits_per_second",
                     remote_ns ? (double)remote_bytes * 8 / ((double)remote_ns / 1e9) : 0);
    cm_result_integer(L, "retransmits", remote_retransmits);
    lua_setfield(L, -2, "server");
    /* TCP retransmits are the sender's: the client's own sockets, or the server's */
    cm_result_integer(L, "retransmits",
                      state->options.mode == CM_NET_RECV ? remote_retransmits
                                                         : state->local_retransmits);
}

static void socket_result(struct cm_bench *b)
{
    const struct socket_lua_options *o = b->options;
    struct socket_state *state = b->state;
    const struct cm_net_options *options = &state->options;
    lua_State *L = b->L;
    double elapsed = b->result.elapsed_s;
    annotate_series(L, &state->client);
    cm_result_string(L, "op", "socket");
    if (o->mode == 0) {
        cm_result_string(L, "direction", directions[o->direction]);
        cm_result_integer(L, "buffer_size", options->buffer_size);
    } else {
        cm_result_integer(L, "request_size", options->buffer_size);
        cm_result_integer(L, "response_size", options->response_size);
    }
    cm_result_integer(L, "streams", options->streams);
    cm_result_string(L, "peer", state->client.peer);
    cm_result_number(L, "bits_per_second", elapsed > 0 ? (double)b->result.bytes * 8 / elapsed : 0);
    if (state->client.have_remote)
        push_server(L, state);
    else
        cm_result_integer(L, "retransmits", state->local_retransmits);
    if (options->mode == CM_NET_SEND && state->client.have_remote) {
        /* what arrived, as iperf's receiver line; the sender's count includes bytes still
         * in socket buffers when the run ended */
        lua_getfield(L, -1, "server");
        lua_getfield(L, -1, "bits_per_second");
        lua_setfield(L, -3, "receiver_bits_per_second");
        lua_pop(L, 1);
    }
    if (state->remote_error[0])
        cm_result_string(L, "server_error", state->remote_error);
}

static void socket_close(struct cm_bench *b)
{
    struct socket_state *state = b->state;
    if (state->open)
        cm_net_client_close(&state->client);
    state->open = false;
}

const struct cm_bench_def cm_socket_bench = {
    .what = "socket.bench",
    .name = "socket",
    .options = socket_options,
    .options_size = sizeof(struct socket_lua_options),
    .state_size = sizeof(struct socket_state),
    .default_seconds = 10,
    .prepare = socket_prepare,
    .open = socket_open,
    .after_run = socket_after_run,
    .result = socket_result,
    .close = socket_close,
};

static void print_line(void *arg, const char *line)
{
    (void)arg;
    /* from server threads: stdio locks the stream per call */
    fprintf(stdout, "netserver: %s\n", line);
    fflush(stdout);
}

/* socket.serve{port=, bind="127.0.0.1", token_file=, max_memory="64M", once=false,
 *   quiet=false, on_listen=function(port)} -> tests
 * Serves until SIGINT (or after one test with once = true). */
static int socket_serve(lua_State *L)
{
    const char *what = "netserver";
    luaL_checktype(L, 1, LUA_TTABLE);
    struct cm_net_server_options options = {0};
    options.port = (int)cm_lua_opt_integer(L, 1, "port", CM_NET_DEFAULT_PORT, 0, 65535, what);
    options.bind = cm_lua_opt_string(L, 1, "bind", NULL, what);
    options.once = cm_lua_opt_bool(L, 1, "once", 0, what);
    char token[CM_NET_MAX_TOKEN];
    options.token_len = read_token(L, 1, what, token);
    options.token = token;
    options.max_memory = cm_lua_opt_size(L, 1, "max_memory", CM_NET_DEFAULT_MAX_MEMORY, what);
    if (options.max_memory < CM_NET_CONNECTION_BUFFER)
        return luaL_error(L, "%s: max_memory must be at least 256K (one connection's buffer)",
                          what);
    if (!cm_lua_opt_bool(L, 1, "quiet", 0, what))
        options.log = print_line;
    struct cm_net_server *server;
    char error[512];
    int rc = cm_net_server_open(&server, &options, error, sizeof error);
    if (rc < 0)
        return cm_error_user(L, CM_EXIT_USAGE, "%s: %s", what, error);
    int port = cm_net_server_port(server);
    if (lua_getfield(L, 1, "on_listen") == LUA_TFUNCTION) {
        lua_pushinteger(L, port);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
            cm_net_server_close(server);
            return lua_error(L);
        }
    } else {
        lua_pop(L, 1);
    }
    uint64_t tests = cm_net_server_run(server);
    cm_net_server_close(server);
    lua_pushinteger(L, (lua_Integer)tests);
    return 1;
}

/* ---- connections ------------------------------------------------------------------------ */

#define CONNECTION_TYPE "cephmark.socket.connection"

struct connection {
    struct cm_net_client client; /* client.n_streams is 0 once closed */
    enum cm_net_mode mode;
    double timeout; /* blocking calls: seconds for the whole transfer */
    unsigned worker_targets;
    unsigned char *request_data; /* request_size bytes sent by conn:request() without data */
};

static struct connection *check_connection(lua_State *L, int arg)
{
    struct connection *conn = luaL_checkudata(L, arg, CONNECTION_TYPE);
    if (conn->client.n_streams == 0)
        luaL_argerror(L, arg, "connection is closed");
    return conn;
}

static int connection_close(lua_State *L)
{
    struct connection *conn = luaL_checkudata(L, 1, CONNECTION_TYPE);
    if (conn->worker_targets)
        return luaL_error(L, "close: scripted workers are using this connection (close it after "
                             "their phase)");
    if (conn->client.n_streams)
        cm_net_client_close(&conn->client);
    free(conn->request_data);
    conn->request_data = NULL;
    return 0;
}

static int connection_tostring(lua_State *L)
{
    struct connection *conn = luaL_checkudata(L, 1, CONNECTION_TYPE);
    if (conn->client.n_streams == 0)
        lua_pushliteral(L, "socket connection (closed)");
    else
        lua_pushfstring(L, "socket connection to %s", conn->client.peer);
    return 1;
}

/* socket.connect's options (also published as socket.connect_options) */
static const char *const socket_connect_options[] = {
    "connect_timeout", "host",    "mode",       "port", "request_size",
    "response_size",   "timeout", "token_file", NULL};

/* socket.connect{host=, port=5301, mode="rr"|"send"|"recv", request_size=1,
 *   response_size=1, token_file=, connect_timeout=5, timeout=30}
 *   -> connection | nil, message, code
 * One stream to a `cephmark netserver`: rr (the server answers every request_size bytes
 * with response_size bytes), send (it reads and counts), recv (it sends without end). */
static int socket_connect(lua_State *L)
{
    static const char *const connect_modes[] = {"send", "recv", "rr", NULL};
    const char *what = "socket.connect";
    luaL_checktype(L, 1, LUA_TTABLE);
    cm_lua_check_options(L, 1, what, socket_connect_options, false);
    struct cm_net_options options = {.streams = 1};
    options.host = cm_lua_opt_string(L, 1, "host", NULL, what);
    if (!options.host || !options.host[0])
        return luaL_error(L, "%s: host is required (where `cephmark netserver` runs)", what);
    options.port = (int)cm_lua_opt_integer(L, 1, "port", CM_NET_DEFAULT_PORT, 1, 65535, what);
    options.mode = (enum cm_net_mode)cm_lua_opt_choice(L, 1, "mode", connect_modes, 2,
                                                       "rr, send or recv", what);
    uint64_t request = cm_lua_opt_size(L, 1, "request_size", 1, what);
    uint64_t response = cm_lua_opt_size(L, 1, "response_size", 1, what);
    if (request == 0 || request > CM_NET_CONNECTION_BUFFER || response == 0 ||
        response > CM_NET_CONNECTION_BUFFER)
        return luaL_error(L, "%s: request_size and response_size must be between 1 and %d bytes",
                          what, (int)CM_NET_CONNECTION_BUFFER);
    options.buffer_size = (uint32_t)request;
    options.response_size = (uint32_t)response;
    char token[CM_NET_MAX_TOKEN];
    options.token_len = read_token(L, 1, what, token);
    options.token = token;
    options.connect_timeout = cm_lua_opt_duration(L, 1, "connect_timeout", 5, what);
    if (options.connect_timeout <= 0)
        options.connect_timeout = 5;
    double timeout = cm_lua_opt_duration(L, 1, "timeout", 30, what);
    struct connection *conn = lua_newuserdatauv(L, sizeof *conn, 0);
    memset(conn, 0, sizeof *conn);
    luaL_setmetatable(L, CONNECTION_TYPE);
    conn->mode = options.mode;
    conn->timeout = timeout > 0 ? timeout : 30;
    conn->request_data = calloc(1, (size_t)request);
    if (!conn->request_data)
        return luaL_error(L, "%s: out of memory", what);
    char error[512];
    int rc = cm_net_client_open(&conn->client, &options, error, sizeof error);
    if (rc < 0)
        return cm_lua_failure(L, rc, error);
    conn->client.options.token = NULL; /* the token lived on this function's stack */
    conn->client.options.token_len = 0;
    conn->client.request_timeout = conn->timeout; /* the same bound inside workers */
    return 1;
}

/* Inside a scripted worker, send, receive and request go through the connection's client
 * target (its submit_request, see runtime/workers.h) and yield until the bytes moved. */
static void connection_worker_release(void *instance)
{
    struct connection *conn = instance; /* its client, the first member, is the target */
    conn->worker_targets--;
}

static int connection_worker_continue(lua_State *L, int status, lua_KContext context)
{
    (void)status;
    (void)context;
    struct connection *conn = luaL_checkudata(L, 1, CONNECTION_TYPE);
    struct cm_op *op = cm_worker_current(L);
    const struct cm_request *request = cm_worker_request(op);
    int64_t result = cm_worker_result(op);
    if (result < 0)
        return cm_lua_failure(
            L, (int)result,
            request->message[0]
                ? request->message
                : lua_pushfstring(L, "%s: %s", conn->client.peer,
                                  result == -ECONNRESET ? "the server closed the connection"
                                  : result == -ETIMEDOUT
                                      ? lua_pushfstring(L, "not done within %f s", conn->timeout)
                                      : strerror((int)-result)));
    if (request->verb == CM_REQUEST_SEND)
        lua_pushboolean(L, 1);
    else
        lua_pushlstring(L, request->buffer, request->length);
    return 1;
}

static int connection_worker_submit(lua_State *L, struct connection *conn,
                                    struct cm_request *request)
{
    struct cm_worker_target *attached = cm_worker_target_find(L, conn);
    if (!attached) {
        conn->worker_targets++;
        attached = cm_worker_target_attach(L, 1, conn, &cm_net_client_ops, &conn->client,
                                           connection_worker_release);
        if (!attached)
            return luaL_error(L, "out of memory for a worker's socket target");
    }
    if (request->verb != CM_REQUEST_SEND) {
        request->buffer =
            cm_worker_scratch(cm_worker_current(L), request->length ? request->length : 1);
        if (!request->buffer)
            return luaL_error(L, "out of memory for a %I-byte worker receive",
                              (lua_Integer)request->length);
    }
    return cm_worker_submit(L, attached, request, connection_worker_continue, 0);
}

static int transfer_failure(lua_State *L, struct connection *conn, int rc)
{
    return cm_lua_failure(
        L, rc,
        lua_pushfstring(L, "%s: %s", conn->client.peer,
                        rc == -ECONNRESET ? "the server closed the connection"
                        : rc == -ETIMEDOUT
                            ? lua_pushfstring(L, "no progress within %f s", conn->timeout)
                            : strerror(-rc)));
}

/* conn:send(data) -> true | nil, message, code (modes send and rr) */
static int connection_send(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    size_t length;
    const char *data = luaL_checklstring(L, 2, &length);
    if (conn->mode == CM_NET_RECV)
        return luaL_error(L, "conn:send: a connection in mode recv only receives");
    lua_settop(L, 2);
    if (cm_worker_current(L))
        return connection_worker_submit(
            L, conn,
            &(struct cm_request){.verb = CM_REQUEST_SEND, .data = data, .data_length = length});
    int rc = cm_net_client_transfer(&conn->client, true, (void *)data, length, conn->timeout);
    if (rc < 0)
        return transfer_failure(L, conn, rc);
    lua_pushboolean(L, 1);
    return 1;
}

/* conn:receive(length) -> data | nil, message, code (modes recv and rr) */
static int connection_receive(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    lua_Integer length = luaL_checkinteger(L, 2);
    if (length < 0 || length > (1 << 30))
        return luaL_argerror(L, 2, "length must be between 0 and 1G");
    if (conn->mode == CM_NET_SEND)
        return luaL_error(L, "conn:receive: a connection in mode send only sends");
    lua_settop(L, 2);
    if (cm_worker_current(L))
        return connection_worker_submit(
            L, conn, &(struct cm_request){.verb = CM_REQUEST_RECEIVE, .length = (size_t)length});
    luaL_Buffer b;
    char *space = luaL_buffinitsize(L, &b, (size_t)length);
    int rc = cm_net_client_transfer(&conn->client, false, space, (size_t)length, conn->timeout);
    if (rc < 0)
        return transfer_failure(L, conn, rc);
    luaL_pushresultsize(&b, (size_t)length);
    return 1;
}

/* conn:request([data]) -> response | nil, message, code (mode rr): one request of
 * request_size bytes (data, or zeros) and its response of response_size bytes */
static int connection_request(lua_State *L)
{
    struct connection *conn = check_connection(L, 1);
    if (conn->mode != CM_NET_RR)
        return luaL_error(L, "conn:request needs a connection in mode rr");
    size_t size = conn->client.options.buffer_size, length = size;
    const char *data = (const char *)conn->request_data;
    if (!lua_isnoneornil(L, 2)) {
        data = luaL_checklstring(L, 2, &length);
        if (length != size)
            return luaL_argerror(L, 2,
                                 lua_pushfstring(L, "a request is request_size (%d) bytes, got %d",
                                                 (int)size, (int)length));
    }
    size_t response = conn->client.options.response_size;
    lua_settop(L, 2);
    if (cm_worker_current(L))
        return connection_worker_submit(L, conn,
                                        &(struct cm_request){.verb = CM_REQUEST_EXCHANGE,
                                                             .data = data,
                                                             .data_length = size,
                                                             .length = response});
    int rc = cm_net_client_transfer(&conn->client, true, (void *)data, size, conn->timeout);
    luaL_Buffer b;
    char *space = luaL_buffinitsize(L, &b, response);
    if (rc == 0)
        rc = cm_net_client_transfer(&conn->client, false, space, response, conn->timeout);
    if (rc < 0)
        return transfer_failure(L, conn, rc);
    luaL_pushresultsize(&b, response);
    return 1;
}

int luaopen_cephmark_socket(lua_State *L)
{
    static const luaL_Reg connection_methods[] = {
        {"close", connection_close},
        {"receive", connection_receive},
        {"request", connection_request},
        {"send", connection_send},
        {NULL, NULL},
    };
    luaL_newmetatable(L, CONNECTION_TYPE);
    luaL_newlib(L, connection_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, connection_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, connection_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, connection_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    static const luaL_Reg functions[] = {
        {"connect", socket_connect},
        {"serve", socket_serve},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    /* socket.bench{host=, port=, mode="stream"|"rr", direction="send"|"recv", streams=1,
     *   buffer_size="128K", request_size=1, response_size=1, seconds=10, bytes=, ops=,
     *   warmup=, rate=, connect_timeout=5, on_second=} -> result table */
    cm_bench_set_functions(L, &cm_socket_bench);
    cm_lua_push_option_names(L, socket_connect_options, false);
    lua_setfield(L, -2, "connect_options");
    lua_pushinteger(L, CM_NET_DEFAULT_PORT);
    lua_setfield(L, -2, "DEFAULT_PORT");
    return 1;
}
