/*
 * ncnn.h - a parity graph as an ncnn model (Tencent ncnn's .param text and .bin weights), written by
 * ncnn_export*.c. Export only: ncnn is a runtime under test (backends/runner/, tools/runners/ncnn_runner.py), not a
 * source of cases. Internal to formats/ (formats/model.h is the entry).
 *
 * In memory, for the runner, the model is one block: a JSON line (the manifest: "param" and "bin" sizes, and per
 * graph input and output its blob name, parity's shape and ncnn's), then the .param text, then the .bin. On disk
 * it is PATH.param and PATH.bin.
 */
#ifndef PAR_FORMATS_NCNN_H
#define PAR_FORMATS_NCNN_H

#include <stddef.h>
#include <stdint.h>

#include "core/case.h"

/* The graph as the in-memory block above: *buf (malloc'ed), *len. PAR_UNSUPPORTED naming the node and the reason
 * when ncnn cannot express it; PAR_ERROR on out of memory. */
par_status par_ncnn_export_graph(const par_graph_desc *g, uint8_t **buf, size_t *len, par_msg *msg);

/* The case as path (its .param; the .bin beside it, the suffix replaced), each written atomically. */
par_status par_ncnn_export(const par_case *c, const char *path, par_msg *msg);

#endif
