/*
 * main.c - build/parity: dispatches to the subcommands (cli/cli_*.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "parity - cross-backend conformance and fuzz test harness for on-device ML runtimes\n"
            "\n"
            "usage: parity <command> [options]\n"
            "\n"
            "commands:\n"
            "  run [CASES...]     run cases (files, folders, --suite, --case) on backends; summary + report.json\n"
            "  list WHAT          list ops | backends | cases | suites\n"
            "  show CASE          print a case (a file or a case ID)\n"
            "  export CASE        write a case with its inputs and reference outputs inline, as JSON; or as a model\n"
            "                     file (--format onnx|tflite)\n"
            "  import MODEL       an ONNX or TFLite model as a case file (--ops: one case per distinct op)\n"
            "  bench              latency per backend, side by side, for a model or a suite\n"
            "  quantize CASE      write the quantized twin (qu8/qs8) of a float case\n"
            "  fuzz               differential fuzzing campaign: random graphs on every backend, findings reduced\n"
            "  reduce FINDING     localize and shrink a failing case on one backend; reduced.json and a C repro\n"
            "  localize CASE      the first node whose output diverges on one backend, with every node's error\n"
            "  report FILE        render a report.json: the terminal summary, HTML, JUnit XML\n"
            "  merge SHARDS -o F  merge the reports of 'run --shard K/N' from several machines into one\n"
            "  coverage [REPORT]  per backend: the ops and dtypes it claims, which have cases, which pass\n"
            "  diff BASE NEW      compare two reports: new failures, drift, latency regressions; a CI gate\n"
            "  budgets CASES      the reference alone under one arithmetic: unjudged elements and the largest\n"
            "                     budgets, per case and per node; compares every budget with a saved run's\n"
            "\n"
            "'parity <command> --help' explains a command. Exit codes: 0 all passed or unsupported, 1 a conformance\n"
            "failure, 2 usage or input error, 3 internal error, 130/143 run interrupted by SIGINT/SIGTERM (partial\n"
            "report written). Docs: README.md and docs/ (docs/reliability.md: what a misbehaving backend costs).\n");
}

int main(int argc, char **argv)
{
    const char *exe = argv[0];
    if (argc < 2) {
        usage(stderr);
        return PAR_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return PAR_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("parity %s (backend API %u)\n", PAR_GIT_REV, PAR_BACKEND_API_VERSION);
        return PAR_EXIT_OK;
    }
    if (!strcmp(cmd, "run")) return par_cmd_run(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "list")) return par_cmd_list(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "show")) return par_cmd_show(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "export")) return par_cmd_export(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "import")) return par_cmd_import(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "bench")) return par_cmd_bench(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "quantize")) return par_cmd_quantize(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "fuzz")) return par_cmd_fuzz(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "reduce")) return par_cmd_reduce(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "localize")) return par_cmd_localize(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "report")) return par_cmd_report(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "merge")) return par_cmd_merge(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "coverage")) return par_cmd_coverage(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "diff")) return par_cmd_diff(argc - 1, argv + 1, exe);
    if (!strcmp(cmd, "budgets")) return par_cmd_budgets(argc - 1, argv + 1, exe);
    fprintf(stderr, "parity: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return PAR_EXIT_USAGE;
}
