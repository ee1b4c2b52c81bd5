/*
 * findings.c - findings folders, finding.json and index.json (findings.h). Every write is atomic; every read
 * checks what it reads (a damaged finding.json or index.json is reported by path and field, never trusted).
 */
#include "findings.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/report.h"

/* ---- files ----------------------------------------------------------------------------------------------------- */

int par_mkdir_p(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return (mkdir(buf, 0777) == 0 || errno == EEXIST) ? 0 : -1;
}

int par_write_file_atomic(const char *path, const char *text, par_msg *msg)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        par_msgf(msg, PAR_ERROR, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        return -1;
    }
    size_t n = strlen(text), off = 0;
    int err = 0;
    while (off < n && !err) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) err = errno ? errno : EIO;
        else off += (size_t)w;
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) {
        unlink(tmp);
        par_msgf(msg, PAR_ERROR, "%s: cannot write: %s", path, strerror(err));
        return -1;
    }
    return 0;
}

static int write_json(const char *path, json_object *o, par_msg *msg)
{
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!text) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        return -1;
    }
    size_t n = strlen(text);
    char *t = malloc(n + 2);
    if (!t) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        return -1;
    }
    memcpy(t, text, n);
    t[n] = '\n';
    t[n + 1] = 0;
    int rc = par_write_file_atomic(path, t, msg);
    free(t);
    return rc;
}

/* The JSON object of a file; NULL with msg when it is missing, unreadable or not an object. */
static json_object *read_json(const char *path, par_msg *msg)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        par_msgf(msg, PAR_ERROR, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 65536;
            if (cap > ((size_t)64 << 20)) {
                free(buf);
                fclose(fp);
                par_msgf(msg, PAR_ERROR, "%s: larger than 64 MiB", path);
                return NULL;
            }
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(fp);
                par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + len, 1, cap - len, fp);
        len += r;
        if (r == 0) break;
    }
    fclose(fp);
    json_tokener *tok = json_tokener_new();
    json_object *o = tok ? json_tokener_parse_ex(tok, buf ? buf : "", (int)len) : NULL;
    enum json_tokener_error je = tok ? json_tokener_get_error(tok) : json_tokener_error_depth;
    if (tok) json_tokener_free(tok);
    free(buf);
    if (!o || je != json_tokener_success || !json_object_is_type(o, json_type_object)) {
        par_msgf(msg, PAR_ERROR, "%s: not a JSON object (%s)", path,
                 je != json_tokener_success ? json_tokener_error_desc(je) : "another type");
        json_object_put(o);
        return NULL;
    }
    return o;
}

static void join(char *buf, size_t len, const char *a, const char *b, const char *c)
{
    snprintf(buf, len, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");
}

void par_findings_path(const par_findings *f, int32_t i, const char *file, char *buf, size_t len)
{
    join(buf, len, f->root, f->list[i].dir, file);
}

/* Remove a folder and the regular files in it (a provisional folder: no subfolders). */
static void remove_folder(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(path);
}

/* ---- JSON of a finding ------------------------------------------------------------------------------------------ */

static json_object *jnum(double d)
{
    if (!isfinite(d)) return NULL; /* NaN and Infinity are not JSON */
    char t[40];
    snprintf(t, sizeof t, "%.9g", d);
    return json_object_new_double_s(d, t);
}

static json_object *jstr(const char *s)
{
    size_t n = strlen(s ? s : ""), cap = 3 * n + 1;
    char *buf = malloc(cap);
    if (!buf) return json_object_new_string("");
    par_text_clean(buf, cap, s ? s : "", n + 1, 0);
    json_object *o = json_object_new_string(buf);
    free(buf);
    return o;
}

static void put(json_object *o, const char *k, json_object *v)
{
    json_object_object_add(o, k, v);
}

static int compared(const par_result *r)
{
    return r->verdict == PAR_V_PASS || (r->verdict == PAR_V_FAIL && r->m.n > 0);
}

static json_object *record_json(const par_result *r)
{
    json_object *o = json_object_new_object();
    put(o, "verdict", jstr(par_verdict_name(r->verdict)));
    put(o, "reason", jstr(r->reason));
    if (compared(r)) {
        const par_metrics *m = &r->m;
        json_object *mj = json_object_new_object();
        put(mj, "n", json_object_new_int64(m->n));
        put(mj, "n_over", json_object_new_int64(m->n_over));
        put(mj, "n_nonfinite", json_object_new_int64(m->n_nonfinite));
        put(mj, "max_abs", jnum(m->max_abs));
        put(mj, "max_rel", jnum(m->max_rel));
        put(mj, "max_ulp", jnum(m->max_ulp));
        put(mj, "nmse", jnum(m->nmse));
        put(mj, "bias", jnum(m->bias));
        put(mj, "max_ratio", jnum(m->max_ratio));
        put(o, "metrics", mj);
        if (m->worst_index >= 0) {
            json_object *w = json_object_new_object(), *co = json_object_new_array();
            put(w, "output", json_object_new_int(m->worst_output));
            put(w, "index", json_object_new_int64(m->worst_index));
            for (int32_t k = 0; k < m->worst_rank && k < PAR_MAX_RANK; k++)
                json_object_array_add(co, json_object_new_int64(m->worst_coords[k]));
            put(w, "coords", co);
            put(w, "got", jnum(m->worst_got));
            put(w, "want", jnum(m->worst_ref));
            put(w, "budget", jnum(m->worst_budget));
            put(o, "worst", w);
        } else {
            put(o, "worst", NULL);
        }
    } else {
        put(o, "metrics", NULL);
        put(o, "worst", NULL);
    }
    put(o, "output", r->output_bytes > 0 ? jstr(r->output) : NULL);
    return o;
}

static json_object *sig_json(const par_signature *s)
{
    char text[256];
    par_signature_text(s, text, sizeof text);
    json_object *o = json_object_new_object();
    put(o, "backend", jstr(s->backend));
    put(o, "verdict", jstr(par_verdict_name(s->verdict)));
    put(o, "op", s->op[0] ? jstr(s->op) : NULL);
    put(o, "text", jstr(text));
    return o;
}

static const char *get_str(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                           : NULL;
}

static int get_i64(json_object *o, const char *k, int64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int)) return -1;
    *out = json_object_get_int64(v);
    return 0;
}

static int get_u64(json_object *o, const char *k, uint64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int)) return -1;
    *out = json_object_get_uint64(v);
    return 0;
}

/* A signature from its JSON; -1 when a field is missing or wrong. */
static int sig_from_json(json_object *o, par_signature *s)
{
    memset(s, 0, sizeof *s);
    const char *b = get_str(o, "backend"), *v = get_str(o, "verdict"), *op = get_str(o, "op");
    if (!b || !v) return -1;
    snprintf(s->backend, sizeof s->backend, "%s", b);
    snprintf(s->op, sizeof s->op, "%s", op ? op : "");
    for (int k = 0; k < PAR_V_COUNT; k++)
        if (!strcmp(v, par_verdict_name((par_verdict)k))) {
            s->verdict = (par_verdict)k;
            return 0;
        }
    return -1;
}

/* The repro command of a finding's case: parity run <folder>/case.json -b <label> [--plugin P], quoted for sh. */
static void repro_command(const par_findings *f, const char *dir, const par_backend_inst *inst, const char *exe,
                          char *buf, size_t len)
{
    par_report_case rc;
    memset(&rc, 0, sizeof rc);
    snprintf(rc.origin, sizeof rc.origin, "%s/%s/case.json", f->root, dir);
    par_report r = {.parity_exe = exe ? exe : "parity", .n_backends = 1, .backends = inst, .n_cases = 1, .cases = &rc};
    par_report_repro(&r, 0, 0, buf, len);
}

/* ---- the store ------------------------------------------------------------------------------------------------- */

static par_finding *push(par_findings *f)
{
    if (f->n == f->cap) {
        int32_t cap = f->cap ? f->cap * 2 : 16;
        par_finding *nl = realloc(f->list, sizeof *nl * (size_t)cap);
        if (!nl) return NULL;
        f->list = nl;
        f->cap = cap;
    }
    par_finding *e = &f->list[f->n++];
    memset(e, 0, sizeof *e);
    return e;
}

par_finding *par_findings_find(par_findings *f, const par_signature *sig)
{
    for (int32_t i = 0; i < f->n; i++)
        if (par_signature_eq(&f->list[i].sig, sig) && strncmp(f->list[i].dir, "pending-", 8) != 0) return &f->list[i];
    return NULL;
}

static int32_t find_dir(const par_findings *f, const char *dir)
{
    for (int32_t i = 0; i < f->n; i++)
        if (!strcmp(f->list[i].dir, dir)) return i;
    return -1;
}

/* Fill an entry from a folder's finding.json. */
static int entry_from_finding(par_findings *f, const char *dir, par_finding *e, par_msg *msg)
{
    char path[4400];
    join(path, sizeof path, f->root, dir, "finding.json");
    json_object *o = read_json(path, msg);
    if (!o) return -1;
    json_object *sj;
    const char *schema = get_str(o, "schema"), *cid = get_str(o, "case");
    int bad = !schema || strcmp(schema, PAR_FINDING_SCHEMA) != 0 || !json_object_object_get_ex(o, "signature", &sj) ||
              sig_from_json(sj, &e->sig) != 0 || get_i64(o, "count", &e->count) != 0 || e->count < 1 ||
              get_u64(o, "first_seed", &e->first_seed) != 0 || get_u64(o, "last_seed", &e->last_seed) != 0;
    if (bad) {
        par_msgf(msg, PAR_ERROR, "%s: not a %s file (schema, signature, count, first_seed or last_seed missing or "
                                 "malformed)", path, PAR_FINDING_SCHEMA);
        json_object_put(o);
        return -1;
    }
    snprintf(e->dir, sizeof e->dir, "%s", dir);
    snprintf(e->case_id, sizeof e->case_id, "%s", cid ? cid : "");
    json_object_put(o);
    return 0;
}

int par_findings_open(par_findings *f, const char *out_dir, par_msg *msg)
{
    memset(f, 0, sizeof *f);
    snprintf(f->root, sizeof f->root, "%s/findings", out_dir);
    if (par_mkdir_p(f->root) != 0) {
        par_msgf(msg, PAR_ERROR, "%s: cannot create the folder: %s", f->root, strerror(errno));
        return -1;
    }
    char path[4400];
    snprintf(path, sizeof path, "%s/index.json", f->root);
    if (access(path, F_OK) == 0) {
        json_object *o = read_json(path, msg), *arr;
        const char *schema = o ? get_str(o, "schema") : NULL;
        if (!o || !schema || strcmp(schema, PAR_FINDINGS_SCHEMA) != 0 ||
            !json_object_object_get_ex(o, "findings", &arr) || !json_object_is_type(arr, json_type_array)) {
            if (o)
                par_msgf(msg, PAR_ERROR, "%s: not a %s index (schema or findings missing)", path, PAR_FINDINGS_SCHEMA);
            json_object_put(o);
            return -1;
        }
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
            json_object *it = json_object_array_get_idx(arr, i), *sj;
            par_finding e;
            memset(&e, 0, sizeof e);
            const char *dir = get_str(it, "folder"), *cid = get_str(it, "case");
            if (!dir || strchr(dir, '/') || !dir[0] || dir[0] == '.' ||
                !json_object_object_get_ex(it, "signature", &sj) || sig_from_json(sj, &e.sig) != 0 ||
                get_i64(it, "count", &e.count) != 0 || e.count < 1 || get_u64(it, "first_seed", &e.first_seed) != 0 ||
                get_u64(it, "last_seed", &e.last_seed) != 0) {
                par_msgf(msg, PAR_ERROR, "%s: $.findings[%zu]: folder, signature, count, first_seed or last_seed "
                                         "missing or malformed", path, i);
                json_object_put(o);
                par_findings_close(f);
                return -1;
            }
            snprintf(e.dir, sizeof e.dir, "%s", dir);
            snprintf(e.case_id, sizeof e.case_id, "%s", cid ? cid : "");
            /* finding.json is updated at every occurrence, the index at the end of a campaign: the folder's file
             * wins when it is readable (a campaign that died after counting) */
            par_finding fe;
            par_msg fm = {{0}};
            memset(&fe, 0, sizeof fe);
            if (entry_from_finding(f, dir, &fe, &fm) == 0 && par_signature_eq(&fe.sig, &e.sig)) e = fe;
            par_finding *slot = find_dir(f, dir) < 0 ? push(f) : NULL;
            if (slot) *slot = e;
        }
        json_object_put(o);
    }
    /* folders the index does not list: a fuzzer that died between writing a finding and the index */
    DIR *d = opendir(f->root);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.' || find_dir(f, de->d_name) >= 0 || strlen(de->d_name) >= sizeof f->list[0].dir)
                continue;
            char fp[4400];
            join(fp, sizeof fp, f->root, de->d_name, "finding.json");
            if (access(fp, F_OK) != 0) continue;
            par_finding e;
            memset(&e, 0, sizeof e);
            par_msg m = {{0}};
            if (entry_from_finding(f, de->d_name, &e, &m) != 0) {
                fprintf(stderr, "parity: findings: skipping a folder: %s\n", m.text);
                continue;
            }
            par_finding *slot = push(f);
            if (slot) *slot = e;
        }
        closedir(d);
    }
    return 0;
}

void par_findings_close(par_findings *f)
{
    free(f->list);
    f->list = NULL;
    f->n = f->cap = 0;
}

int par_findings_write_index(const par_findings *f, par_msg *msg)
{
    json_object *o = json_object_new_object(), *arr = json_object_new_array();
    put(o, "schema", jstr(PAR_FINDINGS_SCHEMA));
    put(o, "version", json_object_new_int(PAR_FINDINGS_VERSION));
    for (int32_t i = 0; i < f->n; i++) {
        const par_finding *e = &f->list[i];
        json_object *it = json_object_new_object();
        put(it, "signature", sig_json(&e->sig));
        put(it, "folder", jstr(e->dir));
        put(it, "case", jstr(e->case_id));
        put(it, "count", json_object_new_int64(e->count));
        put(it, "first_seed", json_object_new_uint64(e->first_seed));
        put(it, "last_seed", json_object_new_uint64(e->last_seed));
        json_object_array_add(arr, it);
    }
    put(o, "findings", arr);
    char path[4400];
    snprintf(path, sizeof path, "%s/index.json", f->root);
    int rc = write_json(path, o, msg);
    json_object_put(o);
    return rc;
}

int32_t par_findings_add_pending(par_findings *f, const par_finding_info *fi, par_msg *msg)
{
    /* the provisional folder: the signature without the op, and the seed, so two pending findings never share one */
    par_signature s0 = *fi->sig;
    s0.op[0] = 0;
    char sdir[200], dir[256];
    par_signature_dir(&s0, sdir, sizeof sdir);
    snprintf(dir, sizeof dir, "pending-%s-%llu", sdir, (unsigned long long)fi->seed);
    char path[4400];
    join(path, sizeof path, f->root, dir, NULL);
    if (find_dir(f, dir) >= 0 || access(path, F_OK) == 0) { /* the same seed again (a second campaign) */
        for (int k = 2; k < 1000; k++) {
            snprintf(dir, sizeof dir, "pending-%s-%llu.%d", sdir, (unsigned long long)fi->seed, k);
            join(path, sizeof path, f->root, dir, NULL);
            if (find_dir(f, dir) < 0 && access(path, F_OK) != 0) break;
        }
    }
    if (mkdir(path, 0777) != 0) {
        par_msgf(msg, PAR_ERROR, "%s: cannot create the folder: %s", path, strerror(errno));
        return -1;
    }
    char *text = par_case_to_json(fi->c, 0);
    if (!text) {
        par_msgf(msg, PAR_ERROR, "%s: cannot serialize case '%s'", path, fi->c->id);
        return -1;
    }
    char fp[4400];
    join(fp, sizeof fp, f->root, dir, "case.json");
    int rc = par_write_file_atomic(fp, text, msg);
    free(text);
    if (rc != 0) return -1;

    char repro[2048];
    repro_command(f, dir, fi->inst, fi->parity_exe, repro, sizeof repro);
    json_object *o = json_object_new_object();
    put(o, "schema", jstr(PAR_FINDING_SCHEMA));
    put(o, "version", json_object_new_int(PAR_FINDINGS_VERSION));
    put(o, "signature", sig_json(fi->sig));
    put(o, "folder", jstr(dir));
    put(o, "graph_seed", json_object_new_uint64(fi->seed));
    put(o, "case", jstr(fi->c->id));
    put(o, "case_file", jstr("case.json"));
    put(o, "plugin", fi->inst->plugin_path[0] ? jstr(fi->inst->plugin_path) : NULL);
    put(o, "record", record_json(fi->rec));
    put(o, "repro", jstr(repro));
    put(o, "count", json_object_new_int64(1));
    put(o, "first_seed", json_object_new_uint64(fi->seed));
    put(o, "last_seed", json_object_new_uint64(fi->seed));
    put(o, "localized", NULL);
    put(o, "reduction", NULL);
    join(fp, sizeof fp, f->root, dir, "finding.json");
    rc = write_json(fp, o, msg);
    json_object_put(o);
    if (rc != 0) return -1;
    par_finding *e = push(f);
    if (!e) {
        par_msgf(msg, PAR_ERROR, "findings: out of memory");
        return -1;
    }
    e->sig = *fi->sig;
    snprintf(e->dir, sizeof e->dir, "%s", dir);
    snprintf(e->case_id, sizeof e->case_id, "%s", fi->c->id);
    e->count = 1;
    e->first_seed = e->last_seed = fi->seed;
    e->new_here = 1;
    return f->n - 1;
}

/* Read entry i's finding.json, let edit change it, write it back. */
static int edit_finding(par_findings *f, int32_t i, void (*edit)(json_object *, void *), void *u, par_msg *msg)
{
    char fp[4400];
    par_findings_path(f, i, "finding.json", fp, sizeof fp);
    json_object *o = read_json(fp, msg);
    if (!o) return -1;
    edit(o, u);
    int rc = write_json(fp, o, msg);
    json_object_put(o);
    return rc;
}

typedef struct count_edit {
    const par_finding *e;
} count_edit;

static void do_count(json_object *o, void *u)
{
    const par_finding *e = ((count_edit *)u)->e;
    put(o, "count", json_object_new_int64(e->count));
    put(o, "first_seed", json_object_new_uint64(e->first_seed));
    put(o, "last_seed", json_object_new_uint64(e->last_seed));
}

static void tally(par_finding *e, uint64_t first, uint64_t last, int64_t n)
{
    e->count += n;
    if (first < e->first_seed) e->first_seed = first;
    if (last > e->last_seed) e->last_seed = last;
}

int par_findings_count(par_findings *f, int32_t i, uint64_t seed, int64_t n, par_msg *msg)
{
    tally(&f->list[i], seed, seed, n);
    count_edit ce = {&f->list[i]};
    return edit_finding(f, i, do_count, &ce, msg);
}

typedef struct set_edit {
    const char *key;
    json_object *v;
} set_edit;

static void do_set(json_object *o, void *u)
{
    set_edit *se = u;
    put(o, se->key, json_object_get(se->v));
}

int par_findings_set(par_findings *f, int32_t i, const char *key, const char *json_value, par_msg *msg)
{
    json_object *v = json_value ? json_tokener_parse(json_value) : NULL;
    if (json_value && !v) {
        par_msgf(msg, PAR_ERROR, "findings: internal: '%s' is not JSON", key);
        return -1;
    }
    set_edit se = {key, v};
    int rc = edit_finding(f, i, do_set, &se, msg);
    json_object_put(v);
    return rc;
}

typedef struct settle_edit {
    const par_signature *sig;
    const char *dir, *repro;
    json_object *loc;
} settle_edit;

static void do_settle(json_object *o, void *u)
{
    settle_edit *se = u;
    put(o, "signature", sig_json(se->sig));
    put(o, "folder", jstr(se->dir));
    put(o, "repro", jstr(se->repro));
    put(o, "localized", json_object_get(se->loc));
}

/* The repro command of entry i's finding.json with its folder changed from old_dir to the entry's. */
static void moved_repro(par_findings *f, int32_t i, const char *old_dir, char *buf, size_t len)
{
    char fp[4400];
    par_findings_path(f, i, "finding.json", fp, sizeof fp);
    par_msg m = {{0}};
    json_object *o = read_json(fp, &m);
    const char *r = o ? get_str(o, "repro") : NULL;
    buf[0] = 0;
    if (r) {
        const char *at = strstr(r, old_dir);
        if (at) snprintf(buf, len, "%.*s%s%s", (int)(at - r), r, f->list[i].dir, at + strlen(old_dir));
        else snprintf(buf, len, "%s", r);
    }
    json_object_put(o);
}

int32_t par_findings_settle(par_findings *f, int32_t pending, const par_signature *sig, const char *loc_json,
                            par_msg *msg)
{
    par_finding *have = par_findings_find(f, sig);
    char old[4400];
    par_findings_path(f, pending, NULL, old, sizeof old);
    if (have) {
        int32_t hi = (int32_t)(have - f->list);
        uint64_t seed = f->list[pending].first_seed;
        /* the occurrence is counted in the existing folder; the provisional one goes */
        remove_folder(old);
        f->list[pending] = f->list[--f->n];
        if (hi == f->n) hi = pending;
        if (par_findings_count(f, hi, seed, 1, msg) != 0) return -1;
        return hi;
    }
    char dir[256], path[4400];
    par_signature_dir(sig, dir, sizeof dir);
    join(path, sizeof path, f->root, dir, NULL);
    if (access(path, F_OK) == 0) { /* a folder of that name not in the index (damaged): keep both */
        char base[200];
        snprintf(base, sizeof base, "%s", dir);
        for (int k = 2; k < 1000 && access(path, F_OK) == 0; k++) {
            snprintf(dir, sizeof dir, "%s.%d", base, k);
            join(path, sizeof path, f->root, dir, NULL);
        }
    }
    if (rename(old, path) != 0) {
        par_msgf(msg, PAR_ERROR, "%s: cannot rename to %s: %s", old, path, strerror(errno));
        return -1;
    }
    char old_dir[256];
    snprintf(old_dir, sizeof old_dir, "%s", f->list[pending].dir);
    snprintf(f->list[pending].dir, sizeof f->list[pending].dir, "%s", dir);
    f->list[pending].sig = *sig;
    char repro[2048];
    moved_repro(f, pending, old_dir, repro, sizeof repro);
    json_object *loc = loc_json ? json_tokener_parse(loc_json) : NULL;
    settle_edit se = {sig, dir, repro, loc};
    int rc = edit_finding(f, pending, do_settle, &se, msg);
    json_object_put(loc);
    return rc == 0 ? pending : -1;
}

/* ---- merge ----------------------------------------------------------------------------------------------------- */

/* Copy the regular files of folder src into dst (created). */
static int copy_folder(const char *src, const char *dst, par_msg *msg)
{
    if (mkdir(dst, 0777) != 0) {
        par_msgf(msg, PAR_ERROR, "%s: cannot create the folder: %s", dst, strerror(errno));
        return -1;
    }
    DIR *d = opendir(src);
    if (!d) {
        par_msgf(msg, PAR_ERROR, "%s: cannot open the folder: %s", src, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp.")) continue;
        char sp[4400], dp[4400];
        snprintf(sp, sizeof sp, "%s/%s", src, e->d_name);
        snprintf(dp, sizeof dp, "%s/%s", dst, e->d_name);
        struct stat st;
        if (stat(sp, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        FILE *in = fopen(sp, "rb"), *out = in ? fopen(dp, "wb") : NULL;
        if (!in || !out) {
            par_msgf(msg, PAR_ERROR, "cannot copy %s to %s: %s", sp, dp, strerror(errno));
            rc = -1;
        }
        char buf[65536];
        size_t n;
        while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, n, out) != n) {
                par_msgf(msg, PAR_ERROR, "cannot write %s: %s", dp, strerror(errno));
                rc = -1;
            }
        if (out && fclose(out) != 0 && rc == 0) {
            par_msgf(msg, PAR_ERROR, "cannot write %s: %s", dp, strerror(errno));
            rc = -1;
        }
        if (in) fclose(in);
    }
    closedir(d);
    return rc;
}

typedef struct folder_edit {
    const char *dir, *repro;
    const par_finding *e;
} folder_edit;

static void do_folder(json_object *o, void *u)
{
    folder_edit *fe = u;
    count_edit ce = {fe->e};
    put(o, "folder", jstr(fe->dir));
    put(o, "repro", jstr(fe->repro));
    do_count(o, &ce);
}

int32_t par_findings_merge(par_findings *f, int32_t n_src, char **src_dirs, par_msg *msg)
{
    int32_t merged = 0;
    for (int32_t s = 0; s < n_src; s++) {
        par_findings src;
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/findings", src_dirs[s]);
        struct stat sb;
        if (stat(probe, &sb) != 0 || !S_ISDIR(sb.st_mode)) { /* not a campaign folder: create nothing there */
            par_msgf(msg, PAR_ERROR, "%s: not a campaign folder (no %s)", src_dirs[s], probe);
            return -1;
        }
        if (par_findings_open(&src, src_dirs[s], msg) != 0) return -1;
        if (strcmp(src.root, f->root) == 0) {
            par_findings_close(&src);
            continue; /* merging a folder into itself adds nothing */
        }
        for (int32_t i = 0; i < src.n; i++) {
            const par_finding *e = &src.list[i];
            int pending = strncmp(e->dir, "pending-", 8) == 0;
            par_finding *have = pending ? NULL : par_findings_find(f, &e->sig);
            if (have) {
                tally(have, e->first_seed, e->last_seed, e->count);
                count_edit ce = {have};
                if (edit_finding(f, (int32_t)(have - f->list), do_count, &ce, msg) != 0) goto fail;
            } else {
                char sp[4400], dp[4400], dir[256];
                snprintf(dir, sizeof dir, "%s", e->dir);
                join(sp, sizeof sp, src.root, e->dir, NULL);
                join(dp, sizeof dp, f->root, dir, NULL);
                for (int k = 2; k < 1000 && (access(dp, F_OK) == 0 || find_dir(f, dir) >= 0); k++) {
                    snprintf(dir, sizeof dir, "%s.%d", e->dir, k);
                    join(dp, sizeof dp, f->root, dir, NULL);
                }
                if (copy_folder(sp, dp, msg) != 0) goto fail;
                par_finding *ne = push(f);
                if (!ne) {
                    par_msgf(msg, PAR_ERROR, "findings: out of memory");
                    goto fail;
                }
                *ne = *e;
                snprintf(ne->dir, sizeof ne->dir, "%s", dir);
                ne->new_here = 1;
                /* the repro command names the folder: point it at the copy */
                char repro[2048];
                char old_path[4400];
                join(old_path, sizeof old_path, src.root, e->dir, NULL);
                par_findings_path(f, f->n - 1, NULL, dp, sizeof dp);
                char fp[4400];
                par_findings_path(f, f->n - 1, "finding.json", fp, sizeof fp);
                json_object *o = read_json(fp, msg);
                const char *r = o ? get_str(o, "repro") : NULL;
                const char *at = r ? strstr(r, old_path) : NULL;
                if (at) snprintf(repro, sizeof repro, "%.*s%s%s", (int)(at - r), r, dp, at + strlen(old_path));
                else snprintf(repro, sizeof repro, "%s", r ? r : "");
                json_object_put(o);
                folder_edit fe = {dir, repro, ne};
                if (edit_finding(f, f->n - 1, do_folder, &fe, msg) != 0) goto fail;
            }
            merged++;
        }
        par_findings_close(&src);
        continue;
    fail:
        par_findings_close(&src);
        return -1;
    }
    return merged;
}
