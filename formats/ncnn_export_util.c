/*
 * ncnn_export_util.c - the building blocks of the ncnn exporter (ncnn_export_int.h): the .param text (one line per
 * layer: `Type name n_in n_out inputs... outputs... id=value ...`, arrays as `-233ID=n,v,...`), the .bin (weights:
 * those ncnn loads with a type tag, Convolution's and InnerProduct's, after four zero bytes, the tag of raw f32;
 * the rest raw), blob names, the Split a blob needs when more than one layer reads it, constants as MemoryData,
 * and parity's shapes as ncnn's.
 *
 * ncnn's ParamDict reads a value of at most 15 characters and takes it for a float when it has a '.' or an 'e':
 * integers are written bare and floats as %.8e (nine significant digits: every f32 exactly, in 15 characters).
 *
 * Must not: know any op.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/ncnn_export_int.h"

int par_nx_no(nx *e, const char *fmt, ...)
{
    char why[PAR_MSG_LEN - 200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (e->st != PAR_OK) return 0;
    e->st = PAR_UNSUPPORTED;
    if (e->node) par_msgf(e->msg, PAR_UNSUPPORTED, "node '%s' (%s): %s", e->node->name, e->node->op, why);
    else par_msgf(e->msg, PAR_UNSUPPORTED, "%s", why);
    return 0;
}

static int oom(nx *e)
{
    if (e->st == PAR_OK) e->st = par_msgf(e->msg, PAR_ERROR, "out of memory");
    return 0;
}

int par_nx_shape_of(nx *e, const par_value *v, nx_shape *s)
{
    if (v->rank == 0) return no(e, "'%s' is a scalar (rank 0): ncnn's blobs have 1 to 4 dimensions", v->name);
    if (v->rank > NX_MAXR + 1)
        return no(e, "'%s' has rank %d: ncnn's blobs have at most 4 dimensions after the batch", v->name,
                  (int)v->rank);
    if (v->rank >= 2 && v->dims[0] != 1)
        return no(e, "'%s' has batch %lld: an ncnn blob is one image (its leading dimension must be 1)", v->name,
                  (long long)v->dims[0]);
    int32_t skip = v->rank >= 2;
    s->r = v->rank - skip;
    for (int32_t i = 0; i < s->r; i++) s->d[i] = v->dims[i + skip];
    return 1;
}

int par_nx_axis(nx *e, const par_value *v, int64_t axis, int32_t *out)
{
    int64_t a = axis < 0 ? axis + v->rank : axis;
    if (a < 0 || a >= v->rank) return no(e, "axis %lld out of range for rank %d", (long long)axis, (int)v->rank);
    if (v->rank >= 2 && a == 0) return no(e, "the batch axis (ncnn's blobs have none)");
    *out = (int32_t)(a - (v->rank >= 2));
    return 1;
}

const char *par_nx_fresh(nx *e, char *buf, const char *base)
{
    snprintf(buf, 48, "%.30s_%d", base, (int)++e->serial);
    return buf;
}

int par_nx_put(nx_buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->len + n + 1) nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q) return 0;
        b->p = q;
        b->cap = nc;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 1;
}

int par_nx_printf(nx *e, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line) {
        if (e->st == PAR_OK) e->st = par_msgf(e->msg, PAR_ERROR, "ncnn export: a param line over %zu bytes",
                                               sizeof line);
        return 0;
    }
    return par_nx_put(&e->param, line, (size_t)n) ? 1 : oom(e);
}

int par_nx_layer(nx *e, const char *type, const char *name, int32_t n_in, const char *const *in, int32_t n_out,
                 const char *const *out)
{
    if (e->st != PAR_OK) return 0;
    if (!par_nx_printf(e, "%-16s %-24s %d %d", type, name, (int)n_in, (int)n_out)) return 0;
    for (int32_t i = 0; i < n_in; i++)
        if (!par_nx_printf(e, " %s", in[i])) return 0;
    for (int32_t i = 0; i < n_out; i++)
        if (!par_nx_printf(e, " %s", out[i])) return 0;
    e->n_layers++;
    e->n_blobs += n_out;
    return 1;
}

int par_nx_pi(nx *e, int id, int64_t v) { return e->st == PAR_OK && par_nx_printf(e, " %d=%lld", id, (long long)v); }

int par_nx_pf(nx *e, int id, double v)
{
    if (e->st != PAR_OK) return 0;
    if (!(v == v) || v > 3.4028234663852886e38 || v < -3.4028234663852886e38)
        return no(e, "a parameter of %g: ncnn's param text has no NaN or infinity", v);
    return par_nx_printf(e, " %d=%.8e", id, (double)(float)v);
}

int par_nx_pints(nx *e, int id, int32_t n, const int32_t *v)
{
    if (e->st != PAR_OK || !par_nx_printf(e, " %d=%d", -23300 - id, (int)n)) return 0;
    for (int32_t i = 0; i < n; i++)
        if (!par_nx_printf(e, ",%d", (int)v[i])) return 0;
    return 1;
}

/* w, h, d, c as Input, MemoryData and Reshape take them: 0=w 1=h 11=d 2=c */
int par_nx_shape_params(nx *e, const nx_shape *s)
{
    static const int ids[NX_MAXR][NX_MAXR] = {{0}, {1, 0}, {2, 1, 0}, {2, 11, 1, 0}};
    for (int32_t i = 0; i < s->r; i++)
        if (!par_nx_pi(e, ids[s->r - 1][i], s->d[i])) return 0;
    return 1;
}

int par_nx_end(nx *e) { return e->st == PAR_OK && par_nx_printf(e, "\n"); }

int par_nx_floats(nx *e, const float *f, int64_t n, int tagged)
{
    static const uint8_t tag[4] = {0, 0, 0, 0};
    if (e->st != PAR_OK) return 0;
    if (tagged && !par_nx_put(&e->bin, tag, 4)) return oom(e);
    return par_nx_put(&e->bin, f, sizeof(float) * (size_t)n) ? 1 : oom(e);
}

int par_nx_weights(nx *e, const par_value *v, int tagged)
{
    if (v->kind != PAR_VALUE_CONST || !v->data)
        return no(e, "'%s' is computed at run time: ncnn takes this operand as weights in the .bin", v->name);
    if (v->dtype != PAR_DTYPE_F32) return no(e, "'%s' is %s: the exporter writes f32 weights", v->name,
                                             par_dtype_name(v->dtype));
    return par_nx_floats(e, v->data, v->numel, tagged);
}

static int same_shape(const nx_shape *a, const nx_shape *b)
{
    if (a->r != b->r) return 0;
    for (int32_t i = 0; i < a->r; i++)
        if (a->d[i] != b->d[i]) return 0;
    return 1;
}

const char *par_nx_reshape(nx *e, const char *from, const nx_shape *s, const char *to)
{
    static char buf[4][48];
    static int k;
    char nm[48];
    if (!to) to = par_nx_fresh(e, buf[k = (k + 1) % 4], "reshape");
    const char *in[1] = {from}, *out[1] = {to};
    if (!par_nx_layer(e, "Reshape", par_nx_fresh(e, nm, "reshape"), 1, in, 1, out) || !par_nx_shape_params(e, s) ||
        !par_nx_end(e))
        return NULL;
    return to;
}

/* A constant as a MemoryData blob of shape s (its element count). */
static const char *memory_data(nx *e, int32_t vi, const nx_shape *s, char *name)
{
    const par_value *v = &e->g->values[vi];
    int64_t n = 1;
    for (int32_t i = 0; i < s->r; i++) n *= s->d[i];
    if (n != v->numel) {
        no(e, "constant '%s' does not fit the shape it is read with", v->name);
        return NULL;
    }
    char lname[48];
    const char *out[1] = {par_nx_fresh(e, name, "const")};
    if (!par_nx_layer(e, "MemoryData", par_nx_fresh(e, lname, "memorydata"), 0, NULL, 1, out) ||
        !par_nx_shape_params(e, s) || !par_nx_end(e) || !par_nx_weights(e, v, 0))
        return NULL;
    return name;
}

/* The blob a layer reads value vi through: its own, or the next output of its Split when several layers (or the
 * graph's outputs) read it, since ncnn hands a blob to one consumer, which may work in place. */
const char *par_nx_in(nx *e, int32_t vi)
{
    static char cbuf[8][48];
    static int ck;
    if (e->st != PAR_OK) return NULL;
    const par_value *v = &e->g->values[vi];
    if (v->kind == PAR_VALUE_CONST) {
        nx_shape s;
        if (!par_nx_shape_of(e, v, &s)) return NULL;
        return memory_data(e, vi, &s, cbuf[ck = (ck + 1) % 8]);
    }
    if (!e->blob[vi][0]) {
        par_nx_no(e, "'%s' is read before it is written", v->name);
        return NULL;
    }
    if (e->nsplit[vi] <= 1) return e->blob[vi];
    if (e->split[vi] < 0) {
        char lname[48];
        const char *in[1] = {e->blob[vi]};
        const char **outs = calloc((size_t)e->nsplit[vi], sizeof *outs);
        char (*names)[48] = calloc((size_t)e->nsplit[vi], sizeof *names);
        int ok = outs && names;
        for (int32_t i = 0; ok && i < e->nsplit[vi]; i++) {
            snprintf(names[i], sizeof names[i], "%.36s_s%d", e->blob[vi], (int)i);
            outs[i] = names[i];
        }
        ok = ok && par_nx_layer(e, "Split", par_nx_fresh(e, lname, "split"), 1, in, e->nsplit[vi], outs) &&
             par_nx_end(e);
        free(outs);
        free(names);
        if (!ok) return oom(e), NULL;
        e->split[vi] = 0;
    }
    if (e->split[vi] >= e->nsplit[vi]) {
        par_nx_no(e, "'%s' is read more often than counted", v->name);
        return NULL;
    }
    char *b = cbuf[ck = (ck + 1) % 8];
    snprintf(b, 48, "%.36s_s%d", e->blob[vi], (int)e->split[vi]++);
    return b;
}

/* value vi read as shape want (a broadcast operand's rank raised): a constant as MemoryData of that shape, a
 * blob through a Reshape when its own shape differs. */
const char *par_nx_in_shaped(nx *e, int32_t vi, const nx_shape *want)
{
    static char cbuf[4][48];
    static int ck;
    const par_value *v = &e->g->values[vi];
    if (v->kind == PAR_VALUE_CONST) return memory_data(e, vi, want, cbuf[ck = (ck + 1) % 4]);
    nx_shape s;
    const char *b = par_nx_in(e, vi);
    if (!b || !par_nx_shape_of(e, v, &s)) return NULL;
    if (same_shape(&s, want)) return b;
    char keep[48];
    snprintf(keep, sizeof keep, "%s", b);
    return par_nx_reshape(e, keep, want, NULL);
}

const char *par_nx_out(nx *e, int32_t vi)
{
    snprintf(e->blob[vi], sizeof e->blob[vi], "v%d", (int)vi);
    return e->blob[vi];
}
