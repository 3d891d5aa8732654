/*
 * rescue-window.h -- the main window of LanyFS Rescue.
 *
 * A window shows one scan at a time.  It starts on a welcome page (open an
 * image, a device or a scan database; recent items), shows a progress page
 * while the scan runs in a worker thread, then the results: the files,
 * findings and block map views beside the details pane.  Its size and
 * whether it is maximized are kept in GSettings.
 */
#pragma once

#include <adwaita.h>

#include "rescue-data.h"

G_BEGIN_DECLS

#define RESCUE_TYPE_WINDOW (rescue_window_get_type())
G_DECLARE_FINAL_TYPE(RescueWindow, rescue_window, RESCUE, WINDOW, AdwApplicationWindow)

RescueWindow *rescue_window_new(AdwApplication *application);

/* Scan the image or device at path, or read the scan database at path. */
void rescue_window_open_path(RescueWindow *self, const char *path);
/*
 * The same, reading the image with a geometry given (lanyfs-rescue
 * --geometry BS:AL: blockbits 9..12, addrlen 1..8) now and when it is
 * scanned again; not for other images.  Repairs are then not offered:
 * fsck-lanyfs writes only on the geometry block 0 gives.
 */
void rescue_window_open_path_with_geometry(RescueWindow *self, const char *path,
                                           unsigned blockbits, unsigned addrlen);
/* The scan shown, NULL before the first one. */
RescueData *rescue_window_get_data(RescueWindow *self);

G_END_DECLS
