/*
 * rescue-data-store.h -- a RescueData read back from a scan database.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"

G_BEGIN_DECLS

/*
 * Read scan scan_id (0: the newest) of the database at path into a sealed
 * RescueData.  The data maps of entries are read when first asked for,
 * through a read-only handle the RescueData keeps.  progress (may be NULL)
 * is called now and then with a fraction 0..1.  cancellable may be NULL.
 */
RescueData *rescue_data_new_from_store(const char *path, gint64 scan_id,
                                       void (*progress)(gpointer ctx, double fraction),
                                       gpointer progress_ctx, GCancellable *cancellable,
                                       GError **error);

G_END_DECLS
