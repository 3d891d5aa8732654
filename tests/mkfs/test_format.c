/*
 * test_format.c -- the formatter library (format.c), checked from the disk.
 *
 * Every test formats a sparse image file in a private temporary directory
 * and then reads the result back through the core's readers, never through
 * the formatter's own plan alone: the free list is walked block by block
 * and every block 2 .. blocks-1 must be listed exactly once (chain blocks
 * included), in the correct mode with chain type 0x70 and the last slot of
 * every chain block empty, with freeblocks, freetail and the root directory
 * exactly as the format says.  The 2012 mode is checked for its quirks
 * (type 0x80, full slots, blocks = 1 for 64-bit addresses); the byte-exact
 * comparison with the reference images is corpus.sh's job.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lanyfs.h"

static char tmpdir[4096];
static char image_path[4200];
static struct lanyfs_ts fixed_now;

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/lanyfs-format-XXXXXX", base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(image_path, sizeof(image_path), "%s/image", tmpdir);
    /* 2026-12-03T01:02:15Z, the corpus time, with nanoseconds and an offset. */
    lanyfs_ts_from_time(&fixed_now, 1796259735, 123456789, 60);
}

static void teardown(void)
{
    unlink(image_path);
    rmdir(tmpdir);
}

/* A fresh sparse file of bytes bytes, optionally filled with fill. */
static void make_file(uint64_t bytes, int fill)
{
    int fd = open(image_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)bytes), 0);
    if (fill >= 0) {
        uint8_t buf[4096];
        memset(buf, fill, sizeof(buf));
        for (uint64_t off = 0; off < bytes; off += sizeof(buf)) {
            size_t n = bytes - off < sizeof(buf) ? (size_t)(bytes - off) : sizeof(buf);
            ck_assert_int_eq(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
        }
    }
    close(fd);
}

static void read_raw(uint64_t off, void *buf, size_t len)
{
    int fd = open(image_path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pread(fd, buf, len, (off_t)off), (ssize_t)len);
    close(fd);
}

static enum lanyfs_err format_file(const struct lanyfs_format_opts *o, struct lanyfs_error *err)
{
    struct lanyfs_image *img;
    enum lanyfs_err rc = lanyfs_image_open(image_path, LANYFS_IMAGE_RDWR, &img, err);
    ck_assert_int_eq(rc, LANYFS_OK);
    rc = lanyfs_format(img, o, err);
    lanyfs_image_close(img);
    return rc;
}

static struct lanyfs_format_opts opts(unsigned bits, unsigned alen, bool compat)
{
    struct lanyfs_format_opts o = {
        .blockbits = bits,
        .addrlen = alen,
        .label = LANYFS_FORMAT_DEFAULT_LABEL,
        .label_len = strlen(LANYFS_FORMAT_DEFAULT_LABEL),
        .compat2012 = compat,
        .now = &fixed_now,
    };
    return o;
}

static bool ts_equal(const struct lanyfs_ts *a, const struct lanyfs_ts *b)
{
    uint8_t x[LANYFS_TS_SIZE], y[LANYFS_TS_SIZE];
    lanyfs_ts_encode(a, x);
    lanyfs_ts_encode(b, y);
    return memcmp(x, y, sizeof(x)) == 0;
}

struct walk {
    uint64_t chains;      /* chain blocks met */
    uint64_t listed;      /* non-zero slots met */
    uint64_t last_chain;  /* the chain block with next = 0 */
};

/*
 * Walk the free list of an opened image and check it covers blocks
 * 2 .. blocks-1 exactly once.  chain_type is the type every chain block
 * must carry; last_slot_empty whether slot chainmax-1 must be 0.
 */
static struct walk walk_free_list(struct lanyfs_fs *fs, uint8_t chain_type, bool last_slot_empty)
{
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    struct walk w = {0, 0, 0};
    uint8_t *seen = calloc((size_t)sb->blocks, 1);
    uint8_t *buf = malloc(g->blocksize);
    ck_assert_ptr_nonnull(seen);
    ck_assert_ptr_nonnull(buf);
    struct lanyfs_error err;

    uint64_t chain = sb->freehead;
    while (chain != 0) {
        ck_assert_uint_ge(chain, 2);
        ck_assert_uint_lt(chain, sb->blocks);
        ck_assert_msg(!seen[chain], "chain block %llu listed twice", (unsigned long long)chain);
        seen[chain] = 1;
        w.chains++;
        ck_assert_int_eq(lanyfs_fs_read_block(fs, chain, buf, &err), LANYFS_OK);
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, buf);
        ck_assert_uint_eq(h.type, chain_type);
        ck_assert_uint_eq(h.wrcnt, 1);
        ck_assert_uint_eq(lanyfs_get32(buf + LANYFS_CH_RES4), 0);
        uint64_t expect = chain + 1; /* slots list the blocks right after the chain block */
        bool ended = false;
        /* Per-slot checks abort only on failure: a passing ck_assert costs a write(2). */
        for (uint32_t i = 0; i < g->chainmax; i++) {
            uint64_t s = lanyfs_chain_slot(g, buf, i);
            if (i == g->chainmax - 1 && last_slot_empty && s != 0)
                ck_abort_msg("chain block %llu: last slot holds %llu", (unsigned long long)chain,
                             (unsigned long long)s);
            if (s == 0) {
                ended = true;
                continue;
            }
            if (ended)
                ck_abort_msg("chain block %llu: slot %u filled after an empty one",
                             (unsigned long long)chain, i);
            if (s != expect || s >= sb->blocks)
                ck_abort_msg("chain block %llu: slot %u holds %llu, want %llu (blocks %llu)",
                             (unsigned long long)chain, i, (unsigned long long)s,
                             (unsigned long long)expect, (unsigned long long)sb->blocks);
            if (seen[s])
                ck_abort_msg("block %llu listed twice", (unsigned long long)s);
            seen[s] = 1;
            w.listed++;
            expect++;
        }
        /* Slot bytes beyond chainmax * addrlen are zero. */
        for (size_t b = LANYFS_CH_SLOTS + (size_t)g->chainmax * g->addrlen; b < g->blocksize; b++)
            if (buf[b] != 0)
                ck_abort_msg("chain block %llu: byte %zu is not zero", (unsigned long long)chain,
                             b);
        if (h.next != 0)
            ck_assert_uint_eq(h.next, expect); /* the next chain block follows its list */
        else
            w.last_chain = chain;
        chain = h.next;
    }
    ck_assert(!seen[0]);
    ck_assert(!seen[1]);
    for (uint64_t b = 2; b < sb->blocks; b++)
        if (!seen[b])
            ck_abort_msg("block %llu is not in the free list", (unsigned long long)b);
    free(buf);
    free(seen);
    return w;
}

/* The root directory: an empty LANYFSROOT made at fixed_now. */
static void check_root(struct lanyfs_fs *fs, const struct lanyfs_ts *now)
{
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    struct lanyfs_entry e;
    struct lanyfs_error err;
    ck_assert_uint_eq(sb->rootdir, 1);
    ck_assert_int_eq(lanyfs_fs_read_entry(fs, sb->rootdir, &e, &err), LANYFS_OK);
    ck_assert_uint_eq(e.type, LANYFS_TYPE_DIR);
    ck_assert_uint_eq(e.wrcnt, 1);
    ck_assert_uint_eq(e.attr, 0);
    ck_assert_uint_eq(e.left, 0);
    ck_assert_uint_eq(e.right, 0);
    ck_assert_uint_eq(e.subtree, 0);
    ck_assert_uint_eq(e.size, 0);
    ck_assert_uint_eq(e.name_len, strlen(LANYFS_ROOT_NAME));
    ck_assert_mem_eq(e.name, LANYFS_ROOT_NAME, sizeof(LANYFS_ROOT_NAME));
    ck_assert(ts_equal(&e.created, now));
    ck_assert(ts_equal(&e.modified, now));

    struct lanyfs_dirlist l;
    ck_assert_int_eq(lanyfs_dir_list(fs, sb->rootdir, &l, &err), LANYFS_OK);
    ck_assert_uint_eq(l.count, 0);
    ck_assert_uint_eq(l.problems, 0);
    lanyfs_dirlist_free(&l);
}

/*
 * Format a device of dev_bytes in the correct mode and check everything.
 * Returns the blocks the superblock names.
 */
static uint64_t check_default(unsigned bits, unsigned alen, uint64_t dev_bytes)
{
    struct lanyfs_format_opts o = opts(bits, alen, false);
    struct lanyfs_format_layout plan;
    struct lanyfs_error err;
    make_file(dev_bytes, -1);
    ck_assert_int_eq(lanyfs_format_plan(&o, dev_bytes, &plan, &err), LANYFS_OK);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);

    uint64_t whole = dev_bytes >> bits;
    uint64_t cap = alen == 8 ? UINT64_MAX : (uint64_t)1 << (8 * alen);
    uint64_t blocks = whole < cap ? whole : cap;

    struct lanyfs_fs *fs;
    ck_assert_msg(lanyfs_fs_open(image_path, 0, &fs, &err) == LANYFS_OK, "open: %s", err.msg);
    const struct lanyfs_sb_problem *probs;
    ck_assert_uint_eq(lanyfs_fs_problems(fs, &probs), 0);
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    ck_assert_uint_eq(sb->type, LANYFS_TYPE_SUPER);
    ck_assert_uint_eq(sb->wrcnt, 2);
    ck_assert_uint_eq(sb->magic, LANYFS_MAGIC);
    ck_assert_uint_eq(sb->major, 1);
    ck_assert_uint_eq(sb->minor, 4);
    ck_assert_uint_eq(sb->blockbits, bits);
    ck_assert_uint_eq(sb->addrlen, alen);
    ck_assert_uint_eq(sb->blocks, blocks);
    ck_assert_uint_eq(sb->freehead, 2);
    ck_assert_uint_eq(sb->badblocks, 0);
    ck_assert(ts_equal(&sb->created, &fixed_now));
    ck_assert(ts_equal(&sb->updated, &fixed_now));
    uint8_t raw[LANYFS_SB_USED];
    read_raw(0, raw, sizeof(raw));
    static const uint8_t zero16[LANYFS_TS_SIZE];
    ck_assert_mem_eq(raw + LANYFS_SB_CHECKED, zero16, LANYFS_TS_SIZE);
    char label[LANYFS_NAME_FIELD + 1];
    lanyfs_super_label(sb, label, sizeof(label));
    ck_assert_str_eq(label, LANYFS_FORMAT_DEFAULT_LABEL);

    struct walk w = walk_free_list(fs, LANYFS_TYPE_CHAIN, true);
    ck_assert_uint_eq(w.chains + w.listed, blocks - 2);
    ck_assert_uint_eq(sb->freeblocks, blocks - 2);
    ck_assert_uint_eq(sb->freetail, w.last_chain);
    check_root(fs, &fixed_now);

    /* The plan told the truth. */
    ck_assert_uint_eq(plan.blocks, blocks);
    ck_assert_uint_eq(plan.device_blocks, whole);
    ck_assert_uint_eq(plan.overhead, dev_bytes - (whole << bits));
    ck_assert(plan.capped == (whole > cap));
    ck_assert_uint_eq(plan.chain_blocks, w.chains);
    ck_assert_uint_eq(plan.freetail, sb->freetail);
    ck_assert_uint_eq(plan.freeblocks, sb->freeblocks);
    ck_assert_uint_eq(plan.slots_used, lanyfs_fs_geom(fs)->chainmax - 1);
    lanyfs_fs_close(fs);
    return blocks;
}

/* Every block size times every address length, at sizes that end the list differently. */
START_TEST(test_default_all_geometries)
{
    unsigned bits = 9 + (unsigned)_i / 8, alen = 1 + (unsigned)_i % 8;
    uint64_t bs = 1u << bits;
    uint64_t span = (bs - LANYFS_CH_SLOTS) / alen; /* chainmax - 1 listed, plus the chain block */
    uint64_t sizes[] = {
        16,               /* the minimum */
        17,
        2 + span,         /* the first chain block exactly full */
        3 + span,         /* a second chain block that lists nothing */
        2 + 3 * span,     /* three full chain blocks */
        3 + 3 * span,     /* and an empty fourth */
        5 + 2 * span,     /* a last chain block with two slots */
    };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t blocks = check_default(bits, alen, sizes[i] * bs);
        if (alen > 1 || sizes[i] <= 256)
            ck_assert_uint_eq(blocks, sizes[i]);
        else
            ck_assert_uint_eq(blocks, 256); /* 8-bit addresses cap the device */
    }
    /* A trailing partial block is not used. */
    ck_assert_uint_eq(check_default(bits, alen, 40 * bs + bs / 2 + 1), 40);
}
END_TEST

/* Address lengths that cap the device: 1 byte (256 blocks) and 2 bytes (65536). */
START_TEST(test_default_capped)
{
    ck_assert_uint_eq(check_default(9, 1, 1000 * 512), 256);
    ck_assert_uint_eq(check_default(12, 1, 257 * 4096), 256);
    ck_assert_uint_eq(check_default(9, 2, (65536 + 20) * 512), 65536);
    ck_assert_uint_eq(check_default(9, 2, 65536 * 512), 65536);
}
END_TEST

/* 8-byte addresses have no cap in the correct mode (no 1 << 64). */
START_TEST(test_default_addr64_uncapped)
{
    struct lanyfs_format_opts o = opts(12, 8, false);
    struct lanyfs_format_layout plan;
    ck_assert_int_eq(lanyfs_format_plan(&o, 512 * 4096, &plan, NULL), LANYFS_OK);
    ck_assert(!plan.capped);
    ck_assert_uint_eq(plan.blocks, 512);
    ck_assert_uint_eq(check_default(12, 8, 512 * 4096), 512);
    /* The largest device the plan can be asked about. */
    ck_assert_int_eq(lanyfs_format_plan(&o, UINT64_MAX, &plan, NULL), LANYFS_OK);
    ck_assert_uint_eq(plan.blocks, UINT64_MAX >> 12);
    ck_assert_uint_eq(plan.freeblocks, plan.blocks - 2);
    ck_assert_uint_le(plan.freetail, plan.blocks - 1);
}
END_TEST

/* The 2012 mode: type 0x80, every slot filled, the rest as the format says. */
START_TEST(test_compat_full_slots)
{
    struct lanyfs_format_opts o = opts(9, 4, true);
    struct lanyfs_error err;
    make_file(512 * 512, -1);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);
    struct lanyfs_fs *fs;
    ck_assert_int_eq(lanyfs_fs_open(image_path, 0, &fs, &err), LANYFS_OK);
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    struct walk w = walk_free_list(fs, LANYFS_TYPE_EXT, false);
    ck_assert_uint_eq(w.chains, 5); /* 510 blocks in spans of 124 + 1: the corpus b512-a32 */
    ck_assert_uint_eq(sb->freetail, 502);
    ck_assert_uint_eq(sb->freeblocks, 510);
    /* The last slot of a full chain block is filled. */
    uint8_t buf[512];
    ck_assert_int_eq(lanyfs_fs_read_block(fs, 2, buf, &err), LANYFS_OK);
    ck_assert_uint_eq(lanyfs_chain_slot(lanyfs_fs_geom(fs), buf, 123), 126);
    ck_assert_uint_eq(lanyfs_get64(buf + LANYFS_CH_NEXT), 127);
    /* Whole seconds in compat mode, the offset kept. */
    ck_assert_uint_eq(sb->created.nsec, 0);
    ck_assert_int_eq(sb->created.offset, 60);
    struct lanyfs_ts whole = fixed_now;
    whole.nsec = 0;
    check_root(fs, &whole);
    lanyfs_fs_close(fs);
}
END_TEST

/* The 2012 cap bug: 8-byte addresses give blocks = 1 (SPEC-§9.11), as in b4096-a64. */
START_TEST(test_compat_addr64_bug)
{
    struct lanyfs_format_opts o = opts(12, 8, true);
    struct lanyfs_format_layout plan;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_format_plan(&o, 512 * 4096, &plan, &err), LANYFS_OK);
    ck_assert(plan.capped);
    ck_assert_uint_eq(plan.cap, 1);
    ck_assert_uint_eq(plan.blocks, 1);
    make_file(512 * 4096, -1);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);

    struct lanyfs_fs *fs;
    /* Not a usable filesystem: a plain open refuses it ... */
    ck_assert_int_ne(lanyfs_fs_open(image_path, 0, &fs, &err), LANYFS_OK);
    /* ... a forced one shows what the 2012 formatter wrote. */
    ck_assert_int_eq(lanyfs_fs_open(image_path, LANYFS_OPEN_FORCE, &fs, &err), LANYFS_OK);
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    ck_assert_uint_eq(sb->blocks, 1);
    ck_assert_uint_eq(sb->rootdir, 1);
    ck_assert_uint_eq(sb->freehead, 2);
    ck_assert_uint_eq(sb->freetail, 2);
    ck_assert_uint_eq(sb->freeblocks, 1);
    uint8_t buf[4096];
    ck_assert_int_eq(lanyfs_fs_read_raw(fs, 2, buf, &err), LANYFS_OK);
    ck_assert_uint_eq(buf[LANYFS_HDR_TYPE], LANYFS_TYPE_EXT);
    ck_assert_uint_eq(lanyfs_get16(buf + LANYFS_HDR_WRCNT), 1);
    for (size_t i = 4; i < sizeof(buf); i++)
        if (buf[i] != 0) /* next 0, no slot */
            ck_abort_msg("chain block 2: byte %zu is not zero", i);
    ck_assert_int_eq(lanyfs_fs_read_raw(fs, 1, buf, &err), LANYFS_OK);
    ck_assert_uint_eq(buf[LANYFS_HDR_TYPE], LANYFS_TYPE_DIR);
    lanyfs_fs_close(fs);
}
END_TEST

/* The caps of the 2012 mode agree with the correct mode below 8 bytes. */
START_TEST(test_compat_cap_small)
{
    struct lanyfs_format_opts o = opts(9, 1, true);
    struct lanyfs_format_layout plan;
    ck_assert_int_eq(lanyfs_format_plan(&o, 512 * 512, &plan, NULL), LANYFS_OK);
    ck_assert(plan.capped);
    ck_assert_uint_eq(plan.blocks, 256);
    ck_assert_uint_eq(plan.freetail, 2);
    ck_assert_uint_eq(plan.freeblocks, 254);
    o.addrlen = 7;
    ck_assert_int_eq(lanyfs_format_plan(&o, 512 * 512, &plan, NULL), LANYFS_OK);
    ck_assert(!plan.capped);
    ck_assert_uint_eq(plan.cap, (uint64_t)1 << 56);
}
END_TEST

struct trace {
    enum lanyfs_format_stage stages[64];
    uint64_t pos[64];
    size_t n;
    uint8_t sb_at_root[LANYFS_SB_USED]; /* block 0 as the root directory is about to be written */
    uint8_t sb_at_done[LANYFS_SB_USED];
};

static void on_stage(void *ctx, enum lanyfs_format_stage stage, uint64_t pos, uint64_t blocks)
{
    struct trace *t = ctx;
    ck_assert_uint_eq(blocks, 512);
    if (t->n < 64) {
        t->stages[t->n] = stage;
        t->pos[t->n] = pos;
        t->n++;
    }
    if (stage == LANYFS_FORMAT_ROOT)
        read_raw(0, t->sb_at_root, sizeof(t->sb_at_root));
    if (stage == LANYFS_FORMAT_DONE)
        read_raw(0, t->sb_at_done, sizeof(t->sb_at_done));
}

/* Stages in order, the positions the 2012 progress line shows, the provisional superblock. */
START_TEST(test_progress_and_provisional_super)
{
    struct trace t;
    memset(&t, 0, sizeof(t));
    struct lanyfs_format_opts o = opts(9, 2, true);
    o.progress = on_stage;
    o.progress_ctx = &t;
    struct lanyfs_error err;
    make_file(512 * 512, -1);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);

    /* b512-a16 printed "3/512 252/512 501/512 512/512". */
    static const enum lanyfs_format_stage want[] = {
        LANYFS_FORMAT_SUPER_FIRST, LANYFS_FORMAT_ROOT,       LANYFS_FORMAT_FREE_START,
        LANYFS_FORMAT_FREE_CHAIN,  LANYFS_FORMAT_FREE_CHAIN, LANYFS_FORMAT_FREE_CHAIN,
        LANYFS_FORMAT_FREE_DONE,   LANYFS_FORMAT_SUPER_FINAL, LANYFS_FORMAT_DONE,
    };
    ck_assert_uint_eq(t.n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < t.n; i++)
        ck_assert_int_eq(t.stages[i], want[i]);
    ck_assert_uint_eq(t.pos[1], 1);
    ck_assert_uint_eq(t.pos[3], 3);
    ck_assert_uint_eq(t.pos[4], 252);
    ck_assert_uint_eq(t.pos[5], 501);
    ck_assert_uint_eq(t.pos[6], 512);

    /* Interrupted after the first write: recognisable by rootdir = freehead = 0. */
    struct lanyfs_super sb;
    lanyfs_super_decode(&sb, t.sb_at_root);
    ck_assert_uint_eq(sb.magic, LANYFS_MAGIC);
    ck_assert_uint_eq(sb.wrcnt, 1);
    ck_assert_uint_eq(sb.blocks, 512);
    ck_assert_uint_eq(sb.rootdir, 0);
    ck_assert_uint_eq(sb.freehead, 0);
    ck_assert_uint_eq(sb.freetail, 0);
    ck_assert_uint_eq(sb.freeblocks, 0);
    lanyfs_super_decode(&sb, t.sb_at_done);
    ck_assert_uint_eq(sb.wrcnt, 2);
    ck_assert_uint_eq(sb.rootdir, 1);
    ck_assert_uint_eq(sb.freehead, 2);
    ck_assert_uint_eq(sb.freetail, 500);
    ck_assert_uint_eq(sb.freeblocks, 510);
}
END_TEST

/* Free blocks keep their old contents; only superblock, root and chain blocks are written. */
START_TEST(test_free_blocks_untouched)
{
    struct lanyfs_format_opts o = opts(9, 4, false);
    struct lanyfs_error err;
    make_file(300 * 512 + 100, 0xAA);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);
    uint8_t buf[512];
    /* chainmax 124, 123 used: chain blocks 2, 126, 250. */
    static const uint64_t chains[] = {2, 126, 250};
    for (uint64_t b = 0; b < 300; b++) {
        read_raw(b * 512, buf, sizeof(buf));
        bool written = b <= 1 || b == chains[0] || b == chains[1] || b == chains[2];
        if (written) {
            ck_assert_uint_eq(buf[511], 0); /* zero-padded whole block */
        } else {
            for (size_t i = 0; i < sizeof(buf); i++)
                if (buf[i] != 0xAA)
                    ck_abort_msg("free block %llu was written (byte %zu)",
                                 (unsigned long long)b, i);
        }
    }
    read_raw(300 * 512, buf, 100);
    for (size_t i = 0; i < 100; i++)
        if (buf[i] != 0xAA)
            ck_abort_msg("the overhead was written (byte %zu)", i);
    struct stat st;
    ck_assert_int_eq(stat(image_path, &st), 0);
    ck_assert_int_eq(st.st_size, 300 * 512 + 100);
}
END_TEST

START_TEST(test_refusals)
{
    struct lanyfs_format_opts o = opts(12, 4, false);
    struct lanyfs_format_layout plan;
    struct lanyfs_error err;

    /* Fewer than 16 whole blocks, in either mode; nothing is written. */
    make_file(16 * 4096 - 1, 0x55);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_E_GEOMETRY);
    ck_assert_ptr_nonnull(strstr(err.msg, "15 whole blocks"));
    o.compat2012 = true;
    ck_assert_int_eq(format_file(&o, &err), LANYFS_E_GEOMETRY);
    uint8_t b0[16];
    read_raw(0, b0, sizeof(b0));
    for (size_t i = 0; i < sizeof(b0); i++)
        ck_assert_uint_eq(b0[i], 0x55);
    o.compat2012 = false;
    ck_assert_int_eq(lanyfs_format_plan(&o, 16 * 4096, &plan, &err), LANYFS_OK);

    /* Geometry outside the format. */
    o.blockbits = 8;
    ck_assert_int_eq(lanyfs_format_plan(&o, 1 << 20, &plan, &err), LANYFS_E_GEOMETRY);
    o.blockbits = 13;
    ck_assert_int_eq(lanyfs_format_plan(&o, 1 << 20, &plan, &err), LANYFS_E_GEOMETRY);
    o.blockbits = 9;
    o.addrlen = 0;
    ck_assert_int_eq(lanyfs_format_plan(&o, 1 << 20, &plan, &err), LANYFS_E_GEOMETRY);
    o.addrlen = 9;
    ck_assert_int_eq(lanyfs_format_plan(&o, 1 << 20, &plan, &err), LANYFS_E_GEOMETRY);
    o.addrlen = 4;

    /* A label over 255 bytes only in compat mode. */
    char label[300];
    memset(label, 'x', sizeof(label));
    o.label = label;
    o.label_len = 256;
    ck_assert_int_eq(lanyfs_format_plan(&o, 1 << 20, &plan, &err), LANYFS_E_NAME);
    o.label_len = 255;
    ck_assert_int_eq(lanyfs_format_plan(&o, 1 << 20, &plan, &err), LANYFS_OK);
    o.label = NULL;
    o.label_len = 3;
    ck_assert_int_eq(lanyfs_format_plan(&o, 1 << 20, &plan, &err), LANYFS_E_INVAL);

    /* A read-only image. */
    o = opts(9, 4, false);
    make_file(64 * 512, -1);
    struct lanyfs_image *img;
    ck_assert_int_eq(lanyfs_image_open(image_path, 0, &img, &err), LANYFS_OK);
    ck_assert_int_eq(lanyfs_format(img, &o, &err), LANYFS_E_READONLY);
    lanyfs_image_close(img);
}
END_TEST

/* Labels: 255 bytes with a NUL; in compat mode 256 and more are cut to 256, no NUL. */
START_TEST(test_labels)
{
    char label[300];
    for (size_t i = 0; i < sizeof(label); i++)
        label[i] = (char)('a' + i % 26);
    uint8_t raw[LANYFS_SB_USED + 1];
    struct lanyfs_error err;

    struct lanyfs_format_opts o = opts(9, 4, false);
    o.label = label;
    o.label_len = 255;
    make_file(64 * 512, 0x77);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);
    read_raw(0, raw, sizeof(raw));
    ck_assert_mem_eq(raw + LANYFS_SB_LABEL, label, 255);
    ck_assert_uint_eq(raw[LANYFS_SB_LABEL + 255], 0);

    o.compat2012 = true;
    o.label_len = 300;
    make_file(64 * 512, 0x77);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);
    read_raw(0, raw, sizeof(raw));
    ck_assert_mem_eq(raw + LANYFS_SB_LABEL, label, 256);
    ck_assert_uint_eq(raw[LANYFS_SB_USED], 0); /* nothing spills past the field */

    o.label = "";
    o.label_len = 0;
    make_file(64 * 512, 0x77);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);
    read_raw(0, raw, sizeof(raw));
    for (size_t i = 0; i < LANYFS_NAME_FIELD; i++)
        ck_assert_uint_eq(raw[LANYFS_SB_LABEL + i], 0);
}
END_TEST

/* Without opts.now the formatter takes lanyfs_ts_now, which honours SOURCE_DATE_EPOCH. */
START_TEST(test_source_date_epoch)
{
    ck_assert_int_eq(setenv("SOURCE_DATE_EPOCH", "1000000000", 1), 0);
    struct lanyfs_format_opts o = opts(9, 4, false);
    o.now = NULL;
    struct lanyfs_error err;
    make_file(64 * 512, -1);
    ck_assert_int_eq(format_file(&o, &err), LANYFS_OK);
    struct lanyfs_fs *fs;
    ck_assert_int_eq(lanyfs_fs_open(image_path, 0, &fs, &err), LANYFS_OK);
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    time_t t;
    ck_assert(lanyfs_ts_to_time(&sb->created, &t));
    ck_assert_int_eq((long long)t, 1000000000LL); /* 2001-09-09T01:46:40Z */
    ck_assert_uint_eq(sb->created.year, 2001);
    ck_assert_uint_eq(sb->created.nsec, 0);
    ck_assert(ts_equal(&sb->created, &sb->updated));
    check_root(fs, &sb->created);
    lanyfs_fs_close(fs);
    unsetenv("SOURCE_DATE_EPOCH");
}
END_TEST

static TCase *tcase(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    return tc;
}

static Suite *format_suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase("geometries");
    tcase_add_loop_test(tc, test_default_all_geometries, 0, 32);
    suite_add_tcase(s, tc);

    tc = tcase("capped");
    tcase_add_test(tc, test_default_capped);
    tcase_add_test(tc, test_default_addr64_uncapped);
    suite_add_tcase(s, tc);

    tc = tcase("compat");
    tcase_add_test(tc, test_compat_full_slots);
    tcase_add_test(tc, test_compat_addr64_bug);
    tcase_add_test(tc, test_compat_cap_small);
    tcase_add_test(tc, test_progress_and_provisional_super);
    suite_add_tcase(s, tc);

    tc = tcase("misc");
    tcase_add_test(tc, test_free_blocks_untouched);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_labels);
    tcase_add_test(tc, test_source_date_epoch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(format_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
