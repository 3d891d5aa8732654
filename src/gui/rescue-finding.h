/*
 * rescue-finding.h -- one finding of a scan as a list item.
 *
 * A RescueFinding is a light handle (a reference to the data and the
 * finding's index) that the findings view's list models hand out; the
 * finding's fields are read from the RescueData through
 * rescue_finding_get_info.
 */
#pragma once

#include <glib-object.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_FINDING (rescue_finding_get_type())
G_DECLARE_FINAL_TYPE(RescueFinding, rescue_finding, RESCUE, FINDING, GObject)

RescueFinding *rescue_finding_new(RescueData *data, guint32 index);
guint32 rescue_finding_get_index(RescueFinding *self);
RescueData *rescue_finding_get_data(RescueFinding *self);
const RescueFindingInfo *rescue_finding_get_info(RescueFinding *self);
/* For RescueIndexList. */
gpointer rescue_finding_make(RescueData *data, guint32 index);

G_END_DECLS
