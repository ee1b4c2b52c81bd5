/*
 * cli.h - the subcommands of build/parity and what they share: backend resolution (built-ins, --plugin, -b specs)
 * and usage output. Each par_cmd_* returns the process exit code (0 ok, 1 conformance failure, 2 usage or input
 * error, 3 internal error, 130 / 143 a run interrupted by SIGINT / SIGTERM).
 */
#ifndef PAR_CLI_H
#define PAR_CLI_H

#include "runner/runner.h"

#define PAR_EXIT_OK 0
#define PAR_EXIT_FAIL 1
#define PAR_EXIT_USAGE 2
#define PAR_EXIT_INTERNAL 3

#define PAR_MAX_PLUGINS 16
#define PAR_MAX_BACKENDS 32

typedef struct par_backends {
    int32_t n_avail;
    const par_backend *avail[PAR_MAX_BACKENDS];
    char avail_plugin[PAR_MAX_BACKENDS][512];
    int32_t n;
    par_backend_inst inst[PAR_MAX_BACKENDS];
} par_backends;

/* Load plugins and resolve the -b list (NULL: every available backend, keeping only the usable ones). Probes each
 * instance (init in a child). Returns 0 or PAR_EXIT_USAGE with the message printed. */
int par_cli_backends(par_backends *bs, int32_t n_plugins, char **plugins, const char *list, double timeout_s);

int par_cmd_run(int argc, char **argv, const char *exe);
int par_cmd_list(int argc, char **argv, const char *exe);
int par_cmd_show(int argc, char **argv, const char *exe);
int par_cmd_export(int argc, char **argv, const char *exe);
int par_cmd_import(int argc, char **argv, const char *exe);
int par_cmd_bench(int argc, char **argv, const char *exe);
int par_cmd_quantize(int argc, char **argv, const char *exe);
int par_cmd_fuzz(int argc, char **argv, const char *exe);
int par_cmd_reduce(int argc, char **argv, const char *exe);
int par_cmd_localize(int argc, char **argv, const char *exe);
int par_cmd_report(int argc, char **argv, const char *exe);
int par_cmd_merge(int argc, char **argv, const char *exe);
int par_cmd_coverage(int argc, char **argv, const char *exe);
int par_cmd_diff(int argc, char **argv, const char *exe);
int par_cmd_budgets(int argc, char **argv, const char *exe);

/* What `parity run --junit FILE --html FILE --baseline BASE` does once DIR/report.json (path) is written
 * (cli/cli_after_run.c): the JUnit XML, the HTML page and the diff against BASE, all rendered from the file through
 * the reader; a latency regression the diff finds is timed again (the run's options, fresh processes) and kept only
 * when the second timing shows it too. junit, html and base may be NULL. Returns 0, PAR_EXIT_FAIL when the diff's
 * gate is FAIL, or the exit code of an error; *gate_ok is 1 when a diff was computed and its gate is not FAIL (the
 * run's own failures are then known ones, and the run exits 0). */
struct par_report_doc;
int par_cli_after_run(const char *path, const char *junit, const char *html, const struct par_report_doc *base,
                      const par_case_set *set, const par_run_config *cfg, int color, int *gate_ok);

/* The arithmetic named by --arith (f32, f16-storage, f16, bf16, bf16-storage) into *a: 0, or -1 with the message
 * printed, prefixed by cmd. */
int par_cli_arith(const char *cmd, const char *name, par_arith *a);

/* Resolve a case argument: an existing file, or a case ID (suites, then models). */
par_case *par_cli_load_case(const char *arg, par_msg *msg);

#endif
