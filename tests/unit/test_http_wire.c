/* Tests of the native HTTP/1.1 transport of the HTTP target (modules/http/http_wire.c) against a
 * small scripted server on loopback, for the shapes of answers a gateway or a proxy in front
 * of it may send that radosgw itself rarely does: chunked bodies cut at every byte
 * boundary, 100 Continue before the answer, Connection: close, HTTP/1.0 bodies ended by the
 * close, keep-alive connections dropped while idle, error statuses, silence (the timeout),
 * garbage and oversized headers, and a refused port (errors without a storm); which
 * endpoints it serves (Swift and S3 over http://, not https://). The server
 * keeps PUT bodies and returns them on GET, so the round trip is verified as in a real run.
 * Requests chosen by the caller (submit_request, as scripted workers make them) go through
 * the same answer shapes, with bodies of unknown size kept whole.
 * radosgw itself is exercised by the integration tests. */
#include "check.h"
#include "engine.h"
#include "http_target.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum mode {
    PLAIN,        /* Content-Length, keep-alive */
    CHUNKED,      /* chunked, sent a few bytes at a time, with extensions and a trailer */
    CONTINUE,     /* 100 Continue, then the answer */
    CLOSE,        /* Connection: close after every answer */
    HTTP10,       /* HTTP/1.0, no length: the body ends with the close */
    DROP_IDLE,    /* keep-alive promised, but the connection is closed after each answer */
    STATUS_503,   /* every request: 503 with a body */
    SILENT,       /* reads the request, never answers */
    GARBAGE,      /* not HTTP */
    BIG_HEADERS,  /* 20 KiB of headers */
    PUT_CONTINUE, /* 100 Continue as soon as a PUT's headers are in, before its body */
};

#define MAX_OBJECTS 64
#define OBJECT_MAX  (16 << 20)

struct stored {
    char name[64];
    unsigned char *data;
    size_t len;
};

static struct {
    int listen_fd;
    int port;
    _Atomic int mode;
    atomic_int connections;
    atomic_int requests;
    pthread_mutex_t lock;
    struct stored objects[MAX_OBJECTS];
} server;

static int send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Sends in pieces of 1 to 7 bytes with a pause, so the client sees every boundary. */
static int send_dribble(int fd, const char *data, size_t len)
{
    size_t step = 1;
    while (len > 0) {
        size_t n = step < len ? step : len;
        if (send_all(fd, data, n) < 0)
            return -1;
        data += n;
        len -= n;
        step = step % 7 + 1;
        usleep(200);
    }
    return 0;
}

static struct stored *find_object(const char *name, bool create)
{
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (server.objects[i].data && strcmp(server.objects[i].name, name) == 0)
            return &server.objects[i];
    if (!create)
        return NULL;
    for (int i = 0; i < MAX_OBJECTS; i++) {
        if (!server.objects[i].data) {
            snprintf(server.objects[i].name, sizeof server.objects[i].name, "%s", name);
            return &server.objects[i];
        }
    }
    return NULL;
}

/* One request: method, the last path segment and the body; false on EOF or error. */
static bool read_request(int fd, char *method, char *name, unsigned char *body, size_t *body_len)
{
    static _Thread_local char buffer[65536];
    static _Thread_local size_t have;
    char *end;
    while (!(end = memmem(buffer, have, "\r\n\r\n", 4))) {
        ssize_t n = recv(fd, buffer + have, sizeof buffer - have, 0);
        if (n <= 0) {
            have = 0;
            return false;
        }
        have += (size_t)n;
    }
    size_t head_len = (size_t)(end - buffer) + 4;
    char path[1024] = "";
    sscanf(buffer, "%15s %1023s", method, path);
    const char *slash = strrchr(path, '/');
    snprintf(name, 64, "%s", slash ? slash + 1 : path);
    size_t length = 0;
    const char *cl = strcasestr(buffer, "\r\nContent-Length:");
    if (cl && cl < end)
        length = strtoul(cl + 17, NULL, 10);
    memmove(buffer, buffer + head_len, have - head_len);
    have -= head_len;
    if (length > 0 && atomic_load(&server.mode) == PUT_CONTINUE)
        send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    size_t got = 0;
    while (got < length) {
        if (have == 0) {
            ssize_t n = recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0)
                return false;
            have = (size_t)n;
        }
        size_t take = length - got < have ? length - got : have;
        if (got + take <= OBJECT_MAX)
            memcpy(body + got, buffer, take);
        memmove(buffer, buffer + take, have - take);
        have -= take;
        got += take;
    }
    *body_len = length;
    return true;
}

static void answer(int fd, enum mode mode, const char *method, const char *name,
                   const unsigned char *body, size_t body_len, bool *close_after)
{
    char head[256];
    if (strcmp(method, "PUT") == 0) {
        pthread_mutex_lock(&server.lock);
        struct stored *o = find_object(name, true);
        if (o) {
            free(o->data);
            o->data = malloc(body_len ? body_len : 1);
            memcpy(o->data, body, body_len);
            o->len = body_len;
        }
        pthread_mutex_unlock(&server.lock);
        int n = snprintf(head, sizeof head, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
        send_all(fd, head, (size_t)n);
        return;
    }
    pthread_mutex_lock(&server.lock);
    struct stored *o = find_object(name, false);
    size_t len = o ? o->len : 0;
    unsigned char *data = malloc(len + 1);
    if (o)
        memcpy(data, o->data, len);
    pthread_mutex_unlock(&server.lock);
    if (!o) {
        const char *missing = "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nNoSuchKey";
        send_all(fd, missing, strlen(missing));
        free(data);
        return;
    }
    int n;
    switch (mode) {
    case CHUNKED: {
        n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        send_dribble(fd, head, (size_t)n);
        size_t at = 0, piece = 1000;
        while (at < len) {
            size_t take = len - at < piece ? len - at : piece;
            char line[64];
            int m = snprintf(line, sizeof line, "%zx;ext=1\r\n", take);
            send_dribble(fd, line, (size_t)m);
            send_all(fd, data + at, take);
            send_dribble(fd, "\r\n", 2);
            at += take;
            piece = piece * 3 + 7;
        }
        const char *last = "0\r\nX-Trailer: yes\r\n\r\n";
        send_dribble(fd, last, strlen(last));
        break;
    }
    case CONTINUE:
        send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
        usleep(500);
        n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", len);
        send_all(fd, head, (size_t)n);
        send_all(fd, data, len);
        break;
    case CLOSE:
        n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", len);
        send_all(fd, head, (size_t)n);
        send_all(fd, data, len);
        *close_after = true;
        break;
    case HTTP10:
        n = snprintf(head, sizeof head, "HTTP/1.0 200 OK\r\nContent-Type: x/y\r\n\r\n");
        send_all(fd, head, (size_t)n);
        send_all(fd, data, len);
        *close_after = true;
        break;
    case DROP_IDLE:
    default:
        n = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", len);
        send_all(fd, head, (size_t)n);
        send_all(fd, data, len);
        *close_after = mode == DROP_IDLE;
        break;
    }
    free(data);
}

static void *connection_main(void *arg)
{
    int fd = (int)(intptr_t)arg;
    unsigned char *body = malloc(OBJECT_MAX);
    char method[16], name[64];
    size_t body_len;
    while (read_request(fd, method, name, body, &body_len)) {
        atomic_fetch_add(&server.requests, 1);
        enum mode mode = (enum mode)atomic_load(&server.mode);
        bool close_after = false;
        if (mode == SILENT) {
            usleep(3000000);
            break;
        } else if (mode == GARBAGE) {
            send_all(fd, "FOO BAR\r\n\r\n", 11);
        } else if (mode == STATUS_503) {
            const char *busy = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy";
            send_all(fd, busy, strlen(busy));
        } else if (mode == BIG_HEADERS) {
            char *big = malloc(24000);
            int n = snprintf(big, 24000, "HTTP/1.1 200 OK\r\n");
            while (n < 21000)
                n += snprintf(big + n, (size_t)(24000 - n), "X-Filler: %0100d\r\n", n);
            n += snprintf(big + n, (size_t)(24000 - n), "Content-Length: 0\r\n\r\n");
            send_all(fd, big, (size_t)n);
            free(big);
        } else {
            answer(fd, mode, method, name, body, body_len, &close_after);
        }
        if (close_after)
            break;
    }
    free(body);
    close(fd);
    return NULL;
}

static void *server_main(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(server.listen_fd, NULL, NULL);
        if (fd < 0)
            return NULL;
        atomic_fetch_add(&server.connections, 1);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_t thread;
        pthread_create(&thread, NULL, connection_main, (void *)(intptr_t)fd);
        pthread_detach(thread);
    }
}

static int start_server(void)
{
    server.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    /* a small receive window, so that a large PUT body cannot all go out in one send and
     * the client is still sending when an early answer (100 Continue) comes */
    int window = 64 * 1024;
    setsockopt(server.listen_fd, SOL_SOCKET, SO_RCVBUF, &window, sizeof window);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof address;
    if (bind(server.listen_fd, (struct sockaddr *)&address, len) < 0 ||
        listen(server.listen_fd, 128) < 0 ||
        getsockname(server.listen_fd, (struct sockaddr *)&address, &len) < 0)
        return -1;
    server.port = ntohs(address.sin_port);
    pthread_mutex_init(&server.lock, NULL);
    pthread_t thread;
    return pthread_create(&thread, NULL, server_main, NULL);
}

/* A client as cm_http_client_init leaves it after authenticating, without the request. */
static void fake_client(struct cm_http_client *client, int port)
{
    memset(client, 0, sizeof *client);
    client->api = CM_HTTP_SWIFT;
    snprintf(client->storage_url, sizeof client->storage_url, "http://127.0.0.1:%d/swift/v1", port);
    snprintf(client->auth_header, sizeof client->auth_header, "X-Auth-Token: AUTH_tk0123");
    client->connect_timeout_ms = 1000;
    client->low_speed_seconds = 1;
}

struct outcome {
    struct cm_engine_result result;
    uint64_t transport_errors;
    uint64_t status_count[2]; /* [0]: status, [1]: count of the first kind */
    uint64_t put_ok;
    char first_error[640];
    double seconds;
    int rc;
};

static struct outcome run(const struct cm_http_client *client, enum cm_http_target_op op,
                          uint64_t objects, size_t size, unsigned depth, uint64_t max_ops,
                          double seconds, bool verify)
{
    struct outcome out = {0};
    const char *containers[] = {"c1"};
    struct cm_http_target_options options = {
        .op = op,
        .containers = containers,
        .n_containers = 1,
        .prefix = "obj",
        .objects = objects,
        .size_min = size,
        .size_max = size,
        .run_id = 42,
        .random = false,
        .verify = verify,
        .transport = CM_HTTP_NATIVE,
    };
    struct cm_http_target bench;
    char error[640];
    out.rc =
        cm_http_target_init(&bench, (struct cm_http_client *)client, &options, error, sizeof error);
    if (out.rc < 0) {
        fprintf(stderr, "init: %s\n", error);
        cm_http_target_fini(&bench);
        return out;
    }
    CHECK(cm_http_target_ops_for(&bench) == &cm_http_wire_ops);
    struct cm_engine_config config = {
        .depth = depth, .max_ops = max_ops, .seconds = seconds, .drain_timeout = 5};
    uint64_t start = cm_now_ns();
    out.rc = cm_engine_run(&config, &cm_http_wire_ops, &bench, &out.result);
    out.seconds = (double)(cm_now_ns() - start) / 1e9;
    out.transport_errors = bench.transport_errors;
    if (bench.n_statuses) {
        out.status_count[0] = (uint64_t)bench.statuses[0].status;
        out.status_count[1] = bench.statuses[0].count;
    }
    out.put_ok = bench.put_ok;
    snprintf(out.first_error, sizeof out.first_error, "%s", bench.first_error);
    cm_http_target_fini(&bench);
    return out;
}

/* ---- requests chosen by the caller: a small caller target, as scripted workers are ------- */

#define CALLER_DEPTH 4

struct caller {
    struct cm_http_target *inner;
    const struct cm_target_ops *ops;
    bool put;    /* PUT req_<N> (N = sequence % 8) with its own bytes, else GET them */
    size_t size; /* bytes of req_<N>: size + N */
    struct cm_request requests[CALLER_DEPTH];
    bool pending[CALLER_DEPTH];
    char names[CALLER_DEPTH][32];
    unsigned char *bodies; /* 8 bodies of size + 7 bytes */
    uint64_t good, bad;
    char first_error[512];
};

static unsigned char body_byte(size_t object, size_t at)
{
    return (unsigned char)(object * 31 + at * 7 + (at >> 9));
}

static int caller_submit(void *self, struct cm_op *op)
{
    struct caller *c = self;
    size_t object = op->sequence % 8;
    struct cm_request *r = &c->requests[op->slot];
    snprintf(c->names[op->slot], sizeof c->names[0], "req_%zu", object);
    *r = (struct cm_request){.verb = c->put ? CM_REQUEST_WRITE_FULL : CM_REQUEST_READ,
                             .container = "c1",
                             .name = c->names[op->slot]};
    if (c->put) {
        r->data = c->bodies + object * (c->size + 7);
        r->data_length = c->size + object;
    }
    int rc = c->ops->submit_request(c->inner, op, r);
    c->pending[op->slot] = rc == 0;
    return rc;
}

static void caller_complete(void *self, struct cm_op *op)
{
    struct caller *c = self;
    struct cm_request *r = &c->requests[op->slot];
    if (c->pending[op->slot])
        c->ops->complete_request(c->inner, op, r);
    c->pending[op->slot] = false;
    size_t object = op->sequence % 8, want = c->size + object;
    bool ok = op->result >= 0 && r->status / 100 == 2;
    if (ok && !c->put) {
        ok = r->reply_length == want && (uint64_t)op->result == want && op->length == want &&
             memcmp(r->reply, c->bodies + object * (c->size + 7), want) == 0;
    }
    if (ok) {
        c->good++;
    } else if (c->bad++ == 0) {
        snprintf(c->first_error, sizeof c->first_error,
                 "%s %s: result %lld, status %d, %zu bytes back, %.300s", c->put ? "PUT" : "GET",
                 r->name, (long long)op->result, r->status, r->reply_length, r->message);
    }
}

static void caller_poll(void *self, uint64_t now_ns)
{
    struct caller *c = self;
    c->ops->poll(c->inner, now_ns);
}

static uint64_t caller_next_deadline(void *self)
{
    struct caller *c = self;
    return c->ops->next_deadline(c->inner);
}

static int caller_wait_fd(void *self)
{
    struct caller *c = self;
    return c->ops->wait_fd(c->inner);
}

static const struct cm_target_ops caller_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "caller",
    .submit = caller_submit,
    .complete = caller_complete,
    .poll = caller_poll,
    .next_deadline = caller_next_deadline,
    .wait_fd = caller_wait_fd,
};

/* `ops` requests of the caller's choosing over the native transport, CALLER_DEPTH at once. */
static void run_requests(const struct cm_http_client *client, bool put, size_t size,
                         unsigned char *bodies, uint64_t ops, const char *what)
{
    struct cm_http_target inner;
    char error[640];
    int rc = cm_http_target_init_requests(&inner, (struct cm_http_client *)client, CM_HTTP_NATIVE,
                                          error, sizeof error);
    CHECK_MSG(rc == 0, "%s: init: %s", what, error);
    if (rc == 0) {
        struct caller c = {.inner = &inner,
                           .ops = cm_http_target_ops_for(&inner),
                           .put = put,
                           .size = size,
                           .bodies = bodies};
        CHECK(c.ops == &cm_http_wire_ops);
        struct cm_engine_config config = {
            .depth = CALLER_DEPTH, .max_ops = ops, .drain_timeout = 5};
        struct cm_engine_result result;
        rc = cm_engine_run(&config, &caller_ops, &c, &result);
        CHECK(rc == 0);
        if (rc == 0) {
            CHECK_MSG(c.good == ops && c.bad == 0 && result.errors == 0,
                      "%s: %llu good, %llu bad (%s)", what, (unsigned long long)c.good,
                      (unsigned long long)c.bad, c.first_error);
            uint64_t bytes = 0;
            for (uint64_t i = 0; i < ops; i++)
                bytes += size + i % 8;
            CHECK_MSG(result.bytes == bytes, "%s: %llu bytes counted, %llu moved", what,
                      (unsigned long long)result.bytes, (unsigned long long)bytes);
            cm_engine_result_free(&result);
        }
    }
    cm_http_target_fini(&inner);
}

static void done(struct outcome *o)
{
    if (o->rc == 0)
        cm_engine_result_free(&o->result);
}

int main(void)
{
    if (start_server() < 0) {
        perror("server");
        return 1;
    }
    struct cm_http_client client;
    fake_client(&client, server.port);

    /* PUT 16 objects of 100 000 bytes (several sends each), then GET them back verified in
     * every answer shape */
    atomic_store(&server.mode, PLAIN);
    struct outcome put = run(&client, CM_HTTP_PUT, 16, 100000, 4, 0, 0, true);
    CHECK(put.rc == 0);
    CHECK_MSG(put.result.ops == 16 && put.result.errors == 0 && put.put_ok == 16,
              "put: %llu ops, %llu errors, first error %s", (unsigned long long)put.result.ops,
              (unsigned long long)put.result.errors, put.first_error);
    done(&put);

    static const struct {
        enum mode mode;
        const char *name;
    } shapes[] = {{PLAIN, "content-length"},
                  {CHUNKED, "chunked, dribbled"},
                  {CONTINUE, "100 continue first"},
                  {CLOSE, "connection: close"},
                  {HTTP10, "HTTP/1.0, body to the close"},
                  {DROP_IDLE, "idle connection dropped"}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        atomic_store(&server.mode, shapes[i].mode);
        int connections_before = atomic_load(&server.connections);
        struct outcome get = run(&client, CM_HTTP_GET, 16, 100000, 4, 48, 0, true);
        CHECK(get.rc == 0);
        CHECK_MSG(get.result.ops == 48 && get.result.errors == 0 && get.result.verify_failures == 0,
                  "%s: %llu ops, %llu errors, %llu verify failures, first error %s", shapes[i].name,
                  (unsigned long long)get.result.ops, (unsigned long long)get.result.errors,
                  (unsigned long long)get.result.verify_failures, get.first_error);
        int connections = atomic_load(&server.connections) - connections_before;
        if (shapes[i].mode == PLAIN || shapes[i].mode == CHUNKED || shapes[i].mode == CONTINUE)
            CHECK_MSG(connections == 4, "%s: %d connections for 4 slots (keep-alive)",
                      shapes[i].name, connections);
        else
            CHECK_MSG(connections >= 48, "%s: %d connections for 48 requests", shapes[i].name,
                      connections);
        done(&get);
    }

    /* requests chosen by the caller: PUT with the caller's bytes, then GET of bodies whose
     * size the transport does not know, in every answer shape */
    size_t request_size = 150000;
    unsigned char *bodies = malloc(8 * (request_size + 7));
    for (size_t object = 0; object < 8; object++)
        for (size_t at = 0; at < request_size + 7; at++)
            bodies[object * (request_size + 7) + at] = body_byte(object, at);
    atomic_store(&server.mode, PLAIN);
    run_requests(&client, true, request_size, bodies, 8, "requests: put");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        atomic_store(&server.mode, shapes[i].mode);
        char what[96];
        snprintf(what, sizeof what, "requests: get, %s", shapes[i].name);
        run_requests(&client, false, request_size, bodies, 24, what);
    }
    free(bodies);

    /* a 100 Continue that comes while a large PUT body is still going out (8 MB: more than
     * the kernel takes in one send): the body goes on and the final answer counts */
    atomic_store(&server.mode, PUT_CONTINUE);
    struct outcome big_put = run(&client, CM_HTTP_PUT, 4, 8000000, 2, 0, 0, true);
    CHECK_MSG(big_put.rc == 0 && big_put.result.ops == 4 && big_put.result.errors == 0,
              "put with 100 Continue: %llu ops, %llu errors, first error %s",
              (unsigned long long)big_put.result.ops, (unsigned long long)big_put.result.errors,
              big_put.first_error);
    done(&big_put);
    atomic_store(&server.mode, PLAIN);
    struct outcome big_get = run(&client, CM_HTTP_GET, 4, 8000000, 2, 8, 0, true);
    CHECK(big_get.rc == 0 && big_get.result.ops == 8 && big_get.result.verify_failures == 0);
    done(&big_get);

    /* a body shorter than the object: a verify failure, not an error */
    atomic_store(&server.mode, PLAIN);
    struct outcome short_get = run(&client, CM_HTTP_GET, 16, 100001, 2, 8, 0, true);
    CHECK(short_get.rc == 0 && short_get.result.verify_failures == 8 &&
          short_get.result.errors == 0);
    done(&short_get);

    /* a missing object: 404 counted by status */
    struct outcome missing = run(&client, CM_HTTP_GET, 100, 100000, 2, 120, 0, true);
    CHECK(missing.rc == 0 && missing.status_count[0] == 404 && missing.result.errors > 0);
    CHECK_MSG(strstr(missing.first_error, "GET http://127.0.0.1:") &&
                  strstr(missing.first_error, "/swift/v1/c1/obj_") &&
                  strstr(missing.first_error, ": 404 Not Found"),
              "first error: %s", missing.first_error);
    done(&missing);

    /* 503 for everything */
    atomic_store(&server.mode, STATUS_503);
    struct outcome busy = run(&client, CM_HTTP_GET, 16, 100000, 4, 40, 0, true);
    CHECK(busy.rc == 0 && busy.result.errors == 40 && busy.status_count[0] == 503 &&
          busy.status_count[1] == 40 && busy.transport_errors == 0);
    done(&busy);

    /* silence: each request fails after the 1 s timeout, not before and not much after */
    atomic_store(&server.mode, SILENT);
    struct outcome silent = run(&client, CM_HTTP_GET, 16, 100000, 2, 2, 0, true);
    CHECK(silent.rc == 0 && silent.result.errors == 2 && silent.transport_errors == 2);
    CHECK_MSG(silent.seconds >= 0.95 && silent.seconds < 2.5, "silent server: %.2f s",
              silent.seconds);
    CHECK_MSG(strstr(silent.first_error, "no progress for 1.0 s"), "first error: %s",
              silent.first_error);
    done(&silent);

    /* not HTTP, and headers too large: protocol errors */
    atomic_store(&server.mode, GARBAGE);
    struct outcome garbage = run(&client, CM_HTTP_GET, 16, 100000, 2, 4, 0, true);
    CHECK(garbage.rc == 0 && garbage.result.errors == 4 && garbage.transport_errors == 4);
    CHECK_MSG(strstr(garbage.first_error, "not HTTP/1.x"), "first error: %s", garbage.first_error);
    done(&garbage);
    atomic_store(&server.mode, BIG_HEADERS);
    struct outcome big = run(&client, CM_HTTP_GET, 16, 100000, 2, 4, 0, true);
    CHECK(big.rc == 0 && big.result.errors == 4);
    CHECK_MSG(strstr(big.first_error, "larger than 16 KiB"), "first error: %s", big.first_error);
    done(&big);

    /* a refused port: errors for 1.5 s at depth 8, with backoff: a few per slot, no storm */
    int closed = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof address;
    bind(closed, (struct sockaddr *)&address, len);
    getsockname(closed, (struct sockaddr *)&address, &len);
    struct cm_http_client refused_client;
    fake_client(&refused_client, ntohs(address.sin_port)); /* bound, not listening */
    struct outcome refused = run(&refused_client, CM_HTTP_GET, 16, 4096, 8, 0, 1.5, true);
    close(closed);
    CHECK(refused.rc == 0 && refused.result.ops == 0);
    CHECK_MSG(refused.result.errors >= 8 && refused.result.errors <= 8 * 6,
              "refused: %llu errors in 1.5 s at depth 8",
              (unsigned long long)refused.result.errors);
    CHECK_MSG(strstr(refused.first_error, "cannot connect (Connection refused)"), "first error: %s",
              refused.first_error);
    done(&refused);

    /* what the transport refuses to serve */
    struct cm_http_client s3 = client;
    s3.api = CM_HTTP_S3;
    char why[256];
    CHECK(cm_http_wire_supported(&s3, why, sizeof why)); /* signed by sigv4.c */
    snprintf(s3.storage_url, sizeof s3.storage_url, "https://127.0.0.1:1");
    CHECK(!cm_http_wire_supported(&s3, why, sizeof why) && strstr(why, "not plain http://"));
    struct cm_http_client tls = client;
    snprintf(tls.storage_url, sizeof tls.storage_url, "https://127.0.0.1:1/swift/v1");
    CHECK(!cm_http_wire_supported(&tls, why, sizeof why) && strstr(why, "not plain http://"));
    CHECK(cm_http_wire_supported(&client, why, sizeof why));

    for (int i = 0; i < MAX_OBJECTS; i++)
        free(server.objects[i].data);
    return check_summary("test_http_wire");
}
