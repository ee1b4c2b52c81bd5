/*
 * test_refcache.c - the on-disk reference cache (runner/refcache.c): SHA-256 against the FIPS 180-4 examples; a hit
 * returns the bits a fresh par_ref_run computes (values, budgets, scales, labelled ranges, bias bounds) for a float
 * graph and for a quantized one; every ingredient of the key (precision profile, a constant byte, an attribute, the
 * input data) changes it; a damaged file (a flipped byte, a truncation, a foreign header) is a miss and is rewritten;
 * PARITY_CACHE=0 writes nothing; an unusable folder costs the cache, not the result; a reader racing a writer never
 * sees half a file.
 *
 * Every test works in its own temporary folder (PARITY_CACHE_DIR) with PARITY_CACHE_MIN_MS=0, so that the tiny
 * graphs here are stored at all; it must not touch the build's own cache folder.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/requant.h"
#include "runner/refcache.h"
#include "tmain.h"

/* ---- fixtures --------------------------------------------------------------------------------------------- */

static char tmpdir[256];

static void fresh_dir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/parity_refcache_test.XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
    setenv("PARITY_CACHE_DIR", tmpdir, 1);
    setenv("PARITY_CACHE_MIN_MS", "0", 1);
    unsetenv("PARITY_CACHE");
    unsetenv("PARITY_CACHE_MAX_MB");
}

/* The .ref files in the folder (temporary files are counted too: none may be left behind); *last gets one path. */
static int count_files(char *last, size_t len)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        n++;
        if (last) snprintf(last, len, "%s/%s", tmpdir, e->d_name);
    }
    closedir(d);
    return n;
}

static void remove_dir(void)
{
    char path[512];
    while (count_files(path, sizeof path) > 0) unlink(path);
    rmdir(tmpdir);
}

typedef struct variant {
    uint64_t seed;   /* the case seed: the input data */
    int pad;         /* conv2d padding (an attribute) */
    int flip_const;  /* flip one byte of the weights */
} variant;

/* x [1,3,6,6] (generated from the case seed) -> conv2d(w [4,3,3,3] given bytes, b [4]) -> relu; outputs: the relu
 * and the conv (two outputs, one of them also an intermediate). */
static par_case *float_case(variant v)
{
    static float w[4 * 3 * 3 * 3];
    for (int i = 0; i < 108; i++) w[i] = (float)((i * 37 % 101) - 50) / 64.0f;
    if (v.flip_const) ((uint8_t *)w)[4 * 17] ^= 1; /* the lowest mantissa bit of w[17] */
    static const float b[4] = {0.25f, -0.5f, 0.125f, 0};
    par_case *c = par_case_create("refcache_float", v.seed);
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, 3, 6, 6},
                               (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1});
    int32_t wi = par_case_const_data(c, "w", PAR_DTYPE_F32, 4, (int64_t[]){4, 3, 3, 3}, w);
    int32_t bi = par_case_const_data(c, "b", PAR_DTYPE_F32, 1, (int64_t[]){4}, b);
    par_attr a[] = {par_a_ints("padding", 4, (int64_t[]){v.pad, v.pad, v.pad, v.pad})};
    int32_t y = par_case_node(c, "conv2d", 3, (int32_t[]){x, wi, bi}, 1, a, NULL);
    int32_t z = par_case_node(c, "relu", 1, &y, 0, NULL, NULL);
    par_case_output(c, z);
    par_case_output(c, y);
    CU_ASSERT_FATAL(par_case_finish(c) == PAR_OK);
    return c;
}

/* qu8 x, y [2,16] -> add -> qu8: a quantized output, with labelled ranges (ql, qh), bias bounds and, its ratios
 * being 1/2, exact ties (docs/quantization.md, "Ties"). */
static par_case *quant_case(void)
{
    par_case *c = par_case_create("refcache_quant", 7);
    int32_t x = par_case_input(c, "x", PAR_DTYPE_QU8, 2, (int64_t[]){2, 16}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = 0, .b = 255});
    int32_t y = par_case_input(c, "y", PAR_DTYPE_QU8, 2, (int64_t[]){2, 16}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = 0, .b = 255});
    par_case_quant(c, x, 0.05f, 128);
    par_case_quant(c, y, 0.05f, 120);
    par_out_spec o = {.name = "z", .dtype = PAR_DTYPE_QU8, .scale = 0.1f, .zero_point = 125};
    int32_t z = par_case_node(c, "add", 2, (int32_t[]){x, y}, 0, NULL, &o);
    par_case_output(c, z);
    CU_ASSERT_FATAL(par_case_finish(c) == PAR_OK);
    return c;
}

static int same_array(const double *a, const double *b, int64_t n)
{
    if (!a || !b) return a == b;
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

/* The cached result equals a fresh par_ref_run bit for bit on every output; other values carry no arrays. */
static void check_same(const par_graph_desc *g, const par_ref_result *got, const par_ref_result *want)
{
    CU_ASSERT_EQUAL_FATAL(got->n_values, g->n_values);
    for (int32_t i = 0; i < g->n_values; i++) {
        const par_rt *a = &got->values[i], *b = &want->values[i];
        int out = 0;
        for (int32_t k = 0; k < g->n_outputs; k++) out |= g->outputs[k] == i;
        CU_ASSERT_EQUAL(a->numel, g->values[i].numel);
        CU_ASSERT_EQUAL(a->dtype, g->values[i].dtype);
        if (!out) {
            CU_ASSERT(a->v == NULL && a->e == NULL && a->s == NULL && a->ql == NULL && a->qh == NULL &&
                      a->tie == NULL);
            continue;
        }
        CU_ASSERT_EQUAL(a->rank, b->rank);
        CU_ASSERT(memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0);
        CU_ASSERT_PTR_NOT_NULL(a->v);
        CU_ASSERT(same_array(a->v, b->v, a->numel));
        CU_ASSERT(same_array(a->e, b->e, a->numel));
        CU_ASSERT(same_array(a->s, b->s, a->numel));
        CU_ASSERT(same_array(a->ql, b->ql, a->numel));
        CU_ASSERT(same_array(a->qh, b->qh, a->numel));
        CU_ASSERT(memcmp(&a->qb_up, &b->qb_up, sizeof a->qb_up) == 0);
        CU_ASSERT(memcmp(&a->qb_down, &b->qb_down, sizeof a->qb_down) == 0);
        CU_ASSERT(same_array(a->tie, b->tie, a->numel));
        CU_ASSERT(a->tie_rule == b->tie_rule && a->tie_zp == b->tie_zp &&
                  memcmp(&a->tie_scale, &b->tie_scale, sizeof a->tie_scale) == 0);
    }
}

/* Run case c through the cache with profile p; check the result against a fresh reference; return the stats'
 * change in *d. */
static void cached_run(const par_case *c, const par_prec *p, par_refcache_stats *d)
{
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    void **in = NULL;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(par_case_make_inputs(c, &in, &m) == PAR_OK);
    par_refcache_stats s0, s1;
    par_refcache_get_stats(&s0);
    par_ref_result *got = NULL, *want = NULL;
    CU_ASSERT_FATAL(par_refcache_run(c, g, p, (const void *const *)in, &got, &m) == PAR_OK);
    par_refcache_get_stats(&s1);
    CU_ASSERT_FATAL(par_ref_run(g, p, (const void *const *)in, &want, &m) == PAR_OK);
    check_same(g, got, want);
    par_ref_result_destroy(got);
    par_ref_result_destroy(want);
    par_case_free_inputs(c, in);
    d->hits = s1.hits - s0.hits;
    d->misses = s1.misses - s0.misses;
    d->stores = s1.stores - s0.stores;
    d->skipped = s1.skipped - s0.skipped;
    d->bad_files = s1.bad_files - s0.bad_files;
}

#define EXPECT(d, h, mi, st, bad)                                                                                  \
    do {                                                                                                           \
        CU_ASSERT_EQUAL((d).hits, h);                                                                              \
        CU_ASSERT_EQUAL((d).misses, mi);                                                                           \
        CU_ASSERT_EQUAL((d).stores, st);                                                                           \
        CU_ASSERT_EQUAL((d).bad_files, bad);                                                                       \
    } while (0)

/* ---- tests ------------------------------------------------------------------------------------------------- */

static void hex(const uint8_t *d, char *out)
{
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void test_sha256(void)
{
    static const struct {
        const char *msg;
        const char *digest;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        par_sha256 s;
        uint8_t d[32];
        char h[65];
        par_sha256_init(&s);
        par_sha256_update(&s, v[i].msg, strlen(v[i].msg));
        par_sha256_final(&s, d);
        hex(d, h);
        CU_ASSERT_STRING_EQUAL(h, v[i].digest);
    }
    /* one million 'a', fed in uneven pieces: the buffering across block boundaries */
    par_sha256 s;
    uint8_t d[32];
    char h[65], chunk[1024]; /* pieces of 1 to 1009 bytes */
    memset(chunk, 'a', sizeof chunk);
    par_sha256_init(&s);
    size_t left = 1000000;
    for (size_t k = 1; left > 0; k = k % 997 + 13) {
        size_t n = k < left ? k : left;
        par_sha256_update(&s, chunk, n);
        left -= n;
    }
    par_sha256_final(&s, d);
    hex(d, h);
    CU_ASSERT_STRING_EQUAL(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_hit_is_bit_identical(void)
{
    fresh_dir();
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_case *c = float_case((variant){.seed = 1, .pad = 1});
    par_refcache_stats d;
    cached_run(c, &p, &d);
    EXPECT(d, 0, 1, 1, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 1);
    cached_run(c, &p, &d);
    EXPECT(d, 1, 0, 0, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 1);

    /* a quantized output: labelled ranges and bias bounds come back too, under each scheme */
    par_case *q = quant_case();
    for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++) {
        par_prec pq = par_prec_for(PAR_ARITH_F32);
        pq.requant = (par_requant)s;
        cached_run(q, &pq, &d);
        EXPECT(d, 0, 1, 1, 0);
        cached_run(q, &pq, &d);
        EXPECT(d, 1, 0, 0, 0);
    }
    /* the quantized output really has ranges (so the comparison above covered them) */
    void **in = NULL;
    par_msg m;
    par_ref_result *r = NULL;
    CU_ASSERT_FATAL(par_case_make_inputs(q, &in, &m) == PAR_OK);
    CU_ASSERT_FATAL(par_refcache_run(q, par_graph_desc_of(q->graph), &p, (const void *const *)in, &r, &m) == PAR_OK);
    const par_rt *z = &r->values[par_graph_desc_of(q->graph)->outputs[0]];
    CU_ASSERT_PTR_NOT_NULL(z->ql);
    CU_ASSERT_PTR_NOT_NULL(z->qh);
    CU_ASSERT_PTR_NOT_NULL(z->tie);
    par_ref_result_destroy(r);
    par_case_free_inputs(q, in);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 1 + PAR_REQUANT_N_SCHEMES);
    par_case_destroy(q);
    par_case_destroy(c);
    remove_dir();
}

static void test_key_ingredients_miss(void)
{
    fresh_dir();
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_refcache_stats d;
    par_case *base = float_case((variant){.seed = 1, .pad = 1});
    cached_run(base, &p, &d);
    EXPECT(d, 0, 1, 1, 0);

    /* another precision profile: f16 storage, f16 arithmetic, another elementary-function allowance */
    par_prec pf = par_prec_for(PAR_ARITH_F16_STORAGE);
    cached_run(base, &pf, &d);
    EXPECT(d, 0, 1, 1, 0);
    pf = par_prec_for(PAR_ARITH_F16);
    cached_run(base, &pf, &d);
    EXPECT(d, 0, 1, 1, 0);
    pf = p;
    pf.fn_ulps = 16;
    cached_run(base, &pf, &d);
    EXPECT(d, 0, 1, 1, 0);
    pf = p;
    pf.requant_exact = 1;
    cached_run(base, &pf, &d);
    EXPECT(d, 0, 1, 1, 0);

    /* one constant bit, one attribute, the input data */
    par_case *cc = float_case((variant){.seed = 1, .pad = 1, .flip_const = 1});
    cached_run(cc, &p, &d);
    EXPECT(d, 0, 1, 1, 0);
    par_case *ca = float_case((variant){.seed = 1, .pad = 0});
    cached_run(ca, &p, &d);
    EXPECT(d, 0, 1, 1, 0);
    par_case *ci = float_case((variant){.seed = 2, .pad = 1});
    cached_run(ci, &p, &d);
    EXPECT(d, 0, 1, 1, 0);

    /* the keys themselves differ, and the base is still a hit */
    uint8_t k[4][32];
    void **in = NULL;
    par_msg m;
    par_case *cs[4] = {base, cc, ca, ci};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_FATAL(par_case_make_inputs(cs[i], &in, &m) == PAR_OK);
        par_refcache_key(par_graph_desc_of(cs[i]->graph), &p, (const void *const *)in, k[i]);
        par_case_free_inputs(cs[i], in);
    }
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) CU_ASSERT(memcmp(k[i], k[j], 32) != 0);
    cached_run(base, &p, &d);
    EXPECT(d, 1, 0, 0, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 8);
    par_case_destroy(base);
    par_case_destroy(cc);
    par_case_destroy(ca);
    par_case_destroy(ci);
    remove_dir();
}

/* Damage the one file in the folder with f, then expect a miss that rewrites it, then a hit. */
static void damaged(void (*f)(const char *path))
{
    fresh_dir();
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_refcache_stats d;
    par_case *c = quant_case();
    cached_run(c, &p, &d);
    EXPECT(d, 0, 1, 1, 0);
    char path[512];
    CU_ASSERT_FATAL(count_files(path, sizeof path) == 1);
    struct stat before;
    CU_ASSERT_FATAL(stat(path, &before) == 0);
    f(path);
    cached_run(c, &p, &d);
    EXPECT(d, 0, 1, 1, 1);
    struct stat after;
    CU_ASSERT_FATAL(stat(path, &after) == 0);
    CU_ASSERT_EQUAL(after.st_size, before.st_size); /* rewritten whole */
    cached_run(c, &p, &d);
    EXPECT(d, 1, 0, 0, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 1);
    par_case_destroy(c);
    remove_dir();
}

static void flip_at(const char *path, off_t where)
{
    int fd = open(path, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    struct stat st;
    fstat(fd, &st);
    if (where < 0) where += st.st_size;
    uint8_t b = 0;
    CU_ASSERT(pread(fd, &b, 1, where) == 1);
    b ^= 0x10;
    CU_ASSERT(pwrite(fd, &b, 1, where) == 1);
    close(fd);
}

static void flip_payload_end(const char *path) { flip_at(path, -3); }        /* inside qh, a double's byte */
/* the header is 64 bytes, then the output count (8): byte 5 of the first record's value index */
static void flip_payload_mid(const char *path) { flip_at(path, 64 + 8 + 5); }
static void flip_magic(const char *path) { flip_at(path, 2); }
static void truncate_half(const char *path)
{
    struct stat st;
    stat(path, &st);
    CU_ASSERT(truncate(path, st.st_size / 2) == 0);
}
static void truncate_header(const char *path) { CU_ASSERT(truncate(path, 20) == 0); }

static void test_corrupted_files_miss(void)
{
    damaged(flip_payload_end);
    damaged(flip_payload_mid);
    damaged(flip_magic);
    damaged(truncate_half);
    damaged(truncate_header);
}

static void test_disabled_writes_nothing(void)
{
    fresh_dir();
    setenv("PARITY_CACHE", "0", 1);
    CU_ASSERT_PTR_NULL(par_refcache_dir());
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_refcache_stats d;
    par_case *c = float_case((variant){.seed = 3, .pad = 1});
    cached_run(c, &p, &d);
    cached_run(c, &p, &d);
    EXPECT(d, 0, 0, 0, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 0);
    /* on again: the same folder is used */
    unsetenv("PARITY_CACHE");
    cached_run(c, &p, &d);
    EXPECT(d, 0, 1, 1, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 1);
    par_case_destroy(c);
    remove_dir();
}

static void test_thresholds_skip(void)
{
    fresh_dir();
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_refcache_stats d;
    par_case *c = float_case((variant){.seed = 4, .pad = 1});
    setenv("PARITY_CACHE_MIN_MS", "100000", 1); /* computed faster than that: not stored */
    cached_run(c, &p, &d);
    EXPECT(d, 0, 1, 0, 0);
    CU_ASSERT_EQUAL(d.skipped, 1);
    setenv("PARITY_CACHE_MIN_MS", "0", 1);
    setenv("PARITY_CACHE_MAX_MB", "0.0001", 1); /* 105 bytes: smaller than any result */
    cached_run(c, &p, &d);
    EXPECT(d, 0, 1, 0, 0);
    CU_ASSERT_EQUAL(d.skipped, 1);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 0);
    par_case_destroy(c);
    remove_dir();
}

static void test_unusable_folder(void)
{
    fresh_dir();
    /* a folder below a regular file can never be created, even by root */
    char file[300], below[320];
    snprintf(file, sizeof file, "%s/plain", tmpdir);
    FILE *f = fopen(file, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    snprintf(below, sizeof below, "%s/cache", file);
    setenv("PARITY_CACHE_DIR", below, 1);
    CU_ASSERT_PTR_NULL(par_refcache_dir());
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_refcache_stats d;
    par_case *c = float_case((variant){.seed = 5, .pad = 1});
    cached_run(c, &p, &d); /* the result is still right (checked inside) */
    EXPECT(d, 0, 0, 0, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 1); /* the plain file only */
    par_case_destroy(c);
    setenv("PARITY_CACHE_DIR", tmpdir, 1);
    remove_dir();
}

/* A process stores the same key over and over, removing the file before each store, while this one opens it in a
 * tight loop: it must only ever find no file or a whole one (a file written in place would show up short). */
static void test_concurrent_writers(void)
{
    fresh_dir();
    par_prec p = par_prec_for(PAR_ARITH_F32);
    /* a relu of 32,768 elements: a 786 kB file, written in several pieces, so a reader racing a writer that wrote
     * in place would often catch it half-way */
    par_case *c = par_case_create("refcache_race", 9);
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 2, (int64_t[]){128, 256}, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1});
    par_case_output(c, par_case_node(c, "relu", 1, &x, 0, NULL, NULL));
    CU_ASSERT_FATAL(par_case_finish(c) == PAR_OK);
    par_refcache_stats d;
    cached_run(c, &p, &d);
    char path[512];
    CU_ASSERT_FATAL(count_files(path, sizeof path) == 1);
    struct stat whole;
    CU_ASSERT_FATAL(stat(path, &whole) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        par_refcache_stats s0, s1;
        par_refcache_get_stats(&s0);
        for (int i = 0; i < 60; i++) {
            unlink(path);
            cached_run(c, &p, &d);
        }
        par_refcache_get_stats(&s1);
        _exit(s1.bad_files == s0.bad_files && s1.stores > s0.stores ? 0 : 1);
    }
    /* the reader: every time the file exists, it is whole (its size is the one the first store wrote) */
    int64_t opened = 0, short_files = 0;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0) {
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        struct stat st;
        if (fstat(fd, &st) == 0) {
            opened++;
            short_files += st.st_size != whole.st_size;
        }
        close(fd);
    }
    CU_ASSERT(done == pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT_EQUAL(short_files, 0);
    CU_ASSERT(opened > 0);
    /* and a read through the cache after the race is a hit */
    cached_run(c, &p, &d);
    EXPECT(d, 1, 0, 0, 0);
    CU_ASSERT_EQUAL(count_files(NULL, 0), 1); /* no temporary file left behind */
    par_case_destroy(c);
    remove_dir();
}

static const CU_TestInfo tests[] = {
    {"sha256", test_sha256},
    {"hit_is_bit_identical", test_hit_is_bit_identical},
    {"key_ingredients_miss", test_key_ingredients_miss},
    {"corrupted_files_miss", test_corrupted_files_miss},
    {"disabled_writes_nothing", test_disabled_writes_nothing},
    {"thresholds_skip", test_thresholds_skip},
    {"unusable_folder", test_unusable_folder},
    {"concurrent_writers", test_concurrent_writers},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("refcache", tests)
