/*
 * html.h - the HTML report: one self-contained page (inline CSS, inline SVG charts, one small optional script; no
 * network, no other file) rendered from a par_report, as `parity report FILE --html OUT` writes it. What each section
 * shows and how to read it: docs/reports-html.md.
 */
#ifndef PAR_HTML_H
#define PAR_HTML_H

#include "report.h"

/* The most failures the page lists in full (worst first); it says how many more the report has. */
#define PAR_HTML_MAX_FAILURES 2000

/* The slowest cases the latency chart shows when the report has no model case. */
#define PAR_HTML_SLOWEST 20

/* Render r to path, written atomically (core/files.h): an existing file stays as it was on any error. PAR_OK, or
 * PAR_ERROR with msg naming path and the reason. */
par_status par_report_write_html(const par_report *r, const char *path, par_msg *msg);

#endif
