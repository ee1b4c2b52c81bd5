/*
 * ops.c - the op table, expanded from ops.def, and the parser of its attribute schema strings.
 * It knows no op's semantics; it only turns the table's text into par_op_info records once.
 */
#include "ops.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

static par_op_info table[PAR_OP_COUNT] = {
#define PAR_OP(id_, name_, in_min_, in_max_, n_out_, flags_, qform_, schema_, infer_, ref_, sweep_)                    \
    [PAR_OP_##id_] = {.id = PAR_OP_##id_,                                                                          \
                      .name = name_,                                                                               \
                      .in_min = in_min_,                                                                           \
                      .in_max = in_max_,                                                                           \
                      .n_out = n_out_,                                                                             \
                      .flags = (flags_) | (PAR_QFORM_##qform_ != PAR_QFORM_NONE ? PAR_OPF_QUANT_OK : 0u),         \
                      .qform = PAR_QFORM_##qform_,                                                                 \
                      .schema = schema_,                                                                           \
                      .infer = infer_},
#include "ops.def"
#undef PAR_OP
};

static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* Parse a list of numbers "1,2,3" into ints or doubles; returns the count or -1. */
static int parse_list(const char *s, size_t len, int as_int, int64_t *ints, double *floats, int max)
{
    int n = 0;
    size_t i = 0;
    while (i < len) {
        char tmp[64];
        size_t j = i;
        while (j < len && s[j] != ',') j++;
        if (j - i == 0 || j - i >= sizeof tmp || n >= max) return -1;
        memcpy(tmp, s + i, j - i);
        tmp[j - i] = 0;
        char *end = NULL;
        errno = 0;
        if (as_int) ints[n] = strtoll(tmp, &end, 10);
        else floats[n] = strtod(tmp, &end);
        if (*end || errno) return -1;
        n++;
        i = j + 1;
    }
    return n;
}

/* One schema entry "name:type[=default]". Aborts on a malformed table: that is a build defect, not input. */
static void parse_spec(const par_op_info *op, const char *s, size_t len, par_attr_spec *sp)
{
    const char *colon = memchr(s, ':', len);
    const char *eq = memchr(s, '=', len);
    if (!colon || (eq && eq < colon)) goto bad;
    size_t nlen = (size_t)(colon - s);
    char *name = malloc(nlen + 1);
    if (!name) abort();
    memcpy(name, s, nlen);
    name[nlen] = 0;
    sp->name = name;
    const char *t = colon + 1;
    size_t tlen = (size_t)((eq ? eq : s + len) - t);
    char type[64];
    if (tlen >= sizeof type) goto bad;
    memcpy(type, t, tlen);
    type[tlen] = 0;
    if (strcmp(type, "int") == 0) sp->type = PAR_ATTR_INT;
    else if (strcmp(type, "float") == 0) sp->type = PAR_ATTR_FLOAT;
    else if (strncmp(type, "ints", 4) == 0) {
        sp->type = PAR_ATTR_INTS;
        sp->fixed_count = atoi(type + 4);
    } else if (strncmp(type, "floats", 6) == 0) {
        sp->type = PAR_ATTR_FLOATS;
        sp->fixed_count = atoi(type + 6);
    } else if (strncmp(type, "str", 3) == 0) {
        sp->type = PAR_ATTR_STRING;
        if (type[3] == '(') {
            size_t cl = strlen(type + 4);
            if (cl < 1 || type[4 + cl - 1] != ')' || cl >= sizeof sp->choices) goto bad;
            memcpy(sp->choices, type + 4, cl - 1);
            sp->choices[cl - 1] = 0;
        }
    } else goto bad;

    sp->def.name = sp->name;
    sp->def.type = sp->type;
    if (!eq) return; /* required */
    sp->has_default = 1;
    const char *d = eq + 1;
    size_t dlen = (size_t)(s + len - d);
    char buf[128];
    if (dlen >= sizeof buf) goto bad;
    memcpy(buf, d, dlen);
    buf[dlen] = 0;
    switch (sp->type) {
    case PAR_ATTR_INT: {
        char *end;
        errno = 0;
        sp->def.i = strtoll(buf, &end, 10);
        if (*end || errno) goto bad;
        break;
    }
    case PAR_ATTR_FLOAT: {
        char *end;
        sp->def.f = strtod(buf, &end);
        if (*end) goto bad;
        break;
    }
    case PAR_ATTR_INTS: {
        int n = parse_list(buf, dlen, 1, sp->def_ints, NULL, 8);
        if (n < 0) goto bad;
        sp->def.count = n;
        sp->def.ints = sp->def_ints;
        break;
    }
    case PAR_ATTR_FLOATS: {
        int n = parse_list(buf, dlen, 0, NULL, sp->def_floats, 8);
        if (n < 0) goto bad;
        sp->def.count = n;
        sp->def.floats = sp->def_floats;
        break;
    }
    case PAR_ATTR_STRING: {
        char *v = malloc(dlen + 1);
        if (!v) abort();
        memcpy(v, buf, dlen + 1);
        sp->def.s = v;
        break;
    }
    }
    return;
bad:
    fprintf(stderr, "parity: internal error: op '%s': malformed attribute schema near '%.*s'\n", op->name, (int)len, s);
    abort();
}

static void build_table(void)
{
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        par_op_info *op = &table[i];
        const char *s = op->schema;
        while (*s) {
            while (*s == ' ') s++;
            if (!*s) break;
            const char *e = s;
            while (*e && *e != ' ') e++;
            if (op->n_attrs >= PAR_MAX_ATTRS) {
                fprintf(stderr, "parity: internal error: op '%s' has more than %d attributes\n", op->name,
                        PAR_MAX_ATTRS);
                abort();
            }
            parse_spec(op, s, (size_t)(e - s), &op->attrs[op->n_attrs++]);
            s = e;
        }
    }
}

const par_op_info *par_op_get(par_op_id id)
{
    if ((int)id < 0 || id >= PAR_OP_COUNT) return NULL;
    pthread_once(&table_once, build_table);
    return &table[id];
}

const par_op_info *par_op_find(const char *name)
{
    if (!name) return NULL;
    pthread_once(&table_once, build_table);
    for (int i = 0; i < PAR_OP_COUNT; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

const par_op_info *par_op_of(const par_node *n)
{
    if (!n || !n->op) return NULL;
    pthread_once(&table_once, build_table);
    /* A graph's nodes point at the table's own name strings (core/graph.c): compare the pointers first. */
    for (int i = 0; i < PAR_OP_COUNT; i++)
        if (n->op == table[i].name) return &table[i];
    return par_op_find(n->op);
}

static void fmt_double(double v, char *buf, size_t len)
{
    if (isinf(v)) snprintf(buf, len, v > 0 ? "inf" : "-inf");
    else snprintf(buf, len, "%.9g", v);
}

void par_attr_format(const par_attr *a, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = 0;
    size_t used = 0;
#define APPEND(...)                                                                                                 \
    do {                                                                                                            \
        if (used < len) {                                                                                           \
            int k_ = snprintf(buf + used, len - used, __VA_ARGS__);                                                 \
            if (k_ > 0) used += (size_t)k_;                                                                         \
        }                                                                                                           \
    } while (0)
    char tmp[40];
    switch (a->type) {
    case PAR_ATTR_INT: APPEND("%lld", (long long)a->i); break;
    case PAR_ATTR_FLOAT: fmt_double(a->f, tmp, sizeof tmp); APPEND("%s", tmp); break;
    case PAR_ATTR_STRING: APPEND("%s", a->s ? a->s : ""); break;
    case PAR_ATTR_INTS:
        APPEND("[");
        for (int i = 0; i < a->count; i++) APPEND(i ? ",%lld" : "%lld", (long long)a->ints[i]);
        APPEND("]");
        break;
    case PAR_ATTR_FLOATS:
        APPEND("[");
        for (int i = 0; i < a->count; i++) {
            fmt_double(a->floats[i], tmp, sizeof tmp);
            APPEND(i ? ",%s" : "%s", tmp);
        }
        APPEND("]");
        break;
    }
#undef APPEND
}

int par_name_distance(const char *a, const char *b)
{
    enum { L = 64 };
    size_t na = strlen(a), nb = strlen(b);
    if (na >= L || nb >= L) return L;
    int d[L][L];
    for (size_t i = 0; i <= na; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

const char *par_name_nearest(const char *name, const char *const *names, int32_t n)
{
    int limit = (int)strlen(name) / 3;
    if (limit < 1) limit = 1;
    if (limit > 3) limit = 3;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int32_t i = 0; i < n; i++) {
        int dd = par_name_distance(name, names[i]);
        if (dd < best_d) best_d = dd, best = names[i];
    }
    return best;
}

const char *par_op_nearest(const char *name)
{
    const char *names[PAR_OP_COUNT];
    for (int i = 0; i < PAR_OP_COUNT; i++) names[i] = par_op_get((par_op_id)i)->name;
    return par_name_nearest(name, names, PAR_OP_COUNT);
}
