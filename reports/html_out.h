/*
 * html_out.h - the scaffolding of parity's self-contained HTML pages (the report page, reports/html.h, and any other
 * page a renderer writes): escaping, the page head with its one inline stylesheet, the page end with its one small
 * inline script, verdict badges, numbers, and an in-memory document written to its file atomically.
 *
 * A page built with these references nothing outside itself (no network, no other file), reads without JavaScript
 * (the script only adds table sorting, row filtering and opening a <details> that a link points at) and prints
 * (the print stylesheet drops the sticky headers). Every string that comes from a report goes through
 * par_html_text; an id or href is never built from report text (use an index: "f12", "g3").
 */
#ifndef PAR_HTML_OUT_H
#define PAR_HTML_OUT_H

#include "core/result.h"

#include <stdio.h>

/* A page being written: text goes to f (an in-memory stream); par_html_doc_commit writes it to its file. */
typedef struct par_html_doc {
    FILE *f;
    char *text;
    size_t len;
} par_html_doc;

/* Open an in-memory page. 0, or -1 (out of memory) with msg. */
int par_html_doc_open(par_html_doc *d, par_msg *msg);

/* Close the page and write it to path atomically (core/files.h); frees the text either way. A write error on the
 * stream, or a page never opened, is an error naming path. */
par_status par_html_doc_commit(par_html_doc *d, const char *path, par_msg *msg);

/* Close and free a page without writing it (an error path). */
void par_html_doc_discard(par_html_doc *d);

/* Text, HTML-escaped for element content and quoted attribute values (& < > " '); C0 control characters other
 * than tab and newline, and DEL, become U+FFFD (HTML forbids them). NULL writes nothing. */
void par_html_text(FILE *f, const char *s);

/* A number for a table or label: %.3g for finite values, "inf", "-inf", "NaN". */
void par_html_num(FILE *f, double x);

/* <!DOCTYPE html> .. <body>: charset, viewport, the escaped title, the stylesheet. */
void par_html_page_begin(FILE *f, const char *title);

/* The script (sorting of table.sortable by a click on a header, filtering of the rows of the table whose id an
 * <input data-filter="ID"> names, opening the <details> a link targets (or the one inside a targeted table row),
 * opening every details of table#failures before printing)
 * and </body></html>. */
void par_html_page_end(FILE *f);

/* Verdicts: the CSS class ("vP", "vF", ...), the one-letter symbol (P F U E C T K: FLAKY is K), and a badge: the
 * letter and the name in a coloured span, so that a verdict never relies on colour alone. */
const char *par_html_verdict_class(par_verdict v);
char par_html_verdict_letter(par_verdict v);
void par_html_verdict_badge(FILE *f, par_verdict v);


#endif
