/*
 * hazard.c - the hazard cases of the sweeps: each op family once per hazard input (core/case.h, par_hazard), the
 * ID spelling the hazard (`relu(x=[2,3,6,7],in=hazard:nan_inf)`). NaN, Inf, huge and near-overflow inputs go only
 * to ops whose NaN and Inf rules are defined (PAR_OPF_NONFINITE, docs/ops.md); the other hazards (subnormal, signed
 * zero, ties, saturation, cancel, all equal) go to every op listed here. Quantized graphs take the two hazards that
 * mean something to a quantizer (ties and saturation) on a power-of-two scale, so the ties are exact.
 *
 * It must not encode expected results. Called once per suite from the binary ops' spec (elementwise.c).
 */
#include "sweep_util.h"

#include "core/ops.h"
#include "act_table.h"

/* How a case is built around its op. */
typedef enum hz_kind {
    HZ_UNARY,   /* x -> op -> y */
    HZ_BINARY,  /* (x hazard, b uniform [-2, 2)) -> op -> y */
    HZ_DIV,     /* (x hazard, b with |b| in [0.5, 2)) -> div -> y: the divisor stays away from 0 */
    HZ_CONCAT,  /* concat(x hazard, b uniform) on axis 1 */
    HZ_LINEAR,  /* x [rows, K] hazard, weight normal(0, 1/sqrt(K)), bias */
    HZ_MATMUL,  /* x [rows, K] hazard, b [K, 5] uniform */
    HZ_CONV,    /* x [N, C, H, W] hazard, weight [3, C, 3, 3] normal(0, 1/sqrt(fan_in)), bias, padding 1 */
    HZ_LNORM,   /* layer_norm over the last dimension */
    HZ_ROPE,    /* x [N, C, H, W + 1] hazard (W + 1 even), cos and sin [H, (W + 1) / 2] uniform [-1, 1) */
    HZ_SDPA,    /* q [N, C, H, W] hazard over one key/value head k, v [N, 1, H, W] uniform [-2, 2) */
    HZ_SCATTER, /* x [N, C, H, W] hazard, src [N, C, 2, W] uniform [-2, 2) */
} hz_kind;

typedef struct hz_op {
    const char *op;
    hz_kind kind;
    int na;
    par_attr at[3];
    int quant; /* also as a quantized graph (qu8 and qs8) under ties and saturation */
    const char *tag; /* spelled in the ID after the shape when an op is listed twice ("d=2"), else NULL */
    int full_only;   /* only in the full suite */
} hz_op;

static const int64_t K2[2] = {2, 2}, AX_LAST[1] = {-1}, AX_HW[2] = {2, 3}, PERM[4] = {0, 2, 3, 1};
static const int64_t PADS[8] = {0, 0, 0, 0, 1, 1, 2, 0}, RESH[2] = {-1, 14}, CPAD[4] = {1, 1, 1, 1};
static const int64_t CPAD2[4] = {2, 2, 2, 2}, DIL2[2] = {2, 2};
static const double SCALE2[2] = {2, 2};

#define A1(x) 1, {x}
#define A2(x, y) 2, {x, y}
#define A3(x, y, z) 3, {x, y, z}

/* The unary rows whose case is not the plain one (attributes, or the quantized forms too); every other unary op of
 * the activation sweep (act_table.c) gets the plain row {op, HZ_UNARY}, in the table's order. */
static int hz_unary_override(const char *op, hz_op *o)
{
    const hz_op t[] = {
        {"relu", HZ_UNARY, 0, {{0}}, 1, NULL, 0},
        {"clamp", HZ_UNARY, A2(par_a_float("min", -1.5), par_a_float("max", 1.5)), 1, NULL, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].op, op) == 0) return *o = t[i], 1;
    return 0;
}

static const hz_op *hz_ops(int *n)
{
    static hz_op *ops;
    static int count;
    if (count) {
        *n = count;
        return ops;
    }
    const hz_op t[] = {
        {"add", HZ_BINARY, 0, {{0}}, 1, NULL, 0},
        {"sub", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"mul", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"div", HZ_DIV, 0, {{0}}, 0, NULL, 0},
        {"minimum", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"maximum", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"pow", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"eq", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"gt", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"lt", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"ge", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"le", HZ_BINARY, 0, {{0}}, 0, NULL, 0},
        {"max_pool2d", HZ_UNARY, A2(par_a_ints("kernel", 2, K2), par_a_ints("stride", 2, K2)), 1, NULL, 0},
        {"avg_pool2d", HZ_UNARY, A2(par_a_ints("kernel", 2, K2), par_a_ints("stride", 2, K2)), 1, NULL, 0},
        {"global_avg_pool2d", HZ_UNARY, 0, {{0}}, 0, NULL, 0},
        {"sum", HZ_UNARY, A1(par_a_ints("axes", 1, AX_LAST)), 0, NULL, 0},
        {"mean", HZ_UNARY, A1(par_a_ints("axes", 2, AX_HW)), 1, NULL, 0},
        {"amax", HZ_UNARY, A1(par_a_ints("axes", 1, AX_LAST)), 0, NULL, 0},
        {"amin", HZ_UNARY, A1(par_a_ints("axes", 1, AX_LAST)), 0, NULL, 0},
        {"prod", HZ_UNARY, A1(par_a_ints("axes", 1, AX_LAST)), 0, NULL, 0},
        {"argmax", HZ_UNARY, A1(par_a_int("axis", -1)), 0, NULL, 0},
        {"argmin", HZ_UNARY, A1(par_a_int("axis", 1)), 0, NULL, 0},
        {"softmax", HZ_UNARY, 0, {{0}}, 0, NULL, 0},
        {"log_softmax", HZ_UNARY, 0, {{0}}, 0, NULL, 0},
        {"reshape", HZ_UNARY, A1(par_a_ints("shape", 2, RESH)), 0, NULL, 0},
        {"permute", HZ_UNARY, A1(par_a_ints("perm", 4, PERM)), 0, NULL, 0},
        {"pad", HZ_UNARY, A2(par_a_ints("pads", 8, PADS), par_a_float("value", 0.25)), 0, NULL, 0},
        {"slice", HZ_UNARY, A3(par_a_int("dim", 3), par_a_int("start", 1), par_a_int("end", 6)), 0, NULL, 0},
        {"concat", HZ_CONCAT, A1(par_a_int("axis", 1)), 0, NULL, 0},
        {"slice_scatter", HZ_SCATTER, A2(par_a_int("dim", 2), par_a_int("start", 3)), 0, NULL, 0},
        /* ops without NaN and Inf rules: the other hazards only */
        {"layer_norm", HZ_LNORM, 0, {{0}}, 0, NULL, 0},
        {"upsample_bilinear2d", HZ_UNARY, A1(par_a_floats("scale", 2, SCALE2)), 0, NULL, 0},
        {"linear", HZ_LINEAR, 0, {{0}}, 0, NULL, 0},
        {"matmul", HZ_MATMUL, 0, {{0}}, 0, NULL, 0},
        {"rope", HZ_ROPE, A1(par_a_int("interleaved", 1)), 0, NULL, 0},
        {"sdpa", HZ_SDPA, A1(par_a_int("is_causal", 1)), 0, NULL, 0},
        /* quick: dilated, which no Winograd algorithm takes, so that a backend declaring Winograd is judged on
         * its direct path there; full: the 3x3 stride-1 form too, where a declared Winograd tile mixes every input
         * (conv_winograd.c) */
        {"conv2d", HZ_CONV, A2(par_a_ints("padding", 4, CPAD2), par_a_ints("dilation", 2, DIL2)), 0, "d=2", 0},
        {"conv2d", HZ_CONV, A1(par_a_ints("padding", 4, CPAD)), 0, NULL, 1},
    };
    /* the unary ops of the activation sweep first (one input: prelu's slope makes it binary), then the table */
    const int n_t = (int)(sizeof t / sizeof t[0]);
    ops = malloc(sizeof *ops * (size_t)(par_act_count + n_t));
    if (!ops) return *n = 0, NULL;
    for (int a = 0; a < par_act_count; a++) {
        const par_op_info *info = par_op_find(par_act_table[a].name);
        if (!info || info->in_max != 1) continue;
        if (!hz_unary_override(info->name, &ops[count])) ops[count] = (hz_op){info->name, HZ_UNARY, 0, {{0}}, 0, NULL, 0};
        count++;
    }
    memcpy(ops + count, t, sizeof t);
    count += n_t;
    *n = count;
    return ops;
}

/* The hazard generator over the ordinary range [-2, 2); ties on the grid of 1/64 (k in [-128, 128)), saturation
 * at +-2 (the range of the quantized graphs). */
static par_gen hz_gen(par_hazard h)
{
    par_gen g = {.dist = PAR_DIST_HAZARD, .a = -2.0, .b = 2.0, .hazard = h};
    if (h == PAR_HAZARD_TIES) g.a = 1.0 / 64, g.b = 128;
    return g;
}

static int nonfinite_hazard(par_hazard h)
{
    return h == PAR_HAZARD_NAN_INF || h == PAR_HAZARD_HUGE || h == PAR_HAZARD_NEAR_OVERFLOW;
}

/* Shapes: quick [2,3,6,7] (252 elements); full adds [1,4,14,14]. Matrix ops take [rows, K] = [dims0*dims1*dims2,
 * dims3]; conv2d takes the 4-d shape. */
static const int64_t SHAPES[2][4] = {{2, 3, 6, 7}, {1, 4, 14, 14}};

static void hz_emit(par_sweep *s, const hz_op *o, par_hazard h, const int64_t *xd4, int qdt)
{
    char sh[64];
    const char *hn = par_hazard_name(h);
    int64_t xd[4] = {xd4[0], xd4[1], xd4[2], xd4[3]};
    int rank = 4;
    if (o->kind == HZ_LINEAR || o->kind == HZ_MATMUL) xd[0] = xd4[0] * xd4[1] * xd4[2], xd[1] = xd4[3], rank = 2;
    if (o->kind == HZ_ROPE) xd[3] += xd[3] % 2;
    su_shape(sh, sizeof sh, rank, xd);
    if (o->tag) snprintf(sh + strlen(sh), sizeof sh - strlen(sh), ",%s", o->tag);
    par_case *c = qdt ? par_sweep_case(s, o->op, "%s(x=%s,quant=%s,in=hazard:%s)", o->op, sh, su_dt((par_dtype)qdt), hn)
                      : par_sweep_case(s, o->op, "%s(x=%s,in=hazard:%s)", o->op, sh, hn);
    if (!c) return;
    if (qdt) {
        /* quantize with scale 1/64 (exact ties) and the zero point of [-2, 2] */
        par_dtype dt = (par_dtype)qdt;
        float scale = 1.0f / 64;
        int32_t zp = dt == PAR_DTYPE_QU8 ? 128 : 0;
        int32_t in[2];
        in[0] = par_case_input(c, "x", PAR_DTYPE_F32, rank, xd, hz_gen(h));
        par_out_spec q = {"x_q", dt, scale, zp};
        in[0] = par_case_node(c, "quantize", 1, in, 0, NULL, &q);
        int n_in = 1;
        if (o->kind == HZ_BINARY) {
            in[1] = su_qinput(c, "b", dt, rank, xd, -1.0, 1.0);
            n_in = 2;
        }
        par_out_spec y = su_qout_spec("y_q", dt, o->kind == HZ_BINARY ? -3.0 : -2.0, o->kind == HZ_BINARY ? 3.0 : 2.0);
        su_qoutput(c, par_case_node(c, o->op, n_in, in, o->na, o->at, &y));
        par_sweep_done(s, c);
        return;
    }
    int32_t in[4];
    int n_in = 1;
    in[0] = par_case_input(c, "x", PAR_DTYPE_F32, rank, xd, hz_gen(h));
    switch (o->kind) {
    case HZ_BINARY: case HZ_CONCAT:
        in[1] = par_case_input(c, "b", PAR_DTYPE_F32, rank, xd, su_uniform(-2.0, 2.0)), n_in = 2;
        break;
    case HZ_DIV: {
        /* |b| in [0.5, 2): a hazard of its own that keeps the quotient's sensitivity bounded */
        par_gen g = {.dist = PAR_DIST_UNIFORM, .a = 0.5, .b = 2.0};
        in[1] = par_case_input(c, "b", PAR_DTYPE_F32, rank, xd, g), n_in = 2;
        break;
    }
    case HZ_LINEAR: {
        const int64_t wd[2] = {5, xd[1]}, bd[1] = {5};
        in[1] = par_case_const(c, "w", PAR_DTYPE_F32, 2, wd, su_weight());
        in[2] = par_case_const(c, "bias", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5)), n_in = 3;
        break;
    }
    case HZ_MATMUL: {
        const int64_t bd[2] = {xd[1], 5};
        in[1] = par_case_input(c, "b", PAR_DTYPE_F32, 2, bd, su_uniform(-1.0, 1.0)), n_in = 2;
        break;
    }
    case HZ_ROPE: {
        const int64_t td[2] = {xd[2], xd[3] / 2};
        in[1] = par_case_input(c, "cos", PAR_DTYPE_F32, 2, td, su_uniform(-1.0, 1.0));
        in[2] = par_case_input(c, "sin", PAR_DTYPE_F32, 2, td, su_uniform(-1.0, 1.0)), n_in = 3;
        break;
    }
    case HZ_SDPA: {
        const int64_t kd[4] = {xd[0], 1, xd[2], xd[3]};
        in[1] = par_case_input(c, "k", PAR_DTYPE_F32, 4, kd, su_uniform(-2.0, 2.0));
        in[2] = par_case_input(c, "v", PAR_DTYPE_F32, 4, kd, su_uniform(-2.0, 2.0)), n_in = 3;
        break;
    }
    case HZ_SCATTER: {
        const int64_t sd[4] = {xd[0], xd[1], 2, xd[3]};
        in[1] = par_case_input(c, "src", PAR_DTYPE_F32, 4, sd, su_uniform(-2.0, 2.0)), n_in = 2;
        break;
    }
    case HZ_CONV: {
        const int64_t wd[4] = {3, xd[1], 3, 3}, bd[1] = {3};
        in[1] = par_case_const(c, "w", PAR_DTYPE_F32, 4, wd, su_weight());
        in[2] = par_case_const(c, "bias", PAR_DTYPE_F32, 1, bd, su_uniform(-0.5, 0.5)), n_in = 3;
        break;
    }
    default: break;
    }
    par_out_spec y = {"y", 0, 0.0f, 0};
    if (o->kind == HZ_LNORM) {
        par_attr ns = par_a_ints("normalized_shape", 1, &xd[rank - 1]);
        par_case_output(c, par_case_node(c, o->op, n_in, in, 1, &ns, &y));
    } else {
        par_case_output(c, par_case_node(c, o->op, n_in, in, o->na, o->at, &y));
    }
    par_sweep_done(s, c);
}

void par_sweep_hazard(par_sweep *s)
{
    int n;
    const hz_op *ops = hz_ops(&n);
    const int n_shapes = par_sweep_level(s) == PAR_SUITE_FULL ? 2 : 1;
    for (int k = 0; k < n; k++) {
        if (ops[k].full_only && n_shapes == 1) continue;
        const par_op_info *info = par_op_find(ops[k].op);
        const int nonfinite_ok = info && (info->flags & PAR_OPF_NONFINITE);
        for (int si = 0; si < n_shapes; si++)
            for (int h = 1; h < PAR_HAZARD_COUNT; h++) {
                if (nonfinite_hazard((par_hazard)h) && !nonfinite_ok) continue;
                hz_emit(s, &ops[k], (par_hazard)h, SHAPES[si], 0);
            }
        if (!ops[k].quant) continue;
        for (int qd = 0; qd < 2; qd++) {
            const int dt = qd ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
            hz_emit(s, &ops[k], PAR_HAZARD_TIES, SHAPES[0], dt);
            hz_emit(s, &ops[k], PAR_HAZARD_SATURATION, SHAPES[0], dt);
        }
    }
}
