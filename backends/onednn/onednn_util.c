/*
 * onednn_util.c - helpers shared by the onednn backend's lowering: dtype and status names, plain memory
 * descriptors, the plan's memories and steps, reorders, primitive attributes, and the mapping of parity's
 * activations onto oneDNN eltwise algorithms (used both as primitives and as post-ops).
 *
 * It must not lower any op itself (onednn_lower*.c do) nor allocate at run time.
 */
#include <math.h>
#include <stdlib.h>

#include "onednn_internal.h"

dnnl_data_type_t par_dn_dt(par_dtype t)
{
    switch (t) {
    case PAR_DTYPE_F32: return dnnl_f32;
    case PAR_DTYPE_QU8: return dnnl_u8;
    case PAR_DTYPE_QS8: return dnnl_s8;
    case PAR_DTYPE_I32: return dnnl_s32;
    default: return dnnl_data_type_undef;
    }
}

int par_dn_is_quant(par_dtype t)
{
    return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8;
}

const char *par_dn_status_name(dnnl_status_t s)
{
    switch (s) {
    case dnnl_success: return "dnnl_success";
    case dnnl_out_of_memory: return "dnnl_out_of_memory";
    case dnnl_invalid_arguments: return "dnnl_invalid_arguments";
    case dnnl_unimplemented: return "dnnl_unimplemented";
    case dnnl_iterator_ends: return "dnnl_iterator_ends";
    case dnnl_runtime_error: return "dnnl_runtime_error";
    case dnnl_not_required: return "dnnl_not_required";
    default: return "dnnl_status(unknown)";
    }
}

par_status par_dn_check(dnnl_status_t s, const char *what, par_msg *msg)
{
    if (s == dnnl_success) return PAR_OK;
    if (s == dnnl_unimplemented)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: dnnl_unimplemented (oneDNN 2.6 has no implementation for these "
                        "parameters)", what);
    return par_msgf(msg, PAR_ERROR, "%s: %s", what, par_dn_status_name(s));
}

par_status par_dn_md_tag(dnnl_memory_desc_t *md, int rank, const int64_t *dims, dnnl_data_type_t dt,
                         dnnl_format_tag_t tag, par_msg *msg)
{
    dnnl_dims_t d;
    int r = rank > 0 ? rank : 1;
    for (int i = 0; i < r; i++) d[i] = rank > 0 ? dims[i] : 1;
    return par_dn_check(dnnl_memory_desc_init_by_tag(md, r, d, dt, tag), "dnnl_memory_desc_init_by_tag", msg);
}

par_status par_dn_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims, dnnl_data_type_t dt, par_msg *msg)
{
    static const dnnl_format_tag_t tags[] = {dnnl_a, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    if (rank < 0 || rank > 6) return par_msgf(msg, PAR_UNSUPPORTED, "rank %d", rank);
    return par_dn_md_tag(md, rank, dims, dt, tags[rank], msg);
}

static int grow(void **arr, int *cap, int need, size_t esize)
{
    if (need <= *cap) return 0;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *n = realloc(*arr, (size_t)nc * esize);
    if (!n) return -1;
    *arr = n;
    *cap = nc;
    return 0;
}

par_status par_dn_own(dn_plan *p, dnnl_memory_t m, par_msg *msg)
{
    if (grow((void **)&p->owned, &p->cap_owned, p->n_owned + 1, sizeof *p->owned) != 0) {
        dnnl_memory_destroy(m);
        return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    p->owned[p->n_owned++] = m;
    return PAR_OK;
}

par_status par_dn_mem_new(dn_plan *p, const dnnl_memory_desc_t *md, dnnl_memory_t *out, par_msg *msg)
{
    dnnl_memory_t m = NULL;
    par_status st = par_dn_check(dnnl_memory_create(&m, md, p->c->eng, DNNL_MEMORY_ALLOCATE), "dnnl_memory_create",
                                 msg);
    if (st != PAR_OK) return st;
    if ((st = par_dn_own(p, m, msg)) != PAR_OK) return st;
    *out = m;
    return PAR_OK;
}

par_status par_dn_mem_const(dn_plan *p, const dnnl_memory_desc_t *md, const void *data, size_t n, dnnl_memory_t *out,
                            par_msg *msg)
{
    size_t need = dnnl_memory_desc_get_size(md);
    if (need < n) return par_msgf(msg, PAR_ERROR, "constant of %zu bytes in a descriptor of %zu", n, need);
    if (grow((void **)&p->bufs, &p->cap_bufs, p->n_bufs + 1, sizeof *p->bufs) != 0)
        return par_msgf(msg, PAR_ERROR, "out of memory");
    void *b = aligned_alloc(64, (need + 63) / 64 * 64);
    if (!b) return par_msgf(msg, PAR_ERROR, "out of memory (%zu bytes)", need);
    memset(b, 0, need);
    memcpy(b, data, n);
    p->bufs[p->n_bufs++] = b;
    dnnl_memory_t m = NULL;
    par_status st = par_dn_check(dnnl_memory_create(&m, md, p->c->eng, b), "dnnl_memory_create", msg);
    if (st != PAR_OK) return st;
    if ((st = par_dn_own(p, m, msg)) != PAR_OK) return st;
    *out = m;
    return PAR_OK;
}

par_status par_dn_value_mem(dn_plan *p, int32_t v, dnnl_memory_t *out, par_msg *msg)
{
    if (p->mem[v]) {
        *out = p->mem[v];
        return PAR_OK;
    }
    const par_value *val = &p->g->values[v];
    dnnl_data_type_t dt = par_dn_dt(val->dtype);
    if (dt == dnnl_data_type_undef)
        return par_msgf(msg, PAR_UNSUPPORTED, "value '%s' is %s", val->name, par_dtype_name(val->dtype));
    dnnl_memory_desc_t md;
    par_status st = par_dn_md_plain(&md, val->rank, val->dims, dt, msg);
    if (st != PAR_OK) return st;
    dnnl_memory_t m = NULL;
    if (val->kind == PAR_VALUE_CONST) {
        st = par_dn_mem_const(p, &md, val->data, (size_t)val->numel * par_dtype_size(val->dtype), &m, msg);
    } else if (val->kind == PAR_VALUE_INPUT || p->is_output[v]) {
        st = par_dn_check(dnnl_memory_create(&m, &md, p->c->eng, DNNL_MEMORY_NONE), "dnnl_memory_create", msg);
        if (st == PAR_OK) st = par_dn_own(p, m, msg);
    } else {
        st = par_dn_mem_new(p, &md, &m, msg);
    }
    if (st != PAR_OK) return st;
    p->mem[v] = m;
    *out = m;
    return PAR_OK;
}

static void note_impl(dn_plan *p, const char *kind, dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl) return;
    char item[96];
    snprintf(item, sizeof item, "%s:%s", kind, impl);
    /* each kind:impl once */
    const char *s = p->note;
    size_t il = strlen(item);
    while ((s = strstr(s, item)) != NULL) {
        if ((s == p->note || s[-1] == ' ') && (s[il] == 0 || s[il] == ',')) return;
        s += il;
    }
    size_t used = strlen(p->note);
    if (used + il + 3 >= sizeof p->note) return;
    snprintf(p->note + used, sizeof p->note - used, "%s%s", used ? ", " : "", item);
}

par_status par_dn_add_prim(dn_plan *p, int32_t node, const char *kind, dnnl_primitive_desc_t pd, int nargs,
                           const dnnl_exec_arg_t *args, par_msg *msg)
{
    dnnl_primitive_t prim = NULL;
    char what[64];
    snprintf(what, sizeof what, "%s: dnnl_primitive_create", kind);
    note_impl(p, kind, pd);
    par_status st = par_dn_check(dnnl_primitive_create(&prim, pd), what, msg);
    dnnl_primitive_desc_destroy(pd);
    if (st != PAR_OK) return st;
    if (grow((void **)&p->steps, &p->cap_steps, p->n_steps + 1, sizeof *p->steps) != 0) {
        dnnl_primitive_destroy(prim);
        return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    dn_step *s = &p->steps[p->n_steps];
    memset(s, 0, sizeof *s);
    s->kind = DN_STEP_PRIM;
    s->node = node;
    s->prim = prim;
    s->args = malloc((size_t)(nargs > 0 ? nargs : 1) * sizeof *s->args);
    if (!s->args) {
        dnnl_primitive_destroy(prim);
        return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    memcpy(s->args, args, (size_t)nargs * sizeof *args);
    s->nargs = nargs;
    p->n_steps++;
    return PAR_OK;
}

par_status par_dn_add_copy(dn_plan *p, int32_t node, dnnl_memory_t src, dnnl_memory_t dst, size_t bytes,
                           par_msg *msg)
{
    if (grow((void **)&p->steps, &p->cap_steps, p->n_steps + 1, sizeof *p->steps) != 0)
        return par_msgf(msg, PAR_ERROR, "out of memory");
    dn_step *s = &p->steps[p->n_steps++];
    memset(s, 0, sizeof *s);
    s->kind = DN_STEP_COPY;
    s->node = node;
    s->src = src;
    s->dst = dst;
    s->bytes = bytes;
    return PAR_OK;
}

par_status par_dn_reorder(dn_plan *p, int32_t node, dnnl_memory_t src, dnnl_memory_t dst,
                          const_dnnl_primitive_attr_t attr, int now, par_msg *msg)
{
    const dnnl_memory_desc_t *smd = NULL, *dmd = NULL;
    dnnl_memory_get_memory_desc(src, &smd);
    dnnl_memory_get_memory_desc(dst, &dmd);
    dnnl_primitive_desc_t pd = NULL;
    par_status st = par_dn_check(dnnl_reorder_primitive_desc_create(&pd, smd, p->c->eng, dmd, p->c->eng, attr),
                                 "reorder: dnnl_reorder_primitive_desc_create", msg);
    if (st != PAR_OK) return st;
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
    if (!now) return par_dn_add_prim(p, node, "reorder", pd, 2, args, msg);
    dnnl_primitive_t prim = NULL;
    st = par_dn_check(dnnl_primitive_create(&prim, pd), "reorder: dnnl_primitive_create", msg);
    dnnl_primitive_desc_destroy(pd);
    if (st != PAR_OK) return st;
    st = par_dn_check(dnnl_primitive_execute(prim, p->c->strm, 2, args), "reorder: dnnl_primitive_execute", msg);
    if (st == PAR_OK) st = par_dn_check(dnnl_stream_wait(p->c->strm), "reorder: dnnl_stream_wait", msg);
    dnnl_primitive_destroy(prim);
    return st;
}

par_status par_dn_input_as(dn_plan *p, int32_t node, int32_t v, const dnnl_memory_desc_t *want, dnnl_memory_t *out,
                           par_msg *msg)
{
    dnnl_memory_t plain = NULL;
    par_status st = par_dn_value_mem(p, v, &plain, msg);
    if (st != PAR_OK) return st;
    const dnnl_memory_desc_t *have = NULL;
    dnnl_memory_get_memory_desc(plain, &have);
    if (dnnl_memory_desc_equal(have, want)) {
        *out = plain;
        return PAR_OK;
    }
    dnnl_memory_t m = NULL;
    if ((st = par_dn_mem_new(p, want, &m, msg)) != PAR_OK) return st;
    if ((st = par_dn_reorder(p, node, plain, m, NULL, p->g->values[v].kind == PAR_VALUE_CONST, msg)) != PAR_OK)
        return st;
    *out = m;
    return PAR_OK;
}

par_status par_dn_output_as(dn_plan *p, int32_t v, const dnnl_memory_desc_t *have, dnnl_memory_t *out,
                            dnnl_memory_t *plain, par_msg *msg)
{
    dnnl_memory_t pm = NULL;
    par_status st = par_dn_value_mem(p, v, &pm, msg);
    if (st != PAR_OK) return st;
    const dnnl_memory_desc_t *pmd = NULL;
    dnnl_memory_get_memory_desc(pm, &pmd);
    *plain = NULL;
    if (dnnl_memory_desc_equal(pmd, have)) {
        *out = pm;
        return PAR_OK;
    }
    if ((st = par_dn_mem_new(p, have, out, msg)) != PAR_OK) return st;
    *plain = pm;
    return PAR_OK;
}

par_status par_dn_like_dst(dn_plan *p, int32_t yv, const dnnl_memory_desc_t *smd, dnnl_memory_t *dst,
                           dnnl_memory_t *back, par_msg *msg)
{
    const par_value *y = &p->g->values[yv];
    dnnl_memory_desc_t plain;
    *back = NULL;
    par_status st = par_dn_md_plain(&plain, y->rank, y->dims, par_dn_dt(y->dtype), msg);
    if (st != PAR_OK) return st;
    if (dnnl_memory_desc_equal(smd, &plain)) return par_dn_value_mem(p, yv, dst, msg);
    if (p->can_block[yv] && !p->mem[yv]) {
        if ((st = par_dn_mem_new(p, smd, dst, msg)) != PAR_OK) return st;
        p->mem[yv] = *dst;
        return PAR_OK;
    }
    if ((st = par_dn_value_mem(p, yv, back, msg)) != PAR_OK) return st;
    return par_dn_mem_new(p, smd, dst, msg);
}

int par_dn_same_q(const par_value *a, const par_value *b)
{
    return a->dtype == b->dtype && a->scale == b->scale && a->zero_point == b->zero_point;
}

par_status par_dn_scaled_reorder(dn_plan *p, int32_t ni, dnnl_memory_t src, dnnl_memory_t dst, float scale,
                                 int32_t zp_in, int32_t zp_out, par_msg *msg)
{
    dnnl_primitive_attr_t attr = NULL;
    par_status st = par_dn_check(dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create", msg);
    if (st != PAR_OK) return st;
    if (scale != 1.0f)
        st = par_dn_check(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale),
                          "reorder: dnnl_primitive_attr_set_output_scales", msg);
    if (st == PAR_OK && zp_in)
        st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &zp_in),
                          "reorder: dnnl_primitive_attr_set_zero_points(src)", msg);
    if (st == PAR_OK && zp_out)
        st = par_dn_check(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &zp_out),
                          "reorder: dnnl_primitive_attr_set_zero_points(dst)", msg);
    if (st == PAR_OK) st = par_dn_reorder(p, ni, src, dst, attr, 0, msg);
    dnnl_primitive_attr_destroy(attr);
    return st;
}

par_status par_dn_attr(dn_plan *p, dnnl_primitive_attr_t *attr, par_msg *msg)
{
    par_status st = par_dn_check(dnnl_primitive_attr_create(attr), "dnnl_primitive_attr_create", msg);
    if (st != PAR_OK) return st;
    if (p->c->bf16) {
        st = par_dn_check(dnnl_primitive_attr_set_fpmath_mode(*attr, dnnl_fpmath_mode_bf16),
                          "dnnl_primitive_attr_set_fpmath_mode(bf16)", msg);
        if (st != PAR_OK) {
            dnnl_primitive_attr_destroy(*attr);
            *attr = NULL;
        }
    }
    return st;
}

const dnnl_memory_desc_t *par_dn_pd_md(dnnl_primitive_desc_t pd, dnnl_query_t what)
{
    return dnnl_primitive_desc_query_md(pd, what, 0);
}

/* Round half away from zero, as the reference's quantized clamp bounds (par_requant_clamp_range). */
static double round_away(double x)
{
    return x < 0 ? -floor(-x + 0.5) : floor(x + 0.5);
}

void par_dn_qclip_range(const par_node *n, const par_value *y, float *lo, float *hi)
{
    double flo, fhi;
    par_clamp_bounds(n, &flo, &fhi);
    double qmin = y->dtype == PAR_DTYPE_QU8 ? 0 : -128, qmax = y->dtype == PAR_DTYPE_QU8 ? 255 : 127;
    double l = isinf(flo) ? qmin : y->zero_point + round_away(flo / y->scale);
    double h = isinf(fhi) ? qmax : y->zero_point + round_away(fhi / y->scale);
    *lo = (float)fmax(qmin, fmin(qmax, l));
    *hi = (float)fmax(qmin, fmin(qmax, h));
}

int par_dn_eltwise_alg(const par_node *n, dnnl_alg_kind_t *alg, float *alpha, float *beta)
{
    const dn_op *r = par_dn_op(n->op);
    *alpha = 0;
    *beta = 0;
    if (!r || r->family != DN_ELTWISE) return 0;
    *alg = (dnnl_alg_kind_t)r->alg;
    if (r->variant == DN_GELU_BY_ATTR && strcmp(par_attr_str(n, "approximate", "none"), "tanh") == 0)
        *alg = dnnl_eltwise_gelu_tanh;
    *alpha = r->alpha_attr ? (float)par_attr_float(n, r->alpha_attr, r->alpha) : r->alpha;
    *beta = r->beta_attr ? (float)par_attr_float(n, r->beta_attr, r->beta) : r->beta;
    return 1;
}

par_status par_dn_post_ops(dn_plan *p, int32_t ni, dnnl_primitive_attr_t attr, int32_t *sum_value, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    *sum_value = -1;
    if (p->post[ni] < 0) return PAR_OK;
    dnnl_post_ops_t po = NULL;
    par_status st = par_dn_check(dnnl_post_ops_create(&po), "dnnl_post_ops_create", msg);
    if (st != PAR_OK) return st;
    int32_t prev_out = g->nodes[ni].outputs[0];
    for (int32_t j = p->post[ni]; j >= 0 && st == PAR_OK; j = p->post[j]) {
        const par_node *n = &g->nodes[j];
        const dn_op *r = par_dn_op(n->op);
        if (r && r->family == DN_BINARY) { /* the fusion's add */
            *sum_value = n->inputs[0] == prev_out ? n->inputs[1] : n->inputs[0];
            st = par_dn_check(dnnl_post_ops_append_sum(po, 1.0f), "dnnl_post_ops_append_sum", msg);
        } else if (par_dn_is_quant(g->values[n->outputs[0]].dtype)) {
            float lo, hi;
            par_dn_qclip_range(n, &g->values[n->outputs[0]], &lo, &hi);
            /* the clip acts on the scaled accumulator before the destination zero point is added */
            float zp = (float)g->values[n->outputs[0]].zero_point;
            st = par_dn_check(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip_v2, lo - zp, hi - zp),
                              "dnnl_post_ops_append_eltwise", msg);
        } else {
            dnnl_alg_kind_t alg;
            float a, b;
            if (!par_dn_eltwise_alg(n, &alg, &a, &b)) st = par_msgf(msg, PAR_ERROR, "post-op '%s' has no eltwise", n->op);
            else st = par_dn_check(dnnl_post_ops_append_eltwise(po, 1.0f, alg, a, b), "dnnl_post_ops_append_eltwise",
                                   msg);
        }
        prev_out = n->outputs[0];
        if (p->post[j] == j) break;
    }
    if (st == PAR_OK) st = par_dn_check(dnnl_primitive_attr_set_post_ops(attr, po), "dnnl_primitive_attr_set_post_ops",
                                        msg);
    dnnl_post_ops_destroy(po);
    return st;
}
