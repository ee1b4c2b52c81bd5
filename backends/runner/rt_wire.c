/*
 * rt_wire.c - parity's side of the runner protocol (rt_wire.h, docs/runners.md).
 */
#include "rt_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void rt_conn_init(rt_conn *c)
{
    memset(c, 0, sizeof *c);
    c->in_w = c->out_r = c->err_r = -1;
}

int rt_attach_companion(rt_conn *c)
{
    const char *e = getenv("PARITY_COMPANION");
    int in_w, out_r, err_r, pid, state_fd;
    if (!e || sscanf(e, "%d %d %d %d %d", &in_w, &out_r, &err_r, &pid, &state_fd) != 5 || in_w < 0 || out_r < 0 ||
        err_r < 0 || pid <= 0 || fcntl(in_w, F_GETFD) < 0 || fcntl(out_r, F_GETFD) < 0 || fcntl(err_r, F_GETFD) < 0)
        return 0;
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, state_fd, 0);
    if (m == MAP_FAILED) return 0;
    c->busy = m;
    fcntl(err_r, F_SETFL, fcntl(err_r, F_GETFL) | O_NONBLOCK); /* drained as it comes, never waited on */
    c->in_w = in_w, c->out_r = out_r, c->err_r = err_r, c->pid = (pid_t)pid;
    c->own = 0;
    return 1;
}

par_status rt_spawn(rt_conn *c, char *const *argv, par_msg *msg)
{
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0) return par_msgf(msg, PAR_ERROR, "runner: pipe: %s", strerror(errno));
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]);
        return par_msgf(msg, PAR_ERROR, "runner: pipe: %s", strerror(errno));
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return par_msgf(msg, PAR_ERROR, "runner: pipe: %s", strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(127);
        execvp(argv[0], argv);
        dprintf(2, "parity: cannot start '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int e = errno;
    close(in[0]), close(out[1]), close(err[1]);
    if (pid < 0) {
        close(in[1]), close(out[0]), close(err[0]);
        return par_msgf(msg, PAR_ERROR, "runner: fork: %s", strerror(e));
    }
    setpgid(pid, pid);
    fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK); /* drained as it comes, never waited on */
    c->in_w = in[1], c->out_r = out[0], c->err_r = err[0], c->pid = pid, c->own = 1, c->broken = 0;
    return PAR_OK;
}

static void close_fds(rt_conn *c)
{
    if (c->in_w >= 0) close(c->in_w);
    if (c->out_r >= 0) close(c->out_r);
    if (c->err_r >= 0) close(c->err_r);
    c->in_w = c->out_r = c->err_r = -1;
    free(c->buf);
    c->buf = NULL;
    c->buf_len = c->buf_cap = 0;
}

/* Reap our own process: wait up to `grace` seconds, then kill its group. Returns its wait status, or -1. */
static int reap_own(rt_conn *c, double grace)
{
    int st = -1;
    if (!c->own || c->pid <= 0) return -1;
    for (int i = 0; i < (int)(grace * 1000); i++) {
        pid_t w = waitpid(c->pid, &st, WNOHANG);
        if (w == c->pid) {
            kill(-c->pid, SIGKILL);
            c->pid = 0;
            return st;
        }
        if (w < 0) break;
        usleep(1000);
    }
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
    while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {}
    c->pid = 0;
    return st;
}

void rt_close(rt_conn *c)
{
    if (!c->own && c->out_r >= 0) {
        /* A companion's pipes belong to the fork server (this may be its warm start): left open. One that said more
         * than it was asked is killed, so that the next job does not read it. */
        struct pollfd p = {.fd = c->out_r, .events = POLLIN};
        if (!c->broken && (c->buf_len > 0 || poll(&p, 1, 0) > 0)) rt_kill(c);
        if (c->busy) munmap((void *)c->busy, 4096);
        free(c->buf);
        rt_conn_init(c);
        return;
    }
    if (c->own && c->pid > 0) {
        if (!c->broken && c->in_w >= 0) {
            static const char bye[] = "{\"op\": \"bye\"}\n";
            ssize_t n = write(c->in_w, bye, sizeof bye - 1);
            (void)n;
        }
        if (c->in_w >= 0) close(c->in_w);
        c->in_w = -1;
        reap_own(c, 1.0);
    }
    close_fds(c);
}

void rt_kill(rt_conn *c)
{
    c->broken = 1;
    /* A companion is the fork server's to replace: marked as left mid-request, it is killed and waited for before the
     * next job starts (par_comp_after_job). Killed here alone, it could still look alive to the server's check and
     * be handed, dying, to the next job, whose record would then be its CRASH. */
    if (c->busy) c->busy[0] = 1;
    if (c->pid > 0) {
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
    }
    if (c->own) reap_own(c, 0);
}

/* Copy what the runner wrote on stderr to ours (the job's captured output). */
static void drain_err(rt_conn *c)
{
    char b[65536];
    for (;;) {
        ssize_t n = read(c->err_r, b, sizeof b);
        if (n <= 0) return;
        size_t keep = sizeof c->err_tail - 1, old = strlen(c->err_tail), k = (size_t)n < keep ? (size_t)n : keep;
        if (old + k > keep) {
            memmove(c->err_tail, c->err_tail + (old + k - keep), keep - k);
            old = keep - k;
        }
        memcpy(c->err_tail + old, b + (size_t)n - k, k);
        c->err_tail[old + k] = '\0';
        for (ssize_t o = 0; o < n;) {
            ssize_t w = write(2, b + o, (size_t)(n - o));
            if (w <= 0) break;
            o += w;
        }
        if (n < (ssize_t)sizeof b) return;
    }
}

/* The stream ended (or broke): how the runner went, for the message; a companion's end ends this job. */
static par_status gone(rt_conn *c, const char *during, par_msg *msg)
{
    if (c->err_r >= 0) drain_err(c);
    c->broken = 1;
    if (!c->own) {
        fprintf(stderr, "parity: the runner process (pid %d) closed its output during %s\n", (int)c->pid, during);
        fflush(stderr);
        _exit(PAR_COMPANION_GONE);
    }
    int st = reap_own(c, 2.0);
    /* its last line on stderr says why, most of the time */
    char last[256] = "";
    size_t n = strlen(c->err_tail);
    while (n > 0 && (c->err_tail[n - 1] == '\n' || c->err_tail[n - 1] == '\r')) n--;
    size_t b = n;
    while (b > 0 && c->err_tail[b - 1] != '\n') b--;
    if (n > b) snprintf(last, sizeof last, ": %.*s", (int)(n - b), c->err_tail + b);
    if (st >= 0 && WIFSIGNALED(st))
        return par_msgf(msg, PAR_ERROR, "the runner process was killed by signal %d (%s) during %s%s", WTERMSIG(st),
                        strsignal(WTERMSIG(st)), during, last);
    if (st >= 0 && WIFEXITED(st))
        return par_msgf(msg, PAR_ERROR, "the runner process exited with status %d during %s%s", WEXITSTATUS(st),
                        during, last);
    return par_msgf(msg, PAR_ERROR, "the runner process closed its output during %s%s", during, last);
}

/* Wait until fd is ready for `ev`, draining stderr meanwhile. 1: ready; 0: hung up / error. */
static int wait_fd(rt_conn *c, int fd, short ev)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = ev}, {.fd = c->err_r, .events = POLLIN}};
        int r = poll(p, c->err_r >= 0 ? 2 : 1, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return 0;
        if (c->err_r >= 0 && (p[1].revents & POLLIN)) drain_err(c);
        if (c->err_r >= 0 && (p[1].revents & (POLLHUP | POLLERR)) && !(p[1].revents & POLLIN)) {
            close(c->err_r); /* its stderr is closed: stop watching it */
            c->err_r = -1;
        }
        if (p[0].revents & ev) return 1;
        if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return 0;
    }
}

static int write_all(rt_conn *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        if (!wait_fd(c, c->in_w, POLLOUT)) return 0;
        ssize_t n = write(c->in_w, p, len > ((size_t)1 << 20) ? ((size_t)1 << 20) : len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return 0;
        p += n;
        len -= (size_t)n;
    }
    return 1;
}

/* Read more of the runner's stdout into c->buf (at most `want` bytes more). 1: read some; 0: end of stream. */
static int fill(rt_conn *c, size_t want)
{
    if (c->buf_cap - c->buf_len < want) {
        size_t cap = c->buf_len + want;
        uint8_t *nb = realloc(c->buf, cap);
        if (!nb) return 0;
        c->buf = (char *)nb;
        c->buf_cap = cap;
    }
    for (;;) {
        if (!wait_fd(c, c->out_r, POLLIN)) return 0;
        ssize_t n = read(c->out_r, c->buf + c->buf_len, want);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return 0;
        c->buf_len += (size_t)n;
        return 1;
    }
}

static void consume(rt_conn *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->buf_len - n);
    c->buf_len -= n;
}

size_t rt_json_str(char *dst, size_t cap, const char *text)
{
    size_t o = 0;
#define PUT(ch) (o + 1 < cap ? (void)(dst[o] = (ch)) : (void)0, o++)
    PUT('"');
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') PUT('\\'), PUT((char)*p);
        else if (*p < 0x20) {
            char u[8];
            snprintf(u, sizeof u, "\\u%04x", *p);
            for (char *q = u; *q; q++) PUT(*q);
        } else PUT((char)*p);
    }
    PUT('"');
#undef PUT
    if (cap) dst[o < cap ? o : cap - 1] = '\0';
    return o;
}

void rt_reply_free(rt_reply *r)
{
    if (r->head) json_object_put(r->head);
    free(r->data);
    memset(r, 0, sizeof *r);
}

static par_status broken(rt_conn *c, par_msg *msg, const char *fmt, const char *what)
{
    par_msgf(msg, PAR_ERROR, fmt, what);
    rt_kill(c);
    return PAR_ERROR;
}

/* Read one header line: at most RT_HEADER_MAX bytes. */
static par_status read_head(rt_conn *c, const char *op, char **line, par_msg *msg)
{
    size_t scanned = 0;
    for (;;) {
        char *nl = c->buf_len > scanned ? memchr(c->buf + scanned, '\n', c->buf_len - scanned) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            *line = malloc(n + 1);
            if (!*line) return broken(c, msg, "runner: out of memory reading the reply to %s", op);
            memcpy(*line, c->buf, n);
            (*line)[n] = '\0';
            consume(c, n + 1);
            return PAR_OK;
        }
        scanned = c->buf_len;
        if (c->buf_len >= RT_HEADER_MAX)
            return broken(c, msg, "the runner's reply to %s is not a JSON line of at most 1 MiB (no newline in the "
                                  "first 1 MiB)", op);
        if (!fill(c, 65536)) return gone(c, op, msg);
    }
}

static par_status read_blobs(rt_conn *c, const char *op, rt_reply *r, size_t max_bytes, par_msg *msg)
{
    struct json_object *b = NULL;
    if (!json_object_object_get_ex(r->head, "blobs", &b)) return PAR_OK;
    if (!json_object_is_type(b, json_type_array) || json_object_array_length(b) > RT_MAX_BLOBS)
        return broken(c, msg, "the runner's reply to %s: \"blobs\" is not an array of at most 64 sizes", op);
    size_t total = 0;
    r->n_blobs = (int32_t)json_object_array_length(b);
    for (int32_t i = 0; i < r->n_blobs; i++) {
        struct json_object *s = json_object_array_get_idx(b, (size_t)i);
        int64_t v = json_object_is_type(s, json_type_int) ? json_object_get_int64(s) : -1;
        if (v < 0 || (uint64_t)v > max_bytes || total + (size_t)v > max_bytes) {
            char what[160];
            snprintf(what, sizeof what, "%s: blob %d's size is not an integer within the %zu bytes expected", op,
                     (int)i, max_bytes);
            return broken(c, msg, "the runner's reply to %s", what);
        }
        r->blob_len[i] = (size_t)v;
        total += (size_t)v;
    }
    r->data = malloc(total ? total : 1);
    if (!r->data) return broken(c, msg, "runner: out of memory reading the reply to %s", op);
    size_t got = 0;
    while (got < total) {
        if (c->buf_len == 0 && !fill(c, total - got < 65536 ? total - got : 65536)) return gone(c, op, msg);
        size_t k = c->buf_len < total - got ? c->buf_len : total - got;
        memcpy(r->data + got, c->buf, k);
        consume(c, k);
        got += k;
    }
    size_t off = 0;
    for (int32_t i = 0; i < r->n_blobs; i++) r->blob[i] = r->data + off, off += r->blob_len[i];
    return PAR_OK;
}

par_status rt_request(rt_conn *c, const char *head, const void *const *blobs, const size_t *sizes, int32_t n,
                      size_t max_blob_bytes, rt_reply *r, par_msg *msg)
{
    memset(r, 0, sizeof *r);
    struct json_object *h = json_tokener_parse(head), *opj = NULL;
    char op[32] = "a request";
    if (h && json_object_object_get_ex(h, "op", &opj)) snprintf(op, sizeof op, "%s", json_object_get_string(opj));
    if (h) json_object_put(h);
    if (c->broken || c->in_w < 0) return par_msgf(msg, PAR_ERROR, "the runner process is gone (%s)", op);
    if (c->busy) c->busy[0] = 1; /* a request in flight: should this process die before the reply, the companion goes */
    if (!write_all(c, head, strlen(head)) || !write_all(c, "\n", 1)) return gone(c, op, msg);
    for (int32_t i = 0; i < n; i++)
        if (sizes[i] && !write_all(c, blobs[i], sizes[i])) return gone(c, op, msg);
    char *line = NULL;
    par_status st = read_head(c, op, &line, msg);
    if (st != PAR_OK) return st;
    enum json_tokener_error je = json_tokener_success;
    r->head = json_tokener_parse_verbose(line, &je);
    if (!r->head || !json_object_is_type(r->head, json_type_object)) {
        char what[200];
        snprintf(what, sizeof what, "%s is not a JSON object (%.*s%s)", op, 80, line, strlen(line) > 80 ? "..." : "");
        free(line);
        rt_reply_free(r);
        return broken(c, msg, "the runner's reply to %s", what);
    }
    free(line);
    struct json_object *okj = NULL, *m = NULL, *s = NULL;
    if (!json_object_object_get_ex(r->head, "ok", &okj) || !json_object_is_type(okj, json_type_boolean)) {
        rt_reply_free(r);
        return broken(c, msg, "the runner's reply to %s has no boolean \"ok\"", op);
    }
    r->ok = json_object_get_boolean(okj);
    if (!r->ok) {
        const char *ss = json_object_object_get_ex(r->head, "status", &s) ? json_object_get_string(s) : "error";
        r->status = ss && !strcmp(ss, "unsupported") ? PAR_UNSUPPORTED : PAR_ERROR;
        const char *mm = json_object_object_get_ex(r->head, "message", &m) ? json_object_get_string(m) : NULL;
        snprintf(r->message, sizeof r->message, "%s", mm ? mm : "(no message)");
    }
    st = read_blobs(c, op, r, max_blob_bytes, msg);
    if (st != PAR_OK) rt_reply_free(r);
    else if (c->busy) c->busy[0] = 0;
    return st;
}
