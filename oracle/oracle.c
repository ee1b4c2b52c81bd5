/*
 * oracle.c - element-wise comparison of a backend's output with the reference's values and budgets, and the metrics
 * reported for it. The pass rule is |backend - reference| <= budget, element by element; nothing here is tuned:
 * budgets come from the reference (docs/oracle.md). Metrics are reported, never used to pass a failing element.
 * Integer outputs are judged in steps against the declared scheme's integer, its labelled range and a bias bound
 * (docs/quantization.md); a bias beyond what rounding explains fails the output.
 */
#include "oracle.h"

#include <math.h>

#include "core/requant.h"
#include "core/tensor.h"

_Static_assert(PAR_TIE_RULES == PAR_TIE_N_RULES, "result.h counts every rule of requant.h");

void par_metrics_init(par_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->sqnr_db = m->sqnr_pred_db = NAN; /* integer outputs, and no output compared yet */
    m->stat_z = NAN;                    /* the companion has not judged */
    m->stat_skip = PAR_STAT_SKIP_NONE;
    m->node_bound = m->node_z = m->node_first_z = NAN; /* the companion on every node has not judged */
    m->worst_index = -1;
    m->tie_declared = -1;
}

/* Ties (docs/quantization.md, "Ties"): at every element where the reference recorded an exact tie t = k + 1/2 of the
 * declared scheme's arithmetic (inputs exact), the backend's integer b (read back from a dequantized float when the
 * tensor is one) is one rule's choice or another's; each rule choosing b counts the tie. A tie whose integer is not
 * the declared rule's contradicts the declared scheme: no correct backend of that scheme rounds it otherwise, so
 * the output fails whatever its range allows. Ties are pinned only by ops with an integer formula; the reference
 * records none elsewhere (bilinear, softmax, tables). */
static int64_t judge_ties(const par_rt *ref, const void *got, par_metrics *m)
{
    if (!ref->tie || (unsigned)ref->tie_rule >= PAR_TIE_N_RULES) return 0;
    for (int64_t i = 0; i < ref->numel; i++) {
        const double t = ref->tie[i];
        if (isnan(t)) continue;
        double x = par_elem_get(ref->dtype, got, i);
        if (ref->tie_scale > 0) x = nearbyint(x / ref->tie_scale);
        else x -= ref->tie_zp;
        m->tie_n++;
        int any = 0;
        for (int r = 0; r < PAR_TIE_N_RULES; r++)
            if (par_tie_round(t, (par_tie_rule)r) == x) {
                m->tie_rule_n[r]++;
                any = 1;
            }
        m->tie_other += !any;
    }
    if (m->tie_n == 0) return 0;
    m->tie_declared = ref->tie_rule;
    m->tie_over = m->tie_rule_n[ref->tie_rule] < m->tie_n;
    return m->tie_over;
}

/* Ordered integer line of f16 bits (for ULP distances of f16 outputs). */
static int32_t ordered16(uint16_t h) { return (h & 0x8000u) ? -(int32_t)(h & 0x7fffu) : (int32_t)h; }

static double ulp_distance(par_dtype dt, double ref, double got)
{
    switch (dt) {
    case PAR_DTYPE_F32: return par_ulp_distance_f32((float)ref, (float)got);
    case PAR_DTYPE_F16: {
        int32_t a = ordered16(par_f32_to_f16((float)ref)), b = ordered16(par_f32_to_f16((float)got));
        return fabs((double)a - (double)b);
    }
    default: return fabs(got - ref); /* integer dtypes: steps */
    }
}

/* Integer outputs (docs/quantization.md, "Oracle"): element i passes when ql - e <= got <= qh + e (ql, qh default to
 * v): exact when got == v, labelled otherwise. The allowance on the side of the difference is the element's budget
 * (for max_ratio). The bias check: the mean signed difference must not exceed, on its side, the tensor's bias bound
 * (reference.h: qb_up, qb_down), which is the tie fraction of its labels plus the systematic share of its propagated
 * budget; a tensor without one (a quantize output) takes its mean allowance on that side. */
/* The error map (core/result.h): failing and total elements per cell, then the shares. */
typedef struct emap_acc {
    int64_t rows, cols;      /* the output as rows x cols */
    int32_t r, c;            /* cells */
    int32_t fail[PAR_EMAP_MAX * PAR_EMAP_MAX], total[PAR_EMAP_MAX * PAR_EMAP_MAX];
} emap_acc;

static void emap_begin(emap_acc *a, const par_rt *ref)
{
    a->cols = ref->rank > 0 ? ref->dims[ref->rank - 1] : 1;
    if (a->cols < 1) a->cols = 1;
    a->rows = ref->numel / a->cols;
    if (a->rows < 1) a->rows = 1;
    a->r = (int32_t)(a->rows < PAR_EMAP_MAX ? a->rows : PAR_EMAP_MAX);
    a->c = (int32_t)(a->cols < PAR_EMAP_MAX ? a->cols : PAR_EMAP_MAX);
    memset(a->fail, 0, sizeof a->fail);
    memset(a->total, 0, sizeof a->total);
}

static void emap_add(emap_acc *a, int64_t i, int bad)
{
    int64_t row = i / a->cols, col = i % a->cols;
    int64_t k = (row * a->r / a->rows) * a->c + col * a->c / a->cols;
    a->total[k]++;
    a->fail[k] += bad;
}

static void emap_end(const emap_acc *a, const par_rt *ref, par_metrics *m)
{
    m->emap_rows = a->r;
    m->emap_cols = a->c;
    for (int32_t k = 0; k < a->r * a->c; k++) {
        int v = a->total[k] ? (int)((255.0 * a->fail[k]) / a->total[k] + 0.5) : 0;
        m->emap[k] = (uint8_t)(a->fail[k] && v < 1 ? 1 : v);
    }
    for (int32_t k = 0; k < ref->rank && k < PAR_MAX_RANK; k++) m->worst_dims[k] = ref->dims[k];
}

static int64_t compare_quant(const par_rt *ref, const void *got, par_metrics *m, emap_acc *ea)
{
    double sum_d = 0, sum_up = 0, sum_down = 0, sum_d2 = 0, sum_r2 = 0, worst_score = -1;
    m->quant = 1;
    for (int64_t i = 0; i < ref->numel; i++) {
        double r = ref->v[i], e = ref->e[i], x = par_elem_get(ref->dtype, got, i);
        double l = ref->ql ? ref->ql[i] : r, h = ref->qh ? ref->qh[i] : r;
        double d = x - r, up = h - r + e, down = r - l + e;
        double allow = d > 0 ? up : down;
        int ok = x >= l - e && x <= h + e;
        double ratio = d == 0 ? 0 : (allow > 0 ? fabs(d) / allow : INFINITY);
        emap_add(ea, i, !ok);
        if (!ok) m->n_over++;
        else if (d == 0) m->n_exact++;
        else m->n_labelled++;
        int bin = d <= -3 ? 0 : d >= 3 ? PAR_HIST_BINS - 1 : PAR_HIST_ZERO + (int)d;
        m->hist[bin]++;
        sum_d += d;
        sum_up += up;
        sum_down += down;
        sum_d2 += d * d;
        sum_r2 += r * r;
        if (fabs(d) > m->max_abs) m->max_abs = fabs(d);
        if (r != 0 && fabs(d) / fabs(r) > m->max_rel) m->max_rel = fabs(d) / fabs(r);
        if (fabs(d) > m->max_ulp) m->max_ulp = fabs(d);
        if (ratio > m->max_ratio) m->max_ratio = ratio;
        if (ratio > worst_score || (ratio == worst_score && m->worst_index >= 0 &&
                                    fabs(d) > fabs(m->worst_got - m->worst_ref))) {
            worst_score = ratio;
            m->worst_index = i;
            m->worst_ref = r;
            m->worst_got = x;
            m->worst_budget = allow;
        }
    }
    m->n = ref->numel;
    m->nmse = sum_r2 > 0 ? sum_d2 / sum_r2 : (sum_d2 > 0 ? INFINITY : 0);
    m->bias = ref->numel ? sum_d / (double)ref->numel : 0;
    /* Nodes' outputs carry their own bias bounds (tie fraction plus the systematic share of the propagated budget);
     * other integer tensors (quantize outputs) take the mean allowance. A relative 1e-12 absorbs the rounding of
     * the bounds' float sums. */
    const double n = (double)ref->numel;
    double b_up = ref->ql ? ref->qb_up * n : sum_up, b_down = ref->ql ? ref->qb_down * n : sum_down;
    m->bias_bound = ref->numel ? (sum_d >= 0 ? b_up : b_down) / n : 0;
    m->bias_over = sum_d > b_up * (1 + 1e-12) || -sum_d > b_down * (1 + 1e-12);
    return m->n_over + m->bias_over;
}

int64_t par_oracle_compare(const par_rt *ref, const void *got, par_metrics *m)
{
    return par_oracle_compare_ideal(ref, NULL, got, m);
}

/* The metrics of one finite pair (reference or ideal value r, backend value x): the sums of nmse and bias. */
typedef struct pair_sums {
    double d2, r2, d, s2; /* s2: the predicted noise, sum s^2 / 3 over the judged elements */
    int64_t n;
} pair_sums;

/* 10 log10(signal / noise): +Inf for no noise, NaN for no signal and no noise. */
static double db_ratio(double signal, double noise)
{
    if (noise == 0) return signal > 0 ? INFINITY : NAN;
    return 10.0 * log10(signal / noise);
}

static void add_pair(par_dtype dt, double r, double x, par_metrics *m, pair_sums *ps)
{
    double d = x - r, ad = fabs(d);
    if (ad > m->max_abs) m->max_abs = ad;
    if (r != 0 && ad / fabs(r) > m->max_rel) m->max_rel = ad / fabs(r);
    double ulp = ulp_distance(dt, r, x);
    if (ulp > m->max_ulp) m->max_ulp = ulp;
    ps->d2 += d * d;
    ps->r2 += r * r;
    ps->d += d;
    ps->n++;
}

int64_t par_oracle_compare_ideal(const par_rt *ref, const par_rt *ideal, const void *got, par_metrics *m)
{
    if (ideal && (ideal->numel != ref->numel || !ideal->v)) ideal = NULL;
    par_metrics_init(m);
    const int64_t tie_bad = judge_ties(ref, got, m);
    emap_acc ea_store, *ea = &ea_store; /* 8 KiB: where the elements fail, folded */
    emap_begin(ea, ref);
    if (par_dtype_is_quant(ref->dtype)) {
        int64_t bad = compare_quant(ref, got, m, ea) + tie_bad;
        emap_end(ea, ref, m);
        if (m->worst_index >= 0) {
            m->worst_rank = ref->rank;
            int64_t rem = m->worst_index;
            for (int32_t k = ref->rank - 1; k >= 0; k--) {
                m->worst_coords[k] = rem % ref->dims[k];
                rem /= ref->dims[k];
            }
        }
        return bad;
    }
    pair_sums ps = {0, 0, 0, 0, 0};
    const double *sc = par_rt_scales(ref);
    double worst_score = -1;
    for (int64_t i = 0; i < ref->numel; i++) {
        double r = ref->v[i], e = ref->e[i], x = par_elem_get(ref->dtype, got, i);
        double ratio;
        int bad_nonfinite = 0;
        if (!isfinite(r) && isinf(e)) {
            /* "anything" (docs/oracle.md, "NaN and Inf policy"): an intermediate of a correct backend may overflow
             * here, so any value, NaN included, passes unjudged and is counted */
            ratio = 0;
            m->n_unbounded++;
            if (ideal && isfinite(ideal->v[i])) {
                if (isfinite(x)) {
                    add_pair(ref->dtype, ideal->v[i], x, m, &ps);
                } else {
                    /* a NaN or Inf where the ideal value is finite: an infinite difference, which the metrics show
                     * (nmse and max_abs infinite, SQNR -inf dB) rather than leave out; the verdict stays a PASS */
                    m->max_abs = m->max_rel = m->max_ulp = INFINITY;
                    ps.d2 = INFINITY;
                    ps.r2 += ideal->v[i] * ideal->v[i];
                    ps.n++;
                }
            }
        } else if (isnan(r)) {
            bad_nonfinite = !isnan(x);
            ratio = bad_nonfinite ? INFINITY : 0;
        } else if (isinf(r)) {
            bad_nonfinite = x != r;
            ratio = bad_nonfinite ? INFINITY : 0;
        } else if (isnan(x) || (isinf(x) && !isinf(e))) {
            bad_nonfinite = 1;
            ratio = INFINITY;
        } else {
            double d = x - r, ad = fabs(d);
            if (isinf(x)) { /* allowed only by an infinite budget */
                ratio = 0;
            } else {
                ratio = ad == 0 ? 0 : (e > 0 ? ad / e : INFINITY);
                if (ad > e) m->n_over++;
                if (isinf(e)) m->n_unbounded++;
                else ps.s2 += sc[i] * sc[i] / 3;
                add_pair(ref->dtype, r, x, m, &ps);
            }
        }
        if (bad_nonfinite) m->n_nonfinite++;
        emap_add(ea, i, bad_nonfinite || ratio > 1);
        if (ratio > m->max_ratio) m->max_ratio = ratio;
        /* the worst element: non-finite failures first, then the largest ratio, then the largest |d| */
        double score = bad_nonfinite ? INFINITY : ratio;
        if (score > worst_score || (score == worst_score && m->worst_index >= 0 && fabs(x - r) >
                                                                                      fabs(m->worst_got - m->worst_ref))) {
            worst_score = score;
            m->worst_index = i;
            m->worst_ref = r;
            m->worst_got = x;
            m->worst_budget = e;
        }
    }
    m->n = ref->numel;
    m->nmse = ps.r2 > 0 ? ps.d2 / ps.r2 : (ps.d2 > 0 ? INFINITY : 0);
    m->sqnr_db = db_ratio(ps.r2, ps.d2);
    m->sqnr_pred_db = db_ratio(ps.r2, ps.s2);
    m->bias = ps.n ? ps.d / (double)ps.n : 0;
    emap_end(ea, ref, m);
    if (m->worst_index >= 0) {
        m->worst_rank = ref->rank;
        int64_t rem = m->worst_index;
        for (int32_t k = ref->rank - 1; k >= 0; k--) {
            m->worst_coords[k] = rem % ref->dims[k];
            rem /= ref->dims[k];
        }
    }
    return m->n_over + m->n_nonfinite + tie_bad;
}

/* The companion (docs/oracle.md, "The statistical companion"). Each judged element's error, less the flush part that
 * rule 5 keeps out of the scales, is a sum of independent mean-zero roundings each within its bound, so by
 * Hoeffding's lemma z is sub-Gaussian with variance proxy 1 and E exp(z^2 / 4) <= sqrt(2); exp being convex, the
 * mean of the z^2 has E exp(mean / 4) <= sqrt(2) however the elements depend on each other (they share their
 * inputs' errors), and Markov's inequality gives P(mean >= q) <= sqrt(2) exp(-q / 4). */
int par_oracle_companion(const par_rt *ref, const par_rt *stat, const void *got, par_metrics *m)
{
    m->stat_z = NAN;
    m->stat_n = 0;
    m->stat_over = 0;
    m->stat_skip = PAR_STAT_SKIP_NONE;
    if (!stat || !stat->v || stat->numel != ref->numel || par_dtype_is_quant(ref->dtype) ||
        ref->dtype == PAR_DTYPE_BOOL || ref->dtype == PAR_DTYPE_I32)
        return 0;
    const double *t = par_rt_scales(stat);
    double sum = 0;
    int64_t n = 0, n_flush = 0;
    for (int64_t i = 0; i < ref->numel; i++) {
        double r = ref->v[i], e = ref->e[i], x = par_elem_get(ref->dtype, got, i);
        if (!isfinite(r) || !isfinite(e) || !isfinite(x) || !isfinite(t[i]) || !(t[i] > 0)) continue;
        double f = ref->f ? ref->f[i] : 0;
        /* An element whose flush part reaches its scale could hide any error the companion looks for behind the
         * declared flushing's worst case: z would be 0 there by construction, so it is not counted (it is chosen from
         * the reference alone, so the others' z keep their distribution). */
        if (f >= t[i]) {
            n_flush++;
            continue;
        }
        double z = fmax(0, fabs(x - r) - f) / t[i];
        sum += z * z;
        n++;
    }
    if (n == 0) {
        if (n_flush) m->stat_skip = PAR_STAT_SKIP_FLUSH;
        return 0;
    }
    m->stat_n = n;
    m->stat_z = sqrt(sum / (double)n);
    m->stat_skip = PAR_STAT_APPLIED;
    m->stat_over = m->stat_z > PAR_STAT_BOUND;
    return m->stat_over;
}

double par_stat_bound_of(int32_t k)
{
    return k <= 1 ? PAR_STAT_BOUND : sqrt(4 * log(sqrt(2) * (double)k / 3e-8));
}

par_stat_skip par_stat_applies(const par_case *c, int quant)
{
    if (quant) return PAR_STAT_SKIP_QUANT;
    for (int32_t i = 0; i < c->n_srcs; i++) {
        const par_tensor_src *s = &c->srcs[i];
        if (s->kind == PAR_SRC_GEN && s->gen.dist != PAR_DIST_UNIFORM && s->gen.dist != PAR_DIST_NORMAL)
            return PAR_STAT_SKIP_DATA;
    }
    return PAR_STAT_APPLIED;
}

static int is_float_rt(const par_rt *t)
{
    return t && t->v && t->e && (t->dtype == PAR_DTYPE_F32 || t->dtype == PAR_DTYPE_F16 || t->dtype == PAR_DTYPE_F64);
}

int par_unjudged_origin(const par_graph_desc *g, const par_ref_result *ref, char *buf, size_t n)
{
    if (n) buf[0] = 0;
    for (int32_t ni = 0; ni < g->n_nodes; ni++) {
        const par_node *nd = &g->nodes[ni];
        int64_t n_any = 0, n_unb = 0, numel = 0;
        const char *own = NULL; /* the op's own reason, where its kernel gave one */
        for (int32_t k = 0; k < nd->n_outputs; k++) {
            const par_rt *t = nd->outputs[k] >= 0 ? &ref->values[nd->outputs[k]] : NULL;
            if (!is_float_rt(t)) continue;
            numel += t->numel;
            if (t->why_unbounded && !own) own = t->why_unbounded;
            for (int64_t i = 0; i < t->numel; i++) {
                if (t->e[i] < INFINITY || isinf(t->v[i])) continue;
                if (isnan(t->v[i])) n_any++;
                else n_unb++;
            }
        }
        if (n_any + n_unb == 0) continue;
        double emax = 0, vmax = 0, fworst = 0;
        for (int32_t k = 0; k < nd->n_inputs; k++) {
            const par_rt *t = nd->inputs[k] >= 0 ? &ref->values[nd->inputs[k]] : NULL;
            if (!is_float_rt(t)) continue;
            for (int64_t i = 0; i < t->numel; i++)
                if (t->e[i] < INFINITY && isfinite(t->v[i])) {
                    emax = fmax(emax, t->e[i]);
                    vmax = fmax(vmax, fabs(t->v[i]));
                    if (t->f) fworst = fmax(fworst, t->f[i]);
                }
        }
        const char *why = n_any >= n_unb ? "anything: an intermediate may overflow the arithmetic's range"
                          : own ? own
                                : "the budget's interval reaches the storage's overflow threshold or a point where the "
                                  "op is unbounded";
        snprintf(buf, n, "from node '%s' (%s): %lld of %lld elements %s%s; its inputs' budgets reach %.3g on values "
                 "up to %.3g", nd->name ? nd->name : "?", nd->op ? nd->op : "?", (long long)(n_any + n_unb),
                 (long long)numel, n_any >= n_unb ? "" : "unbounded: ", why, emax, vmax);
        /* Declared flushing's share, when it is most of it: its worst case compounds by each layer's l1 gain
         * (docs/oracle.md, "Flushed subnormals", item 6). */
        size_t used = strlen(buf);
        if (fworst > 0.5 * emax && used < n)
            snprintf(buf + used, n - used, ", %.3g of it declared flushing's worst case", fworst);
        return 1;
    }
    return 0;
}

/* The merged record's stat_skip: applied if any output was, else the most telling reason, "no scale" last. */
static int stat_skip_rank(int32_t k)
{
    return k == PAR_STAT_SKIP_NONE ? PAR_STAT_SKIP_N : k;
}

void par_metrics_merge(par_metrics *acc, const par_metrics *m, int32_t output)
{
    int take_worst = acc->worst_index < 0 || m->max_ratio > acc->max_ratio ||
                     (m->n_nonfinite > 0 && acc->n_nonfinite == 0);
    acc->n += m->n;
    acc->n_over += m->n_over;
    acc->n_nonfinite += m->n_nonfinite;
    acc->n_unbounded += m->n_unbounded;
    acc->max_abs = fmax(acc->max_abs, m->max_abs);
    acc->max_rel = fmax(acc->max_rel, m->max_rel);
    acc->max_ulp = fmax(acc->max_ulp, m->max_ulp);
    acc->nmse = fmax(acc->nmse, m->nmse);
    /* the worst output's; fmin skips a NaN (an integer output, or the accumulator's start) */
    acc->sqnr_db = fmin(acc->sqnr_db, m->sqnr_db);
    acc->sqnr_pred_db = fmin(acc->sqnr_pred_db, m->sqnr_pred_db);
    acc->stat_z = fmax(acc->stat_z, m->stat_z); /* skips a NaN: an output it stood down on */
    acc->stat_n += m->stat_n;
    acc->stat_over |= m->stat_over;
    if (stat_skip_rank(m->stat_skip) < stat_skip_rank(acc->stat_skip)) acc->stat_skip = m->stat_skip;
    if (!acc->bias_over && (fabs(m->bias) > fabs(acc->bias) || m->bias_over)) {
        acc->bias = m->bias;
        acc->bias_bound = m->bias_bound;
    }
    acc->quant |= m->quant;
    acc->bias_over |= m->bias_over;
    acc->n_exact += m->n_exact;
    acc->n_labelled += m->n_labelled;
    for (int k = 0; k < PAR_HIST_BINS; k++) acc->hist[k] += m->hist[k];
    acc->max_ratio = fmax(acc->max_ratio, m->max_ratio);
    acc->tie_n += m->tie_n;
    acc->tie_other += m->tie_other;
    for (int k = 0; k < PAR_TIE_RULES; k++) acc->tie_rule_n[k] += m->tie_rule_n[k];
    if (acc->tie_declared < 0 || (m->tie_over && !acc->tie_over)) acc->tie_declared = m->tie_declared;
    acc->tie_over |= m->tie_over;
    if (take_worst && m->worst_index >= 0) {
        acc->worst_output = output;
        acc->worst_index = m->worst_index;
        acc->worst_rank = m->worst_rank;
        memcpy(acc->worst_coords, m->worst_coords, sizeof acc->worst_coords);
        memcpy(acc->worst_dims, m->worst_dims, sizeof acc->worst_dims);
        acc->emap_rows = m->emap_rows;
        acc->emap_cols = m->emap_cols;
        memcpy(acc->emap, m->emap, sizeof acc->emap);
        acc->worst_ref = m->worst_ref;
        acc->worst_got = m->worst_got;
        acc->worst_budget = m->worst_budget;
    }
}

par_prec par_prec_of_backend(const par_backend_inst *inst)
{
    par_arith a = (inst->arith >= 0 && inst->arith < PAR_ARITH_N_KINDS) ? (par_arith)inst->arith : PAR_ARITH_F32;
    par_prec p = par_prec_for(a);
    p.requant = (inst->requant >= 0 && inst->requant < PAR_REQUANT_N_SCHEMES) ? (par_requant)inst->requant
                                                                                : PAR_REQUANT_FP32;
    p.requant_exact = inst->requant_exact != 0;
    par_prec_set_flush(&p, (inst->arith_flags & PAR_ARITH_FLUSH_SUBNORMALS) != 0);
    return p;
}
