/*
 * repair_super.c -- block 0 (SPEC-§3).
 *
 * The superblock is written last in a repair: one write switches the
 * filesystem from the old free list to the new one ('freehead',
 * 'freetail', 'freeblocks') together with the fields the answers allow to
 * fix (the type byte, a major version of 1 with a bit flipped, an
 * out-of-range 'badblocks', invalid timestamps),
 * with 'updated' set to the check time and wrcnt counting the write.  All
 * those fields lie in the first 376 bytes, inside the first sector, so the
 * switch lands whole or not at all.
 *
 * A 'rootdir' out of range or at a block that is no directory is set, in
 * a write of its own before anything is planned (the plan starts at
 * 'rootdir'), to the root repair_root.c finds or makes.
 *
 * Two changes are single writes of their own: growing (or capping)
 * 'blocks' comes first, before anything else is planned, since the rest of
 * the repair is planned over the new size (the filesystem's blocks past
 * the old end then show up as leaked, and the free list rebuild takes them
 * in); and 'checked' is set only after the check that follows the repair
 * found the filesystem clean.
 *
 * A superblock that cannot be used at all (bad magic, block size or
 * address length, or a sector that cannot be read) is replaced first, by
 * fsck_super_rebuild: the geometry, root and free list the scan inferred,
 * in one write of block 0 made with that geometry.  Everything else is
 * then checked and repaired over the new superblock, as on any other run.
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
        if (lanyfs_super_major_flipped(sb.major)) {
            sb.major = LANYFS_VERSION_MAJOR;
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

enum lanyfs_err fsck_super_set_root(struct lanyfs_fs *fs, uint64_t root, struct lanyfs_error *err)
{
    struct lanyfs_super sb = *lanyfs_fs_super(fs);
    sb.rootdir = root;
    return write_sb(fs, &sb, err);
}

enum lanyfs_err fsck_super_set_checked(struct lanyfs_fs *fs, const struct lanyfs_ts *now,
                                       struct lanyfs_error *err)
{
    struct lanyfs_super sb = *lanyfs_fs_super(fs);
    sb.checked = *now;
    return write_sb(fs, &sb, err);
}

enum lanyfs_err fsck_super_rebuild(struct lanyfs_fs *fs, const struct scan_result *res,
                                   const struct lanyfs_ts *now, struct lanyfs_error *err)
{
    const struct lanyfs_geom *g = scan_geom(res);
    struct scan_anchors a;
    scan_get_anchors(res, &a);
    if (a.rootdir == 0)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, 0,
                           "no root directory was found to write a superblock for");
    /* What the old superblock said is kept only when it was one (its magic
     * right, its geometry wrong): otherwise block 0 may hold anything, a
     * file's data among others (SPEC-§9.8), and its label and times would
     * be noise. */
    const struct lanyfs_super *old = scan_super(res);
    struct lanyfs_super sb;
    memset(&sb, 0, sizeof(sb));
    if (old != NULL && old->magic == LANYFS_MAGIC) {
        sb.wrcnt = old->wrcnt;
        memcpy(sb.label, old->label, sizeof(sb.label));
        if (lanyfs_ts_is_valid(&old->created))
            sb.created = old->created;
    }
    sb.type = LANYFS_TYPE_SUPER;
    sb.magic = LANYFS_MAGIC;
    sb.major = LANYFS_VERSION_MAJOR;
    sb.minor = LANYFS_VERSION_MINOR;
    sb.blockbits = (uint8_t)g->blockbits;
    sb.addrlen = (uint8_t)g->addrlen;
    sb.rootdir = a.rootdir;
    sb.blocks = g->blocks;
    /* The free list the scan walked, so that what lies in it (deleted
     * entries among others) stays where it is; the check that follows
     * repairs the list as usual. */
    sb.freehead = a.freehead;
    sb.freetail = a.freetail;
    sb.freeblocks = a.free_listed;
    sb.updated = *now;
    enum lanyfs_err rc = lanyfs_fs_set_geometry(fs, g->blockbits, g->addrlen, g->blocks, err);
    if (rc == LANYFS_OK)
        rc = write_sb(fs, &sb, err);
    return rc;
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
