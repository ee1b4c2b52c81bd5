/*
 * groups.c - the failure groups of groups.h: per (op, backend) with failures, the feature of the case IDs that best
 * separates failing from passing cases.
 *
 * The score of a feature is recall x (precision inside - precision outside): the share of the failing cases it
 * covers, times how much likelier a case with it fails than a case without. A feature every failing case has, and no
 * passing one, scores 1; a feature that covers half the failures and nothing else, 0.5 x (1 - share of the rest
 * failing). So s=[2,2] with 75 of 149 failing and 0 of 449 others scores 1 x (0.50 - 0) = 0.50, ahead of any one
 * shape that holds 20 of those 75 failures (0.27 x ...). Ties go to the feature with fewer passing cases inside, then
 * to the shorter text. Only what the records and IDs say is used: nothing runs again.
 */
#include "groups.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int32_t par_id_params(const char *id, void (*fn)(void *user, const char *key, const char *value), void *user)
{
    const char *open = strchr(id, '(');
    if (!open) return 0;
    const char *p = open + 1;
    int32_t n = 0;
    while (*p && *p != ')') {
        char kv[256];
        size_t k = 0;
        int depth = 0;
        while (*p && (depth > 0 || (*p != ',' && *p != ')'))) {
            if (*p == '[' || *p == '(') depth++;
            if (*p == ']' || *p == ')') depth--;
            if (k + 1 < sizeof kv) kv[k++] = *p;
            p++;
        }
        kv[k] = 0;
        if (*p == ',') p++;
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv) continue;
        *eq = 0;
        fn(user, kv, eq + 1);
        n++;
    }
    return n;
}

/* ---- the features of one case -------------------------------------------------------------------------------- */

#define MAX_CASE_FEATS 64

typedef struct case_feats {
    int32_t n;
    int32_t shapes;          /* 4-D shapes seen: the first is the input's, whatever its key */
    char text[MAX_CASE_FEATS][128];
    int8_t hazard[MAX_CASE_FEATS];
    int8_t derived[MAX_CASE_FEATS]; /* not a key=value as the ID spells it: loses ties to one that is */
} case_feats;

static void add_feat(case_feats *cf, const char *text, int hazard, int derived)
{
    if (cf->n == MAX_CASE_FEATS) return;
    for (int32_t i = 0; i < cf->n; i++)
        if (strcmp(cf->text[i], text) == 0) return;
    snprintf(cf->text[cf->n], sizeof cf->text[0], "%s", text);
    cf->derived[cf->n] = (int8_t)derived;
    cf->hazard[cf->n++] = (int8_t)hazard;
}

static int has_feat(const case_feats *cf, const char *text)
{
    for (int32_t i = 0; i < cf->n; i++)
        if (strcmp(cf->text[i], text) == 0) return 1;
    return 0;
}

/* "[a,b,c,d]": the dims into d[0..3]; returns how many (up to 8), 0 when value is not a list of integers */
static int dims_of(const char *v, int64_t *d)
{
    if (*v != '[') return 0;
    int n = 0;
    const char *p = v + 1;
    while (*p && *p != ']' && n < 8) {
        char *end;
        long long x = strtoll(p, &end, 10);
        if (end == p) return 0;
        d[n++] = x;
        p = end;
        if (*p == ',') p++;
    }
    return *p == ']' ? n : 0;
}

static void param_feats(void *user, const char *key, const char *value)
{
    case_feats *cf = user;
    char t[128];
    if (strncmp(value, "hazard:", 7) == 0) {
        add_feat(cf, "hazard inputs", 1, 1);
        snprintf(t, sizeof t, "%s=%s", key, value);
        add_feat(cf, t, 1, 0);
        return;
    }
    snprintf(t, sizeof t, "%s=%s", key, value);
    add_feat(cf, t, 0, 0);
    int64_t d[8];
    /* one element of a pair (stride, dilation: height and width): a bug of the width's stride alone */
    if (dims_of(value, d) == 2)
        for (int k = 0; k < 2; k++) {
            snprintf(t, sizeof t, "%s[%d]=%lld", key, k, (long long)d[k]);
            add_feat(cf, t, 0, 1);
        }
    /* the channel count of the input's NCHW shape (the first 4-D shape of the ID, "in" or "x"): residues a vector
     * kernel's remainder loop shows at */
    if (dims_of(value, d) == 4 && d[1] > 0 && cf->shapes++ == 0) {
        static const int mods[] = {4, 8, 16};
        for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
            snprintf(t, sizeof t, "input channels %% %d %s 0", mods[i], d[1] % mods[i] ? "!=" : "==");
            add_feat(cf, t, 0, 1);
        }
        snprintf(t, sizeof t, "input channels %s 1", d[1] == 1 ? "==" : "!=");
        add_feat(cf, t, 0, 1);
    }
}

static void op_of(const char *id, char *op, size_t len)
{
    const char *p = strchr(id, '(');
    size_t n = p ? (size_t)(p - id) : strlen(id);
    const char *hash = strchr(id, '#');
    if (!p && hash) n = (size_t)(hash - id);
    if (n >= len) n = len - 1;
    memcpy(op, id, n);
    op[n] = 0;
}

/* ---- one (op, backend) ---------------------------------------------------------------------------------------- */

typedef struct feat_count {
    char text[128];
    int32_t hazard, derived;
    int64_t fail_in, n_in, first;
} feat_count;

static int failing(par_verdict v) { return v != PAR_V_PASS && v != PAR_V_UNSUPPORTED; }

/* g->op and g->backend set: count the op's judged and failing cases on the backend, leaving out those with the
 * feature g->within when it is set, and find the feature that separates them. Returns 0 or -1 (out of memory). */
static int best_feature(const par_report *r, const int32_t *case_op, int32_t op, par_group *g)
{
    int32_t nb = r->n_backends, b = g->backend;
    feat_count *fc = NULL;
    int32_t nf = 0, cap = 0;
    case_feats *cf = malloc(sizeof *cf);
    if (!cf) return -1;
    for (int32_t c = 0; c < r->n_cases; c++) {
        if (case_op[c] != op) continue;
        const par_result *res = &r->results[(size_t)c * (size_t)nb + (size_t)b];
        if (!res->done || res->verdict == PAR_V_UNSUPPORTED) continue;
        int fail = failing(res->verdict);
        cf->n = 0;
        cf->shapes = 0;
        par_id_params(r->cases[c].id, param_feats, cf);
        if (g->within[0] && has_feat(cf, g->within)) continue;
        g->n_judged++;
        g->n_fail += fail;
        if (fail && g->first_case < 0) g->first_case = c;
        for (int32_t i = 0; i < cf->n; i++) {
            int32_t k = 0;
            while (k < nf && strcmp(fc[k].text, cf->text[i]) != 0) k++;
            if (k == nf) {
                if (nf == cap) {
                    int32_t nc = cap ? cap * 2 : 64;
                    feat_count *m = realloc(fc, (size_t)nc * sizeof *m);
                    if (!m) {
                        free(fc);
                        free(cf);
                        return -1;
                    }
                    fc = m;
                    cap = nc;
                }
                memset(&fc[nf], 0, sizeof fc[nf]);
                snprintf(fc[nf].text, sizeof fc[nf].text, "%s", cf->text[i]);
                fc[nf].hazard = cf->hazard[i];
                fc[nf].derived = cf->derived[i];
                fc[nf].first = -1;
                nf++;
            }
            fc[k].n_in++;
            if (fail) {
                fc[k].fail_in++;
                if (fc[k].first < 0) fc[k].first = c;
            }
        }
    }
    free(cf);
    const double F = (double)g->n_fail, J = (double)g->n_judged;
    double best = 0;
    int32_t bi = -1;
    for (int32_t k = 0; k < nf && g->n_fail < g->n_judged; k++) {
        const feat_count *f = &fc[k];
        if (f->n_in == g->n_judged || f->fail_in == 0) continue;
        double recall = f->fail_in / F, p_in = (double)f->fail_in / (double)f->n_in;
        double p_out = (F - (double)f->fail_in) / (J - (double)f->n_in);
        double score = recall * (p_in - p_out);
        if (score <= 0) continue;
        int better = bi < 0 || score > best + 1e-12;
        if (!better && bi >= 0 && score > best - 1e-12) {
            int64_t pass_k = f->n_in - f->fail_in, pass_b = fc[bi].n_in - fc[bi].fail_in;
            better = pass_k < pass_b ||
                     (pass_k == pass_b && (f->derived < fc[bi].derived ||
                                           (f->derived == fc[bi].derived && strlen(f->text) < strlen(fc[bi].text))));
        }
        if (better) best = score, bi = k;
    }
    if (bi >= 0) {
        snprintf(g->feature, sizeof g->feature, "%s", fc[bi].text);
        g->hazard = fc[bi].hazard;
        g->fail_in = fc[bi].fail_in;
        g->n_in = fc[bi].n_in;
        g->fail_out = g->n_fail - g->fail_in;
        g->n_out = g->n_judged - g->n_in;
        g->first_case = fc[bi].first;
    }
    free(fc);
    return 0;
}

static int by_fail(const void *a, const void *b)
{
    /* by the op and backend's failures (a second group stays right after its first), then the rank */
    const par_group *x = a, *y = b;
    int64_t fx = x->rank ? x->lead_fail : x->n_fail, fy = y->rank ? y->lead_fail : y->n_fail;
    if (fx != fy) return fx > fy ? -1 : 1;
    int c = strcmp(x->op, y->op);
    if (c) return c;
    if (x->backend != y->backend) return (x->backend > y->backend) - (x->backend < y->backend);
    return x->rank - y->rank;
}

int par_groups_compute(const par_report *r, par_group **out, int32_t *n)
{
    *out = NULL;
    *n = 0;
    int32_t nb = r->n_backends, nc = r->n_cases, n_ops = 0;
    if (nb <= 0 || nc <= 0 || !r->results) return 0;
    int32_t *case_op = malloc((size_t)nc * sizeof *case_op);
    char(*ops)[64] = malloc((size_t)nc * sizeof *ops);
    if (!case_op || !ops) {
        free(case_op);
        free(ops);
        return -1;
    }
    /* ops in order of first appearance; the last op found is tried first (cases of one op come together) */
    for (int32_t c = 0; c < nc; c++) {
        char op[64];
        op_of(r->cases[c].id, op, sizeof op);
        int32_t k = n_ops - 1;
        while (k >= 0 && strcmp(ops[k], op) != 0) k--;
        if (k < 0) {
            k = n_ops++;
            memcpy(ops[k], op, sizeof op);
        }
        case_op[c] = k;
    }
    int64_t *fail = calloc((size_t)n_ops * (size_t)nb, sizeof *fail);
    int64_t *judged = calloc((size_t)n_ops * (size_t)nb, sizeof *judged);
    par_group *g = NULL;
    int32_t ng = 0, rc = 0;
    if (!fail || !judged) rc = -1;
    for (int32_t c = 0; c < nc && rc == 0; c++)
        for (int32_t b = 0; b < nb; b++) {
            const par_result *res = &r->results[(size_t)c * (size_t)nb + (size_t)b];
            if (!res->done || res->verdict == PAR_V_UNSUPPORTED) continue;
            judged[(size_t)case_op[c] * (size_t)nb + (size_t)b]++;
            if (failing(res->verdict)) fail[(size_t)case_op[c] * (size_t)nb + (size_t)b]++;
        }
    int32_t cap = 0;
    for (int32_t o = 0; o < n_ops && rc == 0; o++)
        for (int32_t b = 0; b < nb && rc == 0; b++) {
            size_t k = (size_t)o * (size_t)nb + (size_t)b;
            if (!fail[k]) continue;
            if (ng == cap) {
                int32_t ncap = cap ? cap * 2 : 16;
                par_group *m = realloc(g, (size_t)ncap * sizeof *m);
                if (!m) {
                    rc = -1;
                    break;
                }
                g = m;
                cap = ncap;
            }
            par_group *x = &g[ng++];
            memset(x, 0, sizeof *x);
            memcpy(x->op, ops[o], sizeof x->op);
            x->backend = b;
            x->first_case = -1;
            if (best_feature(r, case_op, o, x) != 0) rc = -1;
            /* failures the feature leaves outside: a second group over the other cases, when it names one */
            if (rc == 0 && x->feature[0] && x->fail_out > 0) {
                if (ng == cap) {
                    par_group *m = realloc(g, (size_t)(cap * 2) * sizeof *m);
                    if (!m) {
                        rc = -1;
                        break;
                    }
                    g = m;
                    cap *= 2;
                    x = &g[ng - 1];
                }
                par_group *y = &g[ng];
                memset(y, 0, sizeof *y);
                memcpy(y->op, ops[o], sizeof y->op);
                y->backend = b;
                y->first_case = -1;
                y->rank = 1;
                y->lead_fail = x->n_fail;
                snprintf(y->within, sizeof y->within, "%s", x->feature);
                if (best_feature(r, case_op, o, y) != 0) rc = -1;
                else if (y->n_fail > 0) ng++;
            }
        }
    free(case_op);
    free(ops);
    free(fail);
    free(judged);
    if (rc != 0) {
        free(g);
        return -1;
    }
    if (ng > 1) qsort(g, (size_t)ng, sizeof *g, by_fail);
    *out = g;
    *n = ng;
    return 0;
}

void par_group_text(const par_report *r, const par_group *g, char *buf, size_t len)
{
    const char *be = g->backend >= 0 && g->backend < r->n_backends ? r->backends[g->backend].label : "?";
    char who[256];
    if (g->rank) snprintf(who, sizeof who, "%s on %s, without %s", g->op, be, g->within);
    else snprintf(who, sizeof who, "%s on %s", g->op, be);
    if (g->n_fail == g->n_judged)
        snprintf(buf, len, "%s: all %lld judged case%s fail", who, (long long)g->n_judged,
                 g->n_judged == 1 ? "" : "s");
    else if (!g->feature[0])
        snprintf(buf, len, "%s: %lld of %lld judged cases fail; no parameter of the IDs separates them", who,
                 (long long)g->n_fail, (long long)g->n_judged);
    else
        snprintf(buf, len, "%s: %lld of %lld with %s fail%s, %lld of %lld other%s", who,
                 (long long)g->fail_in, (long long)g->n_in, g->feature,
                 g->hazard ? " (hazard inputs: the NaN / Inf rules, not the arithmetic)" : "",
                 (long long)g->fail_out, (long long)g->n_out, g->n_out == 1 ? "" : "s");
}

int32_t par_groups_print(FILE *f, const par_report *r, const par_group *g, int32_t n, int32_t max, const char *indent)
{
    int32_t shown = max < 0 || max > n ? n : max;
    for (int32_t i = 0; i < shown; i++) {
        char line[512];
        par_group_text(r, &g[i], line, sizeof line);
        /* IDs and labels may hold anything: control characters are escaped so that each group stays one line */
        fputs(indent, f);
        for (const unsigned char *p = (const unsigned char *)line; *p; p++) {
            if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\x%02x", *p);
            else fputc(*p, f);
        }
        fputc('\n', f);
    }
    return shown;
}
