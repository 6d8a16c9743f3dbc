/* The HTTP target of the op engine: PUT, GET, HEAD or DELETE of benchmark objects on a
 * Swift or S3 endpoint (http_client.h), on the engine's own loop thread, over one of two
 * transports: libcurl's multi interface (every endpoint: S3 with SigV4, TLS) or the native
 * HTTP/1.1 keep-alive client of http_wire.c (Swift and S3 over plain http, the default there:
 * a fraction of libcurl's CPU per request; S3 signed by sigv4.c). Pure C, no Lua.
 *
 * Loop integration: curl tells us which sockets it wants watched (socket callback) and when
 * it needs a timeout (timer callback). The target keeps those sockets in an epoll set whose
 * descriptor is the engine's wait_fd (an epoll fd is readable when any of its sockets is
 * ready), reports curl's timer as next_deadline, and in poll() hands ready sockets and
 * expired timers to curl_multi_socket_action, then turns finished transfers into
 * cm_engine_complete calls. Everything runs on the loop thread; curl starts no threads of
 * its own for plain HTTP to an IP address.
 *
 * Per slot: one easy handle (reused for the whole run, so its connection stays in the multi
 * handle's cache and is reused), a URL buffer and a body buffer of the largest object size.
 * PUT bodies are cephmark payloads (runtime/payload.h) for the object's name, so a GET can
 * verify what it reads; sizes in a range are a function of the run id and the object
 * number, so a GET knows the size to expect without any shared state.
 *
 * Objects are "<prefix>_<N>" for N = 0, 1, ...; object N lives in container N mod the number
 * of containers (swift-bench spreads its objects the same way). */
#ifndef CEPHMARK_HTTP_TARGET_H
#define CEPHMARK_HTTP_TARGET_H

#include "engine.h"
#include "hist.h"
#include "http_client.h"
#include "payload.h"

#include "curl_api.h"
#include <stdbool.h>
#include <stdint.h>

enum cm_http_target_op { CM_HTTP_PUT, CM_HTTP_GET, CM_HTTP_HEAD, CM_HTTP_DELETE };

/* Which HTTP stack carries the requests. AUTO: native when the endpoint allows it (http://),
 * else curl. */
enum cm_http_transport { CM_HTTP_AUTO, CM_HTTP_CURL, CM_HTTP_NATIVE };

#define CM_HTTP_BENCH_MAX_CONTAINERS 1024
#define CM_HTTP_BENCH_PREFIX_MAX     128
#define CM_HTTP_VERIFY_ERRORS_KEPT   8
#define CM_HTTP_STATUS_KINDS         32
/* The default give_up: no successful request for this long while requests fail. */
#define CM_HTTP_GIVE_UP_SECONDS 30

struct cm_http_target_options {
    enum cm_http_target_op op;
    const char *const *containers; /* n_containers names (copied) */
    unsigned n_containers;
    const char *prefix;    /* object names are <prefix>_<N>; [A-Za-z0-9._-] */
    uint64_t objects;      /* GET/HEAD/DELETE: objects 0 .. objects-1 exist; PUT: 0 = unbounded */
    uint64_t first_object; /* PUT: the first object number (a PUT phase may add to a set) */
    uint64_t size_min, size_max; /* object size, or a range (min <= max) */
    uint64_t run_id;             /* seeds payloads and sizes; GET/DELETE use the PUT's */
    bool random;                 /* GET/HEAD: pick objects at random (else in order, wrapping) */
    bool verify;                 /* GET: check what came back */
    enum cm_http_transport transport;
    /* Stop the run when no request succeeded for this long while requests kept failing
     * (a gateway that stays down); 0: never. */
    uint64_t give_up_ns;
};

/* One HTTP status and how many ops ended with it. */
struct cm_http_status_count {
    long status;
    uint64_t count;
};

struct http_slot;
struct http_request_slot;

struct cm_http_target {
    struct cm_http_client *client;
    struct cm_http_target_options options;
    char (*containers)[600]; /* escaped container names */
    char prefix[CM_HTTP_BENCH_PREFIX_MAX];
    cm_payload *payload;
    uint64_t rng;
    uint64_t next_object;

    enum cm_http_transport transport; /* CURL or NATIVE, after AUTO is resolved */
    struct cm_http_wire *wire;        /* the native transport's state (http_wire.c) */

    CURLM *multi;
    int epoll_fd;
    uint64_t timer_deadline_ns; /* from curl's timer callback; UINT64_MAX when none */
    struct http_slot *waiting;  /* slots holding their next request back (connect backoff) */
    struct curl_slist *headers; /* this run's copy of the client's headers */
    struct curl_slist *old_headers[4];
    unsigned n_old_headers;
    unsigned headers_generation;

    /* outcome */
    /* GET: the answer's first byte from the op's start, for the ops `lat` counts; with curl,
     * libcurl's own STARTTRANSFER and TOTAL times of those same ops */
    cm_hist *ttfb, *curl_ttfb, *curl_total;
    uint64_t put_ok;      /* PUT: ops that succeeded (2xx) */
    uint64_t highest_put; /* PUT: 1 + the highest object number started */
    struct cm_http_status_count statuses[CM_HTTP_STATUS_KINDS]; /* non-2xx responses */
    unsigned n_statuses;
    uint64_t transport_errors; /* no response: refused, timed out, reset */
    char first_error[640];     /* the first failed op, as a sentence */
    char first_transport_error[512];
    /* giving up on a gateway that stays down: the first failure since the last success (0:
     * the last request succeeded), the failures since, the last one's reason */
    uint64_t failing_since_ns;
    uint64_t failures_since;
    char last_failure[96];
    bool gave_up;
    char give_up_error[384]; /* the one line saying so */
    uint64_t reauths;        /* Swift: re-authentications during the run (at most 1) */
    bool auth_failed; /* Swift: 401 after re-authenticating, or re-auth refused: run stopped */
    char auth_error[512];
    char verify_errors[CM_HTTP_VERIFY_ERRORS_KEPT][400];
    unsigned n_verify_errors;

    /* requests chosen by the caller (submit_request), per caller slot, made on first use;
     * an instance made by cm_http_target_init_requests serves nothing else */
    bool requests_only;
    void **request_slots; /* struct http_request_slot *, by op slot (cm_request_slot_entry) */
    size_t n_request_slots;
};

extern const struct cm_target_ops cm_http_target_ops; /* over curl multi */
extern const struct cm_target_ops cm_http_wire_ops;   /* over the native client */

/* The target ops for the transport cm_http_target_init chose. */
const struct cm_target_ops *cm_http_target_ops_for(const struct cm_http_target *bench);

/* "curl" or "native" */
const char *cm_http_transport_name(enum cm_http_transport transport);

/* Prepares a run. 0 or -errno with a sentence (bad options, no memory, no curl multi).
 * cm_http_target_fini must be called in both cases. */
int cm_http_target_init(struct cm_http_target *bench, struct cm_http_client *client,
                        const struct cm_http_target_options *options, char *error,
                        size_t error_size);
void cm_http_target_fini(struct cm_http_target *bench);

/* A worker request's outcome from its answer (both transports): status, size, the reply,
 * the failure sentence `error` when not empty, and a read's length from its result. */
void cm_http_request_outcome(struct cm_op *op, struct cm_request *request,
                             const struct cm_http_response *response, const char *error);

/* Prepares a target that serves only requests chosen by its caller (submit_request: PUT
 * for writes, GET for reads, HEAD for stats, DELETE for removes of `container`/`name`),
 * for scripted workers, on the caller's loop (poll, next_deadline, wait_fd), over the
 * transport a bench of the same `transport` would use (AUTO: native over http,
 * else libcurl's multi interface; cm_http_target_ops_for gives the ops). Control-request
 * semantics: a non-2xx answer fails the op with cm_http_status_errno and the request's
 * status set, and a 401 is not retried. 0 or -errno with a sentence; cm_http_target_fini
 * in both cases. */
int cm_http_target_init_requests(struct cm_http_target *bench, struct cm_http_client *client,
                                 enum cm_http_transport transport, char *error, size_t error_size);
/* In or after complete_request: the whole answer to the caller slot's last request (body,
 * etag, content type, content length), valid until its next request. */
const struct cm_http_response *cm_http_target_response(const struct cm_http_target *bench,
                                                       const struct cm_op *op);

/* The size of object `object` of run `run_id`: min when min == max, else a value in
 * [min, max] hashed from both. */
uint64_t cm_http_object_size(uint64_t run_id, uint64_t object, uint64_t size_min,
                             uint64_t size_max);

/* "PUT", "GET", "HEAD", "DELETE" */
const char *cm_http_target_op_name(enum cm_http_target_op op);

/* ---- shared by the two transports --------------------------------------------------------- */

/* Picks the object of the next op (in order, at random, or the next to put or delete), its
 * size and name (<prefix>_<N>), and sets op->kind and op->length: 0, or CM_TARGET_DONE when
 * every object to put or delete was started or the run stopped on an auth failure or gave
 * up on the gateway. */
int cm_http_target_next_op(struct cm_http_target *bench, struct cm_op *op, uint64_t *out,
                           size_t *length, char *name, size_t name_size);
/* After a refused connect a slot waits before its next attempt: 100 ms, doubling up to
 * 1.6 s, reset by a connect that succeeds (both transports). Returns the next wait. */
uint64_t cm_http_backoff_next(uint64_t current_ns);
/* Counts a non-2xx answer by status, keeping the first failure as a sentence. */
void cm_http_target_record_status(struct cm_http_target *bench, long status, const char *url);
/* Counts a request that got no answer; `error` is a sentence naming the URL, error_number
 * its errno (for the give-up line). */
void cm_http_target_record_transport_error(struct cm_http_target *bench, const char *error,
                                           int error_number);
/* A request succeeded (2xx): the gateway answers, the give-up clock stops. */
void cm_http_target_succeeded(struct cm_http_target *bench);
/* A 401 for a request sent with the headers of `generation`: re-authenticates once (bumping
 * headers_generation), or stops the run with auth_failed and a sentence. */
void cm_http_target_unauthorized(struct cm_http_target *bench, unsigned generation,
                                 const char *url);
/* GET, from a transport's complete hook: records the op's time to first byte (the first
 * byte of the answer, stamped by the transport with cm_now_ns) when the op succeeded and
 * counts in the summary, so that `ttfb` and `lat` describe the same requests; true when it
 * was recorded. */
bool cm_http_target_first_byte(struct cm_http_target *bench, const struct cm_op *op,
                               uint64_t first_byte_ns);
/* GET: checks a body against the payload written for `name` (sets op->verify_failed). */
void cm_http_target_verify(struct cm_http_target *bench, struct cm_op *op,
                           const unsigned char *body, size_t received, size_t length,
                           const char *name);

/* The native transport (http_wire.c). supported: whether it can serve this client (Swift or
 * S3 over http://); when not, `why` says so. init parses the storage URL and resolves its
 * host: 0 or -errno with a sentence. fini is safe after a failed or skipped init. */
bool cm_http_wire_supported(const struct cm_http_client *client, char *why, size_t why_size);
int cm_http_wire_init(struct cm_http_target *bench, char *error, size_t error_size);
void cm_http_wire_fini(struct cm_http_target *bench);
/* cm_http_target_response for the native transport. */
const struct cm_http_response *cm_http_wire_response(const struct cm_http_target *bench,
                                                     const struct cm_op *op);

#endif
