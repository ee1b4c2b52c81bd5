/*
 * findings.h - a campaign's findings on disk, deduplicated by signature (signature.h):
 *
 *     DIR/findings/index.json             every signature with its count and folder ("parity.findings")
 *     DIR/findings/<signature dir>/
 *         case.json                       the case as generated (its tensors carry their generators and seeds)
 *         finding.json                    signature, graph seed, case ID, the record, the repro command, count,
 *                                         first and last seed seen, localization and reduction ("parity.finding")
 *         reduced.json, repro.c           the reduced case and its standalone C program, when reduced
 *
 * Every file is written atomically (a temporary file in the same folder, fsync, rename), and a finding's folder
 * exists with case.json and finding.json before anything else is tried on it, so a fuzzer that dies loses nothing.
 * A new finding is written first under a provisional folder ("pending-<backend>-<verdict>-<seed>": its signature
 * without the op, which only localization knows), then renamed to its signature's folder once localized, or, when
 * that signature already has a folder, counted there and removed. Opening a DIR reads index.json back and adopts any
 * folder with a finding.json that the index does not list (a provisional folder left by a fuzzer that died).
 *
 * This module writes and reads files only: it runs nothing and judges nothing.
 */
#ifndef PAR_FINDINGS_H
#define PAR_FINDINGS_H

#include "signature.h"
#include "core/case.h"

#define PAR_FINDING_SCHEMA "parity.finding"
#define PAR_FINDINGS_SCHEMA "parity.findings"
#define PAR_FINDINGS_VERSION 1

/* One signature's entry of the index. */
typedef struct par_finding {
    par_signature sig;
    char dir[256];            /* folder name under DIR/findings */
    char case_id[PAR_ID_LEN]; /* the case of the folder (the first occurrence) */
    int64_t count;            /* occurrences, over every campaign into this DIR */
    uint64_t first_seed, last_seed; /* the smallest and the largest graph seed seen */
    int32_t new_here;         /* 1 when this process created the folder */
} par_finding;

typedef struct par_findings {
    char root[4096];          /* DIR/findings */
    int32_t n, cap;
    par_finding *list;
} par_findings;

/* What the campaign knows of one occurrence when it writes it. */
typedef struct par_finding_info {
    const par_signature *sig; /* the op may be "" (not localized yet) */
    uint64_t seed;            /* the graph seed */
    const par_case *c;
    const par_result *rec;
    const par_backend_inst *inst;
    const char *parity_exe;   /* for the repro command ("parity" when NULL) */
} par_finding_info;

/* Open (create) DIR/findings and read its index back, adopting folders it does not list. Returns 0, or -1 with msg
 * (the folder cannot be created, or index.json is not a findings index). */
int par_findings_open(par_findings *f, const char *out_dir, par_msg *msg);
void par_findings_close(par_findings *f);

/* The entry of sig, or NULL. */
par_finding *par_findings_find(par_findings *f, const par_signature *sig);

/* Write a new occurrence into a provisional folder (case.json, finding.json, count 1). Returns its index in f, or
 * -1 with msg. */
int32_t par_findings_add_pending(par_findings *f, const par_finding_info *fi, par_msg *msg);

/* Settle a provisional entry once its signature is final (sig->op filled, or "" when localization failed): when
 * another entry has that signature, the occurrence is counted there and the provisional folder removed (*merged_into
 * = that entry); else the folder is renamed to the signature's and finding.json gets the final signature, the
 * repro command of the new path and loc (a JSON object string with the localization, or NULL). Returns the index of
 * the entry that holds the occurrence, or -1 with msg. */
int32_t par_findings_settle(par_findings *f, int32_t pending, const par_signature *sig, const char *loc_json,
                            par_msg *msg);

/* Count one more occurrence (seed) of entry i: its count, first and last seed, in finding.json and the index. */
int par_findings_count(par_findings *f, int32_t i, uint64_t seed, int64_t n, par_msg *msg);

/* Set key to the JSON text value (an object, NULL for null) in entry i's finding.json. */
int par_findings_set(par_findings *f, int32_t i, const char *key, const char *json_value, par_msg *msg);

/* Write DIR/findings/index.json. Returns 0 or -1 with msg. */
int par_findings_write_index(const par_findings *f, par_msg *msg);

/* The path of a file of entry i's folder ("case.json"). */
void par_findings_path(const par_findings *f, int32_t i, const char *file, char *buf, size_t len);

/* Merge the findings folders of src_dirs (campaign DIRs, e.g. shards) into f: a signature f has adds its count and
 * seed range; another is copied with its files. Returns the number of entries merged, or -1 with msg. */
int32_t par_findings_merge(par_findings *f, int32_t n_src, char **src_dirs, par_msg *msg);

/* Write text to path atomically (temporary file in the same folder, fsync, rename). 0 or -1 with msg. */
int par_write_file_atomic(const char *path, const char *text, par_msg *msg);
/* mkdir -p. 0 or -1 (errno). */
int par_mkdir_p(const char *path);

#endif
