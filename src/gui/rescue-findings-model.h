/*
 * rescue-findings-model.h -- the list model behind the findings view.
 *
 * Every finding of a RescueData as a RescueFinding, in the order the scan
 * made them, filtered by a lowest severity (info: all).  Works without a
 * display.
 */
#pragma once

#include <gtk/gtk.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_FINDINGS_MODEL (rescue_findings_model_get_type())
G_DECLARE_FINAL_TYPE(RescueFindingsModel, rescue_findings_model, RESCUE, FINDINGS_MODEL, GObject)

RescueFindingsModel *rescue_findings_model_new(RescueData *data);
/* The filtered findings (RescueFinding items). */
GListModel *rescue_findings_model_get_model(RescueFindingsModel *self);
void rescue_findings_model_set_min_severity(RescueFindingsModel *self, guint8 severity);
guint8 rescue_findings_model_get_min_severity(RescueFindingsModel *self);

G_END_DECLS
