/*
 * test_report.c - the JSON report (reports/report_json.c), its reproduction lines, and the environment it records
 * (reports/env.c): a sample report of fixed cases, backends and results (a pass, a failure with a NaN output and an
 * infinite ratio, an unsupported and a crashed record, one not run) written, parsed back and checked field by field;
 * strict JSON (no bare NaN or Infinity); write errors that name the path and leave no temporary file behind; the
 * reader (reports/report_read.c) giving back every field of the sample, the non-finite ones included.
 *
 * Files go to a temporary folder under /tmp, removed by the last test.
 */
#include "exec/exec.h"
#include "reports/report.h"
#include "reports/report_read.h"
#include "reports/summary.h"
#include "tmain.h"

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The backend of the sample report: the report reads only its identity (name, version, description, arith). */
static const par_backend tb = {.api_version = PAR_BACKEND_API_VERSION,
                               .struct_size = sizeof(par_backend),
                               .name = "tb",
                               .version = "1",
                               .description = "test relu",
                               .arith = PAR_ARITH_F32};

static par_backend_inst tb_inst(const char *spec)
{
    par_backend_inst inst;
    par_msg m = {{0}};
    memset(&inst, 0, sizeof inst);
    CU_ASSERT_EQUAL(par_backend_spec_parse(spec, &inst, &m), PAR_OK);
    inst.be = &tb;
    return inst;
}

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char p[512];
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/parity_test_report_XXXXXX");
        if (!mkdtemp(tmpdir)) return "/nonexistent/x";
    }
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

#define RC 3 /* cases */
#define RB 2 /* backends */

static par_report_case rcases[RC];
static par_backend_inst rbackends[RB];
static par_result rresults[RC * RB];

static par_report sample_report(void)
{
    memset(rcases, 0, sizeof rcases);
    memset(rresults, 0, sizeof rresults);
    snprintf(rcases[0].id, sizeof rcases[0].id, "relu(shape=[3])#seed=1");
    snprintf(rcases[0].origin, sizeof rcases[0].origin, "suite:quick");
    snprintf(rcases[0].ops, sizeof rcases[0].ops, "relu");
    snprintf(rcases[1].id, sizeof rcases[1].id, "conv it's");
    snprintf(rcases[1].origin, sizeof rcases[1].origin, "suite:quick");
    snprintf(rcases[1].ops, sizeof rcases[1].ops, "conv2d,relu");
    snprintf(rcases[2].id, sizeof rcases[2].id, "mobilenet_v2");
    snprintf(rcases[2].origin, sizeof rcases[2].origin, "cases/models/mobile net.json");
    snprintf(rcases[2].ops, sizeof rcases[2].ops, "add,conv2d");
    rbackends[0] = tb_inst("tb");
    rbackends[0].usable = 1;
    snprintf(rbackends[0].describe, sizeof rbackends[0].describe, "threads=1");
    rbackends[1] = tb_inst("tb[threads=2]");
    snprintf(rbackends[1].plugin_path, sizeof rbackends[1].plugin_path, "build/plugins/libparity_tb.so");
    snprintf(rbackends[1].unusable_reason, sizeof rbackends[1].unusable_reason, "no device");
    /* backend 0: PASS (ratio 0.25), FAIL (ratio +inf, NaN output), PASS (ratio 0.5); backend 1: UNSUPPORTED, CRASH,
     * not run */
    double ratios[RC] = {0.25, INFINITY, 0.5};
    for (int c = 0; c < RC; c++) {
        par_result *r = &rresults[c * RB + 0];
        r->done = 1;
        r->verdict = c == 1 ? PAR_V_FAIL : PAR_V_PASS;
        r->m.n = 10;
        r->m.max_ratio = ratios[c];
        r->m.max_abs = c == 1 ? NAN : 1e-7;
        r->m.nmse = c == 1 ? INFINITY : 1e-15;
        r->m.sqnr_db = c == 1 ? -3.0 : 150.0;
        r->m.sqnr_pred_db = 140.0;
        r->m.worst_output = 0;
        r->m.worst_index = 4;
        r->m.worst_rank = 2;
        r->m.worst_coords[0] = 1;
        r->m.worst_coords[1] = 1;
        r->m.worst_ref = 0.1;
        r->m.worst_got = c == 1 ? NAN : 0.1f;
        r->m.worst_budget = c == 1 ? 0.0 : 1e-8;
        r->t.runs = 2;
        r->t.run_median_ms = 0.125;
        if (c == 1) snprintf(r->reason, sizeof r->reason, "1 element over budget");
    }
    rresults[0 * RB + 1] = (par_result){.done = 1, .verdict = PAR_V_UNSUPPORTED, .reason = "no device"};
    rresults[1 * RB + 1] = (par_result){.done = 1, .verdict = PAR_V_CRASH, .reason = "killed by signal 11"};
    par_report r = {.command_line = "parity run --suite quick",
                    .seed = 18446744073709551615ull,
                    .repeat = 2,
                    .warmup = 1,
                    .jobs = 2,
                    .timeout_s = 10,
                    .wall_s = 1.5,
                    .parity_exe = "build/parity",
                    .n_backends = RB,
                    .backends = rbackends,
                    .n_cases = RC,
                    .cases = rcases,
                    .results = rresults};
    return r;
}

static void test_repro(void)
{
    par_report r = sample_report();
    char buf[1024];
    par_report_repro(&r, 0, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "build/parity run --case 'relu(shape=[3])#seed=1' -b tb");
    par_report_repro(&r, 1, 1, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "build/parity run --case 'conv it'\\''s' -b 'tb[threads=2]' "
                                "--plugin build/plugins/libparity_tb.so");
    par_report_repro(&r, 2, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "build/parity run 'cases/models/mobile net.json' -b tb");
    char small[12];
    par_report_repro(&r, 0, 0, small, sizeof small);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1); /* cut, terminated */
    par_report_repro(&r, 5, 0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static json_object *jget(json_object *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
        if (json_object_is_type(o, json_type_array)) o = json_object_array_get_idx(o, (size_t)atoi(k));
        else if (!json_object_object_get_ex(o, k, &o)) return NULL;
    }
    return o;
}

/* No double anywhere in the tree is NaN or infinite (json-c's parser would accept bare NaN/Infinity tokens). */
static int all_finite(json_object *o)
{
    switch (json_object_get_type(o)) {
    case json_type_double: return isfinite(json_object_get_double(o));
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(o); i++)
            if (!all_finite(json_object_array_get_idx(o, i))) return 0;
        return 1;
    case json_type_object: {
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            if (!all_finite(v)) return 0;
        }
        return 1;
    }
    default: return 1;
    }
}

/* Outside strings, the only words in the text are true, false and null: no bare NaN, Infinity or inf. */
static int bare_words_ok(const char *s)
{
    while (*s) {
        if (*s == '"') {
            for (s++; *s && *s != '"'; s++)
                if (*s == '\\' && s[1]) s++;
            if (*s) s++;
        } else if (*s == '-' || (*s >= '0' && *s <= '9')) {
            while (*s == '-' || *s == '+' || *s == '.' || *s == 'e' || *s == 'E' || (*s >= '0' && *s <= '9')) s++;
        } else if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) {
            const char *w = s;
            while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) s++;
            size_t n = (size_t)(s - w);
            if (!((n == 4 && strncmp(w, "true", 4) == 0) || (n == 5 && strncmp(w, "false", 5) == 0) ||
                  (n == 4 && strncmp(w, "null", 4) == 0)))
                return 0;
        } else {
            s++;
        }
    }
    return 1;
}

static int count_tmp_files(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

static void test_report_roundtrip(void)
{
    par_report r = sample_report();
    const char *path = tmp_path("report.json");
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    par_msg m = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_report_write_json(&r, p, &m), PAR_OK);
    CU_ASSERT_EQUAL(count_tmp_files(), 0);
    char *text = slurp(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(bare_words_ok(text));
    enum json_tokener_error jerr;
    json_object *root = json_tokener_parse_verbose(text, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT(all_finite(root));
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "schema")), PAR_REPORT_SCHEMA);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "version")), PAR_REPORT_VERSION);
    const char *created = json_object_get_string(jget(root, "created"));
    CU_ASSERT(created && strlen(created) == 20 && created[10] == 'T' && created[19] == 'Z');
    CU_ASSERT_EQUAL(json_object_get_uint64(jget(root, "config.seed")), 18446744073709551615ull);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "config.jobs")), 2);
    CU_ASSERT(json_object_get_int(jget(root, "environment.cpu.cores")) >= 1);
    CU_ASSERT(json_object_is_type(jget(root, "environment.cpu.features"), json_type_array));
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.1.label")), "tb[threads=2]");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.1.knobs.threads")), "2");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.1.reason")), "no device");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "backends.0.arith")), "f32");
    /* counts */
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.counts.PASS")), 2);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.counts.FAIL")), 1);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.1.counts.UNSUPPORTED")), 1);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.1.counts.CRASH")), 1);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.1.records")), 2);
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.counts.PASS")), 2);
    /* ratio distribution over 0.25, 0.5, inf (nearest rank): median 0.5, max inf -> null */
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.max_ratio.compared")), 3);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(jget(root, "summary.backends.0.max_ratio.median")), 0.5, 0);
    CU_ASSERT(json_object_is_type(jget(root, "summary.backends.0.max_ratio.max"), json_type_null));
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "summary.backends.0.max_ratio.nonfinite")), 1);
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "summary.backends.0.worst.case")), "conv it's");
    /* records: 5 done of 6 */
    CU_ASSERT_EQUAL(json_object_array_length(jget(root, "results")), 5);
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "results.2.verdict")), "FAIL");
    CU_ASSERT(json_object_is_type(jget(root, "results.2.metrics.max_abs"), json_type_null));
    CU_ASSERT(json_object_get_boolean(jget(root, "results.2.metrics.max_ratio_infinite")));
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "results.2.worst.backend_class")), "nan");
    CU_ASSERT_EQUAL(json_object_get_int(jget(root, "results.0.worst.coords.1")), 1);
    CU_ASSERT((float)json_object_get_double(jget(root, "results.0.worst.backend")) == 0.1f); /* 9 digits: f32 exact */
    CU_ASSERT_STRING_EQUAL(json_object_get_string(jget(root, "results.0.repro")),
                           "build/parity run --case 'relu(shape=[3])#seed=1' -b tb");
    CU_ASSERT(json_object_is_type(jget(root, "results.1.metrics"), json_type_null)); /* UNSUPPORTED */
    json_object_put(root);
    free(text);
}

static void test_report_write_errors(void)
{
    par_report r = sample_report();
    par_msg m = {{0}};
    char missing[600];
    snprintf(missing, sizeof missing, "%s/no/such/folder/report.json", tmp_path(""));
    CU_ASSERT_EQUAL(par_report_write_json(&r, missing, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, missing));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "No such file or directory"));

    /* An existing report survives a failed write: the temporary file cannot be created (a folder has its name). */
    char path[512], tmp[600];
    snprintf(path, sizeof path, "%s", tmp_path("keep.json"));
    CU_ASSERT_EQUAL_FATAL(par_report_write_json(&r, path, &m), PAR_OK);
    char *before = slurp(path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CU_ASSERT_EQUAL_FATAL(mkdir(tmp, 0755), 0);
    r.n_cases = 1;
    m.text[0] = '\0';
    CU_ASSERT_EQUAL(par_report_write_json(&r, path, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, strerror(EISDIR)));
    char *after = slurp(path);
    CU_ASSERT(before && after && strcmp(before, after) == 0);
    rmdir(tmp);
    free(before);
    free(after);

    /* Renaming over a folder fails after the temporary file was written: it must be removed. */
    snprintf(path, sizeof path, "%s", tmp_path("adir.json"));
    CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
    CU_ASSERT_EQUAL(par_report_write_json(&r, path, &m), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "cannot rename"));
    CU_ASSERT_EQUAL(count_tmp_files(), 0);
    rmdir(path);
}

static void test_env(void)
{
    par_env e;
    par_env_collect(&e);
    CU_ASSERT(e.cores >= 1);
    CU_ASSERT(e.cpu_model[0] != '\0');
    CU_ASSERT_STRING_EQUAL(e.os_name, "Linux");
    CU_ASSERT(e.compiler[0] != '\0');
    CU_ASSERT_STRING_EQUAL(e.json_c, json_c_version());
    /* every reported feature is a whole word of the list, never a fragment (avx512f must not yield avx) */
    char f[sizeof e.cpu_features];
    snprintf(f, sizeof f, "%s", e.cpu_features);
    char *save = NULL;
    for (char *w = strtok_r(f, " ", &save); w; w = strtok_r(NULL, " ", &save)) CU_ASSERT(strlen(w) >= 3);
}

static void cleanup_tmpdir(void)
{
    if (!tmpdir[0]) return;
    const char *names[] = {"report.json", "keep.json", "utf8.json", "readback.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(tmp_path(names[i]));
    rmdir(tmpdir);
}

/* The summary renders from the report alone and ends with the line make check sums. */
static void test_summary(void)
{
    par_report r = sample_report();
    snprintf(rcases[1].id, sizeof rcases[1].id, "conv\033[2J\nFAIL");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    par_summary_print(f, &r, 0, 20);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nconformance: 2 passed, 2 failed, 1 skipped\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(buf, "tb conv\\x1b[2J\\x0aFAIL: 1 element over budget; SQNR -3.0 dB (predicted 140.0 dB) -- repro: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--case $'conv\\x1b[2J\\x0aFAIL'"));
    CU_ASSERT_PTR_NULL(strchr(buf, '\033'));
    free(buf);
}

/* Strings from backends reach the report as valid UTF-8; an interrupted run says so. */
static void test_report_utf8_and_interrupted(void)
{
    par_report r = sample_report();
    snprintf(rbackends[0].describe, sizeof rbackends[0].describe, "mode=\xff\xc3(");
    snprintf(rresults[1 * RB + 0].reason, sizeof rresults[0].reason, "bad \xe2\x82 text");
    snprintf(rresults[1 * RB + 0].output, sizeof rresults[0].output, "out \xfe\n");
    rresults[1 * RB + 0].output_bytes = 9;
    r.interrupted = 1;
    const char *path = tmp_path("utf8.json");
    par_msg m = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_report_write_json(&r, path, &m), PAR_OK);
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char text[1 << 20], clean[3 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    CU_ASSERT_EQUAL(par_text_clean(clean, sizeof clean, text, n + 1, 0), 0); /* already valid UTF-8 */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "mode=\xef\xbf\xbd\xef\xbf\xbd("));
    json_object *root = json_object_from_file(path), *v = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT(json_object_object_get_ex(root, "interrupted", &v) && json_object_get_boolean(v));
    json_object_put(root);
}

static void test_zz_cleanup(void)
{
    cleanup_tmpdir();
    struct stat st;
    CU_ASSERT(!tmpdir[0] || stat(tmpdir, &st) != 0);
}


/* The reader gives back what the writer was given: the sample's fields compared with the in-memory originals, the
 * values JSON cannot hold (an infinite ratio, a NaN output) included, and a record that did not run stays absent. */
static void test_read_back(void)
{
    par_report r = sample_report();
    rcases[0].index = 7;
    snprintf(rcases[0].dtype, sizeof rcases[0].dtype, "f32");
    par_result *p = &rresults[0 * RB + 0];
    p->t.runs = 3;
    p->t.n_samples = 3;
    p->t.samples_ms[0] = 0.25, p->t.samples_ms[1] = 0.125, p->t.samples_ms[2] = 0.5;
    rresults[2 * RB + 0].m.quant = 1;
    rresults[2 * RB + 0].m.hist[PAR_HIST_ZERO + 1] = 5;
    const char *sel_paths[] = {"cases/models"};
    r.sel = (par_report_selection){.suite = "quick", .n_paths = 1, .paths = sel_paths, .ops = "relu",
                                   .shard_k = 2, .shard_n = 3};
    const char *path = tmp_path("readback.json");
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_report_write_json(&r, path, &msg), PAR_OK);
    par_report_doc *d = NULL;
    CU_ASSERT_EQUAL_FATAL(par_report_read(path, &d, &msg), PAR_OK);
    const par_report *q = par_report_doc_report(d);
    CU_ASSERT_EQUAL(q->n_cases, RC);
    CU_ASSERT_EQUAL(q->n_backends, RB);
    CU_ASSERT_EQUAL(q->seed, 18446744073709551615ull);
    CU_ASSERT_EQUAL(q->repeat, 2);
    CU_ASSERT_EQUAL(q->jobs, 2);
    CU_ASSERT_STRING_EQUAL(q->parity_exe, "build/parity");
    CU_ASSERT_STRING_EQUAL(q->sel.suite, "quick");
    CU_ASSERT_EQUAL(q->sel.n_paths, 1);
    CU_ASSERT_STRING_EQUAL(q->sel.paths[0], "cases/models");
    CU_ASSERT_STRING_EQUAL(q->sel.ops, "relu");
    CU_ASSERT_PTR_NULL(q->sel.case_id);
    CU_ASSERT_EQUAL(q->sel.shard_k, 2);
    CU_ASSERT_EQUAL(q->sel.shard_n, 3);
    for (int c = 0; c < RC; c++) {
        CU_ASSERT_STRING_EQUAL(q->cases[c].id, rcases[c].id);
        CU_ASSERT_STRING_EQUAL(q->cases[c].origin, rcases[c].origin);
        CU_ASSERT_STRING_EQUAL(q->cases[c].ops, rcases[c].ops);
        CU_ASSERT_EQUAL(q->cases[c].index, rcases[c].index);
    }
    CU_ASSERT_STRING_EQUAL(q->cases[0].dtype, "f32");
    CU_ASSERT_STRING_EQUAL(q->backends[1].label, "tb[threads=2]");
    CU_ASSERT_STRING_EQUAL(q->backends[1].plugin_path, "build/plugins/libparity_tb.so");
    CU_ASSERT_EQUAL(q->backends[1].n_knobs, 1);
    CU_ASSERT_STRING_EQUAL(q->backends[1].knob_key[0], "threads");
    CU_ASSERT_STRING_EQUAL(q->backends[1].knob_val[0], "2");
    CU_ASSERT_EQUAL(q->backends[0].usable, 1);
    CU_ASSERT_EQUAL(q->backends[1].usable, 0);
    CU_ASSERT_STRING_EQUAL(q->backends[1].unusable_reason, "no device");
    CU_ASSERT_STRING_EQUAL(q->backends[0].describe, "threads=1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(q->backends[0].be);
    CU_ASSERT_STRING_EQUAL(q->backends[0].be->name, "tb");
    CU_ASSERT_STRING_EQUAL(q->backends[0].be->description, "test relu");
    for (int c = 0; c < RC; c++)
        for (int b = 0; b < RB; b++) {
            const par_result *o = &rresults[c * RB + b], *n = par_report_record(q, c, b);
            CU_ASSERT_EQUAL(n != NULL, o->done != 0);
            if (!n || !o->done) continue;
            CU_ASSERT_EQUAL(n->verdict, o->verdict);
            CU_ASSERT_STRING_EQUAL(n->reason, o->reason);
            CU_ASSERT_EQUAL(n->t.runs, o->t.runs);
        }
    const par_result *fail = par_report_record(q, 1, 0), *pass = par_report_record(q, 0, 0);
    CU_ASSERT_TRUE(isinf(fail->m.max_ratio) && fail->m.max_ratio > 0);
    CU_ASSERT_TRUE(isnan(fail->m.worst_got));
    CU_ASSERT_TRUE(isnan(fail->m.max_abs)); /* written as null, read as not a number */
    CU_ASSERT_EQUAL(fail->m.worst_rank, 2);
    CU_ASSERT_EQUAL(fail->m.worst_coords[1], 1);
    CU_ASSERT_DOUBLE_EQUAL(pass->m.max_ratio, 0.25, 0);
    CU_ASSERT_EQUAL((float)pass->m.worst_got, 0.1f); /* 9 digits: an f32 reads back exactly as f32 */
    CU_ASSERT_EQUAL(pass->t.n_samples, 3);
    CU_ASSERT_DOUBLE_EQUAL(pass->t.samples_ms[1], 0.125, 0);
    CU_ASSERT_EQUAL(par_report_record(q, 2, 0)->m.quant, 1);
    CU_ASSERT_EQUAL(par_report_record(q, 2, 0)->m.hist[PAR_HIST_ZERO + 1], 5);
    CU_ASSERT_PTR_NULL(par_report_record(q, 2, 1)); /* not run */
    CU_ASSERT_EQUAL(par_report_find_case(q, "conv it's"), 1);
    CU_ASSERT_EQUAL(par_report_find_backend(q, "tb[threads=2]"), 1);
    CU_ASSERT_EQUAL(par_report_find_backend(q, "nope"), -1);
    par_report_doc_free(d);
    memset(&msg, 0, sizeof msg);
    const char *partial = "{\"schema\": \"parity.report\", \"version\": 1}";
    CU_ASSERT_EQUAL(par_report_parse("mem.json", partial, strlen(partial), &d, &msg), PAR_ERROR);
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "mem.json: config: missing"));
}

static const CU_TestInfo tests[] = {
    {"summary from the records alone", test_summary},
    {"UTF-8 and interrupted in the report", test_report_utf8_and_interrupted},
    {"repro", test_repro},
    {"report roundtrip", test_report_roundtrip},
    {"report read back", test_read_back},
    {"report write errors", test_report_write_errors},
    {"env", test_env},
    {"cleanup", test_zz_cleanup},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("report", tests)
