/*
 * report_read.c - reads report.json (docs/report-schema.md) back into a par_report: the one reader every renderer,
 * the diff, the merge and `parity report` go through.
 *
 * Every field the writer (report_json.c) writes is read, checked for its type and range, and copied into memory the
 * document owns; an error names the file, the JSON path and the reason, and nothing is half-read (the document is
 * freed). Strings are copied as valid UTF-8 (invalid sequences become U+FFFD; one-line fields get control
 * characters escaped) and cut to the record's fixed fields at a character boundary, as records from a worker are.
 * The "summary" object is not read: it is recomputed from the records by whoever writes or renders. The "campaign"
 * object of a fuzzing campaign's report is not read either (its records are read as any run's).
 *
 * Before any of it, the text is refused if an object names a key twice (core/json_dupkeys.c, the case reader's
 * check): json-c would keep the last one silently. Any JSON type other than a field's own (null included, where
 * the field is not optional or a number the writer wrote as null) is an error, and so is a number out of its range:
 * integers beyond 64 bits (which json-c saturates), negative counts, counts beyond the count they are part of,
 * coordinates outside the worst element's shape, NaN and infinities.
 *
 * The parts: this file (the file, the top level, backends, cases), report_read_get.c (errors, typed getters and the
 * field tables that list an object's fields with their type and range once), report_read_record.c (the records). They must not judge anything, nor write anything.
 */
#include "report_read_int.h"

#include "core/json_dupkeys.h"
#include "core/requant.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------
 * Top level: the harness, the environment, the config
 * ------------------------------------------------------------------------------------------------------------- */

static const rr_spec os_fields[] = {
    F_LINE(par_env, os_name, "name", 1),
    F_LINE(par_env, os_release, "release", 1),
    F_LINE(par_env, os_version, "version", 1),
    F_LINE(par_env, machine, "machine", 1),
};

static const rr_spec env_fields[] = {
    F_LINE(par_env, arch, "arch", 1),
    F_LINE(par_env, compiler, "compiler", 1),
    F_LINE(par_env, json_c, "json_c", 1),
    F_LINE(par_env, hostname, "hostname", 1),
};

static void read_env(rd *x, json_object *e, const char *where, par_env *env)
{
    memset(env, 0, sizeof *env);
    if (!e) return;
    char w[64];
    snprintf(w, sizeof w, "%s.cpu", where);
    json_object *cpu = rr_obj(x, e, where, "cpu", 1), *os = rr_obj(x, e, where, "os", 1);
    if (cpu) {
        rr_buf(x, cpu, w, "model", 1, env->cpu_model, sizeof env->cpu_model, 1);
        rr_i32(x, cpu, w, "cores", 1, 0, 1 << 20, 0, &env->cores);
        json_object *f = rr_arr(x, cpu, w, "features", 1);
        size_t o = 0;
        for (size_t i = 0; f && !x->bad && i < json_object_array_length(f); i++) {
            json_object *s = json_object_array_get_idx(f, i);
            if (!json_object_is_type(s, json_type_string)) {
                char k[32];
                snprintf(k, sizeof k, "features[%zu]", i);
                rr_fail(x, w, k, "is %s, expected a string", par_json_type_name(s));
                break;
            }
            int n = snprintf(env->cpu_features + o, sizeof env->cpu_features - o, "%s%s", o ? " " : "",
                             json_object_get_string(s));
            if (n < 0 || (size_t)n >= sizeof env->cpu_features - o) break;
            o += (size_t)n;
        }
    }
    if (os) {
        snprintf(w, sizeof w, "%s.os", where);
        RR_FIELDS(x, os, w, os_fields, env);
    }
    RR_FIELDS(x, e, where, env_fields, env);
}

/* A decimal in [1, 2^20] at *s, advanced past it; 0 when there is none or it is larger. */
static int32_t shard_num(const char **s)
{
    int32_t v = 0;
    const char *p = *s;
    while (*p >= '0' && *p <= '9' && v <= (1 << 20)) v = v * 10 + (*p++ - '0');
    if (p == *s || (*p >= '0' && *p <= '9') || v > (1 << 20)) return 0;
    *s = p;
    return v;
}

/* "K/N" (or null: 0/0). */
static void read_shard(rd *x, json_object *o, const char *where, const char *key, int32_t *k, int32_t *n)
{
    const char *s;
    *k = *n = 0;
    rr_str(x, o, where, key, 1, &s);
    if (!s) return;
    const char *p = s;
    int32_t a = shard_num(&p), b = *p == '/' ? (p++, shard_num(&p)) : 0;
    if (*p || a < 1 || b < 1 || a > b) rr_fail(x, where, key, "\"%s\" is not K/N with 1 <= K <= N <= 2^20", s);
    else *k = a, *n = b;
}

static const rr_spec config_fields[] = {
    F_I32(par_report, repeat, "repeat", 0, 0, 1 << 30),
    F_I32(par_report, warmup, "warmup", 0, 0, 1 << 30),
    F_I32(par_report, jobs, "jobs", 0, 0, 1 << 20),
    F_I32(par_report, rounds, "rounds", 1, 1, 1 << 20),
    F_NUM(par_report, timeout_s, "timeout_s", 0, RR_TIME),
};

static void read_config(rd *x, json_object *root)
{
    par_report *r = &x->d->r;
    json_object *cfg = rr_obj(x, root, "", "config", 0);
    if (!cfg) return;
    r->rounds = 1;
    /* a seed is in [0, 2^64 - 1] (an integer beyond 64 bits, which json-c would saturate, was refused in parse) */
    json_object *seed = rr_field(x, cfg, "config", "seed", 0);
    if (seed && !json_object_is_type(seed, json_type_int))
        rr_fail(x, "config", "seed", "is %s, expected an integer", par_json_type_name(seed));
    else if (seed && json_object_get_int64(seed) < 0)
        rr_fail(x, "config", "seed", "%lld is out of range [0, 18446744073709551615]",
                (long long)json_object_get_int64(seed));
    else if (seed) r->seed = json_object_get_uint64(seed);
    RR_FIELDS(x, cfg, "config", config_fields, r);
    par_report_selection *sel = &x->d->sel;
    json_object *s = rr_obj(x, cfg, "config", "selection", 1);
    if (s) {
        rr_str(x, s, "config.selection", "suite", 1, &sel->suite);
        rr_str(x, s, "config.selection", "case", 1, &sel->case_id);
        rr_str(x, s, "config.selection", "ops", 1, &sel->ops);
        rr_str(x, s, "config.selection", "filter", 1, &sel->filter);
        json_object *p = rr_arr(x, s, "config.selection", "paths", 1);
        size_t np = p ? json_object_array_length(p) : 0;
        if (np && !x->bad) {
            x->d->paths = calloc(np, sizeof *x->d->paths);
            if (!x->d->paths) x->bad = x->oom = 1;
        }
        for (size_t i = 0; i < np && !x->bad; i++) {
            json_object *e = json_object_array_get_idx(p, i);
            if (!json_object_is_type(e, json_type_string)) {
                char k[32];
                snprintf(k, sizeof k, "paths[%zu]", i);
                rr_fail(x, "config.selection", k, "is %s, expected a string", par_json_type_name(e));
            } else {
                x->d->paths[i] = rr_dup(x, json_object_get_string(e));
                sel->n_paths = (int32_t)i + 1;
            }
        }
        sel->paths = x->d->paths;
    }
    read_shard(x, cfg, "config", "shard", &sel->shard_k, &sel->shard_n);
    r->sel = *sel;
}

static const rr_spec shard_fields[] = {
    F_STR(par_report_shard, path, "path", 1),
    F_STR(par_report_shard, created, "created", 1),
    F_STR(par_report_shard, command_line, "command_line", 1),
    F_STR(par_report_shard, git_revision, "git_revision", 1),
    F_NUM(par_report_shard, wall_s, "wall_s", 1, RR_TIME),
    F_I32(par_report_shard, n_cases, "cases", 1, 0, INT32_MAX - 1),
};

static void read_shards(rd *x, json_object *root)
{
    json_object *a = rr_arr(x, root, "", "shards", 1);
    size_t n = a ? json_object_array_length(a) : 0;
    if (!n || x->bad) return;
    x->d->shards = calloc(n, sizeof *x->d->shards);
    if (!x->d->shards) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < n && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "shards[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) {
            rr_fail(x, w, NULL, "is %s, expected an object", par_json_type_name(o));
            break;
        }
        par_report_shard *sh = &x->d->shards[i];
        read_shard(x, o, w, "shard", &sh->k, &sh->n);
        RR_FIELDS(x, o, w, shard_fields, sh);
        char we[48];
        snprintf(we, sizeof we, "%s.environment", w);
        read_env(x, rr_obj(x, o, w, "environment", 1), we, &sh->env);
    }
    x->d->r.n_shards = (int32_t)n;
    x->d->r.shards = x->d->shards;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Backends and cases
 * ------------------------------------------------------------------------------------------------------------- */

static par_arith arith_of(const char *s, int *ok)
{
    *ok = 1;
    if (!s) return PAR_ARITH_F32;
    for (int a = 0; a < (int)PAR_ARITH_N_KINDS; a++)
        if (!strcmp(s, par_arith_name((par_arith)a))) return (par_arith)a;
    *ok = 0;
    return PAR_ARITH_F32;
}

static void read_backend(rd *x, json_object *o, const char *w, par_backend *t, par_backend_inst *bi)
{
    rr_key(x, o, w, "label", bi->label, sizeof bi->label);
    const char *name, *version, *desc, *arith, *rq, *plugin;
    rr_str(x, o, w, "name", 1, &name);
    rr_str(x, o, w, "version", 1, &version);
    rr_str(x, o, w, "description", 1, &desc);
    rr_str(x, o, w, "arith", 1, &arith);
    int ok;
    t->arith = arith_of(arith, &ok);
    if (!ok) rr_fail(x, w, "arith", "\"%s\" is not f32, f16_storage, f16, bf16 or bf16_storage", arith);
    bi->arith = (int32_t)t->arith; /* the instance's (PAR_PROC_ARITH or the table's), which renderers show */
    t->api_version = PAR_BACKEND_API_VERSION;
    t->struct_size = sizeof *t;
    t->name = name ? name : "";
    t->version = version ? version : "";
    t->description = desc ? desc : "";
    bi->be = name ? t : NULL;
    json_object *knobs = rr_obj(x, o, w, "knobs", 1);
    if (knobs && !x->bad) {
        json_object_object_foreach(knobs, k, v)
        {
            if (bi->n_knobs == PAR_MAX_KNOBS) {
                rr_fail(x, w, "knobs", "more than %d knobs", PAR_MAX_KNOBS);
                break;
            }
            if (!json_object_is_type(v, json_type_string)) {
                rr_fail(x, w, "knobs", "knob '%s' is %s, expected a string", k, par_json_type_name(v));
                break;
            }
            par_text_clean(bi->knob_key[bi->n_knobs], sizeof bi->knob_key[0], k, strlen(k) + 1, 1);
            const char *s = json_object_get_string(v);
            par_text_clean(bi->knob_val[bi->n_knobs], sizeof bi->knob_val[0], s, strlen(s) + 1, 1);
            bi->n_knobs++;
        }
    }
    rr_buf(x, o, w, "describe", 1, bi->describe, sizeof bi->describe, 0);
    const char *kernels; /* derived from describe when written: checked for its type only */
    rr_str(x, o, w, "kernels", 1, &kernels);
    rr_str(x, o, w, "plugin", 1, &plugin);
    if (plugin) snprintf(bi->plugin_path, sizeof bi->plugin_path, "%s", plugin);
    rr_str(x, o, w, "requant", 1, &rq);
    if (rq) {
        par_requant s;
        if (par_requant_parse(rq, &s) != 0) rr_fail(x, w, "requant", "\"%s\" is not a requantization scheme", rq);
        bi->requant = (int32_t)s;
        bi->probed = 1;
    }
    bi->requant_exact = rr_bool(x, o, w, "requant_exact", 1, 0);
    json_object *flags = rr_arr(x, o, w, "arith_flags", 1);
    for (size_t i = 0; flags && !x->bad && i < json_object_array_length(flags); i++) {
        json_object *e = json_object_array_get_idx(flags, i);
        if (!json_object_is_type(e, json_type_string)) {
            char k[40];
            snprintf(k, sizeof k, "arith_flags[%zu]", i);
            rr_fail(x, w, k, "is %s, expected a string", par_json_type_name(e));
            break;
        }
        const char *f = json_object_get_string(e);
        for (uint32_t bit = 1; f && bit; bit <<= 1) /* a flag this build does not know is ignored */
            if (par_arith_flag_name(bit) && !strcmp(par_arith_flag_name(bit), f)) bi->arith_flags |= bit;
    }
    bi->usable = rr_bool(x, o, w, "usable", 0, 0);
    rr_buf(x, o, w, "reason", 1, bi->unusable_reason, sizeof bi->unusable_reason, 1);
}

static void read_backends(rd *x, json_object *root)
{
    par_report_doc *d = x->d;
    json_object *a = rr_arr(x, root, "", "backends", 0);
    size_t n = a ? json_object_array_length(a) : 0;
    if (x->bad) return;
    if (n > PAR_MAX_KNOBS * 64) {
        rr_fail(x, "", "backends", "%zu backends: more than this build reads", n);
        return;
    }
    d->tables = calloc(n ? n : 1, sizeof *d->tables);
    d->backends = calloc(n ? n : 1, sizeof *d->backends);
    if (!d->tables || !d->backends) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < n && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "backends[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) {
            rr_fail(x, w, NULL, "is %s, expected an object", par_json_type_name(o));
            break;
        }
        read_backend(x, o, w, &d->tables[i], &d->backends[i]);
        for (size_t j = 0; j < i && !x->bad; j++)
            if (!strcmp(d->backends[j].label, d->backends[i].label))
                rr_fail(x, w, "label", "\"%s\" is also backends[%zu]'s label", d->backends[i].label, j);
    }
    d->r.n_backends = (int32_t)n;
    d->r.backends = d->backends;
}

/* A case's fields after its ID; its index is its position in the unsharded selection (INT32_MAX - 1 at most). */
static const rr_spec case_fields[] = {
    F_LINE(par_report_case, origin, "origin", 0),
    F_LINE(par_report_case, ops, "ops", 0),
    F_LINE(par_report_case, dtype, "dtype", 1),
    F_I64(par_report_case, index, "index", 1, 0, INT32_MAX - 1),
};

static void read_cases(rd *x, json_object *root, id_map *map)
{
    par_report_doc *d = x->d;
    json_object *a = rr_arr(x, root, "", "cases", 0);
    size_t n = a ? json_object_array_length(a) : 0;
    if (x->bad) return;
    if (n > INT32_MAX / 64) {
        rr_fail(x, "", "cases", "%zu cases: more than this build reads", n);
        return;
    }
    d->cases = calloc(n ? n : 1, sizeof *d->cases);
    if (!d->cases || rr_map_init(map, n)) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < n && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "cases[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) {
            rr_fail(x, w, NULL, "is %s, expected an object", par_json_type_name(o));
            break;
        }
        par_report_case *c = &d->cases[i];
        rr_key(x, o, w, "id", c->id, sizeof c->id);
        c->index = (int64_t)i; /* when absent */
        RR_FIELDS(x, o, w, case_fields, c);
        int32_t prev = x->bad ? -1 : rr_map_find(map, d->cases, c->id, (int32_t)i);
        if (prev >= 0) rr_fail(x, w, "id", "\"%s\" is also cases[%d]'s ID", c->id, (int)prev);
    }
    d->r.n_cases = (int32_t)n;
    d->r.cases = d->cases;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The file
 * ------------------------------------------------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len, par_msg *msg)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        par_msgf(msg, PAR_ERROR, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    if (f != stdin) fclose(f);
    if (!buf) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory reading it", path);
        return NULL;
    }
    if (err) {
        free(buf);
        par_msgf(msg, PAR_ERROR, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Parse text; on error the message gives the line and column. */
static json_object *parse(const char *path, const char *text, size_t len, par_msg *msg)
{
    if (len == 0) {
        par_msgf(msg, PAR_ERROR, "%s: empty file, not a report", path);
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, text, (int)(len > INT32_MAX ? INT32_MAX : len));
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (!root || e != json_tokener_success) {
        size_t at = e == json_tokener_continue ? len : end, line = 1, col = 1;
        for (size_t i = 0; i < at && i < len; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        par_msgf(msg, PAR_ERROR, "%s: line %zu, column %zu: %s", path, line, col,
                 e == json_tokener_continue ? "the JSON ends early (truncated file?)" : json_tokener_error_desc(e));
        json_object_put(root);
        root = NULL;
    } else {
        while (end < len && (text[end] == ' ' || text[end] == '\n' || text[end] == '\r' || text[end] == '\t')) end++;
        char where[256], key[64];
        if (end < len) {
            par_msgf(msg, PAR_ERROR, "%s: text after the report's closing brace", path);
            json_object_put(root);
            root = NULL;
        } else {
            /* json-c keeps the last of two members with the same key (refused, as the case reader does) and
             * saturates integers beyond 64 bits (a 30-digit seed would read as 2^64 - 1) */
            unsigned bad = par_json_check_raw(text, len, PAR_JSON_DUPKEYS | PAR_JSON_BIGINTS, "", where, sizeof where,
                                              key, sizeof key);
            if (bad == PAR_JSON_DUPKEYS)
                par_msgf(msg, PAR_ERROR, "%s: %s%s%s: duplicate key (an object names it twice)", path, where,
                         where[0] ? "." : "", key);
            else if (bad)
                par_msgf(msg, PAR_ERROR, "%s: %s: %s is beyond 64 bits", path, where[0] ? where : "(top)", key);
            if (bad) {
                json_object_put(root);
                root = NULL;
            }
        }
    }
    json_tokener_free(tok);
    return root;
}

par_status par_report_read(const char *path, par_report_doc **out, par_msg *msg)
{
    *out = NULL;
    size_t len = 0;
    char *text = slurp(path, &len, msg);
    if (!text) return PAR_ERROR;
    par_status st = par_report_parse(path, text, len, out, msg);
    free(text);
    return st;
}

par_status par_report_parse(const char *path, const char *text, size_t len, par_report_doc **out, par_msg *msg)
{
    *out = NULL;
    json_object *root = parse(path, text, len, msg);
    if (!root) return PAR_ERROR;
    par_report_doc *d = calloc(1, sizeof *d);
    rd x = {.d = d, .msg = msg};
    id_map map = {0};
    if (!d || !(d->path = strdup(path))) {
        free(d);
        json_object_put(root);
        return par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
    }
    const char *schema;
    int32_t version;
    if (!json_object_is_type(root, json_type_object)) rr_fail(&x, "", NULL, "is %s, not a report object",
                                                           par_json_type_name(root));
    rr_str(&x, root, "", "schema", 0, &schema);
    if (!x.bad && strcmp(schema, PAR_REPORT_SCHEMA) != 0)
        rr_fail(&x, "", "schema", "\"%s\" is not \"%s\"", schema, PAR_REPORT_SCHEMA);
    rr_i32(&x, root, "", "version", 0, 0, INT32_MAX, 0, &version);
    if (!x.bad && version != PAR_REPORT_VERSION)
        rr_fail(&x, "", "version", "%d: this build reads version %d", (int)version, PAR_REPORT_VERSION);
    par_report *r = &d->r;
    rr_str(&x, root, "", "created", 1, &r->created);
    rr_str(&x, root, "", "command_line", 1, &r->command_line);
    json_object *par = rr_obj(&x, root, "", "parity", 1);
    if (par) {
        rr_str(&x, par, "parity", "version", 1, &r->parity_version);
        rr_str(&x, par, "parity", "git_revision", 1, &r->git_revision);
        rr_str(&x, par, "parity", "executable", 1, &r->parity_exe);
    }
    read_env(&x, rr_obj(&x, root, "", "environment", 1), "environment", &d->env);
    r->env = &d->env;
    read_config(&x, root);
    double wall = 0;
    json_object *ws = rr_field(&x, root, "", "wall_s", 1);
    if (ws && rr_num_of(&x, ws, "", "wall_s", 1, &wall)) r->wall_s = wall;
    r->interrupted = rr_bool(&x, root, "", "interrupted", 1, 0);
    read_shards(&x, root);
    read_backends(&x, root);
    read_cases(&x, root, &map);
    rr_read_results(&x, root, &map);
    free(map.slot);
    json_object_put(root);
    if (x.bad) {
        if (x.oom && !msg->text[0]) par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        par_report_doc_free(d);
        return PAR_ERROR;
    }
    if (!r->parity_exe) r->parity_exe = "parity";
    if (!r->command_line) r->command_line = "";
    *out = d;
    return PAR_OK;
}

const par_report *par_report_doc_report(const par_report_doc *d)
{
    return d ? &d->r : NULL;
}

const char *par_report_doc_path(const par_report_doc *d)
{
    return d ? d->path : NULL;
}

void par_report_doc_free(par_report_doc *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n_pool; i++) free(d->pool[i]);
    free(d->pool);
    free(d->paths);
    free(d->tables);
    free(d->backends);
    free(d->cases);
    free(d->results);
    for (size_t i = 0; d->strips && i < (size_t)d->r.n_cases * (size_t)d->r.n_backends; i++) free(d->strips[i].nodes);
    free(d->strips);
    free(d->shards);
    free(d->path);
    free(d);
}
