/*
 * onnx_suite.h - ONNX's backend node tests (libonnx-testdata) as parity cases: the `onnx` suite.
 */
#ifndef PAR_FORMATS_ONNX_SUITE_H
#define PAR_FORMATS_ONNX_SUITE_H

#include "formats/model.h"

/* The node tests' folder: $PARITY_ONNX_NODE_DIR, else Debian's /usr/share/libonnx-testdata/data/node. */
const char *par_onnx_suite_dir(void);

/* Receives each node test in name order: its case (ownership passes to fn; NULL when it cannot be expressed) and,
 * when NULL, why ("op X not in parity's op table", "Resize: nearest with ..."). Returns nonzero to stop. */
typedef int (*par_onnx_suite_fn)(void *user, const char *test, par_case *c, const char *why);

/* Walk every node test; the number walked, or -1 with msg (PAR_UNSUPPORTED when the test data is not installed). */
int par_onnx_suite_walk(par_onnx_suite_fn fn, void *user, par_msg *msg);

#endif
