/*
 * cli_run.c - `parity run` and `parity list`, and the backend resolution they share with bench.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "campaign/localize.h"
#include "formats/onnx_suite.h"
#include "cases/sweep.h"
#include "reports/diff.h"
#include "reports/junit.h"
#include "reports/report.h"
#include "reports/report_read.h"
#include "reports/summary.h"
#include "core/clock.h"
#include "core/files.h"

/* Returns 0, or -1 with the message printed (a plugin named like a backend already available). */
static int add_avail(par_backends *bs, const par_backend *be, const char *plugin)
{
    for (int32_t i = 0; i < bs->n_avail; i++)
        if (strcmp(bs->avail[i]->name, be->name) == 0) {
            fprintf(stderr, "parity: plugin %s: backend name '%s' is already taken by %s%s\n", plugin ? plugin : "?",
                    be->name, bs->avail_plugin[i][0] ? "plugin " : "the built-in backend",
                    bs->avail_plugin[i][0] ? bs->avail_plugin[i] : "");
            return -1;
        }
    if (bs->n_avail == PAR_MAX_BACKENDS) {
        fprintf(stderr, "parity: more than %d backends\n", PAR_MAX_BACKENDS);
        return -1;
    }
    snprintf(bs->avail_plugin[bs->n_avail], sizeof bs->avail_plugin[0], "%s", plugin ? plugin : "");
    bs->avail[bs->n_avail++] = be;
    return 0;
}

static const char *arith_name(par_arith a)
{
    switch (a) {
    case PAR_ARITH_F32: return "f32";
    case PAR_ARITH_F16_STORAGE: return "f16-storage";
    case PAR_ARITH_F16: return "f16";
    case PAR_ARITH_BF16: return "bf16";
    case PAR_ARITH_BF16_STORAGE: return "bf16-storage";
    case PAR_ARITH_N_KINDS: break;
    }
    return "?";
}

int par_cli_backends(par_backends *bs, int32_t n_plugins, char **plugins, const char *list, double timeout_s)
{
    memset(bs, 0, sizeof *bs);
    int32_t nb = 0;
    const par_backend *const *builtin = par_builtin_backends(&nb);
    for (int32_t i = 0; i < nb; i++) add_avail(bs, builtin[i], NULL);
    for (int32_t i = 0; i < n_plugins; i++) {
        const par_backend *be = NULL;
        par_msg msg = {{0}};
        if (par_plugin_load(plugins[i], timeout_s, &be, &msg) != PAR_OK) {
            fprintf(stderr, "parity: %s\n", msg.text);
            return PAR_EXIT_USAGE;
        }
        if (add_avail(bs, be, plugins[i]) != 0) return PAR_EXIT_USAGE;
    }
    int explicit_list = list != NULL;
    if (!list) {
        /* every available backend */
        for (int32_t i = 0; i < bs->n_avail; i++) {
            par_backend_inst *in = &bs->inst[bs->n++];
            memset(in, 0, sizeof *in);
            snprintf(in->label, sizeof in->label, "%s", bs->avail[i]->name);
            in->be = bs->avail[i];
            snprintf(in->plugin_path, sizeof in->plugin_path, "%s", bs->avail_plugin[i]);
        }
    } else {
        /* split on commas outside brackets */
        const char *p = list;
        while (*p) {
            char spec[512];
            size_t k = 0;
            int depth = 0;
            while (*p && (depth > 0 || *p != ',')) {
                if (*p == '[') depth++;
                if (*p == ']') depth--;
                if (k + 1 < sizeof spec) spec[k++] = *p;
                p++;
            }
            spec[k] = 0;
            if (*p == ',') p++;
            if (!k) continue;
            if (bs->n == PAR_MAX_BACKENDS) {
                fprintf(stderr, "parity: -b: more than %d backends\n", PAR_MAX_BACKENDS);
                return PAR_EXIT_USAGE;
            }
            par_backend_inst *in = &bs->inst[bs->n];
            par_msg msg = {{0}};
            if (par_backend_spec_parse(spec, in, &msg) != PAR_OK) {
                fprintf(stderr, "parity: -b '%s': %s\n", spec, msg.text);
                return PAR_EXIT_USAGE;
            }
            /* the backend name is the label up to '[' */
            char name[128];
            snprintf(name, sizeof name, "%s", in->label);
            char *br = strchr(name, '[');
            if (br) *br = 0;
            for (int32_t i = 0; i < bs->n_avail; i++)
                if (strcmp(bs->avail[i]->name, name) == 0) {
                    in->be = bs->avail[i];
                    snprintf(in->plugin_path, sizeof in->plugin_path, "%s", bs->avail_plugin[i]);
                }
            if (!in->be) {
                const char *names[PAR_MAX_BACKENDS];
                for (int32_t i = 0; i < bs->n_avail; i++) names[i] = bs->avail[i]->name;
                const char *near = par_name_nearest(name, names, bs->n_avail);
                if (near) fprintf(stderr, "parity: -b: no backend named '%s'; did you mean '%s'?", name, near);
                else fprintf(stderr, "parity: -b: no backend named '%s'", name);
                fprintf(stderr, " (available:");
                for (int32_t i = 0; i < bs->n_avail; i++) fprintf(stderr, " %s", bs->avail[i]->name);
                fprintf(stderr, "%s)\n", bs->n_avail ? "" : " none; load plugins with --plugin PATH");
                return PAR_EXIT_USAGE;
            }
            for (int32_t i = 0; i < bs->n; i++)
                if (strcmp(bs->inst[i].label, in->label) == 0) {
                    fprintf(stderr, "parity: -b: backend '%s' given twice\n", in->label);
                    return PAR_EXIT_USAGE;
                }
            bs->n++;
        }
    }
    /* probe: init (and knobs) in a child */
    int32_t kept = 0;
    for (int32_t i = 0; i < bs->n; i++) {
        par_exec_probe(&bs->inst[i], timeout_s);
        if (!bs->inst[i].usable) {
            if (bs->inst[i].knob_error) {
                /* a usage error: the spec names a knob or value the backend does not take */
                fprintf(stderr, "parity: -b '%s': %s\n", bs->inst[i].label, bs->inst[i].unusable_reason);
                return PAR_EXIT_USAGE;
            }
            if (explicit_list) {
                fprintf(stderr, "parity: backend '%s' is not usable: %s\n", bs->inst[i].label,
                        bs->inst[i].unusable_reason);
                return PAR_EXIT_USAGE;
            }
            fprintf(stderr, "parity: skipping backend '%s': %s\n", bs->inst[i].label, bs->inst[i].unusable_reason);
            continue;
        }
        if (kept != i) bs->inst[kept] = bs->inst[i];
        kept++;
    }
    bs->n = kept;
    return 0;
}

/* ---- options shared by run and list cases ---------------------------------------------------------------- */

enum {
    OPT_SUITE = 1000, OPT_CASE, OPT_SEED, OPT_REPEAT, OPT_WARMUP, OPT_TIMEOUT, OPT_SHARD, OPT_OUT, OPT_PLUGIN,
    OPT_NO_ISOLATE, OPT_NO_PROGRESS, OPT_MAX_FAIL, OPT_MEM_LIMIT, OPT_JUNIT, OPT_ROUNDS, OPT_BASELINE, OPT_HELP,
    OPT_HTML, OPT_SHAPE, OPT_LOCALIZE, OPT_NO_LOCALIZE, OPT_LOCALIZE_BUDGET
};

static const struct option run_opts[] = {
    {"backends", required_argument, NULL, 'b'},
    {"ops", required_argument, NULL, 'o'},
    {"match", required_argument, NULL, 'k'},
    {"jobs", required_argument, NULL, 'j'},
    {"suite", required_argument, NULL, OPT_SUITE},
    {"case", required_argument, NULL, OPT_CASE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"out", required_argument, NULL, OPT_OUT},
    {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"no-isolate", no_argument, NULL, OPT_NO_ISOLATE},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"max-failures", required_argument, NULL, OPT_MAX_FAIL},
    {"mem-limit", required_argument, NULL, OPT_MEM_LIMIT},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"html", required_argument, NULL, OPT_HTML},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"localize", no_argument, NULL, OPT_LOCALIZE},
    {"no-localize", no_argument, NULL, OPT_NO_LOCALIZE},
    {"localize-budget", required_argument, NULL, OPT_LOCALIZE_BUDGET},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Seconds all the localizations by prefixes of one run may take (past it, a walk stops between chunks of prefixes). */
#define LOCALIZE_BUDGET_S 30

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: parity run [CASE-FILES-OR-FOLDERS...] [options]\n"
            "\n"
            "Runs every selected case on every selected backend; the reference computes each output element's value\n"
            "and error budget, the oracle compares. Prints a summary (backend x verdict counts, the worst cases with\n"
            "their repro commands) and writes DIR/report.json. With no case given, runs --suite default.\n"
            "\n"
            "selection:\n"
            "  --suite NAME       quick (>= 1,500 generated cases), full (>= 10,000), models, default (quick + small models)\n"
            "  --case ID          one case by ID, e.g. --case 'relu(x=[3])#seed=1' (the ID carries its seed)\n"
            "  -o, --ops LIST     only cases using one of these ops (comma-separated; see 'parity list ops')\n"
            "  -k, --match REGEX  only cases whose ID matches (POSIX extended regex)\n"
            "  --seed N           base seed of generated cases (default 1); IDs show it as #seed=N\n"
            "  --shape NAME=D0,.. the shape of a model file's input that the file leaves symbolic (repeatable)\n"
            "  --shard K/N        the K-th of N deterministic shares of the selected cases (1 <= K <= N)\n"
            "backends:\n"
            "  -b, --backends L   comma-separated specs NAME or NAME[knob=value,...], e.g. -b cpu,cpu[kernels=scalar]\n"
            "                     (default: every built-in and loaded backend that is usable here)\n"
            "  --plugin PATH      load a backend plugin (.so); repeatable\n"
            "execution:\n"
            "  --repeat N         timed runs per case (default 3); runs that differ bit-wise are FLAKY\n"
            "  --warmup N         untimed runs first (default 1)\n"
            "  --rounds R         run the whole selection R times, each job in a fresh process (default 1); a\n"
            "                     record keeps every round's timed runs and the worst verdict (for latency gates)\n"
            "  --timeout S        time limit per case and backend, seconds (default 60): then TIMEOUT\n"
            "  -j, --jobs N       cases in parallel (default 1)\n"
            "  --mem-limit SIZE   resident memory a backend child may use, e.g. 512M, 4G, or 0 for none (default\n"
            "                     min(physical RAM / (2 x jobs), 8G)); above it: CRASH, out of memory\n"
            "  --no-isolate       run backends in this process (for a debugger; a crash ends the run)\n"
            "output:\n"
            "  --out DIR          write DIR/report.json (default out)\n"
            "  --max-failures N   failures listed in the summary (default 20)\n"
            "  --junit FILE       also write the report as JUnit XML, rendered from DIR/report.json\n"
            "  --html FILE        also write the HTML page, rendered from DIR/report.json (docs/reports-html.md)\n"
            "  --baseline BASE    compare DIR/report.json with the report BASE as 'parity diff BASE' does, print the\n"
            "                     diff, and exit with its gate: 1 when it is FAIL, else 0, even when the run has\n"
            "                     failures that BASE has too (docs/reports-diff.md)\n"
            "  --localize         localize up to 16 failing records of models (default 4): each failing record of a\n"
            "                     case of several nodes names its first divergent node, as 'parity localize' finds\n"
            "                     it, at the end of its reason, and the report carries every node's error/budget\n"
            "                     (report.json \"localization\", the HTML's strip); --no-localize: none\n"
            "  --localize-budget S  seconds the localization by prefixes may take in all (default %d; 0: no limit):\n"
            "                     a backend that gives no per-node outputs is localized one prefix of the graph after\n"
            "                     another, and a model of hundreds of nodes takes minutes; past the budget a record\n"
            "                     says how far the walk got ('parity localize' walks every prefix)\n"
            "  --no-progress      no progress bar (on a terminal), no progress line every 10 s (elsewhere: CI, pipes)\n"
            "\n"
            "Exit codes: 0 all passed or unsupported, 1 a conformance failure, 2 usage or input error, 3 internal,\n"
            "130 / 143 interrupted by SIGINT / SIGTERM (the partial report is written, marked \"interrupted\").\n",
            LOCALIZE_BUDGET_S);
}

/* --shape NAME=D0,D1,... appended to buf ("a=...;b=..."): the shapes of model inputs their file leaves symbolic. */
static int add_shape(char *buf, size_t len, const char *arg)
{
    size_t used = strlen(buf);
    if (!strchr(arg, '=') || used + strlen(arg) + 2 > len) {
        fprintf(stderr, "parity: --shape '%s': expected NAME=D0,D1,...\n", arg);
        return -1;
    }
    snprintf(buf + used, len - used, "%s%s", used ? ";" : "", arg);
    return 0;
}

static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || s[0] == '-') {
        fprintf(stderr, "parity: %s: '%s' is not a non-negative integer\n", opt, s);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int32_t *out)
{
    uint64_t v;
    if (parse_u64(opt, s, &v) < 0) return -1;
    if (v < (uint64_t)lo || v > (uint64_t)hi) {
        fprintf(stderr, "parity: %s: %s is outside %d..%d\n", opt, s, lo, hi);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* SIZE: bytes, or a number with K, M, G (binary units); 0 or "none": no limit. Returns 0 or -1 (printed). */
static int parse_size(const char *opt, const char *s, int64_t *out)
{
    if (strcmp(s, "none") == 0) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (!*s || s[0] == '-' || *end || errno || v > ((unsigned long long)1 << (62 - shift))) {
        fprintf(stderr, "parity: %s: '%s' is not a size (bytes, or a number with K, M or G)\n", opt, s);
        return -1;
    }
    *out = (int64_t)(v << shift);
    return 0;
}

/* The default memory limit of a backend child: min(physical RAM / (2 x jobs), 8 GiB). */
static int64_t default_mem_limit(int32_t jobs)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int64_t cap = (int64_t)8 << 30;
    if (pages <= 0 || psz <= 0) return cap;
    int64_t lim = (int64_t)pages * psz / (2 * (int64_t)(jobs > 0 ? jobs : 1));
    return lim < cap ? lim : cap;
}

static char *join_args(int argc, char **argv, const char *exe)
{
    size_t len = strlen(exe) + 8;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 3;
    char *s = malloc(len);
    if (!s) return NULL;
    snprintf(s, len, "%s", exe);
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* What 'parity run' was asked: the selection, the run's configuration, the backends, the outputs. */
typedef struct run_args {
    par_selection sel;
    char shapes[2048];
    par_run_config cfg;
    char *plugins[PAR_MAX_PLUGINS];
    int32_t n_plugins;
    const char *blist, *out_dir, *junit, *html, *baseline;
    int localize;      /* failing model records to localize at most (default LOCALIZE_DEFAULT) */
    int32_t localize_budget; /* seconds for the prefix walks of all of them (default LOCALIZE_BUDGET_S; 0: none) */
    int32_t max_failures;
    int64_t mem_limit;
} run_args;

/* The options and operands into a; -1 to go on, else the exit code (a usage error, or 0 after --help). */
/* Failing model records localized by default: each costs a backend run and two float64 reference runs of every
 * value of the model (MobileNetV2: about 13 s of CPU), so a few, not all. */
#define LOCALIZE_DEFAULT 4

static int run_parse(int argc, char **argv, run_args *a)
{
    a->out_dir = "out";
    a->max_failures = 20;
    a->mem_limit = -1;
    a->localize = LOCALIZE_DEFAULT;
    a->localize_budget = LOCALIZE_BUDGET_S;
    a->cfg.node_companion = 1;
    a->cfg.exec = (par_exec_opts){.warmup = 1, .repeat = 3, .timeout_s = 60, .isolate = 1};
    a->cfg.jobs = 1;
    a->cfg.progress = 1;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "b:o:k:j:h", run_opts, NULL)) != -1) {
        switch (c) {
        case 'b': a->blist = optarg; break;
        case 'o': a->sel.ops = optarg; break;
        case 'k': a->sel.id_regex = optarg; break;
        case 'j':
            if (parse_int("-j", optarg, 1, 256, &a->cfg.jobs) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_SUITE: a->sel.suite = optarg; break;
        case OPT_CASE: a->sel.case_id = optarg; break;
        case OPT_SHAPE:
            if (add_shape(a->shapes, sizeof a->shapes, optarg) < 0) return PAR_EXIT_USAGE;
            a->sel.input_shapes = a->shapes;
            break;
        case OPT_SEED:
            if (parse_u64("--seed", optarg, &a->sel.seed) < 0) return PAR_EXIT_USAGE;
            if (!a->sel.seed) {
                fprintf(stderr, "parity: --seed: must be >= 1\n");
                return PAR_EXIT_USAGE;
            }
            break;
        case OPT_REPEAT:
            if (parse_int("--repeat", optarg, 1, 100000, &a->cfg.exec.repeat) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_WARMUP:
            if (parse_int("--warmup", optarg, 0, 100000, &a->cfg.exec.warmup) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_TIMEOUT: {
            char *end;
            a->cfg.exec.timeout_s = strtod(optarg, &end);
            if (*end || !(a->cfg.exec.timeout_s > 0) || a->cfg.exec.timeout_s > 86400) {
                fprintf(stderr, "parity: --timeout: '%s' is not a number of seconds in (0, 86400]\n", optarg);
                return PAR_EXIT_USAGE;
            }
            break;
        }
        case OPT_SHARD: {
            int k = 0, n = 0;
            char tail;
            if (sscanf(optarg, "%d/%d%c", &k, &n, &tail) != 2 || n < 1 || k < 1 || k > n) {
                fprintf(stderr, "parity: --shard: '%s' is not K/N with 1 <= K <= N\n", optarg);
                return PAR_EXIT_USAGE;
            }
            a->sel.shard_k = k;
            a->sel.shard_n = n;
            break;
        }
        case OPT_OUT: a->out_dir = optarg; break;
        case OPT_JUNIT: a->junit = optarg; break;
        case OPT_HTML: a->html = optarg; break;
        case OPT_BASELINE: a->baseline = optarg; break;
        case OPT_LOCALIZE: a->localize = 16; break;
        case OPT_NO_LOCALIZE: a->localize = 0; break;
        case OPT_LOCALIZE_BUDGET:
            if (parse_int("--localize-budget", optarg, 0, 86400, &a->localize_budget) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_ROUNDS:
            if (parse_int("--rounds", optarg, 1, 64, &a->cfg.rounds) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_MEM_LIMIT:
            if (parse_size("--mem-limit", optarg, &a->mem_limit) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_PLUGIN:
            if (a->n_plugins == PAR_MAX_PLUGINS) {
                fprintf(stderr, "parity: more than %d plugins\n", PAR_MAX_PLUGINS);
                return PAR_EXIT_USAGE;
            }
            a->plugins[a->n_plugins++] = optarg;
            break;
        case OPT_NO_ISOLATE: a->cfg.exec.isolate = 0; break;
        case OPT_NO_PROGRESS: a->cfg.progress = 0; break;
        case OPT_MAX_FAIL:
            if (parse_int("--max-failures", optarg, 0, 1000000, &a->max_failures) < 0) return PAR_EXIT_USAGE;
            break;
        case 'h': run_usage(stdout); return PAR_EXIT_OK;
        default: run_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    a->sel.n_paths = argc - optind;
    a->sel.paths = argv + optind;
    if (!a->sel.n_paths && !a->sel.suite && !a->sel.case_id) a->sel.suite = "default";
    /* the output folder is made (and must be writable) before anything runs: a bad --out is a usage error now,
     * not an internal one after the whole selection ran */
    if (par_mkdir_p(a->out_dir) != 0 || access(a->out_dir, W_OK) != 0) {
        fprintf(stderr, "parity: --out %s: cannot write there: %s\n", a->out_dir, strerror(errno));
        return PAR_EXIT_USAGE;
    }
    return -1;
}

/* The summary, report.json and what --junit, --html and --baseline ask for, after the run; rc as the run left it,
 * changed by the report and the baseline's gate. */
static int run_report(run_args *a, par_case_set *set, par_backends *bs, par_run_result *res,
                      const par_node_strip *strips, const char *cmdline, const char *exe, par_report_doc *base,
                      int color, int rc)
{
    par_report_case *rcases = calloc((size_t)(set->n ? set->n : 1), sizeof *rcases);
    if (!rcases) {
        rc = PAR_EXIT_INTERNAL;
    } else {
        for (int32_t i = 0; i < set->n; i++) {
            snprintf(rcases[i].id, sizeof rcases[i].id, "%s", set->cases[i].id);
            snprintf(rcases[i].origin, sizeof rcases[i].origin, "%s", set->cases[i].origin);
            snprintf(rcases[i].ops, sizeof rcases[i].ops, "%s", set->cases[i].ops);
            rcases[i].index = set->cases[i].index;
            for (int32_t b = 0; b < bs->n && !rcases[i].dtype[0]; b++) {
                const par_result *r = &res->results[(size_t)i * (size_t)bs->n + (size_t)b];
                if (r->done) snprintf(rcases[i].dtype, sizeof rcases[i].dtype, "%s", r->case_dtype);
            }
        }
        par_report rep = {.command_line = cmdline ? cmdline : "parity run",
                          .seed = set->seed,
                          .repeat = a->cfg.exec.repeat,
                          .rounds = a->cfg.rounds > 1 ? a->cfg.rounds : 1,
                          .warmup = a->cfg.exec.warmup,
                          .jobs = res->jobs,
                          .timeout_s = a->cfg.exec.timeout_s,
                          .wall_s = res->wall_s,
                          .parity_exe = exe,
                          .n_backends = bs->n,
                          .backends = bs->inst,
                          .n_cases = set->n,
                          .cases = rcases,
                          .results = res->results,
                          .strips = strips,
                          .interrupted = res->interrupted_by != 0,
                          .sel = {.suite = a->sel.suite,
                                  .n_paths = a->sel.n_paths,
                                  .paths = (const char *const *)a->sel.paths,
                                  .case_id = a->sel.case_id,
                                  .ops = a->sel.ops,
                                  .filter = a->sel.id_regex,
                                  .shard_k = a->sel.shard_k,
                                  .shard_n = a->sel.shard_n}};
        par_summary_print(stdout, &rep, color, a->max_failures);
        if (a->out_dir) {
            char path[4096];
            par_msg wm = {{0}};
            snprintf(path, sizeof path, "%s/report.json", a->out_dir);
            if (par_mkdir_p(a->out_dir) != 0 || par_report_write_json(&rep, path, &wm) != PAR_OK) {
                fprintf(stderr, "parity: cannot write the report %s: %s\n", path,
                        wm.text[0] ? wm.text : strerror(errno));
                if (!res->interrupted_by) rc = PAR_EXIT_INTERNAL;
            } else {
                printf("report: %s%s\n", path, res->interrupted_by ? " (interrupted: partial)" : "");
                int gate_ok = 0;
                int rrc = par_cli_after_run(path, a->junit, a->html, base, set, &a->cfg, color, &gate_ok);
                /* with --baseline the diff's gate decides: failures BASE has too are known, not new */
                if (gate_ok && rc == PAR_EXIT_FAIL && !res->interrupted_by) rc = PAR_EXIT_OK;
                if (rrc && rc == PAR_EXIT_OK) rc = rrc;
            }
        }
        if (res->interrupted_by)
            fprintf(stderr, "parity: interrupted by %s; the report holds the records that finished\n",
                    res->interrupted_by == SIGINT ? "SIGINT" : "SIGTERM");
        free(rcases);
    }
    return rc;
}

/* Is there a FAIL record of a case of several nodes (what the localizer would look at)? Without one, the fork
 * servers stay up for the report's timing re-runs and nothing is stopped for nothing. */
static int any_model_failure(const par_case_set *set, int32_t n_backends, const par_result *results)
{
    for (int32_t i = 0; i < set->n; i++) {
        const par_case *c = set->cases[i].loaded;
        if (!c || !c->graph || par_graph_desc_of(c->graph)->n_nodes < 2) continue;
        for (int32_t b = 0; b < n_backends; b++) {
            const par_result *r = &results[(size_t)i * (size_t)n_backends + (size_t)b];
            if (r->done && r->verdict == PAR_V_FAIL) return 1;
        }
    }
    return 0;
}

int par_cmd_run(int argc, char **argv, const char *exe)
{
    run_args a = {0};
    int rc = run_parse(argc, argv, &a);
    if (rc >= 0) return rc;

    par_backends *bs = calloc(1, sizeof *bs);
    if (!bs) return PAR_EXIT_INTERNAL;
    rc = par_cli_backends(bs, a.n_plugins, a.plugins, a.blist, a.cfg.exec.timeout_s);
    if (rc) {
        free(bs);
        return rc;
    }
    if (bs->n == 0) {
        fprintf(stderr, "parity: no usable backend (built-in backends: see 'parity list backends'; load a plugin "
                        "with --plugin PATH)\n");
        free(bs);
        return PAR_EXIT_USAGE;
    }
    par_case_set set;
    par_msg msg = {{0}};
    a.cfg.backends = bs->inst;
    a.cfg.n_backends = bs->n;
    /* the fork servers start now, before any case is loaded: the backend children they fork hold no case data */
    if ((rc = par_run_servers_start(&a.cfg, &msg)) != 0) {
        fprintf(stderr, "parity: %s\n", msg.text);
        free(bs);
        return rc == -2 ? PAR_EXIT_USAGE : PAR_EXIT_INTERNAL; /* -2: a backend that does not start */
    }
    rc = par_select_cases(&a.sel, &set, &msg);
    if (rc) {
        fprintf(stderr, "parity: %s\n", msg.text);
        par_run_servers_stop(&a.cfg);
        free(bs);
        return rc;
    }
    if (set.n == 0) {
        fprintf(stderr, "parity: no case matches the selection\n");
        par_case_set_free(&set);
        par_run_servers_stop(&a.cfg);
        free(bs);
        return PAR_EXIT_USAGE;
    }
    /* the baseline is read before anything runs: a path that does not hold a report stops the command here */
    par_report_doc *base = NULL;
    if (a.baseline) {
        par_msg bm = {{0}};
        if (par_report_read(a.baseline, &base, &bm) != PAR_OK) {
            fprintf(stderr, "parity: --baseline: %s\n", bm.text);
            par_case_set_free(&set);
            par_run_servers_stop(&a.cfg);
            free(bs);
            return PAR_EXIT_USAGE;
        }
    }
    a.cfg.exec.mem_limit = a.mem_limit >= 0 ? a.mem_limit : default_mem_limit(a.cfg.jobs);
    int color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    char *cmdline = join_args(argc - 1, argv + 1, "parity run");
    par_run_result res;
    rc = par_run_cases(&set, &a.cfg, &res);
    par_node_strip *strips = NULL;
    const size_t n_records = (size_t)set.n * (size_t)bs->n;
    if (res.results && a.localize > 0 && !res.interrupted_by && any_model_failure(&set, bs->n, res.results)) {
        par_run_servers_stop(&a.cfg); /* the localizer forks its own backend children */
        strips = calloc(n_records ? n_records : 1, sizeof *strips);
        if (a.localize_budget > 0) a.cfg.loc_deadline = par_now_s() + a.localize_budget;
        par_localize_failures(&set, &a.cfg, res.results, strips, a.localize);
    }
    if (res.results) rc = run_report(&a, &set, bs, &res, strips, cmdline, exe, base, color, rc);
    for (size_t i = 0; strips && i < n_records; i++) par_node_strip_free(&strips[i]);
    free(strips);
    fflush(stdout);
    par_run_servers_stop(&a.cfg);
    par_run_result_free(&res);
    free(cmdline);
    par_report_doc_free(base);
    par_case_set_free(&set);
    free(bs);
    return rc;
}

/* ---- list --------------------------------------------------------------------------------------------------- */

static void list_usage(FILE *f)
{
    fprintf(f, "usage: parity list ops | backends | suites | cases [selection options of 'parity run']\n"
               "  ops        every op with its inputs, flags and attribute schema (docs/ops.md has the semantics)\n"
               "  backends   built-in backends and those of --plugin PATH, with whether each is usable here\n"
               "  suites     the suites and their case counts\n"
               "  cases      the IDs the selection gives (e.g. parity list cases --suite quick -o conv2d)\n");
}

static int list_ops(void)
{
    int w = 2;
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        int l = (int)strlen(par_op_get((par_op_id)i)->name);
        if (l > w) w = l;
    }
    printf("%-*s %-7s %-14s %s\n", w, "op", "inputs", "flags", "attributes (name:type=default)");
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const par_op_info *op = par_op_get((par_op_id)i);
        char ins[16], flags[32] = "";
        if (op->in_min == op->in_max) snprintf(ins, sizeof ins, "%d", (int)op->in_min);
        else snprintf(ins, sizeof ins, "%d-%d", (int)op->in_min, (int)op->in_max);
        if (op->flags & PAR_OPF_EXACT) strcat(flags, "exact ");
        if (op->flags & PAR_OPF_QUANT_OK) strcat(flags, "quant");
        printf("%-*s %-7s %-14s %s\n", w, op->name, ins, flags, op->schema[0] ? op->schema : "-");
    }
    return PAR_EXIT_OK;
}

typedef struct count_ctx {
    int64_t n;
} count_ctx;
static int count_want(void *u, int64_t i, const char *id, const char *op)
{
    ((count_ctx *)u)->n++;
    return 0;
}
static void count_build(void *u, int64_t i, par_case *c) { par_case_destroy(c); }
static void count_err(void *u, const char *id, const par_msg *m) {}

static int list_suites(void)
{
    const char *suites[] = {"quick", "full"};
    for (int i = 0; i < 2; i++) {
        count_ctx cc = {0};
        par_sweep_visit v = {.want = count_want, .build = count_build, .error = count_err, .user = &cc, .seed = 1};
        par_sweep_walk(suites[i], &v);
        printf("%-8s %6lld generated cases\n", suites[i], (long long)cc.n);
    }
    printf("%-8s %6s case files in %s/models\n", "models", "", par_cases_dir());
    printf("%-8s %6s quick + the models that run in seconds (what 'make run' runs; docs/suites.md)\n", "default", "");
    printf("%-8s %6s ONNX's node tests parity can express, from %s\n", "onnx", "", par_onnx_suite_dir());
    return PAR_EXIT_OK;
}

static int print_unsupported(void *user, const char *test, par_case *c, const char *why)
{
    int32_t *n = user;
    if (c) {
        par_case_destroy(c);
        return 0;
    }
    printf("%s\t%s\n", test, why);
    (*n)++;
    return 0;
}

static int list_onnx_unsupported(const par_selection *sel)
{
    if (!sel->suite || strcmp(sel->suite, "onnx") != 0 || sel->n_paths || sel->case_id) {
        fprintf(stderr, "parity list cases: --unsupported lists the node tests of --suite onnx that parity cannot "
                        "express\n");
        return PAR_EXIT_USAGE;
    }
    par_msg msg = {{0}};
    int32_t n = 0;
    int total = par_onnx_suite_walk(print_unsupported, &n, &msg);
    if (total < 0) {
        fprintf(stderr, "parity: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    fprintf(stderr, "%d of %d node tests cannot be expressed\n", (int)n, total);
    return PAR_EXIT_OK;
}

int par_cmd_list(int argc, char **argv, const char *exe)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        list_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? PAR_EXIT_USAGE : PAR_EXIT_OK;
    }
    const char *what = argv[1];
    if (!strcmp(what, "ops")) return list_ops();
    if (!strcmp(what, "suites")) return list_suites();
    if (!strcmp(what, "backends")) {
        char *plugins[PAR_MAX_PLUGINS];
        int32_t n_plugins = 0;
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--plugin") && i + 1 < argc && n_plugins < PAR_MAX_PLUGINS) plugins[n_plugins++] = argv[++i];
            else if (!strncmp(argv[i], "--plugin=", 9) && n_plugins < PAR_MAX_PLUGINS) plugins[n_plugins++] = argv[i] + 9;
            else {
                fprintf(stderr, "parity list backends: unexpected '%s' (only --plugin PATH)\n", argv[i]);
                return PAR_EXIT_USAGE;
            }
        }
        par_backends *bs = calloc(1, sizeof *bs);
        if (!bs) return PAR_EXIT_INTERNAL;
        /* load the plugins (an empty -b list resolves nothing), then probe each backend, usable or not */
        int rc = par_cli_backends(bs, n_plugins, plugins, "", 30);
        if (rc) {
            free(bs);
            return rc;
        }
        printf("%-16s %-16s %-8s %-10s %s\n", "backend", "arith", "usable", "source", "description");
        for (int32_t i = 0; i < bs->n_avail; i++) {
            par_backend_inst in;
            memset(&in, 0, sizeof in);
            snprintf(in.label, sizeof in.label, "%s", bs->avail[i]->name);
            in.be = bs->avail[i];
            par_exec_probe(&in, 30);
            /* the arithmetic the probe recorded (PAR_PROC_ARITH after the knobs, else the table's), with its flags
             * ("f32+ftz": subnormals flushed) */
            char arith[32];
            snprintf(arith, sizeof arith, "%s%s", arith_name((par_arith)in.arith),
                     (in.arith_flags & PAR_ARITH_FLUSH_SUBNORMALS) ? "+ftz" : "");
            printf("%-16s %-16s %-8s %-10s %s%s%s\n", in.label, arith, in.usable ? "yes" : "no",
                   bs->avail_plugin[i][0] ? "plugin" : "built-in", in.be->description ? in.be->description : "",
                   in.usable ? "" : " -- ", in.usable ? "" : in.unusable_reason);
        }
        if (bs->n_avail == 0) printf("(none: this build has no built-in backend; load plugins with --plugin PATH)\n");
        free(bs);
        return PAR_EXIT_OK;
    }
    if (!strcmp(what, "cases")) {
        par_selection sel = {0};
        char shapes[2048] = "";
        int unsupported = 0;
        /* --unsupported: the node tests of the onnx suite parity cannot express, each with its reason */
        for (int i = 2; i < argc; i++)
            if (!strcmp(argv[i], "--unsupported")) {
                memmove(argv + i, argv + i + 1, sizeof *argv * (size_t)(argc - i - 1));
                argc--;
                unsupported = 1;
                break;
            }
        optind = 1;
        int c;
        while ((c = getopt_long(argc - 1, argv + 1, "b:o:k:j:h", run_opts, NULL)) != -1) {
            switch (c) {
            case 'o': sel.ops = optarg; break;
            case 'k': sel.id_regex = optarg; break;
            case OPT_SUITE: sel.suite = optarg; break;
            case OPT_CASE: sel.case_id = optarg; break;
            case OPT_SHAPE:
                if (add_shape(shapes, sizeof shapes, optarg) < 0) return PAR_EXIT_USAGE;
                sel.input_shapes = shapes;
                break;
            case OPT_SEED:
                if (parse_u64("--seed", optarg, &sel.seed) < 0 || !sel.seed) return PAR_EXIT_USAGE;
                break;
            case OPT_SHARD: {
                int k = 0, n = 0;
                if (sscanf(optarg, "%d/%d", &k, &n) != 2 || n < 1 || k < 1 || k > n) {
                    fprintf(stderr, "parity: --shard: '%s' is not K/N with 1 <= K <= N\n", optarg);
                    return PAR_EXIT_USAGE;
                }
                sel.shard_k = k;
                sel.shard_n = n;
                break;
            }
            case 'h': list_usage(stdout); return PAR_EXIT_OK;
            case '?': list_usage(stderr); return PAR_EXIT_USAGE;
            default: break; /* execution options do not change the list */
            }
        }
        sel.n_paths = argc - 1 - optind;
        sel.paths = argv + 1 + optind;
        if (!sel.n_paths && !sel.suite && !sel.case_id) sel.suite = "default";
        if (unsupported) return list_onnx_unsupported(&sel);
        par_case_set set;
        par_msg msg = {{0}};
        int rc = par_select_cases(&sel, &set, &msg);
        if (rc) {
            fprintf(stderr, "parity: %s\n", msg.text);
            return rc;
        }
        for (int32_t i = 0; i < set.n; i++) printf("%s\t%s\t%s\n", set.cases[i].id, set.cases[i].ops, set.cases[i].origin);
        par_case_set_free(&set);
        return PAR_EXIT_OK;
    }
    fprintf(stderr, "parity list: unknown '%s'\n", what);
    list_usage(stderr);
    return PAR_EXIT_USAGE;
}
