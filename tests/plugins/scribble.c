/* scribble.c - a test plugin that, after a correct relu, fills every writable shared mapping of its process except
 * the one holding its own output with the byte 0x4D: where the harness shares its result records with the backend's
 * process, they are overwritten (verdicts become 0x4D4D4D4D). The harness must keep its records out of reach. */
#define _GNU_SOURCE
#include "tp_common.h"

#include <stdint.h>
#include <stdio.h>

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    tp_relu(p, p->n);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return PAR_OK;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
        if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 's') continue;
        uintptr_t o = (uintptr_t)p->out;
        if (o >= lo && o < hi) continue;
        memset((void *)lo, 0x4D, hi - lo);
    }
    fclose(f);
    return PAR_OK;
}

TP_BACKEND("tp_scribble", PAR_BACKEND_API_VERSION, run, NULL)
