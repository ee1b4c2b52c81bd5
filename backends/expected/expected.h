/*
 * expected.h - the `expected` backend: not code under test but the expected outputs a case's source carries (ONNX's
 * node tests give output_K.pb beside each model). The runner answers it from the case itself (runner/judge.c) instead
 * of starting a child, and the oracle judges those outputs against the reference like any backend's: a FAIL is a
 * disagreement between parity's reference and the file's producer (ONNX's numpy reference), to be judged and
 * written down (docs/formats.md).
 */
#ifndef PAR_BACKEND_EXPECTED_H
#define PAR_BACKEND_EXPECTED_H

#include "core/parity_backend.h"

const par_backend *par_backend_expected(void);

#endif
