/*
 * sweep.c - what a sweep spec (cases/ops/) calls while sweep_walk.c walks it: formats each case ID
 * ("<op>(<params>)#seed=N"), asks the visitor whether it wants the case, and only then has the spec build it;
 * finished cases go to the visitor, cases whose builder failed go to its error callback. It names no spec, so the
 * specs call down into it and nothing here calls back up (sweep_walk.c holds the table of specs).
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

#include "sweep_int.h"

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

void par_sweep_drop_pending(par_sweep *s)
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
    par_sweep_drop_pending(s);

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
