/*
 * cli_merge.c - `parity merge A.json B.json ... -o ALL.json`: the shard reports of one run (`parity run --shard K/N`
 * on several machines) into one report, through the reader (reports/report_read.h) and reports/merge.h. docs/ci.md
 * shows the CI matrix this is for.
 */
#include "cli.h"

#include "core/files.h"
#include "reports/merge.h"
#include "reports/report_read.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct option merge_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void merge_usage(FILE *f)
{
    fprintf(f, "usage: parity merge SHARD.json... -o ALL.json\n"
               "\n"
               "Merges the reports of 'parity run --shard K/N' (K = 1..N, from any machines) into one report whose\n"
               "cases are in the order of the unsharded run. Refuses reports of different selections, seeds,\n"
               "backends or schema versions, a shard given twice, a missing shard, a case in two shards. Each\n"
               "shard's machine, build and wall time are kept in the merged report's \"shards\".\n"
               "\n"
               "  -o, --output FILE  the merged report (written atomically; required)\n"
               "\n"
               "Exit codes: 0 merged, 2 a report cannot be read, the reports are not shards of one run, or the\n"
               "output cannot be written.\n");
}

int par_cmd_merge(int argc, char **argv, const char *exe)
{
    const char *out_path = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", merge_opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case 'h': merge_usage(stdout); return PAR_EXIT_OK;
        default: merge_usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    int32_t n = argc - optind;
    if (n < 1 || !out_path) {
        fprintf(stderr, "parity merge: %s\n", !out_path ? "-o ALL.json is required" : "no report given");
        merge_usage(stderr);
        return PAR_EXIT_USAGE;
    }
    par_report_doc **docs = calloc((size_t)n, sizeof *docs);
    const par_report **in = calloc((size_t)n, sizeof *in);
    const char **paths = calloc((size_t)n, sizeof *paths);
    int rc = PAR_EXIT_OK;
    par_msg msg = {{0}};
    if (!docs || !in || !paths) rc = PAR_EXIT_INTERNAL;
    for (int32_t i = 0; i < n && rc == PAR_EXIT_OK; i++) {
        paths[i] = argv[optind + i];
        if (par_report_read(paths[i], &docs[i], &msg) != PAR_OK) {
            fprintf(stderr, "parity: %s\n", msg.text);
            rc = PAR_EXIT_USAGE;
        } else {
            in[i] = par_report_doc_report(docs[i]);
        }
    }
    par_report_merged *m = NULL;
    if (rc == PAR_EXIT_OK && par_report_merge(in, paths, n, &m, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
    }
    if (rc == PAR_EXIT_OK) {
        par_report *r = par_report_merged_report(m);
        size_t len = strlen(exe) + 32;
        for (int32_t i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
        char *cmd = malloc(len);
        if (cmd) {
            snprintf(cmd, len, "%s", exe);
            for (int32_t i = 0; i < argc; i++) strcat(strcat(cmd, " "), argv[i]);
            r->command_line = cmd;
        }
        char *dir = strdup(out_path);
        if (!dir || par_mkdir_p(dirname(dir)) != 0) {
            fprintf(stderr, "parity: cannot make the folder of %s: %s\n", out_path, strerror(errno));
            rc = PAR_EXIT_USAGE;
        } else if (par_report_write_json(r, out_path, &msg) != PAR_OK) {
            fprintf(stderr, "parity: %s\n", msg.text);
            rc = PAR_EXIT_USAGE;
        } else {
            int64_t records = 0;
            for (size_t k = 0; k < (size_t)r->n_cases * (size_t)r->n_backends; k++) records += r->results[k].done;
            printf("merged %d report%s: %d case%s, %lld record%s on %d backend%s -> %s\n", (int)n, n == 1 ? "" : "s",
                   (int)r->n_cases, r->n_cases == 1 ? "" : "s", (long long)records, records == 1 ? "" : "s",
                   (int)r->n_backends, r->n_backends == 1 ? "" : "s", out_path);
        }
        free(dir);
        free(cmd);
    }
    par_report_merged_free(m);
    for (int32_t i = 0; docs && i < n; i++) par_report_doc_free(docs[i]);
    free(docs);
    free(in);
    free(paths);
    return rc;
}
