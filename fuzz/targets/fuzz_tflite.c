/*
 * fuzz_tflite.c - libFuzzer target for the TFLite reader, writer and importer. Any bytes go to par_tfl_parse. A
 * rejected input must carry a message in the "<origin>: <path>: <reason>" form. A model that parses is written
 * back (par_tfl_write), which must parse again; the second writing must equal the first (the writer drops what
 * the reader does not keep, so the first generation may differ from the input, the second may not). A parsed model
 * is also imported as a case (an error names the origin) and, when that succeeds, exported back, which must give
 * a model or a reason. Any violation traps, so libFuzzer keeps the input.
 *
 * Build and run: see fuzz/Makefile.inc (make fuzz-run FUZZ_TARGET=tflite). Must not: write files, or keep state
 * between inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/tflite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    par_msg msg;
    par_tfl_model *m = par_tfl_parse(data, size, "fuzz.tflite", &msg);
    if (!m) {
        if (strncmp(msg.text, "fuzz.tflite: ", 13) != 0) __builtin_trap();
        return 0;
    }
    size_t n1, n2;
    uint8_t *b1 = par_tfl_write(m, &n1, &msg);
    if (b1) {
        par_tfl_model *m2 = par_tfl_parse(b1, n1, "fuzz.tflite", &msg);
        if (!m2) __builtin_trap(); /* the reader accepts what the writer writes */
        uint8_t *b2 = par_tfl_write(m2, &n2, &msg);
        if (!b2) __builtin_trap();
        par_tfl_model *m3 = par_tfl_parse(b2, n2, "fuzz.tflite", &msg);
        uint8_t *b3 = m3 ? par_tfl_write(m3, &n1, &msg) : NULL;
        if (!b3 || n1 != n2 || memcmp(b2, b3, n2) != 0) __builtin_trap();
        free(b3);
        free(b2);
        par_tfl_free(m3);
        par_tfl_free(m2);
        free(b1);
    }
    par_import_info info;
    par_import_opts o = {.seed = 1};
    par_case *c = par_tflite_import_model(m, "fuzz", "fuzz.tflite", &o, &info, &msg);
    if (!c) {
        if (strncmp(msg.text, "fuzz.tflite: ", 13) != 0) __builtin_trap();
    } else {
        par_tfl_model *e = par_tflite_export_model(c, &msg);
        if (!e && !msg.text[0]) __builtin_trap();
        par_tfl_free(e);
        par_case_destroy(c);
    }
    par_tfl_free(m);
    return 0;
}
