/*
 * html_out.c - the scaffolding of parity's HTML pages (html_out.h): escaping, the page head and end, verdict badges,
 * and the in-memory page written atomically.
 *
 * Colours (verdicts, chart bars) come from the Okabe-Ito palette, which readers with the common colour-vision
 * deficiencies tell apart; every verdict also carries its letter, so no information is in colour alone.
 *
 * This file must not know any report: it writes markup around what its callers give it, and reads nothing.
 */
#include "html_out.h"

#include "core/files.h"

#include <math.h>
#include <stdlib.h>

int par_html_doc_open(par_html_doc *d, par_msg *msg)
{
    d->text = NULL;
    d->len = 0;
    d->f = open_memstream(&d->text, &d->len);
    if (!d->f) {
        par_msgf(msg, PAR_ERROR, "html: out of memory opening the page");
        return -1;
    }
    return 0;
}

void par_html_doc_discard(par_html_doc *d)
{
    if (d->f) fclose(d->f);
    free(d->text);
    d->f = NULL;
    d->text = NULL;
    d->len = 0;
}

par_status par_html_doc_commit(par_html_doc *d, const char *path, par_msg *msg)
{
    if (!d->f) return par_msgf(msg, PAR_ERROR, "%s: no page was written", path);
    int bad = ferror(d->f);
    bad |= fclose(d->f) != 0;
    d->f = NULL;
    par_status st = PAR_OK;
    if (bad || !d->text) st = par_msgf(msg, PAR_ERROR, "%s: out of memory building the page", path);
    else if (par_write_file_atomic(path, d->text, msg) != 0) st = PAR_ERROR;
    free(d->text);
    d->text = NULL;
    d->len = 0;
    return st;
}

void par_html_text(FILE *f, const char *s)
{
    if (!s) return;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7F) fputs("\xEF\xBF\xBD", f);
            else fputc(c, f);
        }
    }
}

void par_html_num(FILE *f, double x)
{
    if (isnan(x)) fputs("NaN", f);
    else if (isinf(x)) fputs(x > 0 ? "inf" : "-inf", f);
    else fprintf(f, "%.3g", x);
}

const char *par_html_verdict_class(par_verdict v)
{
    switch (v) {
    case PAR_V_PASS: return "vP";
    case PAR_V_FAIL: return "vF";
    case PAR_V_UNSUPPORTED: return "vU";
    case PAR_V_ERROR: return "vE";
    case PAR_V_CRASH: return "vC";
    case PAR_V_TIMEOUT: return "vT";
    case PAR_V_FLAKY: return "vK";
    default: return "vX";
    }
}

char par_html_verdict_letter(par_verdict v)
{
    static const char letters[PAR_V_COUNT] = {'P', 'F', 'U', 'E', 'C', 'T', 'K'};
    return (int)v >= 0 && v < PAR_V_COUNT ? letters[v] : '?';
}

void par_html_verdict_badge(FILE *f, par_verdict v)
{
    const char *name = (int)v >= 0 && v < PAR_V_COUNT ? par_verdict_name(v) : "?";
    fprintf(f, "<span class=\"b %s\">%c %s</span>", par_html_verdict_class(v), par_html_verdict_letter(v), name);
}

/* Verdict colours (Okabe-Ito): PASS sky blue, FAIL vermillion, CRASH black, TIMEOUT reddish purple, FLAKY orange,
 * ERROR yellow, UNSUPPORTED grey; text stays dark on the light ones, white on the dark ones. */
static const char css[] =
    ":root{--pass:#56b4e9;--fail:#d55e00;--crash:#222;--timeout:#cc79a7;--flaky:#e69f00;--error:#f0e442;"
    "--unsup:#d9d9d9;--line:#ccc;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:14px}\n"
    "body{margin:0 auto;max-width:1400px;padding:0 16px 40px;color:#111;background:#fff}\n"
    "h1{font-size:1.5em;margin:16px 0 4px}h2{font-size:1.2em;margin:28px 0 8px;border-bottom:1px solid var(--line)}\n"
    "h3{font-size:1em;margin:12px 0 4px}\n"
    "code,pre,.mono{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12px}\n"
    "pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:6px;margin:4px 0}\n"
    "table{border-collapse:collapse;margin:4px 0}th,td{border:1px solid var(--line);padding:2px 6px;"
    "text-align:left;vertical-align:top}\n"
    "th{background:#f0f0f0;position:sticky;top:0;z-index:1}\n"
    "table.sortable th{cursor:pointer}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "table.kv th{position:static;width:14em}table.m{font-size:12px}table.m th{position:static;font-weight:500}\n"
    ".b{display:inline-block;padding:0 4px;border-radius:3px;font-weight:600;white-space:nowrap}\n"
    ".vP{background:var(--pass)}.vF{background:var(--fail);color:#fff}.vC{background:var(--crash);color:#fff}\n"
    ".vT{background:var(--timeout)}.vK{background:var(--flaky)}.vE{background:var(--error)}"
    ".vU{background:var(--unsup)}.vX{background:#fff}\n"
    ".warn{background:#fff3cd;border:1px solid #e69f00;padding:6px 10px;margin:8px 0}\n"
    ".muted{color:#666}.charts{display:flex;flex-wrap:wrap;gap:16px}.charts figure{margin:0}\n"
    "figcaption{font-weight:600;margin:4px 0}\n"
    "svg text{font-family:system-ui,sans-serif;font-size:11px}\n"
    "details>summary{cursor:pointer}\n"
    "#heatmap td[class] a,pre.cl a{color:inherit;text-decoration:none}#heatmap td{white-space:nowrap}\n"
    "pre.repro{user-select:all}\n"
    "ol.groups{padding-left:1.6em;margin:4px 0}ol.groups li{margin:3px 0;font-size:15px}"
    "ol.groups li.fail::marker{color:var(--fail);font-weight:700}ol.groups code.repro{font-size:11px;color:#555}\n"
    ".tag{display:inline-block;padding:0 4px;border-radius:3px;font-size:11px;font-weight:600;"
    "background:#fff3cd;border:1px solid var(--flaky);color:#7a4d00;white-space:nowrap}\n"
    "svg.emap rect.e{fill:var(--fail)}svg.emap rect.o{fill:#eee}\n"
    "svg.strip rect.p{fill:#0072b2}svg.strip rect.d{fill:var(--fail)}svg.strip rect.first{stroke:#000;"
    "stroke-width:1.5}svg.strip line{stroke:#333;stroke-dasharray:3 2}svg.strip{background:#f4f4f4}\n"
    "input[data-filter]{margin:4px 0;padding:3px;width:30em}\n"
    "@media print{th{position:static}input[data-filter]{display:none}body{max-width:none}"
    "a{color:inherit;text-decoration:none}}\n";

/* Sorting: a click on a header of table.sortable sorts its first tbody by that column (numbers by value when the
 * cell has data-v, else by text), again to reverse. Filtering: input[data-filter] hides the rows of the named
 * table whose text does not contain the input (case-insensitive). A link to a closed <details>, to an element
 * inside one, or to a table row holding one opens it. */
static const char script[] =
    "(function(){\n"
    "function key(td){var v=td.getAttribute('data-v');return v===null?td.textContent:parseFloat(v);}\n"
    "document.querySelectorAll('table.sortable').forEach(function(t){\n"
    " t.querySelectorAll('thead th').forEach(function(th,i){th.addEventListener('click',function(){\n"
    "  var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),d=th.getAttribute('data-d')==='a'?-1:1;\n"
    "  th.setAttribute('data-d',d===1?'a':'d');\n"
    "  rows.sort(function(x,y){var a=key(x.cells[i]),c=key(y.cells[i]);"
    "return (a<c?-1:a>c?1:0)*d;});\n"
    "  rows.forEach(function(r){b.appendChild(r);});});});});\n"
    "document.querySelectorAll('input[data-filter]').forEach(function(inp){\n"
    " var t=document.getElementById(inp.getAttribute('data-filter'));if(!t)return;\n"
    " inp.addEventListener('input',function(){var q=inp.value.toLowerCase();\n"
    "  Array.prototype.forEach.call(t.tBodies[0].rows,function(r){"
    "r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';});});});\n"
    "function openHash(){var h=location.hash.slice(1);if(!h)return;var e=document.getElementById(h);if(!e)return;\n"
    " if(e.tagName==='TR'){var d=e.querySelector('details');if(d)d.open=true;}\n"
    " for(;e;e=e.parentElement)if(e.tagName==='DETAILS')e.open=true;}\n"
    "window.addEventListener('hashchange',openHash);openHash();\n"
    "window.addEventListener('beforeprint',function(){document.querySelectorAll('#failures details')"
    ".forEach(function(d){d.open=true;});});\n"
    "})();\n";

void par_html_page_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    par_html_text(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
}

void par_html_page_end(FILE *f)
{
    fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
}
