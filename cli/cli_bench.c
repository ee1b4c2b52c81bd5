/*
 * cli_bench.c - `parity bench`: latency of several backends side by side on the same cases, in one process, with
 * runs interleaved across backends (b1 b2 b1 b2 ...) after warm-up so that machine drift hits all of them alike.
 * Reports median, p10 and p90 per backend and the ratio of each median to the first backend's. The outputs of the
 * last run are checked against the reference, so a fast wrong answer is shown as such.
 *
 * Fairness: the order alternates every round (b1 b2, b2 b1, ...) so that neither backend always runs right after
 * the other (warm caches, a thread pool still spinning); the warm-up rounds are interleaved the same way.
 * Statistics: the median is the mean of the two middle samples for an even count; p10 and p90 are nearest-rank.
 *
 * The backends run in one child process of the bench (never in the process that parsed the command line), judged
 * with the precision profile their probe recorded.
 *
 * Device time: a backend with PAR_PROC_DEVICE_TIME (a GPU's timestamps) is asked after every timed run; its median,
 * p10 and p90 are printed beside the wall times, then per backend the nodes that took most device time (median over
 * the first BENCH_NODE_RUNS timed runs; the top BENCH_TOP_NODES, or every timed node with --nodes). A device time
 * longer than the run's wall time cannot be right: that backend's device times are dropped, with a note. A backend's
 * diagnostics (PAR_PROC_DIAGNOSTICS, after prepare and every run) make its check FAIL, as in parity run.
 *
 * `--micro NAME` (repeatable) calls each backend's PAR_PROC_MICROBENCH ("gemm", "peak", ...) and prints the value
 * and unit per backend; with both gemm and peak it adds their ratio (the GEMM's fraction of the machine's peak).
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include <unistd.h>

#include "reference/reference.h"
#include "cli.h"
#include "exec/sandbox.h"
#include "oracle/oracle.h"
#include "core/requant.h"

typedef struct bench_be {
    const par_backend_inst *inst;
    void *ctx, *prep;
    void **outs;
    double prepare_ms;
    double *samples;
    int ok;
    char note[PAR_MSG_LEN];
    const char *verdict;
    int32_t *algo, *rq; /* per-node declarations (par_exec_declarations), NULL when none */
    par_device_time_fn dt;   /* PAR_PROC_DEVICE_TIME, NULL when absent or its times were dropped */
    par_diagnostics_fn diag; /* PAR_PROC_DIAGNOSTICS */
    double *dev;             /* [repeat] device time of each timed run it measured (n_dev of them) */
    int32_t n_dev;
    double *node_ms;         /* [node_rows * n_nodes] per-node device times of the first timed runs (-1: none), and
                              * a last row for the later runs */
    long node_rows;
    int32_t n_node_runs;
    char diag_text[PAR_MSG_LEN]; /* the first diagnostic, "" when none */
    int32_t n_diag;
} bench_be;

#define BENCH_NODE_RUNS 64 /* timed runs whose per-node device times are kept */
#define BENCH_TOP_NODES 5  /* nodes listed per backend without --nodes */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#define BENCH_STOP_S 2 /* seconds the bench child may stay stopped before it is killed */

/* Waits for the bench child's end. Only its own backends can stop it (nothing else runs as its uid), and a child
 * stopped for BENCH_STOP_S seconds is killed, so a stop costs a clear line, never a hang; bench has no per-case
 * timeout, so a running child is waited for. *st is its status; returns 1 when it was killed for a stop. */
static int wait_bench_child(pid_t kid, int *st)
{
    double stopped_at = -1;
    int killed = 0;
    for (;;) {
        int opt = WUNTRACED | WCONTINUED | (stopped_at >= 0 ? WNOHANG : 0);
        pid_t w = waitpid(kid, st, opt);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return killed;
        if (w == kid && !WIFSTOPPED(*st) && !WIFCONTINUED(*st)) return killed;
        if (w == kid) stopped_at = WIFSTOPPED(*st) ? now_ms() : -1;
        if (stopped_at >= 0 && now_ms() - stopped_at >= BENCH_STOP_S * 1e3) {
            kill(kid, SIGKILL);
            killed = 1;
            stopped_at = -1;
        } else if (stopped_at >= 0) {
            usleep(100 * 1000);
        }
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples. */
static double pct(const double *s, int n, double q)
{
    int i = (int)ceil(q * n) - 1;
    return s[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static double median(const double *s, int n)
{
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* The backend's diagnostics after prepare or a run: the first text kept (cleaned), all counted. */
static void bench_diag(bench_be *x)
{
    if (!x->diag) return;
    char buf[PAR_MSG_LEN];
    memset(buf, 0, sizeof buf);
    if (x->diag(x->ctx, x->prep, buf, sizeof buf) == 0) return;
    if (x->n_diag++ == 0) par_text_clean(x->diag_text, sizeof x->diag_text, buf, sizeof buf, 1);
}

/* The device's time of the run that took wall_ms (timed run number k, 0-based): kept when it is a time the run can
 * have taken; otherwise every device time of this backend is dropped, with a note. */
static void bench_device_time(bench_be *x, int32_t n_nodes, long k, double wall_ms)
{
    if (!x->dt) return;
    /* rows 0 .. BENCH_NODE_RUNS - 1 keep the first runs' per-node times; the last row takes the later runs' */
    const long kept = x->node_rows - 1;
    double total = -1, *row = x->node_ms ? x->node_ms + (size_t)(k < kept ? k : kept) * (size_t)n_nodes : NULL;
    double none = -1;
    for (int32_t i = 0; row && i < n_nodes; i++) row[i] = -1;
    if (x->dt(x->ctx, x->prep, &total, row ? row : &none, n_nodes) == 0) return;
    if (!(isfinite(total) && total >= 0 && total <= wall_ms)) {
        snprintf(x->note, sizeof x->note, "device times dropped: run %ld reported %g ms of device time in %.3g ms "
                 "(%s)", k + 1, total, wall_ms, PAR_PROC_DEVICE_TIME);
        x->dt = NULL;
        x->n_dev = 0;
        x->n_node_runs = 0;
        return;
    }
    x->dev[x->n_dev++] = total;
    if (row && k < kept) x->n_node_runs = (int32_t)k + 1;
}

typedef struct node_time {
    int32_t node;
    double med;
} node_time;

static int cmp_node_time(const void *a, const void *b)
{
    const node_time *x = a, *y = b;
    if (x->med != y->med) return x->med < y->med ? 1 : -1;
    return x->node - y->node;
}

/* Per node: the median of its device times over the kept runs (a node not timed apart, -1, or with a value that is
 * not a time, is left out); printed most first, top BENCH_TOP_NODES unless all; into jnodes too. */
static void bench_print_nodes(const bench_be *x, const par_graph_desc *g, int all, json_object *jnodes)
{
    if (x->n_node_runs <= 0 || g->n_nodes <= 0) return;
    node_time *nt = calloc((size_t)g->n_nodes, sizeof *nt);
    double *v = calloc((size_t)x->n_node_runs, sizeof *v);
    int32_t n = 0;
    for (int32_t i = 0; nt && v && i < g->n_nodes; i++) {
        int32_t m = 0;
        for (int32_t k = 0; k < x->n_node_runs; k++) {
            double t = x->node_ms[(size_t)k * (size_t)g->n_nodes + (size_t)i];
            if (isfinite(t) && t >= 0) v[m++] = t;
        }
        if (!m) continue;
        qsort(v, (size_t)m, sizeof *v, cmp_d);
        nt[n++] = (node_time){i, median(v, m)};
    }
    if (n) {
        qsort(nt, (size_t)n, sizeof *nt, cmp_node_time);
        double sum = 0;
        for (int32_t i = 0; i < n; i++) sum += nt[i].med;
        int32_t shown = all || n <= BENCH_TOP_NODES ? n : BENCH_TOP_NODES;
        printf("%-24s   device time per node, median of %d runs (%d of %d nodes timed%s):\n", "", (int)x->n_node_runs,
               (int)n, (int)g->n_nodes, shown < n ? "; all with --nodes" : "");
        for (int32_t i = 0; i < n; i++) {
            const par_node *nd = &g->nodes[nt[i].node];
            if (i < shown)
                printf("%-24s     %5d %-28.28s %-16.16s %9.4f ms %5.1f%%\n", "", (int)nt[i].node, nd->name ? nd->name : "",
                       nd->op ? nd->op : "?", nt[i].med, sum > 0 ? 100.0 * nt[i].med / sum : 0.0);
            json_object *jn = json_object_new_object();
            json_object_object_add(jn, "node", json_object_new_int(nt[i].node));
            json_object_object_add(jn, "name", json_object_new_string(nd->name ? nd->name : ""));
            json_object_object_add(jn, "op", json_object_new_string(nd->op ? nd->op : ""));
            json_object_object_add(jn, "device_median_ms", json_object_new_double(nt[i].med));
            json_object_array_add(jnodes, jn);
        }
    }
    free(nt);
    free(v);
}

/* Init a backend instance and apply its knobs and --threads; *note gets the first problem. Returns the context or
 * NULL (note says why). */
static void *bench_open(const par_backend_inst *inst, long threads, char *note, size_t note_len)
{
    const par_backend *be = inst->be;
    par_msg m = {{0}};
    void *ctx = NULL;
    if (be->init(&ctx, &m) != PAR_OK) {
        snprintf(note, note_len, "init: %s", m.text);
        return NULL;
    }
    par_status st;
    int32_t bad = par_backend_apply_knobs(inst, ctx, &st, &m);
    if (bad >= 0) {
        snprintf(note, note_len, "knob %s: %s", inst->knob_key[bad], m.text);
        be->destroy(ctx);
        return NULL;
    }
    par_set_knob_fn knob = be->get_proc ? (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB) : NULL;
    if (threads > 0) {
        char tv[32];
        snprintf(tv, sizeof tv, "%ld", threads);
        if (!knob || knob(ctx, "threads", tv, &m) != PAR_OK)
            snprintf(note, note_len, "no threads knob: runs with its default");
    }
    par_ready_fn ready = be->get_proc ? (par_ready_fn)be->get_proc(ctx, PAR_PROC_READY) : NULL;
    if (ready && ready(ctx, &m) != PAR_OK) { /* usable with these knobs? (as exec/child.c asks) */
        snprintf(note, note_len, "not usable: %s", m.text);
        be->destroy(ctx);
        return NULL;
    }
    return ctx;
}

#define MAX_MICRO 8

/* --micro: each backend's own micro-benchmarks, one backend at a time (they measure peaks, not each other). */
static int bench_micro(const par_backends *bs, char **names, int n_names, long threads, json_object *jroot)
{
    int rc = PAR_EXIT_OK;
    json_object *jm = json_object_new_array();
    if (threads) printf("micro-benchmarks (threads %ld)\n", threads);
    else printf("micro-benchmarks (backends' default threads)\n");
    printf("%-24s %-12s %12s  %s\n", "backend", "name", "value", "unit");
    for (int32_t b = 0; b < bs->n; b++) {
        const par_backend_inst *inst = &bs->inst[b];
        char note[PAR_MSG_LEN] = "";
        void *ctx = bench_open(inst, threads, note, sizeof note);
        par_microbench_fn mb = ctx && inst->be->get_proc
                                   ? (par_microbench_fn)inst->be->get_proc(ctx, PAR_PROC_MICROBENCH) : NULL;
        double gemm = NAN, peak = NAN;
        char gemm_unit[32] = "", peak_unit[32] = "";
        for (int i = 0; i < n_names; i++) {
            json_object *je = json_object_new_object();
            json_object_object_add(je, "backend", json_object_new_string(inst->label));
            json_object_object_add(je, "name", json_object_new_string(names[i]));
            double v = 0;
            char unit[32] = "";
            par_msg m = {{0}};
            par_status st = PAR_ERROR;
            if (!ctx) snprintf(m.text, sizeof m.text, "%s", note);
            else if (!mb) {
                snprintf(m.text, sizeof m.text, "no micro-benchmarks (PAR_PROC_MICROBENCH)");
                st = PAR_UNSUPPORTED;
            }
            else st = mb(ctx, names[i], &v, unit, sizeof unit, &m);
            if (st == PAR_OK && isfinite(v)) {
                printf("%-24s %-12s %12.4g  %s\n", inst->label, names[i], v, unit);
                json_object_object_add(je, "value", json_object_new_double(v));
                json_object_object_add(je, "unit", json_object_new_string(unit));
                if (strcmp(names[i], "gemm") == 0) gemm = v, snprintf(gemm_unit, sizeof gemm_unit, "%s", unit);
                if (strcmp(names[i], "peak") == 0) peak = v, snprintf(peak_unit, sizeof peak_unit, "%s", unit);
            } else {
                printf("%-24s %-12s %12s  %s\n", inst->label, names[i], st == PAR_UNSUPPORTED ? "unsupported" : "error",
                       m.text);
                json_object_object_add(je, "error", json_object_new_string(m.text));
                if (st == PAR_ERROR) rc = PAR_EXIT_INTERNAL;
            }
            json_object_array_add(jm, je);
        }
        if (isfinite(gemm) && isfinite(peak) && peak > 0 && strcmp(gemm_unit, peak_unit) == 0) {
            printf("%-24s %-12s %12.3f  (%.1f%% of peak)\n", inst->label, "gemm/peak", gemm / peak, 100.0 * gemm / peak);
            json_object *je = json_object_new_object();
            json_object_object_add(je, "backend", json_object_new_string(inst->label));
            json_object_object_add(je, "name", json_object_new_string("gemm/peak"));
            json_object_object_add(je, "value", json_object_new_double(gemm / peak));
            json_object_object_add(je, "unit", json_object_new_string("ratio"));
            json_object_array_add(jm, je);
        }
        if (ctx) inst->be->destroy(ctx);
    }
    json_object_object_add(jroot, "micro", jm);
    return rc;
}

/* The models of cases/models, one line (and the nearest to a mistyped name first). */
/* The bench child's JSON (in memfd fd) into the file path, by this process: 1 when written. */
static int copy_json(int fd, const char *path)
{
    off_t len = lseek(fd, 0, SEEK_END);
    char *text = len > 0 ? malloc((size_t)len) : NULL;
    int ok = text && pread(fd, text, (size_t)len, 0) == (ssize_t)len;
    FILE *f = ok ? fopen(path, "w") : NULL;
    ok = f && fwrite(text, 1, (size_t)len, f) == (size_t)len;
    if (f && fclose(f) != 0) ok = 0;
    free(text);
    if (!ok) fprintf(stderr, "parity bench: cannot write %s\n", path);
    return ok;
}

static void list_models(FILE *f, const char *wanted)
{
    char dir[4096], names[128][64];
    const char *ptr[128];
    int32_t n = 0;
    snprintf(dir, sizeof dir, "%s/models", par_cases_dir());
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < 128;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && l < 64 && strcmp(e->d_name + l - 5, ".json") == 0) {
            snprintf(names[n], sizeof names[n], "%.*s", (int)(l - 5), e->d_name);
            ptr[n] = names[n];
            n++;
        }
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (int32_t i = 0; i < n; i++) ptr[i] = names[i];
    const char *near = par_name_nearest(wanted, ptr, n);
    if (near) fprintf(f, " did you mean '%s'?", near);
    fprintf(f, " models in %s:", dir);
    for (int32_t i = 0; i < n; i++) fprintf(f, " %s", names[i]);
    fprintf(f, "%s\n", n ? "" : " none");
}

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: parity bench [--model NAME]... [--suite S] [CASE-FILES...] -b LIST [options]\n"
            "\n"
            "Runs each case on each backend in this process, interleaving the timed runs across backends after\n"
            "warm-up, and prints per backend: prepare time, median / p10 / p90 run latency, the ratio of each\n"
            "median to the first backend's, and the median device time when the backend measures it (then the\n"
            "nodes that took most of it). The last outputs are checked against the reference (PASS/FAIL column;\n"
            "a backend's diagnostics make it FAIL).\n"
            "\n"
            "  --model NAME     a model of cases/models (mobilenet_v2, mobilenet_v3_small, mlp, ...); repeatable\n"
            "  --suite S        every case of a suite (models by default)\n"
            "  -b, --backends   backends to compare, first one is the baseline of the ratio\n"
            "  --plugin PATH    load a backend plugin; repeatable\n"
            "  --threads N      set the knob threads=N on every backend that has it\n"
            "  --repeat N       timed runs per backend (default 20)\n"
            "  --warmup N       untimed runs per backend first (default 3)\n"
            "  --micro NAME     a backend micro-benchmark (gemm, peak, ...) instead of cases unless cases are also\n"
            "                   named; repeatable; with gemm and peak, also their ratio\n"
            "  --nodes          list every node's device time (backends with PAR_PROC_DEVICE_TIME), not only the\n"
            "                   top %d\n"
            "  --json FILE      also write the results as JSON\n", BENCH_TOP_NODES);
}

int par_cmd_bench(int argc, char **argv, const char *exe)
{
    enum { O_MODEL = 1000, O_SUITE, O_PLUGIN, O_THREADS, O_REPEAT, O_WARMUP, O_JSON, O_MICRO, O_NODES };
    static const struct option opts[] = {
        {"model", required_argument, NULL, O_MODEL},     {"suite", required_argument, NULL, O_SUITE},
        {"backends", required_argument, NULL, 'b'},      {"plugin", required_argument, NULL, O_PLUGIN},
        {"threads", required_argument, NULL, O_THREADS}, {"repeat", required_argument, NULL, O_REPEAT},
        {"warmup", required_argument, NULL, O_WARMUP},   {"json", required_argument, NULL, O_JSON},
        {"micro", required_argument, NULL, O_MICRO},     {"nodes", no_argument, NULL, O_NODES},
        {"help", no_argument, NULL, 'h'},                {NULL, 0, NULL, 0}};
    char *plugins[PAR_MAX_PLUGINS], *paths[64];
    char model_paths[16][1024];
    char *micro[MAX_MICRO];
    int32_t n_plugins = 0, n_paths = 0, n_models = 0, n_micro = 0;
    const char *blist = NULL, *suite = NULL, *json_path = NULL;
    long threads = 0, repeat = 20, warmup = 3;
    int all_nodes = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "b:h", opts, NULL)) != -1) {
        char *end = NULL;
        switch (ch) {
        case O_MODEL:
            if (n_models == 16) {
                fprintf(stderr, "parity bench: at most 16 --model names\n");
                return PAR_EXIT_USAGE;
            }
            snprintf(model_paths[n_models], sizeof model_paths[0], "%s/models/%s.json", par_cases_dir(), optarg);
            if (access(model_paths[n_models], R_OK) != 0) {
                fprintf(stderr, "parity bench: --model %s: no such model;", optarg);
                list_models(stderr, optarg);
                return PAR_EXIT_USAGE;
            }
            paths[n_paths++] = model_paths[n_models++];
            break;
        case O_SUITE: suite = optarg; break;
        case 'b': blist = optarg; break;
        case O_PLUGIN:
            if (n_plugins == PAR_MAX_PLUGINS) return PAR_EXIT_USAGE;
            plugins[n_plugins++] = optarg;
            break;
        case O_THREADS: {
            int32_t t = 0;
            par_msg tm = {{0}};
            if (par_knob_threads_parse(optarg, &t, &tm) != PAR_OK) {
                fprintf(stderr, "parity bench: --threads: %s\n", tm.text);
                return PAR_EXIT_USAGE;
            }
            threads = t;
            break;
        }
        case O_REPEAT:
        case O_WARMUP: {
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (*end || errno || v < (ch == O_WARMUP ? 0 : 1) || v > 100000) {
                fprintf(stderr, "parity bench: '%s' is not a valid count\n", optarg);
                return PAR_EXIT_USAGE;
            }
            if (ch == O_REPEAT) repeat = v;
            else warmup = v;
            break;
        }
        case O_JSON: json_path = optarg; break;
        case O_MICRO:
            if (n_micro == MAX_MICRO) {
                fprintf(stderr, "parity bench: at most %d --micro names\n", MAX_MICRO);
                return PAR_EXIT_USAGE;
            }
            micro[n_micro++] = optarg;
            break;
        case O_NODES: all_nodes = 1; break;
        case 'h': bench_usage(stdout); return PAR_EXIT_OK;
        default: bench_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc && n_paths < 64; i++) paths[n_paths++] = argv[i];
    if (!n_paths && !suite && !n_micro) suite = "models";

    par_backends *bs = calloc(1, sizeof *bs);
    if (!bs) return PAR_EXIT_INTERNAL;
    int rc = par_cli_backends(bs, n_plugins, plugins, blist, 60);
    if (rc || bs->n == 0) {
        if (!rc) fprintf(stderr, "parity bench: no usable backend\n");
        free(bs);
        return rc ? rc : PAR_EXIT_USAGE;
    }
    par_selection sel = {.n_paths = n_paths, .paths = paths, .suite = suite};
    par_case_set set = {0};
    par_msg msg = {{0}};
    if ((n_paths || suite) && (rc = par_select_cases(&sel, &set, &msg)) != 0) {
        fprintf(stderr, "parity: %s\n", msg.text);
        free(bs);
        return rc;
    }
    /* The backends run in one child process (the timing loop interleaves them, so they share it), in the sandbox
     * (exec/sandbox.h: a uid of its own; uid 0 without capabilities when a runner backend's program only root may
     * run): a backend that crashes ends the bench with a clear line, not this process, and reaches none of its
     * files. The child writes the JSON into a memfd; this process writes the file. */
    int keep_root = 0;
    for (int32_t b = 0; b < bs->n; b++) keep_root |= !par_comp_open_to_all(&bs->inst[b]);
    int json_fd = json_path ? memfd_create("parity-bench-json", MFD_CLOEXEC) : -1;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t kid = json_path && json_fd < 0 ? -1 : par_sandbox_fork(NULL, keep_root);
    uid_t kid_uid = par_sandbox_last_uid();
    if (kid < 0) {
        fprintf(stderr, "parity bench: cannot fork: %s\n", strerror(errno));
        if (n_paths || suite) par_case_set_free(&set);
        free(bs);
        return PAR_EXIT_INTERNAL;
    }
    if (kid > 0) {
        int st = 0, stopped = wait_bench_child(kid, &st);
        par_sandbox_sweep(kid_uid); /* whatever it started */
        if (n_paths || suite) par_case_set_free(&set);
        free(bs);
        int wrote = json_fd < 0 || copy_json(json_fd, json_path);
        if (json_fd >= 0) close(json_fd);
        if (WIFEXITED(st)) return !wrote && WEXITSTATUS(st) != PAR_EXIT_INTERNAL ? PAR_EXIT_INTERNAL : WEXITSTATUS(st);
        if (stopped) {
            fprintf(stderr, "parity bench: the bench process stayed stopped for %d s (a backend stopped it): killed; "
                    "results so far are above\n", BENCH_STOP_S);
            return PAR_EXIT_INTERNAL;
        }
        const char *sn = WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : NULL;
        fprintf(stderr, "parity bench: a backend killed the bench process: signal %d (%s); results so far are above\n",
                WIFSIGNALED(st) ? WTERMSIG(st) : -1, sn ? sn : "unknown");
        return PAR_EXIT_INTERNAL;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(PAR_EXIT_INTERNAL);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC); /* nothing of the harness's stdin */
    if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0) _exit(PAR_EXIT_INTERNAL);
    close(devnull);
    for (int32_t b = 0; b < bs->n; b++) { /* a plugin opens here, never in the main process */
        par_msg pm = {{0}};
        if (par_plugin_enter(bs->inst[b].be, &pm) != PAR_OK) {
            fprintf(stderr, "parity bench: %s\n", pm.text);
            _exit(PAR_EXIT_INTERNAL);
        }
    }
    json_object *jroot = json_object_new_object(), *jcases = json_object_new_array();
    json_object_object_add(jroot, "schema", json_object_new_string("parity.bench"));
    json_object_object_add(jroot, "version", json_object_new_int(1));
    json_object_object_add(jroot, "threads", json_object_new_int((int)threads));
    json_object_object_add(jroot, "repeat", json_object_new_int((int)repeat));
    json_object_object_add(jroot, "warmup", json_object_new_int((int)warmup));
    int exit_code = PAR_EXIT_OK;
    if (n_micro) exit_code = bench_micro(bs, micro, n_micro, threads, jroot);
    bench_be *bb = calloc((size_t)bs->n, sizeof *bb);
    for (int32_t ci = 0; ci < set.n && bb; ci++) {
        int owned = 0;
        par_case *c = par_case_set_get(&set, ci, &owned, &msg);
        if (!c) {
            fprintf(stderr, "parity bench: %s\n", msg.text);
            exit_code = PAR_EXIT_INTERNAL;
            continue;
        }
        const par_graph_desc *g = par_graph_desc_of(c->graph);
        void **inputs = NULL;
        if (par_case_make_inputs(c, &inputs, &msg) != PAR_OK) {
            fprintf(stderr, "parity bench: %s: %s\n", c->id, msg.text);
            exit_code = PAR_EXIT_INTERNAL;
            if (owned) par_case_destroy(c);
            continue;
        }
        /* set up every backend */
        for (int32_t b = 0; b < bs->n; b++) {
            bench_be *x = &bb[b];
            memset(x, 0, sizeof *x);
            x->inst = &bs->inst[b];
            x->verdict = "-";
            const par_backend *be = x->inst->be;
            par_msg m = {{0}};
            if (!(x->ctx = bench_open(x->inst, threads, x->note, sizeof x->note))) continue;
            int bad = 0;
            for (int32_t n = 0; n < g->n_nodes && !bad; n++)
                if (be->supports(x->ctx, g, n, &m) != PAR_OK) {
                    snprintf(x->note, sizeof x->note, "unsupported: node '%s' (%s): %s", g->nodes[n].name,
                             g->nodes[n].op, m.text);
                    bad = 1;
                }
            if (bad) continue;
            x->outs = calloc((size_t)g->n_outputs, sizeof *x->outs);
            for (int32_t k = 0; k < g->n_outputs && x->outs; k++) {
                const par_value *v = &g->values[g->outputs[k]];
                x->outs[k] = calloc((size_t)v->numel, par_dtype_size(v->dtype));
            }
            double t0 = now_ms();
            if (be->prepare(x->ctx, g, &x->prep, &m) != PAR_OK) {
                snprintf(x->note, sizeof x->note, "prepare: %s", m.text);
                continue;
            }
            x->prepare_ms = now_ms() - t0;
            if (par_exec_declarations(x->inst, x->ctx, x->prep, g, &x->algo, &x->rq, &m) != PAR_OK) {
                snprintf(x->note, sizeof x->note, "declarations: %s", m.text);
                continue;
            }
            if (be->bind(x->ctx, x->prep, (const void *const *)inputs, x->outs, &m) != PAR_OK) {
                snprintf(x->note, sizeof x->note, "bind: %s", m.text);
                continue;
            }
            x->samples = calloc((size_t)repeat, sizeof *x->samples);
            x->ok = x->samples != NULL;
            x->diag = be->get_proc ? (par_diagnostics_fn)be->get_proc(x->ctx, PAR_PROC_DIAGNOSTICS) : NULL;
            x->dt = be->get_proc ? (par_device_time_fn)be->get_proc(x->ctx, PAR_PROC_DEVICE_TIME) : NULL;
            if (x->dt) {
                x->dev = calloc((size_t)repeat, sizeof *x->dev);
                x->node_rows = (repeat < BENCH_NODE_RUNS ? repeat : BENCH_NODE_RUNS) + 1;
                x->node_ms = g->n_nodes > 0 ? calloc((size_t)x->node_rows * (size_t)g->n_nodes, sizeof *x->node_ms)
                                            : NULL;
                if (!x->dev || (g->n_nodes > 0 && !x->node_ms)) x->dt = NULL;
            }
            bench_diag(x); /* after prepare */
        }
        /* warm-up, then interleaved timed runs; the order alternates every round */
        for (long r = 0; r < warmup + repeat; r++)
            for (int32_t k = 0; k < bs->n; k++) {
                bench_be *x = &bb[r % 2 ? bs->n - 1 - k : k];
                if (!x->ok) continue;
                par_msg m = {{0}};
                double t0 = now_ms();
                par_status st = x->inst->be->run(x->ctx, x->prep, &m);
                double dt = now_ms() - t0;
                if (st != PAR_OK) {
                    snprintf(x->note, sizeof x->note, "run: %s", m.text);
                    x->ok = 0;
                    continue;
                }
                if (r >= warmup) x->samples[r - warmup] = dt;
                if (r >= warmup) bench_device_time(x, g->n_nodes, r - warmup, dt);
                bench_diag(x);
            }
        /* check the last outputs against the reference, in the precision profile each backend declares (the
         * same judgement as parity run); one reference per distinct profile */
        par_ref_result *refs[PAR_ARITH_N_KINDS][PAR_REQUANT_N_SCHEMES][4] = {{{NULL}}};
        for (int32_t b = 0; b < bs->n; b++) {
            bench_be *x = &bb[b];
            if (!x->ok) continue;
            par_prec p = par_prec_of_backend(x->inst); /* the probe's answers: the same as parity run */
            unsigned a = (unsigned)x->inst->arith < PAR_ARITH_N_KINDS ? (unsigned)x->inst->arith : 0;
            par_ref_result *own = NULL; /* a backend with per-node declarations gets a reference of its own */
            par_ref_result **ref = &refs[a][p.requant][(p.requant_exact ? 1 : 0) | (p.flush > 0 ? 2 : 0)];
            if (x->algo || x->rq) {
                p.algo = x->algo;
                p.requant_node = x->rq;
                ref = &own;
            }
            if (!*ref) par_ref_run(g, &p, (const void *const *)inputs, ref, &msg);
            if (!*ref) continue;
            int64_t bad = 0;
            for (int32_t k = 0; k < g->n_outputs; k++) {
                par_metrics m;
                bad += par_oracle_compare(&(*ref)->values[g->outputs[k]], x->outs[k], &m);
            }
            par_ref_result_destroy(own);
            x->verdict = bad || x->n_diag ? "FAIL" : "PASS";
            if (bad || x->n_diag) exit_code = exit_code ? exit_code : PAR_EXIT_FAIL;
        }
        for (int k = 0; k < PAR_ARITH_N_KINDS; k++)
            for (int j = 0; j < PAR_REQUANT_N_SCHEMES; j++) {
                for (int f = 0; f < 4; f++) par_ref_result_destroy(refs[k][j][f]);
            }

        char thr[48];
        if (threads) snprintf(thr, sizeof thr, "%ld thread%s", threads, threads == 1 ? "" : "s");
        else snprintf(thr, sizeof thr, "backends' default threads");
        printf("\n%s  (%ld timed runs after %ld warm-up, interleaved, %s)\n", c->id, repeat, warmup, thr);
        printf("%-24s %11s %11s %9s %9s %9s %6s %11s\n", "backend", "prepare ms", "median ms", "p10 ms", "p90 ms",
               "ratio", "check", "device ms");
        double base = 0;
        json_object *jc = json_object_new_object(), *jbs = json_object_new_array();
        json_object_object_add(jc, "case", json_object_new_string(c->id));
        for (int32_t b = 0; b < bs->n; b++) {
            bench_be *x = &bb[b];
            json_object *jb = json_object_new_object();
            json_object_object_add(jb, "backend", json_object_new_string(x->inst->label));
            if (x->ok) {
                qsort(x->samples, (size_t)repeat, sizeof *x->samples, cmp_d);
                double med = median(x->samples, (int)repeat);
                if (b == 0 || base == 0) base = med;
                char devs[32] = "-";
                if (x->n_dev > 0) {
                    qsort(x->dev, (size_t)x->n_dev, sizeof *x->dev, cmp_d);
                    snprintf(devs, sizeof devs, "%.3f", median(x->dev, x->n_dev));
                }
                printf("%-24s %11.3f %11.3f %9.3f %9.3f %8.2fx %6s %11s\n", x->inst->label, x->prepare_ms, med,
                       pct(x->samples, (int)repeat, 0.1), pct(x->samples, (int)repeat, 0.9), med / base, x->verdict,
                       devs);
                json_object_object_add(jb, "prepare_ms", json_object_new_double(x->prepare_ms));
                json_object_object_add(jb, "median_ms", json_object_new_double(med));
                json_object_object_add(jb, "p10_ms", json_object_new_double(pct(x->samples, (int)repeat, 0.1)));
                json_object_object_add(jb, "p90_ms", json_object_new_double(pct(x->samples, (int)repeat, 0.9)));
                json_object_object_add(jb, "ratio", json_object_new_double(med / base));
                json_object_object_add(jb, "check", json_object_new_string(x->verdict));
                if (x->n_dev > 0) {
                    json_object_object_add(jb, "device_runs", json_object_new_int(x->n_dev));
                    json_object_object_add(jb, "device_median_ms", json_object_new_double(median(x->dev, x->n_dev)));
                    json_object_object_add(jb, "device_p10_ms", json_object_new_double(pct(x->dev, x->n_dev, 0.1)));
                    json_object_object_add(jb, "device_p90_ms", json_object_new_double(pct(x->dev, x->n_dev, 0.9)));
                }
                if (x->n_diag) {
                    json_object_object_add(jb, "diagnostic", json_object_new_string(x->diag_text));
                    json_object_object_add(jb, "diagnostics", json_object_new_int(x->n_diag));
                }
            } else {
                printf("%-24s %s\n", x->inst->label, x->note);
                json_object_object_add(jb, "error", json_object_new_string(x->note));
            }
            if (x->note[0] && x->ok) printf("%-24s   note: %s\n", "", x->note);
            if (x->n_diag && x->ok)
                printf("%-24s   diagnostic: %s%s\n", "", x->diag_text, x->n_diag > 1 ? " (and more)" : "");
            if (x->ok && x->n_node_runs > 0) {
                json_object *jn = json_object_new_array();
                bench_print_nodes(x, g, all_nodes, jn);
                json_object_object_add(jb, "nodes", jn);
            }
            json_object_array_add(jbs, jb);
            const par_backend *be = x->inst->be;
            if (x->prep) be->release(x->ctx, x->prep);
            if (x->ctx) be->destroy(x->ctx);
            for (int32_t k = 0; x->outs && k < g->n_outputs; k++) free(x->outs[k]);
            free(x->outs);
            free(x->samples);
            free(x->algo);
            free(x->rq);
            free(x->dev);
            free(x->node_ms);
        }
        json_object_object_add(jc, "backends", jbs);
        json_object_array_add(jcases, jc);
        par_case_free_inputs(c, inputs);
        if (owned) par_case_destroy(c);
    }
    json_object_object_add(jroot, "cases", jcases);
    if (json_fd >= 0) {
        const char *text = json_object_to_json_string_ext(jroot, JSON_C_TO_STRING_PRETTY);
        size_t len = strlen(text), off = 0;
        while (off < len) {
            ssize_t w = write(json_fd, text + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += (size_t)w;
        }
        if (off < len) {
            fprintf(stderr, "parity bench: cannot write the results for %s\n", json_path);
            exit_code = PAR_EXIT_INTERNAL;
        }
    }
    json_object_put(jroot);
    free(bb);
    if (n_paths || suite) par_case_set_free(&set);
    free(bs);
    fflush(stdout);
    fflush(stderr);
    _exit(exit_code);
}
