/*
 * result.c - names of the record types' enums (core/result.h). Plain data only: no I/O, no allocation.
 */
#include "result.h"

const char *par_verdict_name(par_verdict v)
{
    static const char *names[PAR_V_COUNT] = {"PASS", "FAIL", "UNSUPPORTED", "ERROR", "CRASH", "TIMEOUT", "FLAKY"};
    return (v >= 0 && v < PAR_V_COUNT) ? names[v] : "?";
}
