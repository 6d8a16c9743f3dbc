/* The `cephmark.socket` Lua module: socket.bench, an iperf-like TCP bandwidth test (streams,
 * direction, buffer size; bits/s per second, retransmits from TCP_INFO) or a
 * request/response latency test, run by the op engine against a `cephmark netserver`; and
 * socket.serve, that server (socket_target.c). */
#include "bench_lua.h"
#include "exitcode.h"
#include "interrupt.h"
#include "lstate.h"
#include "registry.h"
#include "socket_net.h"

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

int luaopen_cephmark_socket(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"serve", socket_serve},
        {NULL, NULL},
    };
    luaL_newlib(L, functions);
    /* socket.bench{host=, port=, mode="stream"|"rr", direction="send"|"recv", streams=1,
     *   buffer_size="128K", request_size=1, response_size=1, seconds=10, bytes=, ops=,
     *   warmup=, rate=, connect_timeout=5, on_second=} -> result table */
    cm_bench_set_functions(L, &cm_socket_bench);
    lua_pushinteger(L, CM_NET_DEFAULT_PORT);
    lua_setfield(L, -2, "DEFAULT_PORT");
    return 1;
}
