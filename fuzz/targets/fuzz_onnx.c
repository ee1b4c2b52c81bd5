/*
 * fuzz_onnx.c - libFuzzer target for the ONNX reader, writer, importer and exporter. The first byte chooses what
 * the rest is: odd, a lone TensorProto (a node test's .pb); even, a ModelProto. A rejected input must carry a message
 * that starts with its origin. A model that parses is written back (par_onnx_write), which must parse again; the
 * second writing must equal the first (the writer drops what the reader does not keep, so the first generation may
 * differ from the input, the second may not). A parsed model is also imported as a case (an error names the origin)
 * and, when that succeeds, exported back, which must give a model or a reason. Any violation traps, so libFuzzer
 * keeps the input.
 *
 * Build and run: make fuzz-run FUZZ_TARGET=onnx. Must not: write files, or keep state between inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fixed_point(const par_onnx_model *m, int tensor)
{
    par_msg msg;
    uint8_t *b1 = NULL, *b2 = NULL, *b3 = NULL;
    size_t n1 = 0, n2 = 0, n3 = 0;
    par_status st = tensor ? par_onnx_tensor_write(&m->graph.initializers[0], &b1, &n1, &msg)
                           : par_onnx_write(m, &b1, &n1, &msg);
    if (st != PAR_OK) return; /* a structure the writer refuses (it says why) */
    par_onnx_model *m2 = tensor ? par_onnx_tensor_parse(b1, n1, "fuzz.onnx", &msg) : par_onnx_parse(b1, n1, "fuzz.onnx", &msg);
    if (!m2) __builtin_trap(); /* the reader accepts what the writer writes */
    st = tensor ? par_onnx_tensor_write(&m2->graph.initializers[0], &b2, &n2, &msg) : par_onnx_write(m2, &b2, &n2, &msg);
    if (st != PAR_OK) __builtin_trap();
    par_onnx_model *m3 = tensor ? par_onnx_tensor_parse(b2, n2, "fuzz.onnx", &msg) : par_onnx_parse(b2, n2, "fuzz.onnx", &msg);
    if (!m3) __builtin_trap();
    st = tensor ? par_onnx_tensor_write(&m3->graph.initializers[0], &b3, &n3, &msg) : par_onnx_write(m3, &b3, &n3, &msg);
    if (st != PAR_OK || n3 != n2 || memcmp(b2, b3, n2) != 0) __builtin_trap();
    free(b1);
    free(b2);
    free(b3);
    par_onnx_free(m2);
    par_onnx_free(m3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const int tensor = data[0] & 1;
    par_msg msg;
    par_onnx_model *m = tensor ? par_onnx_tensor_parse(data + 1, size - 1, "fuzz.onnx", &msg)
                               : par_onnx_parse(data + 1, size - 1, "fuzz.onnx", &msg);
    if (!m) {
        if (strncmp(msg.text, "fuzz.onnx: ", 11) != 0) __builtin_trap();
        return 0;
    }
    fixed_point(m, tensor);
    if (!tensor) {
        par_import_info info;
        memset(&info, 0, sizeof info);
        par_import_opts o = {.seed = 1};
        ox_job job = {.path = "fuzz.onnx"};
        msg.text[0] = 0;
        par_case *c = ox_import_model(m, &job, &o, &info, &msg);
        if (!c) {
            if (strncmp(msg.text, "fuzz.onnx: ", 11) != 0) __builtin_trap();
        } else {
            par_status st;
            par_onnx_model *e = par_onnx_export_model(c, &st, &msg);
            if (!e && !msg.text[0]) __builtin_trap();
            par_onnx_free(e);
            par_case_destroy(c);
        }
    }
    par_onnx_free(m);
    return 0;
}
