/*
 * coverage.c - the op coverage table (reports/coverage.h): cells per (backend, op, dtype) filled from a report's
 * records or a selection, and the claims another layer probed; printed as a terminal table and written as JSON. It
 * must not run a backend or a case, nor read anything but what it is given.
 */
#include "coverage.h"

#include "core/files.h"
#include "json_out.h"

#include <stdlib.h>
#include <string.h>

par_status par_coverage_init(par_coverage *cov, int32_t n, const char *const *labels, par_msg *msg)
{
    memset(cov, 0, sizeof *cov);
    cov->labels = calloc(n > 0 ? (size_t)n : 1, sizeof *cov->labels);
    cov->cells = calloc((n > 0 ? (size_t)n : 1) * PAR_OP_COUNT * PAR_COV_DTYPES, sizeof *cov->cells);
    if (!cov->labels || !cov->cells) {
        par_coverage_free(cov);
        return par_msgf(msg, PAR_ERROR, "coverage: out of memory");
    }
    cov->n_backends = n;
    for (int32_t b = 0; b < n; b++) snprintf(cov->labels[b], sizeof cov->labels[b], "%s", labels[b]);
    return PAR_OK;
}

void par_coverage_free(par_coverage *cov)
{
    free(cov->labels);
    free(cov->cells);
    cov->labels = NULL;
    cov->cells = NULL;
    cov->n_backends = 0;
}

par_cov_cell *par_coverage_cell(const par_coverage *cov, int32_t b, par_op_id op, par_dtype dt)
{
    if (b < 0 || b >= cov->n_backends || (int)op < 0 || op >= PAR_OP_COUNT || (int)dt < 0 || dt >= PAR_COV_DTYPES)
        return NULL;
    return &cov->cells[((size_t)b * PAR_OP_COUNT + (size_t)op) * PAR_COV_DTYPES + (size_t)dt];
}

par_dtype par_coverage_dtype(const char *name)
{
    for (int d = 1; d < PAR_COV_DTYPES; d++)
        if (name && strcmp(name, par_dtype_name((par_dtype)d)) == 0) return (par_dtype)d;
    return PAR_DTYPE_INVALID;
}

/* Call fn for every op named in the comma-separated list (unknown names are skipped: an op a newer parity wrote). */
static void for_each_op(const char *ops, void (*fn)(par_op_id op, void *arg), void *arg)
{
    char name[64];
    for (const char *p = ops; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k < sizeof name) {
            memcpy(name, p, k);
            name[k] = 0;
            const par_op_info *oi = par_op_find(name);
            if (oi) fn(oi->id, arg);
        }
        p += k;
        if (*p == ',') p++;
    }
}

typedef struct count_arg {
    par_coverage *cov;
    int32_t b;                   /* -1: every backend */
    par_dtype dt;
    int passed;
} count_arg;

static void count_op(par_op_id op, void *arg)
{
    const count_arg *a = arg;
    for (int32_t b = a->b < 0 ? 0 : a->b; b < (a->b < 0 ? a->cov->n_backends : a->b + 1); b++) {
        par_cov_cell *c = par_coverage_cell(a->cov, b, op, a->dt);
        if (!c) continue;
        c->cases++;
        c->passed += a->passed;
    }
}

void par_coverage_add_report(par_coverage *cov, const par_report *r)
{
    cov->passes_known = 1;
    for (int32_t b = 0; b < cov->n_backends; b++) {
        int32_t rb = -1;
        for (int32_t i = 0; i < r->n_backends && rb < 0; i++)
            if (strcmp(r->backends[i].label, cov->labels[b]) == 0) rb = i;
        if (rb < 0) continue;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = &r->results[(size_t)c * (size_t)r->n_backends + (size_t)rb];
            if (!x->done) continue;
            count_arg a = {cov, b, par_coverage_dtype(r->cases[c].dtype), x->verdict == PAR_V_PASS};
            for_each_op(r->cases[c].ops, count_op, &a);
        }
    }
}

void par_coverage_add_case(par_coverage *cov, const char *ops, par_dtype dt)
{
    count_arg a = {cov, -1, dt, 0};
    for_each_op(ops, count_op, &a);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Rows: per backend, the (op, dtype) cells with a probe or a case, in three groups.
 * ------------------------------------------------------------------------------------------------------------- */
enum { G_UNREACHED, G_UNTESTED, G_REST, G_COUNT };
static const char *const group_title[G_COUNT] = {"ops no case reaches", "claimed, but no case of this dtype",
                                                 "the rest"};
static const char *const group_key[G_COUNT] = {"unreached", "claimed_untested", "rest"};

static int64_t op_cases(const par_coverage *cov, int32_t b, par_op_id op)
{
    int64_t n = 0;
    for (int d = 0; d < PAR_COV_DTYPES; d++) n += par_coverage_cell(cov, b, op, (par_dtype)d)->cases;
    return n;
}

static int shown(const par_cov_cell *c) { return c->probes > 0 || c->cases > 0; }

static int op_shown(const par_coverage *cov, int32_t b, par_op_id op)
{
    for (int d = 0; d < PAR_COV_DTYPES; d++)
        if (shown(par_coverage_cell(cov, b, op, (par_dtype)d))) return 1;
    return 0;
}

/* The group of a cell of an op (cell NULL: the op's placeholder row when no dtype of it was probed or reached). */
static int row_group(const par_coverage *cov, int32_t b, par_op_id op, const par_cov_cell *c)
{
    if (op_cases(cov, b, op) == 0) return G_UNREACHED;
    if (c && c->claims > 0 && c->cases == 0) return G_UNTESTED;
    return G_REST;
}

static const char *claimed_word(const par_cov_cell *c)
{
    if (!c || c->probes == 0) return "?";
    return c->claims > 0 ? "yes" : "no";
}

static void print_row(FILE *f, const par_coverage *cov, par_op_id op, const char *dt, const par_cov_cell *c)
{
    char passed[32];
    if (!cov->passes_known || !c) snprintf(passed, sizeof passed, "-");
    else snprintf(passed, sizeof passed, "%lld", (long long)c->passed);
    fprintf(f, "    %-26s %-5s %-8s %6lld %7s\n", par_op_get(op)->name, dt, claimed_word(c),
            (long long)(c ? c->cases : 0), passed);
}

void par_coverage_print(FILE *f, const par_coverage *cov)
{
    fprintf(f, "coverage: claims probed with representative graphs (docs/reports-junit-coverage.md); cases %s %s\n",
            cov->passes_known ? "and passes from" : "from", cov->source);
    if (!cov->passes_known) fprintf(f, "(no report given: cases from the selection, passes not known)\n");
    for (int32_t b = 0; b < cov->n_backends; b++) {
        char label[160];
        par_text_clean(label, sizeof label, cov->labels[b], sizeof cov->labels[b], 1);
        int n_claimed = 0, n_unreached = 0;
        for (int op = 0; op < PAR_OP_COUNT; op++) {
            int claimed = 0;
            for (int d = 0; d < PAR_COV_DTYPES; d++) claimed |= par_coverage_cell(cov, b, op, (par_dtype)d)->claims > 0;
            n_claimed += claimed;
            n_unreached += op_cases(cov, b, (par_op_id)op) == 0;
        }
        fprintf(f, "\n%s: %d ops in the table, %d claimed in some dtype, %d reached by no case\n", label,
                (int)PAR_OP_COUNT, n_claimed, n_unreached);
        fprintf(f, "    %-26s %-5s %-8s %6s %7s\n", "op", "dtype", "claimed", "cases", "passed");
        for (int g = 0; g < G_COUNT; g++) {
            int header = 0;
            for (int op = 0; op < PAR_OP_COUNT; op++) {
                if (!op_shown(cov, b, (par_op_id)op)) {
                    if (g != row_group(cov, b, (par_op_id)op, NULL)) continue;
                    if (!header++) fprintf(f, "  %s:\n", group_title[g]);
                    print_row(f, cov, (par_op_id)op, "-", NULL);
                    continue;
                }
                for (int d = 0; d < PAR_COV_DTYPES; d++) {
                    const par_cov_cell *c = par_coverage_cell(cov, b, (par_op_id)op, (par_dtype)d);
                    if (!shown(c) || row_group(cov, b, (par_op_id)op, c) != g) continue;
                    if (!header++) fprintf(f, "  %s:\n", group_title[g]);
                    print_row(f, cov, (par_op_id)op, par_dtype_name((par_dtype)d), c);
                }
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------------------------------------------- */
static json_object *row_json(const par_coverage *cov, int32_t b, par_op_id op, const char *dt, const par_cov_cell *c,
                             int g)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "op", par_json_str(par_op_get(op)->name));
    json_object_object_add(o, "dtype", dt ? par_json_str(dt) : NULL);
    json_object_object_add(o, "group", par_json_str(group_key[g]));
    json_object_object_add(o, "claimed", c && c->probes > 0 ? json_object_new_boolean(c->claims > 0) : NULL);
    json_object_object_add(o, "probes", json_object_new_int(c ? c->probes : 0));
    json_object_object_add(o, "claims", json_object_new_int(c ? c->claims : 0));
    json_object_object_add(o, "unsupported_reason", c && c->why_not[0] ? par_json_str(c->why_not) : NULL);
    json_object_object_add(o, "cases", json_object_new_int64(c ? c->cases : 0));
    json_object_object_add(o, "passed", cov->passes_known ? json_object_new_int64(c ? c->passed : 0) : NULL);
    return o;
}

par_status par_coverage_write_json(const par_coverage *cov, const char *path, par_msg *msg)
{
    json_object *root = json_object_new_object(), *bes = json_object_new_array();
    json_object_object_add(root, "schema", par_json_str("parity.coverage"));
    json_object_object_add(root, "version", json_object_new_int(1));
    json_object_object_add(root, "source", par_json_str(cov->source));
    json_object_object_add(root, "passes_known", json_object_new_boolean(cov->passes_known != 0));
    for (int32_t b = 0; b < cov->n_backends; b++) {
        json_object *o = json_object_new_object(), *unreached = json_object_new_array(), *rows = json_object_new_array();
        json_object_object_add(o, "backend", par_json_str(cov->labels[b]));
        for (int op = 0; op < PAR_OP_COUNT; op++)
            if (op_cases(cov, b, (par_op_id)op) == 0)
                json_object_array_add(unreached, par_json_str(par_op_get((par_op_id)op)->name));
        for (int g = 0; g < G_COUNT; g++)
            for (int op = 0; op < PAR_OP_COUNT; op++) {
                if (!op_shown(cov, b, (par_op_id)op)) {
                    if (g == row_group(cov, b, (par_op_id)op, NULL))
                        json_object_array_add(rows, row_json(cov, b, (par_op_id)op, NULL, NULL, g));
                    continue;
                }
                for (int d = 0; d < PAR_COV_DTYPES; d++) {
                    const par_cov_cell *c = par_coverage_cell(cov, b, (par_op_id)op, (par_dtype)d);
                    if (shown(c) && row_group(cov, b, (par_op_id)op, c) == g)
                        json_object_array_add(rows, row_json(cov, b, (par_op_id)op, par_dtype_name((par_dtype)d), c, g));
                }
            }
        json_object_object_add(o, "unreached_ops", unreached);
        json_object_object_add(o, "rows", rows);
        json_object_array_add(bes, o);
    }
    json_object_object_add(root, "backends", bes);
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    par_status st = PAR_OK;
    if (!text) st = par_msgf(msg, PAR_ERROR, "%s: out of memory while rendering the coverage JSON", path);
    else if (par_write_file_atomic(path, text, msg) != 0) st = PAR_ERROR;
    json_object_put(root);
    return st;
}
