/*
 * rescue-index-list.h -- a GListModel over an array of numbers.
 *
 * The list holds numbers (entry ids, finding indexes) and makes an item for
 * a number only when asked for one, through the function it was given, so
 * a list of 100,000 entries costs 400 KB and no objects until rows are
 * shown.  Items are made afresh on every get_item: compare them by their
 * number, not by pointer.  The numbers are copied or borrowed; borrowed
 * numbers must outlive the list (they belong to its RescueData).
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_INDEX_LIST (rescue_index_list_get_type())
G_DECLARE_FINAL_TYPE(RescueIndexList, rescue_index_list, RESCUE, INDEX_LIST, GObject)

/* Makes the item of number n. */
typedef gpointer (*RescueIndexItemFunc)(RescueData *data, guint32 n);

/* A list of count numbers from numbers (borrowed when borrow, else copied). */
RescueIndexList *rescue_index_list_new(RescueData *data, GType item_type, RescueIndexItemFunc make,
                                       const guint32 *numbers, guint32 count, gboolean borrow);
/* The list first, first + 1, ..., first + count - 1. */
RescueIndexList *rescue_index_list_new_range(RescueData *data, GType item_type,
                                             RescueIndexItemFunc make, guint32 first,
                                             guint32 count);
/* The number at position, G_MAXUINT32 past the end. */
guint32 rescue_index_list_get_number(RescueIndexList *self, guint position);

G_END_DECLS
