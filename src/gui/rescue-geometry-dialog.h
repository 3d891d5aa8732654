/*
 * rescue-geometry-dialog.h -- "Read With Another Geometry": a block size
 * and an address length of the user's choosing.
 *
 * What lanyfs scan --geometry BS[:AL] does, for a stick whose block 0
 * belongs to another format than the files the user is after (a stick
 * formatted again) or whose EARLIER_FORMAT finding could not tell the
 * address length.  The address length may be left to the scan
 * ("Automatic": read from the files' data maps, else from slot values).
 * The dialog answers "read" or "cancel".
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

/* The dialog, showing log2 of the block size blockbits (9..12) and the
 * address length addrlen (1..8, 0 = automatic); other values show 4096
 * and automatic. */
AdwMessageDialog *rescue_geometry_dialog_new(GtkWindow *parent, unsigned blockbits,
                                             unsigned addrlen);
/* What it shows now: log2 of the block size, and the address length (0 = automatic). */
void rescue_geometry_dialog_get(AdwMessageDialog *dialog, unsigned *blockbits,
                                unsigned *addrlen);
/* Choose, as the user would (for tests). */
void rescue_geometry_dialog_set(AdwMessageDialog *dialog, unsigned blockbits, unsigned addrlen);

G_END_DECLS
