/*
 * campaign_int.h - what the campaign driver (campaign.c) shares with its part campaign_reduce.c: the reduction of
 * a new finding in a child process.
 */
#ifndef PAR_CAMPAIGN_INT_H
#define PAR_CAMPAIGN_INT_H

#include <signal.h>

#include "reduce.h"

typedef struct par_campaign_reduced {
    int ok;                   /* 1: reduced.json written */
    int repro_ok;             /* 1: repro.c written */
    int killed;               /* 1: the child was stopped (interrupted, or past its time) */
    par_reduce_stats st;
    char msg[PAR_MSG_LEN];    /* why the reduction failed, "" when it did not */
    char repro_msg[PAR_MSG_LEN];
} par_campaign_reduced;

/* Reduce c (failing with sig on cfg1's one backend) in a child process, writing folder/reduced.json and
 * folder/repro.c; the child is killed when *stop becomes non-zero or after its time (time_s plus a margin for the
 * last candidate). Returns 0 with out filled (out->ok says whether it reduced), -1 when no child could be forked. */
int par_campaign_reduce_child(const par_case *c, const par_run_config *cfg1, const par_signature *sig, double time_s,
                              const char *folder, volatile sig_atomic_t *stop, par_campaign_reduced *out);

#endif
