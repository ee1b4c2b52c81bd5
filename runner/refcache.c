/*
 * refcache.c - the on-disk reference cache (refcache.h): the key (SHA-256), the file format, atomic writes and the
 * checks that turn any damaged file into a miss.
 *
 * File layout (native byte order; a file from a machine of the other order fails the order mark and is a miss):
 *
 *     header  magic "PARREFC\0" | u32 format | u32 order mark 0x01020304 | key[32] | u64 payload bytes |
 *             u64 payload checksum
 *     payload n outputs (u64), then per graph output, in the graph's output order, 16 words:
 *             value index, dtype, rank, flags (1: s present, 2: ql and qh present, 4: tie present), dims[6],
 *             numel, qb_up and qb_down (their f64 bits), tie_rule, tie_scale (its f64 bits), tie_zp
 *             followed by its arrays of numel f64 each: v, e, then s, ql, qh, tie when flagged.
 *
 * The payload is a whole number of 8-byte words; its checksum is a four-lane multiply-rotate hash over the words
 * (64-bit, not cryptographic: it detects damage, and the key in the header detects a foreign file). It runs at
 * memory speed, where SHA-256 over hundreds of megabytes would cost more than many references.
 *
 * It must not change any number: it stores and returns the bits of par_ref_run's arrays.
 */
#include "refcache.h"
#include "core/paths.h"
#include "core/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PAR_GIT_REV
#define PAR_GIT_REV "unknown"
#endif

/* ---- SHA-256 ------------------------------------------------------------------------------------------------- */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, int r) { return (x >> r) | (x << (32 - r)); }

static void sha256_block(uint32_t *h, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

void par_sha256_init(par_sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->len = 0;
    s->n = 0;
}

void par_sha256_update(par_sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->len += len;
    if (s->n) {
        size_t take = 64 - s->n < len ? 64 - s->n : len;
        memcpy(s->buf + s->n, p, take);
        s->n += take;
        p += take;
        len -= take;
        if (s->n < 64) return;
        sha256_block(s->h, s->buf);
        s->n = 0;
    }
    for (; len >= 64; p += 64, len -= 64) sha256_block(s->h, p);
    memcpy(s->buf, p, len);
    s->n = len;
}

void par_sha256_final(par_sha256 *s, uint8_t digest[32])
{
    uint64_t bits = s->len * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (s->n < 56 ? 56 : 120) - s->n;
    uint8_t lenbe[8];
    for (int i = 0; i < 8; i++) lenbe[i] = (uint8_t)(bits >> (56 - 8 * i));
    par_sha256_update(s, pad, padlen);
    par_sha256_update(s, lenbe, 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(s->h[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        digest[4 * i + 3] = (uint8_t)s->h[i];
    }
}

/* ---- the payload checksum ------------------------------------------------------------------------------------ */

/* Four lanes, word i into lane i mod 4: acc = rotl(acc + w * P2, 31) * P1 (the round of the xxHash64 family); the
 * lanes are independent, so the loop runs at memory speed. Streamed: every update is a whole number of words. */
#define CK_P1 UINT64_C(0x9E3779B185EBCA87)
#define CK_P2 UINT64_C(0xC2B2AE3D27D4EB4F)
typedef struct cksum {
    uint64_t lane[4];
    uint64_t words;
} cksum;

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t ck_round(uint64_t acc, uint64_t w) { return rotl64(acc + w * CK_P2, 31) * CK_P1; }

static void ck_init(cksum *c)
{
    c->lane[0] = CK_P1 + CK_P2;
    c->lane[1] = CK_P2;
    c->lane[2] = 0;
    c->lane[3] = (uint64_t)0 - CK_P1;
    c->words = 0;
}

static void ck_update(cksum *c, const void *data, size_t bytes)
{
    const uint8_t *p = data;
    size_t n = bytes / 8, i = 0;
    uint64_t w;
    while (i < n && (c->words & 3)) { /* realign to lane 0 */
        memcpy(&w, p + 8 * i++, 8);
        c->lane[c->words & 3] = ck_round(c->lane[c->words & 3], w);
        c->words++;
    }
    const size_t start = i;
    uint64_t l0 = c->lane[0], l1 = c->lane[1], l2 = c->lane[2], l3 = c->lane[3];
    for (; i + 4 <= n; i += 4) {
        uint64_t w4[4];
        memcpy(w4, p + 8 * i, 32);
        l0 = ck_round(l0, w4[0]);
        l1 = ck_round(l1, w4[1]);
        l2 = ck_round(l2, w4[2]);
        l3 = ck_round(l3, w4[3]);
    }
    c->lane[0] = l0;
    c->lane[1] = l1;
    c->lane[2] = l2;
    c->lane[3] = l3;
    c->words += (uint64_t)(i - start);
    for (; i < n; i++) {
        memcpy(&w, p + 8 * i, 8);
        c->lane[c->words & 3] = ck_round(c->lane[c->words & 3], w);
        c->words++;
    }
}

static uint64_t ck_final(const cksum *c)
{
    uint64_t h = rotl64(c->lane[0], 1) + rotl64(c->lane[1], 7) + rotl64(c->lane[2], 12) + rotl64(c->lane[3], 18);
    h ^= c->words * CK_P1;
    h ^= h >> 33;
    h *= CK_P2;
    h ^= h >> 29;
    return h;
}

/* ---- the key ------------------------------------------------------------------------------------------------- */

static void h_i64(par_sha256 *s, int64_t v) { par_sha256_update(s, &v, sizeof v); }
static void h_f64(par_sha256 *s, double v) { par_sha256_update(s, &v, sizeof v); }
static void h_str(par_sha256 *s, const char *str)
{
    size_t n = str ? strlen(str) : 0;
    h_i64(s, str ? (int64_t)n : -1); /* length first: "ab"+"c" and "a"+"bc" differ */
    if (n) par_sha256_update(s, str, n);
}

static int rev_is_exact(const char *rev)
{
    size_t n = strlen(rev);
    return n > 0 && strcmp(rev, "unknown") != 0 && !(n >= 6 && strcmp(rev + n - 6, "-dirty") == 0);
}

/* What identifies the code that computes the reference: the revision, and for a tree with uncommitted changes the
 * executable file itself (a relinked binary has a new modification time). */
static void h_build(par_sha256 *s)
{
    h_str(s, "parity reference cache");
    h_i64(s, PAR_REFCACHE_FORMAT);
    h_str(s, PAR_GIT_REV);
#ifdef __VERSION__
    h_str(s, __VERSION__);
#endif
#if defined(__aarch64__) /* another architecture's libm: never share its references (build/aarch64 shares build/cache) */
    h_str(s, "aarch64");
#endif
    if (!rev_is_exact(PAR_GIT_REV)) {
        struct stat st;
        if (stat("/proc/self/exe", &st) == 0) {
            h_i64(s, (int64_t)st.st_size);
            h_i64(s, (int64_t)st.st_mtim.tv_sec);
            h_i64(s, (int64_t)st.st_mtim.tv_nsec);
            h_i64(s, (int64_t)st.st_ino);
        } else {
            h_i64(s, (int64_t)getpid()); /* no identity: never share across processes */
        }
    }
}

static void h_attr(par_sha256 *s, const par_attr *a)
{
    h_str(s, a->name);
    h_i64(s, a->type);
    switch (a->type) {
    case PAR_ATTR_INT: h_i64(s, a->i); break;
    case PAR_ATTR_FLOAT: h_f64(s, a->f); break;
    case PAR_ATTR_STRING: h_str(s, a->s); break;
    case PAR_ATTR_INTS:
        h_i64(s, a->count);
        for (int32_t k = 0; k < a->count; k++) h_i64(s, a->ints[k]);
        break;
    case PAR_ATTR_FLOATS:
        h_i64(s, a->count);
        for (int32_t k = 0; k < a->count; k++) h_f64(s, a->floats[k]);
        break;
    }
}

void par_refcache_key(const par_graph_desc *g, const par_prec *p, const void *const *inputs, uint8_t key[32])
{
    par_sha256 s;
    par_sha256_init(&s);
    h_build(&s);
    h_f64(&s, p->u);
    h_f64(&s, p->u_store);
    h_f64(&s, p->fn_ulps);
    h_f64(&s, p->u_in);
    h_i64(&s, p->requant);
    h_i64(&s, p->requant_exact);
    h_f64(&s, p->flush);
    if (p->stat_scale) h_str(&s, "stat_scale"); /* the companion's scales: a key of their own, the others unchanged */
    h_i64(&s, g->n_values);
    for (int32_t i = 0; i < g->n_values; i++) {
        const par_value *v = &g->values[i];
        h_i64(&s, v->kind);
        h_i64(&s, v->dtype);
        h_i64(&s, v->rank);
        for (int32_t d = 0; d < v->rank; d++) h_i64(&s, v->dims[d]);
        h_f64(&s, (double)v->scale);
        h_i64(&s, v->zero_point);
        h_i64(&s, v->quant_axis);
        if (v->quant_axis >= 0 && v->quant_axis < v->rank && v->channel_scales)
            par_sha256_update(&s, v->channel_scales, sizeof(float) * (size_t)v->dims[v->quant_axis]);
        if (v->kind == PAR_VALUE_CONST && v->data)
            par_sha256_update(&s, v->data, (size_t)v->numel * par_dtype_size(v->dtype));
    }
    h_i64(&s, g->n_nodes);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *n = &g->nodes[i];
        h_str(&s, n->op);
        h_i64(&s, n->n_inputs);
        for (int32_t k = 0; k < n->n_inputs; k++) h_i64(&s, n->inputs[k]);
        h_i64(&s, n->n_outputs);
        for (int32_t k = 0; k < n->n_outputs; k++) h_i64(&s, n->outputs[k]);
        h_i64(&s, n->n_attrs);
        for (int32_t k = 0; k < n->n_attrs; k++) h_attr(&s, &n->attrs[k]);
    }
    /* The declared algorithms change the budgets of their nodes: each non-direct one enters the key (tagged, so it
     * cannot alias what follows); a graph with none keeps the key it had before algorithms existed. */
    for (int32_t i = 0; p->algo && i < g->n_nodes; i++)
        if (p->algo[i] != PAR_ALGO_DIRECT) {
            h_str(&s, "algo");
            h_i64(&s, i);
            h_i64(&s, p->algo[i]);
        }
    /* So do the schemes declared per node (PAR_PROC_NODE_REQUANT) where they differ from the backend-wide one: each
     * enters the key, tagged; a graph with none keeps its key. */
    for (int32_t i = 0; p->requant_node && i < g->n_nodes; i++)
        if (p->requant_node[i] >= 0 && p->requant_node[i] != (int32_t)p->requant) {
            h_str(&s, "requant");
            h_i64(&s, i);
            h_i64(&s, p->requant_node[i]);
        }
    h_i64(&s, g->n_outputs);
    for (int32_t i = 0; i < g->n_outputs; i++) h_i64(&s, g->outputs[i]);
    h_i64(&s, g->n_inputs);
    for (int32_t i = 0; i < g->n_inputs; i++) {
        const par_value *v = &g->values[g->inputs[i]];
        h_i64(&s, g->inputs[i]);
        par_sha256_update(&s, inputs[i], (size_t)v->numel * par_dtype_size(v->dtype));
    }
    par_sha256_final(&s, key);
}

/* ---- the folder ---------------------------------------------------------------------------------------------- */

static par_refcache_stats stats;
static char dir_buf[PATH_MAX];
static int dir_state;                 /* 0 unresolved, 1 usable, -1 off or unusable */
static char dir_env[PATH_MAX + 16];   /* the PARITY_CACHE and PARITY_CACHE_DIR it was resolved for */

void par_refcache_get_stats(par_refcache_stats *s) { *s = stats; }


/* The default folder: <build>/cache where <build> is the folder named "build" that holds the executable, at most
 * two levels up (build/parity, build/tests/test_x, build/san/parity); else the build folder the executable runs from
 * (core/paths.h); else $XDG_CACHE_HOME/parity or ~/.cache/parity (an installed binary). */
static void default_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        for (int up = 0; up < 3; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash || slash == exe) break;
            *slash = 0; /* exe is now a folder */
            const char *base = strrchr(exe, '/');
            if (base && strcmp(base + 1, "build") == 0) {
                snprintf(out, len, "%s/cache", exe);
                return;
            }
        }
    }
    if (par_build_dir()[0]) {
        snprintf(out, len, "%s/cache", par_build_dir());
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) snprintf(out, len, "%s/parity", xdg);
    else if (home && *home) snprintf(out, len, "%s/.cache/parity", home);
    else snprintf(out, len, "/tmp/parity-cache-%ld", (long)getuid());
}

static void disable(const char *what, const char *path, int err, const char *case_id)
{
    if (dir_state == -1) return;
    dir_state = -1;
    fprintf(stderr, "parity: reference cache disabled: %s %s%s%s: %s (the run goes on without it)\n", what, path,
            case_id ? " for case " : "", case_id ? case_id : "", strerror(err));
}

const char *par_refcache_dir(void)
{
    const char *on = getenv("PARITY_CACHE"), *env = getenv("PARITY_CACHE_DIR");
    char now[sizeof dir_env];
    snprintf(now, sizeof now, "%s|%s", on ? on : "", env ? env : "");
    if (dir_state != 0 && strcmp(now, dir_env) == 0) return dir_state == 1 ? dir_buf : NULL;
    snprintf(dir_env, sizeof dir_env, "%s", now);
    dir_state = 0;
    if (on && strcmp(on, "0") == 0) {
        dir_state = -1;
        return NULL;
    }
    if (env && *env) snprintf(dir_buf, sizeof dir_buf, "%s", env);
    else default_dir(dir_buf, sizeof dir_buf);
    if (par_mkdir_p(dir_buf) != 0) {
        disable("cannot create", dir_buf, errno, NULL);
        return NULL;
    }
    if (access(dir_buf, W_OK | X_OK) != 0) {
        disable("cannot write", dir_buf, errno, NULL);
        return NULL;
    }
    dir_state = 1;
    return dir_buf;
}

static double env_num(const char *name, double def)
{
    const char *s = getenv(name);
    if (!s || !*s) return def;
    char *end;
    double v = strtod(s, &end);
    return (*end == 0 && v >= 0) ? v : def;
}

/* ---- the file ------------------------------------------------------------------------------------------------ */

static const char MAGIC[8] = {'P', 'A', 'R', 'R', 'E', 'F', 'C', 0};
#define ORDER_MARK 0x01020304u
#define REC_WORDS 16
#define F_S 1
#define F_Q 2
#define F_T 4

typedef struct file_hdr {
    char magic[8];
    uint32_t format;
    uint32_t order;
    uint8_t key[32];
    uint64_t payload_bytes;
    uint64_t checksum;
} file_hdr;

static void key_path(const char *dir, const uint8_t key[32], char *path, size_t len)
{
    char hex[65];
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
    snprintf(path, len, "%s/%s.ref", dir, hex);
}

static void rec_words(const par_rt *t, int32_t value, int64_t w[REC_WORDS])
{
    memset(w, 0, sizeof(int64_t) * REC_WORDS);
    w[0] = value;
    w[1] = t->dtype;
    w[2] = t->rank;
    w[3] = (t->s ? F_S : 0) | (t->ql && t->qh ? F_Q : 0) | (t->tie ? F_T : 0);
    for (int32_t d = 0; d < t->rank && d < PAR_MAX_RANK; d++) w[4 + d] = t->dims[d];
    w[10] = t->numel;
    memcpy(&w[11], &t->qb_up, 8);
    memcpy(&w[12], &t->qb_down, 8);
    w[13] = t->tie_rule;
    memcpy(&w[14], &t->tie_scale, 8);
    w[15] = t->tie_zp;
}

/* The payload as a list of pieces (pointer, bytes), in file order; the caller frees *pieces and *words. */
typedef struct piece {
    const void *p;
    size_t bytes;
} piece;

static int payload_pieces(const par_graph_desc *g, const par_ref_result *r, piece **pieces, int64_t **words,
                          size_t *n_pieces, uint64_t *total)
{
    size_t np = 1 + 7 * (size_t)g->n_outputs;
    piece *pc = malloc(sizeof *pc * np);
    int64_t *w = malloc(sizeof *w * (1 + REC_WORDS * (size_t)g->n_outputs));
    if (!pc || !w) {
        free(pc);
        free(w);
        return -1;
    }
    size_t k = 0;
    uint64_t sum = 0;
    w[0] = g->n_outputs;
    pc[k++] = (piece){w, 8};
    for (int32_t o = 0; o < g->n_outputs; o++) {
        const par_rt *t = &r->values[g->outputs[o]];
        int64_t *rw = w + 1 + REC_WORDS * (size_t)o;
        rec_words(t, g->outputs[o], rw);
        size_t ab = sizeof(double) * (size_t)t->numel;
        pc[k++] = (piece){rw, 8 * REC_WORDS};
        pc[k++] = (piece){t->v, ab};
        pc[k++] = (piece){t->e, ab};
        if (rw[3] & F_S) pc[k++] = (piece){t->s, ab};
        if (rw[3] & F_Q) {
            pc[k++] = (piece){t->ql, ab};
            pc[k++] = (piece){t->qh, ab};
        }
        if (rw[3] & F_T) pc[k++] = (piece){t->tie, ab};
    }
    for (size_t i = 0; i < k; i++) sum += pc[i].bytes;
    *pieces = pc;
    *words = w;
    *n_pieces = k;
    *total = sum;
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n > (size_t)1 << 30 ? (size_t)1 << 30 : n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = ENOSPC;
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        ssize_t r = read(fd, b, n > (size_t)1 << 30 ? (size_t)1 << 30 : n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Store the outputs of r under key: temporary file, then rename. A failure disables the cache (one warning). */
static void store(const char *dir, const uint8_t key[32], const par_graph_desc *g, const par_ref_result *r,
                  const char *case_id)
{
    piece *pc = NULL;
    int64_t *w = NULL;
    size_t np = 0;
    uint64_t total = 0;
    if (payload_pieces(g, r, &pc, &w, &np, &total) != 0) return;
    file_hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    h.format = PAR_REFCACHE_FORMAT;
    h.order = ORDER_MARK;
    memcpy(h.key, key, 32);
    h.payload_bytes = total;
    cksum ck;
    ck_init(&ck);
    for (size_t i = 0; i < np; i++) ck_update(&ck, pc[i].p, pc[i].bytes);
    h.checksum = ck_final(&ck);

    char path[PATH_MAX + 80], tmp[PATH_MAX + 120];
    static unsigned serial;
    key_path(dir, key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), serial++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int err = 0;
    if (fd < 0) {
        err = errno;
    } else {
        if (write_all(fd, &h, sizeof h) != 0) err = errno;
        for (size_t i = 0; i < np && !err; i++)
            if (write_all(fd, pc[i].p, pc[i].bytes) != 0) err = errno;
        if (close(fd) != 0 && !err) err = errno;
        if (!err && rename(tmp, path) != 0) err = errno;
        if (err) unlink(tmp);
    }
    if (err) disable("cannot write to", dir, err, case_id);
    else stats.stores++;
    free(pc);
    free(w);
}

/* A result shaped like the graph with no arrays: every value's dtype, shape and numel. */
static par_ref_result *empty_result(const par_graph_desc *g)
{
    par_ref_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->n_values = g->n_values;
    r->values = calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *r->values);
    if (!r->values) {
        free(r);
        return NULL;
    }
    for (int32_t i = 0; i < g->n_values; i++) {
        const par_value *v = &g->values[i];
        par_rt *t = &r->values[i];
        t->dtype = v->dtype;
        t->rank = v->rank;
        memcpy(t->dims, v->dims, sizeof t->dims);
        t->numel = v->numel;
    }
    return r;
}

static int is_output(const par_graph_desc *g, int32_t v)
{
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) return 1;
    return 0;
}

/* Free the arrays of every value that is not a graph output. */
static void strip(const par_graph_desc *g, par_ref_result *r)
{
    for (int32_t i = 0; i < r->n_values; i++)
        if (!is_output(g, i)) par_rt_free(&r->values[i]);
}

/* Read the result stored under key; NULL on a miss (absent file, or damaged: then stats.bad_files counts it). */
static par_ref_result *load(const char *dir, const uint8_t key[32], const par_graph_desc *g)
{
    char path[PATH_MAX + 80];
    key_path(dir, key, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    par_ref_result *r = NULL;
    file_hdr h;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof h && read_all(fd, &h, sizeof h) == 0 &&
             memcmp(h.magic, MAGIC, sizeof MAGIC) == 0 && h.format == PAR_REFCACHE_FORMAT && h.order == ORDER_MARK &&
             memcmp(h.key, key, 32) == 0 && h.payload_bytes == (uint64_t)st.st_size - sizeof h &&
             h.payload_bytes % 8 == 0;
    cksum ck;
    ck_init(&ck);
    int64_t n_out = -1;
    if (ok) ok = read_all(fd, &n_out, 8) == 0 && n_out == g->n_outputs;
    if (ok) {
        ck_update(&ck, &n_out, 8);
        r = empty_result(g);
        ok = r != NULL;
    }
    uint64_t left = ok ? h.payload_bytes - 8 : 0;
    for (int32_t o = 0; o < g->n_outputs && ok; o++) {
        int64_t w[REC_WORDS];
        ok = left >= sizeof w && read_all(fd, w, sizeof w) == 0;
        if (!ok) break;
        left -= sizeof w;
        ck_update(&ck, w, sizeof w);
        int32_t vi = g->outputs[o];
        const par_value *v = &g->values[vi];
        par_rt *t = &r->values[vi];
        ok = w[0] == vi && w[1] == v->dtype && w[2] == v->rank && w[10] == v->numel && (w[3] & ~(F_S | F_Q | F_T)) == 0;
        for (int32_t d = 0; d < v->rank && ok; d++) ok = w[4 + d] == v->dims[d];
        if (!ok) break;
        if (t->v) { /* an output listed twice: stored twice, read once */
            size_t skip = sizeof(double) * (size_t)v->numel *
                          (2 + (w[3] & F_S ? 1 : 0) + (w[3] & F_Q ? 2 : 0) + (w[3] & F_T ? 1 : 0));
            double *tmpv = malloc(skip ? skip : 1);
            ok = tmpv && left >= skip && read_all(fd, tmpv, skip) == 0;
            if (ok) ck_update(&ck, tmpv, skip);
            left -= ok ? skip : 0;
            free(tmpv);
            continue;
        }
        memcpy(&t->qb_up, &w[11], 8);
        memcpy(&t->qb_down, &w[12], 8);
        t->tie_rule = (int32_t)w[13];
        memcpy(&t->tie_scale, &w[14], 8);
        t->tie_zp = (int32_t)w[15];
        size_t ab = sizeof(double) * (size_t)v->numel;
        double **arr[6] = {&t->v, &t->e, (w[3] & F_S) ? &t->s : NULL, (w[3] & F_Q) ? &t->ql : NULL,
                           (w[3] & F_Q) ? &t->qh : NULL, (w[3] & F_T) ? &t->tie : NULL};
        for (int a = 0; a < 6 && ok; a++) {
            if (!arr[a]) continue;
            *arr[a] = malloc(ab ? ab : 1);
            ok = *arr[a] && left >= ab && read_all(fd, *arr[a], ab) == 0;
            if (ok) {
                ck_update(&ck, *arr[a], ab);
                left -= ab;
            }
        }
    }
    if (ok) ok = left == 0 && ck_final(&ck) == h.checksum;
    close(fd);
    if (!ok) {
        par_ref_result_destroy(r);
        stats.bad_files++;
        return NULL;
    }
    return r;
}

/* CPU time of this thread: what recomputing costs, whatever else the machine runs at the same time. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

par_status par_refcache_run(const par_case *c, const par_graph_desc *g, const par_prec *p, const void *const *inputs,
                            par_ref_result **out, par_msg *msg)
{
    *out = NULL;
    const char *dir = par_refcache_dir();
    uint8_t key[32];
    if (dir) {
        par_refcache_key(g, p, inputs, key);
        par_ref_result *hit = load(dir, key, g);
        if (hit) {
            stats.hits++;
            *out = hit;
            return PAR_OK;
        }
        stats.misses++;
    }
    double t0 = cpu_s();
    par_status st = par_ref_run(g, p, inputs, out, msg);
    if (st != PAR_OK) return st;
    double ms = (cpu_s() - t0) * 1e3;
    strip(g, *out);
    if (!dir) return PAR_OK;
    double bytes = 0;
    for (int32_t i = 0; i < g->n_outputs; i++) {
        const par_rt *t = &(*out)->values[g->outputs[i]];
        bytes += 8.0 * (double)t->numel * (2 + (t->s != NULL) + 2 * (t->ql && t->qh) + (t->tie != NULL));
    }
    if (ms < env_num("PARITY_CACHE_MIN_MS", 20) || bytes > env_num("PARITY_CACHE_MAX_MB", 512) * 1048576.0) {
        stats.skipped++;
        return PAR_OK;
    }
    store(dir, key, g, *out, c ? c->id : NULL);
    return PAR_OK;
}
