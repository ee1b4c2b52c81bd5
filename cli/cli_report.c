/*
 * cli_report.c - `parity report FILE`: renders a report file (report.json of a run, a shard or a merge, from any
 * machine) through the one reader (reports/report_read.h): the terminal summary by default, and the other renderers
 * by option. Nothing is run and nothing is judged again: the records are what the file says.
 */
#include "cli.h"

#include "reports/groups.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report_read.h"
#include "reports/summary.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_MAX_FAIL = 1000, OPT_SUMMARY, OPT_JUNIT, OPT_HTML, OPT_GROUPS };

static const struct option report_opts[] = {
    {"max-failures", required_argument, NULL, OPT_MAX_FAIL},
    {"summary", no_argument, NULL, OPT_SUMMARY},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"html", required_argument, NULL, OPT_HTML},
    {"groups", no_argument, NULL, OPT_GROUPS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void report_usage(FILE *f)
{
    fprintf(f, "usage: parity report FILE [options]\n"
               "\n"
               "Renders a report file (out/report.json of 'parity run', a shard's, or a merged one) without running\n"
               "anything. With no output option, prints the terminal summary of the run (as 'parity run' does).\n"
               "\n"
               "  --html OUT         write the HTML report to OUT (one self-contained page; docs/reports-html.md)\n"
               "  --summary          print the terminal summary also when writing files\n"
               "  --max-failures N   failures listed in the summary (default 20)\n"
               "  --junit FILE       write the report as JUnit XML (docs/reports-junit-coverage.md)\n"
               "  --groups           print the failure groups: per op and backend with failures, the parameter of\n"
               "                     the case IDs that separates failing from passing cases (where to start)\n"
               "\n"
               "Exit codes: 0 the report has no failure, 1 it has failures, 2 the file cannot be read (the message\n"
               "names the file, the JSON field and the reason) or an output file cannot be written.\n");
}

/* Does the report hold a failing record (what 'parity run' would have exited 1 for)? */
static int has_failures(const par_report *r)
{
    for (int32_t c = 0; c < r->n_cases; c++)
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *res = par_report_record(r, c, b);
            if (res && res->verdict != PAR_V_PASS && res->verdict != PAR_V_UNSUPPORTED) return 1;
        }
    return 0;
}

int par_cmd_report(int argc, char **argv, const char *exe)
{
    int32_t max_failures = 20;
    int summary = 0, outputs = 0, groups = 0;
    const char *junit = NULL;
    const char *html = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", report_opts, NULL)) != -1) {
        switch (c) {
        case OPT_MAX_FAIL: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 1000000) {
                fprintf(stderr, "parity: --max-failures: '%s' is not a count in [0, 1000000]\n", optarg);
                return PAR_EXIT_USAGE;
            }
            max_failures = (int32_t)v;
            break;
        }
        case OPT_SUMMARY: summary = 1; break;
        case OPT_JUNIT: junit = optarg, outputs++; break;
        case OPT_HTML: html = optarg; outputs++; break;
        case OPT_GROUPS: groups = 1; outputs++; break;
        case 'h': report_usage(stdout); return PAR_EXIT_OK;
        default: report_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "parity report: expected one report file\n");
        report_usage(stderr);
        return PAR_EXIT_USAGE;
    }
    par_report_doc *doc;
    par_msg msg = {{0}};
    if (par_report_read(argv[optind], &doc, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    const par_report *r = par_report_doc_report(doc);
    int rc = has_failures(r) ? PAR_EXIT_FAIL : PAR_EXIT_OK;
    if (junit && par_report_write_junit(r, junit, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
    }
    if (html && par_report_write_html(r, html, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
    }
    if (groups) {
        par_group *g = NULL;
        int32_t ng = 0;
        if (par_groups_compute(r, &g, &ng) != 0) {
            fprintf(stderr, "parity: out of memory\n");
            rc = PAR_EXIT_INTERNAL;
        } else if (ng == 0) {
            printf("no failures\n");
        } else {
            par_groups_print(stdout, r, g, ng, -1, "");
        }
        free(g);
    }
    if (summary || !outputs) par_summary_print(stdout, r, isatty(STDOUT_FILENO) && !getenv("NO_COLOR"), max_failures);
    fflush(stdout);
    par_report_doc_free(doc);
    return rc;
}
