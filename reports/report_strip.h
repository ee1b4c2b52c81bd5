/*
 * report_strip.h - a record's localization strip as report.json's "localization" (report_strip.c; the reader's side,
 * rr_read_strip, is in report_read_int.h).
 */
#ifndef PAR_REPORT_STRIP_H
#define PAR_REPORT_STRIP_H

#include <json-c/json.h>

#include "report.h"

/* The "localization" object of a record, or NULL when s is NULL or not present. */
json_object *par_strip_json(const par_node_strip *s);

#endif
