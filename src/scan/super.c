/*
 * super.c -- pass 0 of the scan: the superblock (SPEC-§3) and the geometry.
 *
 * Reads the decoded block 0 and reports every field problem, each once:
 *  - SB_UNREADABLE when the superblock's sector could not be read (its
 *    fields are zeros, so none is judged; the geometry is inferred);
 *  - SB_BAD_MAGIC (then the geometry is inferred: infer.c), SB_BAD_TYPE,
 *    SB_VERSION (major above 1; the scan goes on with the 1.4 layout), or
 *    SB_VERSION_FLIPPED when that major is 1 with one bit flipped;
 *  - SB_BAD_BLOCKSIZE, SB_BAD_ADDRLEN (then the geometry is inferred);
 *  - SB_BLOCKSIZE_WRONG (the root is a directory only at another block size,
 *    with which 'blocks' fits the image): the scan reads with that size;
 *  - SB_ADDRLEN_WRONG (with the superblock's address length the free list
 *    lists blocks past the device, with one other it lists none and adds up
 *    to 'freeblocks', or the files' data maps fit that one only): the scan
 *    reads with that one;
 *  - SB_BLOCKS_OVER_ADDR (blocks beyond 2^(8*addrlen)): pointers are judged
 *    against the cap;
 *  - SB_BLOCKS_SMALL (blocks below the formatter's 16 while the image holds
 *    more, as the 2012 formatter wrote for 64-bit addresses, SPEC-§9.11):
 *    pointers are judged against the image, the blocks past 'blocks' are
 *    classed beyond;
 *  - SB_TRUNCATED (blocks beyond the image): blocks past the image are
 *    unreadable, the map has a cell for at most SC_TRUNC_CELLS of them;
 *    after the walks, sc_super_settle turns it into SB_BLOCKS_LARGE when no
 *    block of the image refers past its end (the device then ends there);
 *  - SB_IMAGE_TAIL (whole blocks past 'blocks', informational);
 *  - SB_FORMAT_INTERRUPTED (rootdir = freehead = 0, the formatter's first
 *    superblock, SPEC-§9.16): the root is searched for, the free list is
 *    unknown;
 *  - SB_ROOTDIR_RANGE (the root is then searched for: tree.c),
 *    SB_FREEHEAD_RANGE (the free list is walked from the one block one
 *    bit away inside the device that reads as a chain block, when there is
 *    just one; else none is walked), SB_FREETAIL_RANGE,
 *    SB_BADBLOCKS_RANGE;
 *  - SB_TIME_INVALID for each of created, updated, checked that is set and
 *    out of range (SPEC-§4; the reserved bytes are not looked at, §9.16);
 *  - SB_LABEL_NO_NUL for a 256-byte label (the 2012 formatter, SPEC-§9.16).
 * 'freeblocks' is judged after the free list is walked (marks.c).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

/* Cells kept for the missing part of a truncated image. */
#define SC_TRUNC_CELLS ((uint64_t)4096)

/*
 * A 'freehead' outside the device, one flipped bit off the list's head:
 * the one block one bit away inside the device that reads as a chain
 * block (and, of type 0x80, not as an extender too); 0 when there is none
 * or more than one.  A high bit set by the flip leaves a single candidate
 * (correct:813 state 6458, bit 3 of byte 33 of block 0: 'freehead' went
 * from 1010 to 3058, and every block the list held read as unknown).
 */
static uint64_t flipped_head(struct scan_result *r, uint64_t head, uint64_t dev)
{
    uint8_t *b = malloc(r->g.blocksize);
    uint64_t found = 0;
    unsigned n = 0;
    if (b == NULL)
        return 0;
    for (unsigned j = 0; j < 64 && n < 2; j++) {
        uint64_t a = head ^ ((uint64_t)1 << j);
        if (a == 0 || a >= dev || a >= r->image_blocks || sc_read(r, a, b, NULL) != LANYFS_OK ||
            !sc_probe_chain(&r->g, dev, b) ||
            (b[0] == LANYFS_TYPE_EXT && sc_probe_extender(&r->g, dev, b)))
            continue;
        found = a;
        n++;
    }
    free(b);
    return n == 1 ? found : 0;
}

/*
 * The blocks a free list from head holds, its chain blocks with the blocks
 * they list; UINT64_MAX when it runs off the device, loops, holds a block
 * that reads as no chain block, or passes most.
 */
static uint64_t list_count_to(struct scan_result *r, uint64_t head, uint64_t stop,
                              uint64_t dev, uint64_t most)
{
    uint8_t *b = malloc(r->g.blocksize);
    uint64_t n = 0, blk = head, mark = 0, chains = 0; /* mark: a cycle's test (Brent) */
    if (b == NULL)
        return UINT64_MAX;
    while (blk != 0) {
        if (blk >= dev || blk >= r->image_blocks || n > most ||
            sc_read(r, blk, b, NULL) != LANYFS_OK || !sc_probe_chain(&r->g, dev, b)) {
            n = UINT64_MAX;
            break;
        }
        n++;
        for (uint32_t i = 0; i < r->g.chainmax; i++)
            n += lanyfs_chain_slot(&r->g, b, i) != 0;
        chains++;
        if (blk == stop)
            break;
        if ((chains & (chains - 1)) == 0)
            mark = blk;
        blk = lanyfs_get64(b + LANYFS_CH_NEXT);
        if (blk == mark) {
            n = UINT64_MAX;
            break;
        }
    }
    free(b);
    return n;
}

static uint64_t list_count(struct scan_result *r, uint64_t head, uint64_t dev, uint64_t most)
{
    return list_count_to(r, head, 0, dev, most);
}

uint64_t sc_next_flipped(struct scan_result *r, uint64_t prev, uint64_t next)
{
    const struct lanyfs_super *sb = &r->sb;
    uint64_t dev = r->dev_blocks, most = sb->freeblocks;
    if (!r->sb_usable || prev == 0 || r->freehead == 0 || most == 0)
        return 0;
    uint64_t before = list_count_to(r, r->freehead, prev, dev, most);
    if (before == UINT64_MAX || before >= most)
        return 0;
    uint64_t c = flipped_head(r, next, dev);
    if (c == 0 || r->map[c].cls == SCAN_BLK_CHAIN)
        return 0;
    return list_count(r, c, dev, most - before) == most - before ? c : 0;
}

uint64_t sc_freehead_flipped_inside(struct scan_result *r)
{
    const struct lanyfs_super *sb = &r->sb;
    uint64_t head = sb->freehead, dev = r->dev_blocks;
    if (!r->sb_usable || head == 0 || head >= dev || r->freehead != head || sb->freeblocks == 0)
        return 0;
    uint64_t c = flipped_head(r, head, dev);
    return c != 0 && list_count(r, c, dev, sb->freeblocks) == sb->freeblocks ? c : 0;
}

static bool check_time(struct scan_result *r, const char *field, const struct lanyfs_ts *ts)
{
    if (sc_ts_ok(ts))
        return true;
    char buf[80];
    lanyfs_ts_format(ts, buf, sizeof(buf));
    return sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_TIME_INVALID}, NULL, "%s %s",
                     field, buf);
}

/*
 * A block size byte that reads wrong but valid (one flipped bit turns 10
 * into 11, 11 into 9 or 10) puts every block elsewhere: the root at
 * 'rootdir' is then no directory, and the trees, the free list and the
 * data would all be read from the wrong places.  The root read with
 * another block size tells the right one when 'blocks' agrees: with that
 * size the filesystem fills the image exactly, or fits it while the
 * superblock's own size runs past its end.  Where both sizes fit (a small
 * filesystem at the start of a larger image: 1-byte addresses cap it at 256
 * blocks), the root found one bit away must bear the superblock's own
 * 'created' time, which the formatter writes into both and nothing changes
 * after.  Without that agreement the root is taken to be what is damaged
 * (SB_ROOT_NOT_DIR, tree.c) and the block size right, since a stick
 * formatted again keeps its earlier format's root where another block size
 * puts it.  Returns the exponent to read with, or 0 to keep the
 * superblock's.
 */
static bool root_dir_at(struct scan_result *r, unsigned bits, uint8_t *buf,
                        struct lanyfs_entry *out)
{
    const struct lanyfs_super *sb = &r->sb;
    uint64_t n = r->image_bytes >> bits;
    size_t lost = 0;
    struct lanyfs_geom g;
    struct lanyfs_entry e;
    if (sb->rootdir == 0 || sb->rootdir >= n ||
        lanyfs_geom_init(&g, bits, sb->addrlen, n, NULL) != LANYFS_OK ||
        lanyfs_image_pread_sectors(r->img, sb->rootdir << bits, buf, (size_t)1 << bits, &lost,
                                   NULL) != LANYFS_OK ||
        lost != 0)
        return false;
    if (!sc_probe_entry(&g, n, buf, &e) || !lanyfs_entry_is_dir(&e))
        return false;
    *out = e;
    return true;
}

static unsigned bits_from_root(struct scan_result *r)
{
    const struct lanyfs_super *sb = &r->sb;
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    uint64_t n = r->image_bytes >> sb->blockbits;
    if (sb->rootdir == 0 || sb->rootdir >= sb->blocks)
        return 0;
    if (sb->rootdir < n) {
        size_t lost = 0;
        if (lanyfs_image_pread_sectors(r->img, sb->rootdir << sb->blockbits, buf,
                                       LANYFS_HDR_WRCNT, &lost, NULL) != LANYFS_OK ||
            lost != 0 || buf[0] == LANYFS_TYPE_DIR)
            return 0;
    }
    bool own_fits = sb->blocks <= n;
    unsigned found = 0, exact = 0;
    for (unsigned b = LANYFS_BLOCKBITS_MIN; b <= LANYFS_BLOCKBITS_MAX; b++) {
        if (b == sb->blockbits || sb->blocks > r->image_bytes >> b)
            continue;
        bool fills = sb->blocks << b == r->image_bytes;
        bool one_bit = ((b ^ sb->blockbits) & ((b ^ sb->blockbits) - 1)) == 0;
        if (!fills && own_fits && !one_bit)
            continue;
        struct lanyfs_entry root;
        if (!root_dir_at(r, b, buf, &root))
            continue;
        if (!fills && own_fits &&
            (lanyfs_ts_is_unset(&sb->created) || !lanyfs_ts_same(&root.created, &sb->created)))
            continue;
        if (fills)
            exact = b;
        else
            found = found ? UINT_MAX : b;
    }
    if (exact)
        return exact;
    return found == UINT_MAX ? 0 : found;
}

/*
 * An address length byte that reads wrong but valid (one flipped bit turns
 * 2 into 3 or 6, 4 into 5) puts every slot of every chain and extender
 * elsewhere: the free list then lists blocks past the device, and the files
 * map blocks that are not theirs.  The free list tells the right one when
 * it agrees with 'freeblocks'.  Its chain links are 8 bytes whatever the
 * address length, so it is read from 'freehead' to its end: with one other
 * address length no slot names a block past the device and the chain
 * blocks with the blocks they list add up to 'freeblocks' exactly, while
 * with the superblock's some slot names such a block, and the files' data
 * maps do not fit the superblock's better (below); where no length's
 * count agrees, the files' data maps may tell it (below).  Without that
 * (no free list, a chain cut short or looping) the superblock's is kept,
 * and what reads wrong is reported block by block.
 * On a sound stick this reads one block: the head, whose slots all lie
 * below the device end.  Returns the address length to read with, or 0 to
 * keep the superblock's.
 */
static unsigned addrlen_from_free(struct scan_result *r, unsigned bits)
{
    const struct lanyfs_super *sb = &r->sb;
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    uint32_t bs = 1u << bits;
    uint64_t n = r->image_bytes >> bits;
    if (sb->blocks < n)
        n = sb->blocks;
    uint64_t nonzero[LANYFS_ADDRLEN_MAX + 1] = {0};
    bool wild[LANYFS_ADDRLEN_MAX + 1] = {false};
    uint64_t chains = 0, blk = sb->freehead, mark = 0; /* mark: a cycle's test (Brent) */
    /* The chain blocks are among the free blocks counted: no more of them
     * (and a loop is found within twice its length). */
    uint64_t most = sb->freeblocks < ((uint64_t)1 << 16) ? sb->freeblocks : (uint64_t)1 << 16;
    if (blk == 0 || sb->addrlen < LANYFS_ADDRLEN_MIN || sb->addrlen > LANYFS_ADDRLEN_MAX)
        return 0;
    while (blk != 0) {
        size_t lost = 0;
        if (blk >= n || chains >= most ||
            lanyfs_image_pread_sectors(r->img, blk << bits, buf, bs, &lost, NULL) != LANYFS_OK ||
            lost != 0 || (buf[0] != LANYFS_TYPE_CHAIN && buf[0] != LANYFS_TYPE_EXT) ||
            !sc_zero_from(buf, LANYFS_CH_RES4, LANYFS_CH_NEXT))
            return 0;
        for (unsigned a = LANYFS_ADDRLEN_MIN; a <= LANYFS_ADDRLEN_MAX; a++) {
            size_t cnt = (bs - LANYFS_CH_SLOTS) / a;
            for (size_t i = 0; i < cnt; i++) {
                uint64_t v = lanyfs_get_addr(buf + LANYFS_CH_SLOTS + i * a, a);
                nonzero[a] += v != 0;
                wild[a] |= v >= n;
            }
        }
        chains++;
        if (!wild[sb->addrlen])
            return 0;
        if ((chains & (chains - 1)) == 0)
            mark = blk;
        blk = lanyfs_get64(buf + LANYFS_CH_NEXT);
        if (blk == mark)
            return 0; /* a loop: no end to count to */
    }
    unsigned found = 0;
    for (unsigned a = LANYFS_ADDRLEN_MIN; a <= LANYFS_ADDRLEN_MAX; a++)
        if (a != sb->addrlen && !wild[a] && nonzero[a] + chains == sb->freeblocks)
            found = found ? UINT_MAX : a;
    if (found == UINT_MAX)
        return 0;
    /* The files' level-0 data maps, read with every length (earlier.c). */
    unsigned maps = 0, one = 0;
    uint64_t files = 0, fits[9] = {0};
    if (!sc_addrlen_from_maps(r, bits, sb->rootdir, &maps, &files, fits))
        return 0;
    /* A count may agree by chance: on a small device no short length reads
     * wild, and one flipped bit in a chain slot adds a byte that is not
     * zero to a count one off (correct:869 state 420, bit 7 of byte 24 of
     * chain block 2: 1-byte addresses, 256 blocks, 'freeblocks' one above
     * the list, and every file read wrong).  Where the files' maps fit the
     * superblock's length better, it stands. */
    if (found != 0)
        return fits[sb->addrlen] > fits[found] ? 0 : found;
    /* No count to agree with (the 2012 driver's 'freeblocks' drifts both
     * ways, SPEC-9.2): the maps tell the length when the list reads sound
     * with it, it fits half the files that decide or more, at least two,
     * and no other length fits any (the driver's maps of holes and extra
     * blocks fit none: 2012:839 state 1364, bit 0 of byte 14 of block 0
     * flipped, the address length went from 3 to 2, 'freeblocks' was 101
     * below the list, 9 of 14 files fit 3 and none another, and 17 files
     * were lost). */
    for (unsigned a = LANYFS_ADDRLEN_MIN; a <= LANYFS_ADDRLEN_MAX; a++)
        if (fits[a] != 0)
            one = one ? UINT_MAX : a;
    if (one == 0 || one == UINT_MAX || one == sb->addrlen || wild[one] || fits[one] < 2 ||
        fits[one] * 2 < files)
        return 0;
    return one;
}

bool sc_super_pass(struct scan_result *r)
{
    const struct lanyfs_super *sb = &r->sb;
    bool infer = false;
    const char *why = NULL;

    r->image_bytes = lanyfs_image_size(r->img);
    /* A geometry given by the caller: block 0 is another format's, or none. */
    if (r->geom_given)
        return sc_infer_geometry(r, "the geometry is given, not read from block 0");
    if (r->sb_lost) {
        /* Zeros, not the disk's fields: one finding, not one per field. */
        if (!sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_UNREADABLE}, NULL, NULL))
            return false;
        infer = true;
        why = "the superblock cannot be read";
    } else if (sb->magic != LANYFS_MAGIC) {
        if (!sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_BAD_MAGIC, .value = sb->magic},
                       NULL, NULL))
            return false;
        infer = true;
        why = "the superblock's magic is wrong";
    } else {
        if (sb->type != LANYFS_TYPE_SUPER &&
            !sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_BAD_TYPE, .value = sb->type},
                       NULL, NULL))
            return false;
        if (sb->major > LANYFS_VERSION_MAJOR &&
            !sc_report(r,
                       &(struct scan_finding){.code = lanyfs_super_major_flipped(sb->major)
                                                          ? SCAN_PR_SB_VERSION_FLIPPED
                                                          : SCAN_PR_SB_VERSION,
                                              .value = sb->major},
                       NULL, "%u.%u", sb->major, sb->minor))
            return false;
        if (sb->blockbits < LANYFS_BLOCKBITS_MIN || sb->blockbits > LANYFS_BLOCKBITS_MAX) {
            if (!sc_report(r,
                           &(struct scan_finding){.code = SCAN_PR_SB_BAD_BLOCKSIZE,
                                                  .value = sb->blockbits},
                           NULL, NULL))
                return false;
            infer = true;
            why = "the superblock's block size is invalid";
        }
        if (sb->addrlen < LANYFS_ADDRLEN_MIN || sb->addrlen > LANYFS_ADDRLEN_MAX) {
            if (!sc_report(r,
                           &(struct scan_finding){.code = SCAN_PR_SB_BAD_ADDRLEN,
                                                  .value = sb->addrlen},
                           NULL, NULL))
                return false;
            infer = true;
            why = why ? "the superblock's block size and address length are invalid"
                      : "the superblock's address length is invalid";
        }
    }
    if (infer)
        return sc_infer_geometry(r, why);

    struct lanyfs_error gerr;
    unsigned bits = sb->blockbits;
    if (lanyfs_geom_init(&r->g, bits, sb->addrlen, sb->blocks, &gerr) != LANYFS_OK)
        return sc_infer_geometry(r, "the superblock's geometry is invalid");
    unsigned root_bits = bits_from_root(r);
    if (root_bits != 0) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_BLOCKSIZE_WRONG,
                                              .block = sb->rootdir,
                                              .value = (uint64_t)1 << bits,
                                              .count = (uint64_t)1 << root_bits},
                       NULL, NULL))
            return false;
        /* The geometry is no longer block 0's: fsck writes a superblock
         * with it before anything else (as for one inferred). */
        bits = root_bits;
        r->inferred = true;
        if (lanyfs_geom_init(&r->g, bits, sb->addrlen, sb->blocks, &gerr) != LANYFS_OK)
            return sc_infer_geometry(r, "the superblock's geometry is invalid");
    }
    unsigned addrlen = sb->addrlen, free_addrlen = addrlen_from_free(r, bits);
    if (free_addrlen != 0) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_ADDRLEN_WRONG,
                                              .block = sb->freehead, .value = sb->addrlen,
                                              .count = free_addrlen},
                       NULL, NULL))
            return false;
        /* As for the block size: fsck writes a superblock with it first. */
        addrlen = free_addrlen;
        r->inferred = true;
        if (lanyfs_geom_init(&r->g, bits, addrlen, sb->blocks, &gerr) != LANYFS_OK)
            return sc_infer_geometry(r, "the superblock's geometry is invalid");
    }
    r->sb_usable = true;
    r->image_blocks = r->image_bytes >> r->g.blockbits;
    r->fs_blocks = sb->blocks;
    uint64_t dev = sb->blocks;
    uint64_t limit = addrlen >= 8 ? UINT64_MAX : (uint64_t)1 << (8 * addrlen);
    if (sb->blocks > limit) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_BLOCKS_OVER_ADDR,
                                              .value = sb->blocks, .count = limit},
                       NULL, NULL))
            return false;
        dev = limit;
    }
    if (sb->blocks < LANYFS_FORMAT_MIN_BLOCKS && r->image_blocks > sb->blocks) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_BLOCKS_SMALL,
                                              .value = sb->blocks, .count = r->image_blocks},
                       NULL, NULL))
            return false;
        dev = r->image_blocks < limit ? r->image_blocks : limit;
    } else if (dev > r->image_blocks) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_TRUNCATED, .value = sb->blocks,
                                              .count = r->image_blocks},
                       NULL, NULL))
            return false;
    } else if (r->image_blocks > dev) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_IMAGE_TAIL,
                                              .count = r->image_blocks - dev},
                       NULL, NULL))
            return false;
    }
    r->dev_blocks = dev;
    r->g.blocks = dev;
    r->nblocks = r->image_blocks;
    if (dev > r->image_blocks)
        r->nblocks = dev - r->image_blocks > SC_TRUNC_CELLS ? r->image_blocks + SC_TRUNC_CELLS
                                                             : dev;

    r->rootdir = sb->rootdir;
    r->freehead = sb->freehead;
    r->free_complete = true;
    if (sb->rootdir == 0 && sb->freehead == 0) {
        if (!sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_FORMAT_INTERRUPTED}, NULL,
                       NULL))
            return false;
        r->format_interrupted = true;
        r->free_complete = false;
    } else if (sb->rootdir == 0 || sb->rootdir >= dev) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_ROOTDIR_RANGE,
                                              .value = sb->rootdir},
                       NULL, NULL))
            return false;
        r->rootdir = 0;
    }
    if (sb->freehead >= dev) {
        if (!sc_report(r,
                       &(struct scan_finding){.code = SCAN_PR_SB_FREEHEAD_RANGE,
                                              .value = sb->freehead},
                       NULL, NULL))
            return false;
        r->freehead = flipped_head(r, sb->freehead, dev);
        r->free_complete = r->freehead != 0;
    }
    if (sb->freetail >= dev &&
        !sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_SB_FREETAIL_RANGE,
                                          .value = sb->freetail},
                   NULL, NULL))
        return false;
    if (sb->badblocks != 0 && sb->badblocks >= dev &&
        !sc_report(r,
                   &(struct scan_finding){.code = SCAN_PR_SB_BADBLOCKS_RANGE,
                                          .value = sb->badblocks},
                   NULL, NULL))
        return false;
    if (!check_time(r, "created", &sb->created) || !check_time(r, "updated", &sb->updated) ||
        !check_time(r, "checked", &sb->checked))
        return false;
    if (memchr(sb->label, 0, sizeof(sb->label)) == NULL &&
        !sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_LABEL_NO_NUL}, NULL, NULL))
        return false;
    return true;
}

/*
 * A 'blocks' beyond the image is a copy cut short, or a device that lost its
 * tail, when the walks met a block past the image's end: a tree pointer, an
 * extender or chain slot, a chain link (SB_TRUNCATED, nothing is repaired).
 * The formatter lists every block of the device in its free list, so a lost
 * tail leaves such links on all but a stick whose last blocks were handed
 * out and then leaked.  When none was met and the free list was walked to its
 * end, the field is what is wrong (a bit flipped on the medium, a bad write):
 * the finding becomes SB_BLOCKS_LARGE, and the device ends with the image.
 */
void sc_super_settle(struct scan_result *r)
{
    if (r->inferred || r->dev_blocks <= r->image_blocks || r->past_image_refs != 0 ||
        !r->free_complete)
        return;
    for (size_t i = 0; i < r->nfindings; i++)
        if (r->findings[i].code == SCAN_PR_SB_TRUNCATED)
            r->findings[i].code = SCAN_PR_SB_BLOCKS_LARGE;
    r->dev_blocks = r->image_blocks;
    r->g.blocks = r->image_blocks;
    r->nblocks = r->image_blocks;
}
