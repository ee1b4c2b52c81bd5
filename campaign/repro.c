/*
 * repro.c - the standalone C program that reproduces a finding (reduce.h, par_repro_write_c). The program needs
 * nothing of parity but its public header (and, for a built-in backend, the library that holds it): the graph is
 * spelled out as the read-only view a backend receives (par_graph_desc with its values, nodes and attributes), the
 * input and constant data as arrays, and the reference's values and error budgets for the backend's precision
 * profile as arrays computed here, when the file is written. It loads the backend, applies the instance's knobs as
 * exec/ does, runs the graph once, and checks every output element with the oracle's element rule (docs/oracle.md):
 * |backend - reference| <= budget, a finite reference matched by a finite value, an infinite one by the same infinity,
 * NaN by NaN; for quantized outputs the integers in [ql - budget, qh + budget]. The bias and tie rules of quantized
 * outputs are not checked: a finding that only they show does not reproduce here, and the program says so.
 *
 * Numbers are written so that the compiler reads back the same bits: floats with 9 significant digits and an f
 * suffix, doubles with 17, f16 as their bit patterns; NaN and infinities through <math.h>'s macros.
 */
#include "reduce.h"
#include "oracle/oracle.h"
#include "reference/reference.h"
#include "core/paths.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The libraries a program linking build/libparity.a needs (the Makefile passes the build's own). */
#ifndef PAR_LINK_LIBS
#define PAR_LINK_LIBS "-ljson-c -ldl -lpthread -lm"
#endif
/* The sanitizer flags of a sanitized build (empty otherwise): its plugins and library need their runtime. */
#ifndef PAR_REPRO_CFLAGS
#define PAR_REPRO_CFLAGS ""
#endif

/* ---- where the library is -------------------------------------------------------------------------------------- */

/* libparity.a of the build folder this executable runs from (build/parity, build/tests/test_x), else the installed
 * one, PREFIX/lib/parity/libparity.a (core/paths.h). */
static void lib_path(char *buf, size_t len)
{
    if (par_build_dir()[0]) snprintf(buf, len, "%s/libparity.a", par_build_dir());
    else snprintf(buf, len, "%s/lib/parity/libparity.a", par_prefix_dir());
}

/* The folder of parity_backend.h: the source tree's core/, else the installed PREFIX/include/parity. */
static void include_dir(char *buf, size_t len)
{
    if (par_tree_dir()[0]) snprintf(buf, len, "%s/core", par_tree_dir());
    else snprintf(buf, len, "%s/include/parity", par_prefix_dir());
}

void par_repro_exe_path(const char *c_path, char *buf, size_t len)
{
    size_t n = strlen(c_path);
    if (n > 2 && strcmp(c_path + n - 2, ".c") == 0) snprintf(buf, len, "%.*s", (int)(n - 2), c_path);
    else snprintf(buf, len, "%s.bin", c_path);
    if (!strchr(buf, '/')) {
        /* a bare name runs from the current folder */
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "./%s", buf);
        snprintf(buf, len, "%s", tmp);
    }
}

void par_repro_compile_line(const par_backend_inst *inst, const char *c_path, char *buf, size_t len)
{
    char exe[4096];
    par_repro_exe_path(c_path, exe, sizeof exe);
    const char *san = PAR_REPRO_CFLAGS;
    char inc[4200];
    include_dir(inc, sizeof inc);
    if (inst->plugin_path[0]) {
        snprintf(buf, len, "cc -std=c11 -Wall -Werror%s%s -I%s %s -o %s -ldl", san[0] ? " " : "", san, inc, c_path,
                 exe);
    } else {
        char lib[4096];
        lib_path(lib, sizeof lib);
        snprintf(buf, len, "cc -std=c11 -Wall -Werror%s%s -I%s %s %s -o %s %s", san[0] ? " " : "", san, inc, c_path,
                 lib, exe, PAR_LINK_LIBS);
    }
}

/* ---- C literals -------------------------------------------------------------------------------------------------- */

/* A C string literal of s (quotes included). */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) fprintf(f, "\\%03o", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* A double (suffix "") or float (suffix "f") literal that reads back as x. */
static void put_num(FILE *f, double x, int is_float)
{
    if (isnan(x)) {
        fputs("NAN", f);
        return;
    }
    if (isinf(x)) {
        fputs(x < 0 ? "-INFINITY" : "INFINITY", f);
        return;
    }
    char b[64];
    snprintf(b, sizeof b, is_float ? "%.9g" : "%.17g", x);
    if (!strpbrk(b, ".e")) strcat(b, ".0");
    fprintf(f, "%s%s", b, is_float ? "f" : "");
}

static const char *c_type(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return "float";
    case PAR_DTYPE_F16: return "uint16_t";
    case PAR_DTYPE_F64: return "double";
    case PAR_DTYPE_QU8: return "uint8_t";
    case PAR_DTYPE_QS8: return "int8_t";
    case PAR_DTYPE_I32: return "int32_t";
    case PAR_DTYPE_BOOL: return "uint8_t";
    default: return "uint8_t";
    }
}

static const char *dtype_macro(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return "PAR_DTYPE_F32";
    case PAR_DTYPE_F16: return "PAR_DTYPE_F16";
    case PAR_DTYPE_F64: return "PAR_DTYPE_F64";
    case PAR_DTYPE_QU8: return "PAR_DTYPE_QU8";
    case PAR_DTYPE_QS8: return "PAR_DTYPE_QS8";
    case PAR_DTYPE_I32: return "PAR_DTYPE_I32";
    case PAR_DTYPE_BOOL: return "PAR_DTYPE_BOOL";
    default: return "PAR_DTYPE_INVALID";
    }
}

/* static const <type> name[] = {...}; for n elements of dtype dt at data (raw bytes of that dtype). */
static void put_data(FILE *f, const char *name, par_dtype dt, const void *data, int64_t n)
{
    fprintf(f, "static const %s %s[%lld] = {", c_type(dt), name, (long long)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        fputs(i % 8 ? " " : "\n    ", f);
        switch (dt) {
        case PAR_DTYPE_F32: put_num(f, ((const float *)data)[i], 1); break;
        case PAR_DTYPE_F16: fprintf(f, "0x%04x", (unsigned)((const uint16_t *)data)[i]); break;
        case PAR_DTYPE_F64: put_num(f, ((const double *)data)[i], 0); break;
        case PAR_DTYPE_QS8: fprintf(f, "%d", (int)((const int8_t *)data)[i]); break;
        case PAR_DTYPE_I32: fprintf(f, "%ld", (long)((const int32_t *)data)[i]); break;
        default: fprintf(f, "%u", (unsigned)((const uint8_t *)data)[i]); break;
        }
        fputc(',', f);
    }
    fputs(n ? "\n};\n" : "0};\n", f);
}

static void put_doubles(FILE *f, const char *name, const double *x, int64_t n)
{
    fprintf(f, "static const double %s[%lld] = {", name, (long long)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        fputs(i % 6 ? " " : "\n    ", f);
        put_num(f, x[i], 0);
        fputc(',', f);
    }
    fputs(n ? "\n};\n" : "0};\n", f);
}

/* ---- the program ------------------------------------------------------------------------------------------------- */

static void put_graph(FILE *f, const par_graph_desc *d, void **inputs)
{
    fputs("\n/* ---- the graph: the view a backend receives (core/parity_backend.h) ---- */\n\n", f);
    for (int32_t v = 0; v < d->n_values; v++) {
        const par_value *val = &d->values[v];
        char name[64];
        if (val->kind == PAR_VALUE_CONST) {
            snprintf(name, sizeof name, "v%d_data", (int)v);
            put_data(f, name, val->dtype, val->data, val->numel);
        }
        if (val->quant_axis >= 0 && val->channel_scales) {
            fprintf(f, "static const float v%d_scales[] = {", (int)v);
            for (int64_t i = 0; i < val->dims[val->quant_axis]; i++) {
                put_num(f, val->channel_scales[i], 1);
                fputs(", ", f);
            }
            fputs("};\n", f);
        }
    }
    for (int32_t i = 0; i < d->n_inputs; i++) {
        const par_value *val = &d->values[d->inputs[i]];
        char name[64];
        snprintf(name, sizeof name, "v%d_data", (int)d->inputs[i]);
        put_data(f, name, val->dtype, inputs[i], val->numel);
    }
    fprintf(f, "\nstatic const par_value values[%d] = {\n", (int)d->n_values);
    for (int32_t v = 0; v < d->n_values; v++) {
        const par_value *val = &d->values[v];
        fprintf(f, "    {.name = ");
        put_str(f, val->name);
        fprintf(f, ", .dtype = %s, .rank = %d, .dims = {", dtype_macro(val->dtype), (int)val->rank);
        for (int32_t a = 0; a < val->rank; a++) fprintf(f, "%s%lld", a ? ", " : "", (long long)val->dims[a]);
        fprintf(f, "}, .numel = %lld,\n     .kind = %s, .producer = %d, .data = ", (long long)val->numel,
                val->kind == PAR_VALUE_INPUT ? "PAR_VALUE_INPUT"
                : val->kind == PAR_VALUE_CONST ? "PAR_VALUE_CONST" : "PAR_VALUE_NODE", (int)val->producer);
        if (val->kind == PAR_VALUE_CONST) fprintf(f, "v%d_data", (int)v);
        else fputs("NULL", f);
        fputs(", .scale = ", f);
        put_num(f, val->scale, 1);
        fprintf(f, ", .zero_point = %d, .quant_axis = %d, .channel_scales = ", (int)val->zero_point,
                (int)val->quant_axis);
        if (val->quant_axis >= 0 && val->channel_scales) fprintf(f, "v%d_scales},\n", (int)v);
        else fputs("NULL},\n", f);
    }
    fputs("};\n\n", f);
    for (int32_t k = 0; k < d->n_nodes; k++) {
        const par_node *n = &d->nodes[k];
        fprintf(f, "static const int32_t n%d_in[] = {", (int)k);
        for (int32_t i = 0; i < n->n_inputs; i++) fprintf(f, "%s%d", i ? ", " : "", (int)n->inputs[i]);
        fprintf(f, "%s};\nstatic const int32_t n%d_out[] = {", n->n_inputs ? "" : "0", (int)k);
        for (int32_t i = 0; i < n->n_outputs; i++) fprintf(f, "%s%d", i ? ", " : "", (int)n->outputs[i]);
        fputs("};\n", f);
        for (int32_t a = 0; a < n->n_attrs; a++) {
            const par_attr *at = &n->attrs[a];
            if (at->type == PAR_ATTR_INTS) {
                fprintf(f, "static const int64_t n%d_a%d[] = {", (int)k, (int)a);
                for (int32_t i = 0; i < at->count; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)at->ints[i]);
                fprintf(f, "%s};\n", at->count ? "" : "0");
            } else if (at->type == PAR_ATTR_FLOATS) {
                fprintf(f, "static const double n%d_a%d[] = {", (int)k, (int)a);
                for (int32_t i = 0; i < at->count; i++) {
                    if (i) fputs(", ", f);
                    put_num(f, at->floats[i], 0);
                }
                fprintf(f, "%s};\n", at->count ? "" : "0");
            }
        }
        if (n->n_attrs) {
            fprintf(f, "static const par_attr n%d_attrs[] = {\n", (int)k);
            for (int32_t a = 0; a < n->n_attrs; a++) {
                const par_attr *at = &n->attrs[a];
                fputs("    {.name = ", f);
                put_str(f, at->name);
                switch (at->type) {
                case PAR_ATTR_INT: fprintf(f, ", .type = PAR_ATTR_INT, .i = %lld},\n", (long long)at->i); break;
                case PAR_ATTR_FLOAT:
                    fputs(", .type = PAR_ATTR_FLOAT, .f = ", f);
                    put_num(f, at->f, 0);
                    fputs("},\n", f);
                    break;
                case PAR_ATTR_INTS:
                    fprintf(f, ", .type = PAR_ATTR_INTS, .count = %d, .ints = n%d_a%d},\n", (int)at->count, (int)k,
                            (int)a);
                    break;
                case PAR_ATTR_FLOATS:
                    fprintf(f, ", .type = PAR_ATTR_FLOATS, .count = %d, .floats = n%d_a%d},\n", (int)at->count,
                            (int)k, (int)a);
                    break;
                case PAR_ATTR_STRING:
                    fputs(", .type = PAR_ATTR_STRING, .s = ", f);
                    put_str(f, at->s);
                    fputs("},\n", f);
                    break;
                }
            }
            fputs("};\n", f);
        }
    }
    fprintf(f, "\nstatic const par_node nodes[%d] = {\n", (int)(d->n_nodes ? d->n_nodes : 1));
    for (int32_t k = 0; k < d->n_nodes; k++) {
        const par_node *n = &d->nodes[k];
        fputs("    {.name = ", f);
        put_str(f, n->name);
        fputs(", .op = ", f);
        put_str(f, n->op);
        fprintf(f, ", .n_inputs = %d, .inputs = n%d_in, .n_outputs = %d, .outputs = n%d_out, .n_attrs = %d, "
                   ".attrs = ", (int)n->n_inputs, (int)k, (int)n->n_outputs, (int)k, (int)n->n_attrs);
        if (n->n_attrs) fprintf(f, "n%d_attrs},\n", (int)k);
        else fputs("NULL},\n", f);
    }
    fputs("};\n", f);
    fputs("static const int32_t graph_inputs[] = {", f);
    for (int32_t i = 0; i < d->n_inputs; i++) fprintf(f, "%s%d", i ? ", " : "", (int)d->inputs[i]);
    fprintf(f, "%s};\nstatic const int32_t graph_outputs[] = {", d->n_inputs ? "" : "0");
    for (int32_t i = 0; i < d->n_outputs; i++) fprintf(f, "%s%d", i ? ", " : "", (int)d->outputs[i]);
    fputs("};\nstatic const par_graph_desc graph = {.name = ", f);
    put_str(f, d->name);
    fprintf(f, ", .n_values = %d, .values = values, .n_nodes = %d, .nodes = nodes,\n"
               "                                     .n_inputs = %d, .inputs = graph_inputs, .n_outputs = %d, "
               ".outputs = graph_outputs};\n",
            (int)d->n_values, (int)d->n_nodes, (int)d->n_inputs, (int)d->n_outputs);
    fputs("static const void *const input_data[] = {", f);
    for (int32_t i = 0; i < d->n_inputs; i++) fprintf(f, "%sv%d_data", i ? ", " : "", (int)d->inputs[i]);
    fprintf(f, "%s};\n", d->n_inputs ? "" : "NULL");
}

/* The reference's value, budget and (quantized outputs) labelled range of every output element. */
static void put_reference(FILE *f, const par_graph_desc *d, const par_ref_result *rr, const double *const *ref_values)
{
    fputs("\n/* ---- the reference: value and error budget of every output element (parity's float64 interpreter,\n"
          " * this backend's precision profile) ---- */\n\n",
          f);
    for (int32_t j = 0; j < d->n_outputs; j++) {
        const par_rt *t = &rr->values[d->outputs[j]];
        char name[64];
        snprintf(name, sizeof name, "out%d_ref", (int)j);
        put_doubles(f, name, ref_values && ref_values[j] ? ref_values[j] : t->v, t->numel);
        snprintf(name, sizeof name, "out%d_budget", (int)j);
        put_doubles(f, name, t->e, t->numel);
        if (t->ql && t->qh) {
            snprintf(name, sizeof name, "out%d_ql", (int)j);
            put_doubles(f, name, t->ql, t->numel);
            snprintf(name, sizeof name, "out%d_qh", (int)j);
            put_doubles(f, name, t->qh, t->numel);
        }
    }
    fputs("static const expect_t expects[] = {\n", f);
    for (int32_t j = 0; j < d->n_outputs; j++) {
        const par_rt *t = &rr->values[d->outputs[j]];
        fprintf(f, "    {%d, out%d_ref, out%d_budget, ", (int)d->outputs[j], (int)j, (int)j);
        if (t->ql && t->qh) fprintf(f, "out%d_ql, out%d_qh},\n", (int)j, (int)j);
        else fputs("NULL, NULL},\n", f);
    }
    fputs("};\n", f);
}

/* The fixed part of the program: loading, knobs, the run, the element rule, the report. */
static const char *const repro_main =
    "\n/* ---- run and check ---- */\n"
    "\n"
    "/* An f16 bit pattern as a float. */\n"
    "static float half_to_float(uint16_t h)\n"
    "{\n"
    "    int e = (h >> 10) & 31, m = h & 1023;\n"
    "    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);\n"
    "    return (h & 0x8000) ? -v : v;\n"
    "}\n"
    "\n"
    "/* Element i of a buffer of dtype dt, as stored (quantized dtypes: the integer). */\n"
    "static double element(par_dtype dt, const void *p, int64_t i)\n"
    "{\n"
    "    switch (dt) {\n"
    "    case PAR_DTYPE_F32: return ((const float *)p)[i];\n"
    "    case PAR_DTYPE_F16: return half_to_float(((const uint16_t *)p)[i]);\n"
    "    case PAR_DTYPE_QS8: return ((const int8_t *)p)[i];\n"
    "    case PAR_DTYPE_I32: return ((const int32_t *)p)[i];\n"
    "    default: return ((const uint8_t *)p)[i];\n"
    "    }\n"
    "}\n"
    "\n"
    "/* How far element i of output x is out of its budget: 0 inside, |d| / budget above 1 outside, INFINITY for a\n"
    " * non-finite mismatch (the oracle's element rule, docs/oracle.md). */\n"
    "static double badness(const expect_t *x, double got, int64_t i, double *ratio)\n"
    "{\n"
    "    double ref = x->ref[i], b = x->budget[i];\n"
    "    *ratio = 0;\n"
    "    if (isnan(ref)) return isnan(got) ? 0 : (*ratio = INFINITY);\n"
    "    if (isinf(ref)) return got == ref ? 0 : (*ratio = INFINITY);\n"
    "    if (!isfinite(got)) return *ratio = INFINITY;\n"
    "    double lo = (x->ql ? x->ql[i] : ref) - b, hi = (x->qh ? x->qh[i] : ref) + b;\n"
    "    double d = fabs(got - ref);\n"
    "    *ratio = b > 0 ? d / b : (d > 0 ? INFINITY : 0);\n"
    "    return got >= lo && got <= hi ? 0 : *ratio;\n"
    "}\n"
    "\n"
    "int main(void)\n"
    "{\n"
    "    par_msg msg = {{0}};\n"
    "    const par_backend *be = load_backend();\n"
    "    if (!be) return 2;\n"
    "    void *ctx = NULL, *prepared = NULL;\n"
    "    par_status st = be->init(&ctx, &msg);\n"
    "    if (st != PAR_OK) return fprintf(stderr, \"repro: init: %s\\n\", msg.text), 2;\n"
    "    for (int i = 0; i < N_KNOBS; i++) {\n"
    "        void *sym = be->get_proc ? be->get_proc(ctx, PAR_PROC_SET_KNOB) : NULL;\n"
    "        par_set_knob_fn set = NULL;\n"
    "        if (sym) memcpy(&set, &sym, sizeof set); /* object pointer to function pointer, as for dlsym */\n"
    "        if (!set || set(ctx, knob_key[i], knob_val[i], &msg) != PAR_OK)\n"
    "            return fprintf(stderr, \"repro: knob %s=%s: %s\\n\", knob_key[i], knob_val[i],\n"
    "                           set ? msg.text : \"the backend has no knobs\"), 2;\n"
    "    }\n"
    "    for (int32_t k = 0; k < graph.n_nodes; k++)\n"
    "        if (be->supports(ctx, &graph, k, &msg) != PAR_OK)\n"
    "            return fprintf(stderr, \"repro: node %s (%s) unsupported: %s\\n\", nodes[k].name, nodes[k].op,\n"
    "                           msg.text), 2;\n"
    "    if ((st = be->prepare(ctx, &graph, &prepared, &msg)) != PAR_OK)\n"
    "        return fprintf(stderr, \"repro: prepare: %s\\n\", msg.text), 2;\n"
    "    void *algo_sym = be->get_proc ? be->get_proc(ctx, PAR_PROC_NODE_ALGO) : NULL;\n"
    "    par_node_algo_fn algo = NULL;\n"
    "    if (algo_sym) memcpy(&algo, &algo_sym, sizeof algo);\n"
    "    for (int32_t k = 0; algo && k < graph.n_nodes; k++)\n"
    "        if (algo(ctx, prepared, k) != PAR_ALGO_DIRECT)\n"
    "            printf(\"note: node %s declares algorithm %d: these budgets assume direct summation\\n\",\n"
    "                   nodes[k].name, (int)algo(ctx, prepared, k));\n"
    "    void *outs[sizeof graph_outputs / sizeof graph_outputs[0]];\n"
    "    for (int32_t j = 0; j < graph.n_outputs; j++) {\n"
    "        const par_value *v = &values[graph_outputs[j]];\n"
    "        outs[j] = calloc((size_t)v->numel, v->dtype == PAR_DTYPE_F32 || v->dtype == PAR_DTYPE_I32 ? 4 :\n"
    "                                           v->dtype == PAR_DTYPE_F16 ? 2 : 1);\n"
    "        if (!outs[j]) return fprintf(stderr, \"repro: out of memory\\n\"), 2;\n"
    "    }\n"
    "    if (be->bind(ctx, prepared, input_data, outs, &msg) != PAR_OK)\n"
    "        return fprintf(stderr, \"repro: bind: %s\\n\", msg.text), 2;\n"
    "    if (be->run(ctx, prepared, &msg) != PAR_OK) return fprintf(stderr, \"repro: run: %s\\n\", msg.text), 2;\n"
    "\n"
    "    /* the worst elements, failing or not: the WORST largest ratios */\n"
    "    enum { WORST = 8 };\n"
    "    struct { int32_t out; int64_t i; double ratio, bad; } worst[WORST];\n"
    "    int n_worst = 0;\n"
    "    int64_t failing = 0, total = 0;\n"
    "    for (int32_t j = 0; j < graph.n_outputs; j++) {\n"
    "        const par_value *v = &values[graph_outputs[j]];\n"
    "        for (int64_t i = 0; i < v->numel; i++, total++) {\n"
    "            double ratio, bad = badness(&expects[j], element(v->dtype, outs[j], i), i, &ratio);\n"
    "            failing += bad > 0;\n"
    "            int at = n_worst < WORST ? n_worst++ : WORST;\n"
    "            while (at > 0 && (bad > worst[at - 1].bad || (bad == worst[at - 1].bad && ratio > worst[at - 1].ratio))) {\n"
    "                if (at < WORST) worst[at] = worst[at - 1];\n"
    "                at--;\n"
    "            }\n"
    "            if (at < WORST) worst[at].out = j, worst[at].i = i, worst[at].ratio = ratio, worst[at].bad = bad;\n"
    "        }\n"
    "    }\n"
    "    printf(\"%-16s %-24s %-16s %-24s %-10s %s\\n\", \"output\", \"reference\", \"budget\", \"backend\", \"|d|/budget\",\n"
    "           \"     element\");\n"
    "    for (int w = 0; w < n_worst; w++) {\n"
    "        const expect_t *x = &expects[worst[w].out];\n"
    "        const par_value *v = &values[graph_outputs[worst[w].out]];\n"
    "        int64_t i = worst[w].i;\n"
    "        int64_t co[PAR_MAX_RANK], rest = i;\n"
    "        for (int32_t a = v->rank - 1; a >= 0; a--) {\n"
    "            co[a] = rest % v->dims[a];\n"
    "            rest /= v->dims[a];\n"
    "        }\n"
    "        printf(\"%-16s %-24.17g %-16.6g %-24.17g %-10.3g %s[\", v->name, x->ref[i], x->budget[i],\n"
    "               element(v->dtype, outs[worst[w].out], i), worst[w].ratio, worst[w].bad > 0 ? \"FAIL \" : \"ok   \");\n"
    "        for (int32_t a = 0; a < v->rank; a++) printf(\"%s%lld\", a ? \",\" : \"\", (long long)co[a]);\n"
    "        printf(\"]\\n\");\n"
    "    }\n"
    "    be->release(ctx, prepared);\n"
    "    be->destroy(ctx);\n"
    "    for (int32_t j = 0; j < graph.n_outputs; j++) free(outs[j]);\n"
    "    if (failing) {\n"
    "        printf(\"REPRODUCED: %lld of %lld elements outside their budgets\\n\", (long long)failing, (long long)total);\n"
    "        return 1;\n"
    "    }\n"
    "    printf(\"not reproduced: every element of %lld within its budget\\n\", (long long)total);\n"
    "    return 0;\n"
    "}\n";

static void put_loader(FILE *f, const par_backend_inst *inst)
{
    fputs("\n/* ---- the backend ---- */\n\n", f);
    if (inst->plugin_path[0]) {
        char real[4096];
        const char *path = realpath(inst->plugin_path, real) ? real : inst->plugin_path;
        fputs("static const par_backend *load_backend(void)\n{\n    const char *path = ", f);
        put_str(f, path);
        fputs(";\n"
              "    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);\n"
              "    if (!h) return fprintf(stderr, \"repro: %s\\n\", dlerror()), (const par_backend *)NULL;\n"
              "    void *sym = dlsym(h, PAR_BACKEND_ENTRY_SYMBOL);\n"
              "    if (!sym) return fprintf(stderr, \"repro: %s: no %s\\n\", path, PAR_BACKEND_ENTRY_SYMBOL), "
              "(const par_backend *)NULL;\n"
              "    par_backend_entry_fn entry;\n"
              "    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer, as POSIX dlsym requires */\n"
              "    return entry(PAR_BACKEND_API_VERSION);\n}\n",
              f);
    } else {
        fprintf(f, "const par_backend *par_backend_%s(void); /* in libparity.a */\n\n"
                   "static const par_backend *load_backend(void)\n{\n    return par_backend_%s();\n}\n",
                inst->be->name, inst->be->name);
    }
    fprintf(f, "\nenum { N_KNOBS = %d };\nstatic const char *const knob_key[] = {", (int)inst->n_knobs);
    for (int32_t i = 0; i < inst->n_knobs; i++) {
        if (i) fputs(", ", f);
        put_str(f, inst->knob_key[i]);
    }
    fprintf(f, "%s};\nstatic const char *const knob_val[] = {", inst->n_knobs ? "" : "\"\"");
    for (int32_t i = 0; i < inst->n_knobs; i++) {
        if (i) fputs(", ", f);
        put_str(f, inst->knob_val[i]);
    }
    fprintf(f, "%s};\n", inst->n_knobs ? "" : "\"\"");
}

par_status par_repro_write_c(const par_case *c, const par_backend_inst *inst, const double *const *ref_values,
                             const char *path, par_msg *msg)
{
    if (!c || !c->graph || c->status != PAR_OK || !inst || !inst->be || !path)
        return par_msgf(msg, PAR_ERROR, "repro: not a valid case or backend");
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    void **inputs = NULL;
    if (par_case_make_inputs(c, &inputs, msg) != PAR_OK) return PAR_ERROR;
    par_prec prec = par_prec_of_backend(inst);
    par_ref_result *rr = NULL;
    par_msg rm = {{0}};
    if (par_ref_run(d, &prec, (const void *const *)inputs, &rr, &rm) != PAR_OK) {
        par_case_free_inputs(c, inputs);
        return par_msgf(msg, PAR_ERROR, "repro: the reference refused case '%s': %s", c->id, rm.text);
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        par_ref_result_destroy(rr);
        par_case_free_inputs(c, inputs);
        return par_msgf(msg, PAR_ERROR, "%s: cannot write: %s", path, strerror(errno));
    }
    char line[8192], exe[4096];
    par_repro_compile_line(inst, path, line, sizeof line);
    par_repro_exe_path(path, exe, sizeof exe);
    fputs("/*\n * A standalone reproduction written by parity: case ", f);
    fprintf(f, "'%s' on backend '%s' (%d nodes).\n", c->id, inst->label, (int)d->n_nodes);
    fputs(" * The graph, its input and constant data and the reference's values and error budgets are inline; the\n"
          " * program needs parity's public header only", f);
    fputs(inst->plugin_path[0] ? " and loads the backend plugin with dlopen.\n"
                               : ", and links the built-in backend from parity's library.\n", f);
    fprintf(f, " *\n * Build and run:\n *   %s && %s\n", line, exe);
    fputs(" *\n * Exit status: 1 the failure reproduces (some element outside its budget), 0 it does not, 2 the backend\n"
          " * did not run the graph. Only the element rule is checked: a quantized output's bias and tie rules are not.\n"
          " */\n",
          f);
    fputs("#define _POSIX_C_SOURCE 200809L\n\n", f);
    if (inst->plugin_path[0]) fputs("#include <dlfcn.h>\n", f);
    fputs("#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
          "#include \"parity_backend.h\"\n\n"
          "/* An output's reference: value, budget, and for quantized outputs the labelled range [ql, qh]. */\n"
          "typedef struct expect_t {\n    int32_t value;\n    const double *ref, *budget, *ql, *qh;\n} expect_t;\n",
          f);
    put_graph(f, d, inputs);
    put_reference(f, d, rr, ref_values);
    put_loader(f, inst);
    fputs(repro_main, f);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    par_ref_result_destroy(rr);
    par_case_free_inputs(c, inputs);
    if (bad) return par_msgf(msg, PAR_ERROR, "%s: write error", path);
    return PAR_OK;
}
