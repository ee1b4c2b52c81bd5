/*
 * campaign.c - the differential fuzzing campaign (campaign.h): graphs from the generator in batches through the
 * normal runner, every record that is neither PASS nor UNSUPPORTED a finding, the live status line, the report.
 *
 * A batch is up to opts.batch graphs (128 by default) in one par_run_cases call: the runner forks its workers per
 * call (cheap next to 128 graphs), and the fork servers, started here once before any case is built, serve every
 * batch (par_run_config.keep_servers). Generated cases are one-off, so the reference cache is skipped
 * (par_run_config.no_refcache): its key would cost a SHA-256 of every input for a lookup that cannot hit.
 *
 * A finding, in this order (each step can fail without losing the previous ones):
 *   1. written to a provisional folder: case.json and finding.json, atomically (findings.h);
 *   2. localized (localize.h) on its one backend: the first divergent node's op completes the signature;
 *   3. settled: the folder is renamed to its signature's, or, when that signature has a folder already, the
 *      occurrence is counted there and the provisional folder removed;
 *   4. a signature new to the folder is reduced in a child process (campaign_reduce.c): reduced.json, repro.c,
 *      and the reduction's statistics in finding.json.
 * Localizing before naming would leave a window in which a finding exists only in memory; the provisional folder
 * closes it, at the cost of one rename.
 *
 * SIGINT / SIGTERM: the runner catches them during a batch and passes them on to the campaign's handler; the
 * campaign then takes the finished records of the batch (findings written as usual, no new localization or
 * reduction), writes the index and the report, and returns 128 + the signal.
 *
 * This file must not judge anything: the runner and the oracle do.
 */
#include "campaign.h"

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "campaign_int.h"
#include "findings.h"
#include "localize.h"
#include "reports/report.h"
#include "core/clock.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* This campaign's view of a signature: the report's finding and its one record. */
typedef struct seen {
    par_report_finding rf;
    int32_t backend;
    par_result rec;
    char origin[256];
} seen;

typedef struct campaign {
    const par_campaign_opts *o;
    par_run_config cfg;      /* the caller's, with servers, keep_servers and no_refcache */
    par_campaign_stats *st;
    par_findings fs;
    seen *seen;
    int32_t n_seen, cap_seen;
    uint64_t first_seed, last_seed; /* the graph seeds run */
    int internal;
    int status_shown;
    double t0, last_status;
} campaign;

/* ---- the status line ------------------------------------------------------------------------------------------- */

static void status_line(campaign *k, int final)
{
    if (!k->o->progress || !isatty(STDERR_FILENO)) return;
    double t = par_now_s();
    if (!final && t - k->last_status < 0.25) return;
    k->last_status = t;
    double el = t - k->t0;
    char line[1024];
    int n = snprintf(line, sizeof line, "\rfuzz: %lld graphs  %.0f/s  %lld findings (%d signature%s)  %.0fs |",
                     (long long)k->st->graphs, el > 0 ? (double)k->st->graphs / el : 0.0,
                     (long long)k->st->findings, (int)k->n_seen, k->n_seen == 1 ? "" : "s", el);
    for (int32_t b = 0; b < k->cfg.n_backends && b < PAR_CAMPAIGN_MAX_BACKENDS && n > 0 && n < (int)sizeof line; b++) {
        const int64_t *c = k->st->by_backend[b];
        int64_t bad = 0;
        for (int v = 0; v < PAR_V_COUNT; v++)
            if (v != PAR_V_PASS && v != PAR_V_UNSUPPORTED) bad += c[v];
        n += snprintf(line + n, sizeof line - (size_t)n, " %s %lld pass %lld unsup %lld bad |",
                      k->cfg.backends[b].label, (long long)c[PAR_V_PASS], (long long)c[PAR_V_UNSUPPORTED],
                      (long long)bad);
    }
    /* cut to the terminal's width: a line that wraps would not be overwritten by the next one */
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 && (size_t)ws.ws_col < sizeof line &&
        strlen(line) > (size_t)ws.ws_col)
        line[ws.ws_col] = 0; /* the leading '\r' takes no column */
    fprintf(stderr, "%s\033[K%s", line, final ? "\n" : "");
    fflush(stderr);
    k->status_shown = 1;
}

/* ---- findings -------------------------------------------------------------------------------------------------- */

static seen *seen_of(campaign *k, const par_finding *e)
{
    for (int32_t i = 0; i < k->n_seen; i++)
        if (!strcmp(k->seen[i].rf.folder, e->dir)) return &k->seen[i];
    if (k->n_seen == k->cap_seen) {
        int32_t cap = k->cap_seen ? 2 * k->cap_seen : 16;
        seen *ns = realloc(k->seen, sizeof *ns * (size_t)cap);
        if (!ns) return NULL;
        k->seen = ns;
        k->cap_seen = cap;
    }
    seen *s = &k->seen[k->n_seen++];
    memset(s, 0, sizeof *s);
    return s;
}

/* Note occurrence (seed, record of backend b) of entry e in this campaign's list. */
static void note_seen(campaign *k, const par_finding *e, int32_t b, const par_result *r, uint64_t seed)
{
    int fresh = 1;
    for (int32_t i = 0; i < k->n_seen; i++) fresh &= strcmp(k->seen[i].rf.folder, e->dir) != 0;
    seen *s = seen_of(k, e);
    if (!s) {
        k->internal = 1;
        return;
    }
    if (fresh) {
        snprintf(s->rf.backend, sizeof s->rf.backend, "%s", e->sig.backend);
        snprintf(s->rf.verdict, sizeof s->rf.verdict, "%s", par_verdict_name(e->sig.verdict));
        snprintf(s->rf.op, sizeof s->rf.op, "%s", e->sig.op);
        par_signature_text(&e->sig, s->rf.text, sizeof s->rf.text);
        snprintf(s->rf.folder, sizeof s->rf.folder, "%s", e->dir);
        snprintf(s->rf.case_id, sizeof s->rf.case_id, "%s", e->case_id);
        s->rf.first_seed = seed;
        s->rf.is_new = e->new_here;
        s->backend = b;
        s->rec = *r;
        snprintf(s->origin, sizeof s->origin, "%s/%s/case.json", k->fs.root, e->dir);
    }
    s->rf.count++;
    s->rf.count_total = e->count;
}

/* The localization as the JSON text of finding.json's "localized" (malloc'ed), or NULL. */
static char *loc_json(const par_divergence *d, const char *err)
{
    json_object *o = json_object_new_object();
    if (err) {
        json_object_object_add(o, "error", json_object_new_string(err));
    } else {
        json_object_object_add(o, "node", json_object_new_int(d->node));
        json_object_object_add(o, "node_name", d->node >= 0 ? json_object_new_string(d->node_name) : NULL);
        json_object_object_add(o, "op", d->node >= 0 ? json_object_new_string(d->op) : NULL);
        json_object_object_add(o, "verdict", json_object_new_string(par_verdict_name(d->rec.verdict)));
        json_object_object_add(o, "reason", json_object_new_string(d->rec.reason));
    }
    char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return s;
}

static char *reduction_json(const par_campaign_reduced *r)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "reduced_file", r->ok ? json_object_new_string("reduced.json") : NULL);
    json_object_object_add(o, "repro_c", r->repro_ok ? json_object_new_string("repro.c") : NULL);
    json_object_object_add(o, "error", r->msg[0] ? json_object_new_string(r->msg) : NULL);
    json_object_object_add(o, "repro_error", r->repro_msg[0] ? json_object_new_string(r->repro_msg) : NULL);
    json_object_object_add(o, "tests", json_object_new_int(r->st.tests));
    json_object_object_add(o, "nodes_before", json_object_new_int(r->st.nodes_before));
    json_object_object_add(o, "nodes_after", json_object_new_int(r->st.nodes_after));
    json_object_object_add(o, "elems_before", json_object_new_int64(r->st.elems_before));
    json_object_object_add(o, "elems_after", json_object_new_int64(r->st.elems_after));
    char t[32];
    snprintf(t, sizeof t, "%.3f", r->st.wall_s);
    json_object_object_add(o, "wall_s", json_object_new_double_s(r->st.wall_s, t));
    json_object_object_add(o, "budget_hit", json_object_new_boolean(r->st.budget_hit != 0));
    char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return s;
}

/* Stop and start the fork servers again (after a run that lost a worker, or a killed reduction). */
static void restart_servers(campaign *k)
{
    par_msg m = {{0}};
    par_run_servers_stop(&k->cfg);
    if (par_run_servers_start(&k->cfg, &m) != 0) {
        fprintf(stderr, "parity: fuzz: cannot restart the fork servers: %s\n", m.text);
        k->internal = 1;
    }
    k->cfg.keep_servers = 1;
}

/* The run configuration of backend b alone, with worker 0's fork server of b. */
static par_run_config one_backend(const campaign *k, int32_t b)
{
    par_run_config c1 = k->cfg;
    c1.backends = &k->cfg.backends[b];
    c1.n_backends = 1;
    c1.jobs = 1;
    c1.progress = 0;
    c1.servers = k->cfg.servers ? &k->cfg.servers[b] : NULL; /* [worker 0 * n_backends + b] */
    c1.max_workers = k->cfg.servers ? 1 : 0;
    return c1;
}

static void finding(campaign *k, const par_case *c, uint64_t seed, int32_t b, const par_result *r)
{
    const par_backend_inst *inst = &k->cfg.backends[b];
    par_signature sig;
    memset(&sig, 0, sizeof sig);
    snprintf(sig.backend, sizeof sig.backend, "%s", inst->label);
    sig.verdict = r->verdict;
    par_msg m = {{0}};
    /* 1. on disk before anything else */
    par_finding_info fi = {.sig = &sig, .seed = seed, .c = c, .rec = r, .inst = inst, .parity_exe = k->o->parity_exe};
    int32_t pi = par_findings_add_pending(&k->fs, &fi, &m);
    if (pi < 0) {
        fprintf(stderr, "parity: fuzz: cannot write a finding of %s on %s: %s\n", c->id, inst->label, m.text);
        k->internal = 1;
        return;
    }
    if (stop_signal) { /* interrupted: keep the provisional folder, try nothing more */
        note_seen(k, &k->fs.list[pi], b, r, seed);
        return;
    }
    /* 2. localize */
    par_run_config c1 = one_backend(k, b);
    par_divergence d;
    memset(&d, 0, sizeof d);
    par_msg lm = {{0}};
    char *loc = NULL;
    if (par_localize(c, &c1, &d, &lm) == 0 && !stop_signal) {
        if (d.node >= 0) snprintf(sig.op, sizeof sig.op, "%s", d.op);
        loc = loc_json(&d, NULL);
    } else {
        loc = loc_json(&d, stop_signal ? "interrupted" : lm.text[0] ? lm.text : "localization failed");
    }
    /* 3. settle under the final signature */
    int32_t had = k->fs.n;
    int32_t ei = par_findings_settle(&k->fs, pi, &sig, loc, &m);
    free(loc);
    if (ei < 0) {
        fprintf(stderr, "parity: fuzz: finding %s on %s: %s\n", c->id, inst->label, m.text);
        k->internal = 1;
        return;
    }
    int is_new = k->fs.n == had && k->fs.list[ei].new_here && k->fs.list[ei].count == 1;
    note_seen(k, &k->fs.list[ei], b, r, seed);
    if (!is_new) return;
    k->st->new_signatures++;
    {
        char text[256], folder[4400];
        par_signature_text(&sig, text, sizeof text);
        par_findings_path(&k->fs, ei, NULL, folder, sizeof folder);
        /* one line per new signature, above the status line */
        fprintf(stderr, "%sparity fuzz: new finding: %s (graph seed %llu): %s\n", k->status_shown ? "\r\033[K" : "",
                text, (unsigned long long)seed, folder);
    }
    if (!k->o->reduce || stop_signal) return;
    /* 4. reduce, in a child */
    char folder[4400];
    par_findings_path(&k->fs, ei, NULL, folder, sizeof folder);
    par_campaign_reduced red;
    double rt = k->o->reduce_time_s > 0 ? k->o->reduce_time_s : 60.0;
    if (par_campaign_reduce_child(c, &c1, &sig, rt, folder, &stop_signal, &red) != 0) {
        snprintf(red.msg, sizeof red.msg, "cannot fork the reduction: %s", strerror(errno));
    }
    char *rj = reduction_json(&red);
    if (!rj || par_findings_set(&k->fs, ei, "reduction", rj, &m) != 0) {
        fprintf(stderr, "parity: fuzz: %s: %s\n", folder, rj ? m.text : "out of memory");
        k->internal = 1;
    }
    free(rj);
    if (red.killed && !stop_signal) restart_servers(k);
}

/* ---- batches ---------------------------------------------------------------------------------------------------- */

int64_t par_campaign_graph_index(int32_t shard_k, int32_t shard_n, int64_t j)
{
    if (shard_n < 1 || shard_k < 1 || shard_k > shard_n) return j;
    return (int64_t)(shard_k - 1) + j * (int64_t)shard_n;
}

/* Run one batch of up to n graphs, this shard's graphs *next, *next + 1, ...; returns the graphs tried. */
static int32_t run_batch(campaign *k, int64_t *next, int32_t n)
{
    par_case_set set;
    memset(&set, 0, sizeof set);
    uint64_t *seeds = malloc(sizeof *seeds * (size_t)n);
    if (!seeds) {
        k->internal = 1;
        return 0;
    }
    int32_t tried = 0;
    while (tried < n && !stop_signal) {
        int64_t i = par_campaign_graph_index(k->o->shard_k, k->o->shard_n, (*next)++);
        tried++;
        uint64_t seed = k->o->seed + (uint64_t)i;
        par_msg m = {{0}};
        par_case *c = par_fuzz_case(seed, &k->o->gen, &m);
        if (!c) {
            /* a generator bug, never a backend's: reported, counted, and the exit code says internal */
            if (k->st->generator_errors++ < 10)
                fprintf(stderr, "parity: fuzz: the generator failed on graph seed %llu: %s\n", (unsigned long long)seed,
                        m.text);
            continue;
        }
        if (par_case_set_adopt(&set, c, "suite:fuzz") != 0) {
            k->internal = 1;
            break;
        }
        seeds[set.n - 1] = seed;
    }
    if (set.n == 0) {
        free(seeds);
        return tried;
    }
    par_run_result res;
    par_run_cases(&set, &k->cfg, &res);
    if (res.internal) k->internal = 1;
    int32_t nb = k->cfg.n_backends;
    for (int32_t ci = 0; ci < set.n && res.results; ci++) {
        int ran = 0;
        for (int32_t b = 0; b < nb; b++) {
            const par_result *r = &res.results[(size_t)ci * (size_t)nb + (size_t)b];
            if (!r->done) continue;
            ran = 1;
            if (b < PAR_CAMPAIGN_MAX_BACKENDS && (unsigned)r->verdict < PAR_V_COUNT) k->st->by_backend[b][r->verdict]++;
            k->st->records[r->verdict]++;
            if (r->verdict == PAR_V_PASS || r->verdict == PAR_V_UNSUPPORTED) continue;
            k->st->findings++;
            finding(k, set.cases[ci].loaded, seeds[ci], b, r);
        }
        if (ran) {
            if (k->st->graphs == 0 || seeds[ci] < k->first_seed) k->first_seed = seeds[ci];
            if (seeds[ci] > k->last_seed) k->last_seed = seeds[ci];
            k->st->graphs++;
        }
    }
    if (res.internal && !stop_signal) restart_servers(k);
    par_run_result_free(&res);
    par_case_set_free(&set);
    free(seeds);
    return tried;
}

/* ---- the report ------------------------------------------------------------------------------------------------ */

/* DIR/report.json: the campaign object, and one record per signature this campaign saw (its first occurrence; the
 * case's origin is its folder's case.json, so the repro command of the summary runs the saved case). */
static void write_report(campaign *k)
{
    const par_campaign_opts *o = k->o;
    int32_t nb = k->cfg.n_backends, ns = k->n_seen;
    par_report_case *rc = calloc((size_t)(ns ? ns : 1), sizeof *rc);
    par_result *res = calloc((size_t)(ns ? ns : 1) * (size_t)nb, sizeof *res);
    par_report_finding *rf = calloc((size_t)(ns ? ns : 1), sizeof *rf);
    int64_t(*counts)[PAR_V_COUNT] = calloc((size_t)(nb ? nb : 1), sizeof *counts);
    if (!rc || !res || !rf || !counts) {
        fprintf(stderr, "parity: fuzz: out of memory writing the report\n");
        k->internal = 1;
        goto out;
    }
    for (int32_t i = 0; i < ns; i++) {
        const seen *s = &k->seen[i];
        snprintf(rc[i].id, sizeof rc[i].id, "%s", s->rf.case_id);
        snprintf(rc[i].origin, sizeof rc[i].origin, "%s", s->origin);
        snprintf(rc[i].ops, sizeof rc[i].ops, "%s", s->rf.op);
        res[(size_t)i * (size_t)nb + (size_t)s->backend] = s->rec;
        rf[i] = s->rf;
    }
    for (int32_t b = 0; b < nb && b < PAR_CAMPAIGN_MAX_BACKENDS; b++)
        memcpy(counts[b], k->st->by_backend[b], sizeof counts[b]);
    par_report_campaign camp = {
        .graphs = k->st->graphs,
        .seed = o->seed,
        .first_seed = k->first_seed,
        .last_seed = k->last_seed,
        .shard_k = o->shard_n > 0 ? o->shard_k : 0,
        .shard_n = o->shard_n,
        .max_nodes = o->gen.max_nodes,
        .max_elems = o->gen.max_elems,
        .hazard_share = o->gen.hazard_share,
        .quant_share = o->gen.quant_share,
        .weights = o->weights,
        .reduce = o->reduce,
        .reduce_time_s = o->reduce_time_s,
        .batch = o->batch > 0 ? o->batch : PAR_CAMPAIGN_BATCH,
        .wall_s = k->st->wall_s,
        .graphs_per_s = k->st->graphs_per_s,
        .counts = (const int64_t(*)[PAR_V_COUNT])counts,
        .generator_errors = k->st->generator_errors,
        .findings_dir = k->fs.root,
        .n_findings = ns,
        .findings = rf,
    };
    par_report rep = {.command_line = o->command_line ? o->command_line : "parity fuzz",
                      .seed = o->seed,
                      .repeat = k->cfg.exec.repeat,
                      .warmup = k->cfg.exec.warmup,
                      .jobs = k->cfg.jobs,
                      .timeout_s = k->cfg.exec.timeout_s,
                      .wall_s = k->st->wall_s,
                      .parity_exe = o->parity_exe,
                      .n_backends = nb,
                      .backends = k->cfg.backends,
                      .n_cases = ns,
                      .cases = rc,
                      .results = res,
                      .interrupted = k->st->interrupted_by != 0,
                      .campaign = &camp};
    char path[4200];
    snprintf(path, sizeof path, "%s/report.json", o->out_dir);
    par_msg m = {{0}};
    if (par_report_write_json(&rep, path, &m) != PAR_OK) {
        fprintf(stderr, "parity: fuzz: %s\n", m.text);
        k->internal = 1;
    } else {
        snprintf(k->st->report_path, sizeof k->st->report_path, "%s", path);
    }
out:
    free(rc);
    free(res);
    free(rf);
    free(counts);
}

int par_campaign_run(const par_campaign_opts *o, const par_run_config *cfg, par_campaign_stats *st)
{
    memset(st, 0, sizeof *st);
    campaign k;
    memset(&k, 0, sizeof k);
    k.o = o;
    k.st = st;
    k.cfg = *cfg;
    k.cfg.progress = 0;
    k.cfg.keep_servers = 1;
    k.cfg.no_refcache = 1;
    k.cfg.servers = NULL;
    if (cfg->n_backends > PAR_CAMPAIGN_MAX_BACKENDS || cfg->n_backends < 1) {
        fprintf(stderr, "parity: fuzz: %d backends (1 to %d)\n", (int)cfg->n_backends, PAR_CAMPAIGN_MAX_BACKENDS);
        return 3;
    }
    if (o->count <= 0 && o->time_s <= 0) {
        fprintf(stderr, "parity: fuzz: neither a graph count nor a time budget\n");
        return 3;
    }
    par_msg m = {{0}};
    if (par_findings_open(&k.fs, o->out_dir, &m) != 0) {
        fprintf(stderr, "parity: fuzz: %s\n", m.text);
        return 3;
    }
    /* the servers start before any case is built: the backend children they fork hold no case data */
    if (par_run_servers_start(&k.cfg, &m) != 0) {
        fprintf(stderr, "parity: fuzz: %s\n", m.text);
        par_findings_close(&k.fs);
        return 3;
    }
    k.cfg.keep_servers = 1;
    stop_signal = 0;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int32_t batch = o->batch > 0 ? o->batch : PAR_CAMPAIGN_BATCH;
    k.t0 = par_now_s();
    int64_t next = 0, tried = 0;
    while (!stop_signal) {
        int32_t n = batch;
        if (o->count > 0) {
            if (tried >= o->count) break;
            if (o->count - tried < n) n = (int32_t)(o->count - tried);
        }
        if (o->time_s > 0) {
            double el = par_now_s() - k.t0, left = o->time_s - el;
            if (left <= 0) break;
            /* near the end, a batch sized to the time left at the rate so far */
            if (el > 0.5 && st->graphs > 0) {
                double fit = left * (double)st->graphs / el;
                if (fit < n) n = fit < 8 ? 8 : (int32_t)fit;
            }
        }
        tried += run_batch(&k, &next, n);
        st->wall_s = par_now_s() - k.t0;
        status_line(&k, 0);
        if (k.internal && st->graphs == 0) break; /* nothing runs: do not spin */
    }
    st->wall_s = par_now_s() - k.t0;
    st->graphs_per_s = st->wall_s > 0 ? (double)st->graphs / st->wall_s : 0;
    st->signatures = 0;
    for (int32_t i = 0; i < k.n_seen; i++) st->signatures++;
    st->interrupted_by = stop_signal;
    if (k.status_shown) status_line(&k, 1);
    par_run_servers_stop(&k.cfg);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (par_findings_write_index(&k.fs, &m) != 0) {
        fprintf(stderr, "parity: fuzz: %s\n", m.text);
        k.internal = 1;
    }
    write_report(&k);
    par_findings_close(&k.fs);
    free(k.seen);
    if (st->interrupted_by) return 128 + st->interrupted_by;
    if (k.internal || st->generator_errors > 0) return 3;
    return st->findings > 0 ? 1 : 0;
}
