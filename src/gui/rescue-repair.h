/*
 * rescue-repair.h -- the Repair dialogs: the confirmation and the outcome.
 *
 * Repair hands the image or device to the repair engine (src/fsck, through
 * rescue-repair-task.h), which writes the repairs the findings propose and
 * saves every block it changes to an undo file first.
 *
 * The confirmation lists what will change: every finding of the scan
 * whose catalogue row proposes a repair, with that repair (the first 200,
 * then how many more), and where the undo file goes.  It answers "repair" or "cancel"; the undo path it named
 * is kept on the dialog ("undo-path").  The outcome dialog explains the
 * engine's exit status, shows the summary of its report (the whole report
 * and its messages beneath, collapsed) and how to take the repair back.
 */
#pragma once

#include <adwaita.h>

#include "rescue-data.h"
#include "rescue-repair-task.h"

G_BEGIN_DECLS

/* The confirmation dialog; the response "repair" confirms. */
AdwMessageDialog *rescue_repair_dialog_new(GtkWindow *parent, RescueData *data);
/* The undo file the confirmation names (owned by the dialog). */
const char *rescue_repair_dialog_get_undo_path(AdwMessageDialog *dialog);

/* The outcome of a repair. */
AdwMessageDialog *rescue_repair_outcome_dialog_new(GtkWindow *parent,
                                                   const RescueRepairReport *report);

G_END_DECLS
