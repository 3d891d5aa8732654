/*
 * rescue-block-map.h -- the block map: one coloured cell per block of the device.
 *
 * RescueBlockMap draws the scan's block map row by row, `zoom` pixels a
 * block, coloured by what each block is (rescue-block-paint.h) or, with
 * "wear" on, by its write counter.  It is GtkScrollable: put it in a
 * GtkScrolledWindow (no horizontal scrolling) and it paints only the rows
 * in view, into one texture, so a million blocks cost what the window's
 * pixels cost.
 *
 * Interaction: a tooltip names the block under the pointer (number, kind,
 * owner, write counter); a click selects a block and emits
 * "block-activated"; the arrow keys, Page Up/Down, Home and End move the
 * selection, Return activates it; Ctrl+scroll and Ctrl+plus/minus zoom
 * around the pointer or the selection.  Its accessible role is an image
 * whose description names the map and the selected block.
 */
#pragma once

#include <gtk/gtk.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_BLOCK_MAP (rescue_block_map_get_type())
G_DECLARE_FINAL_TYPE(RescueBlockMap, rescue_block_map, RESCUE, BLOCK_MAP, GtkWidget)

/* No block selected. */
#define RESCUE_NO_BLOCK G_MAXUINT64

GtkWidget *rescue_block_map_new(void);

void rescue_block_map_set_data(RescueBlockMap *self, RescueData *data);
RescueData *rescue_block_map_get_data(RescueBlockMap *self);

/* Pixels per block, 1..32 (a double, as the block-map-zoom setting is). */
void rescue_block_map_set_zoom(RescueBlockMap *self, double zoom);
double rescue_block_map_get_zoom(RescueBlockMap *self);
void rescue_block_map_zoom_step(RescueBlockMap *self, int direction);

void rescue_block_map_set_wear(RescueBlockMap *self, gboolean wear);
gboolean rescue_block_map_get_wear(RescueBlockMap *self);

/* Select a block (RESCUE_NO_BLOCK: none) and scroll it into view. */
void rescue_block_map_select(RescueBlockMap *self, guint64 block);
guint64 rescue_block_map_get_selected(RescueBlockMap *self);

/* The block at widget coordinates, RESCUE_NO_BLOCK when none. */
guint64 rescue_block_map_block_at(RescueBlockMap *self, double x, double y);

G_END_DECLS
