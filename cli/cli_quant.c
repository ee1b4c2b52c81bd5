/*
 * cli_quant.c - `parity quantize CASE --dtype qu8|qs8|qs16 [--per-channel] -o out.json` (or `--dynamic`): writes the
 * quantized twin of a float case (oracle/quantize.c, docs/quantization.md) as a case file. It reads the case, never
 * modifies it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "oracle/quantize.h"

static const char usage_text[] =
    "usage: parity quantize CASE --dtype qu8|qs8|qs16 [--per-channel] [--seeded-weights|--inline-weights]\n"
    "                       [--int4 [--block B] [--w4 s4|u4] [--nibbles lo|hi] [--scale-dtype f32|bf16]]\n"
    "                       [--id ID] -o FILE\n"
    "       parity quantize CASE --dynamic [--per-channel] [--seeded-weights|--inline-weights] [--id ID] -o FILE\n"
    "  Writes the quantized twin of a float case: activations calibrated per tensor from the reference's value\n"
    "  ranges, conv2d/linear weights qs8 (per output channel with --per-channel) with i32 biases, batch_norm folded\n"
    "  into the conv before it, quantize/dequantize at the edges; qs16 is 16a8w: symmetric int16 activations, only\n"
    "  conv2d/linear on integers, every other op float. Weights are quantized from the float data and\n"
    "  written inline, or with --seeded-weights drawn from a seeded qs8 generator scaled like the float weights (a\n"
    "  small file; the default when generated weights exceed 2^20 elements). --dynamic: every linear with constant\n"
    "  f32 weights becomes linear_dynamic (qs8 weights, the input quantized at run time), everything else stays\n"
    "  float, as torch.ao.quantization.quantize_dynamic. --int4 (with --dtype qs16): every linear whose K the block\n"
    "  divides becomes linear_16a4w (16a4w: int4 weights, integer multipliers per block of B inputs, default 32, and\n"
    "  a float scale per output channel; --per-channel: one block of K), written inline: the nibbles two's\n"
    "  complement (--w4 s4, the default) or unsigned with zero point 8 (--w4 u4), weight 2j in the low (--nibbles lo,\n"
    "  the default) or high half of byte j, the channel scales f32 or rounded to bfloat16 (--scale-dtype bf16).\n"
    "  docs/quantization.md.\n";

int par_cmd_quantize(int argc, char **argv, const char *exe)
{
    (void)exe;
    static const struct option opts[] = {{"dtype", required_argument, NULL, 'd'},
                                         {"per-channel", no_argument, NULL, 'p'},
                                         {"dynamic", no_argument, NULL, 'D'},
                                         {"seeded-weights", no_argument, NULL, 's'},
                                         {"inline-weights", no_argument, NULL, 'i'},
                                         {"id", required_argument, NULL, 'I'},
                                         {"int4", no_argument, NULL, '4'},
                                         {"block", required_argument, NULL, 'B'},
                                         {"w4", required_argument, NULL, 'W'},
                                         {"nibbles", required_argument, NULL, 'N'},
                                         {"scale-dtype", required_argument, NULL, 'S'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    par_quant_opts o = {.act = PAR_DTYPE_INVALID, .per_channel = 0, .seeded = -1, .id = NULL};
    const char *out = NULL, *dtype = NULL;
    int int4 = 0, block = 32;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (ch) {
        case 'd': dtype = optarg; break;
        case 'p': o.per_channel = 1; break;
        case 'D': o.dynamic = 1; break;
        case 's': o.seeded = 1; break;
        case 'i': o.seeded = 0; break;
        case 'I': o.id = optarg; break;
        case '4': int4 = 1; break;
        case 'B': block = atoi(optarg); break;
        case 'W':
        case 'N':
        case 'S': {
            /* the two spellings of each option: the default first */
            static const char *const V[3][2] = {{"s4", "u4"}, {"lo", "hi"}, {"f32", "bf16"}};
            const int w = ch == 'W' ? 0 : ch == 'N' ? 1 : 2;
            int *dst = w == 0 ? &o.w4_unsigned : w == 1 ? &o.w4_hi_first : &o.w4_bf16;
            if (strcmp(optarg, V[w][0]) && strcmp(optarg, V[w][1])) {
                fprintf(stderr, "parity quantize: --%s: '%s' is not %s or %s\n",
                        w == 0 ? "w4" : w == 1 ? "nibbles" : "scale-dtype", optarg, V[w][0], V[w][1]);
                return PAR_EXIT_USAGE;
            }
            *dst = strcmp(optarg, V[w][1]) == 0;
            break;
        }
        case 'o': out = optarg; break;
        case 'h': fputs(usage_text, stdout); return PAR_EXIT_OK;
        default: fputs(usage_text, stderr); return PAR_EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || !out || (!dtype && !o.dynamic) || (dtype && o.dynamic)) {
        fprintf(stderr, "parity quantize: %s\n%s",
                optind != argc - 1       ? "expected one CASE"
                : dtype && o.dynamic     ? "--dtype and --dynamic exclude each other (dynamic activations stay f32)"
                : !dtype && !o.dynamic   ? "--dtype (or --dynamic) is required"
                                         : "-o FILE is required",
                usage_text);
        return PAR_EXIT_USAGE;
    }
    if (o.dynamic) o.act = PAR_DTYPE_INVALID;
    else if (!strcmp(dtype, "qu8")) o.act = PAR_DTYPE_QU8;
    else if (!strcmp(dtype, "qs8")) o.act = PAR_DTYPE_QS8;
    else if (!strcmp(dtype, "qs16")) o.act = PAR_DTYPE_QS16;
    else {
        fprintf(stderr, "parity quantize: --dtype: '%s' is not qu8, qs8 or qs16\n", dtype);
        return PAR_EXIT_USAGE;
    }
    if (int4) o.int4_block = block > 0 ? block : -1; /* -1: refused below with the reason (not even) */
    par_msg msg = {{0}};
    par_case *c = par_cli_load_case(argv[optind], &msg);
    if (!c) {
        fprintf(stderr, "parity: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    par_case *qc = par_case_quantize(c, &o, &msg);
    par_case_destroy(c);
    if (!qc) {
        fprintf(stderr, "parity quantize: %s\n", msg.text);
        return PAR_EXIT_USAGE;
    }
    char *text = par_case_to_json(qc, 0);
    par_case_destroy(qc);
    if (!text) {
        fprintf(stderr, "parity quantize: cannot serialize the quantized case\n");
        return PAR_EXIT_INTERNAL;
    }
    FILE *f = fopen(out, "w");
    int rc = PAR_EXIT_OK;
    if (!f || fputs(text, f) < 0 || fputc('\n', f) == EOF) {
        fprintf(stderr, "parity quantize: cannot write '%s'\n", out);
        rc = PAR_EXIT_USAGE;
    }
    if (f && fclose(f) != 0) rc = PAR_EXIT_USAGE;
    free(text);
    return rc;
}
