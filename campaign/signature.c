/*
 * signature.c - a finding's signature (signature.h).
 */
#include "signature.h"

#include <stdio.h>
#include <string.h>

int par_signature_eq(const par_signature *a, const par_signature *b)
{
    return a->verdict == b->verdict && strcmp(a->backend, b->backend) == 0 && strcmp(a->op, b->op) == 0;
}

/* Appends src to dst (at *n of len) with every byte outside [A-Za-z0-9._-] as '_' and no two '_' in a row. */
static void put_safe(char *dst, size_t len, size_t *n, const char *src)
{
    for (const char *p = src; *p && *n + 1 < len; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                 ch == '-';
        if (!ok) ch = '_';
        if (ch == '_' && *n > 0 && dst[*n - 1] == '_') continue;
        dst[(*n)++] = ch;
    }
    dst[*n] = '\0';
}

void par_signature_dir(const par_signature *s, char *buf, size_t len)
{
    if (len == 0) return;
    size_t n = 0;
    buf[0] = '\0';
    put_safe(buf, len, &n, s->backend);
    while (n > 0 && buf[n - 1] == '_') buf[--n] = '\0';
    put_safe(buf, len, &n, "-");
    put_safe(buf, len, &n, par_verdict_name(s->verdict));
    put_safe(buf, len, &n, "-");
    put_safe(buf, len, &n, s->op[0] ? s->op : "any");
}

void par_signature_text(const par_signature *s, char *buf, size_t len)
{
    if (s->op[0]) snprintf(buf, len, "%s %s at %s", s->backend, par_verdict_name(s->verdict), s->op);
    else snprintf(buf, len, "%s %s", s->backend, par_verdict_name(s->verdict));
}
