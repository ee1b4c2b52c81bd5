/*
 * cli_coverage.c - `parity coverage [REPORT.json]`: per backend, the ops and dtypes it claims (probed in child
 * processes through the runner, runner/coverage_probe.h), which of them have cases (in the report, or in the quick
 * suite's selection) and which pass (from the report), tabulated by reports/coverage.h. The command only wires them.
 */
#include "cli.h"

#include "reports/coverage.h"
#include "reports/report_read.h"
#include "runner/coverage_probe.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PLUGIN = 1000, OPT_JSON, OPT_TIMEOUT, OPT_SEEDS, OPT_PER_DTYPE, OPT_SUITE };

static const struct option cov_opts[] = {
    {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"json", required_argument, NULL, OPT_JSON},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"seeds", required_argument, NULL, OPT_SEEDS},
    {"per-dtype", required_argument, NULL, OPT_PER_DTYPE},
    {"suite", required_argument, NULL, OPT_SUITE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void cov_usage(FILE *f)
{
    fprintf(f,
            "usage: parity coverage [-b LIST] [--plugin PATH] [options] [REPORT.json]\n"
            "\n"
            "Per backend: the ops and dtypes it claims, which of them have cases, which pass. Claims are probed: for\n"
            "every op of the op table, small representative graphs in each dtype it can take run once on every\n"
            "backend (in child processes, as in 'parity run'); a combination is claimed when the backend answered\n"
            "anything but UNSUPPORTED for at least one of its graphs. Cases and passes come from REPORT.json; without\n"
            "it, cases come from the quick suite's selection and passes are not known. The ops no case reaches are\n"
            "listed first, then the claimed combinations without a case, then the rest.\n"
            "\n"
            "  -b LIST            backends (default: the report's, else every usable one)\n"
            "  --plugin PATH      load a backend plugin (repeatable; a report's plugins are loaded from its paths)\n"
            "  --json FILE        also write the table as JSON\n"
            "  -j N               worker processes for the probe (default 1)\n"
            "  --timeout S        time limit of one probe job, seconds (default 10)\n"
            "  --seeds N          generator seeds tried per op (default 16)\n"
            "  --per-dtype N      representative graphs per op and dtype (default 2)\n"
            "  --suite NAME       the suite whose cases are counted without a report (quick or full; default quick)\n"
            "\n"
            "Exit codes: 0 the table was printed, 2 usage or input error (a report that cannot be read, an\n"
            "unwritable --json path), 3 internal error (the probe run failed).\n");
}

static int parse_count(const char *opt, const char *s, long lo, long hi, int32_t *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        fprintf(stderr, "parity coverage: %s: '%s' is not an integer in [%ld, %ld]\n", opt, s, lo, hi);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* Add path to the plugin list unless it is there already. */
static int add_plugin(char **plugins, int32_t *n, char *path)
{
    for (int32_t i = 0; i < *n; i++)
        if (strcmp(plugins[i], path) == 0) return 0;
    if (*n == PAR_MAX_PLUGINS) {
        fprintf(stderr, "parity coverage: more than %d plugins\n", PAR_MAX_PLUGINS);
        return -1;
    }
    plugins[(*n)++] = path;
    return 0;
}

int par_cmd_coverage(int argc, char **argv, const char *exe)
{
    (void)exe;
    char *plugins[PAR_MAX_PLUGINS];
    int32_t n_plugins = 0, jobs = 1;
    const char *blist = NULL, *json_path = NULL, *suite = "quick";
    double timeout_s = 10;
    par_cov_probe_opts po;
    par_cov_probe_opts_default(&po);
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "b:j:h", cov_opts, NULL)) != -1) {
        switch (c) {
        case 'b': blist = optarg; break;
        case 'j':
            if (parse_count("-j", optarg, 1, 256, &jobs) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_PLUGIN:
            if (add_plugin(plugins, &n_plugins, optarg) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_JSON: json_path = optarg; break;
        case OPT_TIMEOUT: {
            char *end;
            timeout_s = strtod(optarg, &end);
            if (!*optarg || *end || !(timeout_s > 0) || timeout_s > 86400) {
                fprintf(stderr, "parity coverage: --timeout: '%s' is not a time in (0, 86400] seconds\n", optarg);
                return PAR_EXIT_USAGE;
            }
            break;
        }
        case OPT_SEEDS:
            if (parse_count("--seeds", optarg, 1, 1000, &po.seeds) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_PER_DTYPE:
            if (parse_count("--per-dtype", optarg, 1, 100, &po.per_dtype) < 0) return PAR_EXIT_USAGE;
            break;
        case OPT_SUITE: suite = optarg; break;
        case 'h': cov_usage(stdout); return PAR_EXIT_OK;
        default: cov_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "parity coverage: expected at most one report file\n");
        cov_usage(stderr);
        return PAR_EXIT_USAGE;
    }
    if (strcmp(suite, "quick") != 0 && strcmp(suite, "full") != 0) {
        fprintf(stderr, "parity coverage: --suite: '%s' is not a generated suite (quick or full)\n", suite);
        return PAR_EXIT_USAGE;
    }

    par_msg msg = {{0}};
    par_report_doc *doc = NULL;
    const par_report *r = NULL;
    char *report_list = NULL;
    if (argc - optind == 1) {
        if (par_report_read(argv[optind], &doc, &msg) != PAR_OK) {
            fprintf(stderr, "parity: %s\n", msg.text);
            return PAR_EXIT_USAGE;
        }
        r = par_report_doc_report(doc);
        /* the report's backends, with the plugins they were loaded from, unless -b says otherwise */
        size_t len = 1;
        for (int32_t b = 0; b < r->n_backends; b++) len += strlen(r->backends[b].label) + 1;
        report_list = calloc(1, len);
        if (!report_list) {
            par_report_doc_free(doc);
            return PAR_EXIT_INTERNAL;
        }
        int fail = 0;
        for (int32_t b = 0; b < r->n_backends; b++) {
            if (b) strcat(report_list, ",");
            strcat(report_list, r->backends[b].label);
            if (!blist && r->backends[b].plugin_path[0] &&
                add_plugin(plugins, &n_plugins, (char *)r->backends[b].plugin_path) < 0)
                fail = 1;
        }
        if (fail) {
            free(report_list);
            par_report_doc_free(doc);
            return PAR_EXIT_USAGE;
        }
        if (!blist && r->n_backends > 0) blist = report_list;
    }

    int rc = PAR_EXIT_OK;
    par_backends *bs = calloc(1, sizeof *bs);
    par_coverage cov = {0};
    if (!bs) {
        rc = PAR_EXIT_INTERNAL;
        goto done;
    }
    rc = par_cli_backends(bs, n_plugins, plugins, blist, timeout_s);
    if (rc) goto done;
    if (bs->n == 0) {
        fprintf(stderr, "parity coverage: no usable backend (see 'parity list backends'; --plugin PATH)\n");
        rc = PAR_EXIT_USAGE;
        goto done;
    }
    const char *labels[PAR_MAX_BACKENDS];
    for (int32_t b = 0; b < bs->n; b++) labels[b] = bs->inst[b].label;
    if (par_coverage_init(&cov, bs->n, labels, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        rc = PAR_EXIT_INTERNAL;
        goto done;
    }
    if (r) {
        par_coverage_add_report(&cov, r);
        snprintf(cov.source, sizeof cov.source, "%s", par_report_doc_path(doc));
    } else if ((rc = par_coverage_add_suite(&cov, suite, 1, &msg)) != 0) {
        fprintf(stderr, "parity: %s\n", msg.text);
        goto done;
    }

    par_run_config cfg = {0};
    cfg.backends = bs->inst;
    cfg.n_backends = bs->n;
    cfg.exec = (par_exec_opts){.warmup = 0, .repeat = 1, .timeout_s = timeout_s, .isolate = 1};
    cfg.jobs = jobs;
    rc = par_coverage_probe(&cfg, &po, &cov, &msg);
    if (rc) {
        fprintf(stderr, "parity: %s\n", msg.text);
        if (rc == 2) rc = PAR_EXIT_INTERNAL;
        goto done;
    }
    par_coverage_print(stdout, &cov);
    fflush(stdout);
    if (json_path && par_coverage_write_json(&cov, json_path, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
    }
done:
    par_coverage_free(&cov);
    free(bs);
    free(report_list);
    par_report_doc_free(doc);
    return rc;
}
