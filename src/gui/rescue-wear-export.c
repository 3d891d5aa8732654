/*
 * rescue-wear-export.c -- the wear exports over wear.h (rescue-wear-export.h).
 *
 * The PNG is written by wear_write_png to a temporary file beside the
 * target and renamed over it, the CSV collected in memory and written with
 * g_file_set_contents, so a failed export leaves no half file.
 */
#define G_LOG_DOMAIN "rescue-export"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rescue-wear-export.h"
#include "scan.h"
#include "wear.h"

gboolean rescue_wear_export_handles(RescueExportKind kind)
{
    return kind == RESCUE_EXPORT_WEAR_PNG || kind == RESCUE_EXPORT_WEAR_CSV;
}

static gboolean write_csv(const struct wear_report *w, const char *path, GError **error)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gboolean ok;

    if (f == NULL) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, g_strerror(errno));
        return FALSE;
    }
    ok = wear_write_csv(f, w, WEAR_CSV_BLOCKS) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok)
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot write the table"));
    else
        ok = g_file_set_contents_full(path, buf != NULL ? buf : "", (gssize)len,
                                      G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
    free(buf);
    return ok;
}

static gboolean write_png(const struct wear_report *w, const char *title, const char *path,
                          GError **error)
{
    g_autofree char *tmp = g_strdup_printf("%s.XXXXXX", path);
    struct lanyfs_error err = {0};
    int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);

    if (fd < 0) {
        int saved = errno;
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved), "%s", g_strerror(saved));
        return FALSE;
    }
    close(fd);
    if (wear_write_png(tmp, w, title, &err) != LANYFS_OK) {
        g_unlink(tmp);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot make the image: %s"),
                    err.msg);
        return FALSE;
    }
    if (g_rename(tmp, path) != 0) {
        int saved = errno;
        g_unlink(tmp);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved), "%s", g_strerror(saved));
        return FALSE;
    }
    return TRUE;
}

gboolean rescue_wear_export_to_file(RescueData *data, RescueExportKind kind, const char *path,
                                    GError **error)
{
    const struct scan_result *scan;
    struct scan_result *rescanned = NULL;
    struct wear_report *w = NULL;
    struct lanyfs_error err = {0};
    const char *image;
    g_autofree char *title = NULL;
    gboolean ok = FALSE;

    g_return_val_if_fail(data != NULL, FALSE);
    g_return_val_if_fail(rescue_wear_export_handles(kind), FALSE);
    g_return_val_if_fail(path != NULL, FALSE);

    image = rescue_data_get_image_path(data);
    title = g_filename_display_basename(image);
    scan = rescue_data_get_scan_result(data);
    if (scan == NULL) {
        struct scan_opts so = {0};
        enum lanyfs_err rc = scan_image(image, &so, &rescanned, &err);
        if (rc != LANYFS_OK) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot scan “%s”: %s"), title,
                        err.msg[0] ? err.msg : lanyfs_strerror(rc));
            return FALSE;
        }
        scan = rescanned;
    }
    if (wear_report_build(scan, NULL, &w, &err) != LANYFS_OK) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.msg);
        goto out;
    }
    ok = kind == RESCUE_EXPORT_WEAR_CSV ? write_csv(w, path, error)
                                        : write_png(w, title, path, error);
out:
    wear_report_free(w);
    scan_result_free(rescanned);
    return ok;
}
