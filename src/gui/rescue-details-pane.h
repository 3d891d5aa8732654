/*
 * rescue-details-pane.h -- the details of what is selected.
 *
 * Beside the views, the pane shows one of three things: the scan's summary
 * (volume, geometry, counts; when nothing is selected), an entry (its
 * metadata, how much of it can be recovered, its content type from
 * libmagic, a preview of text or a PNG or JPEG picture, and its entry
 * block in hex), or a block (its kind, owner, counter, type and hex).
 * What must be read from the image is read in a worker thread; a newer
 * selection cancels an older read, so the pane never shows stale bytes
 * and the window never waits for a slow stick.
 */
#pragma once

#include <gtk/gtk.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_DETAILS_PANE (rescue_details_pane_get_type())
G_DECLARE_FINAL_TYPE(RescueDetailsPane, rescue_details_pane, RESCUE, DETAILS_PANE, GtkWidget)

GtkWidget *rescue_details_pane_new(void);
void rescue_details_pane_show_summary(RescueDetailsPane *self, RescueData *data);
void rescue_details_pane_show_entry(RescueDetailsPane *self, RescueData *data, guint32 id);
void rescue_details_pane_show_block(RescueDetailsPane *self, RescueData *data, guint64 block);
void rescue_details_pane_clear(RescueDetailsPane *self);
/* Whether a read from the image is still running (for the smoke test). */
gboolean rescue_details_pane_get_loading(RescueDetailsPane *self);

G_END_DECLS
