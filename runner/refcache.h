/*
 * refcache.h - an on-disk cache of reference results: the float64 values and error budgets of a graph's outputs,
 * keyed by everything they depend on, so that a model's reference (seconds of float64 work) is computed once per
 * harness build, precision profile, graph and input data instead of on every run.
 *
 * The key is a SHA-256 over: the cache format version, the harness revision (PAR_GIT_REV; a "-dirty" or unknown
 * revision adds the executable's size, modification time and inode, so a rebuilt dirty tree never reads results of
 * another build), the compiler, the precision profile (u, u_store, fn_ulps, requantization scheme, strict promise,
 * the algorithm of each node declared other than direct, the scheme of each node declared other than the
 * backend-wide one), the graph (every value's kind, dtype, shape,
 * quantization and constant bytes; every node's op, attributes, inputs and outputs; the graph's input and output
 * lists; names are left out: they change no number) and the input bytes.
 *
 * A file holds the graph outputs' par_rt (dtype, shape, v, e, s, ql, qh, qb_up, qb_down) behind a header with a
 * magic, the format version, the key and a checksum of the payload: a truncated, corrupted or foreign file is a miss
 * and is rewritten. Writes go to a temporary file renamed into place, so concurrent workers never read half a file.
 * A folder that cannot be created or written, or a full disk, disables the cache for the process with one warning
 * on stderr; it never fails a run.
 *
 * Environment: PARITY_CACHE=0 disables the cache (nothing read or written); PARITY_CACHE_DIR names the folder
 * (default: build/cache beside the executable's build folder, see par_refcache_dir); PARITY_CACHE_MIN_MS (default
 * 20) stores only results whose computation took at least that much CPU time; PARITY_CACHE_MAX_MB (default 512)
 * stores no result larger than that. Why (measured, one core, page cache warm): a hit costs the key (SHA-256 of the
 * inputs and constants, ~3.5 ns per byte) plus the read and checksum (~13 ns per output element): 0.07 ms against
 * 0.24 ms to recompute a relu of 4,096 elements, 0.10 against 2.7 ms for a 3x3 conv with 4,096 outputs, 29 against
 * 72 ms for a relu of 2^20. So a hit never loses, but a file per small case would fill the folder (the full suite has
 * 12,000 cases) to save well under a millisecond each: below 20 ms nothing is stored: the quick suite stores nothing, the
 * full suite 6 files (15 MB), and the lookup of the others costs microseconds. Above 512 MB (a relu on [8192,8192] needs 1.5 GB) a
 * file costs more disk than the ~2x it saves is worth.
 *
 * It must not change any number: a hit returns the bits par_ref_run computed. It never evicts files (remove the
 * folder to clear it).
 */
#ifndef PAR_REFCACHE_H
#define PAR_REFCACHE_H

#include "core/case.h"
#include "reference/reference.h"

/* The cache format version: part of every key and of the file header. Bump it with any change of the layout. */
#define PAR_REFCACHE_FORMAT 2

/* The same contract as par_ref_run(g, p, inputs, out, msg), through the cache. c (may be NULL) names the case in
 * the one warning a failing cache prints. The result holds the graph outputs' tensors; every other value has its
 * dtype, shape and numel but no arrays (v, e, s, ql, qh NULL), whether the result was read, computed, or the cache
 * is off: callers judge outputs only (oracle/quantize.c, which reads intermediate values, calls par_ref_run). */
par_status par_refcache_run(const par_case *c, const par_graph_desc *g, const par_prec *p, const void *const *inputs,
                            par_ref_result **out, par_msg *msg);

/* Resolve the folder, create it and check that it can be written, once per process (later calls return the first
 * answer unless PARITY_CACHE_DIR or PARITY_CACHE changed). Returns the folder, or NULL when the cache is off
 * (PARITY_CACHE=0) or unusable (then it has printed its one warning). par_refcache_run calls it; a runner that forks
 * workers may call it before the fork so that a warning is printed once, not once per worker. */
const char *par_refcache_dir(void);

/* Statistics of this process (tests and measurements). */
typedef struct par_refcache_stats {
    int64_t hits, misses, stores, skipped; /* skipped: computed, not stored (too cheap or too large) */
    int64_t bad_files;                     /* files found corrupted, truncated or foreign (each also a miss) */
} par_refcache_stats;
void par_refcache_get_stats(par_refcache_stats *s);

/* The key of a reference (exposed for tests): 32 bytes. */
void par_refcache_key(const par_graph_desc *g, const par_prec *p, const void *const *inputs, uint8_t key[32]);

/* SHA-256 (FIPS 180-4), exposed for its test vectors. */
typedef struct par_sha256 {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
} par_sha256;
void par_sha256_init(par_sha256 *s);
void par_sha256_update(par_sha256 *s, const void *data, size_t len);
void par_sha256_final(par_sha256 *s, uint8_t digest[32]);

#endif
