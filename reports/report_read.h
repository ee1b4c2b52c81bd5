/*
 * report_read.h - the one reader of report.json (docs/report-schema.md): every renderer, the diff, the merge and
 * `parity report` read reports through it, so a report from another machine, another shard or last month renders
 * the same as the one this run wrote. The result is a par_report (reports/report.h) whose every pointer is into
 * the document; writing it back with par_report_write_json gives the same report (the summary is recomputed from
 * the records).
 *
 * Errors name the file, the JSON path and the reason, e.g.
 *     out/report.json: results[12].verdict: "PASSED" is not a verdict
 * A report of another schema, or of a version this build does not know, is refused; a field this build does not
 * know is ignored (fields are only added within a version); an optional field that is absent takes its default
 * (a case's index is then its position, its dtype ""; a record without samples_ms has no samples).
 */
#ifndef PAR_REPORT_READ_H
#define PAR_REPORT_READ_H

#include "report.h"

typedef struct par_report_doc par_report_doc;

/* Read path ("-" for standard input). Returns PAR_OK and *out (free it with par_report_doc_free), or PAR_ERROR
 * with msg. */
par_status par_report_read(const char *path, par_report_doc **out, par_msg *msg);

/* The same from text in memory (len bytes; need not be NUL-terminated); name stands for the file in messages. */
par_status par_report_parse(const char *name, const char *text, size_t len, par_report_doc **out, par_msg *msg);

/* The report of a document (valid until the document is freed). */
const par_report *par_report_doc_report(const par_report_doc *d);

/* The file it was read from, as given. */
const char *par_report_doc_path(const par_report_doc *d);

void par_report_doc_free(par_report_doc *d);

/* Lookups over a report (linear: call them once per case or backend, not per element). -1 when absent. */
int32_t par_report_find_backend(const par_report *r, const char *label);
int32_t par_report_find_case(const par_report *r, const char *id);

/* The record of (case c, backend b), or NULL when that record did not run (done == 0) or c, b are out of range. */
const par_result *par_report_record(const par_report *r, int32_t c, int32_t b);

#endif
