/*
 * rescue-map-view.h -- the block map page: the map with its controls and legend.
 *
 * Wraps a RescueBlockMap in a scrolled window under a toolbar (zoom out,
 * zoom in, the zoom level, the wear overlay) and over a legend of the
 * kinds of blocks the scan found, each with its count.
 */
#pragma once

#include <gtk/gtk.h>

#include "rescue-block-map.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_MAP_VIEW (rescue_map_view_get_type())
G_DECLARE_FINAL_TYPE(RescueMapView, rescue_map_view, RESCUE, MAP_VIEW, GtkWidget)

GtkWidget *rescue_map_view_new(void);
void rescue_map_view_set_data(RescueMapView *self, RescueData *data);
RescueBlockMap *rescue_map_view_get_map(RescueMapView *self);

G_END_DECLS
