/*
 * test_select.c - case selection: suites, filters, --case lookup by ID with its own seed, and the shard rule
 * (the N shards of a selection are disjoint and cover it, and the same shard always gets the same cases).
 */
#include <stdlib.h>

#include "runner/runner.h"
#include "tmain.h"

static int32_t select_n(par_selection sel, par_case_set *out)
{
    par_msg m = {{0}};
    int rc = par_select_cases(&sel, out, &m);
    if (rc) fprintf(stderr, "\n    select: %s\n", m.text);
    CU_ASSERT_EQUAL(rc, 0);
    return rc ? -1 : out->n;
}

static void test_quick_suite_and_filters(void)
{
    par_case_set all, conv, re;
    par_selection s = {.suite = "quick"};
    int32_t n = select_n(s, &all);
    CU_ASSERT(n >= 1500);
    s.ops = "conv2d";
    int32_t nc = select_n(s, &conv);
    CU_ASSERT(nc > 0 && nc < n);
    for (int32_t i = 0; i < conv.n; i++) CU_ASSERT_PTR_NOT_NULL(strstr(conv.cases[i].ops, "conv2d"));
    s.ops = NULL;
    s.id_regex = "^relu\\(";
    int32_t nr = select_n(s, &re);
    CU_ASSERT(nr > 0);
    for (int32_t i = 0; i < re.n; i++) CU_ASSERT_EQUAL(strncmp(re.cases[i].id, "relu(", 5), 0);
    /* IDs carry the seed */
    for (int32_t i = 0; i < all.n; i++) CU_ASSERT_PTR_NOT_NULL(strstr(all.cases[i].id, "#seed=1"));
    par_case_set_free(&all);
    par_case_set_free(&conv);
    par_case_set_free(&re);
}

static void test_shards_partition(void)
{
    par_case_set all;
    par_selection s = {.suite = "quick", .ops = "add,mul"};
    int32_t n = select_n(s, &all);
    CU_ASSERT_FATAL(n > 10);
    char *seen = calloc((size_t)n, 1);
    int32_t total = 0;
    for (int k = 1; k <= 3; k++) {
        par_case_set sh, again;
        s.shard_k = k;
        s.shard_n = 3;
        int32_t m = select_n(s, &sh);
        CU_ASSERT(m >= n / 3 && m <= n / 3 + 1);
        CU_ASSERT_EQUAL(select_n(s, &again), m); /* deterministic */
        for (int32_t i = 0; i < sh.n; i++) {
            CU_ASSERT_STRING_EQUAL(sh.cases[i].id, again.cases[i].id);
            for (int32_t j = 0; j < all.n; j++)
                if (strcmp(all.cases[j].id, sh.cases[i].id) == 0) {
                    CU_ASSERT_EQUAL(seen[j], 0); /* disjoint */
                    seen[j] = 1;
                }
        }
        total += m;
        par_case_set_free(&sh);
        par_case_set_free(&again);
    }
    CU_ASSERT_EQUAL(total, n); /* covering */
    free(seen);
    par_case_set_free(&all);
}

static void test_case_by_id(void)
{
    par_case_set q, one;
    par_selection s = {.suite = "quick", .seed = 9};
    CU_ASSERT_FATAL(select_n(s, &q) > 100);
    const char *id = q.cases[100].id;
    CU_ASSERT_PTR_NOT_NULL(strstr(id, "#seed=9"));
    par_selection byid = {.case_id = id};
    CU_ASSERT_EQUAL_FATAL(select_n(byid, &one), 1);
    CU_ASSERT_STRING_EQUAL(one.cases[0].id, id);
    CU_ASSERT_EQUAL(one.seed, 9);
    /* the case built from the ID has the same constants as the one built from the suite walk */
    int o1 = 0, o2 = 0;
    par_msg m;
    par_case *a = par_case_set_get(&q, 100, &o1, &m), *b = par_case_set_get(&one, 0, &o2, &m);
    CU_ASSERT_FATAL(a && b);
    const par_graph_desc *da = par_graph_desc_of(a->graph), *db = par_graph_desc_of(b->graph);
    CU_ASSERT_EQUAL_FATAL(da->n_values, db->n_values);
    for (int32_t v = 0; v < da->n_values; v++)
        if (da->values[v].kind == PAR_VALUE_CONST)
            CU_ASSERT_EQUAL(memcmp(da->values[v].data, db->values[v].data,
                                   (size_t)da->values[v].numel * par_dtype_size(da->values[v].dtype)), 0);
    if (o1) par_case_destroy(a);
    if (o2) par_case_destroy(b);
    par_case_set_free(&q);
    par_case_set_free(&one);
}

static void test_selection_errors(void)
{
    par_case_set x;
    par_msg m = {{0}};
    par_selection s = {.suite = "nosuch"};
    CU_ASSERT_EQUAL(par_select_cases(&s, &x, &m), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "nosuch"));
    par_selection o = {.suite = "quick", .ops = "conv7d"};
    CU_ASSERT_EQUAL(par_select_cases(&o, &x, &m), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "conv7d"));
    par_selection k = {.suite = "quick", .id_regex = "(("};
    CU_ASSERT_EQUAL(par_select_cases(&k, &x, &m), 2);
    par_selection c = {.case_id = "relu(x)"};
    CU_ASSERT_EQUAL(par_select_cases(&c, &x, &m), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "#seed"));
    par_selection p = {.n_paths = 1, .paths = (char *[]){"tests/data/cli/negative_dim.json"}};
    CU_ASSERT_EQUAL(par_select_cases(&p, &x, &m), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "negative_dim.json"));
}

static const CU_TestInfo tests[] = {
    {"quick suite and filters", test_quick_suite_and_filters},
    {"shards partition the selection", test_shards_partition},
    {"a case by ID, with its own seed", test_case_by_id},
    {"selection errors", test_selection_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("select", tests)
