/*
 * blockio.c -- reading blocks with the scan's geometry.
 *
 * The scan may read with a geometry it inferred (infer.c), which the
 * filesystem handle does not know, so it reads the image directly at
 * blk << blockbits instead of through lanyfs_fs_read_block.  Checks:
 *  - a block past the image's whole blocks is LANYFS_E_TRUNCATED, naming it;
 *  - a run is cut at the image's end before any byte is read;
 *  - offsets are computed only for blocks below image_blocks, so the shift
 *    cannot overflow.
 */
#include <inttypes.h>

#include "scan_priv.h"

enum lanyfs_err sc_read(struct scan_result *r, uint64_t blk, uint8_t *buf,
                        struct lanyfs_error *err)
{
    return sc_read_run(r, blk, 1, buf, err);
}

enum lanyfs_err sc_read_run(struct scan_result *r, uint64_t first, uint64_t count, uint8_t *buf,
                            struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    if (first >= r->image_blocks || count > r->image_blocks - first) {
        rc = lanyfs_fail(err, LANYFS_E_TRUNCATED, first,
                         "block %" PRIu64 " lies beyond the end of the image (%" PRIu64
                         " blocks of %" PRIu32 " bytes)",
                         first >= r->image_blocks ? first : r->image_blocks, r->image_blocks,
                         r->g.blocksize);
        goto out;
    }
    rc = lanyfs_image_pread(r->img, first << r->g.blockbits, buf,
                            (size_t)count << r->g.blockbits, err);
    if (rc != LANYFS_OK && err != NULL) {
        err->block = first;
        lanyfs_error_prefix(err, "block %" PRIu64, first);
    }
out:
    return rc;
}
