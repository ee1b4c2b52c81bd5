/*
 * fuzz_report.c - libFuzzer target for the report reader (reports/report_read.c). Any bytes go to par_report_parse.
 * A rejected input must carry a message naming the file ("fuzz.json: ..."); an accepted one must give a consistent
 * report (every record's case and backend in range, strings terminated, every record one that par_result_check
 * accepts as it accepts a worker's), which the terminal summary and a merge of the report with itself then read
 * through: what a renderer does with a report from anywhere. Any violation traps, so libFuzzer keeps the input.
 * Seeds: fuzz/corpus/report/ (small reports written by parity run, and one of each malformed kind the reader must
 * refuse: null for an array, a duplicate key, a wrong type, counts and coordinates out of range, NaN, a 30-digit
 * seed).
 *
 * Must not: write files, or keep state between inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/merge.h"
#include "reports/report_read.h"
#include "reports/summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    par_msg msg = {{0}};
    par_report_doc *d = NULL;
    if (par_report_parse("fuzz.json", (const char *)data, size, &d, &msg) != PAR_OK) {
        if (d || strncmp(msg.text, "fuzz.json: ", 11) != 0) __builtin_trap();
        return 0;
    }
    const par_report *r = par_report_doc_report(d);
    if (!r || r->n_cases < 0 || r->n_backends < 0 || (r->n_cases && r->n_backends && !r->results)) __builtin_trap();
    for (int32_t c = 0; c < r->n_cases; c++)
        if (memchr(r->cases[c].id, 0, sizeof r->cases[c].id) == NULL || !r->cases[c].id[0]) __builtin_trap();
    for (int32_t b = 0; b < r->n_backends; b++)
        if (memchr(r->backends[b].label, 0, sizeof r->backends[b].label) == NULL) __builtin_trap();
    for (int32_t c = 0; c < r->n_cases; c++)
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *res = par_report_record(r, c, b);
            static par_result copy; /* 60 KiB: off the stack */
            if (!res) continue;
            copy = *res;
            if (par_result_check(&copy, NULL, 0) < 0 || res->m.n_over > res->m.n) __builtin_trap();
            for (int32_t k = 0; k < res->m.worst_rank; k++)
                if (res->m.worst_dims[k] > 0 && res->m.worst_coords[k] >= res->m.worst_dims[k]) __builtin_trap();
        }
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        par_summary_print(null, r, 0, 50);
        fclose(null);
    }
    const char *path = "fuzz.json";
    par_report_merged *m = NULL;
    if (par_report_merge(&r, &path, 1, &m, &msg) == PAR_OK) {
        const par_report *mr = par_report_merged_report(m);
        if (mr->n_cases != r->n_cases) __builtin_trap();
    }
    par_report_merged_free(m);
    par_report_doc_free(d);
    return 0;
}
