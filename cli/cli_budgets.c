/*
 * cli_budgets.c - `parity budgets`: the reference alone, under one arithmetic profile, for the cases a selection
 * gives: per case its output elements, how many are unjudged (an infinite budget on a value that is not a certain
 * Inf) and the largest finite budget against the largest value; per node (--nodes) the same for the node's outputs.
 * --save / --against keep every node's budgets in a file and compare a later build's with them element by element,
 * so a change to the reference can show that no budget grew (docs/oracle.md, "Looking at the budgets").
 */
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "oracle/oracle.h"
#include "reference/reference.h"

/* One tensor's (or a node's outputs') summary. */
typedef struct bud_sum {
    int64_t numel, unjudged;
    double emax, vmax; /* the largest finite budget, the largest finite |value| */
} bud_sum;

static int is_float_rt(const par_rt *t)
{
    return t && t->v && t->e && (t->dtype == PAR_DTYPE_F32 || t->dtype == PAR_DTYPE_F16 || t->dtype == PAR_DTYPE_F64);
}

static void sum_add(bud_sum *s, const par_rt *t)
{
    if (!is_float_rt(t)) return;
    s->numel += t->numel;
    for (int64_t i = 0; i < t->numel; i++) {
        if (isfinite(t->v[i])) s->vmax = fmax(s->vmax, fabs(t->v[i]));
        if (t->e[i] < INFINITY) s->emax = fmax(s->emax, t->e[i]);
        else if (!isinf(t->v[i])) s->unjudged++; /* the oracle's rule: a certain Inf is judged by its sign */
    }
}

static double sum_ratio(const bud_sum *s) { return s->vmax > 0 ? s->emax / s->vmax : (s->emax > 0 ? INFINITY : 0); }

/* The comparison with a saved file: elements larger than the saved budget, smaller (by more than 1e-6 relative, the
 * saved one's rounding, and only where the saved one is a normal binary32: a subnormal one is coarser), the largest
 * factor. */
typedef struct bud_cmp {
    int64_t n, larger, smaller;
    double worst;
    char worst_node[128], first_node[128]; /* the node of the largest factor; the first node with a larger one */
} bud_cmp;

/* The file holds binary32 budgets rounded up (half the size of binary64; a growth below 2^-23 relative is not
 * seen), each node's float outputs in graph order, case after case. */
static int save_tensor(FILE *f, const par_rt *t)
{
    for (int64_t i = 0; i < t->numel; i++) {
        float x = (float)t->e[i];
        if ((double)x < t->e[i]) x = nextafterf(x, INFINITY);
        if (fwrite(&x, sizeof x, 1, f) != 1) return -1;
    }
    return 0;
}

/* Compare t's budgets with the next numel doubles of f. Returns 0, or -1 when the file is short. */
static int cmp_tensor(FILE *f, const par_rt *t, const char *node, bud_cmp *c)
{
    for (int64_t i = 0; i < t->numel; i++) {
        float saved;
        if (fread(&saved, sizeof saved, 1, f) != 1) return -1;
        double old = saved, now = t->e[i];
        c->n++;
        if (now > old || (isnan(now) && !isnan(old))) {
            if (!c->larger++) snprintf(c->first_node, sizeof c->first_node, "%s", node);
            double k = old > 0 ? now / old : INFINITY;
            if (!(k <= c->worst)) {
                c->worst = k;
                snprintf(c->worst_node, sizeof c->worst_node, "%s", node);
            }
        } else if (now < old * (1 - 1e-6) && old >= FLT_MIN) { /* below, the saved one is coarser than that */
            c->smaller++;
        }
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: parity budgets [CASES...] [--suite S] [--case ID] [-k REGEX] [-o OPS] [--shape NAME=D0,D1]\n"
               "                      [--arith f32|f16-storage|f16|bf16|bf16-storage] [--flush-subnormals] [--nodes]\n"
               "                      [--save FILE | --against FILE]\n"
               "  The reference interpreter alone (no backend runs) under one arithmetic profile (default f32; the\n"
               "  profiles of the backends: 'parity list backends'), for the cases of the selection (as 'parity run'\n"
               "  selects them). Per case: the output elements, how many are unjudged (infinite budget on a value that\n"
               "  is not a certain Inf), the largest finite budget, the largest |value| and their ratio, and where the\n"
               "  unjudged elements come from. --nodes: the same per node (its float outputs), with the op.\n"
               "  --save FILE: every node's budgets, in order, to FILE; --against FILE: compare every node's budgets\n"
               "  with FILE's (the same selection and profile, e.g. an older build's): per case the elements larger and\n"
               "  smaller, the largest factor and the first node with a larger one; exit 1 when any budget is larger.\n"
               "  Exit 0, 1 (--against found a larger budget), 2 usage or input error, 3 internal error.\n");
}

enum { OPT_SUITE = 256, OPT_CASE, OPT_SHAPE, OPT_ARITH, OPT_FLUSH, OPT_NODES, OPT_SAVE, OPT_AGAINST };

int par_cmd_budgets(int argc, char **argv, const char *exe)
{
    (void)exe;
    static const struct option opts[] = {{"suite", required_argument, NULL, OPT_SUITE},
                                         {"case", required_argument, NULL, OPT_CASE},
                                         {"shape", required_argument, NULL, OPT_SHAPE},
                                         {"arith", required_argument, NULL, OPT_ARITH},
                                         {"flush-subnormals", no_argument, NULL, OPT_FLUSH},
                                         {"nodes", no_argument, NULL, OPT_NODES},
                                         {"save", required_argument, NULL, OPT_SAVE},
                                         {"against", required_argument, NULL, OPT_AGAINST},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    par_selection sel = {0};
    const char *arith = "f32", *save = NULL, *against = NULL;
    int flush = 0, nodes = 0, ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "hk:o:", opts, NULL)) != -1) {
        switch (ch) {
        case OPT_SUITE: sel.suite = optarg; break;
        case OPT_CASE: sel.case_id = optarg; break;
        case OPT_SHAPE: sel.input_shapes = optarg; break;
        case 'k': sel.id_regex = optarg; break;
        case 'o': sel.ops = optarg; break;
        case OPT_ARITH: arith = optarg; break;
        case OPT_FLUSH: flush = 1; break;
        case OPT_NODES: nodes = 1; break;
        case OPT_SAVE: save = optarg; break;
        case OPT_AGAINST: against = optarg; break;
        case 'h': usage(stdout); return PAR_EXIT_OK;
        default: usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    sel.n_paths = argc - optind;
    sel.paths = argv + optind;
    if ((!sel.n_paths && !sel.suite && !sel.case_id) || (save && against)) {
        usage(stderr);
        return PAR_EXIT_USAGE;
    }
    par_arith a;
    if (par_cli_arith("parity budgets", arith, &a) != 0) return PAR_EXIT_USAGE;
    par_prec p = par_prec_for(a);
    par_prec_set_flush(&p, flush);
    par_case_set set;
    par_msg msg = {{0}};
    int rc = par_select_cases(&sel, &set, &msg);
    if (rc) {
        fprintf(stderr, "parity: %s\n", msg.text);
        return rc;
    }
    FILE *f = save ? fopen(save, "wb") : against ? fopen(against, "rb") : NULL;
    if ((save || against) && !f) {
        fprintf(stderr, "parity budgets: cannot open %s\n", save ? save : against);
        par_case_set_free(&set);
        return PAR_EXIT_USAGE;
    }
    const char *prof = flush ? "+flush" : "";
    int stop = 0; /* an internal error or a short --against file ends the walk */
    for (int32_t ci = 0; ci < set.n && !stop; ci++) {
        int owned = 0;
        par_msg m = {{0}};
        par_case *c = par_case_set_get(&set, ci, &owned, &m);
        void **inputs = NULL;
        par_ref_result *ref = NULL;
        const par_graph_desc *g = c ? par_graph_desc_of(c->graph) : NULL;
        if (!c || par_case_make_inputs(c, &inputs, &m) != PAR_OK ||
            par_ref_run(g, &p, (const void *const *)inputs, &ref, &m) != PAR_OK) {
            fprintf(stderr, "parity budgets: %s: %s\n", set.cases[ci].id, m.text);
            rc = c ? PAR_EXIT_INTERNAL : PAR_EXIT_USAGE;
            stop = c != NULL || save || against; /* the file would lose its place */
        } else {
            bud_sum out = {0};
            for (int32_t i = 0; i < g->n_outputs; i++) sum_add(&out, &ref->values[g->outputs[i]]);
            printf("%s %s%s: %lld output elements, %lld unjudged, largest budget %.4g on values up to %.4g (ratio "
                   "%.3g)\n", set.cases[ci].id, arith, prof, (long long)out.numel, (long long)out.unjudged, out.emax,
                   out.vmax, sum_ratio(&out));
            char why[1024];
            if (par_unjudged_origin(g, ref, why, sizeof why)) printf("  unjudged %s\n", why);
            bud_cmp cmp = {0};
            /* the node of the largest ratio, and per node lines */
            double rworst = 0;
            int32_t nworst = -1;
            for (int32_t ni = 0; ni < g->n_nodes && !stop; ni++) {
                const par_node *nd = &g->nodes[ni];
                bud_sum s = {0};
                for (int32_t k = 0; k < nd->n_outputs; k++) {
                    const par_rt *t = nd->outputs[k] >= 0 ? &ref->values[nd->outputs[k]] : NULL;
                    if (!is_float_rt(t)) continue;
                    sum_add(&s, t);
                    const char *name = nd->name ? nd->name : "?";
                    if (save && save_tensor(f, t) != 0) {
                        fprintf(stderr, "parity budgets: cannot write %s\n", save);
                        rc = PAR_EXIT_INTERNAL;
                        stop = 1;
                        break;
                    }
                    if (against && cmp_tensor(f, t, name, &cmp) != 0) {
                        fprintf(stderr, "parity budgets: %s: short file: it holds fewer budgets than case '%s' has "
                                "(saved from another selection?)\n", against, set.cases[ci].id);
                        rc = PAR_EXIT_USAGE;
                        stop = 1;
                        break;
                    }
                }
                if (sum_ratio(&s) > rworst) {
                    rworst = sum_ratio(&s);
                    nworst = ni;
                }
                if (nodes && s.numel)
                    printf("  %5d %-20s %-32s n=%-8lld unjudged=%-8lld emax=%-10.4g vmax=%-10.4g ratio=%.3g\n", (int)ni,
                           nd->op ? nd->op : "?", nd->name ? nd->name : "?", (long long)s.numel,
                           (long long)s.unjudged, s.emax, s.vmax, sum_ratio(&s));
            }
            if (nworst >= 0)
                printf("  largest ratio at node '%s' (%s): %.3g\n", g->nodes[nworst].name ? g->nodes[nworst].name : "?",
                       g->nodes[nworst].op ? g->nodes[nworst].op : "?", rworst);
            if (against && !stop) {
                printf("  against %s: %lld elements, %lld larger", against, (long long)cmp.n, (long long)cmp.larger);
                if (cmp.larger)
                    printf(" (up to x%.7g at '%s', the first at '%s')", cmp.worst, cmp.worst_node, cmp.first_node);
                printf(", %lld smaller\n", (long long)cmp.smaller);
                if (cmp.larger && rc == PAR_EXIT_OK) rc = PAR_EXIT_FAIL;
            }
        }
        par_ref_result_destroy(ref);
        if (inputs) par_case_free_inputs(c, inputs);
        if (owned) par_case_destroy(c);
    }
    if (against && !stop && f && fgetc(f) != EOF) {
        fprintf(stderr, "parity budgets: %s holds more budgets than this selection has\n", against);
        rc = PAR_EXIT_USAGE;
    }
    if (f && fclose(f) != 0 && save) rc = PAR_EXIT_INTERNAL;
    par_case_set_free(&set);
    return rc;
}
