/*
 * result.h - verdicts, oracle metrics, the per (case, backend) result record and the backend instance record.
 * Plain data (no pointers) so that records can travel between processes as bytes (worker -> parent over a pipe);
 * whoever reads one from another process checks it with par_result_check before using any of its fields.
 */
#ifndef PAR_RESULT_H
#define PAR_RESULT_H

#include "parity_backend.h"

typedef enum par_verdict {
    PAR_V_PASS = 0,
    PAR_V_FAIL = 1,        /* tolerance, non-finite, shape, out-of-bounds write */
    PAR_V_UNSUPPORTED = 2, /* the backend said so, with a reason */
    PAR_V_ERROR = 3,       /* a valid case refused or failed at run time */
    PAR_V_CRASH = 4,       /* the backend's process died (signal) */
    PAR_V_TIMEOUT = 5,     /* the backend exceeded the time limit */
    PAR_V_FLAKY = 6,       /* repeated runs gave different bits */
    PAR_V_COUNT
} par_verdict;

const char *par_verdict_name(par_verdict v); /* "PASS", "FAIL", ... */

/* How bad a verdict is, for listing records worst first and keeping the worst of several: CRASH 6 > TIMEOUT 5 >
 * FAIL 4 > FLAKY 3 > ERROR 2 > UNSUPPORTED 1 > PASS 0 (7 for a value out of range). */
int par_verdict_severity(par_verdict v);

/* Tie rules counted (core/requant.h, par_tie_rule: even, away, up, down, zero). */
#define PAR_TIE_RULES 5

/* Step-difference histogram of integer outputs: bins <= -3, -2, -1, 0, +1, +2, >= +3. */
#define PAR_HIST_BINS 7
#define PAR_HIST_ZERO 3

/* The error map of an output: the output as a grid of rows (the product of every dimension but the last) x columns
 * (the last dimension), folded into at most PAR_EMAP_MAX x PAR_EMAP_MAX cells; a cell holds the share of its elements
 * that fail (over budget or non-finite), 0 none, 1..255 some to all (never 0 when one fails). */
#define PAR_EMAP_MAX 32

/* The statistical companion's bound on stat_z (docs/oracle.md, "The statistical companion"): for a correct backend
 * under rule 5's independence model, P(stat_z^2 >= q) <= sqrt(2) exp(-q / 4), whatever the dependence between the
 * elements; q = 4 ln(sqrt(2) / 3e-8) = 70.67 gives rule 5's false-alarm probability of 3e-8 per output. */
#define PAR_STAT_BOUND 8.4066

/* Why the companion stood down on a record (stat_z NaN); PAR_STAT_APPLIED when it judged. */
typedef enum par_stat_skip {
    PAR_STAT_APPLIED = 0,
    PAR_STAT_SKIP_DATA = 1,   /* inputs or constants from a constant, edge or hazard generator (ties, all-equal,
                               * cancelling, subnormal data): correlated roundings, no independence to assume */
    PAR_STAT_SKIP_QUANT = 2,  /* a graph with quantized values: integer roundings and their labels are judged in steps */
    PAR_STAT_SKIP_NONE = 3,   /* no judged float element with a finite scale above 0 (exact ops, integer outputs) */
    PAR_STAT_SKIP_FLUSH = 4,  /* every judged element's flush part (declared flushing, par_rt.f) reaches its scale */
    PAR_STAT_SKIP_N
} par_stat_skip;

/* The words of a par_stat_skip ("applied", "data", "quantized", "no scale", "flushing"), NULL when out of range; and
 * back. */
const char *par_stat_skip_name(int32_t k);

/* Oracle metrics over the elements of one output (or the worst over all outputs of a case). */
typedef struct par_metrics {
    int64_t n;               /* elements compared */
    int64_t n_over;          /* elements with |d| > budget */
    int64_t n_nonfinite;     /* elements failing the NaN/Inf policy */
    int64_t n_unbounded;     /* finite reference elements whose budget is infinite: not judged (docs/oracle.md) */
    double max_abs;          /* max |backend - reference| over finite pairs */
    double max_rel;          /* max |d| / |reference| over elements with reference != 0 */
    double max_ulp;          /* max distance in ULPs of the output dtype from the reference rounded to it */
    double nmse;             /* sum d^2 / sum reference^2 (0 if both are 0) */
    /* Signal to quantization noise ratios, in dB (docs/oracle.md, "Metrics reported"): sqnr_db = 10 log10(sum ref^2
     * / sum d^2), +Inf when d is 0 everywhere; sqnr_pred_db the same with the noise the reference predicts, sum s^2 / 3
     * over the judged elements (s the error scale of rule 5: each independent source at most its bound, uniform
     * over it), +Inf when s is 0 (exact ops), NaN for integer outputs. Over several outputs, the worst (smallest) of
     * each. */
    double sqnr_db, sqnr_pred_db;
    /* The statistical companion (docs/oracle.md, "The statistical companion"): stat_z, the root-mean-square of
     * max(0, |d| - f) / t over the stat_n judged float elements with a finite scale t > 0 (t the companion's error
     * scale, f the flush part of the budget); NaN when it stood down, stat_skip saying why (par_stat_skip). stat_over
     * is 1 when stat_z exceeds PAR_STAT_BOUND: a FAIL even with every element within its budget. Over several
     * outputs, the largest stat_z and the counts summed. */
    double stat_z;
    int64_t stat_n;
    int32_t stat_over;
    int32_t stat_skip;
    /* The companion on every node's value (docs/oracle.md, "The companion on every node"; runner/node_stat.c), set
     * once for the record, never merged over outputs: node_k values judged (0: it did not apply, the rest unset),
     * node_bound the bound of node_k values (par_stat_bound_of), node_z the largest z, at node node_at, and node_first
     * the first node in graph order with a value over the bound, its z node_first_z ("" and NaN when none: the
     * record passed it). */
    int32_t node_k;
    double node_bound, node_z, node_first_z;
    char node_at[64], node_first[64];
    double bias;             /* mean signed error d */
    double max_ratio;        /* max |d| / budget (inf when budget is 0 and d is not) */
    /* the worst element: largest ratio (non-finite failures first) */
    int32_t worst_output;    /* index among the graph outputs */
    int64_t worst_index;     /* flat index, -1 when none */
    int32_t worst_rank;
    int64_t worst_coords[PAR_MAX_RANK];
    double worst_ref, worst_got, worst_budget;
    /* the shape of the worst element's output (worst_rank dimensions), and where in it the elements fail */
    int64_t worst_dims[PAR_MAX_RANK];
    int32_t emap_rows, emap_cols;   /* cells of the map; 0 x 0 when none */
    uint8_t emap[PAR_EMAP_MAX * PAR_EMAP_MAX]; /* row-major, emap_rows x emap_cols */
    /* Integer (qu8/qs8) outputs only, zero otherwise (docs/quantization.md, "Oracle"). */
    int32_t quant;           /* 1 when the output compared is quantized */
    int64_t n_exact;         /* elements equal to the declared scheme's integer */
    int64_t n_labelled;      /* passing elements that differ from it (another scheme, a tie, or propagation) */
    int64_t hist[PAR_HIST_BINS]; /* step differences backend - reference: <=-3, -2, -1, 0, +1, +2, >=+3 */
    double bias_bound;       /* the largest |mean signed difference| rounding can explain, on the side of the bias */
    int32_t bias_over;       /* 1 when |bias| exceeds bias_bound: a FAIL even with every element in range */
    /* Ties (docs/quantization.md, "Ties"): elements where the declared scheme's own arithmetic lands exactly halfway
     * between two integers k and k + 1 and the node's inputs are exact, so the backend's integer shows its tie
     * rule. Zero when none. */
    int64_t tie_n;           /* ties judged */
    int64_t tie_rule_n[PAR_TIE_RULES]; /* ties whose integer is that rule's choice (par_tie_rule order: even, away,
                                        * up, down, zero); one tie counts for every rule choosing its integer */
    int64_t tie_other;       /* ties whose integer is neither k nor k + 1 */
    int32_t tie_declared;    /* the declared scheme's rule (par_tie_rule) at those ties; -1 when none */
    int32_t tie_over;        /* 1 when some tie contradicts the declared rule: a FAIL, also outside strict mode */
} par_metrics;

/* The first timed runs a record keeps one by one (in run order), for significance tests between reports. */
#define PAR_TIMING_SAMPLES 64

typedef struct par_timing {
    int32_t runs;            /* timed runs (after warm-up) */
    double prepare_ms;
    double run_median_ms, run_p10_ms, run_p90_ms, run_min_ms;
    int32_t n_samples;       /* min(runs, PAR_TIMING_SAMPLES) */
    double samples_ms[PAR_TIMING_SAMPLES]; /* the first n_samples timed runs, in run order, milliseconds */
    /* The device's own time of the timed runs (PAR_PROC_DEVICE_TIME: a GPU's timestamps), beside the wall times
     * above: device_n timed runs it measured (0: not measured, the other fields 0), their quantiles as for the wall
     * times, and the first device_n_samples of them in run order. */
    int32_t device_n;
    double device_median_ms, device_p10_ms, device_p90_ms;
    int32_t device_n_samples; /* min(device_n, PAR_TIMING_SAMPLES) */
    double device_samples_ms[PAR_TIMING_SAMPLES];
} par_timing;

/* The quantiles of timed runs: sorts ms[0..n) in place and sets t's run_min_ms, run_median_ms, run_p10_ms and
 * run_p90_ms (linear interpolation between closest ranks); nothing when n <= 0. */
void par_timing_quantiles(par_timing *t, double *ms, int32_t n);
/* The same for the device times of the timed runs: sorts ms[0..n) in place and sets t's device_median_ms,
 * device_p10_ms and device_p90_ms; nothing when n <= 0. */
void par_timing_device_quantiles(par_timing *t, double *ms, int32_t n);

#define PAR_ID_LEN 256
#define PAR_REASON_LEN 512

#define PAR_OUTPUT_TAIL 4096

/* How many declared nodes (of each kind) a record lists by name; it counts them all. */
#define PAR_RESULT_ALGOS 8

/* A node for which the backend declared something other than the default after prepare, as a record lists it: an
 * algorithm other than direct summation (PAR_PROC_NODE_ALGO; value a par_algo, 1 .. PAR_ALGO_COUNT - 1), or a
 * requantization scheme other than its backend-wide one (PAR_PROC_NODE_REQUANT; value a par_requant). */
typedef struct par_result_decl {
    int32_t node;            /* node index */
    int32_t value;           /* the declared par_algo or par_requant */
    char node_name[64];      /* the node's name (valid UTF-8, cut to fit) */
} par_result_decl;

#define PAR_DTYPE_LEN 8

typedef struct par_result {
    int32_t done;            /* 1 when filled */
    /* The case's compute dtype (par_graph_compute_dtype's name: "f32", "qu8", ...), "" when the case was not built;
     * a property of the case, carried by each of its records from the worker that built it. */
    char case_dtype[PAR_DTYPE_LEN];
    par_verdict verdict;
    char reason[PAR_REASON_LEN]; /* one line: why not PASS (or a PASS note) */
    par_metrics m;
    par_timing t;
    /* What the backend's process wrote on stdout and stderr: the last bytes (valid UTF-8, NUL-terminated), and
     * how many bytes came before them and were dropped. */
    int64_t output_bytes;
    int64_t output_dropped;
    char output[PAR_OUTPUT_TAIL];
    /* The nodes the backend declared a non-direct algorithm for, which the oracle judged with that algorithm's
     * budget: n_algos in all, the first PAR_RESULT_ALGOS of them listed; 0 when none (every node direct). */
    int32_t n_algos;
    par_result_decl algos[PAR_RESULT_ALGOS];
    /* The quantized nodes the backend declared a scheme for other than its backend-wide one, whose integers and
     * ties the oracle judged under that scheme: n_requants in all, the first PAR_RESULT_ALGOS of them listed; 0 when
     * none. */
    int32_t n_requants;
    par_result_decl requants[PAR_RESULT_ALGOS];
    /* Defects the backend's own checking reported (PAR_PROC_DIAGNOSTICS) after prepare or after a run: how many
     * messages in all, 0 when none. The first one is in the reason ("diagnostic: ..."), and made the verdict FAIL
     * unless it was already ERROR, CRASH, TIMEOUT or FLAKY (then the reason names it after the verdict's own). */
    int32_t n_diagnostics;
    /* The backend's note on how it prepared the graph (PAR_PROC_NOTE: e.g. where each part of a partitioned graph
     * runs), one line, valid UTF-8; "" when none. Informational: it changes no verdict. */
    char note[PAR_REASON_LEN];
} par_result;

/* Check a record that came from another process: done is 0 or 1, the verdict in range, the strings terminated and
 * valid UTF-8 (invalid sequences replaced with U+FFFD, control characters in the reason escaped), counts
 * non-negative. Returns 0 when the record was usable as it came, 1 when it was repaired (a string), -1 when it must
 * be discarded (verdict or done out of range); why names the first problem. */
int par_result_check(par_result *r, char *why, size_t why_len);

/* Copy src (at most src_cap bytes, up to its NUL) into dst (dst_cap bytes, always terminated) as valid UTF-8:
 * invalid sequences become U+FFFD; with one_line, control characters (C0, DEL) become \xNN. Cut at a character
 * boundary. Returns 1 when anything was replaced, escaped or cut, else 0. dst and src may not overlap. */
int par_text_clean(char *dst, size_t dst_cap, const char *src, size_t src_cap, int one_line);

#define PAR_MAX_KNOBS 16

/* A backend under test: a backend table plus knob settings, labelled "cpu" or "cpu[kernels=scalar]". */
typedef struct par_backend_inst {
    char label[128];
    const par_backend *be;
    int32_t n_knobs;
    char knob_key[PAR_MAX_KNOBS][64];
    char knob_val[PAR_MAX_KNOBS][128];
    char plugin_path[512];   /* "" for built-in backends */
    /* Filled by par_exec_probe, from the one start of the backend in a child process (init, knobs, describe,
     * PAR_PROC_REQUANT, PAR_PROC_REQUANT_EXACT, PAR_PROC_ARITH_FLAGS, PAR_PROC_ARITH, destroy); run and bench judge
     * with these, never by asking the backend again outside a child. */
    char describe[512];      /* PAR_PROC_DESCRIBE's text (valid UTF-8) */
    int usable;
    char unusable_reason[PAR_MSG_LEN];
    int32_t probed;          /* 1 once the probe has answered */
    int32_t knob_error;      /* 1 when the probe failed on a knob: a usage error (exit 2) */
    int32_t arith;           /* par_arith: PAR_PROC_ARITH's answer for this context when the backend has it, else the
                              * table's (validated either way); what the oracle's profile and every report use */
    int32_t requant;         /* par_requant, PAR_PROC_REQUANT (fp32 when absent) */
    int32_t requant_exact;   /* PAR_PROC_REQUANT_EXACT: 1 when promised */
    uint32_t arith_flags;    /* PAR_PROC_ARITH_FLAGS (0 when absent; only known bits: others make it unusable) */
} par_backend_inst;

#endif
