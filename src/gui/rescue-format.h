/*
 * rescue-format.h -- how LanyFS Rescue puts scan facts into words.
 *
 * Every label, cell and tooltip the views show about an entry, a finding
 * or a block is made here, translated, so that the views, the exports and
 * the tests agree on one wording.  Functions return newly allocated
 * strings (g_free) unless they say "static".  Nothing here uses GTK.
 */
#pragma once

#include <glib.h>

#include "rescue-data.h"

G_BEGIN_DECLS

/* Static, translated: "Live", "Deleted", "Orphaned". */
const char *rescue_format_state(guint8 state);
/* An entry's state; "Lost data" for a lost tree of no known file. */
const char *rescue_format_entry_state(const RescueEntryInfo *e);
/* Static, translated: "Info", "Warning", "Error", "Critical". */
const char *rescue_format_severity(guint8 severity);
/* Static: the symbolic icon of a severity. */
const char *rescue_format_severity_icon(guint8 severity);
/* Static, translated: "Data", "Free", "Leaked", ... */
const char *rescue_format_class(guint8 cls);
/* Static, translated: "Directory", "File", or "Unknown type". */
const char *rescue_format_type(guint8 type);

/* "0x010001 TREE_PTR_RANGE" (the name is stable and not translated). */
char *rescue_format_code(guint32 code);
/* The proposed repair of a code (the catalogue's words, translated), static, "" when unknown. */
const char *rescue_format_repair(guint32 code);
/* Where a finding points: its path, else "Block N", else "". */
char *rescue_format_finding_where(const RescueFindingInfo *f);

/* A time as "2026-12-03 01:02:15" in local time, or "—" when unset. */
char *rescue_format_time(gint64 unix_time);
/* A size in bytes as GLib formats it ("4.1 kB"), directories as "—". */
char *rescue_format_size(const RescueEntryInfo *e);
/*
 * How much of a file is recoverable, 0..1: its intact data blocks over the
 * blocks its size needs (1 for an empty file); -1 for directories.
 */
double rescue_recoverable_fraction(const RescueEntryInfo *e);
/* "100 %", "37 %", or "—" for directories. */
char *rescue_format_recoverable(const RescueEntryInfo *e);

/* The flags of a cell in words: "shared, torn write"; "" when none. */
char *rescue_format_block_flags(guint8 flags);
/* Who holds a block: the owner's path, "the free list", or "nobody". */
char *rescue_format_block_owner(const RescueData *data, guint64 blk);
/* A block's tooltip: number, class, owner, write counter, flags; one fact a line. */
char *rescue_format_block_tooltip(const RescueData *data, guint64 blk);

/*
 * A hex dump: width bytes a line (8 or 16) as "00000010  4c 41 4e 59 ...  LANY....",
 * offsets counted from base.
 */
char *rescue_format_hex(const guint8 *bytes, gsize len, guint64 base, guint width);

/* Whether bytes look like text worth previewing (valid UTF-8, few control characters). */
gboolean rescue_looks_like_text(const guint8 *bytes, gsize len);

G_END_DECLS
