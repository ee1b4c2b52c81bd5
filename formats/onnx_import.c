/*
 * onnx_import.c - an ONNX model as a parity case: the driver. Initializers and Constant nodes become constants known
 * at import; graph inputs become case inputs (their data from the model's test data when asked, else generated);
 * each node is either folded (every input known at import and the op is shape arithmetic: Shape, Gather, Concat,
 * Unsqueeze, Cast, ...), fused with its QDQ neighbours, or mapped by the op table (onnx_ops.c) onto parity nodes.
 * Op types parity lacks are listed (op, first node, count) before anything is built, so one import names all of
 * them. The values it works on are onnx_values.c's.
 *
 * Must not: know an op's semantics (onnx_ops.c maps them); read anything but the model file and its test data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/onnx_int.h"

/* ---------------------------------------------------------------------------------------------------------------
 * The walk
 * ------------------------------------------------------------------------------------------------------------- */

static void note_missing(ox_imp *im, const par_onnx_node *n, const char *why)
{
    par_import_info *info = im->info;
    char op[64];
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) snprintf(op, sizeof op, "%.30s:%.30s", n->domain, n->op_type);
    else snprintf(op, sizeof op, "%.60s", n->op_type);
    for (int32_t i = 0; i < info->n_missing; i++)
        if (strcmp(info->missing[i].op, op) == 0) {
            info->missing[i].count++;
            return;
        }
    if (info->n_missing == PAR_IMPORT_MAX_MISSING) return;
    par_import_missing *e = &info->missing[info->n_missing++];
    snprintf(e->op, sizeof e->op, "%s", op);
    snprintf(e->first_node, sizeof e->first_node, "%.120s", n->name[0] ? n->name : (n->n_outputs ? n->outputs[0] : ""));
    snprintf(e->why, sizeof e->why, "%s", why ? why : "");
    e->count = 1;
}

static int node_foldable(ox_imp *im, const par_onnx_node *n)
{
    /* a shape is known at import whatever computes the tensor */
    if ((strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0) && n->n_inputs >= 1) {
        ox_val *x = ox_lookup(im, n->inputs[0]);
        return x && (x->is_const || x->v >= 0 || x->rank > 0);
    }
    if (!par_onnx_op_foldable(n->op_type)) return 0;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (!n->inputs[i][0]) continue;
        ox_val *x = ox_lookup(im, n->inputs[i]);
        if (!x || !x->is_const || x->v >= 0) return 0;
    }
    return 1;
}

/* A test data set's tensors: files input_0.pb, input_1.pb, ... (prefix "input") of folder dir. */
static par_onnx_model *load_pb(const char *dir, const char *prefix, int32_t k, par_msg *msg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, (int)k);
    struct stat st;
    if (stat(path, &st) != 0) return NULL;
    return par_onnx_tensor_load(path, msg);
}

static int dims_from_shapes(ox_imp *im, const char *spec, const char *name, ox_val *x)
{
    /* spec: "name=1,3,224,224;other=..." */
    size_t ln = strlen(name);
    for (const char *p = spec; p && *p;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > ln && strncmp(p, name, ln) == 0 && p[ln] == '=') {
            int32_t r = 0;
            const char *q = p + ln + 1;
            while (q < p + len && r < PAR_ONNX_MAX_RANK) {
                char *e;
                long long d = strtoll(q, &e, 10);
                if (e == q || d < 1) return ox_error(im, "--shape %.60s: bad dimension", name);
                x->dims[r++] = d;
                q = *e == ',' ? e + 1 : e;
                if (*e != ',' ) break;
            }
            x->rank = r;
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* Whether every element of a double tensor is a float exactly (NaN and infinities included): a node test's double
 * input is then the float input of the same test, and its expected doubles are judged as a float backend's output. */
static int doubles_are_floats(const par_onnx_tensor *t)
{
    const uint8_t *d = t->data;
    for (int64_t i = 0; d && i < t->numel; i++) {
        double v;
        memcpy(&v, d + 8 * i, 8);
        if (v == v && (double)(float)v != v) return 0;
    }
    return 1;
}

static int make_input(ox_imp *im, const par_onnx_value_info *vi, const par_onnx_model *td)
{
    ox_val *x = ox_define(im, vi->name);
    if (!x) return ox_error(im, "out of memory");
    x->dtype = vi->elem_type;
    if (td) {
        const par_onnx_tensor *t = &td->graph.initializers[0];
        x->rank = t->rank;
        memcpy(x->dims, t->dims, sizeof x->dims);
        if (t->dtype != vi->elem_type && vi->elem_type) return ox_error(im, "input '%.60s': test data is %s, the graph says %s",
                                                                       vi->name, par_onnx_dtype_name(t->dtype),
                                                                       par_onnx_dtype_name(vi->elem_type));
        x->dtype = t->dtype;
    } else if (!dims_from_shapes(im, im->c->description, vi->name, x)) {
        if (im->failed) return OX_ERROR;
        if (vi->rank < 0) return ox_unsupported(im, "input '%.60s' has no shape (give it with --shape)", vi->name);
        x->rank = vi->rank;
        for (int32_t i = 0; i < vi->rank; i++) {
            x->dims[i] = vi->dims[i];
            if (x->dims[i] < 0 && i == 0) x->dims[i] = 1; /* a symbolic batch: 1 */
            if (x->dims[i] < 0)
                return ox_unsupported(im, "input '%.60s' dimension %d is symbolic ('%.30s'): give the shape with "
                                      "--shape %.60s=D0,D1,...", vi->name, (int)i,
                                      vi->dim_params[i] ? vi->dim_params[i] : "?", vi->name);
        }
    }
    if (x->rank > PAR_ONNX_MAX_RANK) return ox_unsupported(im, "input '%.60s' has rank %d", vi->name, (int)x->rank);
    x->numel = 1;
    for (int32_t i = 0; i < x->rank; i++) {
        if (x->dims[i] < 0 || (x->dims[i] > 0 && x->numel > PAR_ONNX_MAX_ELEMS / x->dims[i]))
            return ox_unsupported(im, "input '%.60s' has more than 2^30 elements", vi->name);
        x->numel *= x->dims[i];
    }
    if (td) {
        /* the test's inputs are data known at import: a parameter input (axes, shape, scales) reads them; a tensor
         * input becomes a parity input with that data (an int64 one, which parity cannot take, a constant) */
        if (ox_load_tensor(im, x, &td->graph.initializers[0]) != OX_OK) return OX_UNSUPPORTED;
        x->from_data = 1;
        if (x->dtype == PAR_ONNX_INT64 || x->numel == 0 || x->dtype == PAR_ONNX_UINT8 || x->dtype == PAR_ONNX_INT8)
            return OX_OK;
    }
    if (!ox_rank_ok(im, x)) return OX_UNSUPPORTED;
    if (x->dtype == PAR_ONNX_UINT8 || x->dtype == PAR_ONNX_INT8) return OX_OK; /* made when its quantization is known */
    par_dtype dt = ox_parity_dtype(x);
    if (x->dtype == PAR_ONNX_DOUBLE && td && !doubles_are_floats(&td->graph.initializers[0]))
        return ox_unsupported(im, "input '%.60s' of type double with values that are not floats (parity runs a "
                              "double input as float when every value is one)", vi->name);
    if (dt == PAR_DTYPE_INVALID || (x->dtype == PAR_ONNX_DOUBLE && !td) || x->dtype == PAR_ONNX_BFLOAT16 ||
        x->dtype == PAR_ONNX_INT64)
        return ox_unsupported(im, "input '%.60s' of type %s (parity's inputs: float, float16, int32, bool, and "
                              "quantized 8-bit)", vi->name, par_onnx_dtype_name(x->dtype));
    char buf[128];
    const char *nm = ox_pname(im, vi->name, "input", buf, sizeof buf);
    int32_t v;
    if (td) {
        void *bytes = ox_const_bytes(im, x, dt);
        if (!bytes) return OX_UNSUPPORTED;
        v = par_case_input_data(im->c, nm, dt, x->rank, x->dims, bytes);
        free(bytes);
    } else {
        par_gen g = {.dist = PAR_DIST_UNIFORM, .a = -1, .b = 1};
        if (dt == PAR_DTYPE_BOOL) g.a = 0, g.b = 1;
        if (dt == PAR_DTYPE_I32) g.a = 0, g.b = 3;
        v = par_case_input(im->c, nm, dt, x->rank, x->dims, g);
    }
    if (v < 0) return ox_error(im, "input '%.60s': %s", vi->name, im->c->err.text);
    x->v = v;
    return OX_OK;
}



/* The case ID: the file's base name without .onnx; a node test's (model.onnx in a folder of test data) is
 * "onnx:" and the folder's name. */
static void case_id(const ox_job *job, char *id, size_t cap)
{
    const char *base = strrchr(job->path, '/');
    base = base ? base + 1 : job->path;
    snprintf(id, cap, "%s", base);
    char *dot = strrchr(id, '.');
    if (dot && strcmp(dot, ".onnx") == 0) *dot = 0;
    if (job->test_dir && strcmp(id, "model") == 0) {
        /* a node test: name the case after its folder */
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(base - job->path > 1 ? base - job->path - 1 : 0), job->path);
        const char *b2 = strrchr(tmp, '/');
        snprintf(id, cap, "onnx:%s", b2 ? b2 + 1 : tmp);
    }
}

/* 1. The op types parity lacks: all of them, before building anything. 0 when there are some (and no --ops). */
static int check_op_types(ox_imp *im, const par_onnx_graph *g, const ox_job *job, par_import_info *info,
                          par_msg *msg)
{
    int ok = 1;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const par_onnx_node *n = &g->nodes[i];
        int std = !n->domain[0] || strcmp(n->domain, "ai.onnx") == 0;
        if (!std || !par_onnx_op_mapper(n->op_type)) {
            if (std && par_onnx_op_foldable(n->op_type)) continue; /* folded when its inputs are known */
            note_missing(im, n, NULL);
        }
    }
    info->n_nodes = g->n_nodes;
    if (info->n_missing && !job->each) {
        par_msgf(msg, PAR_ERROR, "%s: %d op type%s parity lacks", job->path, (int)info->n_missing,
                 info->n_missing == 1 ? "" : "s");
        ok = 0;
    }
    return ok;
}

/* 2. Constants, then inputs (with their test data). */
static int import_inputs(ox_imp *im, const par_onnx_graph *g, const ox_job *job, par_msg *msg)
{
    int ok = 1;
    for (int32_t i = 0; ok && i < g->n_initializers; i++) {
        ox_val *x = ox_define(im, g->initializers[i].name);
        if (!x) ok = 0;
        else if (ox_load_tensor(im, x, &g->initializers[i]) == OX_ERROR) ok = 0;
        else if (im->why[0]) x->is_const = 0, x->numel = 0, im->why[0] = 0; /* unusable: an error where it is used */
    }
    int32_t k_in = 0;
    for (int32_t i = 0; ok && i < g->n_inputs; i++) {
        const par_onnx_value_info *vi = &g->inputs[i];
        ox_val *x = ox_lookup(im, vi->name);
        if (x && x->is_const) continue; /* an initializer listed as input (IR < 4) */
        par_onnx_model *td = NULL;
        if (job->test_dir) {
            td = load_pb(job->test_dir, "input", k_in, msg);
            if (!td && msg->text[0]) ok = 0;
        }
        k_in++;
        if (!ok) break;
        im->node = NULL;
        int rc = make_input(im, vi, td);
        par_onnx_free(td);
        if (rc == OX_ERROR) ok = 0;
        else if (rc == OX_UNSUPPORTED) {
            par_onnx_node fake = {.name = vi->name, .op_type = "(graph input)", .domain = ""};
            note_missing(im, &fake, im->why);
            ok = 0;
            par_msgf(msg, PAR_ERROR, "%s: %s", job->path, im->why);
        }
    }
    return ok;
}

/* 3. Nodes: folded, fused (QDQ), mapped, or sent to job->each as op cases. */
static int import_nodes(ox_imp *im, const par_onnx_graph *g, const ox_job *job, par_import_info *info,
                        par_msg *msg)
{
    int ok = 1;
    for (int32_t i = 0; ok && i < g->n_nodes; i++) {
        const par_onnx_node *n = &g->nodes[i];
        if (i == im->skip_node) continue; /* mapped with its producer (QDQ) */
        im->node = n;
        im->why[0] = 0;
        int rc;
        if (ox_qdq_try(im, i) == OX_OK) continue;
        if (im->failed) {
            ok = 0;
            break;
        }
        im->node = n;
        im->why[0] = 0;
        if (job->each && !node_foldable(im, n) && par_onnx_op_mapper(n->op_type) && job->each(job, im) != 0) {
            ok = 0;
            break;
        }
        im->node = n;
        if (node_foldable(im, n)) {
            rc = ox_fold_node(im);
            if (rc == OX_OK) info->n_folded++;
            if (rc == OX_UNSUPPORTED && par_onnx_op_mapper(n->op_type)) im->why[0] = 0, rc = ox_map_node(im);
        } else if (par_onnx_op_mapper(n->op_type)) {
            rc = ox_map_node(im);
        } else {
            rc = ox_unsupported(im, "its inputs are computed at run time (parity folds it only on constants)");
        }
        if (rc == OX_ERROR || im->failed) ok = 0;
        else if (rc == OX_UNSUPPORTED && job->each) {
            /* a node downstream of one that could not be mapped has no input to map: not a reason of its own */
            int upstream = 0;
            for (int32_t k = 0; k < n->n_inputs; k++)
                if (n->inputs[k][0] && !ox_lookup(im, n->inputs[k])) upstream = 1;
            if (par_onnx_op_mapper(n->op_type) && !upstream) note_missing(im, n, im->why[0] ? im->why : "not expressible");
        } else if (rc == OX_UNSUPPORTED) {
            note_missing(im, n, im->why[0] ? im->why : "not expressible");
            par_msgf(msg, PAR_ERROR, "%s: node '%.80s' (%.40s): %s", job->path, n->name, n->op_type, im->why);
            ok = 0;
        }
    }
    return ok;
}

/* 4. Outputs: each a node output (an input or a constant as output gets a copy node). */
static int import_outputs(ox_imp *im, const par_onnx_graph *g, par_case *c, const ox_job *job, par_msg *msg)
{
    int ok = 1;
    for (int32_t i = 0; ok && i < g->n_outputs; i++) {
        ox_val *x = ox_lookup(im, g->outputs[i].name);
        if (!x) {
            ok = 0;
            par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s' is never produced", job->path, g->outputs[i].name);
            break;
        }
        if (x->dq_of) {
            par_onnx_node fake = {.name = "", .op_type = "DequantizeLinear", .domain = ""};
            im->node = &fake;
            if (ox_tensor(im, x) < 0) {
                par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s': %s", job->path, x->name, im->why);
                ok = 0;
                break;
            }
            im->node = NULL;
        }
        int32_t v = x->v;
        const par_value *pv = v >= 0 ? ox_pv(im, v) : NULL;
        if (x->from_data && v < 0) {
            par_onnx_node fake = {.name = g->outputs[i].name, .op_type = "(graph output)", .domain = ""};
            note_missing(im, &fake, "computed at import from int64 data alone (parity has no 64-bit integers)");
            par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s' is computed at import from int64 data alone",
                     job->path, x->name);
            ok = 0;
            break;
        }
        if (v < 0 || pv->kind != PAR_VALUE_NODE) {
            /* an input or a constant as output: a copy node (parity's outputs are node outputs) */
            par_onnx_node fake = {.name = "", .op_type = "Identity", .domain = "", .n_outputs = 0};
            im->node = &fake;
            int32_t src = ox_tensor(im, x);
            if (src < 0) {
                note_missing(im, &fake, im->why);
                par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s': %s", job->path, x->name, im->why);
                ok = 0;
                break;
            }
            const par_value *sv = ox_pv(im, src);
            par_attr a = par_a_ints("shape", sv->rank, sv->dims);
            char buf[128];
            par_out_spec s = {.name = ox_pname(im, g->outputs[i].name, "output", buf, sizeof buf)};
            par_msg m2;
            int32_t node = par_graph_add_node(c->graph, "reshape", NULL, 1, &src, 1, &a, &s, &m2);
            im->node = NULL;
            if (node < 0) {
                ok = 0;
                par_msgf(msg, PAR_ERROR, "%s: graph output '%.80s': %s", job->path, x->name, m2.text);
                break;
            }
            v = par_graph_desc_of(c->graph)->nodes[node].outputs[0];
        }
        par_case_output(c, v);
    }
    return ok;
}

/* 5. The expected outputs of the test data. */
static int load_expected(ox_imp *im, par_case *c, const ox_job *job, par_msg *msg)
{
    int ok = 1;
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    c->expected = calloc((size_t)d->n_outputs, sizeof *c->expected);
    for (int32_t k = 0; c->expected && k < d->n_outputs; k++) {
        par_msg m2 = {{0}};
        par_onnx_model *td = load_pb(job->test_dir, "output", k, &m2);
        if (!td) {
            if (m2.text[0]) par_msgf(msg, PAR_ERROR, "%s", m2.text), ok = 0;
            break;
        }
        const par_value *pv = &d->values[d->outputs[k]];
        ox_val tmp = {.name = "expected", .q_axis = -1};
        tmp.quantized = pv->dtype == PAR_DTYPE_QU8 || pv->dtype == PAR_DTYPE_QS8;
        im->why[0] = 0;
        int rc = ox_load_tensor(im, &tmp, &td->graph.initializers[0]);
        if (rc == OX_OK && tmp.numel != pv->numel) {
            par_msgf(msg, PAR_ERROR, "%s: output_%d.pb has %lld elements, the output %lld", job->test_dir, (int)k,
                     (long long)tmp.numel, (long long)pv->numel);
            ok = 0;
        } else if (rc == OX_OK) {
            c->expected[k] = ox_const_bytes(im, &tmp, pv->dtype);
        }
        free(tmp.ints);
        free(tmp.floats);
        par_onnx_free(td);
        if (!ok) break;
    }
    return ok;
}

par_case *ox_import_model(const par_onnx_model *m, const ox_job *job, const par_import_opts *o,
                              par_import_info *info, par_msg *msg)
{
    const par_onnx_graph *g = &m->graph;
    char id[256];
    case_id(job, id, sizeof id);
    par_case *c = par_case_create(id, o && o->seed ? o->seed : 1);
    if (!c) return par_msgf(msg, PAR_ERROR, "out of memory"), NULL;
    free(c->origin);
    c->origin = strdup(job->path);
    ox_imp im = {.c = c, .m = m, .origin = job->path, .info = info, .msg = msg, .skip_node = -1};
    im.opset = par_onnx_opset_version(m, "");
    /* the --shape spec travels in description until the case is built (then replaced) */
    c->description = job->shapes ? strdup(job->shapes) : NULL;

    int ok = check_op_types(&im, g, job, info, msg);
    if (ok) ok = import_inputs(&im, g, job, msg);
    free(c->description);
    c->description = NULL;

    if (ok) ok = import_nodes(&im, g, job, info, msg);
    im.node = NULL;
    if (job->each) {
        /* the op cases went to job->each; the whole graph is not built */
        ox_free_vals(&im);
        par_case_destroy(c);
        if (!ok) return NULL;
        return (par_case *)job; /* non-NULL: success */
    }

    if (ok) ok = import_outputs(&im, g, c, job, msg);
    if (ok && g->n_outputs == 0) ok = 0, par_msgf(msg, PAR_ERROR, "%s: the graph has no outputs", job->path);
    if (ok && par_case_finish(c) != PAR_OK) {
        ok = 0;
        par_msgf(msg, PAR_ERROR, "%s: %s", job->path, c->err.text);
    }

    if (ok && job->test_dir) ok = load_expected(&im, c, job, msg);
    ox_free_vals(&im);
    if (!ok) {
        par_case_destroy(c);
        return NULL;
    }
    return c;
}

par_case *par_onnx_import_file(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg)
{
    par_import_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    msg->text[0] = 0;
    par_onnx_model *m = par_onnx_load(path, msg);
    if (!m) return NULL;
    ox_job job = {.path = path, .shapes = o ? o->input_shapes : NULL};
    char dir[4096];
    if (o && o->test_data) {
        /* test_data_set_0 beside the model */
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s/test_data_set_0", slash ? (int)(slash - path) : 1, slash ? path : ".");
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) job.test_dir = dir;
    }
    par_case *c = ox_import_model(m, &job, o, info, msg);
    par_onnx_free(m);
    return c;
}
