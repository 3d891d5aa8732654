/*
 * fs.c -- an opened LanyFS: image, superblock, geometry and a block cache.
 *
 * Opening reads block 0, decodes it and runs lanyfs_super_check.  A fatal
 * problem refuses the open unless LANYFS_OPEN_FORCE is given, in which case
 * the handle keeps the problems for the caller to show (`lanyfs info`).
 * With LANYFS_OPEN_BAD0 as well, a block 0 whose sectors cannot all be read
 * opens too: each sector that fails reads as zeros (a first sector lost
 * leaves an all-zero superblock, which fails its checks), and the scanner
 * infers the geometry from the other blocks.
 *
 * Block reads go through a direct-mapped cache of CACHE_SLOTS blocks (about
 * 1 MiB at 4 KiB blocks); writes go through to the image at once and update
 * the cache, after the write hook has seen them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lanyfs.h"

#define CACHE_SLOTS 256

struct cache_slot {
    uint64_t blk;    /* cached block number */
    bool valid;      /* slot holds blk */
    uint8_t *data;   /* blocksize bytes */
};

struct lanyfs_fs {
    struct lanyfs_image *img;                           /* owned */
    unsigned flags;                                     /* LANYFS_OPEN_* */
    struct lanyfs_super sb;                             /* decoded block 0 */
    uint8_t *sb_raw;                                    /* block 0 as read, blocksize bytes */
    unsigned block0_lost;                               /* its sectors that failed (OPEN_BAD0) */
    bool sb_lost;                                       /* the superblock's own sector failed */
    struct lanyfs_geom geom;                            /* derived geometry */
    uint64_t image_blocks;                              /* whole blocks in the image */
    struct lanyfs_sb_problem problems[LANYFS_SB_PROBLEMS_MAX]; /* from the check */
    size_t nproblems;                                   /* entries in problems */
    struct cache_slot cache[CACHE_SLOTS];               /* read cache */
    uint8_t *cache_mem;                                 /* backing store of the cache */
    lanyfs_write_hook hook;                             /* borrowed */
    void *hook_ctx;                                     /* borrowed */
};

enum lanyfs_err lanyfs_fs_open(const char *path, unsigned flags, struct lanyfs_fs **out,
                               struct lanyfs_error *err)
{
    struct lanyfs_image *img;
    unsigned iflags = 0;
    *out = NULL;
    if (flags & LANYFS_OPEN_RDWR)
        iflags |= LANYFS_IMAGE_RDWR;
    if (flags & LANYFS_OPEN_EXCL)
        iflags |= LANYFS_IMAGE_EXCL;
    enum lanyfs_err rc = lanyfs_image_open(path, iflags, &img, err);
    if (rc != LANYFS_OK)
        return rc;
    return lanyfs_fs_open_image(img, flags, out, err);
}

enum lanyfs_err lanyfs_fs_open_image(struct lanyfs_image *img, unsigned flags,
                                     struct lanyfs_fs **out, struct lanyfs_error *err)
{
    *out = NULL;
    enum lanyfs_err rc;
    uint8_t head[LANYFS_BLOCKSIZE_MIN];
    struct lanyfs_fs *fs = calloc(1, sizeof(*fs));
    if (fs == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out_close_image;
    }
    fs->img = img;
    fs->flags = flags;

    rc = lanyfs_image_pread(img, 0, head, sizeof(head), err);
    if (rc == LANYFS_E_IO && (flags & LANYFS_OPEN_FORCE) && (flags & LANYFS_OPEN_BAD0)) {
        memset(head, 0, sizeof(head));
        fs->block0_lost = 1;
        fs->sb_lost = true;
        rc = LANYFS_OK;
    }
    if (rc != LANYFS_OK) {
        if (rc == LANYFS_E_TRUNCATED)
            lanyfs_fail(err, rc, 0, "%s holds %" PRIu64 " bytes, too few for a superblock",
                        lanyfs_image_path(img), lanyfs_image_size(img));
        goto out_free_fs;
    }
    lanyfs_super_decode(&fs->sb, head);
    size_t n = lanyfs_super_check(&fs->sb, lanyfs_image_size(img), fs->problems,
                                  LANYFS_SB_PROBLEMS_MAX);
    fs->nproblems = n < LANYFS_SB_PROBLEMS_MAX ? n : LANYFS_SB_PROBLEMS_MAX;
    for (size_t i = 0; i < fs->nproblems; i++) {
        if (fs->problems[i].fatal && !(flags & LANYFS_OPEN_FORCE)) {
            rc = lanyfs_fail(err, fs->problems[i].code, 0, "%s: %s", lanyfs_image_path(img),
                             fs->problems[i].msg);
            goto out_free_fs;
        }
    }

    unsigned bits = fs->sb.blockbits;
    if (bits < LANYFS_BLOCKBITS_MIN || bits > LANYFS_BLOCKBITS_MAX)
        bits = LANYFS_BLOCKBITS_MIN;
    unsigned alen = fs->sb.addrlen;
    if (alen < LANYFS_ADDRLEN_MIN || alen > LANYFS_ADDRLEN_MAX)
        alen = LANYFS_ADDRLEN_MAX;
    rc = lanyfs_geom_init(&fs->geom, bits, alen, fs->sb.blocks, err);
    if (rc != LANYFS_OK)
        goto out_free_fs;
    fs->image_blocks = lanyfs_image_size(img) >> bits;

    fs->sb_raw = calloc(1, fs->geom.blocksize);
    fs->cache_mem = malloc((size_t)CACHE_SLOTS * fs->geom.blocksize);
    if (fs->sb_raw == NULL || fs->cache_mem == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out_free_fs;
    }
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        fs->cache[i].data = fs->cache_mem + i * fs->geom.blocksize;
    size_t want = fs->geom.blocksize;
    if (want > lanyfs_image_size(img))
        want = (size_t)lanyfs_image_size(img);
    if ((flags & LANYFS_OPEN_FORCE) && (flags & LANYFS_OPEN_BAD0)) {
        /* Sectors that fail stay zero. */
        size_t lost = 0;
        rc = lanyfs_image_pread_sectors(img, 0, fs->sb_raw, want, &lost, err);
        fs->block0_lost = (unsigned)lost;
    } else {
        rc = lanyfs_image_pread(img, 0, fs->sb_raw, want, err);
    }
    if (rc != LANYFS_OK)
        goto out_free_fs;
    *out = fs;
    return LANYFS_OK;

out_free_fs:
    free(fs->sb_raw);
    free(fs->cache_mem);
    free(fs);
out_close_image:
    lanyfs_image_close(img);
    return rc;
}

unsigned lanyfs_fs_block0_lost(const struct lanyfs_fs *fs)
{
    return fs->block0_lost;
}

bool lanyfs_fs_super_lost(const struct lanyfs_fs *fs)
{
    return fs->sb_lost;
}

enum lanyfs_err lanyfs_fs_set_geometry(struct lanyfs_fs *fs, unsigned blockbits, unsigned addrlen,
                                       uint64_t blocks, struct lanyfs_error *err)
{
    struct lanyfs_geom g;
    enum lanyfs_err rc = lanyfs_geom_init(&g, blockbits, addrlen, blocks, err);
    if (rc != LANYFS_OK)
        return rc;
    uint64_t size = lanyfs_image_size(fs->img);
    if (size < g.blocksize)
        return lanyfs_fail(err, LANYFS_E_TRUNCATED, 0,
                           "%s holds %" PRIu64 " bytes, less than one block of %" PRIu32,
                           lanyfs_image_path(fs->img), size, g.blocksize);
    uint8_t *raw = calloc(1, g.blocksize);
    uint8_t *mem = malloc((size_t)CACHE_SLOTS * g.blocksize);
    if (raw == NULL || mem == NULL) {
        free(raw);
        free(mem);
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    }
    size_t lost = 0;
    if ((fs->flags & LANYFS_OPEN_FORCE) && (fs->flags & LANYFS_OPEN_BAD0))
        rc = lanyfs_image_pread_sectors(fs->img, 0, raw, g.blocksize, &lost, err);
    else
        rc = lanyfs_image_pread(fs->img, 0, raw, g.blocksize, err);
    if (rc != LANYFS_OK) {
        free(raw);
        free(mem);
        return rc;
    }
    free(fs->sb_raw);
    free(fs->cache_mem);
    fs->sb_raw = raw;
    fs->cache_mem = mem;
    fs->block0_lost = (unsigned)lost;
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        fs->cache[i].data = fs->cache_mem + i * g.blocksize;
        fs->cache[i].valid = false;
    }
    fs->geom = g;
    fs->image_blocks = size >> blockbits;
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_fs_assume_super(struct lanyfs_fs *fs, const struct lanyfs_super *sb,
                                       struct lanyfs_error *err)
{
    if (fs->flags & LANYFS_OPEN_RDWR)
        return lanyfs_fail(err, LANYFS_E_INVAL, 0,
                           "%s: a superblock that is not on the disk serves reads only",
                           lanyfs_image_path(fs->img));
    enum lanyfs_err rc = lanyfs_fs_set_geometry(fs, sb->blockbits, sb->addrlen, sb->blocks, err);
    if (rc != LANYFS_OK)
        return rc;
    fs->sb = *sb;
    return LANYFS_OK;
}

void lanyfs_fs_close(struct lanyfs_fs *fs)
{
    if (fs == NULL)
        return;
    lanyfs_image_close(fs->img);
    free(fs->sb_raw);
    free(fs->cache_mem);
    free(fs);
}

const struct lanyfs_super *lanyfs_fs_super(const struct lanyfs_fs *fs)
{
    return &fs->sb;
}

const struct lanyfs_geom *lanyfs_fs_geom(const struct lanyfs_fs *fs)
{
    return &fs->geom;
}

struct lanyfs_image *lanyfs_fs_image(struct lanyfs_fs *fs)
{
    return fs->img;
}

size_t lanyfs_fs_problems(const struct lanyfs_fs *fs, const struct lanyfs_sb_problem **out)
{
    *out = fs->problems;
    return fs->nproblems;
}

uint64_t lanyfs_fs_image_blocks(const struct lanyfs_fs *fs)
{
    return fs->image_blocks;
}

static struct cache_slot *cache_slot(struct lanyfs_fs *fs, uint64_t blk)
{
    uint64_t h = blk * 0x9E3779B97F4A7C15ull;
    return &fs->cache[(h >> 56) % CACHE_SLOTS];
}

enum lanyfs_err lanyfs_fs_read_raw(struct lanyfs_fs *fs, uint64_t blk, uint8_t *buf,
                                   struct lanyfs_error *err)
{
    if (blk >= fs->image_blocks)
        return lanyfs_fail(err, LANYFS_E_TRUNCATED, blk,
                           "block %" PRIu64 " lies beyond the end of the image (%" PRIu64
                           " blocks)",
                           blk, fs->image_blocks);
    struct cache_slot *cs = cache_slot(fs, blk);
    if (cs->valid && cs->blk == blk) {
        memcpy(buf, cs->data, fs->geom.blocksize);
        return LANYFS_OK;
    }
    enum lanyfs_err rc =
        lanyfs_image_pread(fs->img, blk << fs->geom.blockbits, cs->data, fs->geom.blocksize, err);
    if (rc != LANYFS_OK) {
        cs->valid = false;
        if (err)
            err->block = blk;
        lanyfs_error_prefix(err, "block %" PRIu64, blk);
        return rc;
    }
    cs->blk = blk;
    cs->valid = true;
    memcpy(buf, cs->data, fs->geom.blocksize);
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_fs_read_block(struct lanyfs_fs *fs, uint64_t blk, uint8_t *buf,
                                     struct lanyfs_error *err)
{
    if (blk >= fs->sb.blocks)
        return lanyfs_fail(err, LANYFS_E_RANGE, blk,
                           "block %" PRIu64 " lies beyond the device end (blocks = %" PRIu64 ")",
                           blk, fs->sb.blocks);
    return lanyfs_fs_read_raw(fs, blk, buf, err);
}

enum lanyfs_err lanyfs_fs_write_block(struct lanyfs_fs *fs, uint64_t blk, const uint8_t *buf,
                                      struct lanyfs_error *err)
{
    if (!(fs->flags & LANYFS_OPEN_RDWR))
        return lanyfs_fail(err, LANYFS_E_READONLY, blk, "block %" PRIu64 ": image is open "
                           "read-only", blk);
    if (blk >= fs->sb.blocks && blk != 0)
        return lanyfs_fail(err, LANYFS_E_RANGE, blk,
                           "block %" PRIu64 " lies beyond the device end (blocks = %" PRIu64 ")",
                           blk, fs->sb.blocks);
    /* A device does not grow: a write past the image's last whole block
     * would make a file longer (or fail on a device), so it is refused. */
    if (blk >= fs->image_blocks)
        return lanyfs_fail(err, LANYFS_E_RANGE, blk,
                           "block %" PRIu64 " lies beyond the end of the image (%" PRIu64
                           " whole blocks of %" PRIu32 " bytes)",
                           blk, fs->image_blocks, fs->geom.blocksize);
    if (fs->hook != NULL && fs->hook(fs->hook_ctx, blk, buf) != 0)
        return lanyfs_fail(err, LANYFS_E_IO, blk, "block %" PRIu64 ": write refused by the "
                           "write log", blk);
    enum lanyfs_err rc =
        lanyfs_image_pwrite(fs->img, blk << fs->geom.blockbits, buf, fs->geom.blocksize, err);
    struct cache_slot *cs = cache_slot(fs, blk);
    if (rc != LANYFS_OK) {
        if (cs->valid && cs->blk == blk)
            cs->valid = false;
        lanyfs_error_prefix(err, "block %" PRIu64, blk);
        return rc;
    }
    memcpy(cs->data, buf, fs->geom.blocksize);
    cs->blk = blk;
    cs->valid = true;
    if (blk == 0) {
        /* Follow a superblock rewrite, but not foreign bytes landing on block 0
         * (the 2012 driver maps holes there, SPEC-§9.8): the geometry stays. */
        struct lanyfs_super nsb;
        lanyfs_super_decode(&nsb, buf);
        memcpy(fs->sb_raw, buf, fs->geom.blocksize);
        if (nsb.magic == LANYFS_MAGIC && nsb.blockbits == fs->geom.blockbits &&
            nsb.addrlen == fs->geom.addrlen) {
            fs->sb = nsb;
            fs->sb_lost = false;
            fs->geom.blocks = nsb.blocks;
        }
    }
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_fs_write_super(struct lanyfs_fs *fs, const struct lanyfs_super *sb,
                                      struct lanyfs_error *err)
{
    uint8_t *b = malloc(fs->geom.blocksize);
    if (b == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, 0, "out of memory");
    memcpy(b, fs->sb_raw, fs->geom.blocksize);
    lanyfs_super_encode(sb, b);
    enum lanyfs_err rc = lanyfs_fs_write_block(fs, 0, b, err);
    free(b);
    return rc;
}

void lanyfs_fs_set_write_hook(struct lanyfs_fs *fs, lanyfs_write_hook hook, void *ctx)
{
    fs->hook = hook;
    fs->hook_ctx = ctx;
}

void lanyfs_fs_cache_drop(struct lanyfs_fs *fs)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        fs->cache[i].valid = false;
}

enum lanyfs_err lanyfs_fs_read_entry(struct lanyfs_fs *fs, uint64_t blk, struct lanyfs_entry *e,
                                     struct lanyfs_error *err)
{
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    enum lanyfs_err rc = lanyfs_fs_read_block(fs, blk, buf, err);
    if (rc != LANYFS_OK)
        return rc;
    lanyfs_entry_decode(e, buf);
    if (e->type != LANYFS_TYPE_DIR && e->type != LANYFS_TYPE_FILE)
        return lanyfs_fail(err, LANYFS_E_BADTYPE, blk,
                           "block %" PRIu64 " has type 0x%02x, not a directory (0x10) or file "
                           "(0x20)",
                           blk, e->type);
    return LANYFS_OK;
}
