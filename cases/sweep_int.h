/*
 * sweep_int.h - the walk's state, shared by sweep.c (the services a spec calls) and sweep_walk.c (the walk over the
 * specs); nothing else includes it.
 */
#ifndef PAR_SWEEP_INT_H
#define PAR_SWEEP_INT_H

#include "sweep.h"

struct par_sweep {
    const par_sweep_visit *v;
    par_suite_level level;
    const char *suite;
    uint64_t seed;
    int64_t index;          /* position in the suite's order; counts filtered-out IDs too, so that it is stable */
    int64_t visited;        /* IDs handed to want() */
    par_case *pending;      /* handed out by par_sweep_case, not yet given back */
    int64_t pending_index;
};

/* A spec that asked for a case and never handed it back: an internal error of that spec (the case is dropped). */
void par_sweep_drop_pending(par_sweep *s);

#endif
