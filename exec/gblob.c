/*
 * gblob.c - a graph view (par_graph_desc) flattened into one position-independent block, so that a backend child
 * forked from a fork server (which holds no case data) can receive the job's graph through a sealed memfd: every
 * pointer is stored as an offset from the block's start; par_gblob_fix turns them back into pointers in the
 * child's private copy. The block also carries the byte offsets of the inputs (in the input memfd) and of the
 * outputs (in the output memfd). Private to exec/.
 *
 * Layout: [gblob header][par_graph_desc][values][nodes][attrs][index arrays][names, strings, constants], each
 * part 16-byte aligned. This file must not interpret the graph (no validation beyond the block's own bounds).
 */
#include "gblob.h"

#include <stdlib.h>
#include <string.h>

#define GB_ALIGN 16

typedef struct gb {
    uint8_t *p;     /* NULL while sizing */
    size_t o;
} gb;

static size_t up(size_t x)
{
    return (x + GB_ALIGN - 1) / GB_ALIGN * GB_ALIGN;
}

/* Reserve n bytes (copying src when given); returns the offset, 0 for NULL or empty. */
static size_t put(gb *b, const void *src, size_t n)
{
    if (!src || n == 0) return 0;
    size_t at = up(b->o);
    if (b->p) memcpy(b->p + at, src, n);
    b->o = at + n;
    return at;
}

static size_t put_str(gb *b, const char *s)
{
    return s ? put(b, s, strlen(s) + 1) : 0;
}

/* Offsets travel in pointer fields. */
#define OFF(x) ((const void *)(uintptr_t)(x))

static size_t emit(const par_graph_desc *g, const size_t *in_off, const size_t *out_off, uint8_t *dst)
{
    gb b = {dst, 0};
    par_gblob_hdr h = {.magic = PAR_GBLOB_MAGIC, .n_in = g->n_inputs, .n_out = g->n_outputs};
    size_t hat = put(&b, &h, sizeof h);
    size_t d_at = up(b.o);
    par_graph_desc d = *g;
    b.o = d_at + sizeof d;
    size_t v_at = up(b.o);
    b.o = v_at + sizeof(par_value) * (size_t)g->n_values;
    size_t n_at = up(b.o);
    b.o = n_at + sizeof(par_node) * (size_t)g->n_nodes;
    /* values */
    for (int32_t i = 0; i < g->n_values; i++) {
        par_value v = g->values[i];
        v.name = OFF(put_str(&b, g->values[i].name));
        size_t bytes = v.data ? (size_t)v.numel * par_dtype_size(v.dtype) : 0;
        v.data = OFF(put(&b, g->values[i].data, bytes));
        size_t nch = (v.channel_scales && v.quant_axis >= 0 && v.quant_axis < v.rank) ? (size_t)v.dims[v.quant_axis]
                                                                                        : 0;
        v.channel_scales = OFF(put(&b, g->values[i].channel_scales, nch * sizeof(float)));
        if (dst) memcpy(dst + v_at + sizeof v * (size_t)i, &v, sizeof v);
    }
    /* nodes */
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_node *src = &g->nodes[i];
        par_node n = *src;
        n.name = OFF(put_str(&b, src->name));
        n.op = OFF(put_str(&b, src->op));
        n.inputs = OFF(put(&b, src->inputs, sizeof(int32_t) * (size_t)(src->n_inputs > 0 ? src->n_inputs : 0)));
        n.outputs = OFF(put(&b, src->outputs, sizeof(int32_t) * (size_t)(src->n_outputs > 0 ? src->n_outputs : 0)));
        size_t a_at = 0;
        if (src->n_attrs > 0 && src->attrs) {
            a_at = up(b.o);
            b.o = a_at + sizeof(par_attr) * (size_t)src->n_attrs;
            for (int32_t k = 0; k < src->n_attrs; k++) {
                par_attr a = src->attrs[k];
                a.name = OFF(put_str(&b, a.name));
                a.s = OFF(put_str(&b, src->attrs[k].s));
                size_t cnt = a.count > 0 ? (size_t)a.count : 0;
                a.ints = OFF(put(&b, src->attrs[k].ints, cnt * sizeof(int64_t)));
                a.floats = OFF(put(&b, src->attrs[k].floats, cnt * sizeof(double)));
                if (dst) memcpy(dst + a_at + sizeof a * (size_t)k, &a, sizeof a);
            }
        }
        n.attrs = OFF(a_at);
        if (dst) memcpy(dst + n_at + sizeof n * (size_t)i, &n, sizeof n);
    }
    d.name = OFF(put_str(&b, g->name));
    d.values = OFF(g->n_values > 0 ? v_at : 0);
    d.nodes = OFF(g->n_nodes > 0 ? n_at : 0);
    d.inputs = OFF(put(&b, g->inputs, sizeof(int32_t) * (size_t)(g->n_inputs > 0 ? g->n_inputs : 0)));
    d.outputs = OFF(put(&b, g->outputs, sizeof(int32_t) * (size_t)(g->n_outputs > 0 ? g->n_outputs : 0)));
    size_t io = put(&b, in_off, sizeof(size_t) * (size_t)(g->n_inputs > 0 ? g->n_inputs : 0));
    size_t oo = put(&b, out_off, sizeof(size_t) * (size_t)g->n_outputs);
    if (dst) {
        memcpy(dst + d_at, &d, sizeof d);
        par_gblob_hdr *ph = (par_gblob_hdr *)(dst + hat);
        ph->total = up(b.o);
        ph->desc = d_at;
        ph->in_off = io;
        ph->out_off = oo;
    }
    return up(b.o);
}

size_t par_gblob_size(const par_graph_desc *g, const size_t *in_off, const size_t *out_off)
{
    return emit(g, in_off, out_off, NULL);
}

void par_gblob_write(const par_graph_desc *g, const size_t *in_off, const size_t *out_off, uint8_t *dst)
{
    emit(g, in_off, out_off, dst);
}

/* Offset field -> pointer, checked against the block; NULL stays NULL (offset 0 is the header, never data). */
static int fix(uint8_t *base, size_t total, const void **field)
{
    uintptr_t o = (uintptr_t)*field;
    if (o == 0) {
        *field = NULL;
        return 0;
    }
    if (o >= total) return -1;
    *field = base + o;
    return 0;
}

#define FIX(f) (fix(base, total, (const void **)(void *)&(f)) != 0)

par_graph_desc *par_gblob_fix(uint8_t *base, size_t len)
{
    par_gblob_hdr *h = (par_gblob_hdr *)base;
    if (len < sizeof *h || h->magic != PAR_GBLOB_MAGIC || h->total > len) return NULL;
    size_t total = h->total;
    if (h->desc + sizeof(par_graph_desc) > total) return NULL;
    par_graph_desc *d = (par_graph_desc *)(base + h->desc);
    if (FIX(d->name) || FIX(d->values) || FIX(d->nodes) || FIX(d->inputs) || FIX(d->outputs)) return NULL;
    par_value *v = (par_value *)(uintptr_t)d->values;
    for (int32_t i = 0; i < d->n_values; i++)
        if (FIX(v[i].name) || FIX(v[i].data) || FIX(v[i].channel_scales)) return NULL;
    par_node *n = (par_node *)(uintptr_t)d->nodes;
    for (int32_t i = 0; i < d->n_nodes; i++) {
        if (FIX(n[i].name) || FIX(n[i].op) || FIX(n[i].inputs) || FIX(n[i].outputs) || FIX(n[i].attrs)) return NULL;
        par_attr *a = (par_attr *)(uintptr_t)n[i].attrs;
        for (int32_t k = 0; a && k < n[i].n_attrs; k++)
            if (FIX(a[k].name) || FIX(a[k].s) || FIX(a[k].ints) || FIX(a[k].floats)) return NULL;
    }
    return d;
}
