/*
 * campaign.h - a differential fuzzing campaign: graphs from the generator (fuzz/gen.h), seed after seed, run on the
 * reference and every selected backend instance through the normal runner (child processes, guard regions,
 * oracle). A record that is neither PASS nor UNSUPPORTED is a finding: it is written to DIR/findings/<signature>/
 * at once (findings.h), then localized (localize.h) and reduced (reduce.h); findings are deduplicated by signature.
 * A live status line goes to stderr on a terminal. Graph i of a campaign of seed S has the graph seed S + i; shard
 * K/N runs the graphs with i mod N = K - 1, so N machines share a seed range and their findings folders merge.
 */
#ifndef PAR_CAMPAIGN_H
#define PAR_CAMPAIGN_H

#include "gen/gen.h"
#include "runner/runner.h"

#define PAR_CAMPAIGN_MAX_BACKENDS 32
#define PAR_CAMPAIGN_BATCH 128     /* graphs per runner call by default */

typedef struct par_campaign_opts {
    par_fuzz_opts gen;
    uint64_t seed;           /* the first graph seed (default 1) */
    int64_t count;           /* graphs to run (this shard's); 0: until time_s */
    double time_s;           /* wall-clock budget; 0: until count (one of the two must be set) */
    int32_t shard_k, shard_n;/* 1 <= K <= N; 0/0 = all */
    const char *out_dir;     /* DIR: DIR/report.json and DIR/findings/ */
    int reduce;              /* 1: localize and reduce every new finding (default) */
    double reduce_time_s;    /* budget per reduction */
    int progress;            /* the status line (only when stderr is a terminal) */
    const char *command_line;/* recorded in the report */
    const char *parity_exe;  /* used in repro commands */
    const char *weights;     /* the --weights spec as given (recorded in the report), NULL: the defaults */
    int32_t batch;           /* graphs per runner call; <= 0: PAR_CAMPAIGN_BATCH */
} par_campaign_opts;

typedef struct par_campaign_stats {
    int64_t graphs;          /* graphs run */
    int64_t records[PAR_V_COUNT]; /* records by verdict, all backends */
    int64_t findings;        /* records that were findings */
    int32_t signatures;      /* distinct signatures (findings folders) */
    double wall_s;
    double graphs_per_s;
    int interrupted_by;      /* SIGINT / SIGTERM, else 0 */
    int64_t by_backend[PAR_CAMPAIGN_MAX_BACKENDS][PAR_V_COUNT]; /* records by verdict per backend of cfg */
    int64_t generator_errors;/* graphs the generator failed to build (a generator bug: exit 3) */
    int32_t new_signatures;  /* signatures this campaign created a folder for */
    char report_path[4200];  /* DIR/report.json, "" when it could not be written */
} par_campaign_stats;

/* The graph index of the j-th graph (from 0) of shard K/N: K - 1 + j N (j itself without a shard: 0/0). Graph
 * index i has the graph seed seed + i. */
int64_t par_campaign_graph_index(int32_t shard_k, int32_t shard_n, int64_t j);

/* Run a campaign on cfg's backends (probed; cfg->exec and cfg->jobs as the caller wants them, cfg->servers NULL:
 * the campaign starts its fork servers itself, before it builds any case, and stops them). Writes DIR/report.json
 * (reports/report.h, with the "campaign" object) and DIR/findings/. Returns the exit code: 0 no finding,
 * 1 findings, 3 internal error, 130 / 143 interrupted (the report and every finding written so far are kept). */
int par_campaign_run(const par_campaign_opts *o, const par_run_config *cfg, par_campaign_stats *st);

#endif
