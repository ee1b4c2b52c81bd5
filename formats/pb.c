/*
 * pb.c - the protobuf wire format (pb.h): the field reader and the growable writer. Every read compares the bytes it
 * needs with end - p (a size, never a pointer sum), so a hostile length cannot wrap around.
 */
#include "pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void par_pb_reader_init(par_pb_reader *r, const uint8_t *base, const uint8_t *p, size_t len)
{
    r->base = base;
    r->p = p;
    r->end = p + len;
}

int par_pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (p == end) return -1;
        uint8_t b = *p++;
        /* the 10th byte holds bit 63 only: anything more would not fit 64 bits */
        if (i == 9 && b > 1) return -2;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            *pp = p;
            return 0;
        }
    }
    return -2;
}

size_t par_pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint64_t load_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void varint_why(char *why, int rc, const char *what, size_t at)
{
    if (rc == -1)
        snprintf(why, PAR_PB_WHY_LEN, "truncated %s at byte %zu", what, at);
    else
        snprintf(why, PAR_PB_WHY_LEN, "%s longer than 10 bytes or beyond 64 bits at byte %zu", what, at);
}

int par_pb_next(par_pb_reader *r, par_pb_field *f, char why[PAR_PB_WHY_LEN])
{
    memset(f, 0, sizeof *f);
    if (r->p == r->end) return 0;
    const uint8_t *p = r->p;
    size_t at = (size_t)(p - r->base);
    f->offset = at;
    uint64_t tag;
    int rc = par_pb_varint(&p, r->end, &tag);
    if (rc) {
        varint_why(why, rc, "tag", at);
        return -1;
    }
    if (tag >> 32) {
        snprintf(why, PAR_PB_WHY_LEN, "tag %llu beyond 32 bits at byte %zu", (unsigned long long)tag, at);
        return -1;
    }
    uint32_t number = (uint32_t)(tag >> 3);
    unsigned wire = (unsigned)(tag & 7);
    if (number == 0 || number > PAR_PB_MAX_FIELD) {
        snprintf(why, PAR_PB_WHY_LEN, "field number %u out of range at byte %zu", number, at);
        return -1;
    }
    f->number = number;
    f->wire = (par_pb_wire)wire;
    size_t left;
    at = (size_t)(p - r->base);
    switch (wire) {
    case PAR_PB_VARINT:
        rc = par_pb_varint(&p, r->end, &f->u);
        if (rc) {
            varint_why(why, rc, "varint", at);
            return -1;
        }
        break;
    case PAR_PB_FIXED64:
    case PAR_PB_FIXED32: {
        size_t n = wire == PAR_PB_FIXED64 ? 8 : 4;
        left = (size_t)(r->end - p);
        if (left < n) {
            snprintf(why, PAR_PB_WHY_LEN, "truncated fixed%zu at byte %zu (%zu bytes left)", n * 8, at, left);
            return -1;
        }
        f->u = load_le(p, (int)n);
        p += n;
        break;
    }
    case PAR_PB_LEN: {
        uint64_t len;
        rc = par_pb_varint(&p, r->end, &len);
        if (rc) {
            varint_why(why, rc, "length", at);
            return -1;
        }
        left = (size_t)(r->end - p);
        if (len > (uint64_t)left) {
            snprintf(why, PAR_PB_WHY_LEN, "length %llu at byte %zu past the end (%zu bytes left)",
                     (unsigned long long)len, at, left);
            return -1;
        }
        f->data = p;
        f->len = (size_t)len;
        p += len;
        break;
    }
    case PAR_PB_SGROUP:
    case PAR_PB_EGROUP:
        snprintf(why, PAR_PB_WHY_LEN, "group (wire type %u) at byte %zu: groups are not supported", wire,
                 f->offset);
        return -1;
    default:
        snprintf(why, PAR_PB_WHY_LEN, "invalid wire type %u at byte %zu", wire, f->offset);
        return -1;
    }
    r->p = p;
    f->end = (size_t)(p - r->base);
    return 1;
}

int par_pb_scalars_init(par_pb_scalars *s, const par_pb_field *f, par_pb_wire elem, const uint8_t *base,
                        size_t *count, char why[PAR_PB_WHY_LEN])
{
    memset(s, 0, sizeof *s);
    s->elem = elem;
    if (f->wire == elem) {
        s->one = f->u;
        s->single = 1;
        *count = 1;
        return 0;
    }
    if (f->wire != PAR_PB_LEN) {
        snprintf(why, PAR_PB_WHY_LEN, "wire type %d at byte %zu, expected %d or a packed run", (int)f->wire,
                 f->offset, (int)elem);
        return -1;
    }
    s->p = f->data;
    s->end = f->data + f->len;
    if (elem == PAR_PB_FIXED32 || elem == PAR_PB_FIXED64) {
        size_t n = elem == PAR_PB_FIXED32 ? 4 : 8;
        if (f->len % n) {
            snprintf(why, PAR_PB_WHY_LEN, "packed fixed%zu run of %zu bytes at byte %zu is not a whole number",
                     n * 8, f->len, f->offset);
            return -1;
        }
        *count = f->len / n;
        return 0;
    }
    /* packed varints: every element must be complete and fit 64 bits */
    size_t n = 0;
    const uint8_t *p = s->p;
    while (p != s->end) {
        uint64_t v;
        const uint8_t *at = p;
        int rc = par_pb_varint(&p, s->end, &v);
        if (rc) {
            varint_why(why, rc, "packed varint", (size_t)(at - base));
            return -1;
        }
        n++;
    }
    *count = n;
    return 0;
}

int par_pb_scalars_next(par_pb_scalars *s, uint64_t *v)
{
    if (s->single) {
        s->single = 0;
        *v = s->one;
        return 1;
    }
    if (!s->p || s->p == s->end) return 0;
    if (s->elem == PAR_PB_VARINT) {
        if (par_pb_varint(&s->p, s->end, v)) return 0; /* checked by init */
        return 1;
    }
    int n = s->elem == PAR_PB_FIXED32 ? 4 : 8;
    if ((size_t)(s->end - s->p) < (size_t)n) return 0;
    *v = load_le(s->p, n);
    s->p += n;
    return 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------------------------------------------- */

void par_pb_writer_init(par_pb_writer *w)
{
    w->buf = NULL;
    w->len = w->cap = 0;
    w->oom = 0;
}

void par_pb_writer_free(par_pb_writer *w)
{
    free(w->buf);
    par_pb_writer_init(w);
}

static int reserve(par_pb_writer *w, size_t extra)
{
    if (w->oom) return -1;
    if (extra <= w->cap - w->len) return 0;
    if (extra > SIZE_MAX / 2 - w->len) {
        w->oom = 1;
        return -1;
    }
    size_t cap = w->cap ? w->cap : 256;
    while (cap - w->len < extra) cap *= 2;
    uint8_t *b = realloc(w->buf, cap);
    if (!b) {
        w->oom = 1;
        return -1;
    }
    w->buf = b;
    w->cap = cap;
    return 0;
}

void par_pb_put_raw(par_pb_writer *w, const void *data, size_t len)
{
    if (!len || reserve(w, len)) return;
    memcpy(w->buf + w->len, data, len);
    w->len += len;
}

static size_t encode_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

void par_pb_put_varint(par_pb_writer *w, uint64_t v)
{
    uint8_t b[10];
    par_pb_put_raw(w, b, encode_varint(b, v));
}

void par_pb_put_tag(par_pb_writer *w, uint32_t field, par_pb_wire wire)
{
    par_pb_put_varint(w, (uint64_t)field << 3 | (uint64_t)wire);
}

void par_pb_put_uint(par_pb_writer *w, uint32_t field, uint64_t v)
{
    par_pb_put_tag(w, field, PAR_PB_VARINT);
    par_pb_put_varint(w, v);
}

void par_pb_put_int(par_pb_writer *w, uint32_t field, int64_t v)
{
    par_pb_put_uint(w, field, (uint64_t)v);
}

static void put_le(par_pb_writer *w, uint64_t v, int n)
{
    uint8_t b[8];
    for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
    par_pb_put_raw(w, b, (size_t)n);
}

void par_pb_put_fixed32(par_pb_writer *w, uint32_t field, uint32_t v)
{
    par_pb_put_tag(w, field, PAR_PB_FIXED32);
    put_le(w, v, 4);
}

void par_pb_put_fixed64(par_pb_writer *w, uint32_t field, uint64_t v)
{
    par_pb_put_tag(w, field, PAR_PB_FIXED64);
    put_le(w, v, 8);
}

void par_pb_put_float(par_pb_writer *w, uint32_t field, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    par_pb_put_fixed32(w, field, u);
}

void par_pb_put_bytes(par_pb_writer *w, uint32_t field, const void *data, size_t len)
{
    par_pb_put_tag(w, field, PAR_PB_LEN);
    par_pb_put_varint(w, len);
    par_pb_put_raw(w, data, len);
}

void par_pb_put_string(par_pb_writer *w, uint32_t field, const char *s)
{
    par_pb_put_bytes(w, field, s, strlen(s));
}

size_t par_pb_begin(par_pb_writer *w, uint32_t field)
{
    par_pb_put_tag(w, field, PAR_PB_LEN);
    return w->len;
}

/* The body [mark, len) moves up by the size of its length's varint, which is then written in the gap. A body is
 * moved once per enclosing submessage: O(size x depth), with depth bounded by the format (ONNX: 16). */
void par_pb_end(par_pb_writer *w, size_t mark)
{
    if (w->oom || mark > w->len) return;
    size_t body = w->len - mark;
    uint8_t b[10];
    size_t n = encode_varint(b, body);
    if (reserve(w, n)) return;
    memmove(w->buf + mark + n, w->buf + mark, body);
    memcpy(w->buf + mark, b, n);
    w->len += n;
}
