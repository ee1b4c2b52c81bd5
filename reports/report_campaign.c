/*
 * report_campaign.c - the "campaign" object of a report written by `parity fuzz` (docs/report-schema.md): how many
 * graphs, which seeds and shard, the generator's options, the wall time and rate, the records by verdict of every
 * backend, and the findings with their signature, count, first seed and folder. The report's records are the
 * findings' records; this object says what the campaign ran to find them. It reads the par_report alone.
 */
#include "report.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_object *num(double d)
{
    if (!isfinite(d)) return NULL; /* NaN and Infinity are not JSON */
    char t[40];
    snprintf(t, sizeof t, "%.9g", d);
    return json_object_new_double_s(d, t);
}

/* Valid UTF-8 whatever a backend label or a case ID holds. */
static json_object *str(const char *s)
{
    size_t n = strlen(s ? s : ""), cap = 3 * n + 1;
    char *buf = malloc(cap);
    if (!buf) return json_object_new_string("");
    par_text_clean(buf, cap, s ? s : "", n + 1, 0);
    json_object *o = json_object_new_string(buf);
    free(buf);
    return o;
}

static void put(json_object *o, const char *k, json_object *v)
{
    json_object_object_add(o, k, v);
}

void *par_report_campaign_json(const par_report *r)
{
    const par_report_campaign *c = r->campaign;
    json_object *o = json_object_new_object();
    put(o, "graphs", json_object_new_int64(c->graphs));
    put(o, "seed", json_object_new_uint64(c->seed));
    json_object *seeds = json_object_new_object();
    put(seeds, "first", c->graphs ? json_object_new_uint64(c->first_seed) : NULL);
    put(seeds, "last", c->graphs ? json_object_new_uint64(c->last_seed) : NULL);
    put(o, "graph_seeds", seeds);
    if (c->shard_n > 0) {
        char sh[32];
        snprintf(sh, sizeof sh, "%d/%d", (int)c->shard_k, (int)c->shard_n);
        put(o, "shard", str(sh));
    } else {
        put(o, "shard", NULL);
    }
    json_object *opt = json_object_new_object();
    put(opt, "max_nodes", json_object_new_int(c->max_nodes));
    put(opt, "max_elems", json_object_new_int64(c->max_elems));
    put(opt, "hazard_share", num(c->hazard_share));
    put(opt, "quant_share", num(c->quant_share));
    put(opt, "weights", c->weights ? str(c->weights) : NULL);
    put(opt, "reduce", json_object_new_boolean(c->reduce != 0));
    put(opt, "reduce_time_s", num(c->reduce_time_s));
    put(opt, "batch", json_object_new_int(c->batch));
    put(o, "options", opt);
    put(o, "wall_s", num(c->wall_s));
    put(o, "graphs_per_s", num(c->graphs_per_s));
    put(o, "generator_errors", json_object_new_int64(c->generator_errors));
    json_object *bes = json_object_new_array();
    for (int32_t b = 0; b < r->n_backends; b++) {
        json_object *be = json_object_new_object(), *cnt = json_object_new_object();
        int64_t total = 0;
        for (int v = 0; v < PAR_V_COUNT; v++) {
            int64_t n = c->counts ? c->counts[b][v] : 0;
            put(cnt, par_verdict_name((par_verdict)v), json_object_new_int64(n));
            total += n;
        }
        put(be, "backend", str(r->backends[b].label));
        put(be, "records", json_object_new_int64(total));
        put(be, "counts", cnt);
        json_object_array_add(bes, be);
    }
    put(o, "backends", bes);
    put(o, "findings_dir", str(c->findings_dir));
    json_object *fs = json_object_new_array();
    for (int32_t i = 0; i < c->n_findings; i++) {
        const par_report_finding *f = &c->findings[i];
        json_object *fo = json_object_new_object(), *sig = json_object_new_object();
        put(sig, "backend", str(f->backend));
        put(sig, "verdict", str(f->verdict));
        put(sig, "op", f->op[0] ? str(f->op) : NULL);
        put(sig, "text", str(f->text));
        put(fo, "signature", sig);
        put(fo, "count", json_object_new_int64(f->count));
        put(fo, "count_total", json_object_new_int64(f->count_total));
        put(fo, "first_seed", json_object_new_uint64(f->first_seed));
        put(fo, "case", str(f->case_id));
        put(fo, "folder", str(f->folder));
        put(fo, "new", json_object_new_boolean(f->is_new != 0));
        json_object_array_add(fs, fo);
    }
    put(o, "findings", fs);
    return o;
}
