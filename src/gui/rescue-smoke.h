/*
 * rescue-smoke.h -- the smoke test the application runs on itself.
 *
 * With --smoke-test=FOLDER and an image, the application copies the image
 * into FOLDER and scans the copy in its window as a user would, waits for
 * the results to be drawn, then shows each view in turn (files, findings,
 * block map), selects something in it so that the details pane fills, and
 * saves a screenshot of the whole window as FOLDER/rescue-<view>.png
 * (rendered through the window's own GskRenderer).  It checks that every
 * view holds rows or blocks, shows the repair confirmation (photographed
 * as rescue-repair.png) and, when repairs are proposed, repairs the copy
 * and checks that the rescan after it finds nothing left to repair and
 * that the undo file exists (in the user's data folder: point
 * XDG_DATA_HOME elsewhere in tests) and photographs the outcome, salvages
 * everything into FOLDER/salvage (emptied first) and checks the engine's
 * manifest and the summary (rescue-salvage.png), exports the findings,
 * the block map and wear into FOLDER, scans again (F5), prints its figures
 * (entries, findings, blocks, scan time, longest main-loop stall) on
 * standard output, and quits: status 0 when every check passed.  A
 * watchdog fails the test after two minutes.
 */
#pragma once

#include "rescue-window.h"

G_BEGIN_DECLS

/* Drive window through the test; done(status, user_data) is called at the end. */
void rescue_smoke_start(RescueWindow *window, const char *folder, const char *image,
                        void (*done)(int status, gpointer user_data), gpointer user_data);

G_END_DECLS
