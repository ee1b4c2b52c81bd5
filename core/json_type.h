/*
 * json_type.h - the words every JSON reader of the harness uses for a value's type in its messages ("an integer",
 * "a string", "null"): the case reader (core/case_json*.c) and the report reader (reports/report_read*.c), so that
 * both say the same thing the same way.
 */
#ifndef PAR_JSON_TYPE_H
#define PAR_JSON_TYPE_H

#include <json-c/json.h>

const char *par_json_type_name(json_object *v);

#endif
