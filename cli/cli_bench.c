/*
 * cli_bench.c - `parity bench`: latency of several backends side by side on the same cases, with runs interleaved
 * across backends (b1 b2 b1 b2 ...) after warm-up so that machine drift hits all of them alike. Reports median, p10
 * and p90 per backend and the ratio of each median to the first backend's. The outputs are checked against the
 * reference, so a fast wrong answer is shown as such.
 *
 * Execution: the one executor of the harness (exec/exec.h). Each backend runs its case in a job of its own fork
 * server, driven run by run (par_exec_begin, par_exec_step, par_exec_end), so bench gets what parity run gets: the
 * sandbox, a deadline on every phase and every run (--timeout, then TIMEOUT), the checks between runs (guards,
 * unwritten elements, FLAKY) and the child's clocks checked against the worker's. A backend that crashes, hangs or
 * misbehaves costs its own column of that case, never the bench. The run time is the child's clock around the
 * backend's run() (within what the worker saw), so the round trip to the child is not in it.
 *
 * Fairness: the order alternates every round (b1 b2, b2 b1, ...) so that neither backend always runs right after
 * the other (warm caches, a thread pool still spinning); the warm-up rounds are interleaved the same way.
 * Statistics: the median is the mean of the two middle samples for an even count; p10 and p90 are nearest-rank.
 *
 * Device time: a backend with PAR_PROC_DEVICE_TIME (a GPU's timestamps) reports it after every run; its median, p10
 * and p90 are printed beside the wall times, then per backend the nodes that took most device time (median over the
 * first BENCH_NODE_RUNS timed runs; the top BENCH_TOP_NODES, or every timed node with --nodes). A device time longer
 * than the run's wall time cannot be right: the executor makes it an ERROR. A backend's diagnostics
 * (PAR_PROC_DIAGNOSTICS, after prepare and every run) make its check FAIL, as in parity run.
 *
 * `--micro NAME` (repeatable) runs each backend's PAR_PROC_MICROBENCH ("gemm", "peak", ...) in a sandboxed child
 * (par_exec_micro) and prints the value and unit per backend; with both gemm and peak it adds their ratio.
 */
#include "bench.h"

#include "core/files.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MICRO 8

/* One row of --micro's JSON. */
static void micro_json(json_object *jm, const char *label, const char *name, double v, const char *unit,
                       const char *error)
{
    json_object *je = json_object_new_object();
    json_object_object_add(je, "backend", json_object_new_string(label));
    json_object_object_add(je, "name", json_object_new_string(name));
    if (error) {
        json_object_object_add(je, "error", json_object_new_string(error));
    } else {
        json_object_object_add(je, "value", json_object_new_double(v));
        json_object_object_add(je, "unit", json_object_new_string(unit));
    }
    json_object_array_add(jm, je);
}

/* --micro: each backend's own micro-benchmarks, one at a time in a sandboxed child (they measure peaks, not each
 * other). */
static int bench_micro(const par_backends *bs, char **names, int n_names, const bench_opts *o, json_object *jroot)
{
    int rc = PAR_EXIT_OK;
    json_object *jm = json_object_new_array();
    if (o->threads) printf("micro-benchmarks (threads %ld)\n", o->threads);
    else printf("micro-benchmarks (backends' default threads)\n");
    printf("%-24s %-12s %12s  %s\n", "backend", "name", "value", "unit");
    for (int32_t b = 0; b < bs->n; b++) {
        const par_backend_inst *inst = &bs->inst[b];
        double gemm = NAN, peak = NAN;
        char gemm_unit[32] = "", peak_unit[32] = "";
        for (int i = 0; i < n_names; i++) {
            double v = 0;
            char unit[32] = "";
            par_msg m = {{0}};
            par_status st = par_exec_micro(inst, names[i], o->timeout_s, &v, unit, sizeof unit, &m);
            if (st == PAR_OK) {
                printf("%-24s %-12s %12.4g  %s\n", inst->label, names[i], v, unit);
                micro_json(jm, inst->label, names[i], v, unit, NULL);
                if (strcmp(names[i], "gemm") == 0) gemm = v, snprintf(gemm_unit, sizeof gemm_unit, "%s", unit);
                if (strcmp(names[i], "peak") == 0) peak = v, snprintf(peak_unit, sizeof peak_unit, "%s", unit);
            } else {
                printf("%-24s %-12s %12s  %s\n", inst->label, names[i], st == PAR_UNSUPPORTED ? "unsupported" : "error",
                       m.text);
                micro_json(jm, inst->label, names[i], 0, NULL, m.text);
                if (st == PAR_ERROR) rc = PAR_EXIT_INTERNAL;
            }
        }
        if (isfinite(gemm) && isfinite(peak) && peak > 0 && strcmp(gemm_unit, peak_unit) == 0) {
            printf("%-24s %-12s %12.3f  (%.1f%% of peak)\n", inst->label, "gemm/peak", gemm / peak, 100.0 * gemm / peak);
            micro_json(jm, inst->label, "gemm/peak", gemm / peak, "ratio", NULL);
        }
    }
    json_object_object_add(jroot, "micro", jm);
    return rc;
}

/* --threads N: the knob threads=N on every backend (replacing its own); a backend that refuses the knob (it has
 * none) runs with its default, with a note. Each changed instance is probed again, as run probes. */
static void bench_threads(par_backends *bs, long threads, char notes[][PAR_MSG_LEN], double timeout_s)
{
    for (int32_t b = 0; threads > 0 && b < bs->n; b++) {
        par_backend_inst *inst = &bs->inst[b];
        par_backend_inst keep = *inst;
        int32_t k = 0;
        while (k < inst->n_knobs && strcmp(inst->knob_key[k], "threads") != 0) k++;
        if (k == PAR_MAX_KNOBS) {
            snprintf(notes[b], PAR_MSG_LEN, "no room for the knob threads: runs with its knobs as given");
            continue;
        }
        if (k == inst->n_knobs) inst->n_knobs++;
        snprintf(inst->knob_key[k], sizeof inst->knob_key[k], "threads");
        snprintf(inst->knob_val[k], sizeof inst->knob_val[k], "%ld", threads);
        par_exec_probe(inst, timeout_s);
        if (!inst->usable && inst->knob_error) {
            *inst = keep;
            snprintf(notes[b], PAR_MSG_LEN, "no threads knob: runs with its default");
        }
    }
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
            "Runs each case on each backend, each in a sandboxed process of its own, interleaving the timed runs\n"
            "across backends after warm-up, and prints per backend: prepare time, median / p10 / p90 run latency,\n"
            "the ratio of each median to the first backend's, and the median device time when the backend\n"
            "measures it (then the nodes that took most of it). The outputs are checked against the reference\n"
            "(PASS/FAIL column; a backend's diagnostics make it FAIL); a backend that crashes, hangs or is caught\n"
            "misbehaving gets its verdict in place of its row (CRASH, TIMEOUT, ...).\n"
            "\n"
            "  --model NAME     a model of cases/models (mobilenet_v2, mobilenet_v3_small, mlp, ...); repeatable\n"
            "  --suite S        every case of a suite (models by default)\n"
            "  -b, --backends   backends to compare, first one is the baseline of the ratio\n"
            "  --plugin PATH    load a backend plugin; repeatable\n"
            "  --threads N      set the knob threads=N on every backend that has it\n"
            "  --repeat N       timed runs per backend (default 20)\n"
            "  --warmup N       untimed runs per backend first (default 3)\n"
            "  --timeout S      seconds for a backend's start to bind, and for each run (default 60): then TIMEOUT\n"
            "  --micro NAME     a backend micro-benchmark (gemm, peak, ...) instead of cases unless cases are also\n"
            "                   named; repeatable; with gemm and peak, also their ratio\n"
            "  --nodes          list every node's device time (backends with PAR_PROC_DEVICE_TIME), not only the\n"
            "                   top %d\n"
            "  --json FILE      also write the results as JSON\n", BENCH_TOP_NODES);
}


typedef struct bench_args {
    char *plugins[PAR_MAX_PLUGINS], *paths[64], *micro[MAX_MICRO];
    char model_paths[16][1024];
    int32_t n_plugins, n_paths, n_models, n_micro;
    const char *blist, *suite, *json_path;
    bench_opts o;
} bench_args;

/* A count option in [lo, 100000]; -1 after saying why. */
static long count_arg(const char *s, long lo)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > 100000) {
        fprintf(stderr, "parity bench: '%s' is not a valid count\n", s);
        return -1;
    }
    return v;
}

/* The command line into a; returns -1 to go on, else the exit status. */
static int bench_parse(int argc, char **argv, bench_args *a)
{
    enum { O_MODEL = 1000, O_SUITE, O_PLUGIN, O_THREADS, O_REPEAT, O_WARMUP, O_JSON, O_MICRO, O_NODES, O_TIMEOUT };
    static const struct option opts[] = {
        {"model", required_argument, NULL, O_MODEL},     {"suite", required_argument, NULL, O_SUITE},
        {"backends", required_argument, NULL, 'b'},      {"plugin", required_argument, NULL, O_PLUGIN},
        {"threads", required_argument, NULL, O_THREADS}, {"repeat", required_argument, NULL, O_REPEAT},
        {"warmup", required_argument, NULL, O_WARMUP},   {"json", required_argument, NULL, O_JSON},
        {"micro", required_argument, NULL, O_MICRO},     {"nodes", no_argument, NULL, O_NODES},
        {"timeout", required_argument, NULL, O_TIMEOUT}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    a->o = (bench_opts){.repeat = 20, .warmup = 3, .timeout_s = 60};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "b:h", opts, NULL)) != -1) {
        switch (ch) {
        case O_MODEL: {
            if (a->n_models == 16) {
                fprintf(stderr, "parity bench: at most 16 --model names\n");
                return PAR_EXIT_USAGE;
            }
            char *mp = a->model_paths[a->n_models];
            snprintf(mp, sizeof a->model_paths[0], "%s/models/%s.json", par_cases_dir(), optarg);
            if (access(mp, R_OK) != 0) {
                fprintf(stderr, "parity bench: --model %s: no such model;", optarg);
                list_models(stderr, optarg);
                return PAR_EXIT_USAGE;
            }
            a->paths[a->n_paths++] = mp;
            a->n_models++;
            break;
        }
        case O_SUITE: a->suite = optarg; break;
        case 'b': a->blist = optarg; break;
        case O_PLUGIN:
            if (a->n_plugins == PAR_MAX_PLUGINS) {
                fprintf(stderr, "parity bench: at most %d --plugin paths\n", PAR_MAX_PLUGINS);
                return PAR_EXIT_USAGE;
            }
            a->plugins[a->n_plugins++] = optarg;
            break;
        case O_THREADS: {
            int32_t t = 0;
            par_msg tm = {{0}};
            if (par_knob_threads_parse(optarg, &t, &tm) != PAR_OK) {
                fprintf(stderr, "parity bench: --threads: %s\n", tm.text);
                return PAR_EXIT_USAGE;
            }
            a->o.threads = t;
            break;
        }
        case O_REPEAT:
        case O_WARMUP: {
            long v = count_arg(optarg, ch == O_WARMUP ? 0 : 1);
            if (v < 0) return PAR_EXIT_USAGE;
            if (ch == O_REPEAT) a->o.repeat = v;
            else a->o.warmup = v;
            break;
        }
        case O_TIMEOUT: {
            char *end = NULL;
            a->o.timeout_s = strtod(optarg, &end);
            if (*end || !(a->o.timeout_s > 0) || a->o.timeout_s > 86400) {
                fprintf(stderr, "parity bench: --timeout '%s' is not a number of seconds in (0, 86400]\n", optarg);
                return PAR_EXIT_USAGE;
            }
            break;
        }
        case O_JSON: a->json_path = optarg; break;
        case O_MICRO:
            if (a->n_micro == MAX_MICRO) {
                fprintf(stderr, "parity bench: at most %d --micro names\n", MAX_MICRO);
                return PAR_EXIT_USAGE;
            }
            a->micro[a->n_micro++] = optarg;
            break;
        case O_NODES: a->o.all_nodes = 1; break;
        case 'h': bench_usage(stdout); return PAR_EXIT_OK;
        default: bench_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (a->n_paths == 64) {
            fprintf(stderr, "parity bench: at most 64 case files\n");
            return PAR_EXIT_USAGE;
        }
        a->paths[a->n_paths++] = argv[i];
    }
    if (!a->n_paths && !a->suite && !a->n_micro) a->suite = "models";
    return -1;
}

/* The cases of the selection, each on every backend through the backends' fork servers (started here, after the
 * probes and the micro-benchmarks: a job forked from this process reaps every child it has). */
static int bench_cases(const par_case_set *set, const par_backends *bs, char notes[][PAR_MSG_LEN], const bench_opts *o,
                       json_object *jcases)
{
    par_exec_server **sv = calloc((size_t)bs->n, sizeof *sv);
    if (!sv) return PAR_EXIT_INTERNAL;
    for (int32_t b = 0; b < bs->n; b++) {
        par_msg m = {{0}};
        if (!(sv[b] = par_exec_server_start(&bs->inst[b], &m)))
            snprintf(notes[b], PAR_MSG_LEN, "its fork server did not start: %s", m.text);
    }
    par_msg ready = {{0}};
    if (par_exec_servers_ready(sv, bs->n, o->timeout_s, &ready) != PAR_OK) {
        fprintf(stderr, "parity bench: %s\n", ready.text);
        for (int32_t b = 0; b < bs->n; b++) par_exec_server_stop(sv[b]);
        free(sv);
        return PAR_EXIT_USAGE;
    }
    int rc = PAR_EXIT_OK;
    for (int32_t ci = 0; ci < set->n; ci++) {
        int owned = 0;
        par_msg msg = {{0}};
        par_case *c = par_case_set_get(set, ci, &owned, &msg);
        if (!c) {
            fprintf(stderr, "parity bench: %s\n", msg.text);
            rc = PAR_EXIT_INTERNAL;
            continue;
        }
        int r = par_bench_case(c, bs, sv, notes, o, jcases);
        if (r > rc) rc = r; /* PAR_EXIT_INTERNAL over PAR_EXIT_FAIL over PAR_EXIT_OK */
        if (owned) par_case_destroy(c);
        fflush(stdout);
    }
    for (int32_t b = 0; b < bs->n; b++)
        if (sv[b]) par_exec_server_stop(sv[b]);
    free(sv);
    return rc;
}

int par_cmd_bench(int argc, char **argv, const char *exe)
{
    (void)exe;
    bench_args *a = calloc(1, sizeof *a);
    par_backends *bs = calloc(1, sizeof *bs);
    char(*notes)[PAR_MSG_LEN] = NULL;
    par_case_set set = {0};
    int have_set = 0, rc = a && bs ? bench_parse(argc, argv, a) : PAR_EXIT_INTERNAL;
    if (rc >= 0) goto out;
    rc = par_cli_backends(bs, a->n_plugins, a->plugins, a->blist, 60);
    if (rc || bs->n == 0) {
        if (!rc) fprintf(stderr, "parity bench: no usable backend\n");
        rc = rc ? rc : PAR_EXIT_USAGE;
        goto out;
    }
    notes = calloc((size_t)bs->n, sizeof *notes);
    par_selection sel = {.n_paths = a->n_paths, .paths = a->paths, .suite = a->suite};
    par_msg msg = {{0}};
    if (!notes) {
        rc = PAR_EXIT_INTERNAL;
        goto out;
    }
    if ((a->n_paths || a->suite) && (rc = par_select_cases(&sel, &set, &msg)) != 0) {
        fprintf(stderr, "parity: %s\n", msg.text);
        goto out;
    }
    have_set = a->n_paths || a->suite;
    bench_threads(bs, a->o.threads, notes, 60);
    json_object *jroot = json_object_new_object(), *jcases = json_object_new_array();
    json_object_object_add(jroot, "schema", json_object_new_string("parity.bench"));
    json_object_object_add(jroot, "version", json_object_new_int(1));
    json_object_object_add(jroot, "threads", json_object_new_int((int)a->o.threads));
    json_object_object_add(jroot, "repeat", json_object_new_int((int)a->o.repeat));
    json_object_object_add(jroot, "warmup", json_object_new_int((int)a->o.warmup));
    rc = a->n_micro ? bench_micro(bs, a->micro, a->n_micro, &a->o, jroot) : PAR_EXIT_OK;
    if (have_set) {
        int r = bench_cases(&set, bs, notes, &a->o, jcases);
        if (r > rc) rc = r;
    }
    json_object_object_add(jroot, "cases", jcases);
    if (a->json_path) {
        const char *text = json_object_to_json_string_ext(jroot, JSON_C_TO_STRING_PRETTY);
        if (par_write_file_atomic(a->json_path, text, &msg) != 0) {
            fprintf(stderr, "parity bench: %s\n", msg.text);
            rc = PAR_EXIT_INTERNAL;
        }
    }
    json_object_put(jroot);
out:
    if (have_set) par_case_set_free(&set);
    free(notes);
    free(bs);
    free(a);
    return rc;
}
