/*
 * json_out.c - JSON leaves: finite numbers and valid UTF-8 strings (json_out.h).
 */
#include "json_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/result.h"

json_object *par_json_num(double d)
{
    if (!isfinite(d)) return NULL;
    char t[40];
    snprintf(t, sizeof t, "%.9g", d);
    return json_object_new_double_s(d, t);
}

json_object *par_json_str(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s), cap = 3 * n + 1;
    char small[1024];
    char *buf = cap <= sizeof small ? small : malloc(cap);
    if (!buf) return json_object_new_string("");
    par_text_clean(buf, cap, s, n + 1, 0);
    json_object *o = json_object_new_string(buf);
    if (buf != small) free(buf);
    return o;
}
