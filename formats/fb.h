/*
 * fb.h - FlatBuffers without a library: a bounds-checked reader and a back-to-front builder, enough for the TFLite
 * schema (tables, scalar fields, vectors of scalars, of structs-as-bytes and of tables, strings, unions as a type
 * byte plus a table, the 4-byte file identifier).
 *
 * Reader. Every position is a byte offset into the buffer, checked before use: a uoffset must land inside the
 * buffer and be non-zero (uoffsets point forward, so no chain of them can cycle; a zero one would point at itself),
 * a table's vtable must lie inside the buffer with an even length of at least 4, every field must lie inside the
 * table's declared size and the buffer, a vector's length times its element size must fit in the rest of the
 * buffer (computed in 64 bits). Nothing assumes alignment: every scalar is read byte by byte, little-endian. The
 * nesting depth is the schema's, which the caller walks; par_fb_reader.budget bounds the total number of elements
 * the caller decodes, so that many offsets sharing one large vector cannot make a small file cost quadratic time.
 * On the first failure the reader stores the reason (why) and later calls return defaults, so the caller checks
 * once per field and adds its own path to the message.
 *
 * Builder. The buffer grows downwards from its end, as in the reference implementation: an object's offset is its
 * distance from the end, which does not change when more is prepended. Tables are started, given fields (a field
 * equal to its default is omitted), and ended, which writes the vtable in front of them. Scalars are aligned to
 * their size and the whole buffer to the largest alignment used.
 *
 * Must not: know any schema.
 */
#ifndef PAR_FORMATS_FB_H
#define PAR_FORMATS_FB_H

#include <stddef.h>
#include <stdint.h>

/* ---- reader ---------------------------------------------------------------------------------------------------- */

typedef struct par_fb_reader {
    const uint8_t *buf;
    size_t len;
    int64_t budget;        /* elements the caller may still decode; going below zero is an error */
    const char *why;       /* NULL until the first error: a static string */
    char why_buf[96];      /* why points here for messages with numbers */
} par_fb_reader;

/* A table: its position and its vtable (0 positions when absent or on error). */
typedef struct par_fb_table {
    uint32_t pos;
    uint32_t vt;
    uint16_t vt_len;
    uint16_t size;         /* the table's inline size, from its vtable */
} par_fb_table;

typedef struct par_fb_vec {
    uint32_t pos;          /* first element */
    uint32_t n;
} par_fb_vec;

/* Set up a reader and open the root table; the identifier (4 characters) is checked when ident is not NULL.
 * Returns 0 with r->why set on failure. The size limit is 2^31 - 1 bytes (FlatBuffers' own). */
int par_fb_open(par_fb_reader *r, const uint8_t *buf, size_t len, const char *ident, par_fb_table *root);

/* Whether a table field is present (the vtable has a non-zero entry for slot). */
int par_fb_has(par_fb_reader *r, const par_fb_table *t, int slot);
/* Scalar fields, default when absent or on error. */
uint8_t par_fb_u8(par_fb_reader *r, const par_fb_table *t, int slot, uint8_t def);
int8_t par_fb_i8(par_fb_reader *r, const par_fb_table *t, int slot, int8_t def);
int32_t par_fb_i32(par_fb_reader *r, const par_fb_table *t, int slot, int32_t def);
uint32_t par_fb_u32(par_fb_reader *r, const par_fb_table *t, int slot, uint32_t def);
int64_t par_fb_i64(par_fb_reader *r, const par_fb_table *t, int slot, int64_t def);
uint64_t par_fb_u64(par_fb_reader *r, const par_fb_table *t, int slot, uint64_t def);
float par_fb_f32(par_fb_reader *r, const par_fb_table *t, int slot, float def);

/* A sub-table; returns 0 when absent (out zeroed) or on error (r->why set), 1 when present. */
int par_fb_table_field(par_fb_reader *r, const par_fb_table *t, int slot, par_fb_table *out);
/* A vector of elem_size-byte elements; 0 when absent or on error, 1 when present (n may be 0). Counts n against
 * the budget. */
int par_fb_vector(par_fb_reader *r, const par_fb_table *t, int slot, uint32_t elem_size, par_fb_vec *out);
/* A string: *s points into the buffer (not NUL-terminated), *n its length; 0 when absent or on error. */
int par_fb_string(par_fb_reader *r, const par_fb_table *t, int slot, const char **s, uint32_t *n);
/* Element i of a vector of tables. */
int par_fb_vec_table(par_fb_reader *r, const par_fb_vec *v, uint32_t i, par_fb_table *out);
/* Element i of a vector of scalars (little-endian, any alignment). */
int32_t par_fb_vec_i32(const par_fb_reader *r, const par_fb_vec *v, uint32_t i);
int64_t par_fb_vec_i64(const par_fb_reader *r, const par_fb_vec *v, uint32_t i);
float par_fb_vec_f32(const par_fb_reader *r, const par_fb_vec *v, uint32_t i);

/* Little-endian loads and stores at any address. */
uint16_t par_fb_load16(const uint8_t *p);
uint32_t par_fb_load32(const uint8_t *p);
uint64_t par_fb_load64(const uint8_t *p);

/* ---- builder --------------------------------------------------------------------------------------------------- */

#define PAR_FB_MAX_SLOTS 64

typedef uint32_t par_fb_off; /* an object's distance from the end of the buffer; 0: none */

typedef struct par_fbb {
    uint8_t *buf;          /* cap bytes; the data occupies the last `used` */
    size_t cap, used;
    size_t minalign;
    int failed;            /* an allocation failed or the buffer passed 2^31 bytes: every later call does nothing */
    int in_table;
    size_t table_start;    /* `used` when the table was started */
    int n_slots;           /* highest slot set + 1 */
    uint32_t slot_off[PAR_FB_MAX_SLOTS]; /* `used` after each field was pushed; 0 when unset */
} par_fbb;

void par_fbb_init(par_fbb *b);
void par_fbb_free(par_fbb *b);

/* Vectors and strings (outside a table). Elements are copied as bytes from data (little-endian host order is
 * assumed by callers that pass native arrays: parity builds only for little-endian machines). */
par_fb_off par_fbb_vector(par_fbb *b, const void *data, uint32_t n, uint32_t elem_size, uint32_t align);
par_fb_off par_fbb_vector_offsets(par_fbb *b, const par_fb_off *offs, uint32_t n);
par_fb_off par_fbb_string(par_fbb *b, const char *s, size_t n);

/* Tables: start, add fields (omitted when equal to the default), end. */
void par_fbb_start(par_fbb *b);
void par_fbb_add_u8(par_fbb *b, int slot, uint8_t v, uint8_t def);
void par_fbb_add_i32(par_fbb *b, int slot, int32_t v, int32_t def);
void par_fbb_add_i64(par_fbb *b, int slot, int64_t v, int64_t def);
void par_fbb_add_f32(par_fbb *b, int slot, float v, float def);
void par_fbb_add_off(par_fbb *b, int slot, par_fb_off off); /* off 0: omitted */
par_fb_off par_fbb_end(par_fbb *b);

/* Finish with the root table and an optional 4-character identifier; *size gets the length. The returned pointer
 * lives in b (NULL when the builder failed). */
const uint8_t *par_fbb_finish(par_fbb *b, par_fb_off root, const char *ident, size_t *size);

#endif
