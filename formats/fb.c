/*
 * fb.c - the FlatBuffers reader and builder of fb.h. The reader checks every position before it reads (see fb.h
 * for the rules); the builder follows the reference implementation's back-to-front layout.
 *
 * Must not: know any schema; read past the buffer it was given; trust any offset, length or vtable entry.
 */
#include "formats/fb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FB_MAX_SIZE ((size_t)0x7fffffff)

uint16_t par_fb_load16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
uint32_t par_fb_load32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
uint64_t par_fb_load64(const uint8_t *p) { return par_fb_load32(p) | ((uint64_t)par_fb_load32(p + 4) << 32); }

/* ---- reader ---------------------------------------------------------------------------------------------------- */

static int fail(par_fb_reader *r, const char *fmt, unsigned long long a, unsigned long long b)
{
    if (!r->why) {
        snprintf(r->why_buf, sizeof r->why_buf, fmt, a, b);
        r->why = r->why_buf;
    }
    return 0;
}

/* Follow the uoffset stored at p: the target position, or 0 with r->why set. */
static int deref(par_fb_reader *r, uint64_t p, uint32_t *target)
{
    if (p + 4 > r->len) return fail(r, "offset at byte %llu lies past the end (%llu bytes)", p, r->len);
    uint32_t v = par_fb_load32(r->buf + p);
    if (v == 0) return fail(r, "offset at byte %llu is 0 (points at itself)", p, 0);
    if (p + v >= r->len) return fail(r, "offset at byte %llu points past the end (to %llu)", p, p + v);
    *target = (uint32_t)(p + v);
    return 1;
}

static int open_table(par_fb_reader *r, uint32_t pos, par_fb_table *t)
{
    memset(t, 0, sizeof *t);
    if ((uint64_t)pos + 4 > r->len) return fail(r, "table at byte %llu lies past the end (%llu bytes)", pos, r->len);
    int32_t soff = (int32_t)par_fb_load32(r->buf + pos);
    int64_t vt = (int64_t)pos - soff;
    if (vt < 0 || (uint64_t)vt + 4 > r->len)
        return fail(r, "table at byte %llu: its vtable lies outside the buffer (at %lld)", pos, (unsigned long long)vt);
    uint16_t vt_len = par_fb_load16(r->buf + vt), size = par_fb_load16(r->buf + vt + 2);
    if (vt_len < 4 || (vt_len & 1) || (uint64_t)vt + vt_len > r->len)
        return fail(r, "vtable at byte %llu: bad length %llu", (unsigned long long)vt, vt_len);
    if (size < 4 || (uint64_t)pos + size > r->len)
        return fail(r, "table at byte %llu: its size %llu runs past the end", pos, size);
    t->pos = pos;
    t->vt = (uint32_t)vt;
    t->vt_len = vt_len;
    t->size = size;
    return 1;
}

int par_fb_open(par_fb_reader *r, const uint8_t *buf, size_t len, const char *ident, par_fb_table *root)
{
    memset(r, 0, sizeof *r);
    memset(root, 0, sizeof *root);
    r->buf = buf;
    r->len = len;
    r->budget = (int64_t)len * 4 + 4096;
    if (!buf || len < 8) return fail(r, "%llu bytes: too short for a flatbuffer", len, 0);
    if (len > FB_MAX_SIZE) return fail(r, "%llu bytes: larger than 2 GiB", len, 0);
    if (ident && memcmp(buf + 4, ident, 4) != 0) return fail(r, "no file identifier (expected it at bytes 4..7)", 0, 0);
    uint32_t pos;
    if (!deref(r, 0, &pos)) return 0;
    return open_table(r, pos, root);
}

/* The position of a field of `size` bytes, or 0 when absent (or on error, with why set). */
static uint32_t field(par_fb_reader *r, const par_fb_table *t, int slot, uint32_t size)
{
    if (r->why || !t->vt_len || slot < 0) return 0;
    uint32_t e = 4 + 2 * (uint32_t)slot;
    if (e + 2 > t->vt_len) return 0;
    uint16_t fo = par_fb_load16(r->buf + t->vt + e);
    if (!fo) return 0;
    if ((uint32_t)fo + size > t->size) {
        fail(r, "field %llu lies outside its table (%llu bytes)", (unsigned long long)slot, t->size);
        return 0;
    }
    return t->pos + fo;
}

int par_fb_has(par_fb_reader *r, const par_fb_table *t, int slot) { return field(r, t, slot, 1) != 0; }

uint8_t par_fb_u8(par_fb_reader *r, const par_fb_table *t, int slot, uint8_t def)
{
    uint32_t p = field(r, t, slot, 1);
    return p ? r->buf[p] : def;
}
int8_t par_fb_i8(par_fb_reader *r, const par_fb_table *t, int slot, int8_t def)
{
    uint32_t p = field(r, t, slot, 1);
    return p ? (int8_t)r->buf[p] : def;
}
int32_t par_fb_i32(par_fb_reader *r, const par_fb_table *t, int slot, int32_t def)
{
    uint32_t p = field(r, t, slot, 4);
    return p ? (int32_t)par_fb_load32(r->buf + p) : def;
}
uint32_t par_fb_u32(par_fb_reader *r, const par_fb_table *t, int slot, uint32_t def)
{
    uint32_t p = field(r, t, slot, 4);
    return p ? par_fb_load32(r->buf + p) : def;
}
int64_t par_fb_i64(par_fb_reader *r, const par_fb_table *t, int slot, int64_t def)
{
    uint32_t p = field(r, t, slot, 8);
    return p ? (int64_t)par_fb_load64(r->buf + p) : def;
}
uint64_t par_fb_u64(par_fb_reader *r, const par_fb_table *t, int slot, uint64_t def)
{
    uint32_t p = field(r, t, slot, 8);
    return p ? par_fb_load64(r->buf + p) : def;
}
float par_fb_f32(par_fb_reader *r, const par_fb_table *t, int slot, float def)
{
    uint32_t p = field(r, t, slot, 4);
    if (!p) return def;
    uint32_t u = par_fb_load32(r->buf + p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int par_fb_table_field(par_fb_reader *r, const par_fb_table *t, int slot, par_fb_table *out)
{
    memset(out, 0, sizeof *out);
    uint32_t p = field(r, t, slot, 4), pos;
    if (!p || !deref(r, p, &pos)) return 0;
    if (--r->budget < 0) return fail(r, "too many objects for the file's size", 0, 0);
    return open_table(r, pos, out);
}

int par_fb_vector(par_fb_reader *r, const par_fb_table *t, int slot, uint32_t elem_size, par_fb_vec *out)
{
    memset(out, 0, sizeof *out);
    uint32_t p = field(r, t, slot, 4), pos;
    if (!p || !deref(r, p, &pos)) return 0;
    if ((uint64_t)pos + 4 > r->len) return fail(r, "vector at byte %llu lies past the end", pos, 0);
    uint32_t n = par_fb_load32(r->buf + pos);
    uint64_t bytes = (uint64_t)n * elem_size;
    if (bytes > r->len - pos - 4)
        return fail(r, "vector of %llu elements at byte %llu runs past the end", n, pos);
    r->budget -= n;
    if (r->budget < 0) return fail(r, "too many elements for the file's size (shared vectors)", 0, 0);
    out->pos = pos + 4;
    out->n = n;
    return 1;
}

int par_fb_string(par_fb_reader *r, const par_fb_table *t, int slot, const char **s, uint32_t *n)
{
    par_fb_vec v;
    *s = NULL;
    *n = 0;
    if (!par_fb_vector(r, t, slot, 1, &v)) return 0;
    if ((uint64_t)v.pos + v.n >= r->len || r->buf[v.pos + v.n] != 0)
        return fail(r, "string at byte %llu has no terminating NUL", v.pos, 0);
    *s = (const char *)r->buf + v.pos;
    *n = v.n;
    return 1;
}

int par_fb_vec_table(par_fb_reader *r, const par_fb_vec *v, uint32_t i, par_fb_table *out)
{
    uint32_t pos;
    memset(out, 0, sizeof *out);
    if (r->why || i >= v->n || !deref(r, (uint64_t)v->pos + 4 * (uint64_t)i, &pos)) return 0;
    if (--r->budget < 0) return fail(r, "too many objects for the file's size", 0, 0);
    return open_table(r, pos, out);
}

int32_t par_fb_vec_i32(const par_fb_reader *r, const par_fb_vec *v, uint32_t i)
{
    return i < v->n ? (int32_t)par_fb_load32(r->buf + v->pos + 4 * (size_t)i) : 0;
}
int64_t par_fb_vec_i64(const par_fb_reader *r, const par_fb_vec *v, uint32_t i)
{
    return i < v->n ? (int64_t)par_fb_load64(r->buf + v->pos + 8 * (size_t)i) : 0;
}
float par_fb_vec_f32(const par_fb_reader *r, const par_fb_vec *v, uint32_t i)
{
    uint32_t u = i < v->n ? par_fb_load32(r->buf + v->pos + 4 * (size_t)i) : 0;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- builder --------------------------------------------------------------------------------------------------- */

void par_fbb_init(par_fbb *b)
{
    memset(b, 0, sizeof *b);
    b->minalign = 1;
}

void par_fbb_free(par_fbb *b)
{
    if (!b) return;
    free(b->buf);
    memset(b, 0, sizeof *b);
}

static int reserve(par_fbb *b, size_t n)
{
    if (b->failed) return 0;
    if (b->used + n > FB_MAX_SIZE) return b->failed = 1, 0;
    if (b->used + n <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->used + n) cap *= 2;
    uint8_t *nb = malloc(cap);
    if (!nb) return b->failed = 1, 0;
    if (b->used) memcpy(nb + cap - b->used, b->buf + b->cap - b->used, b->used);
    free(b->buf);
    b->buf = nb;
    b->cap = cap;
    return 1;
}

static void push(par_fbb *b, const void *p, size_t n)
{
    if (!n || !reserve(b, n)) return;
    b->used += n;
    memcpy(b->buf + b->cap - b->used, p, n);
}

static void push_zeros(par_fbb *b, size_t n)
{
    if (!n || !reserve(b, n)) return;
    b->used += n;
    memset(b->buf + b->cap - b->used, 0, n);
}

static void push32(par_fbb *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    push(b, x, 4);
}

static void push16(par_fbb *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    push(b, x, 2);
}

/* Pad so that after `additional` more bytes the next `align`-byte scalar is aligned (relative to the end, which is
 * aligned to minalign when finished). */
static void prep(par_fbb *b, size_t align, size_t additional)
{
    if (align > b->minalign) b->minalign = align;
    size_t pad = (~(b->used + additional) + 1) & (align - 1);
    push_zeros(b, pad);
}

/* The uoffset to write at the next 4 bytes pushed, pointing at off. */
static uint32_t refer(par_fbb *b, par_fb_off off)
{
    prep(b, 4, 0);
    return (uint32_t)(b->used + 4 - off);
}

par_fb_off par_fbb_vector(par_fbb *b, const void *data, uint32_t n, uint32_t elem_size, uint32_t align)
{
    size_t bytes = (size_t)n * elem_size;
    prep(b, 4, bytes);
    prep(b, align < 1 ? 1 : align, bytes);
    push(b, data, bytes);
    push32(b, n);
    return b->failed ? 0 : (par_fb_off)b->used;
}

par_fb_off par_fbb_vector_offsets(par_fbb *b, const par_fb_off *offs, uint32_t n)
{
    prep(b, 4, (size_t)n * 4);
    for (uint32_t i = n; i-- > 0;) push32(b, refer(b, offs[i]));
    push32(b, n);
    return b->failed ? 0 : (par_fb_off)b->used;
}

par_fb_off par_fbb_string(par_fbb *b, const char *s, size_t n)
{
    prep(b, 4, n + 1);
    push_zeros(b, 1);
    push(b, s, n);
    push32(b, (uint32_t)n);
    return b->failed ? 0 : (par_fb_off)b->used;
}

void par_fbb_start(par_fbb *b)
{
    b->in_table = 1;
    b->table_start = b->used;
    b->n_slots = 0;
    memset(b->slot_off, 0, sizeof b->slot_off);
}

static void mark(par_fbb *b, int slot)
{
    if (slot < 0 || slot >= PAR_FB_MAX_SLOTS) {
        b->failed = 1;
        return;
    }
    b->slot_off[slot] = (uint32_t)b->used;
    if (slot + 1 > b->n_slots) b->n_slots = slot + 1;
}

void par_fbb_add_u8(par_fbb *b, int slot, uint8_t v, uint8_t def)
{
    if (v == def) return;
    push(b, &v, 1);
    mark(b, slot);
}

void par_fbb_add_i32(par_fbb *b, int slot, int32_t v, int32_t def)
{
    if (v == def) return;
    prep(b, 4, 0);
    push32(b, (uint32_t)v);
    mark(b, slot);
}

void par_fbb_add_i64(par_fbb *b, int slot, int64_t v, int64_t def)
{
    if (v == def) return;
    prep(b, 8, 0);
    push32(b, (uint32_t)((uint64_t)v >> 32));
    push32(b, (uint32_t)v);
    mark(b, slot);
}

void par_fbb_add_f32(par_fbb *b, int slot, float v, float def)
{
    uint32_t u, d;
    memcpy(&u, &v, 4);
    memcpy(&d, &def, 4);
    if (u == d) return;
    prep(b, 4, 0);
    push32(b, u);
    mark(b, slot);
}

void par_fbb_add_off(par_fbb *b, int slot, par_fb_off off)
{
    if (!off) return;
    push32(b, refer(b, off));
    mark(b, slot);
}

par_fb_off par_fbb_end(par_fbb *b)
{
    prep(b, 4, 0);
    push32(b, 0); /* the soffset to the vtable, patched below */
    size_t loc = b->used;
    size_t obj = loc - b->table_start;
    if (obj > 0xffff || b->n_slots > PAR_FB_MAX_SLOTS) b->failed = 1;
    for (int s = b->n_slots; s-- > 0;) push16(b, b->slot_off[s] ? (uint16_t)(loc - b->slot_off[s]) : 0);
    push16(b, (uint16_t)obj);
    push16(b, (uint16_t)(4 + 2 * b->n_slots));
    b->in_table = 0;
    if (b->failed) return 0;
    uint32_t soff = (uint32_t)(b->used - loc);
    uint8_t *p = b->buf + b->cap - loc;
    p[0] = (uint8_t)soff, p[1] = (uint8_t)(soff >> 8), p[2] = (uint8_t)(soff >> 16), p[3] = (uint8_t)(soff >> 24);
    return (par_fb_off)loc;
}

const uint8_t *par_fbb_finish(par_fbb *b, par_fb_off root, const char *ident, size_t *size)
{
    prep(b, b->minalign > 4 ? b->minalign : 4, ident ? 8 : 4);
    if (ident) push(b, ident, 4);
    push32(b, refer(b, root));
    *size = b->failed ? 0 : b->used;
    return b->failed ? NULL : b->buf + b->cap - b->used;
}
