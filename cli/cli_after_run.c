/*
 * cli_after_run.c - what `parity run` does after writing DIR/report.json when asked: --junit FILE and --baseline
 * BASE, rendered from that file through the one reader (reports/report_read.h), so they are what `parity report
 * --junit` and `parity diff BASE` give on it; and the second timing of --baseline's latency regressions.
 *
 * The second timing: the records the diff calls latency regressions run again through the runner, with the run's
 * options (repeat, warm-up, rounds), in fresh backend processes, one worker, after the whole run; their diff against
 * BASE is the second opinion (par_diff_confirm): a regression counts only when it shows there too. A slowdown of the
 * machine or of one process, which strikes a record's runs in one timing, rarely strikes it twice
 * (docs/reports-diff.md, "Measured").
 */
#include "cli.h"

#include "reports/diff.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/report_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Time d's latency regressions again and let par_diff_confirm keep those the second timing shows. Returns how many
 * were timed again, or -1 (message printed) when the second timing could not run. */
static int64_t time_again(par_diff *d, const par_report *base, const par_report *cur, const par_case_set *set,
                          const par_run_config *cfg0)
{
    int32_t nb = cfg0->n_backends, n = 0, nbp = 0;
    char *pick_c = calloc((size_t)(set->n ? set->n : 1), 1);
    int32_t map_b[PAR_MAX_BACKENDS];
    par_backend_inst inst[PAR_MAX_BACKENDS];
    par_sel_case *cases = calloc((size_t)(set->n ? set->n : 1), sizeof *cases);
    if (!pick_c || !cases || nb > PAR_MAX_BACKENDS) {
        free(pick_c);
        free(cases);
        return -1;
    }
    for (int32_t b = 0; b < nb; b++) map_b[b] = -1;
    /* the items' indices are NEW's, which is this run's report: its cases and backends in the run's order */
    for (int32_t i = 0; i < d->n_items; i++) {
        const par_diff_item *it = &d->items[i];
        if (it->kind != PAR_DIFF_LATENCY_FAIL || it->c < 0 || it->c >= set->n || it->b < 0 || it->b >= nb ||
            strcmp(set->cases[it->c].id, it->case_id) != 0 || strcmp(cur->backends[it->b].label, it->backend) != 0)
            continue;
        pick_c[it->c] = 1;
        if (map_b[it->b] < 0) {
            map_b[it->b] = nbp;
            inst[nbp++] = cfg0->backends[it->b];
        }
    }
    for (int32_t c = 0; c < set->n; c++)
        if (pick_c[c]) cases[n++] = set->cases[c]; /* shared, not owned: freed with the run's set */
    int64_t timed = 0;
    if (n > 0) {
        par_case_set sub = {.n = n, .cases = cases, .seed = set->seed};
        par_run_config cfg = *cfg0;
        cfg.backends = inst;
        cfg.n_backends = nbp;
        cfg.jobs = 1;
        cfg.progress = 0;
        cfg.servers = NULL; /* the run's servers went to its workers: each job forks its own child */
        cfg.max_workers = 0;
        cfg.keep_servers = 0;
        printf("\nbaseline: timing %lld latency regression%s again (fresh processes, the run's options)\n",
               (long long)d->counts[PAR_DIFF_LATENCY_FAIL], d->counts[PAR_DIFF_LATENCY_FAIL] == 1 ? "" : "s");
        fflush(stdout);
        par_run_result res;
        int rc = par_run_cases(&sub, &cfg, &res);
        par_report_case *rc_cases = calloc((size_t)n, sizeof *rc_cases);
        if (res.results && rc_cases && rc < 128) {
            for (int32_t i = 0; i < n; i++) {
                snprintf(rc_cases[i].id, sizeof rc_cases[i].id, "%s", cases[i].id);
                snprintf(rc_cases[i].origin, sizeof rc_cases[i].origin, "%s", cases[i].origin);
                snprintf(rc_cases[i].ops, sizeof rc_cases[i].ops, "%s", cases[i].ops);
                rc_cases[i].index = cases[i].index;
            }
            par_report again_rep = {.command_line = "",
                                    .seed = set->seed,
                                    .repeat = cfg.exec.repeat,
                                    .warmup = cfg.exec.warmup,
                                    .rounds = cfg.rounds,
                                    .jobs = 1,
                                    .n_backends = nbp,
                                    .backends = inst,
                                    .n_cases = n,
                                    .cases = rc_cases,
                                    .results = res.results,
                                    .env = cur->env};
            par_diff *again = NULL;
            par_msg msg = {{0}};
            if (par_diff_compute(base, &again_rep, &d->opts, &again, &msg) == PAR_OK) {
                timed = d->counts[PAR_DIFF_LATENCY_FAIL];
                par_diff_confirm(d, again);
            } else {
                fprintf(stderr, "parity: --baseline: the second timing: %s\n", msg.text);
                timed = -1;
            }
            par_diff_free(again);
        } else {
            fprintf(stderr, "parity: --baseline: the second timing did not run (exit %d)\n", rc);
            timed = -1;
        }
        free(rc_cases);
        par_run_result_free(&res);
    }
    free(pick_c);
    free(cases);
    return timed;
}

int par_cli_after_run(const char *path, const char *junit, const char *html, const struct par_report_doc *base,
                      const par_case_set *set, const par_run_config *cfg, int color, int *gate_ok)
{
    *gate_ok = 0;
    if (!junit && !html && !base) return 0;
    par_report_doc *doc;
    par_msg msg = {{0}};
    if (par_report_read(path, &doc, &msg) != PAR_OK) {
        fprintf(stderr, "parity: reading back %s\n", msg.text);
        return PAR_EXIT_INTERNAL;
    }
    const par_report *cur = par_report_doc_report(doc);
    int rc = 0;
    if (junit && par_report_write_junit(cur, junit, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
    } else if (junit) {
        printf("junit: %s\n", junit);
    }
    if (html && par_report_write_html(cur, html, &msg) != PAR_OK) {
        fprintf(stderr, "parity: %s\n", msg.text);
        rc = PAR_EXIT_USAGE;
    } else if (html) {
        printf("html: %s\n", html);
    }
    par_diff *d = NULL;
    if (base && par_diff_compute(par_report_doc_report(base), cur, NULL, &d, &msg) != PAR_OK) {
        fprintf(stderr, "parity: --baseline: %s\n", msg.text);
        rc = PAR_EXIT_INTERNAL;
    } else if (base) {
        int64_t n_fail = d->counts[PAR_DIFF_LATENCY_FAIL];
        int64_t timed = n_fail > 0 ? time_again(d, par_report_doc_report(base), cur, set, cfg) : 0;
        printf("\nbaseline %s:\n", par_report_doc_path(base));
        par_diff_print(stdout, d, color, 50);
        if (timed > 0)
            printf("latency regressions timed again: %lld, reproduced: %lld\n", (long long)timed,
                   (long long)d->counts[PAR_DIFF_LATENCY_FAIL]);
        else if (timed < 0)
            printf("latency regressions could not be timed again: they stand as the first timing found them\n");
        if (par_diff_gate(d) == PAR_GATE_FAIL && rc == 0) rc = PAR_EXIT_FAIL;
        *gate_ok = par_diff_gate(d) != PAR_GATE_FAIL;
    }
    par_diff_free(d);
    par_report_doc_free(doc);
    return rc;
}
