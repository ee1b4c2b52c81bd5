/*
 * ex_wrap.h - what the test plugins that wrap the example backend share (planted.c, decoder.c, int4.c; plugins.mk
 * links backends/example/ into each, its entry renamed par_example_entry): the example's table, a context whose
 * first member is the example's context, the calls forwarded unchanged (bind, run, release, and supports unless the
 * plugin has its own), and the plugin's table built from the example's. A plugin defines its own init (through
 * exw_init), knobs, get_proc and prepare, where it plants its bug. Included once per plugin; like every plugin it
 * sees only the public header.
 */
#ifndef EX_WRAP_H
#define EX_WRAP_H

#include "example.h"

#include <stdlib.h>

#undef parity_backend_entry /* plugins.mk renames the example's entry; the plugin defines its own */
const par_backend *par_example_entry(uint32_t harness_api_version);
const par_backend *parity_backend_entry(uint32_t harness_api_version);

static const par_backend *inner_table;
static par_backend wrap_table;

/* The example's context: the first member of every wrapping plugin's context. */
static inline void *exw_inner(void *ctx)
{
    return *(void **)ctx;
}

/* A zeroed context of `size` bytes whose first member (a void *) receives the example's context. */
static inline par_status exw_init(size_t size, void **ctx, par_msg *msg)
{
    void **c = calloc(1, size);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    par_status st = inner_table->init(c, msg);
    if (st != PAR_OK) {
        free(c);
        return st;
    }
    *ctx = c;
    return PAR_OK;
}

static void exw_destroy(void *ctx)
{
    if (!ctx) return;
    inner_table->destroy(exw_inner(ctx));
    free(ctx);
}

/* A knob the plugin does not know: the example's. */
static inline par_status exw_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    par_set_knob_fn inner = (par_set_knob_fn)inner_table->get_proc(exw_inner(ctx), PAR_PROC_SET_KNOB);
    return inner(exw_inner(ctx), key, value, msg);
}

static par_status exw_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    return inner_table->supports(exw_inner(ctx), g, node, msg);
}

static par_status exw_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    return inner_table->bind(exw_inner(ctx), prepared, inputs, outputs, msg);
}

static par_status exw_run(void *ctx, void *prepared, par_msg *msg)
{
    return inner_table->run(exw_inner(ctx), prepared, msg);
}

/* The example's node outputs (PAR_PROC_NODE_OUTPUTS), for a plugin that hands them out. */
static inline par_status exw_node_outputs(void *ctx, void *prepared, int32_t n, const int32_t *values, void *const *buffers,
                                   uint8_t *given, par_msg *msg)
{
    par_node_outputs_fn inner = (par_node_outputs_fn)inner_table->get_proc(exw_inner(ctx), PAR_PROC_NODE_OUTPUTS);
    return inner(exw_inner(ctx), prepared, n, values, buffers, given, msg);
}

static void exw_release(void *ctx, void *prepared)
{
    inner_table->release(exw_inner(ctx), prepared);
}

/* The plugin's table: the example's under another name, with the plugin's init, prepare and get_proc, and its
 * supports when not NULL. NULL when the example refuses the harness's version. */
static inline const par_backend *exw_entry(uint32_t harness_api_version, const char *name, const char *description,
                                           par_status (*init)(void **, par_msg *),
                                           par_status (*supports)(void *, const par_graph_desc *, int32_t, par_msg *),
                                           par_status (*prepare)(void *, const par_graph_desc *, void **, par_msg *),
                                           void *(*get_proc)(void *, const char *))
{
    inner_table = par_example_entry(harness_api_version);
    if (!inner_table) return NULL;
    wrap_table = *inner_table;
    wrap_table.name = name;
    wrap_table.description = description;
    wrap_table.init = init;
    wrap_table.destroy = exw_destroy;
    wrap_table.supports = supports ? supports : exw_supports;
    wrap_table.prepare = prepare;
    wrap_table.bind = exw_bind;
    wrap_table.run = exw_run;
    wrap_table.release = exw_release;
    wrap_table.get_proc = get_proc;
    return &wrap_table;
}

#endif /* EX_WRAP_H */
