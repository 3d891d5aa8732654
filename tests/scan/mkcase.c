/*
 * mkcase.c -- crafted images for the scanner's image cases.
 *
 * Usage:
 *   mkcase NAME OUT            write the crafted image NAME to OUT
 *   mkcase poke IMG OFF N VAL  store VAL little-endian in N bytes at byte OFF
 *   mkcase list                print the names
 *
 * Every image starts from the same small tree built with the test fixture
 * (tests/fixture.h, no writer of the project involved): 512-byte blocks,
 * 4-byte addresses, 600 blocks (five chain blocks of free list), a
 * directory /docs holding /docs/one.txt (one block) and /docs/sub, a file
 * /a.txt of one block and /b.bin of three blocks.  Each NAME then damages
 * it in one way (see the table at the end); the recipes of the image cases call
 * mkcase and name the codes the scan must report.  Names starting with
 * "driver-" also give the files the no-exec attribute the 2012 driver sets
 * on the files it creates, so the image reads as driver-written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

struct base {
    struct fx *fx;  /* the image */
    uint64_t docs;  /* /docs */
    uint64_t one;   /* /docs/one.txt */
    uint64_t sub;   /* /docs/sub */
    uint64_t a;     /* /a.txt */
    uint64_t b;     /* /b.bin */
};

static void die(const char *what)
{
    fprintf(stderr, "mkcase: %s\n", what);
    exit(1);
}

#define NEED(x)                 \
    do {                        \
        if (!(x))               \
            die(#x " failed");  \
    } while (0)

static void build(struct base *t, unsigned bits, unsigned addrlen, uint64_t blocks)
{
    uint8_t data[3 * 4096];
    fx_pattern(data, sizeof(data), 7);
    t->fx = fx_new(bits, addrlen, blocks);
    NEED(t->fx != NULL);
    uint32_t bs = fx_blocksize(t->fx);
    NEED((t->docs = fx_mkdir(t->fx, fx_root(t->fx), "docs")) != 0);
    NEED((t->one = fx_file(t->fx, t->docs, "one.txt", data, 100)) != 0);
    NEED((t->sub = fx_mkdir(t->fx, t->docs, "sub")) != 0);
    NEED((t->a = fx_file(t->fx, fx_root(t->fx), "a.txt", data, bs / 2)) != 0);
    NEED((t->b = fx_file(t->fx, fx_root(t->fx), "b.bin", data, 3 * bs)) != 0);
}

static void base(struct base *t)
{
    build(t, 9, 4, 600);
}

static void noexec(struct base *t)
{
    uint64_t files[] = {t->one, t->a, t->b};
    for (size_t i = 0; i < 3; i++) {
        struct lanyfs_entry e;
        fx_entry_get(t->fx, files[i], &e);
        e.attr |= LANYFS_ATTR_NOEXEC;
        fx_entry_put(t->fx, files[i], &e);
    }
}

/* The first chain block of the fixture's free list (built when needed). */
static uint64_t chain(struct base *t, unsigned n)
{
    fx_freelist(t->fx);
    struct lanyfs_super sb;
    fx_super_get(t->fx, &sb);
    uint64_t c = sb.freehead;
    for (unsigned i = 0; i < n && c != 0; i++)
        c = lanyfs_get64(fx_block(t->fx, c) + LANYFS_CH_NEXT);
    NEED(c != 0);
    return c;
}

static void set_slot(struct base *t, uint64_t c, uint32_t i, uint64_t v)
{
    lanyfs_chain_set_slot(fx_geom(t->fx), fx_block(t->fx, c), i, v);
}

static void super_edit(struct base *t, void (*edit)(struct lanyfs_super *sb, void *ctx), void *ctx)
{
    struct lanyfs_super sb;
    fx_super_get(t->fx, &sb);
    edit(&sb, ctx);
    fx_super_put(t->fx, &sb);
}

static uint64_t top(struct base *t, uint64_t file)
{
    return fx_get_subtree(t->fx, file);
}

/* ---- builders: each damages the base and says how it is written ---------- */

enum save { SAVE_LIST, SAVE_RAW };

static enum save c_clean(struct base *t)
{
    (void)t;
    return SAVE_LIST;
}

static enum save c_ptr_range(struct base *t)
{
    fx_set_left(t->fx, t->one, (uint64_t)1 << 40);
    return SAVE_LIST;
}

static enum save c_ptr_type(struct base *t)
{
    /* one.txt has no greater sibling: its left link now names b.bin's extender. */
    fx_set_left(t->fx, t->one, top(t, t->b));
    return SAVE_LIST;
}

static enum save c_cycle(struct base *t)
{
    fx_set_left(t->fx, t->one, t->docs);
    return SAVE_LIST;
}

static enum save c_order(struct base *t)
{
    struct lanyfs_entry e;
    fx_entry_get(t->fx, t->sub, &e);
    lanyfs_entry_set_name(&e, "aaa", 3); /* sub sits left of one.txt: it must be greater */
    fx_entry_put(t->fx, t->sub, &e);
    return SAVE_LIST;
}

static enum save c_dup(struct base *t)
{
    struct lanyfs_entry e;
    fx_entry_get(t->fx, t->sub, &e);
    lanyfs_entry_set_name(&e, "one.txt", 7);
    e.type = LANYFS_TYPE_FILE;
    fx_entry_put(t->fx, t->sub, &e);
    return SAVE_LIST;
}

static enum save c_names(struct base *t)
{
    uint8_t noNul[256];
    memset(noNul, 'n', sizeof(noNul));
    uint64_t e1 = fx_entry_new(t->fx, LANYFS_TYPE_FILE, "", 0);
    uint64_t e2 = fx_entry_new(t->fx, LANYFS_TYPE_FILE, noNul, sizeof(noNul));
    uint64_t e3 = fx_entry_new(t->fx, LANYFS_TYPE_FILE, "sl/ash", 6);
    NEED(e1 && e2 && e3);
    NEED(fx_link(t->fx, t->sub, e1) == 0);
    NEED(fx_link(t->fx, t->sub, e2) == 0);
    NEED(fx_link(t->fx, t->sub, e3) == 0);
    return SAVE_LIST;
}

static enum save c_twice(struct base *t)
{
    /* /docs/sub holds m; m's left is x (greater), x's left is z; m's right is x too. */
    uint64_t m = fx_entry_new(t->fx, LANYFS_TYPE_FILE, "m", 1);
    uint64_t x = fx_entry_new(t->fx, LANYFS_TYPE_FILE, "x", 1);
    uint64_t z = fx_entry_new(t->fx, LANYFS_TYPE_FILE, "z", 1);
    NEED(m && x && z);
    fx_set_subtree(t->fx, t->sub, m);
    fx_set_left(t->fx, m, x);
    fx_set_left(t->fx, x, z);
    fx_set_right(t->fx, m, x);
    return SAVE_LIST;
}

static enum save c_rename_leaf(struct base *t)
{
    /* a.txt (a leaf) also sits in /docs/sub's tree. */
    fx_set_subtree(t->fx, t->sub, t->a);
    return SAVE_LIST;
}

static enum save c_deep(struct base *t)
{
    uint64_t d = t->sub;
    for (int i = 0; i < 258; i++) {
        char name[16];
        snprintf(name, sizeof(name), "d%d", i);
        NEED((d = fx_mkdir(t->fx, d, name)) != 0);
    }
    return SAVE_LIST;
}

static enum save c_time(struct base *t)
{
    struct lanyfs_entry e;
    fx_entry_get(t->fx, t->a, &e);
    e.modified.month = 13;
    fx_entry_put(t->fx, t->a, &e);
    return SAVE_LIST;
}

static enum save c_orphan(struct base *t)
{
    uint8_t data[600];
    fx_pattern(data, sizeof(data), 9);
    uint64_t lost = fx_mkdir(t->fx, t->sub, "lost");
    NEED(lost != 0);
    NEED(fx_file(t->fx, lost, "inside.txt", data, sizeof(data)) != 0);
    fx_set_subtree(t->fx, t->sub, 0); /* /docs/sub forgets it */
    return SAVE_LIST;
}

static enum save c_shared(struct base *t)
{
    uint64_t d;
    NEED((d = fx_file_dblk(t->fx, t->a, 0, NULL, NULL)) != 0);
    fx_ext_set_slot(t->fx, top(t, t->b), 1, d);
    return SAVE_LIST;
}

static enum save c_file_range(struct base *t)
{
    fx_set_subtree(t->fx, t->a, (uint64_t)1 << 40);
    return SAVE_LIST;
}

static enum save c_file_type(struct base *t)
{
    fx_set_subtree(t->fx, t->a, t->sub);
    return SAVE_LIST;
}

/* A file of two level-0 extenders under a level-1 top (8-byte addresses: extmax 63). */
static uint64_t big_file(struct base *t)
{
    static uint8_t data[70 * 512];
    fx_pattern(data, sizeof(data), 11);
    uint64_t f = fx_file(t->fx, t->sub, "big.bin", data, sizeof(data));
    NEED(f != 0);
    NEED(fx_ext_level(t->fx, top(t, f)) == 1);
    return f;
}

static void base8(struct base *t)
{
    build(t, 9, 8, 600);
}

static enum save c_ext_level(struct base *t)
{
    uint64_t f = big_file(t);
    fx_ext_set_level(t->fx, fx_ext_get_slot(t->fx, top(t, f), 1), 5);
    return SAVE_LIST;
}

static enum save c_ext_type(struct base *t)
{
    uint64_t f = big_file(t);
    uint64_t junk = fx_alloc(t->fx);
    NEED(junk != 0);
    memset(fx_block(t->fx, junk), 0x55, fx_blocksize(t->fx));
    fx_ext_set_slot(t->fx, top(t, f), 1, junk);
    return SAVE_LIST;
}

static enum save c_ext_range(struct base *t)
{
    fx_ext_set_slot(t->fx, top(t, t->b), 1, (uint64_t)1 << 30);
    return SAVE_LIST;
}

static enum save c_ext_meta(struct base *t)
{
    fx_ext_set_slot(t->fx, top(t, t->b), 1, t->docs);
    return SAVE_LIST;
}

static enum save c_excess(struct base *t)
{
    fx_set_size(t->fx, t->b, 100);
    return SAVE_LIST;
}

static enum save c_holes(struct base *t)
{
    fx_set_size(t->fx, t->a, 5 * 512);
    return SAVE_LIST;
}

static enum save c_never_written(struct base *t)
{
    struct lanyfs_entry e;
    fx_entry_get(t->fx, t->a, &e);
    e.wrcnt = 0;
    fx_entry_put(t->fx, t->a, &e);
    return SAVE_LIST;
}

/* b.bin's write cut short: its tree (the block after it) landed, its
 * data pointer and size did not (counter 0, as just created). */
static enum save c_unlinked_data(struct base *t)
{
    struct lanyfs_entry e;
    NEED(top(t, t->b) == t->b + 1);
    fx_entry_get(t->fx, t->b, &e);
    e.subtree = 0;
    e.size = 0;
    e.wrcnt = 0;
    fx_entry_put(t->fx, t->b, &e);
    return SAVE_LIST;
}

/* b.bin's entry wiped (its tree still maps its three blocks): a tree no
 * file links, and the root's link to a block that is no entry. */
static enum save c_lost_tree(struct base *t)
{
    memset(fx_block(t->fx, t->b), 0, fx_blocksize(t->fx));
    return SAVE_LIST;
}

/*
 * A block handed out again whose new contents never landed still holds an
 * old extender: a copy of b.bin's top, its slots naming the data blocks
 * b.bin owns, and one more slot naming a block nobody holds.  No write was
 * cut short there: the blocks are leaked, not a lost tree.
 */
static enum save c_stale_extender(struct base *t)
{
    uint64_t e = fx_alloc(t->fx), spare = fx_alloc(t->fx), from = top(t, t->b);
    NEED(e != 0 && spare != 0 && fx_ext_level(t->fx, from) == 0);
    memcpy(fx_block(t->fx, e), fx_block(t->fx, from), fx_blocksize(t->fx));
    uint32_t k = 0;
    while (fx_ext_get_slot(t->fx, e, k) != 0)
        k++;
    NEED(k > 1);
    fx_ext_set_slot(t->fx, e, k, spare);
    return SAVE_LIST;
}

static enum save c_torn_entry(struct base *t)
{
    fx_block(t->fx, t->docs)[2000] = 0x41;
    return SAVE_LIST;
}

static enum save c_torn_extender(struct base *t)
{
    /* b.bin's top extender: a slot in its third sector beyond the device,
     * while the slots of its first sector are in range. */
    uint32_t late = (1024 - LANYFS_EXT_SLOTS) / fx_geom(t->fx)->addrlen;
    fx_ext_set_slot(t->fx, top(t, t->b), late, (uint64_t)1 << 30);
    return SAVE_LIST;
}

static enum save c_torn_chain_tail(struct base *t)
{
    uint64_t c = chain(t, 0);
    uint32_t late = (1024 - LANYFS_CH_SLOTS) / fx_geom(t->fx)->addrlen;
    set_slot(t, c, late, (uint64_t)1 << 30);
    return SAVE_RAW;
}

static enum save c_torn_counter(struct base *t)
{
    uint64_t c = chain(t, 0);
    const struct lanyfs_geom *g = fx_geom(t->fx);
    uint8_t *b = fx_block(t->fx, c);
    uint64_t s0 = lanyfs_chain_slot(g, b, 0), s1 = lanyfs_chain_slot(g, b, 1);
    set_slot(t, c, 0, s1);
    set_slot(t, c, 1, s0);
    lanyfs_put16(b + LANYFS_HDR_WRCNT, 1);
    return SAVE_RAW;
}

static void set_head_a(struct lanyfs_super *sb, void *ctx)
{
    sb->freehead = *(uint64_t *)ctx;
}

static enum save c_stale_head(struct base *t)
{
    chain(t, 0);
    super_edit(t, set_head_a, &t->a);
    return SAVE_RAW;
}

static enum save c_free_cycle(struct base *t)
{
    uint64_t first = chain(t, 0), last = chain(t, 4);
    lanyfs_put64(fx_block(t->fx, last) + LANYFS_CH_NEXT, first);
    return SAVE_RAW;
}

static enum save c_free_range(struct base *t)
{
    lanyfs_put64(fx_block(t->fx, chain(t, 1)) + LANYFS_CH_NEXT, (uint64_t)1 << 40);
    return SAVE_RAW;
}

static void set_tail(struct lanyfs_super *sb, void *ctx)
{
    sb->freetail = *(uint64_t *)ctx;
}

static enum save c_free_end(struct base *t)
{
    uint64_t mid = chain(t, 2);
    super_edit(t, set_tail, &mid);
    return SAVE_RAW;
}

static enum save c_free_slot_range(struct base *t)
{
    set_slot(t, chain(t, 1), 3, (uint64_t)1 << 30);
    return SAVE_RAW;
}

static void fb_add(struct lanyfs_super *sb, void *ctx)
{
    sb->freeblocks += *(int64_t *)ctx;
}

static enum save c_free_in_use(struct base *t)
{
    uint64_t d = fx_file_dblk(t->fx, t->b, 1, NULL, NULL);
    set_slot(t, chain(t, 0), 5, d); /* what slot 5 listed is leaked now */
    return SAVE_RAW;
}

static enum save c_free_twice(struct base *t)
{
    uint64_t c = chain(t, 0);
    set_slot(t, c, 6, lanyfs_chain_slot(fx_geom(t->fx), fx_block(t->fx, c), 5));
    return SAVE_RAW;
}

static enum save c_free_type(struct base *t)
{
    fx_block(t->fx, chain(t, 2))[0] = 0x71;
    return SAVE_RAW;
}

static enum save c_free_meta(struct base *t)
{
    set_slot(t, chain(t, 0), 7, chain(t, 3));
    return SAVE_RAW;
}

static enum save c_freeblocks(struct base *t)
{
    int64_t d = 5;
    chain(t, 0);
    super_edit(t, fb_add, &d);
    return SAVE_RAW;
}

static enum save c_leaked(struct base *t)
{
    int64_t d = -1;
    set_slot(t, chain(t, 1), 8, 0);
    super_edit(t, fb_add, &d);
    return SAVE_RAW;
}

static enum save c_unreadable(struct base *t)
{
    /* Saved cut after block 300 (see main): a.txt's left names a block past the cut. */
    fx_set_left(t->fx, t->a, 450);
    return SAVE_LIST;
}

static enum save c_driver_extra(struct base *t)
{
    noexec(t);
    fx_set_size(t->fx, t->b, 100);
    return SAVE_LIST;
}

static enum save c_driver_chain(struct base *t)
{
    noexec(t);
    fx_set_left(t->fx, t->one, chain(t, 1));
    return SAVE_RAW;
}

static enum save c_driver_stale(struct base *t)
{
    noexec(t);
    fx_set_left(t->fx, t->one, t->docs);
    return SAVE_LIST;
}

static enum save c_driver_orphan(struct base *t)
{
    noexec(t);
    return c_orphan(t);
}

static enum save c_driver_frozen(struct base *t)
{
    /* /docs/sub's tree root names a freed directory: rmdir froze its parent. */
    uint64_t gone = fx_entry_new(t->fx, LANYFS_TYPE_DIR, "gone", 4);
    NEED(gone != 0);
    noexec(t);
    /* Pushed into the tail's first empty slot as the driver frees it: the
     * chain block's counter counts the push, 'freeblocks' does not. */
    uint64_t c = chain(t, 4);
    uint8_t *cb = fx_block(t->fx, c);
    uint32_t i = 0;
    while (lanyfs_chain_slot(fx_geom(t->fx), cb, i) != 0)
        i++;
    set_slot(t, c, i, gone);
    lanyfs_put16(cb + LANYFS_HDR_WRCNT, (uint16_t)(lanyfs_get16(cb + LANYFS_HDR_WRCNT) + 1u));
    fx_set_subtree(t->fx, t->sub, gone);
    return SAVE_RAW;
}

struct builder {
    const char *name;                  /* the case's image */
    void (*make)(struct base *t);      /* the base tree */
    enum save (*damage)(struct base *t); /* the damage */
};

static const struct builder builders[] = {
    {"clean", base, c_clean},
    {"ptr-range", base, c_ptr_range},
    {"ptr-type", base, c_ptr_type},
    {"cycle", base, c_cycle},
    {"order", base, c_order},
    {"dup", base, c_dup},
    {"names", base, c_names},
    {"twice", base, c_twice},
    {"rename-leaf", base, c_rename_leaf},
    {"deep", base, c_deep},
    {"time", base, c_time},
    {"orphan", base, c_orphan},
    {"shared", base, c_shared},
    {"file-range", base, c_file_range},
    {"file-type", base, c_file_type},
    {"ext-level", base8, c_ext_level},
    {"ext-type", base8, c_ext_type},
    {"ext-range", base, c_ext_range},
    {"ext-meta", base, c_ext_meta},
    {"excess", base, c_excess},
    {"holes", base, c_holes},
    {"never-written", base, c_never_written},
    {"unlinked-data", base, c_unlinked_data},
    {"lost-tree", base, c_lost_tree},
    {"stale-extender", base, c_stale_extender},
    {"torn-entry", NULL, c_torn_entry},
    {"torn-extender", NULL, c_torn_extender},
    {"torn-chain-tail", NULL, c_torn_chain_tail},
    {"torn-counter", base, c_torn_counter},
    {"stale-head", base, c_stale_head},
    {"free-cycle", base, c_free_cycle},
    {"free-range", base, c_free_range},
    {"free-end", base, c_free_end},
    {"free-slot-range", base, c_free_slot_range},
    {"free-in-use", base, c_free_in_use},
    {"free-twice", base, c_free_twice},
    {"free-type", base, c_free_type},
    {"free-meta", base, c_free_meta},
    {"freeblocks", base, c_freeblocks},
    {"leaked", base, c_leaked},
    {"unreadable", base, c_unreadable},
    {"driver-extra", base, c_driver_extra},
    {"driver-chain", base, c_driver_chain},
    {"driver-stale", base, c_driver_stale},
    {"driver-orphan", base, c_driver_orphan},
    {"driver-frozen", base, c_driver_frozen},
};

static void base4096(struct base *t)
{
    build(t, 12, 4, 200);
}

static int poke(int argc, char **argv)
{
    if (argc != 6)
        die("usage: mkcase poke IMG OFFSET BYTES VALUE");
    unsigned long long off = strtoull(argv[3], NULL, 0), val = strtoull(argv[5], NULL, 0);
    int n = atoi(argv[4]);
    if (n < 1 || n > 8)
        die("poke: BYTES must be 1..8");
    FILE *f = fopen(argv[2], "r+b");
    if (f == NULL || fseek(f, (long)off, SEEK_SET) != 0)
        die("poke: cannot open or seek the image");
    for (int i = 0; i < n; i++)
        fputc((int)((val >> (8 * i)) & 0xff), f);
    if (fclose(f) != 0)
        die("poke: write failed");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "poke") == 0)
        return poke(argc, argv);
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < sizeof(builders) / sizeof(builders[0]); i++)
            printf("%s\n", builders[i].name);
        return 0;
    }
    if (argc != 3)
        die("usage: mkcase NAME OUT | mkcase poke IMG OFFSET BYTES VALUE | mkcase list");
    for (size_t i = 0; i < sizeof(builders) / sizeof(builders[0]); i++) {
        const struct builder *bd = &builders[i];
        if (strcmp(bd->name, argv[1]) != 0)
            continue;
        struct base t;
        (bd->make ? bd->make : base4096)(&t);
        enum save how = bd->damage(&t);
        int rc;
        if (strcmp(bd->name, "unreadable") == 0)
            rc = fx_save_truncated(t.fx, argv[2], 300 * (uint64_t)fx_blocksize(t.fx));
        else
            rc = how == SAVE_LIST ? fx_save(t.fx, argv[2]) : fx_write(t.fx, argv[2]);
        fx_free(t.fx);
        if (rc != 0)
            die("cannot write the image");
        return 0;
    }
    die("unknown image name (mkcase list)");
    return 1;
}
