/*
 * rescue-findings-view.h -- the findings view: what the scan found wrong, or worth knowing.
 *
 * A GtkColumnView of the findings (severity, code as 0xPPNNNN and its
 * name, message, where: path or block, and the repair fsck proposes),
 * sortable by column and filtered by a lowest severity.  Selecting one
 * emits "finding-selected" with its index in the RescueData.
 */
#pragma once

#include <gtk/gtk.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_FINDINGS_VIEW (rescue_findings_view_get_type())
G_DECLARE_FINAL_TYPE(RescueFindingsView, rescue_findings_view, RESCUE, FINDINGS_VIEW, GtkWidget)

GtkWidget *rescue_findings_view_new(void);
void rescue_findings_view_set_data(RescueFindingsView *self, RescueData *data);
/* Select the finding at index of the data (showing all severities if needed). */
void rescue_findings_view_select(RescueFindingsView *self, guint index);
/* Rows the view shows now (for the smoke test). */
guint rescue_findings_view_get_n_rows(RescueFindingsView *self);

G_END_DECLS
