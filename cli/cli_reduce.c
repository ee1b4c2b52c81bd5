/*
 * cli_reduce.c - `parity reduce`: the signature of a failing case on one backend (its first divergent node), the
 * reduction (campaign/reduce.h), reduced.json and the standalone C repro, and the commands that replay them.
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "campaign/localize.h"
#include "campaign/reduce.h"
#include "core/files.h"

enum { OPT_PLUGIN = 1000, OPT_OUT, OPT_TIME, OPT_MAX_TESTS, OPT_TIMEOUT };

static const struct option reduce_opts[] = {
    {"backend", required_argument, NULL, 'b'},
    {"backends", required_argument, NULL, 'b'},
    {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"out", required_argument, NULL, OPT_OUT},
    {"time", required_argument, NULL, OPT_TIME},
    {"max-tests", required_argument, NULL, OPT_MAX_TESTS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"jobs", required_argument, NULL, 'j'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void reduce_usage(FILE *f)
{
    fprintf(f,
            "usage: parity reduce FINDING-OR-CASE -b BACKEND [--plugin P] [--out DIR] [--time S] [--max-tests N] [-v]\n"
            "\n"
            "Finds the first node whose output diverges (each node's prefix run on BACKEND), then shrinks the case while\n"
            "the same signature holds (backend, verdict, op of the first divergent node): drops outputs and nodes, cuts\n"
            "and bypasses nodes, shrinks dimensions, simplifies data toward 0, 1 and small integers. Every candidate runs\n"
            "through the normal runner (child processes, guards, oracle). Writes reduced.json (a case file for 'parity\n"
            "run') and repro.c (a standalone C program: the graph, its data and the reference inline).\n"
            "\n"
            "  FINDING-OR-CASE    a case file, a case ID, or a findings folder DIR/findings/<signature>/ (its case.json;\n"
            "                     its finding.json's signature.backend gives the backend when -b is absent, and its\n"
            "                     plugin, the .so the campaign loaded, is loaded when --plugin is absent)\n"
            "  -b, --backend SPEC the backend instance, NAME or NAME[knob=value,...]\n"
            "  --plugin PATH      load a backend plugin (.so); repeatable\n"
            "  --out DIR          where reduced.json and repro.c go (default: the findings folder, else out/reduce)\n"
            "  --time S           wall-clock budget of the reduction, seconds (default 60)\n"
            "  --max-tests N      candidates tried at most (default 2000)\n"
            "  --timeout S        time limit per case run, seconds (default 20)\n"
            "  -j, --jobs N       candidates run in parallel (default 2)\n"
            "  -v, --verbose      one line per reduction step\n"
            "\n"
            "Exit codes: 0 reduced, 1 the case does not fail on that backend, 2 usage or input error, 3 internal,\n"
            "130 / 143 interrupted by SIGINT / SIGTERM (the smallest case so far is written).\n");
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The plugin of a findings folder: finding.json's "plugin" (the path the campaign loaded it from; "" for a built-in
 * backend) into buf. Returns 0 when there is one. */
static int finding_plugin(const char *dir, char *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/finding.json", dir);
    json_object *root = json_object_from_file(path), *pl = NULL;
    int ok = root && json_object_object_get_ex(root, "plugin", &pl) && json_object_is_type(pl, json_type_string) &&
             json_object_get_string(pl)[0];
    if (ok) snprintf(buf, len, "%s", json_object_get_string(pl));
    json_object_put(root);
    return ok ? 0 : -1;
}

/* The backend of a findings folder: finding.json's "signature"."backend". Returns 0, or -1 with the reason. */
static int finding_backend(const char *dir, char *buf, size_t len, char *why, size_t why_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/finding.json", dir);
    if (access(path, R_OK) != 0) return snprintf(why, why_len, "%s: %s", path, strerror(errno)), -1;
    json_object *root = json_object_from_file(path);
    json_object *sig = NULL, *be = NULL;
    int ok = root && json_object_object_get_ex(root, "signature", &sig) && json_object_object_get_ex(sig, "backend", &be) &&
             json_object_is_type(be, json_type_string);
    if (ok) snprintf(buf, len, "%s", json_object_get_string(be));
    else snprintf(why, why_len, "%s: %s", path, root ? "no string at $.signature.backend" : "not valid JSON");
    json_object_put(root);
    return ok ? 0 : -1;
}

static int parse_pos(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi)) {
        fprintf(stderr, "parity reduce: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Reduce c on the one instance of cfg and write the results into out_dir. Returns the exit code. */
static int reduce_case(const par_case *c, par_run_config *cfg, const par_reduce_opts *o, const char *out_dir,
                       const char *exe, int32_t n_plugins, char **plugins)
{
    const par_backend_inst *inst = &cfg->backends[0];
    par_msg msg = {{0}};
    par_signature sig;
    par_result rec;
    char text[512];
    if (par_reduce_signature(c, cfg, &sig, &rec, &msg) != 0) {
        fprintf(stderr, "parity reduce: %s\n", msg.text);
        return PAR_EXIT_INTERNAL;
    }
    if (sig.verdict == PAR_V_PASS || sig.verdict == PAR_V_UNSUPPORTED) {
        fprintf(stderr, "parity reduce: case '%s' does not fail on backend '%s': %s%s%s\n", c->id, inst->label,
                par_verdict_name(sig.verdict), rec.reason[0] ? ": " : "", rec.reason);
        return PAR_EXIT_FAIL;
    }
    par_signature_text(&sig, text, sizeof text);
    printf("signature: %s\n", text);
    printf("case:      %s: %s%s%s\n", c->id, par_verdict_name(rec.verdict), rec.reason[0] ? ": " : "", rec.reason);
    fflush(stdout);

    par_reduce_stats st;
    par_case *r = par_reduce(c, cfg, &sig, o, &st, &msg);
    if (!r) {
        fprintf(stderr, "parity reduce: %s\n", msg.text);
        return PAR_EXIT_INTERNAL;
    }
    printf("reduced:   %d -> %d nodes, %lld -> %lld elements, %d tests, %.1f s%s\n", (int)st.nodes_before,
           (int)st.nodes_after, (long long)st.elems_before, (long long)st.elems_after, (int)st.tests, st.wall_s,
           st.interrupted_by ? " (interrupted: the smallest so far)" : st.budget_hit ? " (budget reached)" : "");
    const par_graph_desc *d = par_graph_desc_of(r->graph);
    printf("nodes:    ");
    for (int32_t k = 0; k < d->n_nodes; k++) printf(" %s(%s)", d->nodes[k].name, d->nodes[k].op);
    printf("\n");

    int rc = PAR_EXIT_OK;
    char json_path[4096], c_path[4096], line[8192], exe_path[4096];
    snprintf(json_path, sizeof json_path, "%s/reduced.json", out_dir);
    snprintf(c_path, sizeof c_path, "%s/repro.c", out_dir);
    char *json = par_case_to_json(r, 0);
    if (par_mkdir_p(out_dir) != 0 || !json) {
        fprintf(stderr, "parity reduce: cannot write %s: %s\n", json_path, json ? strerror(errno) : "out of memory");
        rc = PAR_EXIT_INTERNAL;
    } else if (par_write_file_atomic(json_path, json, &msg) != 0) {
        fprintf(stderr, "parity reduce: %s\n", msg.text);
        rc = PAR_EXIT_INTERNAL;
    }
    free(json);
    if (rc == PAR_EXIT_OK && par_repro_write_c(r, inst, NULL, c_path, &msg) != PAR_OK) {
        fprintf(stderr, "parity reduce: %s\n", msg.text);
        rc = PAR_EXIT_INTERNAL;
    }
    if (rc == PAR_EXIT_OK) {
        par_repro_compile_line(inst, c_path, line, sizeof line);
        par_repro_exe_path(c_path, exe_path, sizeof exe_path);
        printf("wrote:     %s\n           %s\n", json_path, c_path);
        printf("replay:    %s run %s -b '%s'", exe, json_path, inst->label);
        for (int32_t i = 0; i < n_plugins; i++) printf(" --plugin %s", plugins[i]);
        printf("\nrepro:     %s && %s\n", line, exe_path);
    }
    par_case_destroy(r);
    if (rc == PAR_EXIT_OK && st.interrupted_by) rc = 128 + st.interrupted_by;
    return rc;
}

int par_cmd_reduce(int argc, char **argv, const char *exe)
{
    char *plugins[PAR_MAX_PLUGINS];
    int32_t n_plugins = 0;
    const char *blist = NULL, *out_dir = NULL;
    par_reduce_opts o = {.time_s = 60, .max_tests = 2000};
    double timeout_s = 20, v;
    int32_t jobs = 2;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "b:j:vh", reduce_opts, NULL)) != -1) {
        switch (ch) {
        case 'b': blist = optarg; break;
        case 'v': o.verbose = 1; break;
        case 'j':
            if (parse_pos("-j", optarg, 1, 64, &v) < 0 || v != (int32_t)v) return PAR_EXIT_USAGE;
            jobs = (int32_t)v;
            break;
        case OPT_PLUGIN:
            if (n_plugins == PAR_MAX_PLUGINS) {
                fprintf(stderr, "parity reduce: more than %d plugins\n", PAR_MAX_PLUGINS);
                return PAR_EXIT_USAGE;
            }
            plugins[n_plugins++] = optarg;
            break;
        case OPT_OUT: out_dir = optarg; break;
        case OPT_TIME:
            if (parse_pos("--time", optarg, 0.001, 86400, &o.time_s) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_MAX_TESTS:
            if (parse_pos("--max-tests", optarg, 1, 1e9, &v) < 0 || v != (int32_t)v) return PAR_EXIT_USAGE;
            o.max_tests = (int32_t)v;
            break;
        case OPT_TIMEOUT:
            if (parse_pos("--timeout", optarg, 0.001, 86400, &timeout_s) < 0) return PAR_EXIT_USAGE;
            break;
        case 'h': reduce_usage(stdout); return PAR_EXIT_OK;
        default: reduce_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "parity reduce: expected one FINDING-OR-CASE, got %d\n", argc - optind);
        reduce_usage(stderr);
        return PAR_EXIT_USAGE;
    }
    const char *arg = argv[optind];
    char case_path[4096], backend[256], why[4352], finding_pl[4096];
    par_msg msg = {{0}};
    par_case *c = NULL;
    if (is_dir(arg)) {
        /* a findings folder */
        snprintf(case_path, sizeof case_path, "%s/case.json", arg);
        if (access(case_path, R_OK) != 0) {
            fprintf(stderr, "parity reduce: %s: a findings folder must hold case.json (%s)\n", arg, strerror(errno));
            return PAR_EXIT_USAGE;
        }
        if (!blist) {
            if (finding_backend(arg, backend, sizeof backend, why, sizeof why) != 0) {
                fprintf(stderr, "parity reduce: no -b given, and the finding names no backend: %s\n", why);
                return PAR_EXIT_USAGE;
            }
            blist = backend;
        }
        /* the finding's plugin, unless --plugin names plugins itself: the backend it names lives there */
        if (n_plugins == 0 && finding_plugin(arg, finding_pl, sizeof finding_pl) == 0) {
            if (access(finding_pl, R_OK) != 0) {
                fprintf(stderr, "parity reduce: the finding's backend comes from the plugin %s, which is not there from "
                                "here (%s): give its path with --plugin PATH\n", finding_pl, strerror(errno));
                return PAR_EXIT_USAGE;
            }
            plugins[n_plugins++] = finding_pl;
        }
        if (!out_dir) out_dir = arg;
        c = par_case_load(case_path, &msg);
    } else {
        c = par_cli_load_case(arg, &msg);
    }
    if (!c) {
        fprintf(stderr, "parity reduce: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    if (!blist) {
        fprintf(stderr, "parity reduce: -b BACKEND is required (one backend instance, e.g. -b cpu)\n");
        par_case_destroy(c);
        return PAR_EXIT_USAGE;
    }
    if (!out_dir) out_dir = "out/reduce";

    par_backends *bs = calloc(1, sizeof *bs);
    if (!bs) {
        par_case_destroy(c);
        return PAR_EXIT_INTERNAL;
    }
    int rc = par_cli_backends(bs, n_plugins, plugins, blist, timeout_s);
    if (rc == 0 && bs->n != 1) {
        fprintf(stderr, "parity reduce: -b '%s': exactly one backend instance is reduced against, not %d\n", blist,
                (int)bs->n);
        rc = PAR_EXIT_USAGE;
    }
    if (rc == 0) {
        par_run_config cfg = {0};
        cfg.backends = bs->inst;
        cfg.n_backends = 1;
        /* two runs per candidate, so that a FLAKY signature can show; the child's memory limit as for run */
        cfg.exec = (par_exec_opts){.warmup = 0, .repeat = 2, .timeout_s = timeout_s, .isolate = 1};
        cfg.jobs = jobs;
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        int64_t cap = (int64_t)8 << 30, lim = pages > 0 && psz > 0 ? (int64_t)pages * psz / (2 * jobs) : cap;
        cfg.exec.mem_limit = lim < cap ? lim : cap;
        rc = reduce_case(c, &cfg, &o, out_dir, exe, n_plugins, plugins);
    }
    free(bs);
    par_case_destroy(c);
    return rc;
}
