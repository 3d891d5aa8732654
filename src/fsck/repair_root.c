/*
 * repair_root.c -- a root directory for a superblock whose 'rootdir' is
 * lost (SB_ROOTDIR_RANGE, SB_ROOT_NOT_DIR) or was never written
 * (SB_FORMAT_INTERRUPTED: the formatter's first superblock, whose free
 * list the check that follows rebuilds).
 *
 * The scan searches the blocks for the root: the lowest directory named
 * LANYFSROOT (the formatter's name), else the unlinked directory with the
 * most descendants.  Only the first is taken as the root here: the second
 * is a former subdirectory whose parent was lost, and making it the root
 * would move its files up to '/' under its name's loss.  When no
 * LANYFSROOT is found, a new, empty root directory is made instead (as
 * e2fsck does) and the next round's check moves every tree nothing
 * reaches, that subdirectory among them, to /lost+found with its name.
 *
 * The new root goes into the old root's own block when nothing else owns
 * it (then the superblock already points at it and the write is the whole
 * repair), else into the lowest block of the free list that no deleted
 * entry's data map names (a deleted file stays as recoverable as it was);
 * the free list is rebuilt around it by the check that follows.  With no
 * such block (a format cut before its second superblock write leaves no
 * free list: SB_FORMAT_INTERRUPTED), it goes into block 1, where the
 * formatter puts the root, when nothing owns that block.  The
 * root's block is written before the superblock names it: a repair cut
 * between the two leaves a LANYFSROOT that the next run's search finds.
 */
#include <stdlib.h>
#include <string.h>

#include "repair.h"

bool fsck_root_is_formatters(const struct scan_result *res, uint64_t blk)
{
    const struct scan_block *map = scan_blocks(res);
    if (blk == 0 || blk >= scan_block_count(res) || map[blk].cls != SCAN_BLK_DIR)
        return false;
    const struct scan_entry *x = scan_entry_by_id(res, map[blk].owner);
    return x != NULL && x->block == blk && scan_entry_is_formatter_root(x);
}

/* The block for a new root (see the header); 0 when there is none. */
static uint64_t pick_block(struct lanyfs_fs *fs, const struct scan_result *res)
{
    const struct scan_block *map = scan_blocks(res);
    uint64_t n = scan_block_count(res), fsb = lanyfs_fs_super(fs)->blocks;
    if (fsb < n)
        n = fsb;
    if (n > lanyfs_fs_image_blocks(fs))
        n = lanyfs_fs_image_blocks(fs);
    uint64_t old = lanyfs_fs_super(fs)->rootdir;
    if (old != 0 && old < n &&
        (map[old].cls == SCAN_BLK_LEAKED || map[old].cls == SCAN_BLK_UNKNOWN) &&
        !(map[old].flags & SCAN_BF_SHARED))
        return old;
    uint8_t *taken = calloc((size_t)n / 8 + 1, 1);
    if (taken == NULL)
        return 0;
    const struct scan_entry *ents;
    size_t nents = scan_entries(res, &ents);
    for (size_t i = 0; i < nents; i++) {
        const struct scan_entry *x = &ents[i];
        if (x->state != SCAN_ENTRY_DELETED)
            continue;
        for (uint64_t k = 0; x->data != NULL && k < x->ndata; k++)
            if (x->data[k] != 0 && x->data[k] < n)
                taken[x->data[k] / 8] |= (uint8_t)(1u << (x->data[k] % 8));
    }
    uint64_t found = 0;
    for (uint64_t b = 1; b < n && found == 0; b++)
        if (map[b].cls == SCAN_BLK_FREE && !(map[b].flags & SCAN_BF_SHARED) &&
            !(taken[b / 8] & (1u << (b % 8))))
            found = b;
    free(taken);
    /* No free list to take from (a format cut before its second
     * superblock write names none): the formatter's own root block, when
     * nothing owns it (SPEC-9.16). */
    if (found == 0 && n > 1 && (map[1].cls == SCAN_BLK_LEAKED || map[1].cls == SCAN_BLK_UNKNOWN) &&
        map[1].owner == 0 && !(map[1].flags & SCAN_BF_SHARED))
        found = 1;
    return found;
}

enum lanyfs_err fsck_root_make(struct lanyfs_fs *fs, const struct scan_result *res,
                               const struct lanyfs_ts *now, uint64_t *blk,
                               struct lanyfs_error *err)
{
    uint64_t b = pick_block(fs, res);
    *blk = 0;
    if (b == 0)
        return lanyfs_fail(err, LANYFS_E_NOSPC, LANYFS_NO_BLOCK,
                           "no free block for a new root directory");
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint8_t *buf = calloc(1, g->blocksize);
    if (buf == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    struct lanyfs_entry e;
    lanyfs_entry_init_root(&e, now);
    lanyfs_entry_encode(&e, buf);
    enum lanyfs_err rc = lanyfs_fs_write_block(fs, b, buf, err);
    free(buf);
    if (rc == LANYFS_OK && lanyfs_fs_super(fs)->rootdir != b)
        rc = fsck_super_set_root(fs, b, err);
    if (rc == LANYFS_OK)
        *blk = b;
    return rc;
}
