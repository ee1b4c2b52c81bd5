/*
 * gen.c - the graph generator's driver (fuzz/gen.h): options and weight lists, the case ID and its parser, the node
 * loop (ops drawn by weight, built by their family's constraint function, gen_ops.c), graph outputs, the quantized
 * share (oracle/quantize.h) and the hazard share (core/case.h, par_hazard). Every choice comes from one choice source
 * (gen_src.c), so a seed, or a fuzzer's bytes, gives the same case on every machine.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/result.h" /* PAR_ID_LEN */
#include "gen/gen_int.h"
#include "oracle/quantize.h"

void par_fuzz_opts_default(par_fuzz_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_nodes = 8;
    o->max_elems = 4096;
    for (int i = 0; i < PAR_OP_COUNT; i++) o->weight[i] = 1.0;
    o->hazard_share = 0.25;
    o->quant_share = 0.2;
}

/* ---- weights ---- */

static int parse_num(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (*end || !(v >= 0.0) || v > 1e9) return 0;
    *out = v;
    return 1;
}

/* One name of a weight entry: an op's table index, or -1. */
static int op_named(const char *p, size_t n)
{
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const char *nm = par_op_get((par_op_id)i)->name;
        if (strlen(nm) == n && memcmp(nm, p, n) == 0) return i;
    }
    return -1;
}

/* "@HEX": the ops whose bits are set, bit i of the number being op i of the table (a case ID's compact form, written
 * when the names do not fit). 1 on success. */
static int op_mask(const char *p, size_t n, unsigned char *sel)
{
    if (n < 2 || p[0] != '@') return 0;
    memset(sel, 0, PAR_OP_COUNT);
    for (size_t k = 1; k < n; k++) {
        const char c = p[n - k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return 0;
        for (int b = 0; b < 4; b++) {
            if (!(d >> b & 1)) continue;
            size_t i = (k - 1) * 4 + (size_t)b;
            if (i >= PAR_OP_COUNT) return 0;
            sel[i] = 1;
        }
    }
    return 1;
}

par_status par_fuzz_weights_parse(par_fuzz_opts *o, const char *spec, par_msg *msg)
{
    if (!o || !spec) return par_msgf(msg, PAR_ERROR, "weights: no list");
    double w[PAR_OP_COUNT];
    memcpy(w, o->weight, sizeof w);
    const char *p = spec;
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        if (len == 0) return par_msgf(msg, PAR_ERROR, "weights '%.200s': empty entry", spec);
        if (!eq) return par_msgf(msg, PAR_ERROR, "weights: '%.*s': expected op=weight", (int)(len > 80 ? 80 : len), p);
        size_t nlen = (size_t)(eq - p);
        double v;
        if (!parse_num(eq + 1, len - nlen - 1, &v))
            return par_msgf(msg, PAR_ERROR, "weights: '%.*s': the weight is not a number >= 0",
                            (int)(len > 80 ? 80 : len), p);
        unsigned char sel[PAR_OP_COUNT];
        if (nlen == 1 && p[0] == '*') {
            memset(sel, 1, sizeof sel);
        } else if (nlen > 0 && p[0] == '@') {
            if (!op_mask(p, nlen, sel))
                return par_msgf(msg, PAR_ERROR, "weights: '%.*s': not a mask of the op table (@ and hex digits)",
                                (int)(nlen > 80 ? 80 : nlen), p);
        } else {
            /* one name, or several joined by '|' */
            memset(sel, 0, sizeof sel);
            for (const char *q = p;;) {
                size_t n = strcspn(q, "|=");
                int i = op_named(q, n);
                if (i < 0)
                    return par_msgf(msg, PAR_ERROR, "weights: '%.*s': no op named '%.*s'", (int)(len > 80 ? 80 : len),
                                    p, (int)(n > 60 ? 60 : n), q);
                sel[i] = 1;
                q += n;
                if (*q != '|') break;
                q++;
            }
        }
        for (int i = 0; i < PAR_OP_COUNT; i++)
            if (sel[i]) w[i] = v;
        p += len;
        if (*p == ',') p++;
    }
    memcpy(o->weight, w, sizeof w);
    return PAR_OK;
}

/* ---- the ID ---- */

/* The shortest %g form of v that reads back as v. */
static void fmt_num(char *buf, size_t len, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static int append(char *id, size_t cap, size_t *pos, const char *fmt, const char *a, const char *b)
{
    int n = snprintf(id + *pos, cap - *pos, fmt, a, b);
    if (n < 0 || (size_t)n >= cap - *pos) return 0;
    *pos += (size_t)n;
    return 1;
}

/* The ops of weight v other than the base as one ID option: "w[a|b|c]=v" by name, or "w[@HEX]=v" (bit i = op i of
 * the table) when `mask`. 0 when it does not fit. */
static int weight_group(char *opts, size_t cap, size_t *pos, int *first, const par_fuzz_opts *o, double v, int mask)
{
    char num[64];
    if (!append(opts, cap, pos, "%s%s", *first ? "" : ",", "w[")) return 0;
    *first = 0;
    if (mask) {
        char hex[PAR_OP_COUNT / 4 + 2];
        int nd = (PAR_OP_COUNT + 3) / 4, top = 0;
        for (int k = 0; k < nd; k++) {
            int d = 0;
            for (int b = 0; b < 4; b++) {
                int i = k * 4 + b;
                if (i < PAR_OP_COUNT && o->weight[i] == v) d |= 1 << b;
            }
            hex[nd - 1 - k] = "0123456789abcdef"[d];
            if (d) top = k;
        }
        hex[nd] = 0;
        if (!append(opts, cap, pos, "@%s%s", hex + (nd - 1 - top), "")) return 0;
    } else {
        int n = 0;
        for (int i = 0; i < PAR_OP_COUNT; i++)
            if (o->weight[i] == v && !append(opts, cap, pos, "%s%s", n++ ? "|" : "", par_op_get((par_op_id)i)->name))
                return 0;
    }
    fmt_num(num, sizeof num, v);
    return append(opts, cap, pos, "]=%s%s", num, "");
}

/* "fuzz(<options that differ from the defaults>)#seed=N" or "fuzz#seed=N"; 0 when it does not fit cap. Weights:
 * "w[*]=x" when most ops share a weight x other than 1, then one option per other weight y naming the ops that have
 * it, "w[op|op|...]=y" in table order of their first op; when the names do not fit, the ops as a mask of the op
 * table, "w[@HEX]=y" (the same parity version reads it back: the table's order is the binary's). */
static int make_id(char *id, size_t cap, uint64_t seed, const par_fuzz_opts *o)
{
    par_fuzz_opts d;
    par_fuzz_opts_default(&d);
    for (int mask = 0; mask < 2; mask++) {
        char opts[2048] = "", num[64];
        size_t pos = 0;
        int first = 1;
#define OPT(name, val)                                                                                                \
    do {                                                                                                              \
        if (!append(opts, sizeof opts, &pos, "%s%s", first ? "" : ",", name)) return 0;                              \
        if (!append(opts, sizeof opts, &pos, "=%s%s", val, "")) return 0;                                            \
        first = 0;                                                                                                    \
    } while (0)
        if (o->max_nodes != d.max_nodes) {
            snprintf(num, sizeof num, "%d", (int)o->max_nodes);
            OPT("max_nodes", num);
        }
        if (o->max_elems != d.max_elems) {
            snprintf(num, sizeof num, "%lld", (long long)o->max_elems);
            OPT("max_elems", num);
        }
        if (o->hazard_share != d.hazard_share) {
            fmt_num(num, sizeof num, o->hazard_share);
            OPT("hazard_share", num);
        }
        if (o->quant_share != d.quant_share) {
            fmt_num(num, sizeof num, o->quant_share);
            OPT("quant_share", num);
        }
        /* the most common weight (the first of equals in table order) */
        double base = 1.0;
        int best = 0;
        for (int i = 0; i < PAR_OP_COUNT; i++) {
            int n = 0;
            for (int j = 0; j < PAR_OP_COUNT; j++) n += o->weight[j] == o->weight[i];
            if (n > best) best = n, base = o->weight[i];
        }
        if (best * 2 <= PAR_OP_COUNT) base = 1.0;
        if (base != 1.0) {
            fmt_num(num, sizeof num, base);
            OPT("w[*]", num);
        }
#undef OPT
        for (int i = 0; i < PAR_OP_COUNT; i++) {
            int seen = o->weight[i] == base;
            for (int j = 0; j < i && !seen; j++) seen = o->weight[j] == o->weight[i];
            if (!seen && !weight_group(opts, sizeof opts, &pos, &first, o, o->weight[i], mask)) return 0;
        }
        int n = first ? snprintf(id, cap, "fuzz#seed=%llu", (unsigned long long)seed)
                      : snprintf(id, cap, "fuzz(%s)#seed=%llu", opts, (unsigned long long)seed);
        if (n > 0 && (size_t)n < cap) return 1;
    }
    return 0;
}

int par_fuzz_is_id(const char *id)
{
    return id && (strncmp(id, "fuzz(", 5) == 0 || strncmp(id, "fuzz#", 5) == 0);
}

/* Parse an ID back into a seed and options. */
static par_status parse_id(const char *id, uint64_t *seed, par_fuzz_opts *o, par_msg *msg)
{
    par_fuzz_opts_default(o);
    if (!par_fuzz_is_id(id)) return par_msgf(msg, PAR_ERROR, "'%.200s' is not a fuzz case ID (fuzz(...)#seed=N)", id ? id : "");
    const char *p = id + 4;
    if (*p == '(') {
        const char *close = strchr(p, ')');
        if (!close) return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': no closing ')'", id);
        p++;
        while (p < close) {
            size_t len = strcspn(p, ",)");
            if (p + len > close) len = (size_t)(close - p);
            const char *eq = memchr(p, '=', len);
            if (!eq) return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': '%.*s' is not name=value", id, (int)len, p);
            size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
            char key[PAR_ID_LEN], val[64];
            if (klen >= sizeof key || vlen >= sizeof val || vlen == 0)
                return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': bad option '%.*s'", id, (int)len, p);
            memcpy(key, p, klen), key[klen] = 0;
            memcpy(val, eq + 1, vlen), val[vlen] = 0;
            char *end;
            double v = strtod(val, &end);
            if (*end || !(v >= 0.0))
                return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': option '%s': '%s' is not a number >= 0", id, key, val);
            if (strcmp(key, "max_nodes") == 0) {
                if (v < 1 || v > 64 || v != (double)(int)v)
                    return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': max_nodes must be an integer in 1..64", id);
                o->max_nodes = (int32_t)v;
            } else if (strcmp(key, "max_elems") == 0) {
                if (v < 1 || v > (double)PAR_CASE_MAX_ELEMS || v != (double)(int64_t)v)
                    return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': max_elems must be an integer >= 1", id);
                o->max_elems = (int64_t)v;
            } else if (strcmp(key, "hazard_share") == 0 || strcmp(key, "quant_share") == 0) {
                if (v > 1) return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': %s must lie in [0, 1]", id, key);
                if (key[0] == 'h') o->hazard_share = v;
                else o->quant_share = v;
            } else if (klen > 3 && strncmp(key, "w[", 2) == 0 && key[klen - 1] == ']') {
                char spec[PAR_ID_LEN + 64];
                snprintf(spec, sizeof spec, "%.*s=%s", (int)(klen - 3), key + 2, val);
                par_msg wm;
                if (par_fuzz_weights_parse(o, spec, &wm) != PAR_OK)
                    return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': %s", id, wm.text);
            } else {
                return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': unknown option '%s'", id, key);
            }
            p += len;
            if (*p == ',') p++;
        }
        p = close + 1;
    }
    if (strncmp(p, "#seed=", 6) != 0 || p[6] < '0' || p[6] > '9')
        return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': expected '#seed=N' after the options", id);
    char *end;
    unsigned long long s = strtoull(p + 6, &end, 10);
    if (*end) return par_msgf(msg, PAR_ERROR, "fuzz ID '%.200s': the seed is not a number", id);
    *seed = (uint64_t)s;
    return PAR_OK;
}

/* ---- the graph ---- */

/* Integer tickets per op: weights are compared in integers so that the draw is exact. */
static int64_t tickets(double w)
{
    return w > 0 ? (int64_t)(w * 1000.0) + 1 : 0;
}

static int nonfinite_hazard(par_hazard h)
{
    return h == PAR_HAZARD_NAN_INF || h == PAR_HAZARD_HUGE || h == PAR_HAZARD_NEAR_OVERFLOW;
}

/* Ops whose output saturates or exponentiates (the outputs bounded to [0, 1] or [-1, 1], softmax-like ops with an
 * axis): HUGE inputs are most telling there. */
static int exp_like(const par_op_info *op)
{
    return (op->flags & (PAR_OPF_OUT_01 | PAR_OPF_OUT_PM1)) ||
           (op->infer == par_infer_same && gen_has_attr(op, "axis"));
}

/* Each op's tickets in a graph of this kind; returns their total. */
static int64_t op_tickets(const par_fuzz_opts *o, par_hazard hz, int quant, int64_t *t)
{
    int64_t total = 0;
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        const par_op_info *op = par_op_get((par_op_id)i);
        t[i] = gen_op_fn_of(op) ? tickets(o->weight[i]) : 0;
        /* NaN, Inf and overflow flow through the graph: only ops whose rules for them are defined */
        if (hz && nonfinite_hazard(hz) && !(op->flags & PAR_OPF_NONFINITE)) t[i] = 0;
        if (hz == PAR_HAZARD_HUGE && exp_like(op)) t[i] *= 4;
        /* The quantizer (oracle/quantize.h) refuses graphs with quantize / dequantize nodes and with bool masks
         * (as graph inputs: f32 only; as constants: it gives them quantization): a quantized graph leaves out the
         * ops that need them, or it would stay float. */
        /* a quantized graph mostly of ops with a quantized form: the others stay float between a dequantize and a
         * quantize, which int8-only backends cannot run */
        if (quant && op->qform == PAR_QFORM_NONE) t[i] = (t[i] + 7) / 8;
        if (quant && (op->infer == par_infer_quantize || op->infer == par_infer_dequantize ||
                      op->infer == par_infer_where || op->infer == par_infer_masked_fill))
            t[i] = 0;
        total += t[i];
    }
    return total;
}

static const par_op_info *draw_op(gen_ctx *g, const int64_t *t, int64_t total)
{
    int64_t k = gen_range(g->src, 0, total - 1);
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        if (k < t[i]) return par_op_get((par_op_id)i);
        k -= t[i];
    }
    return NULL;
}

/* Give some graph inputs the hazard h (real inputs drawn by a generator), at least one when any qualifies. */
static void apply_hazard(gen_ctx *g, par_case *c, par_hazard h)
{
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    int32_t cand[64], n = 0;
    for (int32_t i = 0; i < c->n_srcs && n < 64; i++) {
        const par_tensor_src *s = &c->srcs[i];
        if (s->kind == PAR_SRC_GEN && d->values[s->value].kind == PAR_VALUE_INPUT &&
            d->values[s->value].dtype == PAR_DTYPE_F32)
            cand[n++] = i;
    }
    if (n == 0) return;
    /* NaN, Inf and overflow only where every node's rules for them are defined (a quantized twin adds quantize and
     * dequantize nodes the draw did not see) */
    int all_nonfinite = 1;
    for (int32_t j = 0; j < d->n_nodes; j++) {
        const par_op_info *op = par_op_of(&d->nodes[j]);
        if (!op || !(op->flags & PAR_OPF_NONFINITE)) all_nonfinite = 0;
    }
    if (nonfinite_hazard(h) && !all_nonfinite) return;
    int32_t must = (int32_t)gen_below(g->src, (uint32_t)n);
    for (int32_t k = 0; k < n; k++) {
        if (k != must && !gen_chance(g->src, 0.5)) continue;
        par_tensor_src *s = &c->srcs[cand[k]];
        /* An input drawn positive feeds a sqrt, an rsqrt or a divisor (the emitter's well-conditioning): a hazard
         * with zeros or negative values would make NaN or Inf there, which only ops with defined rules may see. So
         * it takes only all_equal (within its own range) unless every node has PAR_OPF_NONFINITE. */
        const int positive = s->gen.dist == PAR_DIST_UNIFORM && s->gen.a > 0;
        if (positive && h != PAR_HAZARD_ALL_EQUAL && !all_nonfinite) continue;
        par_gen hg = s->gen;
        hg.dist = PAR_DIST_HAZARD;
        hg.hazard = h;
        hg.fan_in = 0;
        hg.a = -1.0;
        hg.b = 1.0;
        /* TIES and SATURATION are about the quantize node that reads this input: its step and its range */
        for (int32_t j = 0; j < d->n_nodes; j++) {
            const par_node *nd = &d->nodes[j];
            if (strcmp(nd->op, "quantize") != 0 || nd->inputs[0] != s->value) continue;
            const par_value *q = &d->values[nd->outputs[0]];
            int32_t qmax = q->dtype == PAR_DTYPE_QU8 ? 255 : 127, qmin = q->dtype == PAR_DTYPE_QU8 ? 0 : -128;
            if (h == PAR_HAZARD_TIES) hg.a = q->scale, hg.b = 64;
            if (h == PAR_HAZARD_SATURATION) {
                double hi = (double)q->scale * (qmax - q->zero_point), lo = (double)q->scale * (q->zero_point - qmin);
                hg.b = hi > lo ? hi : lo;
            }
        }
        if (h == PAR_HAZARD_TIES && hg.a == -1.0) hg.a = 1.0 / 64.0, hg.b = 64;
        if (positive && h == PAR_HAZARD_ALL_EQUAL) hg.a = s->gen.a, hg.b = s->gen.b;
        par_msg m;
        /* Kept only when the generator accepts it (a hazard kind the case model does not implement is skipped). */
        if (par_gen_check(&hg, PAR_DTYPE_F32, &m) == PAR_OK) s->gen = hg;
    }
}

static par_case *build(gen_src *src, uint64_t seed, const par_fuzz_opts *o, const char *id, par_msg *msg)
{
    if (o->max_nodes < 1 || o->max_nodes > 64 || o->max_elems < 1)
        return par_msgf(msg, PAR_ERROR, "fuzz: max_nodes must lie in 1..64 and max_elems be >= 1"), NULL;
    par_case *c = par_case_create(id, seed);
    if (!c) return par_msgf(msg, PAR_ERROR, "fuzz: out of memory"), NULL;
    c->origin = strdup("suite:fuzz");
    gen_ctx g;
    if (!gen_ctx_init(&g, src, c, o)) {
        gen_ctx_free(&g);
        par_case_destroy(c);
        return par_msgf(msg, PAR_ERROR, "fuzz: out of memory"), NULL;
    }
    /* the graph's kind: quantized, and which hazard */
    int quant = gen_chance(src, o->quant_share);
    par_hazard hz = gen_chance(src, o->hazard_share) ? (par_hazard)gen_range(src, 1, PAR_HAZARD_COUNT - 1) : 0;
    g.quant = quant;
    int64_t t[PAR_OP_COUNT];
    int64_t total = op_tickets(o, hz, quant, t);
    if (total == 0 && hz) {
        hz = 0; /* no op takes this hazard yet: an ordinary graph */
        total = op_tickets(o, hz, quant, t);
    }
    if (total == 0) {
        gen_ctx_free(&g);
        par_case_destroy(c);
        return par_msgf(msg, PAR_ERROR, "fuzz: every op has weight 0"), NULL;
    }
    int32_t target = (int32_t)gen_range(src, 1, o->max_nodes);
    for (int32_t tries = 0; g.n_nodes < target && tries < target * 4 + 16 && !g.failed; tries++) {
        const par_op_info *op = draw_op(&g, t, total);
        gen_op_fn_of(op)(&g, op, target - g.n_nodes);
    }
    if (!g.failed && g.n_nodes == 0) {
        snprintf(g.err.text, sizeof g.err.text, "fuzz: no node could be built with these weights");
        g.failed = 1;
    }
    /* outputs: every node value nothing consumes */
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    for (int32_t v = 0; v < d->n_values && !g.failed; v++)
        if (d->values[v].kind == PAR_VALUE_NODE && g.uses[v] == 0) par_case_output(c, v);
    if (!g.failed && par_case_finish(c) != PAR_OK) {
        snprintf(g.err.text, sizeof g.err.text, "generator: %s", c->err.text);
        g.failed = 1;
    }
    if (g.failed) {
        par_msgf(msg, PAR_ERROR, "%s (%s)", g.err.text, id);
        gen_ctx_free(&g);
        par_case_destroy(c);
        return NULL;
    }
    if (quant) {
        par_quant_opts qo;
        memset(&qo, 0, sizeof qo);
        qo.act = gen_chance(src, 0.5) ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
        qo.per_channel = gen_chance(src, 0.5);
        /* a quarter on 16-bit activations (16a8w: conv2d and linear on qs16, the rest float), half of those with
         * int4 weights (16a4w: every linear whose K the block divides, or one block of K per channel, in a drawn
         * form); the integer forms' own rules are then judged inside whole graphs */
        if (gen_chance(src, 0.25)) {
            qo.act = PAR_DTYPE_QS16;
            if (gen_chance(src, 0.5)) {
                qo.int4_block = 2 << gen_range(src, 0, 4); /* 2 to 32 */
                qo.w4_unsigned = gen_chance(src, 0.5);
                qo.w4_hi_first = gen_chance(src, 0.5);
                qo.w4_bf16 = gen_chance(src, 0.3);
            }
        }
        qo.seeded = 0;
        qo.id = id;
        par_msg qm;
        par_case *q = par_case_quantize(c, &qo, &qm);
        if (q) { /* a graph the quantizer refuses stays float */
            par_case_destroy(c);
            c = q;
        }
    }
    if (hz) apply_hazard(&g, c, hz);
    gen_ctx_free(&g);
    return c;
}

par_case *par_fuzz_case(uint64_t seed, const par_fuzz_opts *o, par_msg *msg)
{
    par_fuzz_opts d;
    if (!o) par_fuzz_opts_default(&d), o = &d;
    char id[PAR_ID_LEN];
    if (!make_id(id, sizeof id, seed, o)) return par_msgf(msg, PAR_ERROR, "fuzz: the options do not fit a case ID"), NULL;
    gen_src src;
    gen_src_prng(&src, seed);
    return build(&src, seed, o, id, msg);
}

par_case *par_fuzz_case_by_id(const char *id, par_msg *msg)
{
    uint64_t seed = 0;
    par_fuzz_opts o;
    if (parse_id(id, &seed, &o, msg) != PAR_OK) return NULL;
    return par_fuzz_case(seed, &o, msg);
}

par_case *par_fuzz_case_from_bytes(const uint8_t *data, size_t n, const par_fuzz_opts *o, par_msg *msg)
{
    par_fuzz_opts d;
    if (!o) par_fuzz_opts_default(&d), o = &d;
    /* The case seed (input generators) comes from the first 8 bytes; every structural choice from the rest. */
    uint64_t seed = 0;
    for (size_t i = 0; i < 8 && i < n; i++) seed |= (uint64_t)data[i] << (8 * i);
    gen_src src;
    gen_src_bytes(&src, n > 8 ? data + 8 : NULL, n > 8 ? n - 8 : 0);
    char id[PAR_ID_LEN];
    snprintf(id, sizeof id, "fuzz-bytes#seed=%llu", (unsigned long long)seed);
    return build(&src, seed, o, id, msg);
}
