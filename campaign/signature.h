/*
 * signature.h - what makes two findings the same finding: the backend instance, the verdict, and the op of the
 * first node whose output diverges ("" when it is not known). The reducer keeps it while it shrinks a case; the
 * campaign deduplicates findings by it and names their folders after it.
 */
#ifndef PAR_SIGNATURE_H
#define PAR_SIGNATURE_H

#include "core/result.h"

typedef struct par_signature {
    char backend[128];       /* the instance label, "cpu[kernels=scalar]" */
    par_verdict verdict;
    char op[64];             /* the first divergent node's op, "" unknown */
} par_signature;

/* 1 when a and b are the same signature. */
int par_signature_eq(const par_signature *a, const par_signature *b);
/* A folder name: "cpu_kernels_scalar-FAIL-conv2d" (letters, digits, '_', '-', '.' only; "any" for an unknown op). */
void par_signature_dir(const par_signature *s, char *buf, size_t len);
/* Human-readable: "cpu[kernels=scalar] FAIL at conv2d". */
void par_signature_text(const par_signature *s, char *buf, size_t len);

#endif
