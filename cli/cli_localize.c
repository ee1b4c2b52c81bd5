/*
 * cli_localize.c - `parity localize CASE -b BACKEND`: where a case's values leave their budgets (or their
 * statistics) on one backend: every node's output judged at once (campaign/localize.h, par_localize_strip), printed
 * as a strip in graph order with each node's error / budget and statistical companion.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "campaign/localize.h"
#include "core/clock.h"

enum { OPT_PLUGIN = 1000, OPT_TIMEOUT, OPT_ALL };

static const struct option loc_opts[] = {
    {"backend", required_argument, NULL, 'b'}, {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"timeout", required_argument, NULL, OPT_TIMEOUT}, {"all", no_argument, NULL, OPT_ALL},
    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
};

static void loc_usage(FILE *f)
{
    fprintf(f,
            "usage: parity localize CASE -b BACKEND [--plugin P] [--timeout S] [--all]\n"
            "\n"
            "Runs CASE once on BACKEND with every node's output made a graph output and judges each against the\n"
            "reference (its budget, docs/oracle.md) and the statistical companion (rule 5): the first node that\n"
            "diverges is where the error enters. Prints one line per node up to a few after it (--all: every node):\n"
            "its error / budget and companion (the root-mean-square of error / scale), which fails over the bound of\n"
            "the case's K node values, as the verdict of 'parity run' holds them (9.53 for 152; over 8.41 at the case's\n"
            "outputs). A backend that cannot give every node's output at once is localized by prefixes (each node's\n"
            "prefix run alone).\n"
            "\n"
            "  CASE               a case file or a case ID\n"
            "  -b, --backend SPEC the backend instance, NAME or NAME[knob=value,...]\n"
            "  --plugin PATH      load a backend plugin (.so); repeatable\n"
            "  --timeout S        time limit of the backend's run, seconds (default 60)\n"
            "  --all              print every node, not only those up to the divergence\n"
            "\n"
            "Exit codes: 0 no node diverges, 1 a node diverges (named on the last line), 2 usage or input error,\n"
            "3 internal error.\n");
}

static void print_strip(const par_node_strip *s, int all)
{
    int32_t last = all ? s->n - 1 : s->first >= 0 ? s->first + 3 : -1; /* none without a divergence, unless --all */
    for (int32_t i = 0; i < s->n && i <= last; i++) {
        const par_node_verdict *v = &s->nodes[i];
        char z[32] = "-";
        if (!isnan(v->stat_z)) snprintf(z, sizeof z, "%.3g", v->stat_z);
        if (v->n == 0 && s->node_outputs) { /* a value the backend's run did not hold (fused into its consumer) */
            printf("  %4d %-32s %-20s not held by the backend's run (fused)\n", (int)v->node, v->name, v->op);
            continue;
        }
        printf("  %4d %-32s %-20s error/budget %-10.3g companion %-9s%s\n", (int)v->node, v->name, v->op,
               v->max_ratio, z, i == s->first ? "  <- first divergence" : v->diverges ? "  diverges" : "");
    }
    if (last < s->n - 1) printf("  ... %d more nodes (--all prints them)\n", (int)(s->n - 1 - last));
}

/* The run configuration of a localization on one backend instance: its own children, one run; the reference
 * through the cache (PARITY_CACHE=0 turns it off). */
static par_run_config one_backend(par_backend_inst *inst, double timeout_s)
{
    par_run_config cfg = {0};
    cfg.backends = inst;
    cfg.n_backends = 1;
    cfg.exec = (par_exec_opts){.warmup = 0, .repeat = 1, .timeout_s = timeout_s, .isolate = 1};
    cfg.jobs = 1;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int64_t cap = (int64_t)8 << 30, lim = pages > 0 && psz > 0 ? (int64_t)pages * psz / 2 : cap;
    cfg.exec.mem_limit = lim < cap ? lim : cap;
    return cfg;
}

int par_cmd_localize(int argc, char **argv, const char *exe)
{
    (void)exe;
    char *plugins[PAR_MAX_PLUGINS];
    int32_t n_plugins = 0;
    const char *blist = NULL;
    double timeout_s = 60;
    int all = 0, ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "b:h", loc_opts, NULL)) != -1) {
        switch (ch) {
        case 'b': blist = optarg; break;
        case OPT_PLUGIN:
            if (n_plugins == PAR_MAX_PLUGINS) {
                fprintf(stderr, "parity localize: more than %d plugins\n", PAR_MAX_PLUGINS);
                return PAR_EXIT_USAGE;
            }
            plugins[n_plugins++] = optarg;
            break;
        case OPT_TIMEOUT: {
            char *end;
            errno = 0;
            timeout_s = strtod(optarg, &end);
            if (!*optarg || *end || errno || !(timeout_s > 0 && timeout_s <= 86400)) {
                fprintf(stderr, "parity localize: --timeout: '%s' is not a number in (0, 86400]\n", optarg);
                return PAR_EXIT_USAGE;
            }
            break;
        }
        case OPT_ALL: all = 1; break;
        case 'h': loc_usage(stdout); return PAR_EXIT_OK;
        default: loc_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    if (argc - optind != 1 || !blist) {
        fprintf(stderr, "parity localize: expected one CASE and -b BACKEND\n");
        loc_usage(stderr);
        return PAR_EXIT_USAGE;
    }
    par_msg msg = {{0}};
    par_case *c = par_cli_load_case(argv[optind], &msg);
    if (!c) {
        fprintf(stderr, "parity localize: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    par_backends *bs = calloc(1, sizeof *bs);
    int rc = bs ? par_cli_backends(bs, n_plugins, plugins, blist, timeout_s) : PAR_EXIT_INTERNAL;
    if (rc == 0 && bs->n != 1) {
        fprintf(stderr, "parity localize: -b '%s': exactly one backend instance is localized on, not %d\n", blist,
                (int)bs->n);
        rc = PAR_EXIT_USAGE;
    }
    if (rc == 0) {
        par_run_config cfg = one_backend(&bs->inst[0], timeout_s);
        double t0 = par_now_s();
        par_node_strip s;
        if (par_localize_strip(c, &cfg, &s, &msg) != 0) {
            fprintf(stderr, "parity localize: %s\n", msg.text);
            rc = PAR_EXIT_INTERNAL;
        } else {
            printf("%s on %s: %s, %s\n", c->id, bs->inst[0].label, par_verdict_name(s.verdict),
                   s.by_prefix      ? "localized by prefixes"
                   : s.node_outputs ? "every node's output from the backend's run of the case (node outputs)"
                                    : "every node's output in one run");
            if (s.by_prefix) printf("  (not by per-node outputs: %s)\n", s.why);
            if (s.stat_k > 0)
                printf("  companion bound %.3g: the case's %d node values judged (docs/oracle.md, \"The companion on "
                       "every node\")\n", s.stat_bound, (int)s.stat_k);
            print_strip(&s, all);
            if (s.first >= 0)
                printf("first divergent node: %d '%s' (%s): error/budget %.3g, companion %.3g (%.1f s)\n",
                       (int)s.first, s.first_name, s.first_op, s.first_ratio, s.first_z, par_now_s() - t0);
            else
                printf("no node diverges (%.1f s)\n", par_now_s() - t0);
            rc = s.first >= 0 ? PAR_EXIT_FAIL : PAR_EXIT_OK;
            par_node_strip_free(&s);
        }
    }
    free(bs);
    par_case_destroy(c);
    return rc;
}
