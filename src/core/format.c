/*
 * format.c -- writing a new LanyFS 1.4 filesystem (SPEC-§1..6, §9.10, §9.11, §9.16).
 *
 * Contract.  lanyfs_format_plan computes, from the options and a device size
 * alone, everything the formatter will write: the number of blocks, the
 * chain blocks, freetail and freeblocks.  lanyfs_format writes exactly that
 * plan onto an image opened read-write, in the order of the 2012 formatter:
 *
 *   1. block 0, a provisional superblock (wrcnt 1) with rootdir, freehead,
 *      freetail and freeblocks all 0, so that an interrupted format is
 *      recognisable as one;
 *   2. block 1, the root directory "LANYFSROOT" (wrcnt 1, attr 0, created =
 *      modified = now, empty tree);
 *   3. the free list: chain block 2 lists blocks 3 onward, and each next
 *      chain block is the block right after the last one its predecessor
 *      lists; the last chain block may list nothing;
 *   4. after a sync, block 0 again (wrcnt 2) with the free list filled in,
 *      then a second sync.
 *
 * Every block the formatter writes is written whole, zero-padded; no other
 * block is touched (free blocks keep whatever the device held).  `blocks`
 * is the number of whole blocks on the device capped at 2^(8*addrlen); a
 * trailing partial block is reported in the plan (overhead) and not used.
 * Devices of fewer than LANYFS_FORMAT_MIN_BLOCKS whole blocks are refused.
 *
 * Two modes.  The default writes what the format means: chain type 0x70,
 * the last slot of every chain block left empty (the 2012 driver's pop and
 * push never look at it, SPEC-§9.1), no cap for 8-byte addresses.  With
 * compat2012 the 2012 formatter's output is reproduced byte for byte: chain
 * type 0x80 (SPEC-§9.10), every slot filled, timestamps without nanoseconds,
 * and its cap computed as an x86 shift by 8*addrlen, which for 8-byte
 * addresses masks the count to 0 and yields 1 block (SPEC-§9.11).  In both
 * modes freeblocks is the exact count of chain blocks plus filled slots.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lanyfs.h"

/* Fixed layout of a fresh filesystem (SPEC-§9.16). */
#define FMT_ROOT_BLOCK 1
#define FMT_FIRST_CHAIN 2

static void progress(const struct lanyfs_format_opts *o, enum lanyfs_format_stage stage,
                     uint64_t pos, uint64_t blocks)
{
    if (o->progress != NULL)
        o->progress(o->progress_ctx, stage, pos, blocks);
}

/*
 * The device cap in blocks.  The 2012 formatter computed 1 << (8 * addrlen)
 * in 64 bits; on x86 the shift count is taken mod 64, so 8-byte addresses
 * give 1 (SPEC-§9.11).  The masking is written out here instead of relying
 * on undefined behaviour.  The correct cap for 8-byte addresses is "none".
 */
static uint64_t device_cap(unsigned addrlen, bool compat2012)
{
    unsigned shift = 8 * addrlen;
    if (compat2012)
        return (uint64_t)1 << (shift & 63);
    if (shift >= 64)
        return UINT64_MAX;
    return (uint64_t)1 << shift;
}

enum lanyfs_err lanyfs_format_plan(const struct lanyfs_format_opts *o, uint64_t device_bytes,
                                   struct lanyfs_format_layout *l, struct lanyfs_error *err)
{
    memset(l, 0, sizeof(*l));
    enum lanyfs_err rc = lanyfs_geom_init(&l->geom, o->blockbits, o->addrlen, 0, err);
    if (rc != LANYFS_OK)
        return rc;
    if (o->label == NULL && o->label_len != 0)
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "a label length of %zu bytes was given without label bytes",
                           o->label_len);
    if (!o->compat2012 && o->label_len > LANYFS_NAME_MAX)
        return lanyfs_fail(err, LANYFS_E_NAME, 0,
                           "the volume label is %zu bytes long; at most %d bytes fit with a "
                           "terminating NUL",
                           o->label_len, LANYFS_NAME_MAX);

    l->device_bytes = device_bytes;
    l->device_blocks = device_bytes >> l->geom.blockbits;
    l->overhead = device_bytes & (l->geom.blocksize - 1);
    if (l->device_blocks < LANYFS_FORMAT_MIN_BLOCKS)
        return lanyfs_fail(err, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                           "the device holds %" PRIu64 " whole blocks of %" PRIu32
                           " bytes; a LanyFS needs at least %d",
                           l->device_blocks, l->geom.blocksize, LANYFS_FORMAT_MIN_BLOCKS);

    l->cap = device_cap(l->geom.addrlen, o->compat2012);
    l->capped = l->device_blocks > l->cap;
    l->blocks = l->capped ? l->cap : l->device_blocks;
    l->geom.blocks = l->blocks;
    l->slots_used = o->compat2012 ? l->geom.chainmax : l->geom.chainmax - 1;
    l->rootdir = FMT_ROOT_BLOCK;
    l->freehead = FMT_FIRST_CHAIN;

    /*
     * Blocks 2 .. blocks-1 are free.  Every chain block but the last takes
     * itself plus slots_used listed blocks; the last takes the rest, at
     * least itself.  With the 2012 cap bug (blocks = 1) there is nothing to
     * list, and the lone chain block 2 still counts itself.
     */
    uint64_t span = (uint64_t)l->slots_used + 1;
    uint64_t free_range = l->blocks > FMT_FIRST_CHAIN ? l->blocks - FMT_FIRST_CHAIN : 0;
    if (free_range == 0) {
        l->chain_blocks = 1;
        l->freetail = FMT_FIRST_CHAIN;
        l->freeblocks = 1;
    } else {
        l->chain_blocks = free_range / span + (free_range % span != 0);
        /* (chain_blocks - 1) * span < free_range, so this cannot wrap. */
        l->freetail = FMT_FIRST_CHAIN + (l->chain_blocks - 1) * span;
        l->freeblocks = free_range;
    }
    return LANYFS_OK;
}

static enum lanyfs_err write_block(struct lanyfs_image *img, const struct lanyfs_geom *g,
                                   uint64_t blk, const uint8_t *buf, struct lanyfs_error *err)
{
    /* blk < device_blocks, so the product stays within the device size. */
    enum lanyfs_err rc = lanyfs_image_pwrite(img, blk << g->blockbits, buf, g->blocksize, err);
    if (rc != LANYFS_OK && err != NULL) {
        err->block = blk;
        lanyfs_error_prefix(err, "while writing block %" PRIu64, blk);
    }
    return rc;
}

static void encode_super(const struct lanyfs_format_layout *l, const struct lanyfs_format_opts *o,
                         const struct lanyfs_ts *now, bool final, uint8_t *buf)
{
    struct lanyfs_super sb;
    memset(&sb, 0, sizeof(sb));
    sb.type = LANYFS_TYPE_SUPER;
    sb.wrcnt = final ? 2 : 1;
    sb.magic = LANYFS_MAGIC;
    sb.major = LANYFS_VERSION_MAJOR;
    sb.minor = LANYFS_VERSION_MINOR;
    sb.blockbits = (uint8_t)l->geom.blockbits;
    sb.addrlen = (uint8_t)l->geom.addrlen;
    sb.blocks = l->blocks;
    if (final) {
        sb.rootdir = l->rootdir;
        sb.freehead = l->freehead;
        sb.freetail = l->freetail;
        sb.freeblocks = l->freeblocks;
    }
    sb.created = *now;
    sb.updated = *now;
    /* checked stays all zero: never checked. */
    size_t n = o->label_len < sizeof(sb.label) ? o->label_len : sizeof(sb.label);
    if (n > 0)
        memcpy(sb.label, o->label, n);
    memset(buf, 0, l->geom.blocksize);
    lanyfs_super_encode(&sb, buf);
}

void lanyfs_entry_init_root(struct lanyfs_entry *e, const struct lanyfs_ts *now)
{
    memset(e, 0, sizeof(*e));
    e->type = LANYFS_TYPE_DIR;
    e->wrcnt = 1;
    e->created = *now;
    e->modified = *now;
    e->attr = 0;
    lanyfs_entry_set_name(e, LANYFS_ROOT_NAME, sizeof(LANYFS_ROOT_NAME) - 1);
}

static void encode_root(const struct lanyfs_format_layout *l, const struct lanyfs_ts *now,
                        uint8_t *buf)
{
    struct lanyfs_entry e;
    lanyfs_entry_init_root(&e, now);
    memset(buf, 0, l->geom.blocksize);
    lanyfs_entry_encode(&e, buf);
}

enum lanyfs_err lanyfs_format(struct lanyfs_image *img, const struct lanyfs_format_opts *o,
                              struct lanyfs_error *err)
{
    struct lanyfs_format_layout l;
    struct lanyfs_ts now;
    uint8_t *buf = NULL;
    enum lanyfs_err rc;

    rc = lanyfs_format_plan(o, lanyfs_image_size(img), &l, err);
    if (rc != LANYFS_OK)
        goto out;
    if (!lanyfs_image_writable(img)) {
        rc = lanyfs_fail(err, LANYFS_E_READONLY, LANYFS_NO_BLOCK, "%s is open read-only",
                         lanyfs_image_path(img));
        goto out;
    }
    if (o->now != NULL)
        now = *o->now;
    else
        lanyfs_ts_now(&now);
    if (o->compat2012)
        now.nsec = 0; /* the 2012 formatter kept whole seconds */
    now.res7 = 0;
    now.res14 = 0;

    buf = malloc(l.geom.blocksize);
    if (buf == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }

    progress(o, LANYFS_FORMAT_SUPER_FIRST, 0, l.blocks);
    encode_super(&l, o, &now, false, buf);
    rc = write_block(img, &l.geom, 0, buf, err);
    if (rc != LANYFS_OK)
        goto out;

    progress(o, LANYFS_FORMAT_ROOT, l.rootdir, l.blocks);
    encode_root(&l, &now, buf);
    rc = write_block(img, &l.geom, l.rootdir, buf, err);
    if (rc != LANYFS_OK)
        goto out;

    uint64_t chain = l.freehead, pos = l.freehead + 1, last = chain, counted = 0, nchains = 0;
    progress(o, LANYFS_FORMAT_FREE_START, pos, l.blocks);
    for (;;) {
        progress(o, LANYFS_FORMAT_FREE_CHAIN, pos, l.blocks);
        memset(buf, 0, l.geom.blocksize);
        uint32_t filled = 0;
        while (filled < l.slots_used && pos < l.blocks) {
            lanyfs_chain_set_slot(&l.geom, buf, filled, pos);
            filled++;
            pos++;
        }
        struct lanyfs_chain_hdr h = {
            .type = o->compat2012 ? LANYFS_TYPE_EXT : LANYFS_TYPE_CHAIN,
            .wrcnt = 1,
            .next = pos < l.blocks ? pos : 0,
        };
        lanyfs_chain_encode(&h, buf);
        rc = write_block(img, &l.geom, chain, buf, err);
        if (rc != LANYFS_OK)
            goto out;
        counted += 1 + (uint64_t)filled;
        nchains++;
        last = chain;
        if (h.next == 0)
            break;
        chain = h.next;
        pos = chain + 1;
    }
    progress(o, LANYFS_FORMAT_FREE_DONE, pos, l.blocks);
    if (counted != l.freeblocks || last != l.freetail || nchains != l.chain_blocks) {
        rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                         "internal error: the free list written (%" PRIu64 " blocks, tail %" PRIu64
                         ") differs from the plan (%" PRIu64 " blocks, tail %" PRIu64 ")",
                         counted, last, l.freeblocks, l.freetail);
        goto out;
    }

    /* Everything else must be on the device before the superblock names it. */
    rc = lanyfs_image_sync(img, err);
    if (rc != LANYFS_OK)
        goto out;
    progress(o, LANYFS_FORMAT_SUPER_FINAL, 0, l.blocks);
    encode_super(&l, o, &now, true, buf);
    rc = write_block(img, &l.geom, 0, buf, err);
    if (rc != LANYFS_OK)
        goto out;
    rc = lanyfs_image_sync(img, err);
    if (rc != LANYFS_OK)
        goto out;
    progress(o, LANYFS_FORMAT_DONE, pos, l.blocks);

out:
    free(buf);
    return rc;
}
