/* The HTTP target of the op engine over libcurl's multi interface; see http_target.h. */
#include "http_target.h"
#include "rados_target.h"
#include "splitmix.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct http_slot {
    CURL *easy;
    struct cm_op *op;
    struct cm_http_target *bench;
    unsigned char *buffer; /* PUT body / GET landing area, `capacity` bytes */
    size_t capacity;
    size_t length;   /* the object's size: bytes to send, or expected back */
    size_t received; /* GET: bytes that arrived (only `capacity` are kept) */
    size_t sent;     /* PUT: bytes handed to curl */
    /* GET: when the status line arrived (0 until then); libcurl's own timers of the request */
    uint64_t first_byte_ns;
    uint64_t curl_ttfb_us, curl_total_us;
    unsigned headers_generation;
    bool in_multi;
    uint64_t backoff_ns; /* wait before the next request after a refused connect */
    uint64_t retry_ns;   /* when a waiting slot adds its handle */
    struct http_slot *next_waiting;
    struct cm_http_list_walk walk; /* LIST */
    char name[CM_HTTP_BENCH_PREFIX_MAX + 24];
    char url[CM_HTTP_URL_MAX + 800 + 4600]; /* LIST: with the page's query */
};

uint64_t cm_http_backoff_next(uint64_t current_ns)
{
    const uint64_t first = 100000000ULL, most = 1600000000ULL;
    uint64_t next = current_ns ? current_ns * 2 : first;
    return next > most ? most : next;
}

const char *cm_http_target_op_name(enum cm_http_target_op op)
{
    static const char *const names[] = {"PUT", "GET", "HEAD", "DELETE", "GET", "request"};
    return (unsigned)op < 6 ? names[op] : "?";
}

uint64_t cm_http_object_size(uint64_t run_id, uint64_t object, uint64_t size_min, uint64_t size_max)
{
    if (size_max <= size_min)
        return size_min;
    uint64_t state = run_id ^ (object * 0x9E3779B97F4A7C15ULL);
    return size_min + cm_splitmix64(&state) % (size_max - size_min + 1);
}

/* ---- curl callbacks ---------------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t count, void *arg)
{
    struct http_slot *slot = arg;
    size_t length = size * count;
    if (slot->received < slot->capacity) {
        size_t room = slot->capacity - slot->received;
        memcpy(slot->buffer + slot->received, data, length < room ? length : room);
    }
    slot->received += length;
    return length;
}

/* The first header line of an answer is its first byte: stamped on the engine's clock, from
 * the same start as the op's latency. libcurl's own STARTTRANSFER_TIME counts from when it
 * picked the request up, after the op's start (by the loop's next turn, or by the connect
 * backoff). */
/* NOLINTNEXTLINE(readability-non-const-parameter): libcurl's header callback type */
static size_t on_header(char *data, size_t size, size_t count, void *arg)
{
    (void)data;
    struct http_slot *slot = arg;
    if (!slot->first_byte_ns)
        slot->first_byte_ns = cm_now_ns();
    return size * count;
}

static size_t on_read(char *buffer, size_t size, size_t count, void *arg)
{
    struct http_slot *slot = arg;
    size_t want = size * count, left = slot->length - slot->sent;
    if (want > left)
        want = left;
    memcpy(buffer, slot->buffer + slot->sent, want);
    slot->sent += want;
    return want;
}

/* curl asks to watch (or stop watching) a socket: mirror it in the epoll set. */
// cppcheck-suppress constParameter ; libcurl's CURLMOPT_SOCKETFUNCTION type
static int on_socket(CURL *easy, curl_socket_t socket, int what, void *arg, void *socket_arg)
{
    (void)easy;
    struct cm_http_target *bench = arg;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(bench->epoll_fd, EPOLL_CTL_DEL, socket, NULL);
        return 0;
    }
    struct epoll_event event = {.data.fd = socket};
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
        event.events |= EPOLLIN;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
        event.events |= EPOLLOUT;
    /* curl keeps a pointer per socket for us until it removes the socket: non-NULL once
     * the socket is in the epoll set, so each change is one epoll_ctl */
    if (socket_arg) {
        epoll_ctl(bench->epoll_fd, EPOLL_CTL_MOD, socket, &event);
    } else {
        if (epoll_ctl(bench->epoll_fd, EPOLL_CTL_ADD, socket, &event) < 0 && errno == EEXIST)
            epoll_ctl(bench->epoll_fd, EPOLL_CTL_MOD, socket, &event);
        curl_multi_assign(bench->multi, socket, bench);
    }
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *arg)
{
    (void)multi;
    struct cm_http_target *bench = arg;
    bench->timer_deadline_ns =
        timeout_ms < 0 ? UINT64_MAX : cm_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
    return 0;
}

/* ---- headers ------------------------------------------------------------------------------ */

/* This run's copy of the client's headers (the client replaces its own list when it
 * re-authenticates, while handles of this run may still be using the old one), plus, for
 * Swift uploads, an empty Expect: curl would otherwise wait for "100 Continue" before bodies
 * over 1 MiB. Not for S3: libcurl 7.88 signs the empty header, which it then does not send,
 * and rgw refuses the signature; rgw answers 100 Continue at once anyway. */
static struct curl_slist *copy_headers(const struct cm_http_client *client, bool upload)
{
    struct curl_slist *list = NULL;
    for (struct curl_slist *h = client->headers; h; h = h->next) {
        struct curl_slist *grown = curl_slist_append(list, h->data);
        if (!grown)
            goto oom;
        list = grown;
    }
    if (upload && client->api == CM_HTTP_SWIFT) {
        struct curl_slist *grown = curl_slist_append(list, "Expect:");
        if (!grown)
            goto oom;
        list = grown;
    }
    return list;
oom:
    curl_slist_free_all(list);
    return NULL;
}

/* A 401 during the run: the token expired or was revoked. Authenticate once; a second
 * refusal (or a 401 with the new token) stops the run instead of hammering the gateway. */
void cm_http_target_unauthorized(struct cm_http_target *bench, unsigned generation, const char *url)
{
    struct cm_http_client *client = bench->client;
    if (bench->auth_failed || client->api != CM_HTTP_SWIFT)
        goto failed;
    if (generation != bench->headers_generation)
        return; /* sent with the old token, before the re-authentication */
    if (bench->reauths > 0 ||
        bench->n_old_headers == sizeof bench->old_headers / sizeof bench->old_headers[0])
        goto failed;
    bench->reauths++;
    char error[512];
    if (cm_http_authenticate(client, error, sizeof error) < 0) {
        snprintf(bench->auth_error, sizeof bench->auth_error, "%s", error);
        bench->auth_failed = true;
        return;
    }
    struct curl_slist *fresh = copy_headers(client, bench->options.op == CM_HTTP_PUT);
    if (!fresh) {
        snprintf(bench->auth_error, sizeof bench->auth_error, "out of memory for headers");
        bench->auth_failed = true;
        return;
    }
    bench->old_headers[bench->n_old_headers++] = bench->headers;
    bench->headers = fresh;
    bench->headers_generation++;
    return;
failed:
    if (!bench->auth_failed)
        snprintf(bench->auth_error, sizeof bench->auth_error,
                 "%s %.400s: 401 Unauthorized%s; the run stopped",
                 cm_http_target_op_name(bench->options.op), url,
                 bench->reauths ? " after re-authenticating" : "");
    bench->auth_failed = true;
}

/* "http://host:port" of the storage URL, for the give-up line. */
static void gateway_of(const struct cm_http_target *bench, char *out, size_t size)
{
    const char *url = bench->client->storage_url;
    const char *host = strstr(url, "://");
    const char *path = host ? strchr(host + 3, '/') : NULL;
    int length = path ? (int)(path - url) : (int)strlen(url);
    snprintf(out, size, "%.*s", length, url);
}

/* A failed request: the give-up clock starts with the first failure after a success, and
 * once it has run for give_up_ns without a success the run stops. Checked at each failure:
 * a gateway that refuses fails every request within the connect backoff (1.6 s at most),
 * one that hangs within the client's timeout. */
static void note_failure(struct cm_http_target *bench)
{
    uint64_t now = cm_now_ns();
    if (bench->failures_since++ == 0)
        bench->failing_since_ns = now;
    if (bench->gave_up || !bench->options.give_up_ns ||
        now - bench->failing_since_ns < bench->options.give_up_ns)
        return;
    bench->gave_up = true;
    char gateway[CM_HTTP_URL_MAX];
    gateway_of(bench, gateway, sizeof gateway);
    snprintf(bench->give_up_error, sizeof bench->give_up_error,
             "gateway %.150s answered no request for %.0f s: giving up (%" PRIu64 " failures: %s)",
             gateway, (double)bench->options.give_up_ns / 1e9, bench->failures_since,
             bench->last_failure);
}

void cm_http_target_succeeded(struct cm_http_target *bench)
{
    bench->failures_since = 0;
    bench->failing_since_ns = 0;
}

void cm_http_target_record_status(struct cm_http_target *bench, long status, const char *url)
{
    snprintf(bench->last_failure, sizeof bench->last_failure, "%ld %s", status,
             cm_http_reason(status));
    note_failure(bench);
    if (!bench->first_error[0])
        snprintf(bench->first_error, sizeof bench->first_error, "%s %.500s: %ld %s",
                 cm_http_target_op_name(bench->options.op), url, status, cm_http_reason(status));
    for (unsigned i = 0; i < bench->n_statuses; i++) {
        if (bench->statuses[i].status == status) {
            bench->statuses[i].count++;
            return;
        }
    }
    if (bench->n_statuses < CM_HTTP_STATUS_KINDS) {
        bench->statuses[bench->n_statuses++] = (struct cm_http_status_count){status, 1};
        return;
    }
    bench->statuses[CM_HTTP_STATUS_KINDS - 1].count++; /* more kinds than kept: lumped */
}

void cm_http_target_record_transport_error(struct cm_http_target *bench, const char *error,
                                           int error_number)
{
    snprintf(bench->last_failure, sizeof bench->last_failure, "%s", strerror(error_number));
    if (bench->last_failure[0] >= 'A' && bench->last_failure[0] <= 'Z')
        bench->last_failure[0] = (char)(bench->last_failure[0] - 'A' + 'a');
    note_failure(bench);
    if (bench->transport_errors++ == 0)
        snprintf(bench->first_transport_error, sizeof bench->first_transport_error, "%s", error);
    if (!bench->first_error[0])
        snprintf(bench->first_error, sizeof bench->first_error, "%s %s",
                 cm_http_target_op_name(bench->options.op), error);
}

/* A verify failure of `op`, its sentence kept among the first few. */
static void verify_failed(struct cm_http_target *bench, struct cm_op *op, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void verify_failed(struct cm_http_target *bench, struct cm_op *op, const char *format, ...)
{
    op->verify_failed = true;
    if (bench->n_verify_errors >= CM_HTTP_VERIFY_ERRORS_KEPT)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(bench->verify_errors[bench->n_verify_errors++], sizeof bench->verify_errors[0],
              format, args);
    va_end(args);
}

void cm_http_target_verify(struct cm_http_target *bench, struct cm_op *op,
                           const unsigned char *body, size_t received, size_t length,
                           const char *name)
{
    if (op->kind != CM_OP_READ || op->result < 0 || !bench->options.verify)
        return;
    if (received != length) {
        verify_failed(bench, op, "object %s: %zu bytes came back, %zu were written", name, received,
                      length);
        return;
    }
    cm_payload_error error;
    if (cm_payload_verify(bench->payload, body, received, name, 0, bench->options.run_id, 0,
                          &error) != CM_PAYLOAD_OK)
        verify_failed(bench, op, "%s", error.message);
}

/* ---- listing ------------------------------------------------------------------------------ */

size_t cm_http_slot_capacity(const struct cm_http_target_options *options)
{
    size_t object = options->size_max ? (size_t)options->size_max : 1;
    size_t list = cm_http_list_capacity(options->page_size);
    if (options->op == CM_HTTP_LIST)
        return list;
    if (options->op == CM_HTTP_MIXED && options->mix.weight[CM_OP_LIST] && list > object)
        return list;
    return object;
}

size_t cm_http_list_capacity(uint64_t page_size)
{
    /* an S3 <Contents> entry of a short name is about 400 bytes (key, date, etag, size,
     * storage class, owner); Swift's plain-text listing is a name per line */
    return (size_t)page_size * 1024 + 65536;
}

int cm_http_list_query(const struct cm_http_target *bench, const struct cm_http_list_walk *walk,
                       char *out, size_t size)
{
    char marker[3400];
    if (cm_http_escape(walk->marker, false, marker, sizeof marker) < 0)
        return -ENAMETOOLONG;
    bool more = walk->marker[0] != '\0';
    int n;
    if (bench->client->api == CM_HTTP_S3)
        n = snprintf(out, size, "%s%s%slist-type=2&max-keys=%" PRIu64 "&prefix=%s_",
                     more ? "continuation-token=" : "", marker, more ? "&" : "",
                     bench->options.page_size, bench->prefix);
    else
        n = snprintf(out, size, "limit=%" PRIu64 "%s%s&prefix=%s_", bench->options.page_size,
                     more ? "&marker=" : "", marker, bench->prefix);
    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int cm_http_list_next(struct cm_http_target *bench, struct cm_op *op,
                      struct cm_http_list_walk *walk)
{
    (void)walk;
    if (cm_http_target_stopped(bench))
        return CM_TARGET_DONE;
    op->kind = CM_OP_LIST;
    op->length = 0;
    return 0;
}

/* How many of the objects first .. first + count - 1 live in container `container` of n. */
static uint64_t objects_in(uint64_t first, uint64_t count, unsigned container, unsigned n)
{
    uint64_t end = first + count;
    uint64_t below_end = end > container ? (end - container - 1) / n + 1 : 0;
    uint64_t below_first = first > container ? (first - container - 1) / n + 1 : 0;
    return below_end - below_first;
}

/* One listed name: <prefix>_<N> of an object this container holds, after the last one. */
static void list_name(struct cm_http_target *bench, struct cm_op *op,
                      struct cm_http_list_walk *walk, const char *name, size_t length)
{
    const struct cm_http_target_options *o = &bench->options;
    size_t prefix_length = strlen(bench->prefix);
    char text[sizeof walk->last];
    snprintf(text, sizeof text, "%.*s", (int)length, name);
    bench->names_listed++;
    walk->seen++;
    char *end = NULL;
    bool ours = length > prefix_length + 1 && length < sizeof text &&
                strncmp(name, bench->prefix, prefix_length) == 0 && name[prefix_length] == '_';
    unsigned long long number = ours ? strtoull(text + prefix_length + 1, &end, 10) : 0;
    if (!ours || !end || *end || number < o->first_object ||
        number - o->first_object >= o->objects || number % o->n_containers != walk->container)
        verify_failed(bench, op, "listing of %s: '%s' is not an object written there",
                      o->containers[walk->container], text);
    else if (walk->last[0] && strcmp(text, walk->last) <= 0)
        verify_failed(bench, op, "listing of %s: '%s' came after '%s'",
                      o->containers[walk->container], text, walk->last);
    snprintf(walk->last, sizeof walk->last, "%s", text);
}

/* The names of a page, S3's <Key> elements or Swift's lines; true when it was the walk's
 * last page (S3: IsTruncated is not true; Swift: fewer names than asked for). */
static bool list_names(struct cm_http_target *bench, struct cm_op *op,
                       struct cm_http_list_walk *walk, const char *body, size_t kept)
{
    const char *at = body, *end = body + kept;
    if (bench->client->api == CM_HTTP_SWIFT) {
        uint64_t on_page = 0;
        while (at < end) {
            const char *newline = memchr(at, '\n', (size_t)(end - at));
            const char *stop = newline ? newline : end;
            if (stop > at) {
                list_name(bench, op, walk, at, (size_t)(stop - at));
                on_page++;
                snprintf(walk->marker, sizeof walk->marker, "%s", walk->last);
            }
            at = stop + 1;
        }
        return on_page < bench->options.page_size;
    }
    const char *key;
    while ((key = memmem(at, (size_t)(end - at), "<Key>", 5))) {
        key += 5;
        const char *close = memmem(key, (size_t)(end - key), "</Key>", 6);
        if (!close)
            break;
        list_name(bench, op, walk, key, (size_t)(close - key));
        at = close + 6;
    }
    const char *token = memmem(body, kept, "<NextContinuationToken>", 23);
    const char *token_end = token ? memmem(token, (size_t)(end - token), "</", 2) : NULL;
    bool truncated = memmem(body, kept, "<IsTruncated>true</IsTruncated>", 31) != NULL;
    if (!truncated || !token_end)
        return true;
    token += 23;
    snprintf(walk->marker, sizeof walk->marker, "%.*s", (int)(token_end - token), token);
    return false;
}

void cm_http_list_page(struct cm_http_target *bench, struct cm_op *op,
                       struct cm_http_list_walk *walk, const char *body, size_t received,
                       size_t kept)
{
    const struct cm_http_target_options *o = &bench->options;
    bool last = true;
    if (op->result >= 0 && received > kept)
        verify_failed(bench, op, "listing of %s: a page of %zu bytes is more than the %zu kept",
                      o->containers[walk->container], received, kept);
    else if (op->result >= 0)
        last = list_names(bench, op, walk, body, kept);
    /* a mixed phase's puts and deletes change the set while it is listed: names are checked,
     * counts are not */
    if (op->result >= 0 && !op->verify_failed && last && o->op == CM_HTTP_MIXED) {
        bench->listings++;
    } else if (op->result >= 0 && !op->verify_failed && last) {
        uint64_t expected =
            objects_in(o->first_object, o->objects, walk->container, o->n_containers);
        if (walk->seen != expected)
            verify_failed(bench, op, "listing of %s: %" PRIu64 " names, %" PRIu64 " were written",
                          o->containers[walk->container], walk->seen, expected);
        else
            bench->listings++;
    }
    if (last || op->result < 0 || op->verify_failed) { /* the next walk, or this one again */
        if (last && op->result >= 0)
            walk->container = (walk->container + 1) % o->n_containers;
        walk->seen = 0;
        walk->marker[0] = walk->last[0] = '\0';
    }
}

bool cm_http_target_first_byte(struct cm_http_target *bench, const struct cm_op *op,
                               uint64_t first_byte_ns)
{
    if (op->kind != CM_OP_READ || op->result < 0 || !first_byte_ns || !cm_engine_counted(op))
        return false;
    cm_hist_record(bench->ttfb, first_byte_ns - op->start_ns);
    return true;
}

/* ---- mixed operations ----------------------------------------------------------------------- */

enum { OBJECT_LIVE = 1, OBJECT_DELETING = 2, OBJECT_PUTTING = 4, OBJECT_READER = 8 };

enum cm_http_target_op cm_http_mixed_pick(struct cm_http_target *bench, struct cm_op *op)
{
    static const enum cm_http_target_op requests[CM_OP_KINDS] = {
        [CM_OP_READ] = CM_HTTP_GET,  [CM_OP_WRITE] = CM_HTTP_PUT, [CM_OP_REMOVE] = CM_HTTP_DELETE,
        [CM_OP_STAT] = CM_HTTP_HEAD, [CM_OP_LIST] = CM_HTTP_LIST, [CM_OP_OTHER] = CM_HTTP_GET};
    op->kind = cm_mix_pick(&bench->options.mix, &bench->mix_rng);
    return requests[op->kind];
}

static bool object_free_for(uint16_t state, enum cm_http_target_op request)
{
    switch (request) {
    case CM_HTTP_DELETE:
        return state == OBJECT_LIVE; /* live, and no other op on it */
    case CM_HTTP_PUT:
        return !(state & (OBJECT_DELETING | OBJECT_PUTTING));
    case CM_HTTP_GET:
    case CM_HTTP_HEAD:
    default:
        return (state & OBJECT_LIVE) && !(state & OBJECT_DELETING) && state < 0xFFF0;
    }
}

/* A random object free for the request: a few draws, then a walk from a random place. */
static bool mixed_object(struct cm_http_target *bench, enum cm_http_target_op request,
                         uint64_t *index)
{
    uint64_t n = bench->options.objects;
    for (int i = 0; i < 16; i++) {
        *index = cm_splitmix64(&bench->rng) % n;
        if (object_free_for(bench->object_states[*index], request))
            return true;
    }
    uint64_t start = cm_splitmix64(&bench->rng) % n;
    for (uint64_t i = 0; i < n; i++) {
        *index = (start + i) % n;
        if (object_free_for(bench->object_states[*index], request))
            return true;
    }
    return false;
}

int cm_http_mixed_next(struct cm_http_target *bench, struct cm_op *op,
                       enum cm_http_target_op request, uint64_t *out, size_t *length, char *name,
                       size_t name_size)
{
    const struct cm_http_target_options *o = &bench->options;
    uint64_t index;
    if (cm_http_target_stopped(bench))
        return CM_TARGET_DONE;
    if (!mixed_object(bench, request, &index)) {
        /* nothing live is free: make an object (again) instead */
        if (request == CM_HTTP_PUT || !mixed_object(bench, CM_HTTP_PUT, &index))
            return CM_TARGET_DONE;
        request = CM_HTTP_PUT;
        op->kind = CM_OP_WRITE;
    }
    uint16_t *state = &bench->object_states[index];
    *state = (uint16_t)(*state + (request == CM_HTTP_DELETE ? OBJECT_DELETING
                                  : request == CM_HTTP_PUT  ? OBJECT_PUTTING
                                                            : OBJECT_READER));
    uint64_t object = o->first_object + index;
    *out = object;
    *length = (size_t)cm_http_object_size(o->run_id, object, o->size_min, o->size_max);
    op->length = request == CM_HTTP_PUT || request == CM_HTTP_GET ? *length : 0;
    snprintf(name, name_size, "%s_%" PRIu64, bench->prefix, object);
    return 0;
}

void cm_http_mixed_done(struct cm_http_target *bench, const struct cm_op *op, uint64_t object)
{
    uint16_t *state = &bench->object_states[object - bench->options.first_object];
    switch (op->kind) {
    case CM_OP_REMOVE:
        *state &= (uint16_t)~OBJECT_DELETING;
        if (op->result >= 0 || op->result == -ENOENT)
            *state &= (uint16_t)~OBJECT_LIVE;
        break;
    case CM_OP_WRITE:
        *state &= (uint16_t)~OBJECT_PUTTING;
        if (op->result >= 0)
            *state |= OBJECT_LIVE;
        break;
    default:
        *state = (uint16_t)(*state - OBJECT_READER);
        if (op->result == -ENOENT)
            bench->misses++;
        break;
    }
}

/* ---- the target --------------------------------------------------------------------------- */

static void slot_fini(void *self, struct cm_op *op);

static int slot_init(void *self, struct cm_op *op)
{
    struct cm_http_target *bench = self;
    struct http_slot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return -ENOMEM;
    slot->op = op;
    slot->bench = bench;
    op->target_slot = slot;
    enum cm_http_target_op kind = bench->options.op;
    slot->walk.container = (unsigned)(op->slot % bench->options.n_containers);
    if (kind != CM_HTTP_HEAD && kind != CM_HTTP_DELETE) {
        slot->capacity = cm_http_slot_capacity(&bench->options);
        slot->buffer = malloc(slot->capacity);
    }
    slot->easy = curl_easy_init();
    if (!slot->easy || (slot->capacity && !slot->buffer)) {
        /* the engine finishes only the slots whose init succeeded */
        slot_fini(self, op);
        return -ENOMEM;
    }
    CURL *easy = slot->easy;
    cm_http_easy_defaults(bench->client, easy);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, bench->headers);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot);
    switch (kind) {
    case CM_HTTP_PUT:
        curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(easy, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(easy, CURLOPT_READDATA, slot);
        break;
    case CM_HTTP_HEAD:
        curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
        break;
    case CM_HTTP_DELETE:
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    case CM_HTTP_GET:
    default:
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, slot);
        break;
    }
    slot->headers_generation = bench->headers_generation;
    return 0;
}

static void slot_fini(void *self, struct cm_op *op)
{
    struct cm_http_target *bench = self;
    struct http_slot *slot = op->target_slot;
    if (!slot)
        return;
    for (struct http_slot **link = &bench->waiting; *link; link = &(*link)->next_waiting) {
        if (*link == slot) {
            *link = slot->next_waiting;
            break;
        }
    }
    if (slot->easy) {
        if (slot->in_multi)
            curl_multi_remove_handle(bench->multi, slot->easy);
        curl_easy_cleanup(slot->easy);
    }
    free(slot->buffer);
    free(slot);
    op->target_slot = NULL;
}

bool cm_http_target_stopped(const struct cm_http_target *bench)
{
    return bench->auth_failed || bench->gave_up || bench->part_size_refused;
}

int cm_http_target_next_op(struct cm_http_target *bench, struct cm_op *op, uint64_t *out,
                           size_t *length, char *name, size_t name_size)
{
    const struct cm_http_target_options *o = &bench->options;
    if (cm_http_target_stopped(bench))
        return CM_TARGET_DONE;
    uint64_t object;
    switch (o->op) {
    case CM_HTTP_PUT:
        if (o->objects && op->sequence >= o->objects)
            return CM_TARGET_DONE;
        object = o->first_object + op->sequence;
        if (object + 1 > bench->highest_put)
            bench->highest_put = object + 1;
        op->kind = CM_OP_WRITE;
        break;
    case CM_HTTP_DELETE:
        if (op->sequence >= o->objects)
            return CM_TARGET_DONE;
        object = o->first_object + op->sequence;
        op->kind = CM_OP_REMOVE;
        break;
    case CM_HTTP_GET:
    case CM_HTTP_HEAD:
    default:
        if (o->random)
            object = cm_splitmix64(&bench->rng) % o->objects;
        else
            object = bench->next_object++ % o->objects;
        object += o->first_object;
        op->kind = o->op == CM_HTTP_GET    ? CM_OP_READ
                   : o->op == CM_HTTP_HEAD ? CM_OP_STAT
                                           : CM_OP_OTHER;
        break;
    }
    *out = object;
    *length = (size_t)cm_http_object_size(o->run_id, object, o->size_min, o->size_max);
    op->length = o->op == CM_HTTP_PUT || o->op == CM_HTTP_GET ? *length : 0;
    snprintf(name, name_size, "%s_%" PRIu64, bench->prefix, object);
    return 0;
}

static int submit(void *self, struct cm_op *op)
{
    struct cm_http_target *bench = self;
    struct http_slot *slot = op->target_slot;
    const struct cm_http_target_options *o = &bench->options;
    uint64_t object;
    if (o->op == CM_HTTP_LIST) {
        char query[4600];
        if (cm_http_list_next(bench, op, &slot->walk) == CM_TARGET_DONE)
            return CM_TARGET_DONE;
        if (cm_http_list_query(bench, &slot->walk, query, sizeof query) < 0)
            return -ENAMETOOLONG;
        snprintf(slot->url, sizeof slot->url, "%s/%s?%s", bench->client->storage_url,
                 bench->containers[slot->walk.container], query);
    } else if (cm_http_target_next_op(bench, op, &object, &slot->length, slot->name,
                                      sizeof slot->name) == CM_TARGET_DONE) {
        return CM_TARGET_DONE;
    } else {
        snprintf(slot->url, sizeof slot->url, "%s/%s/%s", bench->client->storage_url,
                 bench->containers[object % o->n_containers], slot->name);
    }
    CURL *easy = slot->easy;
    curl_easy_setopt(easy, CURLOPT_URL, slot->url);
    if (slot->headers_generation != bench->headers_generation) {
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, bench->headers);
        slot->headers_generation = bench->headers_generation;
    }
    if (o->op == CM_HTTP_PUT) {
        cm_payload_fill(bench->payload, slot->buffer, slot->length, slot->name, 0, op->sequence,
                        o->run_id);
        slot->sent = 0;
        curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)slot->length);
    }
    slot->received = 0;
    slot->first_byte_ns = 0;
    if (slot->backoff_ns) { /* the last connect was refused: wait before this request */
        slot->retry_ns = op->start_ns + slot->backoff_ns;
        slot->next_waiting = bench->waiting;
        bench->waiting = slot;
        return 0;
    }
    if (curl_multi_add_handle(bench->multi, easy) != CURLM_OK)
        return -EIO;
    slot->in_multi = true;
    return 0;
}

/* Waiting slots whose backoff has passed send their request. */
static void release_waiting(struct cm_http_target *bench, uint64_t now_ns)
{
    for (struct http_slot **link = &bench->waiting; *link;) {
        struct http_slot *slot = *link;
        if (slot->retry_ns > now_ns) {
            link = &slot->next_waiting;
            continue;
        }
        *link = slot->next_waiting;
        if (curl_multi_add_handle(bench->multi, slot->easy) != CURLM_OK) {
            cm_engine_complete(slot->op, -EIO);
            continue;
        }
        slot->in_multi = true;
    }
}

static void finished(struct cm_http_target *bench, CURL *easy, CURLcode code)
{
    struct http_slot *slot = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&slot);
    curl_multi_remove_handle(bench->multi, easy);
    slot->in_multi = false;
    struct cm_op *op = slot->op;
    int64_t result;
    slot->backoff_ns = code == CURLE_COULDNT_CONNECT ? cm_http_backoff_next(slot->backoff_ns) : 0;
    if (code != CURLE_OK) {
        char error[512];
        result = cm_http_transport_error(code, slot->url, NULL, error, sizeof error);
        cm_http_target_record_transport_error(bench, error, (int)-result);
        cm_engine_complete(op, result);
        return;
    }
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status <= 299) {
        result = (int64_t)op->length;
        cm_http_target_succeeded(bench);
        if (bench->options.op == CM_HTTP_GET) {
            curl_off_t first_byte = 0, total = 0;
            curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &first_byte);
            curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total);
            slot->curl_ttfb_us = (uint64_t)first_byte;
            slot->curl_total_us = (uint64_t)total;
        } else if (bench->options.op == CM_HTTP_PUT) {
            bench->put_ok++;
        }
    } else {
        cm_http_target_record_status(bench, status, slot->url);
        result = cm_http_status_errno(status);
        if (status == 401)
            cm_http_target_unauthorized(bench, slot->headers_generation, slot->url);
    }
    cm_engine_complete(op, result);
}

/* ---- requests chosen by the caller (scripted workers) ---------------------------------- */

struct http_request_slot {
    struct cm_http_exchange exchange;
    struct cm_op *op;
    bool in_multi;
    char error[640]; /* a failure without an answer, as a sentence */
};

static struct http_request_slot *request_slot(struct cm_http_target *bench, uint32_t index)
{
    void **entry = cm_request_slot_entry(&bench->request_slots, &bench->n_request_slots, index);
    if (!entry)
        return NULL;
    struct http_request_slot *slot = *entry;
    if (!slot) {
        slot = calloc(1, sizeof *slot);
        if (!slot)
            return NULL;
        slot->exchange.easy = curl_easy_init();
        if (!slot->exchange.easy) {
            free(slot);
            return NULL;
        }
        *entry = slot;
    }
    return slot;
}

static int submit_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_http_target *bench = self;
    static const char *const methods[] = {
        [CM_REQUEST_READ] = "GET",  [CM_REQUEST_WRITE] = "PUT",     [CM_REQUEST_WRITE_FULL] = "PUT",
        [CM_REQUEST_STAT] = "HEAD", [CM_REQUEST_REMOVE] = "DELETE",
    };
    const char *method =
        request->verb < sizeof methods / sizeof methods[0] ? methods[request->verb] : NULL;
    if (!method || !request->container || !request->name)
        return -EOPNOTSUPP;
    struct http_request_slot *slot = request_slot(bench, op->slot);
    if (!slot)
        return -ENOMEM;
    slot->op = op;
    slot->error[0] = '\0';
    char url[CM_HTTP_URL_MAX + 600];
    if (cm_http_url(bench->client, request->container, request->name, NULL, url, sizeof url) < 0) {
        snprintf(request->message, sizeof request->message,
                 "the URL for '%.100s/%.100s' is too long", request->container, request->name);
        return -ENAMETOOLONG;
    }
    bool put = strcmp(method, "PUT") == 0;
    /* no 100-continue round trip for Swift (see copy_headers) */
    const char *headers[] = {put && bench->client->api == CM_HTTP_SWIFT ? "Expect:" : NULL, NULL};
    int rc = cm_http_exchange_start(bench->client, &slot->exchange, method, url,
                                    put ? request->data : NULL, put ? request->data_length : 0,
                                    headers, request->message, sizeof request->message);
    if (rc < 0)
        return rc;
    CURL *easy = slot->exchange.easy;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
    if (curl_multi_add_handle(bench->multi, easy) != CURLM_OK) {
        cm_http_exchange_finish(&slot->exchange, CURLE_OK, NULL, 0);
        return -EIO;
    }
    slot->in_multi = true;
    op->kind = put ? CM_OP_WRITE : cm_request_kind(request->verb);
    op->length = put ? request->data_length : 0; /* a GET's length is known at the end */
    return 0;
}

/* A request's transfer is done: the op completes with the bytes moved, or fails. */
static void request_finished(struct cm_http_target *bench, CURL *easy, CURLcode code)
{
    struct http_request_slot *slot = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&slot);
    curl_multi_remove_handle(bench->multi, easy);
    slot->in_multi = false;
    int rc = cm_http_exchange_finish(&slot->exchange, code, slot->error, sizeof slot->error);
    const struct cm_http_response *response = &slot->exchange.response;
    int64_t result;
    if (rc < 0)
        result = rc;
    else if (response->status < 200 || response->status > 299)
        result = cm_http_status_errno(response->status);
    else
        result = (int64_t)(slot->op->kind == CM_OP_READ ? response->body_len : slot->op->length);
    cm_engine_complete(slot->op, result);
}

void cm_http_request_outcome(struct cm_op *op, struct cm_request *request,
                             const struct cm_http_response *response, const char *error)
{
    request->status = (int)response->status;
    request->size = response->content_length;
    request->reply = response->body;
    request->reply_length = response->body_len;
    if (error[0])
        snprintf(request->message, sizeof request->message, "%.511s", error);
    if (op->kind == CM_OP_READ)
        op->length = op->result >= 0 ? (uint64_t)op->result : 0;
}

static void complete_request(void *self, struct cm_op *op, struct cm_request *request)
{
    struct cm_http_target *bench = self;
    struct http_request_slot *slot = bench->request_slots[op->slot];
    cm_http_request_outcome(op, request, &slot->exchange.response, slot->error);
}

const struct cm_http_response *cm_http_target_response(const struct cm_http_target *bench,
                                                       const struct cm_op *op)
{
    if (bench->transport == CM_HTTP_NATIVE)
        return cm_http_wire_response(bench, op);
    struct http_request_slot *slot = bench->request_slots[op->slot];
    return &slot->exchange.response;
}

static void poll_target(void *self, uint64_t now_ns)
{
    struct cm_http_target *bench = self;
    struct epoll_event events[64];
    int running = 0;
    int n = epoll_wait(bench->epoll_fd, events, 64, 0);
    for (int i = 0; i < n; i++) {
        int flags = 0;
        if (events[i].events & EPOLLIN)
            flags |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT)
            flags |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP))
            flags |= CURL_CSELECT_ERR;
        curl_multi_socket_action(bench->multi, events[i].data.fd, flags, &running);
    }
    if (bench->timer_deadline_ns <= now_ns || (n == 0 && bench->timer_deadline_ns <= cm_now_ns())) {
        bench->timer_deadline_ns = UINT64_MAX;
        curl_multi_socket_action(bench->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    CURLMsg *message;
    int left;
    while ((message = curl_multi_info_read(bench->multi, &left)))
        if (message->msg == CURLMSG_DONE && bench->requests_only)
            request_finished(bench, message->easy_handle, message->data.result);
        else if (message->msg == CURLMSG_DONE)
            finished(bench, message->easy_handle, message->data.result);
    if (bench->waiting)
        release_waiting(bench, n > 0 ? cm_now_ns() : now_ns);
}

static uint64_t next_deadline(void *self)
{
    struct cm_http_target *bench = self;
    uint64_t deadline = bench->timer_deadline_ns;
    for (const struct http_slot *slot = bench->waiting; slot; slot = slot->next_waiting)
        if (slot->retry_ns < deadline)
            deadline = slot->retry_ns;
    return deadline;
}

static int wait_fd(void *self)
{
    struct cm_http_target *bench = self;
    return bench->epoll_fd;
}

static void complete(void *self, struct cm_op *op)
{
    struct cm_http_target *bench = self;
    struct http_slot *slot = op->target_slot;
    if (bench->options.op == CM_HTTP_LIST) {
        cm_http_list_page(bench, op, &slot->walk, (const char *)slot->buffer, slot->received,
                          slot->received < slot->capacity ? slot->received : slot->capacity);
        return;
    }
    cm_http_target_verify(bench, op, slot->buffer, slot->received, slot->length, slot->name);
    if (cm_http_target_first_byte(bench, op, slot->first_byte_ns)) {
        cm_hist_record(bench->curl_ttfb, slot->curl_ttfb_us * 1000ULL);
        cm_hist_record(bench->curl_total, slot->curl_total_us * 1000ULL);
    }
}

const char *const cm_http_kind_names[CM_OP_KINDS] = {[CM_OP_READ] = "get",
                                                     [CM_OP_WRITE] = "put",
                                                     [CM_OP_REMOVE] = "delete",
                                                     [CM_OP_STAT] = "head",
                                                     [CM_OP_LIST] = "list"};

const struct cm_target_ops cm_http_target_ops = {
    .version = CM_TARGET_OPS_VERSION,
    .name = "http",
    .slot_init = slot_init,
    .slot_fini = slot_fini,
    .submit = submit,
    .complete = complete,
    .next_deadline = next_deadline,
    .poll = poll_target,
    .wait_fd = wait_fd,
    .submit_request = submit_request,
    .complete_request = complete_request,
    .kind_names = cm_http_kind_names,
};

static bool prefix_ok(const char *prefix)
{
    if (!*prefix)
        return false;
    for (const char *p = prefix; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

/* The multi handle and its epoll set, as a curl run has them. */
static int setup_multi(struct cm_http_target *bench, char *error, size_t error_size)
{
    bench->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    bench->multi = curl_multi_init();
    if (bench->epoll_fd < 0 || !bench->multi) {
        snprintf(error, error_size, "cannot set up the HTTP event loop: %s", strerror(errno));
        return -EIO;
    }
    curl_multi_setopt(bench->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(bench->multi, CURLMOPT_SOCKETDATA, bench);
    curl_multi_setopt(bench->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(bench->multi, CURLMOPT_TIMERDATA, bench);
    return 0;
}

/* The phase's generators: object picks, and a mix's kinds on their own so that a seed
 * repeats the kinds whatever the picks drew. A given seed repeats both; else a fresh one. */
static void seed_generators(struct cm_http_target *bench,
                            const struct cm_http_target_options *options)
{
    bench->rng = options->seed ? options->seed : options->run_id ^ cm_rados_new_run_id();
    uint64_t kinds_seed = bench->rng ^ 0x9e3779b97f4a7c15ULL;
    bench->mix_rng = cm_splitmix64(&kinds_seed);
}

int cm_http_target_init(struct cm_http_target *bench, struct cm_http_client *client,
                        const struct cm_http_target_options *options, char *error,
                        size_t error_size)
{
    memset(bench, 0, sizeof *bench);
    bench->epoll_fd = -1;
    bench->client = client;
    bench->options = *options;
    bench->timer_deadline_ns = UINT64_MAX;
    const char *prefix = options->prefix ? options->prefix : "";
    if (!prefix_ok(prefix) || strlen(prefix) >= sizeof bench->prefix) {
        snprintf(error, error_size,
                 "object prefix '%s' must be 1 to %zu characters from A-Z a-z 0-9 . _ -", prefix,
                 sizeof bench->prefix - 1);
        return -EINVAL;
    }
    snprintf(bench->prefix, sizeof bench->prefix, "%s", prefix);
    if (options->n_containers == 0 || options->n_containers > CM_HTTP_BENCH_MAX_CONTAINERS) {
        snprintf(error, error_size, "a bench needs 1 to %d containers, got %u",
                 CM_HTTP_BENCH_MAX_CONTAINERS, options->n_containers);
        return -EINVAL;
    }
    if (options->size_min > options->size_max) {
        snprintf(error, error_size,
                 "object size range %" PRIu64 "..%" PRIu64 ": the low end is above the high end",
                 options->size_min, options->size_max);
        return -EINVAL;
    }
    if (options->op != CM_HTTP_PUT && options->objects == 0) {
        snprintf(error, error_size, "%s needs objects to work on: objects must be at least 1",
                 cm_http_target_op_name(options->op));
        return -EINVAL;
    }
    bench->containers = calloc(options->n_containers, sizeof *bench->containers);
    if (!bench->containers)
        goto oom;
    for (unsigned i = 0; i < options->n_containers; i++) {
        const char *name = options->containers[i] ? options->containers[i] : "";
        if (!*name ||
            cm_http_escape(name, false, bench->containers[i], sizeof bench->containers[i]) < 0) {
            snprintf(error, error_size, "container name '%.200s' is empty or too long", name);
            return -EINVAL;
        }
    }
    if (options->op == CM_HTTP_PUT || options->op == CM_HTTP_GET || options->op == CM_HTTP_MIXED) {
        bench->payload =
            cm_payload_new(options->run_id, options->size_max ? (size_t)options->size_max : 1);
        if (!bench->payload)
            goto oom;
    }
    /* the client's libcurl is normally loaded already; a bench may also be built from a
     * client set up by hand (the native transport's tests), and still uses curl_slist */
    if (cm_curl_load(error, error_size) < 0)
        return -ENOSYS;
    bench->ttfb = cm_hist_new();
    bench->headers = copy_headers(client, options->op == CM_HTTP_PUT);
    if (!bench->ttfb || (!bench->headers && client->headers))
        goto oom;
    seed_generators(bench, options);

    char why[256];
    bool native_ok = cm_http_wire_supported(client, why, sizeof why);
    if (options->transport == CM_HTTP_NATIVE && !native_ok) {
        snprintf(error, error_size, "transport \"native\" cannot serve this endpoint: %s", why);
        return -EINVAL;
    }
    if (options->op == CM_HTTP_MIXED && (options->transport == CM_HTTP_CURL || !native_ok)) {
        snprintf(error, error_size, "op \"mixed\" runs over the native transport (plain http://)");
        return -EINVAL;
    }
    if (options->op == CM_HTTP_MIXED) {
        bench->object_states = malloc(options->objects * sizeof *bench->object_states);
        if (!bench->object_states)
            goto oom;
        for (uint64_t i = 0; i < options->objects; i++)
            bench->object_states[i] = OBJECT_LIVE;
    }
    if (options->part_size &&
        (client->api != CM_HTTP_S3 || options->transport == CM_HTTP_CURL || !native_ok)) {
        snprintf(error, error_size,
                 "multipart uploads are S3's, over the native transport (plain "
                 "http://); Swift's SLO and DLO are not supported");
        return -EINVAL;
    }
    if (options->transport != CM_HTTP_CURL && native_ok) {
        bench->transport = CM_HTTP_NATIVE;
        return cm_http_wire_init(bench, error, error_size);
    }
    bench->transport = CM_HTTP_CURL;
    bench->curl_ttfb = cm_hist_new();
    bench->curl_total = cm_hist_new();
    if (!bench->curl_ttfb || !bench->curl_total)
        goto oom;
    return setup_multi(bench, error, error_size);
oom:
    snprintf(error, error_size, "out of memory for an HTTP run");
    return -ENOMEM;
}

int cm_http_target_init_requests(struct cm_http_target *bench, struct cm_http_client *client,
                                 enum cm_http_transport transport, char *error, size_t error_size)
{
    memset(bench, 0, sizeof *bench);
    bench->epoll_fd = -1;
    bench->client = client;
    bench->timer_deadline_ns = UINT64_MAX;
    bench->requests_only = true;
    bench->options.op = CM_HTTP_GET; /* nothing of a bench's; only what the transports read */
    if (cm_curl_load(error, error_size) < 0)
        return -ENOSYS;
    char why[256];
    bool native_ok = cm_http_wire_supported(client, why, sizeof why);
    if (transport == CM_HTTP_NATIVE && !native_ok) {
        snprintf(error, error_size, "transport \"native\" cannot serve this endpoint: %s", why);
        return -EINVAL;
    }
    if (transport != CM_HTTP_CURL && native_ok) {
        bench->transport = CM_HTTP_NATIVE;
        return cm_http_wire_init(bench, error, error_size);
    }
    bench->transport = CM_HTTP_CURL;
    return setup_multi(bench, error, error_size);
}

const struct cm_target_ops *cm_http_target_ops_for(const struct cm_http_target *bench)
{
    return bench->transport == CM_HTTP_NATIVE ? &cm_http_wire_ops : &cm_http_target_ops;
}

const char *cm_http_transport_name(enum cm_http_transport transport)
{
    switch (transport) {
    case CM_HTTP_CURL:
        return "curl";
    case CM_HTTP_NATIVE:
        return "native";
    case CM_HTTP_AUTO:
    default:
        return "auto";
    }
}

void cm_http_target_fini(struct cm_http_target *bench)
{
    cm_http_wire_fini(bench);
    for (size_t i = 0; i < bench->n_request_slots; i++) {
        struct http_request_slot *slot = bench->request_slots[i];
        if (!slot)
            continue;
        if (slot->in_multi) {
            curl_multi_remove_handle(bench->multi, slot->exchange.easy);
            cm_http_exchange_finish(&slot->exchange, CURLE_OK, NULL, 0);
        }
        curl_easy_cleanup(slot->exchange.easy);
        cm_http_response_fini(&slot->exchange.response);
        free(slot);
    }
    free(bench->request_slots);
    bench->request_slots = NULL;
    bench->n_request_slots = 0;
    if (bench->multi)
        curl_multi_cleanup(bench->multi);
    bench->multi = NULL;
    if (bench->epoll_fd >= 0)
        close(bench->epoll_fd);
    bench->epoll_fd = -1;
    /* libcurl may not be loaded when an init failed early (curl_api.h): free only lists */
    if (bench->headers)
        curl_slist_free_all(bench->headers);
    bench->headers = NULL;
    for (unsigned i = 0; i < bench->n_old_headers; i++)
        if (bench->old_headers[i])
            curl_slist_free_all(bench->old_headers[i]);
    bench->n_old_headers = 0;
    cm_payload_free(bench->payload);
    bench->payload = NULL;
    cm_hist_free(bench->ttfb);
    bench->ttfb = NULL;
    cm_hist_free(bench->curl_ttfb);
    cm_hist_free(bench->curl_total);
    bench->curl_ttfb = bench->curl_total = NULL;
    free(bench->containers);
    bench->containers = NULL;
    free(bench->object_states);
    bench->object_states = NULL;
}
