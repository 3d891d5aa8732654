/*
 * query.h -- what the scanner's unit tests ask of a scan result.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "scan.h"

/* Scan the image at path; the test fails (naming the error) when the scan does. */
struct scan_result *scan_path(const char *path);
/* Findings of a code. */
size_t count_code(const struct scan_result *r, uint32_t code);
/* The entry whose path is path, NULL when none. */
const struct scan_entry *by_path(const struct scan_result *r, const char *path);
