/*
 * repair_super.c -- block 0 (SPEC-§3).
 *
 * The superblock is written last in a repair: one write switches the
 * filesystem from the old free list to the new one ('freehead',
 * 'freetail', 'freeblocks') together with the fields the answers allow to
 * fix (the type byte, an out-of-range 'badblocks', invalid timestamps),
 * with 'updated' set to the check time and wrcnt counting the write.  All
 * those fields lie in the first 376 bytes, inside the first sector, so the
 * switch lands whole or not at all.
 *
 * Two changes are single writes of their own: growing (or capping)
 * 'blocks' comes first, before anything else is planned, since the rest of
 * the repair is planned over the new size (the filesystem's blocks past
 * the old end then show up as leaked, and the free list rebuild takes them
 * in); and 'checked' is set only after the check that follows the repair
 * found the filesystem clean.
 */
#include <inttypes.h>
#include <string.h>

#include "repair.h"

static enum lanyfs_err write_sb(struct lanyfs_fs *fs, struct lanyfs_super *sb,
                                struct lanyfs_error *err)
{
    sb->wrcnt++;
    return lanyfs_fs_write_super(fs, sb, err);
}

enum lanyfs_err fsck_super_write(struct fsck_ctx *c, const struct fsck_freelist *fl)
{
    struct lanyfs_super sb = *lanyfs_fs_super(c->fs);
    bool changed = false;
    if (fl != NULL) {
        changed = sb.freehead != fl->head || sb.freetail != fl->tail ||
                  sb.freeblocks != fl->count;
        sb.freehead = fl->head;
        sb.freetail = fl->tail;
        sb.freeblocks = fl->count;
    }
    if (c->allow_super) {
        if (sb.type != LANYFS_TYPE_SUPER) {
            sb.type = LANYFS_TYPE_SUPER;
            changed = true;
        }
        if (sb.badblocks != 0 && sb.badblocks >= sb.blocks) {
            sb.badblocks = 0;
            changed = true;
        }
        struct lanyfs_ts *ts[3] = {&sb.created, &sb.updated, &sb.checked};
        for (int i = 0; i < 3; i++) {
            if (!lanyfs_ts_is_unset(ts[i]) && !lanyfs_ts_is_valid(ts[i])) {
                *ts[i] = c->now;
                changed = true;
            }
        }
    }
    if (!changed)
        return LANYFS_OK;
    sb.updated = c->now;
    enum lanyfs_err rc = write_sb(c->fs, &sb, &c->err);
    if (rc == LANYFS_OK)
        c->st.writes++;
    return rc;
}

enum lanyfs_err fsck_super_set_blocks(struct lanyfs_fs *fs, uint64_t nblocks,
                                      struct lanyfs_error *err)
{
    struct lanyfs_super sb = *lanyfs_fs_super(fs);
    sb.blocks = nblocks;
    return write_sb(fs, &sb, err);
}

enum lanyfs_err fsck_super_set_checked(struct lanyfs_fs *fs, const struct lanyfs_ts *now,
                                       struct lanyfs_error *err)
{
    struct lanyfs_super sb = *lanyfs_fs_super(fs);
    sb.checked = *now;
    return write_sb(fs, &sb, err);
}

uint64_t fsck_super_grow_target(struct lanyfs_fs *fs)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint64_t n = lanyfs_fs_image_blocks(fs);
    /* 2^(8*addrlen) blocks are addressable; with 8 bytes every count is. */
    if (g->addrlen < 8) {
        uint64_t cap = (uint64_t)1 << (8 * g->addrlen);
        if (n > cap)
            n = cap;
    }
    return n;
}
