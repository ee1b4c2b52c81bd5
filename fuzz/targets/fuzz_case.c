/*
 * fuzz_case.c - libFuzzer target for the case reader. Any bytes go to par_case_parse. A case that parses is written
 * back with inline data (par_case_to_json), which must parse again and write the very same text: the reader accepts
 * everything the writer produces, and the pair is a fixed point. A rejected input must carry a message in the
 * "<origin>: $<path>: <reason>" form. Any violation traps, so libFuzzer keeps the input.
 *
 * Build and run: see fuzz/Makefile.inc (make -f fuzz/Makefile.inc fuzz-case-run). Must not: write files, or keep
 * state between inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "core/case.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    par_msg msg;
    par_case *c = par_case_parse((const char *)data, size, "fuzz.json", &msg);
    if (!c) {
        if (strncmp(msg.text, "fuzz.json: $", 12) != 0) __builtin_trap();
        return 0;
    }
    char *t = par_case_to_json(c, 1);
    if (!t) __builtin_trap(); /* a parsed case holds no NaN: it can always be written */
    par_case *c2 = par_case_parse(t, strlen(t), "fuzz.json", &msg);
    if (!c2) __builtin_trap();
    char *t2 = par_case_to_json(c2, 1);
    if (!t2 || strcmp(t, t2) != 0) __builtin_trap();
    free(t2);
    free(t);
    par_case_destroy(c2);
    par_case_destroy(c);
    return 0;
}
