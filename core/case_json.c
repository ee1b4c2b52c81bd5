/*
 * case_json.c - the reader of the case file format (docs/case-format.md): par_case_load and par_case_parse, strict
 * and defensive; the document's top level here, its inputs and constants in case_json_tensor.c, its nodes in
 * case_json_graph.c; the primitives all three share are in case_json_util.c (declared in case_json.h). The writer,
 * par_case_to_json, is in case.c.
 *
 * Must not: crash, leak or read out of bounds on any input bytes; accept unknown fields, NaN or infinite data, or
 * tensors over PAR_CASE_MAX_ELEMS; validate graphs itself beyond what precise messages need (graph.c does that).
 * Every error reads "<origin>: <JSON path>: <reason>".
 */
#include "case_json.h"
#include "json_dupkeys.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>


#define MAX_DEPTH 32                       /* JSON nesting; the format itself needs 5 */
#define MAX_TEXT_BYTES (INT64_C(1) << 30)  /* a case file; json_tokener takes an int length anyway */

/* ------------------------------------------------------------------------------------------------------------------
 * The document
 * ---------------------------------------------------------------------------------------------------------------- */

static par_case *parse_doc(reader *r, json_object *doc)
{
    static const char *const keys[] = {"schema", "version", "id",        "description", "seed", "options",
                                       "inputs", "constants", "nodes", "outputs", "reference", NULL};
    static const char *const opt_keys[] = {"repeat", "timeout_s", NULL};
    const jpath root = {"$"};
    json_object *v;
    const char *s, *id = NULL, *desc = NULL;
    uint64_t seed = 1;
    int64_t repeat = 0;
    double timeout = 0;
    char b[80];
    if (!par_cj_want(r, doc, json_type_object, &root, "an object")) return NULL;
    if (!par_cj_check_keys(r, doc, &root, keys)) return NULL;
    /* "reference" (the expected outputs that `parity export` adds) is accepted and ignored. */
    jpath p = par_cj_pkey(&root, "schema");
    if (!par_cj_has(doc, "schema", &v)) return par_cj_perr(r, &p, "missing (\"%s\")", PAR_CASE_SCHEMA), NULL;
    if (!par_cj_get_str(r, v, &p, &s)) return NULL;
    if (strcmp(s, PAR_CASE_SCHEMA) != 0)
        return par_cj_perr(r, &p, "expected \"%s\", got \"%s\"", PAR_CASE_SCHEMA, par_cj_san(s, b, sizeof b)), NULL;
    p = par_cj_pkey(&root, "version");
    if (!par_cj_has(doc, "version", &v)) return par_cj_perr(r, &p, "missing (%d)", PAR_CASE_VERSION), NULL;
    if (!par_cj_want(r, v, json_type_int, &p, "an integer")) return NULL;
    if (json_object_get_int64(v) != PAR_CASE_VERSION)
        return par_cj_perr(r, &p, "unsupported version %lld (this build reads version %d)",
                           (long long)json_object_get_int64(v), PAR_CASE_VERSION), NULL;
    p = par_cj_pkey(&root, "id");
    if (par_cj_has(doc, "id", &v)) {
        if (!par_cj_get_str(r, v, &p, &id)) return NULL;
        if (!*id) return par_cj_perr(r, &p, "empty id"), NULL;
    }
    p = par_cj_pkey(&root, "description");
    if (par_cj_has(doc, "description", &v) && !par_cj_get_str(r, v, &p, &desc)) return NULL;
    p = par_cj_pkey(&root, "seed");
    if (par_cj_has(doc, "seed", &v) && !par_cj_get_seed(r, v, &p, &seed)) return NULL;
    p = par_cj_pkey(&root, "options");
    if (par_cj_has(doc, "options", &v)) {
        json_object *f;
        if (!par_cj_want(r, v, json_type_object, &p, "an object") || !par_cj_check_keys(r, v, &p, opt_keys))
            return NULL;
        jpath rp = par_cj_pkey(&p, "repeat"), tp = par_cj_pkey(&p, "timeout_s");
        if (par_cj_has(v, "repeat", &f) && !par_cj_get_i64(r, f, &rp, 1, 1000000, &repeat)) return NULL;
        if (par_cj_has(v, "timeout_s", &f)) {
            if (!par_cj_get_num(r, f, &tp, &timeout)) return NULL;
            if (!(timeout > 0 && timeout <= 86400))
                return par_cj_perr(r, &tp, "%.9g is outside (0, 86400]", timeout), NULL;
        }
    }

    /* The default ID: the file's base name without ".json". */
    char defid[256];
    if (!id) {
        const char *base = strrchr(r->origin, '/');
        base = base ? base + 1 : r->origin;
        size_t n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0) n -= 5;
        snprintf(defid, sizeof defid, "%.*s", (int)(n < 255 ? n : 255), base);
        id = defid[0] ? defid : "case";
    }
    par_case *c = par_case_create(id, seed);
    if (!c || !(c->origin = strdup(r->origin)) || (desc && !(c->description = strdup(desc)))) {
        par_case_destroy(c);
        return par_cj_perr(r, &root, "out of memory"), NULL;
    }
    c->repeat = (int32_t)repeat;
    c->timeout_s = timeout;

    static const char *const sections[3] = {"inputs", "constants", "nodes"};
    for (int sec = 0; sec < 3; sec++) {
        p = par_cj_pkey(&root, sections[sec]);
        if (!par_cj_has(doc, sections[sec], &v)) continue;
        if (!par_cj_want(r, v, json_type_array, &p, "an array")) goto fail;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            jpath ep = par_cj_pidx(&p, i);
            json_object *e = json_object_array_get_idx(v, i);
            if (!(sec == 2 ? par_cj_parse_node(r, c, e, &ep) : par_cj_parse_tensor(r, c, e, &ep, sec == 1))) goto fail;
        }
    }
    p = par_cj_pkey(&root, "outputs");
    if (!par_cj_has(doc, "outputs", &v)) {
        par_cj_perr(r, &p, "missing (the names of the graph outputs)");
        goto fail;
    }
    if (!par_cj_want(r, v, json_type_array, &p, "an array of value names")) goto fail;
    if (json_object_array_length(v) == 0) {
        par_cj_perr(r, &p, "at least one output is needed");
        goto fail;
    }
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        jpath ep = par_cj_pidx(&p, i);
        const char *vn;
        if (!par_cj_get_str(r, json_object_array_get_idx(v, i), &ep, &vn)) goto fail;
        int32_t idx = par_graph_find_value(c->graph, vn);
        if (idx < 0) {
            par_cj_perr(r, &ep, "no value named '%s'", par_cj_san(vn, b, sizeof b));
            goto fail;
        }
        par_case_output(c, idx);
        if (c->status != PAR_OK) {
            par_cj_perr(r, &ep, "%s", c->err.text);
            goto fail;
        }
    }
    if (par_case_finish(c) != PAR_OK) {
        par_cj_perr(r, &root, "%s", c->err.text);
        goto fail;
    }
    return c;
fail:
    par_case_destroy(c);
    return NULL;
}

par_case *par_case_parse(const char *text, size_t len, const char *origin, par_msg *msg)
{
    par_msg dummy;
    reader r = {origin ? origin : "<text>", msg ? msg : &dummy, 0, 0};
    const jpath root = {"$"};
    r.msg->text[0] = 0;
    if (!text && len) return par_cj_perr(&r, &root, "no text"), NULL;
    if (len > (size_t)MAX_TEXT_BYTES) return par_cj_perr(&r, &root, "text of %zu bytes is too large", len), NULL;
    struct json_tokener *tok = json_tokener_new_ex(MAX_DEPTH);
    if (!tok) return par_cj_perr(&r, &root, "out of memory"), NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, text ? text : "", (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue) {
        /* A top-level literal ("null", "12") is complete only once the tokener sees the end: feed it a NUL. */
        doc = json_tokener_parse_ex(tok, "", 1);
        if (json_tokener_get_error(tok) == json_tokener_success) jerr = json_tokener_success;
        end = len;
    }
    json_tokener_free(tok);
    if (jerr == json_tokener_success && end < len) jerr = json_tokener_error_parse_unexpected; /* e.g. after a NUL */
    if (jerr != json_tokener_success) {
        size_t line = 1, col = 1;
        if (end > len) end = len;
        for (size_t i = 0; i < end; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        par_cj_perr(&r, &root, "invalid JSON at line %zu, column %zu (byte %zu): %s", line, col, end,
                    jerr == json_tokener_continue ? "unexpected end of input" : json_tokener_error_desc(jerr));
        json_object_put(doc);
        return NULL;
    }
    /* json-c keeps the last of duplicate keys: refuse them before reading the document (core/json_dupkeys.c). */
    char where[256], key[64], buf[96];
    par_case *c = NULL;
    if (par_json_check_raw(text, len, PAR_JSON_DUPKEYS, "$", where, sizeof where, key, sizeof key)) {
        jpath at;
        snprintf(at.s, sizeof at.s, "%s", where);
        par_cj_perr(&r, &at, "duplicate key '%s'", par_cj_san(key, buf, sizeof buf));
    } else {
        c = parse_doc(&r, doc);
    }
    json_object_put(doc);
    return c;
}

par_case *par_case_load(const char *path, par_msg *msg)
{
    par_msg dummy;
    if (!msg) msg = &dummy;
    if (!path) return par_msgf(msg, PAR_ERROR, "(null): $: no file name"), NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return par_msgf(msg, PAR_ERROR, "%s: $: cannot open: %s", path, strerror(errno)), NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_TEXT_BYTES) {
        close(fd);
        return par_msgf(msg, PAR_ERROR, "%s: $: not a regular file of at most 1 GiB", path), NULL;
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    size_t got = 0;
    while (buf && got < size) {
        ssize_t k = read(fd, buf + got, size - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    int err = errno;
    close(fd);
    if (!buf) return par_msgf(msg, PAR_ERROR, "%s: $: out of memory", path), NULL;
    if (got < size) {
        free(buf);
        return par_msgf(msg, PAR_ERROR, "%s: $: cannot read: %s", path, err ? strerror(err) : "file is short"), NULL;
    }
    par_case *c = par_case_parse(buf, size, path, msg);
    free(buf);
    return c;
}
