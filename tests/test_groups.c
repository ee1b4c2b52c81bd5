/*
 * test_groups.c - the failure groups (reports/groups.h) on reports built by hand: the parameters of a case ID (commas
 * inside brackets kept), the feature that separates failing from passing cases (an exact key=value, the input's
 * channel count modulo 8, hazard inputs), the words of a group, UNSUPPORTED records left out, an op whose every
 * judged case fails, a second group for the failures the first one's feature leaves out, and no group without
 * failures. tests/report/test_groups.sh runs the planted-bug plugins.
 */
#include "tmain.h"

#include "reports/groups.h"

#define NC 64
static par_report_case cases[NC];
static par_result results[NC];
static par_backend_inst be = {.label = "mine"};

/* A one-backend report of n cases: ids[i], verdicts[i]. */
static par_report report_of(int32_t n, char ids[][PAR_ID_LEN], const par_verdict *v)
{
    memset(cases, 0, sizeof cases);
    memset(results, 0, sizeof results);
    for (int32_t i = 0; i < n; i++) {
        snprintf(cases[i].id, sizeof cases[i].id, "%s", ids[i]);
        results[i].done = 1;
        results[i].verdict = v[i];
    }
    return (par_report){.n_backends = 1, .backends = &be, .n_cases = n, .cases = cases, .results = results};
}

static char got_kv[8][2][64];
static int32_t got_n;
static void collect(void *user, const char *k, const char *v)
{
    (void)user;
    if (got_n < 8) {
        snprintf(got_kv[got_n][0], 64, "%s", k);
        snprintf(got_kv[got_n][1], 64, "%s", v);
    }
    got_n++;
}

static void test_id_params(void)
{
    got_n = 0;
    int32_t n = par_id_params("conv2d(in=[1,3,8,8],s=[2,2],p=same,in=hazard:nan_inf)#seed=1", collect, NULL);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_STRING_EQUAL(got_kv[0][0], "in");
    CU_ASSERT_STRING_EQUAL(got_kv[0][1], "[1,3,8,8]");
    CU_ASSERT_STRING_EQUAL(got_kv[1][1], "[2,2]");
    CU_ASSERT_STRING_EQUAL(got_kv[2][1], "same");
    CU_ASSERT_STRING_EQUAL(got_kv[3][1], "hazard:nan_inf");
    got_n = 0;
    CU_ASSERT_EQUAL(par_id_params("mobilenet_v2", collect, NULL), 0);
    CU_ASSERT_EQUAL(got_n, 0);
}

static void test_stride(void)
{
    /* 6 stride-2 cases (4 fail), 10 stride-1 cases (all pass), 3 unsupported failing-looking ones left out */
    char ids[NC][PAR_ID_LEN];
    par_verdict v[NC];
    int32_t n = 0;
    for (int i = 0; i < 6; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "conv2d(in=[1,3,%d,7],s=[2,2],g=1)#seed=1", 5 + i);
        v[n] = i < 4 ? PAR_V_FAIL : PAR_V_PASS;
    }
    for (int i = 0; i < 10; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "conv2d(in=[1,3,%d,7],s=[1,1],g=1)#seed=1", 5 + i);
        v[n] = PAR_V_PASS;
    }
    for (int i = 0; i < 3; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "conv2d(in=[1,3,5,7],s=[1,1],g=%d)#seed=1", 2 + i);
        v[n] = PAR_V_UNSUPPORTED;
    }
    par_report r = report_of(n, ids, v);
    par_group *g = NULL;
    int32_t ng = 0;
    CU_ASSERT_EQUAL_FATAL(par_groups_compute(&r, &g, &ng), 0);
    CU_ASSERT_EQUAL_FATAL(ng, 1);
    CU_ASSERT_STRING_EQUAL(g[0].op, "conv2d");
    CU_ASSERT_STRING_EQUAL(g[0].feature, "s=[2,2]");
    CU_ASSERT_EQUAL(g[0].n_judged, 16);
    CU_ASSERT_EQUAL(g[0].first_case, 0);
    char text[512];
    par_group_text(&r, &g[0], text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "conv2d on mine: 4 of 6 with s=[2,2] fail, 0 of 10 others");
    free(g);
}

static void test_channels_and_hazard(void)
{
    char ids[NC][PAR_ID_LEN];
    par_verdict v[NC];
    int32_t n = 0;
    static const int chans[] = {1, 2, 3, 5, 7, 8, 9, 16, 17, 24, 12, 4};
    /* the channel bug: every case whose input has C % 8 != 0 fails, whatever its other parameters */
    for (size_t i = 0; i < sizeof chans / sizeof chans[0]; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "conv2d(in=[1,%d,5,5],w=[%d,%d,3,3])#seed=1", chans[i], 4 + (int)i, chans[i]);
        v[n] = chans[i] % 8 ? PAR_V_FAIL : PAR_V_PASS;
    }
    /* add: only its hazard-input cases fail */
    for (int i = 0; i < 5; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "add(x=[2,3,6,%d])#seed=1", 3 + i);
        v[n] = PAR_V_PASS;
    }
    static const char *const hz[] = {"nan_inf", "huge", "subnormal"};
    for (int i = 0; i < 3; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "add(x=[2,3,6,7],in=hazard:%s)#seed=1", hz[i]);
        v[n] = PAR_V_FAIL;
    }
    /* relu: every judged case fails */
    for (int i = 0; i < 2; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "relu(x=[%d])#seed=1", 3 + i);
        v[n] = PAR_V_CRASH;
    }
    par_report r = report_of(n, ids, v);
    par_group *g = NULL;
    int32_t ng = 0;
    CU_ASSERT_EQUAL_FATAL(par_groups_compute(&r, &g, &ng), 0);
    CU_ASSERT_EQUAL_FATAL(ng, 3);
    /* most failing cases first */
    CU_ASSERT_STRING_EQUAL(g[0].op, "conv2d");
    CU_ASSERT_STRING_EQUAL(g[0].feature, "input channels % 8 != 0");
    CU_ASSERT_EQUAL(g[0].fail_out, 0);
    CU_ASSERT_STRING_EQUAL(g[1].op, "add");
    CU_ASSERT_STRING_EQUAL(g[1].feature, "hazard inputs");
    CU_ASSERT_EQUAL(g[1].hazard, 1);
    CU_ASSERT_STRING_EQUAL(g[2].op, "relu");
    char text[512];
    par_group_text(&r, &g[2], text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "relu on mine: all 2 judged cases fail");
    free(g);
}

static void test_second_group(void)
{
    /* two bugs: every stride-2 case fails, and the grouped stride-1 ones; the second group names g=2 among the cases
     * without s=[2,2] */
    char ids[NC][PAR_ID_LEN];
    par_verdict v[NC];
    int32_t n = 0;
    for (int i = 0; i < 8; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "conv2d(in=[1,4,%d,7],s=[2,2],g=1)#seed=1", 5 + i);
        v[n] = PAR_V_FAIL;
    }
    for (int i = 0; i < 20; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "conv2d(in=[1,4,%d,7],s=[1,1],g=1)#seed=1", 5 + i);
        v[n] = PAR_V_PASS;
    }
    for (int i = 0; i < 3; i++, n++) {
        snprintf(ids[n], PAR_ID_LEN, "conv2d(in=[1,4,%d,7],s=[1,1],g=2)#seed=1", 5 + i);
        v[n] = PAR_V_FAIL;
    }
    par_report r = report_of(n, ids, v);
    par_group *g = NULL;
    int32_t ng = 0;
    CU_ASSERT_EQUAL_FATAL(par_groups_compute(&r, &g, &ng), 0);
    CU_ASSERT_EQUAL_FATAL(ng, 2);
    char text[512];
    par_group_text(&r, &g[0], text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "conv2d on mine: 8 of 8 with s=[2,2] fail, 3 of 23 others");
    par_group_text(&r, &g[1], text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "conv2d on mine, without s=[2,2]: 3 of 3 with g=2 fail, 0 of 20 others");
    CU_ASSERT_EQUAL(g[1].first_case, 28);
    free(g);
}

static void test_no_failures(void)
{
    char ids[2][PAR_ID_LEN] = {"relu(x=[3])#seed=1", "relu(x=[4])#seed=1"};
    par_verdict v[2] = {PAR_V_PASS, PAR_V_UNSUPPORTED};
    par_report r = report_of(2, ids, v);
    par_group *g = (par_group *)1;
    int32_t ng = -1;
    CU_ASSERT_EQUAL(par_groups_compute(&r, &g, &ng), 0);
    CU_ASSERT_EQUAL(ng, 0);
    CU_ASSERT_PTR_NULL(g);
    free(g);
}

static const CU_TestInfo tests[] = {
    {"id_params", test_id_params},
    {"stride", test_stride},
    {"channels_and_hazard", test_channels_and_hazard},
    {"second_group", test_second_group},
    {"no_failures", test_no_failures},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("test_groups", tests)
