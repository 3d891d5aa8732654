/*
 * superblock.c -- decode, encode and judge block 0 (SPEC-§3).
 *
 * lanyfs_super_check lists every problem it finds, each naming its field,
 * instead of stopping at the first: `lanyfs info` shows them all, and the
 * open path refuses on the first fatal one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lanyfs.h"

void lanyfs_super_decode(struct lanyfs_super *sb, const uint8_t *b)
{
    memset(sb, 0, sizeof(*sb));
    sb->type = b[LANYFS_HDR_TYPE];
    sb->res1 = b[LANYFS_HDR_RES1];
    sb->wrcnt = lanyfs_get16(b + LANYFS_HDR_WRCNT);
    sb->magic = lanyfs_get32(b + LANYFS_SB_MAGIC);
    sb->major = b[LANYFS_SB_MAJOR];
    sb->minor = b[LANYFS_SB_MINOR];
    sb->blockbits = b[LANYFS_SB_BLOCKBITS];
    sb->addrlen = b[LANYFS_SB_ADDRLEN];
    sb->res_odd[0] = b[LANYFS_SB_RES9];
    sb->res_odd[1] = b[LANYFS_SB_RES11];
    sb->res_odd[2] = b[LANYFS_SB_RES13];
    sb->res_odd[3] = b[LANYFS_SB_RES15];
    sb->rootdir = lanyfs_get64(b + LANYFS_SB_ROOTDIR);
    sb->blocks = lanyfs_get64(b + LANYFS_SB_BLOCKS);
    sb->freehead = lanyfs_get64(b + LANYFS_SB_FREEHEAD);
    sb->freetail = lanyfs_get64(b + LANYFS_SB_FREETAIL);
    sb->freeblocks = lanyfs_get64(b + LANYFS_SB_FREEBLOCKS);
    lanyfs_ts_decode(&sb->created, b + LANYFS_SB_CREATED);
    lanyfs_ts_decode(&sb->updated, b + LANYFS_SB_UPDATED);
    lanyfs_ts_decode(&sb->checked, b + LANYFS_SB_CHECKED);
    sb->badblocks = lanyfs_get64(b + LANYFS_SB_BADBLOCKS);
    memcpy(sb->res112, b + LANYFS_SB_RES112, sizeof(sb->res112));
    memcpy(sb->label, b + LANYFS_SB_LABEL, sizeof(sb->label));
}

void lanyfs_super_encode(const struct lanyfs_super *sb, uint8_t *b)
{
    b[LANYFS_HDR_TYPE] = sb->type;
    b[LANYFS_HDR_RES1] = sb->res1;
    lanyfs_put16(b + LANYFS_HDR_WRCNT, sb->wrcnt);
    lanyfs_put32(b + LANYFS_SB_MAGIC, sb->magic);
    b[LANYFS_SB_MAJOR] = sb->major;
    b[LANYFS_SB_MINOR] = sb->minor;
    b[LANYFS_SB_BLOCKBITS] = sb->blockbits;
    b[LANYFS_SB_ADDRLEN] = sb->addrlen;
    b[LANYFS_SB_RES9] = sb->res_odd[0];
    b[LANYFS_SB_RES11] = sb->res_odd[1];
    b[LANYFS_SB_RES13] = sb->res_odd[2];
    b[LANYFS_SB_RES15] = sb->res_odd[3];
    lanyfs_put64(b + LANYFS_SB_ROOTDIR, sb->rootdir);
    lanyfs_put64(b + LANYFS_SB_BLOCKS, sb->blocks);
    lanyfs_put64(b + LANYFS_SB_FREEHEAD, sb->freehead);
    lanyfs_put64(b + LANYFS_SB_FREETAIL, sb->freetail);
    lanyfs_put64(b + LANYFS_SB_FREEBLOCKS, sb->freeblocks);
    lanyfs_ts_encode(&sb->created, b + LANYFS_SB_CREATED);
    lanyfs_ts_encode(&sb->updated, b + LANYFS_SB_UPDATED);
    lanyfs_ts_encode(&sb->checked, b + LANYFS_SB_CHECKED);
    lanyfs_put64(b + LANYFS_SB_BADBLOCKS, sb->badblocks);
    memcpy(b + LANYFS_SB_RES112, sb->res112, sizeof(sb->res112));
    memcpy(b + LANYFS_SB_LABEL, sb->label, sizeof(sb->label));
}

void lanyfs_super_label(const struct lanyfs_super *sb, char *buf, size_t len)
{
    if (len == 0)
        return;
    size_t n = strnlen((const char *)sb->label, sizeof(sb->label));
    if (n > len - 1)
        n = len - 1;
    memcpy(buf, sb->label, n);
    buf[n] = '\0';
}

struct problems {
    struct lanyfs_sb_problem *out;
    size_t max;
    size_t n;
};

__attribute__((format(printf, 5, 6))) static void add(struct problems *p, enum lanyfs_err code,
                                                       const char *field, bool fatal,
                                                       const char *fmt, ...)
{
    if (p->n < p->max) {
        struct lanyfs_sb_problem *pr = &p->out[p->n];
        pr->code = code;
        pr->field = field;
        pr->fatal = fatal;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(pr->msg, sizeof(pr->msg), fmt, ap);
        va_end(ap);
    }
    p->n++;
}

/* A pointer that must name a block inside the device (or 0 when allowed). */
static void check_ptr(struct problems *p, const char *field, uint64_t v, uint64_t blocks,
                      bool zero_ok)
{
    if (v == 0) {
        if (!zero_ok)
            add(p, LANYFS_E_RANGE, field, true, "superblock field '%s' is 0 (no block)", field);
        return;
    }
    if (v >= blocks)
        add(p, LANYFS_E_RANGE, field, true,
            "superblock field '%s' = %" PRIu64 " lies beyond the device end "
            "('blocks' = %" PRIu64 ")",
            field, v, blocks);
}

size_t lanyfs_super_check(const struct lanyfs_super *sb, uint64_t image_bytes,
                          struct lanyfs_sb_problem *out, size_t max)
{
    struct problems p = {out, max, 0};

    if (sb->magic != LANYFS_MAGIC) {
        add(&p, LANYFS_E_BADMAGIC, "magic", true,
            "superblock field 'magic' is 0x%08" PRIx32 ", not 0x%08x (\"LANY\")", sb->magic,
            LANYFS_MAGIC);
        return p.n; /* nothing else means anything then */
    }
    if (sb->type != LANYFS_TYPE_SUPER)
        add(&p, LANYFS_E_BADTYPE, "type", false,
            "superblock field 'type' is 0x%02x, not 0xd0", sb->type);
    if (lanyfs_super_major_flipped(sb->major))
        add(&p, LANYFS_E_VERSION, "major", true,
            "superblock version %u.%u is 1.%u with one bit flipped in the major (LanyFS has "
            "no other major; fsck-lanyfs sets it back)", sb->major, sb->minor, sb->minor);
    else if (sb->major > LANYFS_VERSION_MAJOR)
        add(&p, LANYFS_E_VERSION, "major", true,
            "superblock version %u.%u is newer than 1.x, which this tool reads", sb->major,
            sb->minor);
    bool geom_ok = true;
    if (sb->blockbits < LANYFS_BLOCKBITS_MIN || sb->blockbits > LANYFS_BLOCKBITS_MAX) {
        add(&p, LANYFS_E_GEOMETRY, "blocksize", true,
            "superblock field 'blocksize' is %u, outside 9..12 (512..4096 bytes)", sb->blockbits);
        geom_ok = false;
    }
    if (sb->addrlen < LANYFS_ADDRLEN_MIN || sb->addrlen > LANYFS_ADDRLEN_MAX) {
        add(&p, LANYFS_E_GEOMETRY, "addrlen", true,
            "superblock field 'addrlen' is %u, outside 1..8 bytes", sb->addrlen);
        geom_ok = false;
    }
    if (!geom_ok)
        return p.n;

    uint64_t limit = sb->addrlen >= 8 ? UINT64_MAX : (uint64_t)1 << (8 * sb->addrlen);
    uint64_t image_blocks = image_bytes >> sb->blockbits;
    if (sb->blocks > limit && sb->addrlen < 8)
        add(&p, LANYFS_E_GEOMETRY, "blocks", true,
            "superblock field 'blocks' = %" PRIu64 " exceeds what %u-byte addresses reach "
            "(%" PRIu64 ")",
            sb->blocks, sb->addrlen, limit);
    if (sb->blocks < 16) {
        if (image_bytes != 0 && image_blocks > sb->blocks)
            add(&p, LANYFS_E_GEOMETRY, "blocks", true,
                "superblock field 'blocks' = %" PRIu64 " is too small: the image holds "
                "%" PRIu64 " blocks and a filesystem has at least 16%s",
                sb->blocks, image_blocks,
                sb->addrlen == 8 && sb->blocks == 1
                    ? " (the 2012 formatter wrote 1 for 64-bit addresses)"
                    : "");
        else
            add(&p, LANYFS_E_GEOMETRY, "blocks", true,
                "superblock field 'blocks' = %" PRIu64 " is too small: a filesystem has at "
                "least 16",
                sb->blocks);
    }
    if (image_bytes != 0 && sb->blocks > image_blocks)
        add(&p, LANYFS_E_TRUNCATED, "blocks", true,
            "superblock field 'blocks' = %" PRIu64 " but the image holds only %" PRIu64
            " blocks of %u bytes: the image is truncated",
            sb->blocks, image_blocks, 1u << sb->blockbits);

    check_ptr(&p, "rootdir", sb->rootdir, sb->blocks, false);
    /* An empty free list (a full device) has freehead = freetail = 0. */
    check_ptr(&p, "freehead", sb->freehead, sb->blocks, true);
    check_ptr(&p, "freetail", sb->freetail, sb->blocks, true);
    if (sb->badblocks != 0 && sb->badblocks >= sb->blocks)
        add(&p, LANYFS_E_RANGE, "badblocks", false,
            "superblock field 'badblocks' = %" PRIu64 " lies beyond the device end "
            "('blocks' = %" PRIu64 ")",
            sb->badblocks, sb->blocks);
    return p.n;
}

bool lanyfs_super_major_flipped(uint8_t major)
{
    unsigned d = (unsigned)major ^ LANYFS_VERSION_MAJOR;
    return major > LANYFS_VERSION_MAJOR && (d & (d - 1)) == 0;
}
