/*
 * rescue-data-scan.h -- a RescueData over a scanner's result.
 */
#pragma once

#include "rescue-data.h"

G_BEGIN_DECLS

/*
 * Take over result (freed with the returned data) and return a sealed
 * RescueData that borrows its block map and data maps.
 */
RescueData *rescue_data_new_from_scan(struct scan_result *result, RescueSourceKind kind,
                                      const char *source_path);

G_END_DECLS
