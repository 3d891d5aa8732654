/*
 * rescue-repair.h -- the Repair confirmation.
 *
 * Repair will hand the scan to the repair engine (src/fsck), which writes
 * the repairs the findings propose and an undo file first.  Until that
 * engine is part of the build, rescue_repair_available() is FALSE, the
 * window's Repair action is disabled, and its tooltip says why; the
 * confirmation dialog is complete so that only the call is missing.
 *
 * The dialog lists what will change (the proposed repair of every finding
 * that has one, the same repair once with its count) and where the undo
 * file goes, and answers "repair" or "cancel".
 */
#pragma once

#include <adwaita.h>

#include "rescue-data.h"

G_BEGIN_DECLS

/* Whether this build can repair. */
gboolean rescue_repair_available(void);
/* Why Repair is disabled, translated (static). */
const char *rescue_repair_unavailable_reason(void);

/* Where the undo file of a repair of data goes (in the user's data folder). */
char *rescue_repair_undo_path(RescueData *data);

/* The findings a repair would act on, as lines "repair (n times)"; g_strfreev. */
char **rescue_repair_plan(RescueData *data, guint *n_findings);

/* The confirmation dialog; the response "repair" confirms. */
AdwMessageDialog *rescue_repair_dialog_new(GtkWindow *parent, RescueData *data);

G_END_DECLS
