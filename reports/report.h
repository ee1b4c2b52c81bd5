/*
 * report.h - the JSON report (out/report.json), the source of truth for every renderer. Schema: docs/report-schema.md.
 * Written atomically: a temporary file in the same folder, then rename, so a reader never sees half a report.
 */
#ifndef PAR_REPORT_H
#define PAR_REPORT_H

#include "core/result.h"

#define PAR_REPORT_SCHEMA "parity.report"
#define PAR_REPORT_VERSION 1

typedef struct par_report_case {
    char id[PAR_ID_LEN];
    char origin[256];        /* case file path, or "suite:quick" */
    char ops[256];           /* the ops of the graph, comma-separated, sorted */
    char dtype[PAR_DTYPE_LEN]; /* the dtype the graph computes in (par_graph_compute_dtype), "" when unknown */
    int64_t index;           /* position in the selection before --shard: shards of one run merge by it */
} par_report_case;

/* The machine and the build a run happened on (reports/env.c), as recorded in the report's "environment". */
typedef struct par_env {
    char cpu_model[128];     /* /proc/cpuinfo "model name" (or the nearest field on other CPUs), "unknown" */
    char cpu_features[256];  /* the SIMD features backends care about that this CPU has, space-separated */
    int32_t cores;           /* online logical CPUs */
    char os_name[64], os_release[128], os_version[256], machine[64]; /* uname */
    char compiler[128];      /* the compiler that built parity */
    char json_c[32];         /* json-c version at run time */
    char hostname[256];      /* gethostname(), "" when unknown (a report from before it was recorded) */
    char arch[32];           /* the architecture parity was built for ("x86_64", "aarch64"), "" when unknown */
} par_env;

void par_env_collect(par_env *e);

/* The kernel variant a backend instance runs, as its describe text names it: the value of its `kernels` key
 * ("scalar", "avx2", "neondot"; a trailing "(auto)" dropped) copied to buf, or "" when it names none. */
const char *par_describe_kernels(const char *describe, char *buf, size_t len);

/* What a run selected (the report's config.selection): reports of shards of one run have the same selection and
 * differ only in the shard. */
typedef struct par_report_selection {
    const char *suite;               /* --suite, NULL when none */
    int32_t n_paths;
    const char *const *paths;        /* case files and folders as given */
    const char *case_id, *ops, *filter; /* --case, -o, -k; NULL when not given */
    int32_t shard_k, shard_n;        /* --shard K/N; 0/0 when none (or a merged report of every shard) */
} par_report_selection;

/* One shard report a merged report was made from (the report's "shards"). */
typedef struct par_report_shard {
    int32_t k, n;                    /* shard K/N */
    const char *path;                /* the shard report's file as merged */
    const char *created, *command_line, *git_revision;
    double wall_s;
    int32_t n_cases;
    par_env env;
} par_report_shard;

/* A fuzzing campaign's block of the report (the optional "campaign" object; written by reports/report_campaign.c). */
typedef struct par_report_finding {
    char backend[128];
    char verdict[16];
    char op[64];                     /* "" when not localized */
    char text[256];                  /* the signature in words */
    char folder[256];                /* under the campaign's findings folder */
    char case_id[PAR_ID_LEN];        /* the case of the folder */
    int64_t count;                   /* occurrences in this campaign */
    int64_t count_total;             /* in the findings folder, over every campaign into it */
    uint64_t first_seed;             /* the first graph seed of this campaign that showed it */
    int32_t is_new;                  /* 1: the folder was created by this campaign */
} par_report_finding;

typedef struct par_report_campaign {
    int64_t graphs;                  /* graphs run */
    uint64_t seed;                   /* the campaign's seed: graph i has the graph seed seed + i */
    uint64_t first_seed, last_seed;  /* the graph seeds run (0, 0 when none) */
    int32_t shard_k, shard_n;        /* 0/0: no shard */
    int32_t max_nodes;
    int64_t max_elems;
    double hazard_share, quant_share;
    const char *weights;             /* the --weights spec, NULL when the defaults */
    int32_t reduce;
    double reduce_time_s;
    int32_t batch;                   /* graphs per runner call */
    double wall_s, graphs_per_s;
    const int64_t (*counts)[PAR_V_COUNT]; /* records by verdict per backend of the report ([n_backends]) */
    int64_t generator_errors;        /* graphs the generator failed to build */
    const char *findings_dir;        /* DIR/findings */
    int32_t n_findings;
    const par_report_finding *findings;
} par_report_campaign;

/* Where a failing record's error enters and how it grows: the localization of a case on one backend
 * (campaign/localize.h computes it; `parity run` attaches it to failing records of models, `parity localize` prints
 * it). One node of the strip: its outputs as the backend computed them, every node from its own earlier outputs
 * (as a prefix would), judged by the oracle and its companion. */
typedef struct par_node_verdict {
    int32_t node;            /* node index */
    char name[64], op[32];
    double max_ratio;        /* max |d| / budget over its float outputs (docs/oracle.md); NaN when none compared */
    double stat_z;           /* the statistical companion over them; NaN where it stood down */
    int64_t n, n_over;       /* elements compared, over budget or non-finite */
    int diverges;            /* some element fails, or the companion does */
} par_node_verdict;

typedef struct par_node_strip {
    int32_t present;         /* 1: the record was localized (the rest is meaningful) */
    int32_t n;               /* nodes[0 .. n): every node, graph order (per-node outputs); 0 with prefixes */
    par_node_verdict *nodes;
    int32_t first;           /* the first divergent node (a node index), -1 when none */
    char first_name[64], first_op[32];
    double first_ratio, first_z;
    /* The bound each node value's companion is held to: that of the case's stat_k node values judged
     * (par_stat_bound_of, docs/oracle.md "The companion on every node"), as the record's verdict holds them; stat_k
     * 0 (bound NaN) where the companion did not judge or the strip came by prefixes. */
    double stat_bound;
    int32_t stat_k;
    int by_prefix;           /* 1: the backend could not give every node's output at once; prefixes localized */
    int node_outputs;        /* 1: the nodes' values are the backend's own, read from the case's run as it is
                              * (PAR_PROC_NODE_OUTPUTS; a node it did not hold, n 0); 0: a run with every node's
                              * output made a graph output */
    par_verdict verdict;     /* the whole case's verdict on the backend (per-node outputs: the graph outputs') */
    char why[PAR_REASON_LEN];/* by_prefix: why the per-node outputs were not available (and where the walk stopped) */
    int32_t stopped;         /* by_prefix: >0 when the walk reached its deadline after this many prefixes, none
                              * failing (par_run_config.loc_deadline): first is then -1 */
} par_node_strip;

/* A report: what the runner produced, or what reports/report_read.h read back from a file (then every pointer is
 * into the read document, and each backend table holds only name, description, version and arith). Renderers read
 * nothing else, so a report from another machine, another shard or last month renders the same. */
typedef struct par_report {
    const char *created;             /* ISO 8601 UTC, "2025-01-31T12:00:00Z"; NULL: now */
    const char *parity_version;      /* NULL: this build's */
    const char *git_revision;        /* NULL: this build's */
    const par_env *env;              /* NULL: this machine's (par_env_collect) */
    par_report_selection sel;
    int32_t n_shards;                /* a merged report: the shard reports it was made from; 0 otherwise */
    const par_report_shard *shards;
    const char *command_line;
    uint64_t seed;
    int32_t repeat, warmup, jobs;
    int32_t rounds;                  /* --rounds (1 when not given; 0 reads as 1) */
    double timeout_s;
    double wall_s;
    const char *parity_exe;          /* argv[0]-derived path used in repro commands */
    int32_t n_backends;
    const par_backend_inst *backends;
    int32_t n_cases;
    const par_report_case *cases;
    const par_result *results;       /* [case * n_backends + backend]; records with done == 0 are skipped */
    const par_node_strip *strips;    /* NULL, or [case * n_backends + backend]: the localized records' strips (an
                                      * entry with present == 0 has none) */
    int interrupted;                 /* 1: the run was stopped (SIGINT/SIGTERM); the records are what finished */
    const par_report_campaign *campaign; /* NULL except for `parity fuzz` */
} par_report;

/* The one-line repro command of a record, e.g. "build/parity run --case 'relu(shape=[3])#seed=1' -b example
 * --plugin build/plugins/libparity_example.so". */
void par_report_repro(const par_report *r, int32_t c, int32_t b, char *buf, size_t len);

/* The parity version and git revision a report names: its own (read from a file), else this build's. */
const char *par_report_version(const par_report *r);
const char *par_report_git_revision(const par_report *r);

/* Write the report to path atomically. */
par_status par_report_write_json(const par_report *r, const char *path, par_msg *msg);

/* The "campaign" object of a report (a json_object *, returned as void * so that this header needs no json-c). */
void *par_report_campaign_json(const par_report *r);

#endif
