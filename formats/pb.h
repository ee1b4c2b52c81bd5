/*
 * pb.h - the protobuf wire format, by hand: a bounds-checked reader of one message's fields and a growable writer.
 * No schema and no allocation on the read side: the reader walks the fields of a byte range and hands each one out
 * (number, wire type, value or the bytes of a length-delimited field); what a field means is the caller's business
 * (formats/onnx.c, onnx_decode.c, onnx_read.c). The writer appends tags and values to a buffer and writes a
 * submessage's length after its body.
 *
 * Reading: varints of at most 10 bytes whose value fits 64 bits; fixed32 and fixed64 little-endian; every length is
 * compared with the bytes left in the enclosing message, never added to a pointer first, so no length (2^62
 * included) can overflow. Groups (wire types 3 and 4, deprecated since proto2 and never used by ONNX) and the
 * undefined wire types 6 and 7 are rejected, as are field number 0 and numbers above 2^29 - 1. A repeated scalar
 * field is accepted packed (one length-delimited run) and unpacked (one field per element), as protobuf requires.
 *
 * Errors are a reason with the absolute byte offset ("truncated varint at byte 1234"), the offset counted from the
 * start of the whole buffer (par_pb_reader.base), so that a nested message's error points into the file.
 *
 * Must not: know any message type; allocate while reading.
 */
#ifndef PAR_FORMATS_PB_H
#define PAR_FORMATS_PB_H

#include <stddef.h>
#include <stdint.h>

typedef enum par_pb_wire {
    PAR_PB_VARINT = 0,
    PAR_PB_FIXED64 = 1,
    PAR_PB_LEN = 2,
    PAR_PB_SGROUP = 3, /* rejected */
    PAR_PB_EGROUP = 4, /* rejected */
    PAR_PB_FIXED32 = 5,
} par_pb_wire;

#define PAR_PB_MAX_FIELD ((UINT32_C(1) << 29) - 1)
#define PAR_PB_WHY_LEN 160

/* The fields of one message: the bytes [p, end) of a buffer that starts at base. */
typedef struct par_pb_reader {
    const uint8_t *base;
    const uint8_t *p, *end;
} par_pb_reader;

typedef struct par_pb_field {
    uint32_t number;       /* 0 when the tag itself could not be read */
    par_pb_wire wire;
    uint64_t u;            /* VARINT, FIXED64, FIXED32 (zero-extended) */
    const uint8_t *data;   /* LEN: the bytes (inside the reader's range) */
    size_t len;
    size_t offset;         /* of the tag, from base */
    size_t end;            /* one past the field's last byte, from base */
} par_pb_field;

void par_pb_reader_init(par_pb_reader *r, const uint8_t *base, const uint8_t *p, size_t len);

/* The next field: 1 with *f filled, 0 at the end of the message, -1 when malformed with the reason in why (f->number
 * is the field's number when its tag was read, else 0). */
int par_pb_next(par_pb_reader *r, par_pb_field *f, char why[PAR_PB_WHY_LEN]);

/* One varint from [*p, end): 0 with *v and *p advanced; -1 truncated, -2 longer than 10 bytes or beyond 64 bits. */
int par_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* The elements of one occurrence of a repeated scalar field whose elements have wire type elem (VARINT, FIXED32,
 * FIXED64): the field itself when unpacked (its wire type elem), or a packed run (LEN). par_pb_scalars_init checks
 * the whole run and counts it (-1 with why on a wrong wire type, a packed run that is not a whole number of
 * elements, or a bad varint in it); par_pb_scalars_next then hands out the elements (1, or 0 after the last). */
typedef struct par_pb_scalars {
    const uint8_t *p, *end;
    par_pb_wire elem;
    uint64_t one;  /* the unpacked element */
    int single;    /* 1 while the unpacked element is still to be handed out */
} par_pb_scalars;

int par_pb_scalars_init(par_pb_scalars *s, const par_pb_field *f, par_pb_wire elem, const uint8_t *base,
                        size_t *count, char why[PAR_PB_WHY_LEN]);
int par_pb_scalars_next(par_pb_scalars *s, uint64_t *v);

/* The writer: a growable buffer. Allocation failure is sticky (oom set, later writes do nothing); check it once at
 * the end. Submessages: mark = par_pb_begin(w, field) writes the tag, the body is written after it, and
 * par_pb_end(w, mark) inserts the body's length between tag and body. */
typedef struct par_pb_writer {
    uint8_t *buf;
    size_t len, cap;
    int oom;
} par_pb_writer;

void par_pb_writer_init(par_pb_writer *w);
void par_pb_writer_free(par_pb_writer *w); /* frees buf; init state again */
void par_pb_put_raw(par_pb_writer *w, const void *data, size_t len);
void par_pb_put_varint(par_pb_writer *w, uint64_t v);
void par_pb_put_tag(par_pb_writer *w, uint32_t field, par_pb_wire wire);
void par_pb_put_uint(par_pb_writer *w, uint32_t field, uint64_t v);  /* tag + varint */
void par_pb_put_int(par_pb_writer *w, uint32_t field, int64_t v);    /* int32/int64: two's complement, 10 bytes if < 0 */
void par_pb_put_fixed32(par_pb_writer *w, uint32_t field, uint32_t v);
void par_pb_put_fixed64(par_pb_writer *w, uint32_t field, uint64_t v);
void par_pb_put_float(par_pb_writer *w, uint32_t field, float v);    /* fixed32, the bits as they are */
void par_pb_put_bytes(par_pb_writer *w, uint32_t field, const void *data, size_t len);
void par_pb_put_string(par_pb_writer *w, uint32_t field, const char *s); /* strlen(s) bytes */
size_t par_pb_begin(par_pb_writer *w, uint32_t field);
void par_pb_end(par_pb_writer *w, size_t mark);

/* Bytes of v as a varint (1..10). */
size_t par_pb_varint_size(uint64_t v);

#endif
