/*
 * model.h - model files as case sources and destinations: ONNX (.onnx) and TFLite / LiteRT (.tflite) imported into a
 * par_case (graph, real weights, quantization, inputs from the file's test data or generated), and any case exported
 * back into either format. The one entry the runner and the CLI use; each format's reader, writer and op mapping
 * live in their own files (onnx*.c, tflite*.c).
 *
 * ncnn (Tencent's .param text and .bin weights) is written, never read: formats/ncnn.h, one image per blob
 * (batch 1, dropped).
 *
 * Layout: parity's graphs are logical NCHW. ONNX is NCHW too and maps one to one. TFLite is NHWC: an imported
 * rank-4 activation is permuted to NCHW at the graph's edges and every NHWC op is mapped onto its NCHW twin (the
 * filters permuted into OIHW at import), so a backend sees the same logical graph from either format
 * (docs/formats.md).
 *
 * Must not: run anything, or judge anything.
 */
#ifndef PAR_FORMATS_MODEL_H
#define PAR_FORMATS_MODEL_H

#include "core/case.h"

typedef enum par_model_format {
    PAR_FMT_NONE = 0, /* not a model file (a case file, say) */
    PAR_FMT_ONNX = 1,
    PAR_FMT_TFLITE = 2,
    PAR_FMT_NCNN = 3, /* export only: PATH.param and PATH.bin; in memory one block (formats/ncnn.h) */
} par_model_format;

/* The format of a path by its suffix (.onnx, .tflite), or PAR_FMT_NONE: the formats parity imports (an ncnn
 * .param is not one). */
par_model_format par_model_format_of(const char *path);
/* "onnx" / "tflite" / "ncnn" and back (PAR_FMT_NONE when unknown). */
const char *par_model_format_name(par_model_format f);
par_model_format par_model_format_find(const char *name);

/* One op type the importer cannot map: its name, the first node that uses it, how many nodes do. */
typedef struct par_import_missing {
    char op[64];
    char first_node[128];
    int32_t count;
    char why[160];        /* "" for an op parity lacks; else what of it parity cannot express */
} par_import_missing;

#define PAR_IMPORT_MAX_MISSING 64

typedef struct par_import_opts {
    uint64_t seed;        /* the case seed (generated inputs); 0: 1 */
    int test_data;        /* 1: take inputs (and expected outputs) from the file's test data when it has some (ONNX:
                           * test_data_set_0/ beside the model) */
    const char *input_shapes; /* "name=d0,d1,...;name2=..." for inputs whose shapes the file leaves symbolic */
} par_import_opts;

typedef struct par_import_info {
    int32_t n_missing;    /* op types that could not be mapped (the import then fails) */
    par_import_missing missing[PAR_IMPORT_MAX_MISSING];
    int32_t n_nodes;      /* nodes of the model file */
    int32_t n_folded;     /* of which folded to constants at import (shape arithmetic) */
} par_import_info;

/* Import a model file as one case whose ID is the file's base name. NULL with msg set on any error; when the reason
 * is unmapped ops, info->n_missing > 0 lists them (msg then says how many). info may be NULL. */
par_case *par_model_import(const char *path, const par_import_opts *o, par_import_info *info, par_msg *msg);

/* Import each distinct (op, input shapes, attributes) of a model file as an op case of its own, with the model's
 * real weights (a node's activation inputs become generated graph inputs): runs where the whole graph cannot.
 * *cases (malloc'ed array, each a par_case) and *n on success; nodes that cannot be mapped are listed in info and
 * skipped. Returns PAR_OK, or PAR_ERROR with msg when the file cannot be read at all. */
par_status par_model_import_ops(const char *path, const par_import_opts *o, par_case ***cases, int32_t *n,
                                par_import_info *info, par_msg *msg);

/* Export a case as a model file of format f at path (written atomically). PAR_UNSUPPORTED with msg naming the first
 * node and the reason when the format cannot express the case; PAR_ERROR on an I/O failure. */
par_status par_model_export(const par_case *c, par_model_format f, const char *path, par_msg *msg);

/* Export a graph as a backend sees it (par_graph_desc, its constants' data included) into memory: *buf (malloc'ed)
 * and *len on PAR_OK; PAR_UNSUPPORTED / PAR_ERROR with msg as par_model_export. For the runner backend, which hands
 * a runtime the model file of the graph it was given. name: the model's graph name (NULL: "parity"). */
par_status par_model_export_graph(const par_graph_desc *g, const char *name, par_model_format f, uint8_t **buf,
                                  size_t *len, par_msg *msg);

#endif
