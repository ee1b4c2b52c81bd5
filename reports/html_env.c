/*
 * html_env.c - the environment section of the HTML report (html_int.h): the machine and the build the run happened
 * on, each backend as the run probed it (version, description, arithmetic, knobs, what its describe text says ran,
 * requantization scheme, arithmetic flags, usable or why not) and the run's configuration.
 *
 * This file must not look at this machine when the report names one: a report read from a file shows the machine
 * it was made on (the environment is collected here only when the report carries none).
 */
#include "html_int.h"

#include "core/requant.h"

#include <string.h>


static void kv(FILE *f, const char *k, const char *v)
{
    fprintf(f, "<tr><th>%s</th><td>", k);
    par_html_text(f, v && v[0] ? v : "-");
    fprintf(f, "</td></tr>\n");
}

static void env_rows(FILE *f, const par_env *e)
{
    char buf[512];
    kv(f, "CPU", e->cpu_model);
    kv(f, "CPU features", e->cpu_features);
    snprintf(buf, sizeof buf, "%d", (int)e->cores);
    kv(f, "cores", buf);
    snprintf(buf, sizeof buf, "%s %s %s (%s)", e->os_name, e->os_release, e->machine, e->os_version);
    kv(f, "OS", buf);
    kv(f, "architecture (built for)", e->arch);
    kv(f, "compiler", e->compiler);
    kv(f, "json-c", e->json_c);
}

static void backend(FILE *f, const par_backend_inst *bi)
{
    const par_backend *be = bi->be;
    char buf[256];
    fprintf(f, "<h3>");
    par_html_text(f, bi->label);
    fprintf(f, "</h3>\n<table class=\"kv\">\n");
    kv(f, "name", be ? be->name : NULL);
    kv(f, "version", be ? be->version : NULL);
    kv(f, "description", be ? be->description : NULL);
    kv(f, "arith", be ? par_arith_name((par_arith)bi->arith) : NULL); /* the probe's (PAR_PROC_ARITH) */
    fprintf(f, "<tr><th>knobs</th><td>");
    for (int32_t k = 0; k < bi->n_knobs && k < PAR_MAX_KNOBS; k++) {
        fprintf(f, "%s<code>", k ? ", " : "");
        par_html_text(f, bi->knob_key[k]);
        fputc('=', f);
        par_html_text(f, bi->knob_val[k]);
        fprintf(f, "</code>");
    }
    if (bi->n_knobs <= 0) fprintf(f, "none");
    fprintf(f, "</td></tr>\n");
    kv(f, "describe (what ran)", bi->describe);
    kv(f, "kernels", par_describe_kernels(bi->describe, buf, sizeof buf));
    kv(f, "plugin", bi->plugin_path);
    if (bi->probed) {
        const char *rq = par_requant_name((par_requant)bi->requant);
        snprintf(buf, sizeof buf, "%s%s", rq ? rq : "fp32", bi->requant_exact ? " (exact: promised bit-exact)" : "");
        kv(f, "requantization", buf);
        buf[0] = 0;
        for (uint32_t bit = 1; bit; bit <<= 1)
            if ((bi->arith_flags & bit) && par_arith_flag_name(bit))
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? ", " : "",
                         par_arith_flag_name(bit));
        kv(f, "arith flags", buf[0] ? buf : "none");
    } else {
        kv(f, "requantization", "not probed");
    }
    if (bi->usable) kv(f, "usable", "yes");
    else {
        fprintf(f, "<tr><th>usable</th><td><strong>no</strong>: ");
        par_html_text(f, bi->unusable_reason);
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "</table>\n");
}

void par_html_environment(FILE *f, const par_report *r)
{
    par_env here;
    const par_env *e = r->env;
    if (!e) {
        par_env_collect(&here);
        e = &here;
    }
    char buf[512];
    fprintf(f, "<section id=\"environment\">\n<h2>Environment</h2>\n<table class=\"kv\">\n");
    env_rows(f, e);
    kv(f, "parity version", par_report_version(r));
    kv(f, "git revision", par_report_git_revision(r));
    kv(f, "executable", r->parity_exe);
    fprintf(f, "</table>\n<h3>Configuration</h3>\n<table class=\"kv\">\n");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->seed);
    kv(f, "seed", buf);
    snprintf(buf, sizeof buf, "%d timed (after %d warm-up)", (int)r->repeat, (int)r->warmup);
    kv(f, "runs per record", buf);
    snprintf(buf, sizeof buf, "%g s", r->timeout_s);
    kv(f, "timeout", buf);
    snprintf(buf, sizeof buf, "%d", (int)r->jobs);
    kv(f, "jobs", buf);
    kv(f, "suite", r->sel.suite);
    fprintf(f, "<tr><th>paths</th><td>");
    for (int32_t i = 0; i < r->sel.n_paths && r->sel.paths; i++) {
        fprintf(f, "%s<code>", i ? " " : "");
        par_html_text(f, r->sel.paths[i]);
        fprintf(f, "</code>");
    }
    if (r->sel.n_paths <= 0) fprintf(f, "-");
    fprintf(f, "</td></tr>\n");
    kv(f, "case (--case)", r->sel.case_id);
    kv(f, "ops (-o)", r->sel.ops);
    kv(f, "filter (-k)", r->sel.filter);
    if (r->sel.shard_n > 0) snprintf(buf, sizeof buf, "%d/%d", (int)r->sel.shard_k, (int)r->sel.shard_n);
    else snprintf(buf, sizeof buf, "none");
    kv(f, "shard", buf);
    fprintf(f, "</table>\n<h3>Backends</h3>\n");
    for (int32_t b = 0; b < r->n_backends; b++) backend(f, &r->backends[b]);
    for (int32_t i = 0; i < r->n_shards && r->shards; i++) {
        const par_report_shard *sh = &r->shards[i];
        fprintf(f, "<h3>Shard %d/%d</h3>\n<table class=\"kv\">\n", (int)sh->k, (int)sh->n);
        kv(f, "file", sh->path);
        kv(f, "created", sh->created);
        kv(f, "command line", sh->command_line);
        kv(f, "git revision", sh->git_revision);
        snprintf(buf, sizeof buf, "%d cases in %.1f s", (int)sh->n_cases, sh->wall_s);
        kv(f, "cases", buf);
        env_rows(f, &sh->env);
        fprintf(f, "</table>\n");
    }
    fprintf(f, "</section>\n");
}
