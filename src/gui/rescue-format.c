/*
 * rescue-format.c -- the words of the views (rescue-format.h).
 *
 * Finding messages and repairs are the scanner catalogue's (problem.h) and
 * are shown as the catalogue words them; everything else is translated.
 */
#define G_LOG_DOMAIN "rescue-format"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "lanyfs.h"
#include "rescue-format.h"

const char *rescue_format_state(guint8 state)
{
    switch (state) {
    case SCAN_ENTRY_LIVE:
        return _("Live");
    case SCAN_ENTRY_DELETED:
        return _("Deleted");
    case SCAN_ENTRY_ORPHAN:
        return _("Orphaned");
    default:
        return _("Unknown");
    }
}

const char *rescue_format_entry_state(const RescueEntryInfo *e)
{
    g_return_val_if_fail(e != NULL, NULL);

    /* TRANSLATORS: the state of a file made of an extender tree no entry links */
    return e->lost_only ? _("Lost data") : rescue_format_state(e->state);
}

const char *rescue_format_severity(guint8 severity)
{
    switch (severity) {
    case SCAN_SEV_INFO:
        return _("Info");
    case SCAN_SEV_WARNING:
        return _("Warning");
    case SCAN_SEV_ERROR:
        return _("Error");
    case SCAN_SEV_CRITICAL:
        return _("Critical");
    default:
        return _("Unknown");
    }
}

const char *rescue_format_severity_icon(guint8 severity)
{
    switch (severity) {
    case SCAN_SEV_INFO:
        return "dialog-information-symbolic";
    case SCAN_SEV_WARNING:
        return "dialog-warning-symbolic";
    default:
        return "dialog-error-symbolic";
    }
}

const char *rescue_format_class(guint8 cls)
{
    switch (cls) {
    case SCAN_BLK_UNKNOWN:
        return _("Unknown");
    case SCAN_BLK_SUPER:
        return _("Superblock");
    case SCAN_BLK_DIR:
        return _("Directory");
    case SCAN_BLK_FILE:
        return _("File");
    case SCAN_BLK_EXTENDER:
        return _("Extender");
    case SCAN_BLK_DATA:
        return _("Data");
    case SCAN_BLK_CHAIN:
        return _("Free-list chain");
    case SCAN_BLK_FREE:
        return _("Free");
    case SCAN_BLK_LEAKED:
        return _("Leaked");
    case SCAN_BLK_ORPHAN:
        return _("Orphaned entry");
    case SCAN_BLK_DELETED:
        return _("Deleted entry");
    case SCAN_BLK_UNREADABLE:
        return _("Unreadable");
    case SCAN_BLK_BEYOND:
        return _("Beyond the filesystem");
    case SCAN_BLK_ORPHAN_EXT:
        return _("Orphaned extender");
    default:
        return _("Unknown");
    }
}

const char *rescue_format_type(guint8 type)
{
    switch (type) {
    case LANYFS_TYPE_DIR:
        return _("Directory");
    case LANYFS_TYPE_FILE:
        return _("File");
    default:
        return _("Unknown type");
    }
}

char *rescue_format_code(guint32 code)
{
    const struct scan_problem_info *row = scan_problem_lookup(code);

    return g_strdup_printf("0x%06x %s", code, row != NULL ? row->name : "UNKNOWN");
}

const char *rescue_format_repair(guint32 code)
{
    const struct scan_problem_info *row = scan_problem_lookup(code);

    return row != NULL ? scan_problem_repair_text(row) : "";
}

char *rescue_format_finding_where(const RescueFindingInfo *f)
{
    g_return_val_if_fail(f != NULL, NULL);

    if (f->path != NULL && f->path[0] != '\0')
        return g_strdup(f->path);
    if (f->has_block)
        return g_strdup_printf(_("Block %llu"), (unsigned long long)f->block);
    return g_strdup("");
}

char *rescue_format_time(gint64 unix_time)
{
    g_autoptr(GDateTime) dt = NULL;

    if (unix_time == RESCUE_TIME_UNSET)
        return g_strdup("—");
    dt = g_date_time_new_from_unix_local(unix_time);
    if (dt == NULL)
        return g_strdup("—");
    return g_date_time_format(dt, "%Y-%m-%d %H:%M:%S");
}

char *rescue_format_size(const RescueEntryInfo *e)
{
    g_return_val_if_fail(e != NULL, NULL);

    if (e->type == LANYFS_TYPE_DIR)
        return g_strdup("—");
    return g_format_size(e->size);
}

double rescue_recoverable_fraction(const RescueEntryInfo *e)
{
    g_return_val_if_fail(e != NULL, -1);

    if (e->type == LANYFS_TYPE_DIR)
        return -1;
    if (e->blocks_needed == 0)
        return 1;
    return MIN((double)e->blocks_intact / (double)e->blocks_needed, 1.0);
}

char *rescue_format_recoverable(const RescueEntryInfo *e)
{
    double f = rescue_recoverable_fraction(e);
    int pct;

    if (f < 0)
        return g_strdup("—");
    /* Round down: 99.9 % recoverable is not all of it. */
    pct = (int)(f * 100.0);
    if (pct == 100 && e->blocks_intact < e->blocks_needed)
        pct = 99;
    /* TRANSLATORS: a percentage; keep the %d and the %% */
    return g_strdup_printf(_("%d %%"), pct);
}

char *rescue_format_block_flags(guint8 flags)
{
    GPtrArray *words = g_ptr_array_new();
    char *out;

    if (flags & SCAN_BF_SHARED)
        g_ptr_array_add(words, (gpointer)_("shared by two owners"));
    if (flags & SCAN_BF_TORN)
        g_ptr_array_add(words, (gpointer)_("torn write"));
    if (flags & SCAN_BF_DRIVER)
        g_ptr_array_add(words, (gpointer)_("left by the 2012 driver"));
    g_ptr_array_add(words, NULL);
    /* TRANSLATORS: the separator between flags of a block */
    out = g_strjoinv(_(", "), (char **)words->pdata);
    g_ptr_array_unref(words);
    return out;
}

char *rescue_format_block_owner(const RescueData *data, guint64 blk)
{
    const struct scan_block *cell;
    const RescueEntryInfo *e;

    g_return_val_if_fail(data != NULL, NULL);

    cell = rescue_data_get_block(data, blk);
    if (cell == NULL)
        return g_strdup(_("nobody"));
    e = rescue_data_get_entry(data, cell->owner);
    if (e != NULL)
        return g_strdup(e->path[0] ? e->path : "/");
    if (cell->cls == SCAN_BLK_CHAIN || cell->cls == SCAN_BLK_FREE)
        return g_strdup(_("the free list"));
    if (cell->cls == SCAN_BLK_SUPER)
        return g_strdup(_("the filesystem"));
    return g_strdup(_("nobody"));
}

char *rescue_format_block_tooltip(const RescueData *data, guint64 blk)
{
    const struct scan_block *cell;
    g_autofree char *owner = NULL;
    g_autofree char *flags = NULL;
    GString *s;

    g_return_val_if_fail(data != NULL, NULL);

    cell = rescue_data_get_block(data, blk);
    if (cell == NULL)
        return NULL;
    s = g_string_new(NULL);
    g_string_append_printf(s, _("Block %llu"), (unsigned long long)blk);
    g_string_append_c(s, '\n');
    g_string_append_printf(s, _("Kind: %s"), rescue_format_class(cell->cls));
    owner = rescue_format_block_owner(data, blk);
    g_string_append_c(s, '\n');
    g_string_append_printf(s, _("Owner: %s"), owner);
    if (cell->cls == SCAN_BLK_DATA) {
        g_string_append_c(s, '\n');
        g_string_append_printf(s, _("File block: %llu"), (unsigned long long)cell->index);
    }
    g_string_append_c(s, '\n');
    if (cell->flags & SCAN_BF_METADATA)
        g_string_append_printf(s, _("Write counter: %u"), (unsigned)cell->wrcnt);
    else
        g_string_append(s, _("Write counter: none (a data block has no header)"));
    flags = rescue_format_block_flags(cell->flags);
    if (flags[0] != '\0') {
        g_string_append_c(s, '\n');
        g_string_append_printf(s, _("Flags: %s"), flags);
    }
    return g_string_free(s, FALSE);
}

char *rescue_format_hex(const guint8 *bytes, gsize len, guint64 base, guint width)
{
    GString *s = g_string_sized_new(len * 4 + 64);

    g_return_val_if_fail(bytes != NULL || len == 0, NULL);

    width = width >= 16 ? 16 : 8;
    for (gsize at = 0; at < len; at += width) {
        gsize n = MIN(width, len - at);

        g_string_append_printf(s, "%08" G_GINT64_MODIFIER "x  ", (guint64)(base + at));
        for (gsize i = 0; i < width; i++) {
            if (i < n)
                g_string_append_printf(s, "%02x ", bytes[at + i]);
            else
                g_string_append(s, "   ");
            if (i == 7 && width == 16)
                g_string_append_c(s, ' ');
        }
        g_string_append_c(s, ' ');
        for (gsize i = 0; i < n; i++) {
            guint8 c = bytes[at + i];
            g_string_append_c(s, c >= 0x20 && c < 0x7f ? (char)c : '.');
        }
        if (at + width < len)
            g_string_append_c(s, '\n');
    }
    return g_string_free(s, FALSE);
}

gboolean rescue_looks_like_text(const guint8 *bytes, gsize len)
{
    const char *end = NULL;
    gsize control = 0;

    if (len == 0)
        return FALSE;
    /* A multi-byte character cut at the end of the sample is still text. */
    if (!g_utf8_validate((const char *)bytes, (gssize)len, &end)) {
        if (end == NULL || (gsize)(end - (const char *)bytes) + 4 < len)
            return FALSE;
    }
    for (gsize i = 0; i < len; i++) {
        guint8 c = bytes[i];
        if (c == 0)
            return FALSE;
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f')
            control++;
    }
    return control * 100 <= len;
}
