/*
 * test_sweep.c - the sweep generator: suite sizes, unique IDs, every op covered by quick, quick a subset of full,
 * cases that build (a fixed sample of each suite), determinism of the bytes an ID yields, and the want() filter.
 *
 * It must not depend on the reference kernels or any backend: only on building cases.
 */
#include <stdlib.h>
#include <string.h>

#include "core/case.h"
#include "core/prng.h"
#include "cases/sweep.h"
#include "tmain.h"

/* A set of strings (IDs), open addressing. */
typedef struct strset {
    char **s;
    size_t cap, n;
} strset;

static uint64_t hash_of(const char *s)
{
    return par_hash_str(s, 12345) | 1;
}

static int set_add(strset *t, const char *s) /* 1 if new */
{
    if (t->n * 2 >= t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 1024;
        char **ns = calloc(ncap, sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->s[i]) {
                size_t j = hash_of(t->s[i]) & (ncap - 1);
                while (ns[j]) j = (j + 1) & (ncap - 1);
                ns[j] = t->s[i];
            }
        free(t->s);
        t->s = ns;
        t->cap = ncap;
    }
    size_t j = hash_of(s) & (t->cap - 1);
    while (t->s[j]) {
        if (strcmp(t->s[j], s) == 0) return 0;
        j = (j + 1) & (t->cap - 1);
    }
    t->s[j] = strdup(s);
    t->n++;
    return 1;
}

static int set_has(const strset *t, const char *s)
{
    if (!t->cap) return 0;
    size_t j = hash_of(s) & (t->cap - 1);
    while (t->s[j]) {
        if (strcmp(t->s[j], s) == 0) return 1;
        j = (j + 1) & (t->cap - 1);
    }
    return 0;
}

static void set_free(strset *t)
{
    for (size_t i = 0; i < t->cap; i++) free(t->s[i]);
    free(t->s);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Collecting IDs
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct collect {
    strset ids;
    int64_t n, dups, bad_index, bad_prefix;
    int64_t last_index;
    int64_t per_op[PAR_OP_COUNT];
    int64_t hazards_per_op[PAR_OP_COUNT]; /* the IDs with hazard inputs ("in=hazard:") */
    int64_t built, errors;
    char first_dup[256];
} collect;

static int want_none(void *user, int64_t index, const char *id, const char *op)
{
    collect *k = user;
    if (index <= k->last_index) k->bad_index++;
    k->last_index = index;
    int fresh = set_add(&k->ids, id);
    if (fresh == 0 && !k->dups++) snprintf(k->first_dup, sizeof k->first_dup, "%s", id);
    /* the ID starts with "<op>(" and ends with "#seed=N" */
    size_t lo = strlen(op);
    if (strncmp(id, op, lo) != 0 || id[lo] != '(' || !strstr(id, ")#seed=")) k->bad_prefix++;
    const par_op_info *info = par_op_find(op);
    if (info) k->per_op[info->id]++;
    if (info && strstr(id, "in=hazard:")) k->hazards_per_op[info->id]++;
    k->n++;
    return 0;
}

static void build_count(void *user, int64_t index, par_case *c)
{
    (void)index;
    ((collect *)user)->built++;
    par_case_destroy(c);
}

static void error_count(void *user, const char *id, const par_msg *msg)
{
    collect *k = user;
    if (!k->errors++) fprintf(stderr, "sweep error: %s: %s\n", id, msg ? msg->text : "?");
}

static collect *walk_ids(const char *suite, int64_t *ret)
{
    collect *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    k->last_index = -1;
    par_sweep_visit v = {want_none, build_count, error_count, k, 7, NULL};
    *ret = par_sweep_walk(suite, &v);
    return k;
}

static void collect_free(collect *k)
{
    if (!k) return;
    set_free(&k->ids);
    free(k);
}

static void test_counts_and_unique_ids(void)
{
    int64_t rq, rf;
    collect *q = walk_ids("quick", &rq), *f = walk_ids("full", &rf);
    CU_ASSERT_FATAL(q != NULL && f != NULL);
    PAR_TEST_NOTE("\n  quick: %lld cases, full: %lld cases\n", (long long)q->n, (long long)f->n);
    CU_ASSERT(rq == q->n);
    CU_ASSERT(rf == f->n);
    CU_ASSERT(q->n >= 1500);
    CU_ASSERT(f->n >= 10000);
    CU_ASSERT(q->dups == 0);
    CU_ASSERT(f->dups == 0);
    if (q->dups || f->dups) fprintf(stderr, "duplicate ID: %s %s\n", q->first_dup, f->first_dup);
    CU_ASSERT(q->bad_index == 0 && f->bad_index == 0);
    CU_ASSERT(q->bad_prefix == 0 && f->bad_prefix == 0);
    /* want() rejected everything: nothing was built, and nothing failed */
    CU_ASSERT(q->built == 0 && f->built == 0);
    CU_ASSERT(q->errors == 0 && f->errors == 0);

    /* every op of the table has cases in quick; quick is a subset of full */
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        if (q->per_op[i] == 0) fprintf(stderr, "op %s has no quick case\n", par_op_get((par_op_id)i)->name);
        CU_ASSERT(q->per_op[i] > 0);
        CU_ASSERT(f->per_op[i] >= q->per_op[i]);
    }
    /* every op whose NaN / Inf behaviour is defined (PAR_OPF_NONFINITE) has hazard cases in quick: the table's flag
     * and cases/ops/hazard.c's rows are two lists, and this keeps them one */
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const par_op_info *info = par_op_get((par_op_id)i);
        if (!(info->flags & PAR_OPF_NONFINITE) || q->hazards_per_op[i] > 0) continue;
        fprintf(stderr, "op %s is flagged PAR_OPF_NONFINITE but has no hazard row (cases/ops/hazard.c)\n", info->name);
        CU_FAIL("an op flagged PAR_OPF_NONFINITE without hazard cases");
    }
    int64_t missing = 0;
    for (size_t i = 0; i < q->ids.cap; i++)
        if (q->ids.s[i] && !set_has(&f->ids, q->ids.s[i]) && !missing++)
            fprintf(stderr, "quick ID not in full: %s\n", q->ids.s[i]);
    CU_ASSERT(missing == 0);
    collect_free(q);
    collect_free(f);
}

static void test_unknown_suite(void)
{
    collect k;
    memset(&k, 0, sizeof k);
    par_sweep_visit v = {want_none, build_count, error_count, &k, 1, NULL};
    CU_ASSERT(par_sweep_walk("nightly-typo", &v) == -1);
    CU_ASSERT(par_sweep_walk(NULL, &v) == -1);
    CU_ASSERT(k.n == 0);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Building a sample
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct sample {
    par_prng r;
    uint32_t every;      /* build about one ID in `every` */
    const char *only_id; /* or exactly this ID */
    int64_t wanted, built, errors, bad_status, bad_inputs;
    par_case *keep;      /* with only_id: the built case */
    int64_t per_op[PAR_OP_COUNT];
} sample;

static int want_sample(void *user, int64_t index, const char *id, const char *op)
{
    (void)index;
    sample *sp = user;
    const par_op_info *info = par_op_find(op);
    int take;
    if (sp->only_id)
        take = strcmp(id, sp->only_id) == 0;
    else /* one per op at least, then a seeded random sample */
        take = (info && sp->per_op[info->id]++ == 0) || par_prng_int(&sp->r, 0, sp->every - 1) == 0;
    sp->wanted += take;
    return take;
}

static void build_check(void *user, int64_t index, par_case *c)
{
    (void)index;
    sample *sp = user;
    sp->built++;
    if (c->status != PAR_OK) sp->bad_status++;
    void **bufs = NULL;
    par_msg m;
    if (par_case_make_inputs(c, &bufs, &m) != PAR_OK) {
        if (!sp->bad_inputs++) fprintf(stderr, "inputs of %s: %s\n", c->id, m.text);
    } else {
        par_case_free_inputs(c, bufs);
    }
    if (sp->only_id && !sp->keep)
        sp->keep = c;
    else
        par_case_destroy(c);
}

static void error_sample(void *user, const char *id, const par_msg *msg)
{
    sample *sp = user;
    if (sp->errors++ < 20) fprintf(stderr, "build failed: %s: %s\n", id, msg ? msg->text : "?");
}

static void build_sample(const char *suite, uint32_t every)
{
    sample sp;
    memset(&sp, 0, sizeof sp);
    par_prng_seed(&sp.r, 2024);
    sp.every = every;
    par_sweep_visit v = {want_sample, build_check, error_sample, &sp, 3, NULL};
    int64_t n = par_sweep_walk(suite, &v);
    PAR_TEST_NOTE("\n  %s: built %lld of %lld\n", suite, (long long)sp.built, (long long)n);
    CU_ASSERT(sp.wanted > 0);
    CU_ASSERT(sp.errors == 0);
    CU_ASSERT(sp.built == sp.wanted);
    CU_ASSERT(sp.bad_status == 0);
    CU_ASSERT(sp.bad_inputs == 0);
}

static void test_build_quick_sample(void)
{
    build_sample("quick", 8);
}

static void test_build_full_sample(void)
{
    build_sample("full", 60);
}

/* Build one ID twice (the seed comes from the ID's walk): same constants, same inputs. */
static par_case *build_one(const char *suite, const char *id, uint64_t seed)
{
    sample sp;
    memset(&sp, 0, sizeof sp);
    sp.only_id = id;
    par_sweep_visit v = {want_sample, build_check, error_sample, &sp, seed, NULL};
    par_sweep_walk(suite, &v);
    return sp.keep;
}

static int same_case(const par_case *a, const par_case *b)
{
    const par_graph_desc *da = par_graph_desc_of(a->graph), *db = par_graph_desc_of(b->graph);
    if (da->n_values != db->n_values || da->n_inputs != db->n_inputs) return 0;
    for (int32_t i = 0; i < da->n_values; i++) {
        const par_value *x = &da->values[i], *y = &db->values[i];
        if (x->dtype != y->dtype || x->numel != y->numel || x->kind != y->kind) return 0;
        if (x->kind == PAR_VALUE_CONST && memcmp(x->data, y->data, (size_t)x->numel * par_dtype_size(x->dtype)))
            return 0;
    }
    void **ia = NULL, **ib = NULL;
    par_msg m;
    int same = par_case_make_inputs(a, &ia, &m) == PAR_OK && par_case_make_inputs(b, &ib, &m) == PAR_OK;
    for (int32_t i = 0; same && i < da->n_inputs; i++) {
        const par_value *x = &da->values[da->inputs[i]];
        same = memcmp(ia[i], ib[i], (size_t)x->numel * par_dtype_size(x->dtype)) == 0;
    }
    par_case_free_inputs(a, ia);
    par_case_free_inputs(b, ib);
    return same;
}

typedef struct pick {
    int64_t want_index;
    char id[1024];
    const char *op;
} pick;

static int want_pick(void *user, int64_t index, const char *id, const char *op)
{
    pick *p = user;
    if (index == p->want_index) {
        snprintf(p->id, sizeof p->id, "%s", id);
        p->op = op;
    }
    return 0;
}

static void test_same_id_same_bytes(void)
{
    static const int64_t idx[] = {0, 17, 123, 511, 800, 1001, 1337, 1499};
    for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++) {
        pick p;
        memset(&p, 0, sizeof p);
        p.want_index = idx[i];
        par_sweep_visit v = {want_pick, NULL, NULL, &p, 5, NULL};
        par_sweep_walk("quick", &v);
        CU_ASSERT_FATAL(p.id[0] != 0);
        par_case *a = build_one("quick", p.id, 5), *b = build_one("quick", p.id, 5);
        par_case *f = build_one("full", p.id, 5); /* the same ID in full: the same case */
        CU_ASSERT_FATAL(a != NULL && b != NULL && f != NULL);
        CU_ASSERT(strcmp(a->id, p.id) == 0);
        CU_ASSERT(same_case(a, b));
        CU_ASSERT(same_case(a, f));
        par_case_destroy(a);
        par_case_destroy(b);
        par_case_destroy(f);
    }
}

/* A different seed changes the ID's suffix and the input bytes (for a case with random inputs). */
static void test_seed_changes_data(void)
{
    pick p;
    memset(&p, 0, sizeof p);
    p.want_index = 3;
    par_sweep_visit v = {want_pick, NULL, NULL, &p, 5, NULL};
    par_sweep_walk("quick", &v);
    char other[1024];
    snprintf(other, sizeof other, "%s", p.id);
    char *hash = strstr(other, "#seed=");
    CU_ASSERT_FATAL(hash != NULL);
    snprintf(hash, sizeof other - (size_t)(hash - other), "#seed=6");
    par_case *a = build_one("quick", p.id, 5), *b = build_one("quick", other, 6);
    CU_ASSERT_FATAL(a != NULL && b != NULL);
    CU_ASSERT(!same_case(a, b));
    par_case_destroy(a);
    par_case_destroy(b);
}

/* only_op: exactly the cases of that op, with the same IDs and indices as in the whole walk. */
typedef struct oo {
    int64_t n, other;
    int64_t first_index;
} oo;

static int want_oo(void *user, int64_t index, const char *id, const char *op)
{
    oo *k = user;
    if (strcmp(op, "sub") != 0 || strncmp(id, "sub(", 4) != 0) k->other++;
    if (!k->n++) k->first_index = index;
    return 0;
}

static int want_first_sub(void *user, int64_t index, const char *id, const char *op)
{
    (void)id;
    oo *k = user;
    if (strcmp(op, "sub") == 0 && !k->n++) k->first_index = index;
    return 0;
}

static void test_only_op(void)
{
    oo a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    par_sweep_visit v = {want_oo, NULL, NULL, &a, 1, "sub"};
    int64_t n = par_sweep_walk("quick", &v);
    CU_ASSERT(n == a.n);
    CU_ASSERT(a.n > 10);
    CU_ASSERT(a.other == 0);
    par_sweep_visit w = {want_first_sub, NULL, NULL, &b, 1, NULL};
    par_sweep_walk("quick", &w);
    CU_ASSERT(a.first_index == b.first_index);
}

static const CU_TestInfo tests[] = {
    {"counts, unique IDs, coverage, quick within full", test_counts_and_unique_ids},
    {"unknown suite", test_unknown_suite},
    {"a sample of quick builds", test_build_quick_sample},
    {"a sample of full builds", test_build_full_sample},
    {"same ID, same bytes", test_same_id_same_bytes},
    {"the seed changes the data", test_seed_changes_data},
    {"only_op", test_only_op},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("sweep", tests)
