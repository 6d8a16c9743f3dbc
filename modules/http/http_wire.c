/* The native transport of the HTTP target (http_target.h): a small HTTP/1.1 keep-alive
 * client on the engine's loop thread, for Swift and S3 over plain http (S3 requests signed
 * with SigV4 by sigv4.c, the signing key cached per day). Each engine slot owns one
 * TCP connection and has at most one request on it; a request is one send (headers and body
 * together) and, for small objects, one recv that brings the whole response, parsed in
 * place by http_response.c, which allocates nothing. The connections sit in one epoll set:
 * in a closed-loop run the loop waits in that set itself (the target's block hook), in an
 * open-loop run the set is the engine's wait_fd.
 *
 * What it speaks: GET, PUT (with Content-Length), HEAD and DELETE; responses with
 * Content-Length, chunked bodies or a body ended by the close; 1xx answers skipped;
 * `Connection: close` and HTTP/1.0 honoured. What it leaves to libcurl: TLS,
 * redirects (a 3xx is counted like any other non-2xx status).
 *
 * Failures: a request that gets no answer fails with -errno and a sentence naming the URL;
 * no progress for the client's timeout fails with -ETIMEDOUT. A request on a reused
 * connection that the server had closed (EOF or reset before any byte of the answer) is
 * sent again once on a new connection. After a failed connect a slot waits before its next
 * attempt (100 ms, doubling to 1.6 s, reset by a successful connect), so a gateway that is
 * down costs a few errors per slot and second instead of a storm. */
#include "http_response.h"
#include "http_target.h"
#include "sigv4.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define REQUEST_MAX (CM_HTTP_URL_MAX + 2 * 600 + CM_HTTP_TOKEN_MAX + 512)
#define SCAN_NS     100000000ULL /* timeouts and backoff are checked this often */

enum phase {
    IDLE,       /* no request; the connection (if any) is idle */
    WAITING,    /* a request waits for the connect backoff to pass */
    CONNECTING, /* non-blocking connect in progress */
    SENDING,    /* request bytes left to send */
    RECEIVING,  /* the answer, parsed by slot->answer */
};

struct wire_slot {
    struct cm_http_wire *wire;
    struct cm_op *op;
    struct wire_slot *next_slot; /* every slot of the run, for the timeout scan */
    int fd;
    enum phase phase;
    bool out_watched;     /* EPOLLOUT is in the connection's event mask */
    bool reused;          /* the request went out on a connection that served one before */
    bool answered;        /* a byte of the answer arrived */
    bool resent;          /* already sent again once after a closed keep-alive connection */
    uint64_t deadline_ns; /* fail with -ETIMEDOUT when no progress by then */
    uint64_t backoff_ns;  /* wait before the next connect (0: none) */
    uint64_t retry_ns;    /* WAITING: when to connect */
    unsigned generation;  /* bench->headers_generation the request was built with */

    /* the request */
    char request[REQUEST_MAX];
    size_t request_len, path_offset, path_len;
    size_t sent; /* of request_len + body length */

    /* the answer */
    struct cm_http_answer answer;
    uint64_t first_byte_ns;

    /* the object */
    unsigned char *buffer; /* PUT body / GET landing area, `capacity` bytes */
    size_t capacity;
    size_t length;             /* the object's size: bytes to send, or expected back */
    char name[600];            /* escaped, as it goes in the path */
    bool put;                  /* the request carries a body: `length` bytes at `body` */
    const unsigned char *body; /* the bench's buffer, or a caller's request data */

    /* requests chosen by the caller (submit_request): the answer's body grows in
     * answer.body (the slot's), its headers and a failure's sentence are kept */
    bool callers; /* serves requests chosen by the caller */
    struct cm_http_response response;
    char error[CM_HTTP_URL_MAX + 900];
};

struct cm_http_wire {
    struct cm_http_target *bench;
    struct sockaddr_storage address;
    socklen_t address_len;
    char origin[320];                   /* "http://host:port", for messages */
    char host[300];                     /* the Host header's value */
    char base_path[CM_HTTP_URL_MAX];    /* the storage URL's path, no trailing '/' */
    char token[CM_HTTP_TOKEN_MAX + 40]; /* "X-Auth-Token: ...\r\n" */
    unsigned token_generation;
    bool s3;                /* requests are signed (SigV4) instead of carrying a token */
    struct cm_sigv4 signer; /* S3 */
    int epoll_fd;
    int cancel_fd; /* written by cancel_block; in the epoll set with a NULL pointer */
    bool blocking;
    bool cancelled;
    uint64_t connect_timeout_ns, idle_timeout_ns;
    uint64_t now_ns; /* the loop's clock, read once per wake-up */
    uint64_t next_scan_ns;
    unsigned busy; /* slots not IDLE */
    struct wire_slot *slots;
    /* requests chosen by the caller, per caller slot (also in `slots`, for the scan) */
    void **request_slots; /* struct wire_slot *, by op slot (cm_request_slot_entry) */
    size_t n_request_slots;
};

/* ---- setup -------------------------------------------------------------------------------- */

bool cm_http_wire_supported(const struct cm_http_client *client, char *why, size_t why_size)
{
    if (strncasecmp(client->storage_url, "http://", 7) != 0) {
        snprintf(why, why_size, "the storage URL %.300s is not plain http://", client->storage_url);
        return false;
    }
    return true;
}

/* Splits http://host[:port]/path into the wire's host, port and base path. */
static int parse_storage_url(struct cm_http_wire *wire, const char *url, char *port,
                             size_t port_size, char *hostname, size_t hostname_size, char *error,
                             size_t error_size)
{
    const char *authority = url + 7;
    const char *path = strchr(authority, '/');
    size_t authority_len = path ? (size_t)(path - authority) : strlen(authority);
    if (authority_len == 0 || authority_len >= sizeof wire->host ||
        memchr(authority, '@', authority_len)) {
        snprintf(error, error_size, "cannot use the storage URL %.300s (host part)", url);
        return -EINVAL;
    }
    memcpy(wire->host, authority, authority_len);
    wire->host[authority_len] = '\0';
    snprintf(wire->origin, sizeof wire->origin, "http://%s", wire->host);
    const char *host_end = wire->host + authority_len;
    const char *host_start = wire->host;
    const char *colon;
    if (wire->host[0] == '[') { /* [v6]:port */
        const char *close = strchr(wire->host, ']');
        if (!close) {
            snprintf(error, error_size, "cannot use the storage URL %.300s (IPv6 host)", url);
            return -EINVAL;
        }
        host_start = wire->host + 1;
        host_end = close;
        colon = close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = strrchr(wire->host, ':');
        if (colon)
            host_end = colon;
    }
    size_t host_len = (size_t)(host_end - host_start);
    if (host_len == 0 || host_len >= hostname_size) {
        snprintf(error, error_size, "cannot use the storage URL %.300s (host part)", url);
        return -EINVAL;
    }
    memcpy(hostname, host_start, host_len);
    hostname[host_len] = '\0';
    snprintf(port, port_size, "%s", colon && colon[1] ? colon + 1 : "80");
    const char *p = path ? path : "";
    size_t path_len = strlen(p);
    while (path_len > 0 && p[path_len - 1] == '/')
        path_len--;
    if (path_len >= sizeof wire->base_path || memchr(p, '?', path_len) ||
        memchr(p, '#', path_len)) {
        snprintf(error, error_size, "cannot use the storage URL %.300s (path part)", url);
        return -EINVAL;
    }
    memcpy(wire->base_path, p, path_len);
    wire->base_path[path_len] = '\0';
    return 0;
}

int cm_http_wire_init(struct cm_http_target *bench, char *error, size_t error_size)
{
    struct cm_http_wire *wire = calloc(1, sizeof *wire);
    if (!wire) {
        snprintf(error, error_size, "out of memory for an HTTP run");
        return -ENOMEM;
    }
    bench->wire = wire;
    wire->bench = bench;
    wire->epoll_fd = wire->cancel_fd = -1;
    wire->token_generation = bench->headers_generation - 1; /* built at the first submit */
    const struct cm_http_client *client = bench->client;
    char port[16], hostname[300];
    int rc = parse_storage_url(wire, client->storage_url, port, sizeof port, hostname,
                               sizeof hostname, error, error_size);
    if (rc < 0)
        return rc;
    if (client->api == CM_HTTP_S3) {
        wire->s3 = true;
        rc = cm_sigv4_init(&wire->signer, client->user, client->key, client->region, "s3", error,
                           error_size);
        if (rc < 0)
            return rc;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    int gai = getaddrinfo(hostname, port, &hints, &found);
    if (gai != 0 || !found) {
        snprintf(error, error_size, "%s: cannot resolve %s: %s", wire->origin, hostname,
                 gai_strerror(gai));
        return -EHOSTUNREACH;
    }
    memcpy(&wire->address, found->ai_addr, found->ai_addrlen);
    wire->address_len = found->ai_addrlen;
    freeaddrinfo(found);
    wire->connect_timeout_ns = (uint64_t)client->connect_timeout_ms * 1000000ULL;
    wire->idle_timeout_ns = (uint64_t)client->low_speed_seconds * 1000000000ULL;
    wire->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wire->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
    if (wire->epoll_fd < 0 || wire->cancel_fd < 0 ||
        epoll_ctl(wire->epoll_fd, EPOLL_CTL_ADD, wire->cancel_fd, &event) < 0) {
        snprintf(error, error_size, "cannot set up the HTTP event loop: %s", strerror(errno));
        return -EIO;
    }
    wire->next_scan_ns = UINT64_MAX;
    return 0;
}

static void drop_connection(struct wire_slot *slot);

void cm_http_wire_fini(struct cm_http_target *bench)
{
    struct cm_http_wire *wire = bench->wire;
    if (!wire)
        return;
    for (size_t i = 0; i < wire->n_request_slots; i++) {
        struct wire_slot *slot = wire->request_slots[i];
        if (!slot)
            continue;
        drop_connection(slot);
        free(slot->answer.body); /* the buffer as the parser last grew it */
        free(slot);
    }
    free(wire->request_slots);
    if (wire->epoll_fd >= 0)
        close(wire->epoll_fd);
    if (wire->cancel_fd >= 0)
        close(wire->cancel_fd);
    explicit_bzero(wire->token, sizeof wire->token);
    if (wire->s3)
        cm_sigv4_fini(&wire->signer);
    free(wire);
    bench->wire = NULL;
}

/* ---- connections -------------------------------------------------------------------------- */

static void set_phase(struct wire_slot *slot, enum phase phase)
{
    struct cm_http_wire *wire = slot->wire;
    if (slot->phase == IDLE && phase != IDLE)
        wire->busy++;
    else if (slot->phase != IDLE && phase == IDLE)
        wire->busy--;
    slot->phase = phase;
    if (phase != IDLE && wire->next_scan_ns == UINT64_MAX)
        wire->next_scan_ns = wire->now_ns + SCAN_NS;
}

static void drop_connection(struct wire_slot *slot)
{
    if (slot->fd >= 0)
        close(slot->fd); /* also leaves the epoll set */
    slot->fd = -1;
    slot->out_watched = false;
}

static void watch_out(struct wire_slot *slot, bool on)
{
    if (slot->out_watched == on)
        return;
    struct epoll_event event = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = slot};
    epoll_ctl(slot->wire->epoll_fd, EPOLL_CTL_MOD, slot->fd, &event);
    slot->out_watched = on;
}

/* The request's URL, for messages: origin + path. */
static const char *slot_url(const struct wire_slot *slot, char *out, size_t out_size)
{
    snprintf(out, out_size, "%s%.*s", slot->wire->origin, (int)slot->path_len,
             slot->request + slot->path_offset);
    return out;
}

static void finish(struct wire_slot *slot, int64_t result, bool keep_alive)
{
    if (!keep_alive)
        drop_connection(slot);
    set_phase(slot, IDLE);
    cm_engine_complete(slot->op, result);
}

static size_t request_total(const struct wire_slot *slot)
{
    return slot->request_len + (slot->put ? slot->length : 0);
}

static void send_request(struct wire_slot *slot);
static void start_connect(struct wire_slot *slot);
static void start_request(struct wire_slot *slot);

/* No answer: send once more on a fresh connection if a reused one had been closed under
 * us, else count the error and complete the op. */
static void fail(struct wire_slot *slot, int error_number, const char *what)
{
    struct cm_http_wire *wire = slot->wire;
    bool was_reused = slot->reused && !slot->answered && !slot->resent &&
                      error_number != ETIMEDOUT && slot->phase != CONNECTING;
    drop_connection(slot);
    if (was_reused) {
        slot->resent = true;
        start_connect(slot);
        return;
    }
    if (slot->phase == CONNECTING || (slot->phase == SENDING && !slot->reused))
        slot->backoff_ns = cm_http_backoff_next(slot->backoff_ns);
    char url[CM_HTTP_URL_MAX + 700], message[CM_HTTP_URL_MAX + 900];
    snprintf(message, sizeof message, "%s: %s (%s)", slot_url(slot, url, sizeof url), what,
             strerror(error_number));
    if (slot->callers)
        snprintf(slot->error, sizeof slot->error, "%s", message);
    else
        cm_http_target_record_transport_error(wire->bench, message, error_number);
    finish(slot, -error_number, false);
}

static void start_connect(struct wire_slot *slot)
{
    struct cm_http_wire *wire = slot->wire;
    slot->reused = false;
    slot->sent = 0;
    slot->fd = socket(wire->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (slot->fd < 0) {
        set_phase(slot, CONNECTING);
        fail(slot, errno, "cannot open a socket");
        return;
    }
    int one = 1;
    setsockopt(slot->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(slot->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    struct epoll_event event = {.events = EPOLLIN | EPOLLOUT, .data.ptr = slot};
    epoll_ctl(wire->epoll_fd, EPOLL_CTL_ADD, slot->fd, &event);
    slot->out_watched = true;
    set_phase(slot, CONNECTING);
    slot->deadline_ns = wire->now_ns + wire->connect_timeout_ns;
    if (connect(slot->fd, (const struct sockaddr *)&wire->address, wire->address_len) == 0) {
        slot->backoff_ns = 0;
        send_request(slot);
    } else if (errno != EINPROGRESS) {
        fail(slot, errno, "cannot connect");
    }
}

/* Sends what is left of the request; the answer is awaited once all of it went out. */
static void send_request(struct wire_slot *slot)
{
    struct cm_http_wire *wire = slot->wire;
    if (slot->phase != SENDING) {
        set_phase(slot, SENDING);
        slot->deadline_ns = wire->now_ns + wire->idle_timeout_ns;
    }
    bool body = slot->put;
    size_t total = request_total(slot);
    while (slot->sent < total) {
        struct iovec iov[2];
        int n = 0;
        if (slot->sent < slot->request_len)
            iov[n++] = (struct iovec){slot->request + slot->sent, slot->request_len - slot->sent};
        if (body && slot->length) {
            size_t body_sent = slot->sent > slot->request_len ? slot->sent - slot->request_len : 0;
            iov[n++] = (struct iovec){(void *)(slot->body + body_sent), slot->length - body_sent};
        }
        struct msghdr message = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t done = sendmsg(slot->fd, &message, MSG_NOSIGNAL);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                watch_out(slot, true);
                return;
            }
            fail(slot, errno, "cannot send the request");
            return;
        }
        slot->sent += (size_t)done;
        slot->deadline_ns = wire->now_ns + wire->idle_timeout_ns;
    }
    watch_out(slot, false);
    set_phase(slot, RECEIVING);
}

/* ---- the answer --------------------------------------------------------------------------- */

/* S3: the error's <Code> (SignatureDoesNotMatch, NoSuchKey, ...) after the first failure's
 * sentence, when the answer's body was kept (GET and PUT slots keep up to an object's size). */
static void add_s3_code(struct cm_http_target *bench, const struct cm_http_answer *answer)
{
    size_t kept = answer->received < answer->capacity ? answer->received : answer->capacity;
    if (!answer->body || kept == 0)
        return;
    const char *body = (const char *)answer->body;
    const char *open = memmem(body, kept, "<Code>", 6);
    if (!open)
        return;
    open += 6;
    const char *close = memmem(open, kept - (size_t)(open - body), "</Code>", 7);
    if (!close || close - open > 64)
        return;
    size_t used = strlen(bench->first_error);
    snprintf(bench->first_error + used, sizeof bench->first_error - used, " (%.*s)",
             (int)(close - open), open);
}

static void complete_answer(struct wire_slot *slot)
{
    struct cm_http_wire *wire = slot->wire;
    struct cm_http_target *bench = wire->bench;
    struct cm_op *op = slot->op;
    long status = slot->answer.status;
    /* an answer before the whole request went out leaves the connection unusable */
    bool keep_alive = slot->answer.keep_alive && slot->sent == request_total(slot);
    slot->backoff_ns = 0;
    if (slot->callers) {
        /* the caller judges the status; a body not kept whole (out of memory) is a failure */
        int64_t result = cm_http_status_errno(status);
        if (status >= 200 && status <= 299)
            result = slot->answer.received > slot->answer.capacity ? -ENOMEM
                     : op->kind == CM_OP_READ                      ? (int64_t)slot->answer.received
                                                                   : (int64_t)op->length;
        finish(slot, result, keep_alive);
        return;
    }
    if (status >= 200 && status <= 299) {
        cm_http_target_succeeded(bench);
        if (bench->options.op == CM_HTTP_PUT)
            bench->put_ok++;
        finish(slot, (int64_t)op->length, keep_alive);
        return;
    }
    char url[CM_HTTP_URL_MAX + 700];
    slot_url(slot, url, sizeof url);
    bool first = !bench->first_error[0];
    cm_http_target_record_status(bench, status, url);
    if (first && wire->s3)
        add_s3_code(bench, &slot->answer);
    if (status == 401)
        cm_http_target_unauthorized(bench, slot->generation, url);
    finish(slot, cm_http_status_errno(status), keep_alive);
}

/* The connection is readable (or hung up): one recv, where the parser wants the bytes. */
static void receive(struct wire_slot *slot)
{
    struct cm_http_wire *wire = slot->wire;
    char *into;
    size_t room;
    cm_http_answer_space(&slot->answer, &into, &room);
    ssize_t n = recv(slot->fd, into, room, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        fail(slot, errno,
             slot->answered ? "the connection failed during the answer"
                            : "the connection failed before an answer");
        return;
    }
    enum cm_http_answer_state state;
    if (n == 0) {
        if (!slot->answered) {
            fail(slot, ECONNRESET, "the server closed the connection without an answer");
            return;
        }
        state = cm_http_answer_closed(&slot->answer);
    } else {
        if (!slot->answered) {
            slot->answered = true;
            slot->first_byte_ns = cm_now_ns();
        }
        slot->deadline_ns = wire->now_ns + wire->idle_timeout_ns;
        state = cm_http_answer_took(&slot->answer, (size_t)n);
    }
    if (state == CM_HTTP_ANSWER_DONE)
        complete_answer(slot);
    else if (state == CM_HTTP_ANSWER_BAD)
        fail(slot, EPROTO, slot->answer.error);
}

static void on_event(struct wire_slot *slot, uint32_t events)
{
    switch (slot->phase) {
    case IDLE: {
        /* an idle keep-alive connection became readable: the server closed it (or sent
         * something unasked); either way it cannot carry the next request */
        drop_connection(slot);
        return;
    }
    case WAITING:
        return;
    case CONNECTING: {
        int error_number = 0;
        socklen_t len = sizeof error_number;
        if (getsockopt(slot->fd, SOL_SOCKET, SO_ERROR, &error_number, &len) < 0)
            error_number = errno;
        if (error_number) {
            fail(slot, error_number, "cannot connect");
            return;
        }
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return;
        slot->backoff_ns = 0;
        send_request(slot);
        return;
    }
    case SENDING:
        /* bytes of the answer before the whole request went out: a 100 Continue (the body
         * goes on), or an early final answer (complete_answer then closes the connection,
         * as the server did not read all of the request) */
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
            receive(slot);
            if (slot->phase != SENDING)
                return;
        }
        if (events & EPOLLOUT)
            send_request(slot);
        return;
    default:
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            receive(slot);
        return;
    }
}

/* Timeouts and connect backoff, every SCAN_NS while requests are in progress. */
static void scan(struct cm_http_wire *wire)
{
    uint64_t now = wire->now_ns;
    if (now < wire->next_scan_ns)
        return;
    for (struct wire_slot *slot = wire->slots; slot; slot = slot->next_slot) {
        if (slot->phase == WAITING) {
            if (now >= slot->retry_ns)
                start_connect(slot);
        } else if (slot->phase != IDLE && now >= slot->deadline_ns) {
            bool connecting = slot->phase == CONNECTING;
            char what[96];
            double seconds =
                (double)(connecting ? wire->connect_timeout_ns : wire->idle_timeout_ns) / 1e9;
            snprintf(what, sizeof what, "%s for %.1f s",
                     connecting ? "no connection" : "no progress", seconds);
            fail(slot, ETIMEDOUT, what);
        }
    }
    wire->next_scan_ns = wire->busy ? now + SCAN_NS : UINT64_MAX;
}

/* Handles what epoll_wait returned; false when the cancel event was among it. */
static bool dispatch(const struct epoll_event *events, int n)
{
    bool cancelled = false;
    for (int i = 0; i < n; i++) {
        struct wire_slot *slot = events[i].data.ptr;
        if (!slot)
            cancelled = true;
        else
            on_event(slot, events[i].events);
    }
    return !cancelled;
}

/* ---- the target --------------------------------------------------------------------------- */

static int slot_init(void *self, struct cm_op *op)
{
    struct cm_http_target *bench = self;
    struct cm_http_wire *wire = bench->wire;
    struct wire_slot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return -ENOMEM;
    slot->wire = wire;
    slot->op = op;
    slot->fd = -1;
    enum cm_http_target_op kind = bench->options.op;
    if (kind == CM_HTTP_PUT || kind == CM_HTTP_GET) {
        slot->capacity = bench->options.size_max ? (size_t)bench->options.size_max : 1;
        slot->buffer = malloc(slot->capacity);
        if (!slot->buffer) {
            free(slot);
            return -ENOMEM;
        }
    }
    slot->next_slot = wire->slots;
    wire->slots = slot;
    wire->blocking = cm_engine_blocking(op);
    op->target_slot = slot;
    return 0;
}

static void slot_fini(void *self, struct cm_op *op)
{
    struct cm_http_target *bench = self;
    struct wire_slot *slot = op->target_slot;
    if (!slot)
        return;
    for (struct wire_slot **link = &bench->wire->slots; *link; link = &(*link)->next_slot) {
        if (*link == slot) {
            *link = slot->next_slot;
            break;
        }
    }
    drop_connection(slot);
    free(slot->buffer);
    free(slot);
    op->target_slot = NULL;
}

/* The token line, rebuilt after a re-authentication. */
static void refresh_token(struct cm_http_wire *wire)
{
    const struct cm_http_target *bench = wire->bench;
    if (wire->token_generation == bench->headers_generation)
        return;
    if (wire->s3) /* S3 has no token: each request is signed */
        wire->token[0] = '\0';
    else
        snprintf(wire->token, sizeof wire->token, "%s\r\n", bench->client->auth_header);
    wire->token_generation = bench->headers_generation;
}

/* Appends `length` bytes at `*used` in `out` (of `size`), keeping a NUL after them; false
 * when they do not fit. The request is built with these rather than printf: it is rebuilt
 * for every request. */
static bool append(char *out, size_t size, size_t *used, const char *piece, size_t length)
{
    if (length >= size - *used)
        return false;
    memcpy(out + *used, piece, length);
    *used += length;
    out[*used] = '\0';
    return true;
}

#define APPEND(out, size, used, text) append((out), (size), (used), (text), strlen(text))

/* The request line and headers: the Swift token, or S3's SigV4 headers (signed here, with
 * the signing key cached per day: one SHA-256 and one HMAC per request). S3 bodies are not
 * hashed (UNSIGNED-PAYLOAD, as with libcurl; docs/rgw.md says why). */
static int build_request(struct wire_slot *slot, const char *method, const char *container)
{
    struct cm_http_wire *wire = slot->wire;
    char path[sizeof wire->base_path + 1200];
    size_t path_len = 0;
    if (!APPEND(path, sizeof path, &path_len, wire->base_path) ||
        !append(path, sizeof path, &path_len, "/", 1) ||
        !APPEND(path, sizeof path, &path_len, container) ||
        !append(path, sizeof path, &path_len, "/", 1) ||
        !APPEND(path, sizeof path, &path_len, slot->name))
        return -ENAMETOOLONG;
    char *out = slot->request;
    size_t size = sizeof slot->request, used = 0;
    if (!APPEND(out, size, &used, method) || !append(out, size, &used, " ", 1))
        return -ENAMETOOLONG;
    slot->path_offset = used;
    slot->path_len = path_len;
    if (!append(out, size, &used, path, path_len) ||
        !APPEND(out, size, &used, " HTTP/1.1\r\nHost: ") || !APPEND(out, size, &used, wire->host) ||
        !append(out, size, &used, "\r\n", 2) || !APPEND(out, size, &used, wire->token))
        return -ENAMETOOLONG;
    if (wire->s3) {
        int signed_len = cm_sigv4_headers(&wire->signer, time(NULL), method, path, "", wire->host,
                                          CM_SIGV4_UNSIGNED_PAYLOAD, out + used, size - used);
        if (signed_len < 0)
            return signed_len;
        used += (size_t)signed_len;
    }
    if (slot->put) {
        char digits[24];
        size_t at = sizeof digits;
        size_t value = slot->length;
        do {
            digits[--at] = (char)('0' + value % 10);
            value /= 10;
        } while (value);
        if (!APPEND(out, size, &used, "Content-Length: ") ||
            !append(out, size, &used, digits + at, sizeof digits - at) ||
            !append(out, size, &used, "\r\n", 2))
            return -ENAMETOOLONG;
    }
    if (!APPEND(out, size, &used, "User-Agent: cephmark/" CEPHMARK_VERSION "\r\n\r\n"))
        return -ENAMETOOLONG;
    slot->request_len = used;
    return 0;
}

static int submit(void *self, struct cm_op *op)
{
    struct cm_http_target *bench = self;
    struct cm_http_wire *wire = bench->wire;
    struct wire_slot *slot = op->target_slot;
    const struct cm_http_target_options *o = &bench->options;
    uint64_t object;
    if (cm_http_target_next_op(bench, op, &object, &slot->length, slot->name, sizeof slot->name) ==
        CM_TARGET_DONE)
        return CM_TARGET_DONE;
    wire->now_ns = op->start_ns;
    refresh_token(wire);
    slot->generation = bench->headers_generation;
    slot->put = o->op == CM_HTTP_PUT;
    slot->body = slot->buffer;
    int rc = build_request(slot, cm_http_target_op_name(o->op),
                           bench->containers[object % o->n_containers]);
    if (rc < 0)
        return rc;
    if (o->op == CM_HTTP_PUT)
        cm_payload_fill(bench->payload, slot->buffer, slot->length, slot->name, 0, op->sequence,
                        o->run_id);
    cm_http_answer_start(&slot->answer, o->op == CM_HTTP_HEAD, slot->buffer, slot->capacity);
    start_request(slot);
    return 0;
}

/* Sends a built request: on the slot's connection, after its backoff, or on a new one. */
static void start_request(struct wire_slot *slot)
{
    struct cm_http_wire *wire = slot->wire;
    slot->answered = slot->resent = false;
    slot->sent = 0;
    if (slot->fd >= 0) {
        slot->reused = true;
        send_request(slot);
    } else if (slot->backoff_ns) {
        set_phase(slot, WAITING);
        slot->retry_ns = wire->now_ns + slot->backoff_ns;
        if (wire->next_scan_ns > slot->retry_ns)
            wire->next_scan_ns = slot->retry_ns;
    } else {
        start_connect(slot);
    }
}

/* ---- requests chosen by the caller (scripted workers) -------------------------------------- */

static struct wire_slot *request_slot(struct cm_http_wire *wire, uint32_t index)
{
    void **entry = cm_request_slot_entry(&wire->request_slots, &wire->n_request_slots, index);
    if (!entry)
        return NULL;
    struct wire_slot *slot = *entry;
    if (!slot) {
        slot = calloc(1, sizeof *slot);
        if (!slot)
            return NULL;
        slot->wire = wire;
        slot->fd = -1;
        slot->callers = true;
        slot->next_slot = wire->slots;
        wire->slots = slot;
        *entry = slot;
    }
    return slot;
}

static int submit_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_http_target *bench = self;
    struct cm_http_wire *wire = bench->wire;
    static const char *const methods[] = {
        [CM_REQUEST_READ] = "GET",  [CM_REQUEST_WRITE] = "PUT",     [CM_REQUEST_WRITE_FULL] = "PUT",
        [CM_REQUEST_STAT] = "HEAD", [CM_REQUEST_REMOVE] = "DELETE",
    };
    const char *method =
        request->verb < sizeof methods / sizeof methods[0] ? methods[request->verb] : NULL;
    if (!method || !request->container || !request->name)
        return -EOPNOTSUPP;
    struct wire_slot *slot = request_slot(wire, op->slot);
    if (!slot)
        return -ENOMEM;
    char container[600];
    if (cm_http_escape(request->container, false, container, sizeof container) < 0 ||
        cm_http_escape(request->name, true, slot->name, sizeof slot->name) < 0) {
        snprintf(slot->error, sizeof slot->error, "the URL for '%.100s/%.100s' is too long",
                 request->container, request->name);
        snprintf(request->message, sizeof request->message, "%.511s", slot->error);
        return -ENAMETOOLONG;
    }
    slot->op = op;
    slot->error[0] = '\0';
    wire->now_ns = cm_now_ns();
    refresh_token(wire);
    slot->generation = bench->headers_generation;
    slot->put = strcmp(method, "PUT") == 0;
    slot->body = request->data;
    slot->length = slot->put ? request->data_length : 0;
    int rc = build_request(slot, method, container);
    if (rc < 0) {
        if (rc == -ENAMETOOLONG)
            snprintf(request->message, sizeof request->message,
                     "the URL for '%.100s/%.100s' is too long", request->container, request->name);
        else
            snprintf(request->message, sizeof request->message,
                     "cannot sign the request for '%.100s/%.100s'", request->container,
                     request->name);
        return rc;
    }
    op->kind = slot->put                            ? CM_OP_WRITE
               : request->verb == CM_REQUEST_READ   ? CM_OP_READ
               : request->verb == CM_REQUEST_REMOVE ? CM_OP_REMOVE
                                                    : CM_OP_OTHER;
    op->length = slot->length; /* a GET's length is known at the end */
    /* the body grows into the slot's buffer, kept from one request to the next */
    cm_http_answer_start(&slot->answer, request->verb == CM_REQUEST_STAT, slot->buffer,
                         slot->capacity);
    slot->answer.grow = true;
    start_request(slot);
    return 0;
}

static void complete_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_http_target *bench = self;
    struct wire_slot *slot = bench->wire->request_slots[op->slot];
    struct cm_http_answer *answer = &slot->answer;
    /* the buffer the parser grew stays the slot's */
    slot->buffer = answer->body;
    slot->capacity = answer->capacity;
    struct cm_http_response *response = &slot->response;
    response->status = answer->status;
    response->body = (char *)answer->body;
    response->body_len = answer->received < answer->capacity ? answer->received : answer->capacity;
    response->body_cap = 0; /* not the response's to free */
    response->has_content_length = answer->has_content_length;
    response->content_length =
        answer->has_content_length ? answer->content_length : response->body_len;
    snprintf(response->etag, sizeof response->etag, "%s", answer->etag);
    snprintf(response->content_type, sizeof response->content_type, "%s", answer->content_type);
    cm_http_request_outcome(op, request, response, slot->error);
}

const struct cm_http_response *cm_http_wire_response(const struct cm_http_target *bench,
                                                     const struct cm_op *op)
{
    struct wire_slot *slot = bench->wire->request_slots[op->slot];
    return &slot->response;
}

static void poll_target(void *self, uint64_t now_ns)
{
    struct cm_http_target *bench = self;
    struct cm_http_wire *wire = bench->wire;
    struct epoll_event events[64];
    int n = epoll_wait(wire->epoll_fd, events, 64, 0);
    wire->now_ns = n > 0 ? cm_now_ns() : now_ns;
    dispatch(events, n);
    scan(wire);
}

/* Closed loop: waits in the epoll set itself, until an answer, a timeout scan, or the
 * watchdog's cancel. */
static void block(void *self)
{
    struct cm_http_target *bench = self;
    struct cm_http_wire *wire = bench->wire;
    if (wire->cancelled)
        return;
    uint64_t now = cm_now_ns();
    int timeout_ms = 100;
    if (wire->next_scan_ns != UINT64_MAX)
        timeout_ms =
            wire->next_scan_ns <= now ? 0 : (int)((wire->next_scan_ns - now) / 1000000 + 1);
    if (timeout_ms > 100)
        timeout_ms = 100;
    struct epoll_event events[64];
    int n = epoll_wait(wire->epoll_fd, events, 64, timeout_ms);
    wire->now_ns = cm_now_ns();
    if (!dispatch(events, n > 0 ? n : 0))
        wire->cancelled = true;
    scan(wire);
}

static void cancel_block(void *self)
{
    struct cm_http_target *bench = self;
    uint64_t one = 1;
    ssize_t unused = write(bench->wire->cancel_fd, &one, sizeof one);
    (void)unused;
}

static uint64_t next_deadline(void *self)
{
    struct cm_http_target *bench = self;
    /* a blocking run checks timeouts inside block; a deadline here would keep it from
     * blocking at all */
    return bench->wire->blocking ? UINT64_MAX : bench->wire->next_scan_ns;
}

static int wait_fd(void *self)
{
    struct cm_http_target *bench = self;
    return bench->wire->epoll_fd;
}

static void complete(void *self, struct cm_op *op)
{
    struct wire_slot *slot = op->target_slot;
    cm_http_target_verify(self, op, slot->buffer, slot->answer.received, slot->length, slot->name);
    cm_http_target_first_byte(self, op, slot->first_byte_ns);
}

const struct cm_target_ops cm_http_wire_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "http-native",
    .slot_init = slot_init,
    .slot_fini = slot_fini,
    .submit = submit,
    .complete = complete,
    .next_deadline = next_deadline,
    .poll = poll_target,
    .wait_fd = wait_fd,
    .block = block,
    .cancel_block = cancel_block,
    .submit_request = submit_request,
    .complete_request = complete_request,
};
