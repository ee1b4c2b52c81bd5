/*
 * sweep_walk.c - walks a sweep suite: every op's sweep spec (the sweep column of core/ops.def), once each, in table
 * order, at the quick or full level, through the services of sweep.c.
 * It must not know any op's grid or semantics (those live in cases/ops/).
 */
#include <string.h>

#include "sweep_int.h"

static const par_sweep_fn specs[PAR_OP_COUNT] = {
#define PAR_OP(id, name, in_min, in_max, n_out, flags, qform, schema, infer, ref, sweep) [PAR_OP_##id] = sweep,
#include "core/ops.def"
#undef PAR_OP
};

static int level_of(const char *suite)
{
    if (!suite) return -1;
    if (strcmp(suite, "quick") == 0) return PAR_SUITE_QUICK;
    if (strcmp(suite, "full") == 0) return PAR_SUITE_FULL;
    return -1;
}

int64_t par_sweep_walk(const char *suite, const par_sweep_visit *v)
{
    int level = level_of(suite);
    if (level < 0 || !v) return -1;

    par_sweep s;
    memset(&s, 0, sizeof s);
    s.v = v;
    s.level = (par_suite_level)level;
    s.suite = suite;
    s.seed = v->seed ? v->seed : 1;

    /* Each spec once, in table order (a spec is named by one op and covers the ops marked par_sweep_none). */
    par_sweep_fn done_specs[PAR_OP_COUNT];
    int n_done = 0;
    for (int i = 0; i < PAR_OP_COUNT; i++) {
        par_sweep_fn spec = specs[i];
        if (!spec || spec == par_sweep_none) continue;
        int seen = 0;
        for (int j = 0; j < n_done; j++) seen |= done_specs[j] == spec;
        if (seen) continue;
        done_specs[n_done++] = spec;
        spec(&s);
        par_sweep_drop_pending(&s);
    }
    return s.visited;
}
