/*
 * test_ties.c - the tie rule a backend follows, measured and judged end to end (docs/quantization.md, "Ties"):
 * tests/plugins/tieaway.c computes the quantized add formula exactly but rounds its ties by a rule of its own and
 * declares the scheme it is told. Over the quick suite's quantized add cases (quantize -> add -> dequantize, qu8
 * and qs8, with broadcasting) in the default (non-strict) mode:
 *   - ties rounded half away from zero while declaring fp32: FAIL, the reason naming both rules;
 *   - the same integers declaring rndna, or PyTorch QNNPACK's multipliers declaring pytorch_qnnp: PASS;
 *   - ties rounded half up (rndnu's rule) while declaring fp32: FAIL; declaring rndnu: PASS;
 *   - qnnpack (fp32, exact): PASS, every tie half to even;
 *   - schemes per node (PAR_PROC_NODE_REQUANT): declaring fp32 overall and rndnu for its add nodes, ties rounded
 *     half up PASS, the records listing the node; declaring fp32 there FAILs, and so do ties half away there, the
 *     reason naming the node's scheme; a value outside par_requant is an ERROR naming backend, node and value; the
 *     reference cache's key changes with a declaration.
 * It runs build/parity as a user does and reads report.json.
 */
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/refcache.h"
#include "cli_helpers.h"
#include "tmain.h"

static json_object *report; /* the one run's report, read once */
static char summary[sizeof out]; /* the run's terminal summary */

/* The backends of the run, by label. */
#define TA "tp_tieaway"
static const char *const BACKENDS[] = {TA, TA "[declare=rndna]", TA "[mult=qnnp,declare=pytorch_qnnp]", TA "[rule=up]",
                                       TA "[rule=up,declare=rndnu]", "qnnpack", TA "[rule=up,node=rndnu]",
                                       TA "[rule=up,node=fp32]", TA "[node=77]", TA "[node=rndnu]"};

static void run_once(void)
{
    if (report) return;
    char blist[1024] = "";
    for (size_t i = 0; i < sizeof BACKENDS / sizeof *BACKENDS; i++)
        snprintf(blist + strlen(blist), sizeof blist - strlen(blist), "%s%s", i ? "," : "", BACKENDS[i]);
    /* failures are expected: exit 1 */
    int rc = sh("PARITY_CACHE=0 %s run --suite quick -o add --plugin %s/tests/plugins/tieaway.so -b '%s' "
                "--no-progress --out %s/run",
                exe, build_dir, blist, tmp_dir);
    CU_ASSERT_EQUAL(rc, 1);
    if (rc != 1) fprintf(stderr, "\n%s\n", out);
    memcpy(summary, out, sizeof summary);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/run/report.json", tmp_dir);
    report = json_object_from_file(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(report);
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int64_t geti(json_object *o, const char *key) { return json_object_get_int64(get(o, key)); }

static int has_str(json_object *arr, const char *s)
{
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s) == 0) return 1;
    return 0;
}

/* Checks every quantized add record of backend `label`: its verdict, the rule all its ties follow, the reason. */
static void check_backend(const char *label, const char *verdict, const char *rule, const char *declared,
                          const char *reason)
{
    run_once();
    json_object *results = get(report, "results");
    int seen = 0;
    for (size_t i = 0; i < json_object_array_length(results); i++) {
        json_object *r = json_object_array_get_idx(results, i);
        const char *c = json_object_get_string(get(r, "case"));
        if (strcmp(json_object_get_string(get(r, "backend")), label) != 0 || !strstr(c, "dt=q")) continue;
        seen++;
        CU_ASSERT_STRING_EQUAL(json_object_get_string(get(r, "verdict")), verdict);
        json_object *t = get(get(r, "metrics"), "ties");
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        int64_t n = geti(t, "n");
        CU_ASSERT(n >= 10); /* the add cases have ties: the check can fail */
        CU_ASSERT_EQUAL(geti(t, rule), n);
        CU_ASSERT(geti(t, "even") < n || geti(t, "away") < n); /* ties that tell the rules apart */
        CU_ASSERT(has_str(get(t, "consistent"), rule));
        CU_ASSERT_STRING_EQUAL(json_object_get_string(get(t, "declared")), declared);
        CU_ASSERT_EQUAL(json_object_get_boolean(get(t, "contradicts")), strcmp(verdict, "FAIL") == 0);
        const char *why = json_object_get_string(get(r, "reason"));
        if (reason && !strstr(why, reason)) {
            fprintf(stderr, "\n    expected '%s' in the reason: %s\n", reason, why);
            CU_FAIL("reason lacks the rules");
        }
    }
    CU_ASSERT_EQUAL(seen, 6); /* qu8 and qs8, three shapes each */
    /* the summary counts the backend's ties and the records they fail */
    json_object *bs = get(get(report, "summary"), "backends");
    int found = 0;
    for (size_t i = 0; i < json_object_array_length(bs); i++) {
        json_object *b = json_object_array_get_idx(bs, i);
        if (strcmp(json_object_get_string(get(b, "backend")), label) != 0) continue;
        found = 1;
        json_object *t = get(b, "ties");
        CU_ASSERT_EQUAL(geti(t, "records"), 6);
        CU_ASSERT_EQUAL(geti(t, "records_contradicting"), strcmp(verdict, "FAIL") == 0 ? 6 : 0);
        CU_ASSERT(has_str(get(t, "consistent"), rule));
    }
    CU_ASSERT(found);
}

static void test_away_declaring_fp32_fails(void)
{
    check_backend(TA, "FAIL", "away", "even", "rounded half away from zero; declared fp32 rounds half to even");
    /* the terminal summary's tie line of that backend and of qnnpack */
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "rounded as: away; declared fp32 rounds half to even; 6 records contradict"));
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "rounded as: even; declared fp32 rounds half to even; 0 records contradict"));
}

static void test_away_declaring_half_away_passes(void)
{
    check_backend(TA "[declare=rndna]", "PASS", "away", "away", NULL);
    check_backend(TA "[mult=qnnp,declare=pytorch_qnnp]", "PASS", "away", "away", NULL);
}

static void test_up_declaring_fp32_fails(void)
{
    check_backend(TA "[rule=up]", "FAIL", "up", "even", "rounded half up; declared fp32 rounds half to even");
    check_backend(TA "[rule=up,declare=rndnu]", "PASS", "up", "up", NULL);
}

static void test_qnnpack_passes(void) { check_backend("qnnpack", "PASS", "even", "even", NULL); }

/* The records of backend `label` on the quantized add cases list the add node with scheme `scheme` (or nothing). */
static void check_node_schemes(const char *label, const char *scheme)
{
    json_object *results = get(report, "results");
    int seen = 0;
    for (size_t i = 0; i < json_object_array_length(results); i++) {
        json_object *r = json_object_array_get_idx(results, i);
        if (strcmp(json_object_get_string(get(r, "backend")), label) != 0 ||
            !strstr(json_object_get_string(get(r, "case")), "dt=q"))
            continue;
        seen++;
        json_object *ns = get(r, "node_schemes");
        if (!scheme) {
            CU_ASSERT_PTR_NULL(ns);
            continue;
        }
        CU_ASSERT_EQUAL_FATAL(geti(ns, "count"), 1);
        json_object *n = json_object_array_get_idx(get(ns, "nodes"), 0);
        CU_ASSERT_STRING_EQUAL(json_object_get_string(get(n, "scheme")), scheme);
        CU_ASSERT_PTR_NOT_NULL(strstr(json_object_get_string(get(n, "name")), "add"));
    }
    CU_ASSERT_EQUAL(seen, 6);
}

static void test_node_scheme(void)
{
    /* fp32 overall, rndnu at the add: its ties half up are the declared rule's */
    check_backend(TA "[rule=up,node=rndnu]", "PASS", "up", "up", NULL);
    check_node_schemes(TA "[rule=up,node=rndnu]", "rndnu");
    CU_ASSERT_PTR_NOT_NULL(strstr(summary, "1032 ties (schemes declared per node); 1032 where the declared rule is "
                                           "half up, rounded as: up; 0 records contradict"));
    /* fp32 declared at the add too (the backend-wide scheme: nothing differs) */
    check_backend(TA "[rule=up,node=fp32]", "FAIL", "up", "even", "rounded half up; declared fp32 rounds half to even");
    check_node_schemes(TA "[rule=up,node=fp32]", NULL);
    /* ties half away at an add declared rndnu: FAIL, the reason naming the node's scheme, not the backend's */
    check_backend(TA "[node=rndnu]", "FAIL", "away", "up", "rounded half away from zero; declared rndnu rounds half up");
    check_node_schemes(TA "[node=rndnu]", "rndnu");
}

static void test_node_scheme_bad_value(void)
{
    run_once();
    json_object *results = get(report, "results");
    int seen = 0;
    for (size_t i = 0; i < json_object_array_length(results); i++) {
        json_object *r = json_object_array_get_idx(results, i);
        if (strcmp(json_object_get_string(get(r, "backend")), TA "[node=77]") != 0 ||
            !strstr(json_object_get_string(get(r, "case")), "dt=q"))
            continue;
        seen++;
        CU_ASSERT_STRING_EQUAL(json_object_get_string(get(r, "verdict")), "ERROR");
        const char *why = json_object_get_string(get(r, "reason"));
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "backend 'tp_tieaway[node=77]': node 2 'add2' (add): declared "
                                           "requantization scheme 77, not a par_requant value (0..5) "
                                           "(parity_node_requant)"));
    }
    CU_ASSERT_EQUAL(seen, 6);
}

/* The reference cache's key: a scheme declared per node enters it; -1 (the backend-wide scheme) everywhere, or the
 * backend-wide scheme itself, keys as no declaration. */
static void test_node_scheme_cache_key(void)
{
    int64_t dims[1] = {4};
    par_value vals[3] = {
        {.name = "a", .dtype = PAR_DTYPE_QU8, .rank = 1, .kind = PAR_VALUE_INPUT, .scale = 0.5f},
        {.name = "b", .dtype = PAR_DTYPE_QU8, .rank = 1, .kind = PAR_VALUE_INPUT, .scale = 0.5f},
        {.name = "y", .dtype = PAR_DTYPE_QU8, .rank = 1, .kind = PAR_VALUE_NODE, .scale = 1.0f},
    };
    for (int i = 0; i < 3; i++) {
        memcpy(vals[i].dims, dims, sizeof dims);
        vals[i].numel = 4;
        vals[i].quant_axis = -1;
    }
    int32_t in[2] = {0, 1}, outv[1] = {2};
    par_node node = {.name = "add0", .op = "add", .n_inputs = 2, .inputs = in, .n_outputs = 1, .outputs = outv};
    par_graph_desc g = {.name = "g", .n_values = 3, .values = vals, .n_nodes = 1, .nodes = &node};
    int32_t none[1] = {-1}, wide[1] = {PAR_REQUANT_FP32}, up[1] = {PAR_REQUANT_RNDNU}, away[1] = {PAR_REQUANT_RNDNA};
    const int32_t *decl[5] = {NULL, none, wide, up, away};
    uint8_t key[5][32];
    for (int i = 0; i < 5; i++) {
        par_prec p = {.u = 0x1p-24, .u_store = 0x1p-24, .fn_ulps = 8.0, .requant = PAR_REQUANT_FP32};
        p.requant_node = decl[i];
        par_refcache_key(&g, &p, NULL, key[i]);
    }
    CU_ASSERT(memcmp(key[0], key[1], 32) == 0);
    CU_ASSERT(memcmp(key[0], key[2], 32) == 0);
    CU_ASSERT(memcmp(key[0], key[3], 32) != 0);
    CU_ASSERT(memcmp(key[0], key[4], 32) != 0);
    CU_ASSERT(memcmp(key[3], key[4], 32) != 0);
}

static const CU_TestInfo tests[] = {
    {"ties half away declaring fp32: FAIL naming the rules", test_away_declaring_fp32_fails},
    {"the same ties declaring rndna or pytorch_qnnp: PASS", test_away_declaring_half_away_passes},
    {"ties half up declaring fp32: FAIL; declaring rndnu: PASS", test_up_declaring_fp32_fails},
    {"qnnpack (fp32, exact): PASS, ties half to even", test_qnnpack_passes},
    {"fp32 overall, rndnu at the add nodes: ties half up PASS; fp32 there: FAIL", test_node_scheme},
    {"a per-node scheme outside par_requant: ERROR naming backend, node and value", test_node_scheme_bad_value},
    {"the reference cache's key changes with a per-node scheme", test_node_scheme_cache_key},
    CU_TEST_INFO_NULL,
};

PAR_CLI_LOCATE("test_ties")

__attribute__((destructor)) static void cleanup(void)
{
    if (report) json_object_put(report);
    if (strncmp(tmp_dir, "/tmp/parity_test_ties.", 22) == 0) sh("rm -rf '%s'", tmp_dir);
}

PAR_TEST_MAIN("ties", tests)
