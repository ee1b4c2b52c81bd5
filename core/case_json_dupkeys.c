/*
 * case_json_dupkeys.c - the duplicate-key check of the case reader (declared in case_json.h): json-c keeps the last
 * of two members with the same key, so {"op": "relu", "op": "sigmoid"} would silently run sigmoid. Before the
 * document is read, this walks the raw text, which json-c has already accepted as strict JSON, and fails on the
 * first object that names a key twice, with the object's JSON path and the key.
 *
 * Keys are compared after decoding their escapes ("\u006fp" is "op"), as json-c compares them. The walk is bounded
 * by the text length and by json-c's depth limit (the text is valid, so the recursion is as deep as the document);
 * it never allocates. It must not accept or reject anything else: syntax is json-c's, content is the reader's.
 */
#include "case_json.h"

#include <string.h>

/* Keys longer than this are compared by their first KEY_MAX - 1 decoded bytes and their raw length. The format's
 * keys are short names; a longer key is an unknown field that the reader rejects anyway. */
#define KEY_MAX 64
/* Members of one object checked against each other: the format's objects have a dozen; a larger object is full of
 * unknown fields that the reader rejects. Bounds the pairwise comparison. */
#define MEMBERS_MAX 64

typedef struct walk {
    reader *r;
    const char *s;
    size_t len, at;
} walk;

typedef struct key {
    char text[KEY_MAX];
    size_t n;        /* decoded bytes kept in text */
    size_t raw;      /* raw length between the quotes (compared only for keys cut to KEY_MAX - 1 bytes) */
} key;

static void skip_ws(walk *w)
{
    while (w->at < w->len && (w->s[w->at] == ' ' || w->s[w->at] == '\t' || w->s[w->at] == '\n' ||
                              w->s[w->at] == '\r'))
        w->at++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0;
}

static void put(key *k, unsigned char c)
{
    if (k->n < KEY_MAX - 1) k->text[k->n++] = (char)c;
}

/* A string at w->at (the opening quote), decoded into k when k is not NULL; w->at ends after the closing quote. */
static void string(walk *w, key *k)
{
    size_t start = ++w->at;
    unsigned hi = 0; /* a pending high surrogate */
    if (k) k->n = 0;
    while (w->at < w->len && w->s[w->at] != '"') {
        unsigned char c = (unsigned char)w->s[w->at++];
        if (c != '\\') {
            if (k) put(k, c);
            continue;
        }
        if (w->at >= w->len) break;
        char e = w->s[w->at++];
        unsigned cp = 0;
        switch (e) {
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            for (int i = 0; i < 4 && w->at < w->len; i++) cp = cp * 16 + (unsigned)hexval(w->s[w->at++]);
            break;
        default: cp = (unsigned char)e; break; /* \" \\ \/ */
        }
        if (!k) continue;
        if (cp >= 0xD800 && cp < 0xDC00) { /* UTF-16 pairs become one code point, as json-c decodes them */
            hi = cp;
            continue;
        }
        if (cp >= 0xDC00 && cp < 0xE000 && hi) cp = 0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00);
        hi = 0;
        if (cp < 0x80) {
            put(k, (unsigned char)cp);
        } else if (cp < 0x800) {
            put(k, (unsigned char)(0xC0 | (cp >> 6)));
            put(k, (unsigned char)(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            put(k, (unsigned char)(0xE0 | (cp >> 12)));
            put(k, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
            put(k, (unsigned char)(0x80 | (cp & 0x3F)));
        } else {
            put(k, (unsigned char)(0xF0 | (cp >> 18)));
            put(k, (unsigned char)(0x80 | ((cp >> 12) & 0x3F)));
            put(k, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
            put(k, (unsigned char)(0x80 | (cp & 0x3F)));
        }
    }
    if (k) k->raw = w->at - start;
    if (w->at < w->len) w->at++; /* the closing quote */
}

static int value(walk *w, const jpath *path);

static int object(walk *w, const jpath *path)
{
    key keys[MEMBERS_MAX];
    int n = 0;
    w->at++; /* { */
    skip_ws(w);
    while (w->at < w->len && w->s[w->at] != '}') {
        key k;
        string(w, &k);
        for (int i = 0; i < n; i++)
            if (keys[i].n == k.n && memcmp(keys[i].text, k.text, k.n) == 0 &&
                (k.n < KEY_MAX - 1 || keys[i].raw == k.raw)) {
                char buf[96];
                k.text[k.n < KEY_MAX ? k.n : KEY_MAX - 1] = 0;
                return par_cj_perr(w->r, path, "duplicate key '%s'", par_cj_san(k.text, buf, sizeof buf));
            }
        if (n < MEMBERS_MAX) keys[n++] = k;
        skip_ws(w);
        w->at++; /* : */
        k.text[k.n < KEY_MAX ? k.n : KEY_MAX - 1] = 0;
        const jpath sub = par_cj_pkey(path, k.text);
        if (!value(w, &sub)) return 0;
        skip_ws(w);
        if (w->at < w->len && w->s[w->at] == ',') w->at++;
        skip_ws(w);
    }
    w->at++; /* } */
    return 1;
}

static int array(walk *w, const jpath *path)
{
    size_t i = 0;
    w->at++; /* [ */
    skip_ws(w);
    while (w->at < w->len && w->s[w->at] != ']') {
        const jpath sub = par_cj_pidx(path, i++);
        if (!value(w, &sub)) return 0;
        skip_ws(w);
        if (w->at < w->len && w->s[w->at] == ',') w->at++;
        skip_ws(w);
    }
    w->at++; /* ] */
    return 1;
}

static int value(walk *w, const jpath *path)
{
    skip_ws(w);
    if (w->at >= w->len) return 1;
    switch (w->s[w->at]) {
    case '{': return object(w, path);
    case '[': return array(w, path);
    case '"': string(w, NULL); return 1;
    default: /* number, true, false, null */
        while (w->at < w->len && !strchr(",]} \t\n\r", w->s[w->at])) w->at++;
        return 1;
    }
}

int par_cj_check_duplicates(reader *r, const char *text, size_t len)
{
    walk w = {r, text, len, 0};
    const jpath root = {"$"};
    return value(&w, &root);
}
