/*
 * json_out.h - the two leaves every JSON the harness writes is built from (report.json, a campaign's block, a
 * finding's finding.json and index.json): a number that is never NaN or Infinity (JSON has neither), and a string
 * that is always valid UTF-8 (names, messages and describe texts come from backends).
 */
#ifndef PAR_JSON_OUT_H
#define PAR_JSON_OUT_H

#include <json-c/json.h>

/* d with 9 significant digits (an f32 round-trips), or NULL (written as null) when it is not finite. */
json_object *par_json_num(double d);
/* s as valid UTF-8 (an invalid sequence becomes U+FFFD; json-c escapes control characters); NULL reads as "". */
json_object *par_json_str(const char *s);

#endif
