/*
 * select.c - resolves what to run: case files and folders, suites (sweeps and model files), --case IDs, op and ID
 * filters, and the deterministic shard. File cases are loaded (and so validated) here, before anything runs: a
 * malformed file stops the run with exit code 2 and a message naming the file and the field.
 */
#include <dirent.h>
#include <regex.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

#include "case_mem.h"
#include "cases/sweep.h"
#include "formats/model.h"
#include "formats/onnx_suite.h"
#include "gen/gen.h"
#include "core/paths.h"

const char *par_cases_dir(void)
{
    const char *env = getenv("PARITY_CASES_DIR");
    if (env && *env) return env;
    /* the source tree's cases/ when run from its build folder, else PREFIX/share/parity/cases (core/paths.h) */
    static char dir[4200];
    if (par_tree_dir()[0]) snprintf(dir, sizeof dir, "%s/cases", par_tree_dir());
    else snprintf(dir, sizeof dir, "%s/share/parity/cases", par_prefix_dir());
    return dir;
}

typedef struct cand_list {
    par_sel_case *v;
    int32_t n, cap;
} cand_list;

static par_sel_case *cand_push(cand_list *l)
{
    if (l->n == l->cap) {
        int32_t nc = l->cap ? l->cap * 2 : 256;
        par_sel_case *p = realloc(l->v, sizeof *p * (size_t)nc);
        if (!p) return NULL;
        l->v = p;
        l->cap = nc;
    }
    par_sel_case *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    c->walk_index = -1;
    return c;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted, unique, comma-separated op names of a graph. */
static void graph_ops(const par_graph_desc *d, char *buf, size_t len)
{
    const char *names[256];
    int n = 0;
    for (int32_t i = 0; i < d->n_nodes && n < 256; i++) {
        int seen = 0;
        for (int k = 0; k < n; k++)
            if (strcmp(names[k], d->nodes[i].op) == 0) seen = 1;
        if (!seen) names[n++] = d->nodes[i].op;
    }
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    size_t used = 0;
    buf[0] = 0;
    for (int k = 0; k < n && used < len; k++) {
        int w = snprintf(buf + used, len - used, "%s%s", k ? "," : "", names[k]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

/* A loaded case as the next candidate; the case is destroyed when it cannot be kept (-1: out of memory). */
static int push_loaded(cand_list *l, par_case *c, const char *origin)
{
    par_sel_case *s = cand_push(l);
    if (!s) {
        par_case_destroy(c);
        return -1;
    }
    s->loaded = c;
    snprintf(s->id, sizeof s->id, "%s", c->id);
    snprintf(s->origin, sizeof s->origin, "%s", origin);
    graph_ops(par_graph_desc_of(c->graph), s->ops, sizeof s->ops);
    return 0;
}

static int add_file(cand_list *l, const char *path, uint64_t seed, const char *shapes, par_msg *msg)
{
    par_case *c;
    if (par_model_format_of(path) != PAR_FMT_NONE) {
        /* a model file: imported, with its test data's inputs and expected outputs when it has some */
        par_import_opts o = {.seed = seed, .test_data = 1, .input_shapes = shapes};
        par_import_info info;
        c = par_model_import(path, &o, &info, msg);
        if (!c && info.n_missing) {
            size_t used = strlen(msg->text);
            for (int32_t i = 0; i < info.n_missing && used + 2 < sizeof msg->text; i++) {
                const par_import_missing *m = &info.missing[i];
                int w = snprintf(msg->text + used, sizeof msg->text - used, "%s %s (%d, first '%s')", i ? ";" : ":",
                                 m->op, (int)m->count, m->first_node);
                if (w < 0) break;
                used += (size_t)w;
            }
        }
    } else {
        c = par_case_load(path, msg);
    }
    if (!c) return 2;
    if (push_loaded(l, c, path) != 0) return par_msgf(msg, PAR_ERROR, "out of memory"), 2;
    return 0;
}

static int has_json_suffix(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && strcmp(n + l - 5, ".json") == 0) || par_model_format_of(n) != PAR_FMT_NONE;
}

static int add_path(cand_list *l, const char *path, uint64_t seed, const char *shapes, int depth, par_msg *msg)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        par_msgf(msg, PAR_ERROR, "%s: no such file or folder", path);
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) return add_file(l, path, seed, shapes, msg);
    if (depth > 16) return 0;
    struct dirent **ents = NULL;
    int n = scandir(path, &ents, NULL, alphasort);
    if (n < 0) {
        par_msgf(msg, PAR_ERROR, "%s: cannot read the folder", path);
        return 2;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        if (rc == 0 && name[0] != '.') {
            char child[4096];
            snprintf(child, sizeof child, "%s/%s", path, name);
            struct stat cs;
            if (stat(child, &cs) == 0 && (S_ISDIR(cs.st_mode) || has_json_suffix(name)))
                rc = add_path(l, child, seed, shapes, depth + 1, msg);
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

typedef struct walk_collect {
    cand_list *l;
    const char *suite;
    const char *only_id; /* when set, collect only this ID */
    int oom;
} walk_collect;

static int collect_want(void *user, int64_t index, const char *id, const char *op)
{
    walk_collect *w = user;
    if (w->only_id && strcmp(w->only_id, id) != 0) return 0;
    par_sel_case *s = cand_push(w->l);
    if (!s) {
        w->oom = 1;
        return 0;
    }
    snprintf(s->id, sizeof s->id, "%s", id);
    snprintf(s->origin, sizeof s->origin, "suite:%s", w->suite);
    snprintf(s->ops, sizeof s->ops, "%s", op);
    s->suite = w->suite;
    s->walk_index = index;
    return 0;
}

static void collect_build(void *user, int64_t index, par_case *c) { par_case_destroy(c); }
static void collect_error(void *user, const char *id, const par_msg *msg) {}

static int add_suite_ids(cand_list *l, const char *suite, uint64_t seed, const char *only_id, par_msg *msg)
{
    walk_collect w = {.l = l, .suite = suite, .only_id = only_id};
    par_sweep_visit v = {.want = collect_want, .build = collect_build, .error = collect_error, .user = &w,
                         .seed = seed};
    if (par_sweep_walk(suite, &v) < 0) {
        par_msgf(msg, PAR_ERROR, "unknown suite '%s'", suite);
        return 2;
    }
    if (w.oom) {
        par_msgf(msg, PAR_ERROR, "out of memory");
        return 2;
    }
    return 0;
}

typedef struct onnx_collect {
    cand_list *l;
    int oom;
} onnx_collect;

/* A node test parity can express becomes a loaded case; the others are listed by `list cases --unsupported`. */
static int onnx_take(void *user, const char *test, par_case *c, const char *why)
{
    onnx_collect *oc = user;
    if (!c) return 0;
    if (push_loaded(oc->l, c, "suite:onnx") != 0) return oc->oom = 1, 1;
    return 0;
}

/* The folder of the real models make deps fetches: $PARITY_MODELS_DIR, else the tree's build/models/. */
static const char *models_dir(void)
{
    static char dir[4200];
    const char *env = getenv("PARITY_MODELS_DIR");
    if (env && *env) return env;
    if (!par_tree_dir()[0]) return NULL;
    snprintf(dir, sizeof dir, "%s/build/models", par_tree_dir());
    return dir;
}

/* The real models listed in cases/models/external.txt that are present; each missing one is said on stderr. */
static int add_external(cand_list *l, uint64_t seed, par_msg *msg)
{
    char list[4096];
    snprintf(list, sizeof list, "%s/models/external.txt", par_cases_dir());
    FILE *f = fopen(list, "r");
    if (!f) return 0;
    const char *dir = models_dir();
    char line[1024];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        char file[512] = "", shapes[512] = "";
        if (line[0] == '#' || sscanf(line, "%511s %511s", file, shapes) < 1) continue;
        char path[4800];
        snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", file);
        struct stat st;
        if (!dir || stat(path, &st) != 0) {
            fprintf(stderr, "parity: models suite: %s is not there (make deps takes it out of its wheel): skipped\n",
                    file);
            continue;
        }
        par_import_opts o = {.seed = seed, .input_shapes = shapes[0] ? shapes : NULL};
        par_import_info info;
        par_case *c = par_model_import(path, &o, &info, msg);
        if (!c || push_loaded(l, c, path) != 0) {
            if (c) par_msgf(msg, PAR_ERROR, "out of memory");
            rc = 2;
        }
    }
    fclose(f);
    return rc;
}

static int add_suite(cand_list *l, const char *suite, uint64_t seed, par_msg *msg)
{
    char dir[4096];
    if (strcmp(suite, "models") == 0) {
        snprintf(dir, sizeof dir, "%s/models", par_cases_dir());
        int rc = add_path(l, dir, seed, NULL, 0, msg);
        return rc ? rc : add_external(l, seed, msg);
    }
    if (strcmp(suite, "default") == 0) { /* quick + the models of the default size (runner.h) */
        int rc = add_suite_ids(l, "quick", seed, NULL, msg);
        int32_t from = l->n, kept = l->n;
        if (!rc) rc = add_suite(l, "models", seed, msg);
        for (int32_t i = from; !rc && i < l->n; i++) {
            if (par_case_cost(par_graph_desc_of(l->v[i].loaded->graph)) > PAR_DEFAULT_MODEL_COST)
                par_case_destroy(l->v[i].loaded);
            else
                l->v[kept++] = l->v[i];
        }
        if (!rc) l->n = kept;
        return rc;
    }
    if (strcmp(suite, "quick") == 0 || strcmp(suite, "full") == 0) return add_suite_ids(l, suite, seed, NULL, msg);
    if (strcmp(suite, "onnx") == 0) {
        onnx_collect oc = {.l = l};
        if (par_onnx_suite_walk(onnx_take, &oc, msg) < 0) return 2;
        if (oc.oom) return par_msgf(msg, PAR_ERROR, "out of memory"), 2;
        return 0;
    }
    par_msgf(msg, PAR_ERROR, "unknown suite '%s' (suites: quick, full, models, default, onnx)", suite);
    return 2;
}

static int ops_match(const char *case_ops, const char *filter)
{
    /* both comma-separated; match when they share an op */
    const char *f = filter;
    while (*f) {
        const char *fe = strchr(f, ',');
        size_t fl = fe ? (size_t)(fe - f) : strlen(f);
        const char *c = case_ops;
        while (*c) {
            const char *ce = strchr(c, ',');
            size_t cl = ce ? (size_t)(ce - c) : strlen(c);
            if (cl == fl && strncmp(c, f, fl) == 0) return 1;
            c += cl + (ce ? 1 : 0);
        }
        f += fl + (fe ? 1 : 0);
    }
    return 0;
}

/* "conv2d(...)#seed=7" -> 7; 0 when the ID has no seed. */
static uint64_t id_seed(const char *id)
{
    const char *p = strstr(id, "#seed=");
    if (!p) return 0;
    char *end;
    unsigned long long v = strtoull(p + 6, &end, 10);
    return *end ? 0 : (uint64_t)v;
}

int par_select_cases(const par_selection *sel, par_case_set *out, par_msg *msg)
{
    memset(out, 0, sizeof *out);
    cand_list l = {0};
    int rc = 0;
    uint64_t seed = sel->seed ? sel->seed : 1;
    if (sel->ops) {
        const char *f = sel->ops;
        while (*f && rc == 0) {
            const char *fe = strchr(f, ',');
            size_t fl = fe ? (size_t)(fe - f) : strlen(f);
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(fl < 63 ? fl : 63), f);
            if (!par_op_find(name)) {
                const char *near = par_op_nearest(name);
                if (near) par_msgf(msg, PAR_ERROR, "-o: unknown op '%s'; did you mean '%s'?", name, near);
                else par_msgf(msg, PAR_ERROR, "-o: unknown op '%s' (see 'parity list ops')", name);
                rc = 2;
            }
            f += fl + (fe ? 1 : 0);
        }
    }
    for (int32_t i = 0; i < sel->n_paths && rc == 0; i++) rc = add_path(&l, sel->paths[i], seed, sel->input_shapes, 0, msg);
    if (rc == 0 && sel->suite) rc = add_suite(&l, sel->suite, seed, msg);
    if (rc == 0 && sel->case_id && !sel->suite && sel->n_paths == 0 && par_fuzz_is_id(sel->case_id)) {
        /* a fuzz case ID: the generator rebuilds it from its options and seed */
        par_case *fc = par_fuzz_case_by_id(sel->case_id, msg);
        uint64_t fseed = fc ? fc->seed : 0;
        if (!fc) {
            rc = 2;
        } else if (push_loaded(&l, fc, "suite:fuzz") != 0) {
            par_msgf(msg, PAR_ERROR, "out of memory");
            rc = 2;
        } else {
            seed = fseed;
        }
    } else if (rc == 0 && sel->case_id && !sel->suite && sel->n_paths == 0 && strncmp(sel->case_id, "onnx:", 5) == 0) {
        /* an ONNX node test's ID: the onnx suite */
        rc = add_suite(&l, "onnx", seed, msg);
    } else if (rc == 0 && sel->case_id && !sel->suite && sel->n_paths == 0) {
        /* a bare --case: search the quick suite, then the full one (a superset of quick: a quick case's origin is
         * quick), with the ID's own seed, then the models */
        uint64_t s = id_seed(sel->case_id);
        if (!s) {
            par_msgf(msg, PAR_ERROR, "--case '%s': a case ID ends with #seed=N", sel->case_id);
            rc = 2;
        } else {
            seed = s;
            rc = add_suite_ids(&l, "quick", s, sel->case_id, msg);
            if (rc == 0 && l.n == 0) rc = add_suite_ids(&l, "full", s, sel->case_id, msg);
            if (rc == 0 && l.n == 0) {
                char dir[4096];
                snprintf(dir, sizeof dir, "%s/models", par_cases_dir());
                rc = add_path(&l, dir, seed, NULL, 0, msg);
            }
        }
    }
    regex_t re;
    int have_re = 0;
    if (rc == 0 && sel->id_regex) {
        int e = regcomp(&re, sel->id_regex, REG_EXTENDED | REG_NOSUB);
        if (e) {
            char eb[128];
            regerror(e, &re, eb, sizeof eb);
            par_msgf(msg, PAR_ERROR, "-k '%s': %s", sel->id_regex, eb);
            rc = 2;
        } else {
            have_re = 1;
        }
    }
    if (rc == 0 && (sel->shard_n < 0 || sel->shard_k < 0 || (sel->shard_n && (sel->shard_k < 1 ||
                                                                                 sel->shard_k > sel->shard_n)))) {
        par_msgf(msg, PAR_ERROR, "--shard %d/%d: K must be in 1..N", (int)sel->shard_k, (int)sel->shard_n);
        rc = 2;
    }
    /* filter, then shard over what is left (so shards of the same filter partition it) */
    int32_t kept = 0, match = 0;
    for (int32_t i = 0; i < l.n && rc == 0; i++) {
        par_sel_case *c = &l.v[i];
        int ok = 1;
        if (sel->case_id && strcmp(c->id, sel->case_id) != 0) ok = 0;
        if (ok && sel->ops && !ops_match(c->ops, sel->ops)) ok = 0;
        if (ok && have_re && regexec(&re, c->id, 0, NULL, 0) != 0) ok = 0;
        int64_t index = match;
        if (ok) match++;
        if (ok && sel->shard_n && (index % sel->shard_n) != sel->shard_k - 1) ok = 0;
        if (ok) {
            c->index = index;
            l.v[kept++] = *c;
        }
        else par_case_destroy(c->loaded);
    }
    if (have_re) regfree(&re);
    if (rc != 0) {
        for (int32_t i = 0; i < l.n; i++) par_case_destroy(l.v[i].loaded);
        free(l.v);
        return rc;
    }
    l.n = kept;
    if (l.n == 0 && sel->case_id) {
        free(l.v);
        par_msgf(msg, PAR_ERROR, "no case has the ID '%s'", sel->case_id);
        return 2;
    }
    out->n = l.n;
    out->cases = l.v;
    out->seed = seed;
    return 0;
}

int par_case_set_adopt(par_case_set *s, par_case *c, const char *origin)
{
    par_sel_case *v = realloc(s->cases, (size_t)(s->n + 1) * sizeof *v);
    if (!v) {
        par_case_destroy(c);
        return -1;
    }
    s->cases = v;
    par_sel_case *e = &v[s->n++];
    memset(e, 0, sizeof *e);
    e->loaded = c;
    e->index = s->n - 1;
    snprintf(e->id, sizeof e->id, "%s", c->id);
    snprintf(e->origin, sizeof e->origin, "%s", origin ? origin : (c->origin ? c->origin : "-"));
    graph_ops(par_graph_desc_of(c->graph), e->ops, sizeof e->ops);
    return 0;
}

void par_case_set_free(par_case_set *s)
{
    if (!s) return;
    for (int32_t i = 0; i < s->n; i++) par_case_destroy(s->cases[i].loaded);
    free(s->cases);
    memset(s, 0, sizeof *s);
}

typedef struct get_one {
    int64_t index;
    par_case *got;
    par_msg err;
    int failed;
} get_one;

static int get_want(void *user, int64_t index, const char *id, const char *op)
{
    return index == ((get_one *)user)->index;
}
static void get_build(void *user, int64_t index, par_case *c) { ((get_one *)user)->got = c; }
static void get_error(void *user, const char *id, const par_msg *msg)
{
    get_one *g = user;
    g->failed = 1;
    par_msgf(&g->err, PAR_ERROR, "%s: %s", id, msg->text);
}

par_case *par_case_set_get(const par_case_set *s, int32_t i, int *owned, par_msg *msg)
{
    const par_sel_case *c = &s->cases[i];
    *owned = 0;
    if (c->loaded) return c->loaded;
    get_one g = {.index = c->walk_index};
    par_sweep_visit v = {.want = get_want, .build = get_build, .error = get_error, .user = &g, .seed = s->seed};
    par_sweep_walk(c->suite, &v);
    if (!g.got) {
        if (g.failed) *msg = g.err;
        else par_msgf(msg, PAR_ERROR, "%s: could not be built", c->id);
        return NULL;
    }
    *owned = 1;
    return g.got;
}
