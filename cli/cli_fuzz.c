/*
 * cli_fuzz.c - `parity fuzz`: a differential fuzzing campaign (campaign/campaign.h) on the -b backends, findings
 * under DIR/findings/ and the report DIR/report.json; and `parity fuzz --merge DIR1 DIR2 ... --out DIR`, which
 * merges campaigns' findings folders (shards) into DIR/findings/.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "campaign/campaign.h"
#include "campaign/findings.h"

enum {
    OPT_TIME = 1000, OPT_COUNT, OPT_SEED, OPT_MAX_NODES, OPT_MAX_ELEMS, OPT_WEIGHTS, OPT_HAZARD, OPT_QUANT, OPT_SHARD,
    OPT_OUT, OPT_NO_REDUCE, OPT_REDUCE_TIME, OPT_TIMEOUT, OPT_NO_PROGRESS, OPT_PLUGIN, OPT_MERGE, OPT_BATCH,
    OPT_REPEAT, OPT_WARMUP
};

static const struct option fuzz_opts[] = {
    {"backends", required_argument, NULL, 'b'},
    {"jobs", required_argument, NULL, 'j'},
    {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"time", required_argument, NULL, OPT_TIME},
    {"count", required_argument, NULL, OPT_COUNT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"max-nodes", required_argument, NULL, OPT_MAX_NODES},
    {"max-elems", required_argument, NULL, OPT_MAX_ELEMS},
    {"weights", required_argument, NULL, OPT_WEIGHTS},
    {"hazard-share", required_argument, NULL, OPT_HAZARD},
    {"quant-share", required_argument, NULL, OPT_QUANT},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"out", required_argument, NULL, OPT_OUT},
    {"no-reduce", no_argument, NULL, OPT_NO_REDUCE},
    {"reduce-time", required_argument, NULL, OPT_REDUCE_TIME},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"merge", no_argument, NULL, OPT_MERGE},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void fuzz_usage(FILE *f)
{
    fprintf(f,
            "usage: parity fuzz [-b LIST] [--plugin P] [--time S | --count N] [--seed S] [options]\n"
            "       parity fuzz --merge DIR1 DIR2 ... --out DIR\n"
            "\n"
            "Differential fuzzing: random valid graphs from the generator (graph i has the graph seed S + i) run on\n"
            "the reference and every backend through the normal runner; a record that is neither PASS nor\n"
            "UNSUPPORTED is a finding, written at once to DIR/findings/<signature>/ (case.json, finding.json), then\n"
            "localized to its first divergent op and reduced (reduced.json, repro.c). Findings are deduplicated by\n"
            "signature (backend, verdict, op); a second campaign into DIR adds to them. DIR/report.json is the\n"
            "report.\n"
            "\n"
            "graphs:\n"
            "  --time S           run for S seconds (default 60 when --count is not given)\n"
            "  --count N          run N graphs (this shard's); with --time, whichever ends first\n"
            "  --seed S           the first graph seed (default 1)\n"
            "  --shard K/N        the graphs i with i mod N = K - 1 (N machines share one seed range)\n"
            "  --max-nodes N      op nodes per graph, 1..64 (default 8)\n"
            "  --max-elems N      elements per tensor, 1..16777216 (default 4096)\n"
            "  --weights SPEC     op weights, e.g. '*=1,conv2d=4,softmax|relu=0' (later entries win; '|' joins names)\n"
            "  --hazard-share F   share of graphs with hazard inputs, 0..1 (default 0.25)\n"
            "  --quant-share F    share of graphs made quantized, 0..1 (default 0.2)\n"
            "backends:\n"
            "  -b, --backends L   comma-separated specs as for 'parity run' (default: every usable backend)\n"
            "  --plugin PATH      load a backend plugin (.so); repeatable\n"
            "execution:\n"
            "  -j, --jobs N       graphs in parallel (default 1)\n"
            "  --timeout S        time limit per graph and backend, seconds (default 20)\n"
            "  --repeat N         runs per graph and backend (default 2: runs that differ bit-wise are FLAKY)\n"
            "  --warmup N         untimed runs first (default 0)\n"
            "  --batch N          graphs per runner call, 1..4096 (default 128)\n"
            "findings:\n"
            "  --out DIR          DIR/report.json and DIR/findings/ (default out/fuzz)\n"
            "  --no-reduce        localize new findings but do not reduce them\n"
            "  --reduce-time S    time budget of each reduction (default 60)\n"
            "  --no-progress      no status line (there is none when stderr is not a terminal)\n"
            "  --merge DIR...     merge the findings of campaign folders into --out's (no campaign runs)\n"
            "\n"
            "Prints one line 'fuzz: G graphs in T s (R graphs/s) on B backends: F findings in S signatures' and the\n"
            "report's path. Exit codes: 0 no finding, 1 findings, 2 usage or input error, 3 internal (a generator\n"
            "or harness bug), 130 / 143 interrupted by SIGINT / SIGTERM (the report so far and every finding kept).\n");
}

static int bad(const char *opt, const char *val, const char *why)
{
    fprintf(stderr, "parity fuzz: %s: '%s' %s\n", opt, val, why);
    return -1;
}

static int parse_i64(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno) return bad(opt, s, "is not an integer");
    if (v < lo || v > hi) {
        fprintf(stderr, "parity fuzz: %s: %s is outside %lld..%lld\n", opt, s, (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_real(const char *opt, const char *s, double lo, double hi, int open_lo, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v)) return bad(opt, s, "is not a number");
    if (v < lo || v > hi || (open_lo && v == lo)) {
        fprintf(stderr, "parity fuzz: %s: %s is outside %s%g, %g]\n", opt, s, open_lo ? "(" : "[", lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int64_t default_mem_limit(int32_t jobs)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int64_t cap = (int64_t)8 << 30;
    if (pages <= 0 || psz <= 0) return cap;
    int64_t lim = (int64_t)pages * psz / (2 * (int64_t)(jobs > 0 ? jobs : 1));
    return lim < cap ? lim : cap;
}

static char *join_args(int argc, char **argv)
{
    size_t len = 16;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 3;
    char *s = malloc(len);
    if (!s) return NULL;
    snprintf(s, len, "parity fuzz");
    for (int i = 1; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

static int merge(int n, char **dirs, const char *out_dir)
{
    par_findings f;
    par_msg m = {{0}};
    if (par_findings_open(&f, out_dir, &m) != 0) {
        fprintf(stderr, "parity fuzz --merge: %s\n", m.text);
        return PAR_EXIT_USAGE;
    }
    int32_t before = f.n;
    int32_t k = par_findings_merge(&f, n, dirs, &m);
    int rc = PAR_EXIT_OK;
    if (k < 0) {
        fprintf(stderr, "parity fuzz --merge: %s\n", m.text);
        rc = PAR_EXIT_USAGE;
    }
    if (par_findings_write_index(&f, &m) != 0) {
        fprintf(stderr, "parity fuzz --merge: %s\n", m.text);
        rc = PAR_EXIT_INTERNAL;
    }
    int64_t total = 0;
    for (int32_t i = 0; i < f.n; i++) total += f.list[i].count;
    if (rc == PAR_EXIT_OK)
        printf("fuzz merge: %d folders merged from %d campaigns: %d signatures (%d new), %lld findings in "
               "%s/index.json\n",
               (int)k, n, (int)f.n, (int)(f.n - before), (long long)total, f.root);
    par_findings_close(&f);
    return rc;
}

/* What parity fuzz keeps of its options beside the campaign's and the run's. */
typedef struct fuzz_cli {
    char *plugins[PAR_MAX_PLUGINS];
    int32_t n_plugins;
    const char *blist;
    int do_merge, have_time;
} fuzz_cli;

/* One option (getopt_long's c, optarg) into o, cfg or f: -1 to go on, else the exit code (a usage error, or 0 after
 * --help). */
static int fuzz_option(int c, par_campaign_opts *o, par_run_config *cfg, fuzz_cli *f)
{
    int64_t v;
    par_msg msg = {{0}};
    switch (c) {
    case 'b': f->blist = optarg; break;
    case 'j':
        if (parse_i64("-j", optarg, 1, 256, &v) < 0) return PAR_EXIT_USAGE;
        cfg->jobs = (int32_t)v;
        break;
    case OPT_PLUGIN:
        if (f->n_plugins == PAR_MAX_PLUGINS) {
            fprintf(stderr, "parity fuzz: --plugin: more than %d plugins\n", PAR_MAX_PLUGINS);
            return PAR_EXIT_USAGE;
        }
        f->plugins[f->n_plugins++] = optarg;
        break;
    case OPT_TIME:
        if (parse_real("--time", optarg, 0, 1e7, 1, &o->time_s) < 0) return PAR_EXIT_USAGE;
        f->have_time = 1;
        break;
    case OPT_COUNT:
        if (parse_i64("--count", optarg, 1, INT64_C(1) << 50, &o->count) < 0) return PAR_EXIT_USAGE;
        break;
    case OPT_SEED:
        if (optarg[0] == '-') return bad("--seed", optarg, "is not a non-negative integer"), PAR_EXIT_USAGE;
        {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (!optarg[0] || *end || errno) return bad("--seed", optarg, "is not an integer"), PAR_EXIT_USAGE;
            if (s == 0) return bad("--seed", optarg, "must be >= 1"), PAR_EXIT_USAGE;
            o->seed = s;
        }
        break;
    case OPT_MAX_NODES:
        if (parse_i64("--max-nodes", optarg, 1, 64, &v) < 0) return PAR_EXIT_USAGE;
        o->gen.max_nodes = (int32_t)v;
        break;
    case OPT_MAX_ELEMS:
        if (parse_i64("--max-elems", optarg, 1, INT64_C(1) << 24, &o->gen.max_elems) < 0) return PAR_EXIT_USAGE;
        break;
    case OPT_WEIGHTS:
        if (par_fuzz_weights_parse(&o->gen, optarg, &msg) != PAR_OK) {
            fprintf(stderr, "parity fuzz: --weights: %s\n", msg.text);
            return PAR_EXIT_USAGE;
        }
        o->weights = optarg;
        break;
    case OPT_HAZARD:
        if (parse_real("--hazard-share", optarg, 0, 1, 0, &o->gen.hazard_share) < 0) return PAR_EXIT_USAGE;
        break;
    case OPT_QUANT:
        if (parse_real("--quant-share", optarg, 0, 1, 0, &o->gen.quant_share) < 0) return PAR_EXIT_USAGE;
        break;
    case OPT_SHARD: {
        int k = 0, n = 0;
        char tail;
        if (sscanf(optarg, "%d/%d%c", &k, &n, &tail) != 2 || n < 1 || k < 1 || k > n)
            return bad("--shard", optarg, "is not K/N with 1 <= K <= N"), PAR_EXIT_USAGE;
        o->shard_k = k;
        o->shard_n = n;
        break;
    }
    case OPT_OUT:
        if (!optarg[0]) return bad("--out", optarg, "is empty"), PAR_EXIT_USAGE;
        o->out_dir = optarg;
        break;
    case OPT_NO_REDUCE: o->reduce = 0; break;
    case OPT_REDUCE_TIME:
        if (parse_real("--reduce-time", optarg, 0, 86400, 1, &o->reduce_time_s) < 0) return PAR_EXIT_USAGE;
        break;
    case OPT_TIMEOUT:
        if (parse_real("--timeout", optarg, 0, 86400, 1, &cfg->exec.timeout_s) < 0) return PAR_EXIT_USAGE;
        break;
    case OPT_REPEAT:
        if (parse_i64("--repeat", optarg, 1, 1000, &v) < 0) return PAR_EXIT_USAGE;
        cfg->exec.repeat = (int32_t)v;
        break;
    case OPT_WARMUP:
        if (parse_i64("--warmup", optarg, 0, 1000, &v) < 0) return PAR_EXIT_USAGE;
        cfg->exec.warmup = (int32_t)v;
        break;
    case OPT_BATCH:
        if (parse_i64("--batch", optarg, 1, 4096, &v) < 0) return PAR_EXIT_USAGE;
        o->batch = (int32_t)v;
        break;
    case OPT_NO_PROGRESS: o->progress = 0; break;
    case OPT_MERGE: f->do_merge = 1; break;
    case 'h': fuzz_usage(stdout); return PAR_EXIT_OK;
    default: fuzz_usage(stderr); return PAR_EXIT_USAGE;
    }
    return -1;
}

/* The campaign's figures, and per backend what it ran: a graph UNSUPPORTED on a backend tested nothing there. */
static void print_stats(const par_campaign_stats *st, const par_backends *bs, const char *out_dir)
{
    int64_t n_sig = st->signatures;
    printf("fuzz: %lld graphs in %.1f s (%.0f graphs/s) on %d backend%s: %lld finding%s in %lld signature%s\n",
           (long long)st->graphs, st->wall_s, st->graphs_per_s, (int)bs->n, bs->n == 1 ? "" : "s",
           (long long)st->findings, st->findings == 1 ? "" : "s", (long long)n_sig, n_sig == 1 ? "" : "s");
    /* what each backend actually ran: a graph UNSUPPORTED on a backend tested nothing there */
    for (int32_t b = 0; b < bs->n && b < PAR_CAMPAIGN_MAX_BACKENDS; b++) {
        const int64_t *vb = st->by_backend[b];
        int64_t unsup = vb[PAR_V_UNSUPPORTED], all = 0;
        for (int k = 0; k < PAR_V_COUNT; k++) all += vb[k];
        int64_t ran = all - unsup, failing = ran - vb[PAR_V_PASS];
        printf("  %s: %lld graph%s ran (%lld passed, %lld not passing), %lld unsupported\n", bs->inst[b].label,
               (long long)ran, ran == 1 ? "" : "s", (long long)vb[PAR_V_PASS], (long long)failing, (long long)unsup);
        if (all > 0 && unsup * 2 > all)
            printf("parity fuzz: warning: %lld of %lld graphs (%.0f%%) were UNSUPPORTED on %s, which tested nothing "
                   "there; aim the generator at the ops it runs, e.g. --weights '*=0,conv2d=1,add=1' ('parity "
                   "coverage -b %s' lists what it claims)\n",
                   (long long)unsup, (long long)all, 100.0 * (double)unsup / (double)all, bs->inst[b].label,
                   bs->inst[b].label);
    }
    if (st->report_path[0])
        printf("report: %s%s; findings: %s/findings/index.json\n", st->report_path,
               st->interrupted_by ? " (interrupted: partial)" : "", out_dir);
    if (st->interrupted_by)
        fprintf(stderr, "parity fuzz: interrupted by %s; the report and every finding so far are kept\n",
                st->interrupted_by == SIGINT ? "SIGINT" : "SIGTERM");
}

int par_cmd_fuzz(int argc, char **argv, const char *exe)
{
    par_campaign_opts o;
    memset(&o, 0, sizeof o);
    par_fuzz_opts_default(&o.gen);
    o.seed = 1;
    o.out_dir = "out/fuzz";
    o.reduce = 1;
    o.reduce_time_s = 60;
    o.progress = 1;
    o.parity_exe = exe;
    par_run_config cfg = {0};
    cfg.exec = (par_exec_opts){.warmup = 0, .repeat = 2, .timeout_s = 20, .isolate = 1};
    cfg.jobs = 1;
    fuzz_cli f = {.n_plugins = 0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "b:j:h", fuzz_opts, NULL)) != -1) {
        int rc = fuzz_option(c, &o, &cfg, &f);
        if (rc >= 0) return rc;
    }
    if (f.do_merge) {
        if (optind >= argc) {
            fprintf(stderr, "parity fuzz: --merge: no campaign folder given (parity fuzz --merge DIR1 DIR2 ... --out "
                            "DIR)\n");
            return PAR_EXIT_USAGE;
        }
        return merge(argc - optind, argv + optind, o.out_dir);
    }
    if (optind < argc) {
        fprintf(stderr, "parity fuzz: unexpected argument '%s' (folders are given only with --merge)\n", argv[optind]);
        return PAR_EXIT_USAGE;
    }
    if (!f.have_time && o.count == 0) o.time_s = 60;
    /* the output folder is the user's input: one that cannot be made is a usage error, before anything runs */
    char fdir[4200];
    snprintf(fdir, sizeof fdir, "%s/findings", o.out_dir);
    if (par_mkdir_p(fdir) != 0) {
        fprintf(stderr, "parity fuzz: --out: cannot create '%s': %s\n", fdir, strerror(errno));
        return PAR_EXIT_USAGE;
    }

    par_backends *bs = calloc(1, sizeof *bs);
    if (!bs) return PAR_EXIT_INTERNAL;
    int rc = par_cli_backends(bs, f.n_plugins, f.plugins, f.blist, cfg.exec.timeout_s);
    if (rc) {
        free(bs);
        return rc;
    }
    if (bs->n == 0) {
        fprintf(stderr, "parity fuzz: -b: no usable backend (see 'parity list backends'; load a plugin with "
                        "--plugin PATH)\n");
        free(bs);
        return PAR_EXIT_USAGE;
    }
    if (bs->n > PAR_CAMPAIGN_MAX_BACKENDS) {
        fprintf(stderr, "parity fuzz: -b: more than %d backends\n", PAR_CAMPAIGN_MAX_BACKENDS);
        free(bs);
        return PAR_EXIT_USAGE;
    }
    cfg.backends = bs->inst;
    cfg.n_backends = bs->n;
    cfg.exec.mem_limit = default_mem_limit(cfg.jobs);
    char *cmdline = join_args(argc, argv);
    o.command_line = cmdline;
    par_campaign_stats st;
    rc = par_campaign_run(&o, &cfg, &st);
    print_stats(&st, bs, o.out_dir);
    fflush(stdout);
    free(cmdline);
    free(bs);
    return rc;
}
