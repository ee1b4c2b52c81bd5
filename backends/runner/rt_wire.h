/*
 * rt_wire.h - parity's side of the runner protocol (docs/runners.md): a connection to a runner process (the fork
 * server's companion, or a process of our own), requests of one JSON line plus blobs, and replies read within
 * bounds: a header line of at most 1 MiB, blobs whose sizes the caller allows. The runner's stderr is copied to
 * ours while we wait, so that what it says lands in the record of the case it said it during.
 *
 * Must not: trust a reply before checking it, or wait on a runner without also draining its stderr.
 */
#ifndef PAR_RT_WIRE_H
#define PAR_RT_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/parity_backend.h"

struct json_object;

typedef struct rt_conn {
    int in_w, out_r, err_r; /* the runner's stdin (we write), stdout (we read), stderr (we drain); -1: closed */
    pid_t pid;
    int own;                /* 1: our child (started by rt_spawn); 0: the fork server's companion */
    int broken;             /* 1 after a protocol error or an end of stream: no more requests */
    volatile uint32_t *busy;/* a companion's shared state: word 0 set while a request is in flight */
    char err_tail[512];     /* the last bytes it wrote on stderr, for messages */
    char *buf;              /* what was read past the last header line */
    size_t buf_len, buf_cap;
} rt_conn;

#define RT_HEADER_MAX ((size_t)1 << 20)
#define RT_MAX_BLOBS 64

/* A reply: its parsed header (owned), ok, status/message when not ok, and its blobs (one malloc'ed block). */
typedef struct rt_reply {
    struct json_object *head;
    int ok;
    par_status status;      /* when !ok: PAR_UNSUPPORTED or PAR_ERROR */
    char message[PAR_MSG_LEN];
    int32_t n_blobs;
    size_t blob_len[RT_MAX_BLOBS];
    uint8_t *blob[RT_MAX_BLOBS]; /* pointers into data */
    uint8_t *data;
} rt_reply;

void rt_conn_init(rt_conn *c);
/* The fork server's companion, from PARITY_COMPANION: 1 when attached. */
int rt_attach_companion(rt_conn *c);
/* Start argv as our own runner process (stdin, stdout, stderr pipes; its own process group). PAR_OK or PAR_ERROR. */
par_status rt_spawn(rt_conn *c, char *const *argv, par_msg *msg);
/* Say goodbye to our own process and reap it (killed after a short grace); a companion is left to its server. */
void rt_close(rt_conn *c);
/* Kill the runner after a protocol error (the server starts a fresh companion for the next job). */
void rt_kill(rt_conn *c);

/* Send one request (head: a JSON object text without the newline) with n blobs, and read its reply. max_blob_bytes
 * bounds the reply's blobs in all. PAR_OK with *r filled (r->ok may be 0: the runner's own refusal), or PAR_ERROR
 * with msg: a transport or protocol failure, after which the connection is broken and the runner killed. A
 * companion that closes its stdout makes this process _exit(PAR_COMPANION_GONE): the job ends as the runner did. */
par_status rt_request(rt_conn *c, const char *head, const void *const *blobs, const size_t *sizes, int32_t n,
                      size_t max_blob_bytes, rt_reply *r, par_msg *msg);
void rt_reply_free(rt_reply *r);

/* JSON string escaping for request headers: writes "text" (quoted) into dst. */
size_t rt_json_str(char *dst, size_t cap, const char *text);

#endif
