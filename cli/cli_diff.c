/*
 * cli_diff.c - `parity diff BASE.json NEW.json`: two report files compared (reports/diff.h), the gate for CI.
 * Both files are read through the one reader (reports/report_read.h); nothing is run and nothing is judged again.
 * Exit codes: 0 PASS or WARN, 1 FAIL, 2 a usage error, a report that cannot be read (the message names the file),
 * or an output file that cannot be written.
 */
#include "cli.h"

#include "reports/diff.h"
#include "reports/report_read.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    OPT_LAT_WARN = 1000,
    OPT_LAT_FAIL,
    OPT_ALPHA,
    OPT_MIN_SAMPLES,
    OPT_LAT_FLOOR,
    OPT_DRIFT_FACTOR,
    OPT_DRIFT_FLOOR,
    OPT_MAX_ITEMS,
    OPT_HTML,
};

static const struct option diff_opts[] = {
    {"latency-warn", required_argument, NULL, OPT_LAT_WARN},
    {"latency-fail", required_argument, NULL, OPT_LAT_FAIL},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"min-samples", required_argument, NULL, OPT_MIN_SAMPLES},
    {"latency-floor-ms", required_argument, NULL, OPT_LAT_FLOOR},
    {"drift-factor", required_argument, NULL, OPT_DRIFT_FACTOR},
    {"drift-floor", required_argument, NULL, OPT_DRIFT_FLOOR},
    {"max-items", required_argument, NULL, OPT_MAX_ITEMS},
    {"html", required_argument, NULL, OPT_HTML},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void diff_usage(FILE *f)
{
    fprintf(f,
            "usage: parity diff BASE.json NEW.json [options]\n"
            "\n"
            "Compares two reports (an earlier run, BASE, and this one, NEW) and gates: FAIL on a new failure or a\n"
            "significant latency regression above --latency-fail; WARN on other verdict changes, lost coverage,\n"
            "accuracy drift and smaller significant slowdowns; PASS otherwise (docs/reports-diff.md).\n"
            "\n"
            "  --latency-warn F       WARN when significantly slower by at least this fraction (default 0.05)\n"
            "  --latency-fail F       FAIL when significantly slower by at least this fraction (default 0.15)\n"
            "  --alpha A              family-wise error rate of the latency tests, Holm-corrected (default 0.01)\n"
            "  --min-samples N        timed runs needed on both sides to judge a record's latency (default 5;\n"
            "                         'parity run --repeat N' sets them)\n"
            "  --latency-floor-ms MS  latency not judged when both medians are below this (default 0.01)\n"
            "  --drift-factor K       accuracy drift: error/budget moved by at least this factor (default 4)\n"
            "  --drift-floor R        ... and the larger ratio at least this (default 0.01)\n"
            "  --max-items N          items listed, worst first (default 50; -1 all)\n"
            "  --html OUT             also write the diff as a self-contained HTML page\n"
            "\n"
            "Exit codes: 0 PASS or WARN, 1 FAIL, 2 usage error, a report that cannot be read or an output that\n"
            "cannot be written.\n");
}

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "parity diff: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int par_cmd_diff(int argc, char **argv, const char *exe)
{
    (void)exe;
    par_diff_opts o;
    par_diff_opts_default(&o);
    double max_items = 50, v;
    const char *html = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", diff_opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case OPT_LAT_WARN: bad = parse_num("--latency-warn", optarg, 0, 100, &o.latency_warn); break;
        case OPT_LAT_FAIL: bad = parse_num("--latency-fail", optarg, 0, 100, &o.latency_fail); break;
        case OPT_ALPHA: bad = parse_num("--alpha", optarg, 1e-300, 0.5, &o.alpha); break;
        case OPT_MIN_SAMPLES:
            bad = parse_num("--min-samples", optarg, 1, PAR_TIMING_SAMPLES, &v);
            if (!bad && v != floor(v))
                bad = fprintf(stderr, "parity diff: --min-samples: '%s' is not a count\n", optarg);
            o.min_samples = bad ? 0 : (int32_t)v;
            break;
        case OPT_LAT_FLOOR: bad = parse_num("--latency-floor-ms", optarg, 0, 1e9, &o.latency_floor_ms); break;
        case OPT_DRIFT_FACTOR: bad = parse_num("--drift-factor", optarg, 1.000001, 1e300, &o.drift_factor); break;
        case OPT_DRIFT_FLOOR: bad = parse_num("--drift-floor", optarg, 0, 1e300, &o.drift_floor); break;
        case OPT_MAX_ITEMS:
            bad = parse_num("--max-items", optarg, -1, 1e9, &max_items);
            if (!bad && max_items != floor(max_items))
                bad = fprintf(stderr, "parity diff: --max-items: '%s' is not a count\n", optarg);
            break;
        case OPT_HTML: html = optarg; break;
        case 'h': diff_usage(stdout); return PAR_EXIT_OK;
        default: diff_usage(stderr); return PAR_EXIT_USAGE;
        }
        if (bad) return PAR_EXIT_USAGE;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "parity diff: expected two report files, BASE and NEW\n");
        diff_usage(stderr);
        return PAR_EXIT_USAGE;
    }
    par_report_doc *docs[2] = {NULL, NULL};
    par_msg msg = {{0}};
    for (int i = 0; i < 2; i++)
        if (par_report_read(argv[optind + i], &docs[i], &msg) != PAR_OK) {
            fprintf(stderr, "parity diff: %s\n", msg.text);
            par_report_doc_free(docs[0]);
            return PAR_EXIT_USAGE;
        }
    par_diff *d = NULL;
    int rc = PAR_EXIT_OK;
    if (par_diff_compute(par_report_doc_report(docs[0]), par_report_doc_report(docs[1]), &o, &d, &msg) != PAR_OK) {
        fprintf(stderr, "parity diff: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
        goto done;
    }
    printf("BASE %s\nNEW  %s\n", argv[optind], argv[optind + 1]);
    par_diff_print(stdout, d, isatty(STDOUT_FILENO) && !getenv("NO_COLOR"), (int32_t)max_items);
    fflush(stdout);
    if (html && par_diff_write_html(d, html, &msg) != PAR_OK) {
        fprintf(stderr, "parity diff: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
        goto done;
    }
    rc = par_diff_gate(d) == PAR_GATE_FAIL ? PAR_EXIT_FAIL : PAR_EXIT_OK;
done:
    par_diff_free(d);
    par_report_doc_free(docs[0]);
    par_report_doc_free(docs[1]);
    return rc;
}
