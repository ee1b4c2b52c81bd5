/*
 * cli_import.c - `parity import MODEL`: an ONNX or TFLite model file as a case file (graph and attributes in JSON,
 * weights in a binary sidecar beside it), or with --ops one op case per distinct (op, shapes, attributes).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/files.h"
#include "formats/model.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: parity import MODEL.onnx|MODEL.tflite [-o CASE.json] [--ops] [--shape NAME=D0,D1,...]... "
            "[--no-test-data] [--seed N]\n"
            "  Writes the model as a parity case: the graph in CASE.json (default: the model's base name .json in\n"
            "  the current folder), every tensor of 64 elements or more in the binary sidecar CASE.bin beside it.\n"
            "  Inputs come from the model's test data (ONNX: test_data_set_0/ beside it) unless --no-test-data,\n"
            "  else they are generated from the seed. --shape gives an input whose shape the file leaves symbolic.\n"
            "  --ops: one case per distinct (op, input shapes, attributes) with the model's real weights, into the\n"
            "  folder -o names (default: the model's base name), runnable where the whole graph is not.\n"
            "  An op parity lacks is one line each (op, first node, count) and exit 2. The mapping: docs/formats.md.\n"
            "  'parity run MODEL.onnx' imports and runs a model without writing anything.\n");
}

static void print_missing(const char *path, const par_import_info *info)
{
    for (int32_t i = 0; i < info->n_missing; i++) {
        const par_import_missing *m = &info->missing[i];
        if (info->n_missing == 1 && m->why[0]) return; /* the message said it */
        if (m->why[0])
            fprintf(stderr, "parity import: %s: %s: %s (first node '%s', %d node%s)\n", path, m->op, m->why,
                    m->first_node, (int)m->count, m->count == 1 ? "" : "s");
        else
            fprintf(stderr, "parity import: %s: op %s is not in parity's op table (first node '%s', %d node%s)\n",
                    path, m->op, m->first_node, (int)m->count, m->count == 1 ? "" : "s");
    }
}

int par_cmd_import(int argc, char **argv, const char *exe)
{
    static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
                                         {"ops", no_argument, NULL, 'O'},
                                         {"shape", required_argument, NULL, 's'},
                                         {"no-test-data", no_argument, NULL, 'T'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    int ops = 0;
    char shapes[2048] = "";
    par_import_opts o = {.seed = 1, .test_data = 1};
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'o': out = optarg; break;
        case 'O': ops = 1; break;
        case 'T': o.test_data = 0; break;
        case 's': {
            size_t used = strlen(shapes);
            if (!strchr(optarg, '=') || used + strlen(optarg) + 2 > sizeof shapes) {
                fprintf(stderr, "parity import: --shape '%s': expected NAME=D0,D1,...\n", optarg);
                return PAR_EXIT_USAGE;
            }
            snprintf(shapes + used, sizeof shapes - used, "%s%s", used ? ";" : "", optarg);
            break;
        }
        case 'S': {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (*end || !v || optarg[0] == '-') {
                fprintf(stderr, "parity import: --seed '%s': expected an integer >= 1\n", optarg);
                return PAR_EXIT_USAGE;
            }
            o.seed = v;
            break;
        }
        case 'h': usage(stdout); return PAR_EXIT_OK;
        default: usage(stderr); return PAR_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return PAR_EXIT_USAGE;
    }
    const char *path = argv[optind];
    if (par_model_format_of(path) == PAR_FMT_NONE) {
        fprintf(stderr, "parity import: %s: not a model file (.onnx or .tflite)\n", path);
        return PAR_EXIT_USAGE;
    }
    o.input_shapes = shapes[0] ? shapes : NULL;
    const char *slash = strrchr(path, '/');
    char base[512];
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : path);
    char *dot = strrchr(base, '.');
    if (dot) *dot = 0;
    par_import_info info;
    par_msg msg = {{0}};
    if (ops) {
        par_case **cases = NULL;
        int32_t n = 0;
        if (par_model_import_ops(path, &o, &cases, &n, &info, &msg) != PAR_OK) {
            fprintf(stderr, "parity import: %s\n", msg.text);
            print_missing(path, &info);
            return PAR_EXIT_USAGE;
        }
        const char *dir = out ? out : base;
        int rc = PAR_EXIT_OK;
        if (par_mkdir_p(dir) != 0) {
            fprintf(stderr, "parity import: %s: cannot make the folder\n", dir);
            rc = PAR_EXIT_USAGE;
        }
        for (int32_t i = 0; i < n; i++) {
            char file[4096];
            snprintf(file, sizeof file, "%s/op%03d.json", dir, (int)i);
            if (rc == PAR_EXIT_OK && par_case_save(cases[i], file, 64, &msg) != PAR_OK) {
                fprintf(stderr, "parity import: %s\n", msg.text);
                rc = PAR_EXIT_INTERNAL;
            }
            par_case_destroy(cases[i]);
        }
        free(cases);
        if (rc == PAR_EXIT_OK) {
            printf("%s: %d op cases in %s/ (%d nodes)\n", path, (int)n, dir, (int)info.n_nodes);
            if (info.n_missing) print_missing(path, &info);
        }
        return rc;
    }
    par_case *c = par_model_import(path, &o, &info, &msg);
    if (!c) {
        fprintf(stderr, "parity import: %s\n", msg.text);
        print_missing(path, &info);
        return PAR_EXIT_USAGE;
    }
    char file[4096];
    if (out) snprintf(file, sizeof file, "%s", out);
    else snprintf(file, sizeof file, "%s.json", base);
    int rc = PAR_EXIT_OK;
    if (par_case_save(c, file, 64, &msg) != PAR_OK) {
        fprintf(stderr, "parity import: %s\n", msg.text);
        rc = PAR_EXIT_INTERNAL;
    } else {
        const par_graph_desc *g = par_graph_desc_of(c->graph);
        printf("%s: %d nodes (%d in the file, %d folded at import), %d inputs, %d outputs -> %s\n", path,
               (int)g->n_nodes, (int)info.n_nodes, (int)info.n_folded, (int)g->n_inputs, (int)g->n_outputs, file);
    }
    par_case_destroy(c);
    return rc;
}
