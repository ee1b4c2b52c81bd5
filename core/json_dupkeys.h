/*
 * json_dupkeys.h - the duplicate-key check every JSON reader of the harness runs before it reads a document: json-c
 * keeps the last of two members with the same key, so {"verdict": "PASS", "verdict": "FAIL"} would silently read as
 * FAIL, and {"op": "relu", "op": "sigmoid"} would run sigmoid. The case reader (core/case_json.c) and the report
 * reader (reports/report_read.c) both refuse such documents through this one walk, which also finds the integers
 * json-c would saturate (the report reader refuses those).
 */
#ifndef PAR_JSON_DUPKEYS_H
#define PAR_JSON_DUPKEYS_H

#include <stddef.h>

/* What the walk looks for. */
#define PAR_JSON_DUPKEYS 1u /* an object that names a key twice */
#define PAR_JSON_BIGINTS 2u /* an integer beyond 64 bits (above 2^64 - 1 or below -2^63): json-c saturates it, so that
                             * 10^30 would read as 2^64 - 1 and a report's reader could not tell the two apart */

/* Walks text (len bytes), which json-c has already accepted as strict JSON, and finds the first of what flags asks
 * for. Returns 0 when there is none; else PAR_JSON_DUPKEYS with the object's JSON path in path and the key in what,
 * or PAR_JSON_BIGINTS with the number's own JSON path in path and its text in what. Paths are root, then ".key"
 * and "[i]" steps (a key right after an empty root is written without its dot); what is made safe for a one-line
 * message (control characters as '?', cut to 63 bytes). path and what are always terminated when their capacity is
 * not 0. Never allocates; bounded by len and by json-c's depth limit. */
unsigned par_json_check_raw(const char *text, size_t len, unsigned flags, const char *root, char *path,
                            size_t path_cap, char *what, size_t what_cap);

#endif
