/*
 * refdigest.c - prints, per selected case, what the reference makes of it, as two SHA-256 digests: one of the case
 * with its inputs inline (the graph and the portable PRNG's input values, par_case_to_json) and one of the bits
 * of every output's float64 reference values and error budgets (f32 arithmetic; every NaN hashed as one pattern:
 * x86-64 makes NaNs negative, Arm positive, and a NaN's sign or payload means nothing). One line per case,
 * `ID<TAB>case-digest<TAB>reference-digest`, in selection order. tests/report/aarch64_reference.sh runs it natively
 * and under qemu-aarch64 and compares the lines: any difference between two architectures is a finding.
 *
 * The options choose another profile and a wider digest, to compare two builds' references (a change that must not
 * move any number): --arith KIND (par_arith_name: f32, f16_storage, f16, bf16, bf16_storage), --flush (subnormals
 * flushed, par_prec_set_flush), --stat (the statistical companion's scales, par_prec.stat_scale), and --all: every
 * value of the graph, not only its outputs, with its scales s and flush parts f beside v and e.
 *
 * usage: refdigest [--suite S] [-o OPS] [--seed N] [--arith KIND] [--flush] [--stat] [--all] [CASE-FILES...]
 *        (exit 0, or 2 for bad input, 3 internal)
 * A test tool: it judges nothing and runs no backend.
 */
#include "core/case.h"
#include "reference/reference.h"
#include "runner/refcache.h"
#include "runner/runner.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bits of n doubles into s, each NaN as the canonical quiet NaN. */
static void hash_doubles(par_sha256 *s, const double *v, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        double d = v[k] != v[k] ? __builtin_nan("") : v[k];
        par_sha256_update(s, &d, sizeof d);
    }
}

static void hex(const uint8_t d[32], char out[65])
{
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"suite", required_argument, NULL, 's'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"arith", required_argument, NULL, 'a'},
                                         {"flush", no_argument, NULL, 'f'},
                                         {"stat", no_argument, NULL, 't'},
                                         {"all", no_argument, NULL, 'A'},
                                         {NULL, 0, NULL, 0}};
    par_selection sel = {0};
    par_arith arith = PAR_ARITH_F32;
    int ch, flush = 0, stat = 0, all = 0;
    while ((ch = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (ch == 'o') sel.ops = optarg;
        else if (ch == 's') sel.suite = optarg;
        else if (ch == 'S') sel.seed = strtoull(optarg, NULL, 10);
        else if (ch == 'a') {
            int k = 0;
            while (k < PAR_ARITH_N_KINDS && strcmp(optarg, par_arith_name((par_arith)k)) != 0) k++;
            if (k == PAR_ARITH_N_KINDS) {
                fprintf(stderr, "refdigest: --arith: unknown arithmetic '%s' (f32, f16_storage, f16, bf16, "
                                "bf16_storage)\n", optarg);
                return 2;
            }
            arith = (par_arith)k;
        } else if (ch == 'f') flush = 1;
        else if (ch == 't') stat = 1;
        else if (ch == 'A') all = 1;
        else {
            fprintf(stderr, "usage: refdigest [--suite S] [-o OPS] [--seed N] [--arith KIND] [--flush] [--stat] "
                            "[--all] [CASE-FILES...]\n");
            return 2;
        }
    }
    sel.n_paths = argc - optind;
    sel.paths = argv + optind;
    par_case_set set;
    par_msg msg = {{0}};
    int rc = par_select_cases(&sel, &set, &msg);
    if (rc) {
        fprintf(stderr, "refdigest: %s\n", msg.text);
        return rc;
    }
    par_prec prec = par_prec_for(arith);
    par_prec_set_flush(&prec, flush);
    prec.stat_scale = stat;
    for (int32_t i = 0; i < set.n && rc == 0; i++) {
        int owned = 0;
        par_case *c = par_case_set_get(&set, i, &owned, &msg);
        if (!c) {
            fprintf(stderr, "refdigest: %s: %s\n", set.cases[i].id, msg.text);
            rc = 3;
            break;
        }
        void **inputs = NULL;
        par_ref_result *ref = NULL;
        char *text = par_case_to_json(c, 1);
        const par_graph_desc *g = par_graph_desc_of(c->graph);
        if (!text || par_case_make_inputs(c, &inputs, &msg) != PAR_OK ||
            par_ref_run(g, &prec, (const void *const *)inputs, &ref, &msg) != PAR_OK) {
            fprintf(stderr, "refdigest: %s: %s\n", set.cases[i].id, msg.text[0] ? msg.text : "cannot serialize");
            rc = 3;
        } else {
            uint8_t d1[32], d2[32];
            char h1[65], h2[65];
            par_sha256 s;
            par_sha256_init(&s);
            par_sha256_update(&s, text, strlen(text));
            par_sha256_final(&s, d1);
            par_sha256_init(&s);
            for (int32_t o = 0; o < (all ? ref->n_values : g->n_outputs); o++) {
                const par_rt *t = &ref->values[all ? o : g->outputs[o]];
                par_sha256_update(&s, &t->numel, sizeof t->numel);
                if (!t->v) continue; /* a value the graph leaves empty */
                hash_doubles(&s, t->v, t->numel);
                hash_doubles(&s, t->e, t->numel);
                if (!all) continue;
                if (t->s) hash_doubles(&s, t->s, t->numel);
                if (t->f) hash_doubles(&s, t->f, t->numel);
            }
            par_sha256_final(&s, d2);
            hex(d1, h1);
            hex(d2, h2);
            printf("%s\t%s\t%s\n", set.cases[i].id, h1, h2);
        }
        free(text);
        par_ref_result_destroy(ref);
        if (inputs) par_case_free_inputs(c, inputs);
        if (owned) par_case_destroy(c);
    }
    par_case_set_free(&set);
    return rc;
}
