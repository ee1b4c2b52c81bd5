/*
 * test_campaign.c - fuzzing campaigns (campaign/campaign.h) and their findings on disk (campaign/findings.h):
 * findings written atomically (no temporary file left) and deduplicated by signature, index.json read back and
 * merged with another campaign's, a provisional folder left by a dead fuzzer adopted, the shard partition, a short
 * campaign on a test plugin that writes out of bounds (a finding folder with case.json and finding.json, exit 1,
 * the report's campaign object), SIGTERM (exit 143, the partial report and the findings kept), and `parity fuzz`
 * refusing bad options with the option named.
 */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign/campaign.h"
#include "campaign/findings.h"
#include "cli_helpers.h"
#include "tmain.h"

PAR_CLI_LOCATE("campaign")

static int exists(const char *fmt, const char *a, const char *b)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, fmt, a, b);
    return access(p, F_OK) == 0;
}

/* Files in a folder whose name contains needle. */
static int count_named(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strstr(e->d_name, needle) != NULL;
    closedir(d);
    return n;
}

static json_object *load(const char *fmt, const char *a, const char *b)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, fmt, a, b);
    return json_object_from_file(p);
}

static int64_t jint(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : -1;
}

static par_case *relu_case(uint64_t seed)
{
    char id[64];
    snprintf(id, sizeof id, "test-relu#seed=%llu", (unsigned long long)seed);
    par_case *c = par_case_create(id, seed);
    int64_t dims[1] = {17};
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 1, dims, g);
    int32_t y = par_case_node(c, "relu", 1, &x, 0, NULL, NULL);
    par_case_output(c, y);
    par_case_finish(c);
    return c;
}

/* One occurrence of (backend, verdict) on graph seed `seed`, settled with op. Returns the entry's index. */
static int32_t occur(par_findings *f, const char *backend, par_verdict v, const char *op, uint64_t seed)
{
    par_backend_inst inst;
    memset(&inst, 0, sizeof inst);
    snprintf(inst.label, sizeof inst.label, "%s", backend);
    par_result r;
    memset(&r, 0, sizeof r);
    r.done = 1;
    r.verdict = v;
    snprintf(r.reason, sizeof r.reason, "synthetic record");
    par_signature sig;
    memset(&sig, 0, sizeof sig);
    snprintf(sig.backend, sizeof sig.backend, "%s", backend);
    sig.verdict = v;
    par_case *c = relu_case(seed);
    par_finding_info fi = {.sig = &sig, .seed = seed, .c = c, .rec = &r, .inst = &inst, .parity_exe = "parity"};
    par_msg m = {{0}};
    int32_t pi = par_findings_add_pending(f, &fi, &m);
    CU_ASSERT_FATAL(pi >= 0);
    /* on disk before anything else: the provisional folder has both files */
    char path[PATH_MAX];
    par_findings_path(f, pi, "case.json", path, sizeof path);
    CU_ASSERT(access(path, F_OK) == 0);
    par_findings_path(f, pi, "finding.json", path, sizeof path);
    CU_ASSERT(access(path, F_OK) == 0);
    CU_ASSERT(strncmp(f->list[pi].dir, "pending-", 8) == 0);
    snprintf(sig.op, sizeof sig.op, "%s", op);
    int32_t ei = par_findings_settle(f, pi, &sig, "{\"node\":0}", &m);
    CU_ASSERT(ei >= 0);
    par_case_destroy(c);
    return ei;
}

static void test_findings_dedup_and_index(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/dedup", tmp_dir);
    par_findings f;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(par_findings_open(&f, dir, &m) == 0);
    occur(&f, "cpu[kernels=scalar]", PAR_V_FAIL, "conv2d", 7);
    occur(&f, "cpu[kernels=scalar]", PAR_V_FAIL, "conv2d", 3);  /* the same signature: counted */
    occur(&f, "cpu[kernels=scalar]", PAR_V_FAIL, "softmax", 9); /* another op: another folder */
    occur(&f, "cpu[kernels=scalar]", PAR_V_CRASH, "conv2d", 11);
    CU_ASSERT_EQUAL(f.n, 3);
    CU_ASSERT_FATAL(par_findings_write_index(&f, &m) == 0);
    char root[PATH_MAX];
    snprintf(root, sizeof root, "%s", f.root);
    par_findings_close(&f);

    /* the folders carry the signatures' names; no provisional folder and no temporary file is left */
    CU_ASSERT(exists("%s/%s", root, "cpu_kernels_scalar-FAIL-conv2d/case.json"));
    CU_ASSERT(exists("%s/%s", root, "cpu_kernels_scalar-FAIL-softmax/finding.json"));
    CU_ASSERT(exists("%s/%s", root, "cpu_kernels_scalar-CRASH-conv2d/finding.json"));
    CU_ASSERT_EQUAL(count_named(root, "pending-"), 0);
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/cpu_kernels_scalar-FAIL-conv2d", root);
    CU_ASSERT_EQUAL(count_named(sub, ".tmp."), 0);
    CU_ASSERT_EQUAL(count_named(root, ".tmp."), 0);

    json_object *fj = load("%s/%s", root, "cpu_kernels_scalar-FAIL-conv2d/finding.json");
    CU_ASSERT_FATAL(fj != NULL);
    CU_ASSERT_EQUAL(jint(fj, "count"), 2);
    CU_ASSERT_EQUAL(jint(fj, "first_seed"), 3);
    CU_ASSERT_EQUAL(jint(fj, "last_seed"), 7);
    CU_ASSERT_EQUAL(jint(fj, "graph_seed"), 7); /* the folder keeps the first occurrence's case */
    json_object *v;
    CU_ASSERT(json_object_object_get_ex(fj, "repro", &v) &&
              strstr(json_object_get_string(v), "cpu_kernels_scalar-FAIL-conv2d/case.json -b") != NULL);
    CU_ASSERT(json_object_object_get_ex(fj, "schema", &v) && !strcmp(json_object_get_string(v), "parity.finding"));
    json_object_put(fj);

    /* read back: a second campaign into the same DIR adds to the same entries */
    CU_ASSERT_FATAL(par_findings_open(&f, dir, &m) == 0);
    CU_ASSERT_EQUAL(f.n, 3);
    occur(&f, "cpu[kernels=scalar]", PAR_V_FAIL, "conv2d", 1);
    CU_ASSERT_EQUAL(f.n, 3);
    par_signature s = {.verdict = PAR_V_FAIL};
    snprintf(s.backend, sizeof s.backend, "cpu[kernels=scalar]");
    snprintf(s.op, sizeof s.op, "conv2d");
    par_finding *e = par_findings_find(&f, &s);
    CU_ASSERT_FATAL(e != NULL);
    CU_ASSERT_EQUAL(e->count, 3);
    CU_ASSERT_EQUAL(e->first_seed, 1);
    CU_ASSERT_EQUAL(e->last_seed, 7);
    /* a fuzzer that dies after writing a provisional folder: the next open adopts it */
    par_backend_inst inst;
    memset(&inst, 0, sizeof inst);
    snprintf(inst.label, sizeof inst.label, "qnnpack");
    par_result r = {.done = 1, .verdict = PAR_V_TIMEOUT};
    par_signature ps = {.verdict = PAR_V_TIMEOUT};
    snprintf(ps.backend, sizeof ps.backend, "qnnpack");
    par_case *c = relu_case(5);
    par_finding_info fi = {.sig = &ps, .seed = 5, .c = c, .rec = &r, .inst = &inst};
    CU_ASSERT(par_findings_add_pending(&f, &fi, &m) >= 0);
    par_case_destroy(c);
    CU_ASSERT(par_findings_write_index(&f, &m) == 0);
    par_findings_close(&f);
    /* the index without the provisional entry, as a crash before the index write leaves it */
    CU_ASSERT_FATAL(par_findings_open(&f, dir, &m) == 0);
    int32_t n = f.n;
    CU_ASSERT_EQUAL(n, 4);
    f.n = 3;
    for (int32_t i = 0; i < n; i++)
        if (!strncmp(f.list[i].dir, "pending-", 8) && i < 3) f.list[i] = f.list[3];
    CU_ASSERT(par_findings_write_index(&f, &m) == 0);
    par_findings_close(&f);
    CU_ASSERT_FATAL(par_findings_open(&f, dir, &m) == 0);
    CU_ASSERT_EQUAL(f.n, 4);
    int pending = 0;
    for (int32_t i = 0; i < f.n; i++) pending += !strncmp(f.list[i].dir, "pending-qnnpack-TIMEOUT-", 24);
    CU_ASSERT_EQUAL(pending, 1);
    par_findings_close(&f);
}

static void test_findings_merge(void)
{
    char a[PATH_MAX], b[PATH_MAX], dst[PATH_MAX];
    snprintf(a, sizeof a, "%s/shard1", tmp_dir);
    snprintf(b, sizeof b, "%s/shard2", tmp_dir);
    snprintf(dst, sizeof dst, "%s/merged", tmp_dir);
    par_findings f;
    par_msg m = {{0}};
    CU_ASSERT_FATAL(par_findings_open(&f, a, &m) == 0);
    occur(&f, "cpu", PAR_V_FAIL, "add", 4);
    occur(&f, "cpu", PAR_V_FAIL, "add", 10);
    occur(&f, "cpu", PAR_V_FLAKY, "mul", 1);
    CU_ASSERT(par_findings_write_index(&f, &m) == 0);
    par_findings_close(&f);
    CU_ASSERT_FATAL(par_findings_open(&f, b, &m) == 0);
    occur(&f, "cpu", PAR_V_FAIL, "add", 2);
    occur(&f, "qnnpack", PAR_V_FAIL, "conv2d", 5);
    CU_ASSERT(par_findings_write_index(&f, &m) == 0);
    par_findings_close(&f);

    CU_ASSERT_EQUAL(sh("%s fuzz --merge %s %s --out %s", exe, a, b, dst), 0);
    CU_ASSERT_FATAL(par_findings_open(&f, dst, &m) == 0);
    CU_ASSERT_EQUAL(f.n, 3);
    par_signature s = {.verdict = PAR_V_FAIL};
    snprintf(s.backend, sizeof s.backend, "cpu");
    snprintf(s.op, sizeof s.op, "add");
    par_finding *e = par_findings_find(&f, &s);
    CU_ASSERT_FATAL(e != NULL);
    CU_ASSERT_EQUAL(e->count, 3);
    CU_ASSERT_EQUAL(e->first_seed, 2);
    CU_ASSERT_EQUAL(e->last_seed, 10);
    par_findings_close(&f);
    /* the copied folder's repro command names the copy */
    json_object *fj = load("%s/findings/%s", dst, "qnnpack-FAIL-conv2d/finding.json");
    CU_ASSERT_FATAL(fj != NULL);
    json_object *v;
    CU_ASSERT(json_object_object_get_ex(fj, "repro", &v) && strstr(json_object_get_string(v), "/merged/findings/"));
    CU_ASSERT_EQUAL(jint(fj, "count"), 1);
    json_object_put(fj);
    CU_ASSERT(exists("%s/findings/%s", dst, "qnnpack-FAIL-conv2d/case.json"));
    /* merging again adds the counts again: merge is for distinct campaigns (shards) */
    CU_ASSERT_EQUAL(sh("%s fuzz --merge %s --out %s", exe, b, dst), 0);
    CU_ASSERT_FATAL(par_findings_open(&f, dst, &m) == 0);
    e = par_findings_find(&f, &s);
    CU_ASSERT(e && e->count == 4);
    par_findings_close(&f);
    CU_ASSERT_EQUAL(sh("%s fuzz --merge %s/nosuch --out %s", exe, tmp_dir, dst), 2);
    CU_ASSERT(strstr(out, "nosuch: not a campaign folder") != NULL);
    CU_ASSERT_EQUAL(sh("%s fuzz --merge --out %s", exe, dst), 2);
    CU_ASSERT(strstr(out, "--merge") != NULL);
}

static void test_shard_partition(void)
{
    /* shards 1/3, 2/3, 3/3 together take every graph index of 0 .. 299 exactly once */
    static int hit[300];
    memset(hit, 0, sizeof hit);
    for (int32_t k = 1; k <= 3; k++)
        for (int64_t j = 0; j < 100; j++) {
            int64_t i = par_campaign_graph_index(k, 3, j);
            CU_ASSERT(i >= 0 && i < 300 && i % 3 == k - 1);
            if (i >= 0 && i < 300) hit[i]++;
        }
    int once = 0;
    for (int i = 0; i < 300; i++) once += hit[i] == 1;
    CU_ASSERT_EQUAL(once, 300);
    for (int64_t j = 0; j < 10; j++) CU_ASSERT_EQUAL(par_campaign_graph_index(0, 0, j), j);
    CU_ASSERT_EQUAL(par_campaign_graph_index(1, 1, 5), 5);
}

static void test_campaign_finds_out_of_bounds_writes(void)
{
    /* tp_toggle computes relu correctly and writes past its output on every run: every graph it runs is a FAIL */
    char plugin[PATH_MAX], outd[PATH_MAX];
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/toggle.so", build_dir);
    snprintf(outd, sizeof outd, "%s/camp", tmp_dir);
    int rc = sh("%s fuzz --plugin %s -b tp_toggle --count 6 --seed 3 --max-nodes 1 --weights '*=0,relu=1' "
                "--quant-share 0 --hazard-share 0 --no-reduce --no-progress --out %s",
                exe, plugin, outd);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT(strstr(out, "fuzz: 6 graphs in ") != NULL);
    CU_ASSERT(strstr(out, "6 findings in 1 signature") != NULL);
    json_object *idx = load("%s/findings/%s", outd, "index.json");
    CU_ASSERT_FATAL(idx != NULL);
    json_object *arr, *it, *v;
    CU_ASSERT_FATAL(json_object_object_get_ex(idx, "findings", &arr) && json_object_array_length(arr) == 1);
    it = json_object_array_get_idx(arr, 0);
    CU_ASSERT_EQUAL(jint(it, "count"), 6);
    CU_ASSERT_EQUAL(jint(it, "first_seed"), 3);
    CU_ASSERT_EQUAL(jint(it, "last_seed"), 8);
    CU_ASSERT_FATAL(json_object_object_get_ex(it, "folder", &v));
    char folder[256];
    snprintf(folder, sizeof folder, "%s", json_object_get_string(v));
    CU_ASSERT(strncmp(folder, "tp_toggle-FAIL-relu", 19) == 0);
    CU_ASSERT(exists("%s/findings/%s/case.json", outd, folder));
    json_object *fj = load("%s/findings/%s/finding.json", outd, folder);
    CU_ASSERT_FATAL(fj != NULL);
    json_object *rec;
    CU_ASSERT(json_object_object_get_ex(fj, "record", &rec) && json_object_object_get_ex(rec, "reason", &v) &&
              strstr(json_object_get_string(v), "out-of-bounds") != NULL);
    json_object_put(fj);
    json_object_put(idx);
    /* the case file reproduces the finding through `parity run` */
    CU_ASSERT_EQUAL(sh("%s run %s/findings/%s/case.json --plugin %s -b tp_toggle --no-progress --out %s/rerun", exe,
                       outd, folder, plugin, outd), 1);
    /* the report: the campaign object and the finding's record */
    json_object *rep = load("%s/%s", outd, "report.json");
    CU_ASSERT_FATAL(rep != NULL);
    json_object *camp, *res;
    CU_ASSERT_FATAL(json_object_object_get_ex(rep, "campaign", &camp));
    CU_ASSERT_EQUAL(jint(camp, "graphs"), 6);
    CU_ASSERT(json_object_object_get_ex(camp, "findings", &arr) && json_object_array_length(arr) == 1);
    CU_ASSERT(json_object_object_get_ex(rep, "results", &res) && json_object_array_length(res) == 1);
    json_object_put(rep);
    /* a second campaign into the same folder adds to the finding */
    rc = sh("%s fuzz --plugin %s -b tp_toggle --count 2 --seed 100 --max-nodes 1 --weights '*=0,relu=1' "
            "--quant-share 0 --hazard-share 0 --no-reduce --no-progress --out %s",
            exe, plugin, outd);
    CU_ASSERT_EQUAL(rc, 1);
    idx = load("%s/findings/%s", outd, "index.json");
    CU_ASSERT_FATAL(idx != NULL);
    CU_ASSERT(json_object_object_get_ex(idx, "findings", &arr) && json_object_array_length(arr) == 1);
    it = json_object_array_get_idx(arr, 0);
    CU_ASSERT_EQUAL(jint(it, "count"), 8);
    CU_ASSERT_EQUAL(jint(it, "last_seed"), 101);
    json_object_put(idx);
}

static void test_correct_backend_no_finding(void)
{
    char outd[PATH_MAX];
    snprintf(outd, sizeof outd, "%s/clean", tmp_dir);
    int rc = sh("%s fuzz -b cpu --count 40 --seed 1 --no-progress --no-reduce --out %s", exe, outd);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(strstr(out, "fuzz: 40 graphs in ") != NULL);
    CU_ASSERT(strstr(out, "0 findings in 0 signatures") != NULL);
    json_object *rep = load("%s/%s", outd, "report.json");
    CU_ASSERT_FATAL(rep != NULL);
    json_object *camp, *bes;
    CU_ASSERT_FATAL(json_object_object_get_ex(rep, "campaign", &camp));
    CU_ASSERT(json_object_object_get_ex(camp, "backends", &bes) && json_object_array_length(bes) == 1);
    int64_t records = jint(json_object_array_get_idx(bes, 0), "records");
    CU_ASSERT_EQUAL(records, 40);
    json_object_put(rep);
    /* three shards of 4 graphs: seeds 1, 4, 7, 10 / 2, 5, 8, 11 / 3, 6, 9, 12 */
    for (int k = 1; k <= 3; k++) {
        char sd[PATH_MAX];
        snprintf(sd, sizeof sd, "%s/shard_run%d", tmp_dir, k);
        CU_ASSERT_EQUAL(sh("%s fuzz -b cpu --count 4 --shard %d/3 --no-progress --no-reduce --out %s", exe, k, sd), 0);
        rep = load("%s/%s", sd, "report.json");
        CU_ASSERT_FATAL(rep != NULL);
        json_object *seeds;
        CU_ASSERT_FATAL(json_object_object_get_ex(rep, "campaign", &camp) &&
                        json_object_object_get_ex(camp, "graph_seeds", &seeds));
        CU_ASSERT_EQUAL(jint(seeds, "first"), k);
        CU_ASSERT_EQUAL(jint(seeds, "last"), k + 9);
        json_object_put(rep);
    }
}

static void test_sigterm_keeps_report_and_findings(void)
{
    /* a campaign of 60 s on a backend that fails every graph, stopped by SIGTERM after about 1.5 s */
    char plugin[PATH_MAX], outd[PATH_MAX];
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/toggle.so", build_dir);
    snprintf(outd, sizeof outd, "%s/term", tmp_dir);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execl(exe, exe, "fuzz", "--plugin", plugin, "-b", "tp_toggle", "--time", "60", "--max-nodes", "1",
              "--weights", "*=0,relu=1", "--quant-share", "0", "--hazard-share", "0", "--no-reduce", "--out", outd,
              (char *)NULL);
        _exit(127);
    }
    struct timespec ts = {1, 500000000};
    nanosleep(&ts, NULL);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 143);
    json_object *rep = load("%s/%s", outd, "report.json");
    CU_ASSERT_FATAL(rep != NULL);
    json_object *v, *camp;
    CU_ASSERT(json_object_object_get_ex(rep, "interrupted", &v) && json_object_get_boolean(v));
    CU_ASSERT(json_object_object_get_ex(rep, "campaign", &camp) && jint(camp, "graphs") > 0);
    json_object_put(rep);
    json_object *idx = load("%s/findings/%s", outd, "index.json");
    CU_ASSERT_FATAL(idx != NULL);
    json_object *arr;
    CU_ASSERT(json_object_object_get_ex(idx, "findings", &arr) && json_object_array_length(arr) >= 1 &&
              jint(json_object_array_get_idx(arr, 0), "count") >= 1);
    json_object_put(idx);
}

/* A bad option: exit 2 and a message naming it. */
static void refused(const char *args, const char *needle)
{
    int rc = sh("%s fuzz %s --out %s/refused", exe, args, tmp_dir);
    CU_ASSERT_EQUAL(rc, 2);
    if (!strstr(out, needle)) {
        fprintf(stderr, "\n    'parity fuzz %s': expected '%s' in:\n%s\n", args, needle, out);
        CU_FAIL("the message does not name the option");
    }
}

static void test_cli_refuses_bad_options(void)
{
    refused("-b cpu --shard 4/3", "--shard: '4/3' is not K/N");
    refused("-b cpu --shard x", "--shard");
    refused("-b cpu --max-nodes 0", "--max-nodes: 0 is outside 1..64");
    refused("-b cpu --max-nodes 65", "--max-nodes");
    refused("-b cpu --max-elems -5", "--max-elems");
    refused("-b cpu --hazard-share 1.5", "--hazard-share: 1.5 is outside");
    refused("-b cpu --quant-share x", "--quant-share: 'x' is not a number");
    refused("-b cpu --count 0", "--count");
    refused("-b cpu --time -1", "--time");
    refused("-b cpu --seed 0", "--seed: '0' must be >= 1");
    refused("-b cpu -j 0", "-j");
    refused("-b cpu --weights nosuchop=1", "--weights");
    refused("-b nosuchbackend --count 1", "no backend named 'nosuchbackend'");
    refused("-b cpu stray", "unexpected argument 'stray'");
    refused("-b cpu --frobnicate", "usage: parity fuzz");
    CU_ASSERT_EQUAL(sh("%s fuzz -b cpu --count 1 --out /proc/version/x", exe), 2);
    CU_ASSERT(strstr(out, "--out: cannot create '/proc/version/x/findings'") != NULL);
    CU_ASSERT_EQUAL(sh("%s fuzz --help", exe), 0);
    CU_ASSERT(strstr(out, "--shard K/N") != NULL);
}

static const CU_TestInfo tests[] = {
    {"findings_dedup_and_index", test_findings_dedup_and_index},
    {"findings_merge", test_findings_merge},
    {"shard_partition", test_shard_partition},
    {"campaign_finds_out_of_bounds_writes", test_campaign_finds_out_of_bounds_writes},
    {"correct_backend_no_finding", test_correct_backend_no_finding},
    {"sigterm_keeps_report_and_findings", test_sigterm_keeps_report_and_findings},
    {"cli_refuses_bad_options", test_cli_refuses_bad_options},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("campaign", tests)
