/*
 * rescue-image.h -- reading the blocks and files of a scanned image.
 *
 * A RescueImage is a read-only handle on the image or device a RescueData
 * describes, for the hex view, the previews and salvage.  It reads with the
 * scan's geometry (which may have been inferred) through the core reader.
 * One thread uses a handle at a time; each thread that reads opens its own.
 *
 * File contents: a live file is read through the core's file reader
 * (lanyfs_file_pread, as `lanyfs cat` reads it); a deleted or orphaned
 * file, or a live one whose tree the reader refuses, through the data map
 * the scan found.  A data block that another entry owns now is not read:
 * its bytes belong to someone else.  It is given as zeros and counted as
 * lost, as are holes in the map.
 */
#pragma once

#include <gio/gio.h>

#include "rescue-data.h"

G_BEGIN_DECLS

typedef struct _RescueImage RescueImage;

/* Open the image data names (read-only); blocks are data's block size. */
RescueImage *rescue_image_open(RescueData *data, GError **error);
void rescue_image_close(RescueImage *img);

guint32 rescue_image_get_block_size(const RescueImage *img);

/* Read block blk (rescue_image_get_block_size bytes) into buf. */
gboolean rescue_image_read_block(RescueImage *img, guint64 blk, guint8 *buf, GError **error);

/*
 * Read up to len bytes at off of entry id's contents into buf; returns the
 * bytes given (clipped at the entry's size), -1 on a hard error.  *lost
 * (may be NULL) is increased by the blocks given as zeros (holes, and
 * blocks another entry owns).
 */
gssize rescue_image_read_entry(RescueImage *img, guint32 id, guint64 off, void *buf, gsize len,
                               guint64 *lost, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RescueImage, rescue_image_close)

G_END_DECLS
