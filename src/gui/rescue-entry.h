/*
 * rescue-entry.h -- one entry of a scan as a list item.
 *
 * A RescueEntry is a light handle (a reference to the data and an id) that
 * the files view's list models hand out; the entry's fields are read from
 * the RescueData through rescue_entry_get_info.
 */
#pragma once

#include <glib-object.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_ENTRY (rescue_entry_get_type())
G_DECLARE_FINAL_TYPE(RescueEntry, rescue_entry, RESCUE, ENTRY, GObject)

RescueEntry *rescue_entry_new(RescueData *data, guint32 id);
guint32 rescue_entry_get_id(RescueEntry *self);
RescueData *rescue_entry_get_data(RescueEntry *self);
const RescueEntryInfo *rescue_entry_get_info(RescueEntry *self);
/* For RescueIndexList. */
gpointer rescue_entry_make(RescueData *data, guint32 id);

G_END_DECLS
