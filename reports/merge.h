/*
 * merge.h - one report from the shard reports of one run (`parity run --shard K/N` on several machines): the cases
 * of every shard in the order of the unsharded selection (each case's index), with their records, so that the
 * merge of shards 1/N .. N/N equals one unsharded run case for case (timings aside: they come from each shard's
 * machine, whose environment the merged report keeps in "shards").
 *
 * Refused, with a message naming the report and the reason: reports of another schema or version (the reader
 * refuses them), of different selections (suite, files, --case, -o, -k), seeds or backends (labels, in order),
 * shards of different N, the same shard twice, a missing shard, a case in two shards, a report that is not a shard
 * (unless it is the only one: merging one report rewrites it). Not refused, only noted in the merged report: different
 * builds (git revisions), machines, repeat or warm-up counts.
 */
#ifndef PAR_MERGE_H
#define PAR_MERGE_H

#include "report.h"

typedef struct par_report_merged par_report_merged;

/* Merge n reports (paths name them in messages). Returns PAR_OK and *out, or PAR_ERROR with msg. */
par_status par_report_merge(const par_report *const *in, const char *const *paths, int32_t n,
                            par_report_merged **out, par_msg *msg);

/* The merged report (valid while both the merged object and the inputs live: it points into them). */
par_report *par_report_merged_report(par_report_merged *m);

void par_report_merged_free(par_report_merged *m);

#endif
