/*
 * sweep.c - walks the sweep suites: calls every op's sweep spec (from the op table) at the quick or full level,
 * formats each case ID ("<op>(<params>)#seed=N"), asks the visitor whether it wants the case, and only then has the
 * spec build it; finished cases go to the visitor, cases whose builder failed go to its error callback.
 *
 * only_op: every spec is still walked (a spec may generate cases of several ops, e.g. the quantized graphs of a
 * family), but only IDs whose op is only_op reach want(); walking a grid without formatting its IDs costs little.
 * The index handed to want() and build() is the case's position in the whole suite, the same with or without
 * only_op, so that shards and repro lines agree.
 *
 * It must not know any op's grid or semantics (those live in cases/ops/), and must not depend on anything but the
 * suite level and the seed: the same ID always yields the same case.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void par_sweep_none(par_sweep *s)
{
    (void)s;
}

par_suite_level par_sweep_level(const par_sweep *s)
{
    return s->level;
}

static void report(par_sweep *s, const char *id, const char *fmt, const char *detail)
{
    par_msg m;
    par_msgf(&m, PAR_ERROR, fmt, detail);
    if (s->v->error) s->v->error(s->v->user, id, &m);
}

/* A spec that asked for a case and never handed it back: an internal error of that spec (the case is dropped). */
static void drop_pending(par_sweep *s)
{
    if (!s->pending) return;
    report(s, s->pending->id, "sweep spec did not finish the case%s", "");
    par_case_destroy(s->pending);
    s->pending = NULL;
}

par_case *par_sweep_case(par_sweep *s, const char *op, const char *id_fmt, ...)
{
    char id[1024];
    if (s->v->only_op && strcmp(op, s->v->only_op) != 0) {
        s->index++;
        return NULL;
    }
    drop_pending(s);

    va_list ap;
    va_start(ap, id_fmt);
    int n = vsnprintf(id, sizeof id, id_fmt, ap);
    va_end(ap);
    int64_t index = s->index++;
    if (n < 0 || (size_t)n >= sizeof id - 32) {
        report(s, op, "sweep case ID of op '%s' is too long", op);
        return NULL;
    }
    snprintf(id + n, sizeof id - (size_t)n, "#seed=%" PRIu64, s->seed);
    s->visited++;

    if (s->v->want && !s->v->want(s->v->user, index, id, op)) return NULL;

    par_case *c = par_case_create(id, s->seed);
    if (!c) {
        report(s, id, "cannot create the case: %s", "out of memory");
        return NULL;
    }
    if (!c->origin) {
        char origin[64];
        snprintf(origin, sizeof origin, "suite:%s", s->suite);
        c->origin = strdup(origin); /* NULL on failure is allowed: origin is informative */
    }
    s->pending = c;
    s->pending_index = index;
    return c;
}

void par_sweep_done(par_sweep *s, par_case *c)
{
    if (!c) return;
    int64_t index = s->index - 1;
    if (c == s->pending) {
        index = s->pending_index;
        s->pending = NULL;
    }
    if (par_case_finish(c) != PAR_OK) {
        if (s->v->error) s->v->error(s->v->user, c->id, &c->err);
        par_case_destroy(c);
        return;
    }
    if (s->v->build)
        s->v->build(s->v->user, index, c);
    else
        par_case_destroy(c);
}

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
        drop_pending(&s);
    }
    return s.visited;
}
