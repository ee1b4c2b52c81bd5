/*
 * onnx.c - the ONNX reader (onnx.h): ModelProto and a lone TensorProto decoded from the protobuf wire format
 * (formats/pb.h) into the structures of onnx.h, all of it in one arena owned by the model. Field numbers are
 * onnx.proto's (IR version 8, onnx 1.12), checked against /usr/include/onnx/onnx.proto.
 *
 * Each message is read in two passes over its own bytes: the first counts the elements of every repeated field
 * (packed runs and single elements alike) and checks their wire types, so that each array is allocated once at its
 * final size; the second decodes. A submessage is read by the same two passes when its parent's second pass meets
 * it, so every byte is looked at a bounded number of times (twice per level of its own message, plus its parent's
 * skip over it).
 *
 * What is checked: every length against the bytes left (pb.c), nesting deeper than PAR_ONNX_MAX_DEPTH messages
 * below the root, repeated fields of more than PAR_ONNX_MAX_ELEMS elements, rank above PAR_ONNX_MAX_RANK, negative
 * tensor dims, dims whose product overflows or exceeds PAR_ONNX_MAX_ELEMS, tensor data whose size disagrees with
 * dims and data_type, narrow integers out of their type's range in int32_data / uint64_data, a known field with the
 * wrong wire type, a singular submessage that appears twice (protobuf would merge the two; nothing writes that),
 * groups, segments and sparse initializers. Nothing allocated depends on a number in the file that its bytes do
 * not back: arrays are sized by counted elements, and tensor data only once the data present has the size dims
 * ask for.
 *
 * Errors: "<origin>: <path>: <reason>", the path the protobuf path of the field ("graph.node[3].attribute[1].ints"),
 * the root message's name ("ModelProto", "TensorProto") when the fault is in the root itself.
 *
 * Kept verbatim rather than decoded: a value's non-tensor TypeProto (sequence, map, optional, sparse) and an
 * attribute's sparse-tensor and type-proto fields, so that the writer gives them back unchanged. Dropped: doc
 * strings below the graph, metadata_props, training_info, functions, quantization annotations, model domain and
 * model_version, TypeProto and Dimension denotations, external_data entries.
 *
 * Must not: know parity's ops; read external data files; trust a count or a length it has not checked.
 *
 * Files: onnx.c (this: the arena, data types, the decoder's building blocks), onnx_decode.c (the messages below
 * ModelProto), onnx_read.c (ModelProto, the entry points, reading a file), onnx_read_int.h (what the three share).
 */
#include "onnx_read_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------
 * The arena: zeroed blocks of 64 KiB, bumped; an allocation over a quarter block gets a block of its own (placed
 * behind the current one, whose free space stays usable). Freed all at once.
 * ------------------------------------------------------------------------------------------------------------- */

#define ARENA_BLOCK 65536

typedef struct arena_block {
    struct arena_block *next;
    size_t size, used;
    max_align_t data[];
} arena_block;

struct par_onnx_arena {
    arena_block *head;
};

static void *arena_alloc(struct par_onnx_arena *a, size_t size)
{
    const size_t align = sizeof(max_align_t);
    if (size > SIZE_MAX / 2) return NULL;
    size = size ? (size + align - 1) / align * align : align;
    arena_block *b = a->head;
    if (b && b->size - b->used >= size) {
        void *p = (char *)b->data + b->used;
        b->used += size;
        return p;
    }
    size_t bsize = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
    arena_block *nb = calloc(1, sizeof *nb + bsize);
    if (!nb) return NULL;
    nb->size = bsize;
    nb->used = size;
    if (bsize != ARENA_BLOCK && b) {
        nb->next = b->next;
        b->next = nb;
    } else {
        nb->next = b;
        a->head = nb;
    }
    return nb->data;
}

static void arena_destroy(struct par_onnx_arena *a)
{
    if (!a) return;
    for (arena_block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a);
}

/* A model and its arena; the model itself lives in the arena. */
par_onnx_model *model_create(void)
{
    struct par_onnx_arena *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    par_onnx_model *m = arena_alloc(a, sizeof *m);
    if (!m) {
        arena_destroy(a);
        return NULL;
    }
    m->arena = a;
    m->producer_name = "";
    m->producer_version = "";
    m->graph.name = "";
    return m;
}

void par_onnx_free(par_onnx_model *m)
{
    if (m) arena_destroy(m->arena);
}

par_onnx_model *par_onnx_new(void)
{
    par_onnx_model *m = model_create();
    if (m) m->ir_version = 8;
    return m;
}

void *par_onnx_alloc(par_onnx_model *m, size_t size)
{
    return m && m->arena ? arena_alloc(m->arena, size) : NULL;
}

char *par_onnx_strdup(par_onnx_model *m, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s);
    char *c = par_onnx_alloc(m, n + 1);
    if (c) memcpy(c, s, n + 1);
    return c;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Data types
 * ------------------------------------------------------------------------------------------------------------- */

size_t par_onnx_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case PAR_ONNX_UINT8:
    case PAR_ONNX_INT8:
    case PAR_ONNX_BOOL: return 1;
    case PAR_ONNX_UINT16:
    case PAR_ONNX_INT16:
    case PAR_ONNX_FLOAT16:
    case PAR_ONNX_BFLOAT16: return 2;
    case PAR_ONNX_FLOAT:
    case PAR_ONNX_INT32:
    case PAR_ONNX_UINT32: return 4;
    case PAR_ONNX_INT64:
    case PAR_ONNX_DOUBLE:
    case PAR_ONNX_UINT64: return 8;
    default: return 0;
    }
}

const char *par_onnx_dtype_name(int32_t dtype)
{
    static const char *const names[] = {
        "undefined", "float", "uint8",  "int8",   "uint16",    "int16",      "int32",   "int64",   "string",
        "bool",      "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16",
    };
    return dtype >= 0 && dtype < (int32_t)(sizeof names / sizeof *names) ? names[dtype] : "unknown";
}

int64_t par_onnx_opset_version(const par_onnx_model *m, const char *domain)
{
    if (!m) return 0;
    if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
    for (int32_t i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain ? m->opsets[i].domain : "";
        if (strcmp(d, "ai.onnx") == 0) d = "";
        if (strcmp(d, domain) == 0) return m->opsets[i].version;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The decoder: where it is (origin, path, depth) and where it writes (the model's arena)
 * ------------------------------------------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int fail(dec *d, const char *field, const char *fmt, ...)
{
    char reason[PAR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (d->plen)
        par_msgf(d->msg, PAR_ERROR, "%s: %s%s%s: %s", d->origin, d->path, field ? "." : "", field ? field : "",
                 reason);
    else
        par_msgf(d->msg, PAR_ERROR, "%s: %s: %s", d->origin, field ? field : d->root, reason);
    return -1;
}

int oom(dec *d)
{
    return fail(d, NULL, "out of memory");
}

void *alloc(dec *d, size_t size)
{
    return arena_alloc(d->arena, size);
}

/* An array of n elements of size bytes (n counted, at most PAR_ONNX_MAX_ELEMS); NULL for n == 0 or no memory,
 * *err set on the latter. */
void *alloc_array(dec *d, int64_t n, size_t size, int *err)
{
    if (n <= 0) return NULL;
    if ((uint64_t)n > SIZE_MAX / size) {
        *err = oom(d);
        return NULL;
    }
    void *p = alloc(d, (size_t)n * size);
    if (!p) *err = oom(d);
    return p;
}

static const char *field_name(const msgdef *md, uint32_t number, char buf[24])
{
    if (number < (uint32_t)md->n_fields && md->fields[number]) return md->fields[number];
    snprintf(buf, 24, "field %u", number);
    return buf;
}

static size_t push(dec *d, const char *name, int64_t index)
{
    size_t old = d->plen;
    size_t cap = sizeof d->path;
    int k = index >= 0 ? snprintf(d->path + old, cap - old, "%s%s[%lld]", old ? "." : "", name, (long long)index)
                       : snprintf(d->path + old, cap - old, "%s%s", old ? "." : "", name);
    size_t n = k > 0 ? (size_t)k : 0;
    d->plen = old + n < cap ? old + n : cap - 1;
    return old;
}

static void pop(dec *d, size_t old)
{
    d->plen = old;
    d->path[old] = 0;
}

int next(dec *d, const msgdef *md, par_pb_reader *r, par_pb_field *f)
{
    char why[PAR_PB_WHY_LEN], nb[24];
    int rc = par_pb_next(r, f, why);
    if (rc < 0) return fail(d, f->number ? field_name(md, f->number, nb) : NULL, "%s", why);
    return rc;
}

int want(dec *d, const msgdef *md, const par_pb_field *f, par_pb_wire wire)
{
    if (f->wire == wire) return 0;
    char nb[24];
    return fail(d, field_name(md, f->number, nb), "wire type %d at byte %zu, expected %d", (int)f->wire, f->offset,
                (int)wire);
}

int scalars(dec *d, const msgdef *md, const par_pb_field *f, par_pb_wire elem, par_pb_scalars *s,
                   size_t *count)
{
    char why[PAR_PB_WHY_LEN], nb[24];
    if (par_pb_scalars_init(s, f, elem, d->base, count, why))
        return fail(d, field_name(md, f->number, nb), "%s", why);
    return 0;
}

int get_str(dec *d, const msgdef *md, const par_pb_field *f, const char **out)
{
    if (want(d, md, f, PAR_PB_LEN)) return -1;
    char *s = alloc(d, f->len + 1);
    if (!s) return oom(d);
    if (f->len) memcpy(s, f->data, f->len);
    s[f->len] = 0;
    *out = s;
    return 0;
}

int get_i64(dec *d, const msgdef *md, const par_pb_field *f, int64_t *out)
{
    if (want(d, md, f, PAR_PB_VARINT)) return -1;
    *out = (int64_t)f->u;
    return 0;
}

/* int32 on the wire: a varint of the value sign-extended to 64 bits; protobuf keeps the low 32 bits */
int get_i32(dec *d, const msgdef *md, const par_pb_field *f, int32_t *out)
{
    if (want(d, md, f, PAR_PB_VARINT)) return -1;
    *out = (int32_t)(uint32_t)f->u;
    return 0;
}

/* The counting pass (see msgdef). counts has MAX_KIND entries. */
int count_fields(dec *d, const msgdef *md, const uint8_t *p, size_t n, int64_t counts[MAX_KIND])
{
    memset(counts, 0, MAX_KIND * sizeof *counts);
    par_pb_reader r;
    par_pb_reader_init(&r, d->base, p, n);
    par_pb_field f;
    int rc;
    char nb[24];
    while ((rc = next(d, md, &r, &f)) > 0) {
        if (f.number >= (uint32_t)md->n_kinds || !md->kinds[f.number]) continue;
        char kind = md->kinds[f.number];
        size_t k = 1;
        if (kind == 'm') {
            if (want(d, md, &f, PAR_PB_LEN)) return -1;
        } else if (kind == 'r') {
            k = f.end - f.offset;
        } else {
            par_pb_scalars s;
            par_pb_wire elem = kind == 'v' ? PAR_PB_VARINT : kind == '4' ? PAR_PB_FIXED32 : PAR_PB_FIXED64;
            if (scalars(d, md, &f, elem, &s, &k)) return -1;
        }
        counts[f.number] += (int64_t)k;
        if (kind != 'r' && counts[f.number] > PAR_ONNX_MAX_ELEMS)
            return fail(d, field_name(md, f.number, nb), "more than %lld elements",
                        (long long)PAR_ONNX_MAX_ELEMS);
    }
    return rc;
}

/* A submessage (f, wire type already checked) one level down, at path .name or .name[index]. */
int sub(dec *d, const char *name, int64_t index, const par_pb_field *f, decode_fn fn, void *obj)
{
    size_t old = push(d, name, index);
    int rc;
    if (d->depth >= PAR_ONNX_MAX_DEPTH) {
        rc = fail(d, NULL, "nesting deeper than %d messages", PAR_ONNX_MAX_DEPTH);
    } else {
        d->depth++;
        rc = fn(d, f->data, f->len, obj);
        d->depth--;
    }
    pop(d, old);
    return rc;
}

/* A singular submessage field: LEN, and not seen before. */
int once(dec *d, const msgdef *md, const par_pb_field *f, int *seen)
{
    if (want(d, md, f, PAR_PB_LEN)) return -1;
    char nb[24];
    if (*seen)
        return fail(d, field_name(md, f->number, nb), "appears twice (at byte %zu); merging is not supported",
                    f->offset);
    *seen = 1;
    return 0;
}
