/*
 * locate.c -- the geometry and root directory of an image whose block 0
 * cannot give them, without a whole scan.
 *
 * `lanyfs ls -f`, `cat -f` and `stat -f` read one path of a stick whose
 * superblock is blank, torn or junk.  A whole scan would read every block
 * of the device for that; this runs only the scan's superblock pass (which
 * infers the block size, the address length and the root from a sample of
 * the first blocks when block 0 cannot give them, infer.c) and, when no
 * root directory came out of that or block 0's root is no directory, the
 * scan's search for one (sc_find_root: the formatter's LANYFSROOT, else the
 * unlinked directory with the most entries below it), which reads the
 * image once.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

/* The root block r names, or one a search finds; 0 when there is none. */
static uint64_t settle_root(struct scan_result *r, bool *searched)
{
    uint64_t root = r->rootdir;
    *searched = false;
    if (root != 0 && root < r->nblocks && root < r->image_blocks) {
        uint8_t *b = malloc(r->g.blocksize);
        struct lanyfs_entry e;
        if (b == NULL) {
            sc_oom(r);
            return 0;
        }
        bool dir = sc_read(r, root, b, NULL) == LANYFS_OK &&
                   sc_probe_entry(&r->g, r->dev_blocks, b, &e) && lanyfs_entry_is_dir(&e);
        free(b);
        if (dir)
            return root;
    }
    if (!sc_map_init(r))
        return 0;
    *searched = true;
    return sc_find_root(r, root);
}

enum lanyfs_err scan_locate(struct lanyfs_fs *fs, struct scan_location *out,
                            struct lanyfs_error *err)
{
    memset(out, 0, sizeof(*out));
    struct scan_result *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    r->fs = fs;
    r->img = lanyfs_fs_image(fs);
    r->sb = *lanyfs_fs_super(fs);
    r->sb_lost = lanyfs_fs_super_lost(fs);

    enum lanyfs_err rc = LANYFS_OK;
    bool searched = false;
    uint64_t root = 0;
    if (sc_super_pass(r))
        root = settle_root(r, &searched);
    if (r->stop != LANYFS_OK || r->g.blocksize == 0) {
        rc = lanyfs_fail(err, r->stop != LANYFS_OK ? r->stop : LANYFS_E_NOMEM, LANYFS_NO_BLOCK,
                         "%s: out of memory while looking for the root directory",
                         lanyfs_image_path(r->img));
        goto out;
    }
    out->blockbits = r->g.blockbits;
    out->addrlen = r->g.addrlen;
    out->blocks = r->dev_blocks;
    out->rootdir = root;
    out->freehead = r->freehead;
    out->inferred = r->inferred;
    out->root_searched = searched && root != 0;
    for (size_t i = 0; i < r->nfindings; i++)
        if (r->findings[i].code == SCAN_PR_SB_GEOMETRY_INFERRED ||
            r->findings[i].code == SCAN_PR_SB_BLOCKSIZE_WRONG ||
            r->findings[i].code == SCAN_PR_SB_ADDRLEN_WRONG) {
            free(out->how);
            out->how = scan_finding_message_translated(&r->findings[i]);
        }
out:
    scan_result_free(r);
    return rc;
}

void scan_location_free(struct scan_location *l)
{
    free(l->how);
    l->how = NULL;
}
