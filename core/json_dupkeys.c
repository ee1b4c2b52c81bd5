/*
 * json_dupkeys.c - the duplicate-key check of every JSON reader (json_dupkeys.h: the case reader, the report reader):
 * json-c keeps the last of two members with the same key, so {"op": "relu", "op": "sigmoid"} would silently run
 * sigmoid. Before the document is read, this walks the raw text, which json-c has already accepted as strict JSON,
 * and stops at the first object that names a key twice, with the object's JSON path and the key; asked to, it also
 * stops at an integer json-c saturates (beyond 64 bits), with that number's path.
 *
 * Keys are compared after decoding their escapes ("\u006fp" is "op"), as json-c compares them. The walk is bounded
 * by the text length and by json-c's depth limit (the text is valid, so the recursion is as deep as the document);
 * it never allocates. It must not accept or reject anything else: syntax is json-c's, content is the reader's.
 */
#include "json_dupkeys.h"

#include <stdio.h>
#include <string.h>

/* Keys longer than this are compared by their first KEY_MAX - 1 decoded bytes and their raw length. The formats'
 * keys are short names; a longer key is an unknown field (the case reader rejects it, the report reader ignores it). */
#define KEY_MAX 64
/* Members of one object kept to check later ones against: the formats' objects have a dozen or two. A larger object
 * is full of unknown fields; a key among its first MEMBERS_MAX members is still found again anywhere after them.
 * Bounds the pairwise comparison. */
#define MEMBERS_MAX 64

typedef struct walk {
    const char *s;
    size_t len, at;
    char *path;      /* the current JSON path, extended and cut back as the walk goes down and up */
    size_t cap, n;   /* its capacity and length */
    size_t over;     /* steps below the path that did not fit */
    unsigned flags;  /* PAR_JSON_DUPKEYS, PAR_JSON_BIGINTS */
} walk;

typedef struct jkey {
    char text[KEY_MAX];
    size_t n;        /* decoded bytes kept in text */
    size_t raw;      /* raw length between the quotes (compared only for keys cut to KEY_MAX - 1 bytes) */
} jkey;

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

static void put(jkey *k, unsigned char c)
{
    if (k->n < KEY_MAX - 1) k->text[k->n++] = (char)c;
}

/* A string at w->at (the opening quote), decoded into k when k is not NULL; w->at ends after the closing quote. */
static void string(walk *w, jkey *k)
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

/* Append a step to the path ("[i]", or ".key" with the key made safe for a message); returns what pop needs to cut
 * back to. A step that does not fit is counted, not written (the path then ends with "..."). */
static size_t push(walk *w, const char *key, size_t i)
{
    char step[KEY_MAX + 8];
    if (key) {
        size_t k = 0;
        if (w->n) step[k++] = '.';
        for (; *key && k < sizeof step - 1; key++)
            step[k++] = ((unsigned char)*key < 0x20 || *key == 0x7f) ? '?' : *key;
        step[k] = 0;
    } else {
        snprintf(step, sizeof step, "[%zu]", i);
    }
    size_t k = strlen(step), at = w->n;
    if (w->over || w->n + k + 4 > w->cap) { /* room for "..." kept */
        w->over++;
        return (size_t)-1;
    }
    memcpy(w->path + w->n, step, k + 1);
    w->n += k;
    return at;
}

static void pop(walk *w, size_t at)
{
    if (at == (size_t)-1) {
        w->over--;
        return;
    }
    w->n = at;
    w->path[at] = 0;
}

static unsigned value(walk *w, char *dup, size_t dup_cap);

/* Copies s (n bytes) into out, made safe for a one-line message. */
static void copy_safe(char *out, size_t cap, const char *s, size_t n)
{
    size_t j = 0;
    for (size_t i = 0; i < n && s[i] && j + 1 < cap; i++)
        out[j++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (cap) out[j] = 0;
}

/* Returns what was found, 0 when nothing (the path is the object's, the key in dup). */
static unsigned object(walk *w, char *dup, size_t dup_cap)
{
    jkey keys[MEMBERS_MAX];
    int n = 0;
    w->at++; /* { */
    skip_ws(w);
    while (w->at < w->len && w->s[w->at] != '}') {
        jkey k;
        string(w, &k);
        k.text[k.n < KEY_MAX ? k.n : KEY_MAX - 1] = 0;
        for (int i = 0; i < n; i++)
            if ((w->flags & PAR_JSON_DUPKEYS) && keys[i].n == k.n && memcmp(keys[i].text, k.text, k.n) == 0 &&
                (k.n < KEY_MAX - 1 || keys[i].raw == k.raw)) {
                copy_safe(dup, dup_cap, k.text, k.n);
                return PAR_JSON_DUPKEYS;
            }
        if (n < MEMBERS_MAX) keys[n++] = k;
        skip_ws(w);
        w->at++; /* : */
        size_t at = push(w, k.text, 0);
        unsigned found = value(w, dup, dup_cap);
        if (found) return found;
        pop(w, at);
        skip_ws(w);
        if (w->at < w->len && w->s[w->at] == ',') w->at++;
        skip_ws(w);
    }
    w->at++; /* } */
    return 0;
}

static unsigned array(walk *w, char *dup, size_t dup_cap)
{
    size_t i = 0;
    w->at++; /* [ */
    skip_ws(w);
    while (w->at < w->len && w->s[w->at] != ']') {
        size_t at = push(w, NULL, i++);
        unsigned found = value(w, dup, dup_cap);
        if (found) return found;
        pop(w, at);
        skip_ws(w);
        if (w->at < w->len && w->s[w->at] == ',') w->at++;
        skip_ws(w);
    }
    w->at++; /* ] */
    return 0;
}

/* 1 when the number s (n bytes, valid JSON) is an integer beyond [-2^63, 2^64 - 1], which json-c saturates. JSON
 * integers have no leading zeros, so digits compare as text once their counts are equal. */
static int beyond_64_bits(const char *s, size_t n)
{
    int neg = n && s[0] == '-';
    const char *d = s + neg, *lim = neg ? "9223372036854775808" : "18446744073709551615";
    size_t nd = n - (size_t)neg;
    for (size_t i = 0; i < nd; i++)
        if (d[i] == '.' || d[i] == 'e' || d[i] == 'E') return 0; /* a double: json-c keeps its text */
    return nd > strlen(lim) || (nd == strlen(lim) && memcmp(d, lim, nd) > 0);
}

static unsigned value(walk *w, char *dup, size_t dup_cap)
{
    skip_ws(w);
    if (w->at >= w->len) return 0;
    switch (w->s[w->at]) {
    case '{': return object(w, dup, dup_cap);
    case '[': return array(w, dup, dup_cap);
    case '"': string(w, NULL); return 0;
    default: { /* number, true, false, null */
        size_t start = w->at;
        while (w->at < w->len && !strchr(",]} \t\n\r", w->s[w->at])) w->at++;
        if ((w->flags & PAR_JSON_BIGINTS) && (w->s[start] == '-' || (w->s[start] >= '0' && w->s[start] <= '9')) &&
            beyond_64_bits(w->s + start, w->at - start)) {
            copy_safe(dup, dup_cap, w->s + start, w->at - start);
            return PAR_JSON_BIGINTS;
        }
        return 0;
    }
    }
}

unsigned par_json_check_raw(const char *text, size_t len, unsigned flags, const char *root, char *path,
                            size_t path_cap, char *what, size_t what_cap)
{
    char none[8];
    if (path_cap && path_cap < sizeof none) path[0] = 0;
    if (path_cap < sizeof none) path = none, path_cap = sizeof none; /* the walk always has a path to write */
    walk w = {text, len, 0, path, path_cap, 0, 0, flags};
    if (what_cap) what[0] = 0;
    snprintf(path, path_cap - 4, "%s", root ? root : "");
    w.n = strlen(path);
    unsigned found = value(&w, what, what_cap);
    if (found && w.over) memcpy(path + w.n, "...", 4);
    return found;
}
