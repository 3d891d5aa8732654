/*
 * rescue-image.c -- block and file reads for the views and salvage (rescue-image.h).
 *
 * The filesystem is opened with LANYFS_OPEN_FORCE, so that a damaged
 * superblock still gives a handle.  Blocks are read with
 * lanyfs_fs_read_raw when the handle's block size is the scan's; when the
 * scan inferred another one, the image is read directly at blk * blocksize.
 */
#define G_LOG_DOMAIN "rescue-image"

#include "config.h"

#include <glib/gi18n.h>
#include <string.h>

#include "lanyfs.h"
#include "rescue-image.h"

struct _RescueImage {
    RescueData *data;          /* the scan (owned reference) */
    struct lanyfs_fs *fs;      /* read-only handle (owned) */
    guint32 blocksize;         /* the scan's block size */
    gboolean same_geometry;    /* the handle reads with the scan's block size */
    guint8 *buf;               /* one block (owned) */
};

static void set_lanyfs_error(GError **error, const struct lanyfs_error *err)
{
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                        err->msg[0] ? err->msg : lanyfs_strerror(err->code));
}

RescueImage *rescue_image_open(RescueData *data, GError **error)
{
    const RescueGeometry *geom;
    const char *path;
    struct lanyfs_error err = {0};
    struct lanyfs_fs *fs = NULL;
    RescueImage *img;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(error == NULL || *error == NULL, NULL);

    path = rescue_data_get_image_path(data);
    geom = rescue_data_get_geometry(data);
    if (path == NULL || !geom->have_geometry || geom->blocksize == 0) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            _("The scan does not say where its image is or how it is laid out"));
        return NULL;
    }
    if (lanyfs_fs_open(path, LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0, &fs, &err) != LANYFS_OK) {
        set_lanyfs_error(error, &err);
        return NULL;
    }
    img = g_new0(RescueImage, 1);
    img->data = rescue_data_ref(data);
    img->fs = fs;
    img->blocksize = geom->blocksize;
    img->same_geometry = lanyfs_fs_geom(fs)->blocksize == geom->blocksize;
    img->buf = g_malloc(geom->blocksize);
    return img;
}

void rescue_image_close(RescueImage *img)
{
    if (img == NULL)
        return;
    lanyfs_fs_close(img->fs);
    rescue_data_unref(img->data);
    g_free(img->buf);
    g_free(img);
}

guint32 rescue_image_get_block_size(const RescueImage *img)
{
    g_return_val_if_fail(img != NULL, 0);
    return img->blocksize;
}

gboolean rescue_image_read_block(RescueImage *img, guint64 blk, guint8 *buf, GError **error)
{
    struct lanyfs_error err = {0};
    enum lanyfs_err rc;

    g_return_val_if_fail(img != NULL, FALSE);
    g_return_val_if_fail(buf != NULL, FALSE);

    if (blk > G_MAXUINT64 / img->blocksize) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    _("Block %llu lies beyond any image"), (unsigned long long)blk);
        return FALSE;
    }
    if (img->same_geometry)
        rc = lanyfs_fs_read_raw(img->fs, blk, buf, &err);
    else
        rc = lanyfs_image_pread(lanyfs_fs_image(img->fs), blk * img->blocksize, buf,
                                img->blocksize, &err);
    if (rc != LANYFS_OK) {
        set_lanyfs_error(error, &err);
        return FALSE;
    }
    return TRUE;
}

/* Through the scan's data map; see the header for what counts as lost. */
static gssize read_by_map(RescueImage *img, const RescueEntryInfo *e, guint64 off, guint8 *out,
                          gsize len, guint64 *lost, GError **error)
{
    const guint64 *map = NULL;
    guint64 nmap = 0;
    gsize done = 0;

    rescue_data_get_entry_data(img->data, e->id, &map, &nmap);
    while (done < len) {
        guint64 pos = off + done;
        guint64 fblk = pos / img->blocksize;
        gsize within = (gsize)(pos % img->blocksize);
        gsize n = MIN(len - done, img->blocksize - within);
        guint64 dblk = fblk < nmap ? map[fblk] : 0;
        const struct scan_block *cell = rescue_data_get_block(img->data, dblk);
        gboolean usable = dblk != 0 &&
                          (cell == NULL || cell->owner == 0 || cell->owner == e->id);

        if (usable) {
            g_autoptr(GError) local = NULL;
            if (!rescue_image_read_block(img, dblk, img->buf, &local)) {
                /* An unreadable block is lost, not the end of the file. */
                usable = FALSE;
            }
        }
        if (usable) {
            memcpy(out + done, img->buf + within, n);
        } else {
            memset(out + done, 0, n);
            if (lost != NULL)
                (*lost)++; /* each turn of the loop is one file block */
        }
        done += n;
    }
    (void)error;
    return (gssize)done;
}

gssize rescue_image_read_entry(RescueImage *img, guint32 id, guint64 off, void *buf, gsize len,
                               guint64 *lost, GError **error)
{
    const RescueEntryInfo *e;

    g_return_val_if_fail(img != NULL, -1);
    g_return_val_if_fail(buf != NULL || len == 0, -1);

    e = rescue_data_get_entry(img->data, id);
    if (e == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("No entry %u in this scan"), id);
        return -1;
    }
    guint64 size = rescue_entry_content_size(e);
    if (off >= size)
        return 0;
    len = (gsize)MIN((guint64)len, size - off);
    len = MIN(len, (gsize)G_MAXSSIZE);

    /* A lost tree's data is no entry's on the disk: only its map reads it. */
    if (e->state == SCAN_ENTRY_LIVE && e->lost_top == 0 && img->same_geometry) {
        struct lanyfs_error err = {0};
        struct lanyfs_entry le;
        size_t got = 0;
        uint64_t holes = 0;

        if (rescue_image_read_block(img, e->block, img->buf, NULL)) {
            lanyfs_entry_decode(&le, img->buf);
            /* The entry as read now must still be the one the scan saw. */
            if (le.size == e->size &&
                lanyfs_file_pread(img->fs, &le, off, buf, len, &got, &holes, &err) ==
                    LANYFS_OK &&
                got == len) {
                if (lost != NULL)
                    *lost += holes;
                return (gssize)got;
            }
        }
    }
    return read_by_map(img, e, off, buf, len, lost, error);
}
