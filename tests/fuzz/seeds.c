/*
 * seeds.c -- crafted seed images for the fuzz targets, built with the test
 * fixture.
 *
 * Small on purpose (mostly 512-byte blocks and at most a few dozen KiB), so
 * libFuzzer mutates them quickly: healthy trees of several geometries,
 * extender trees of levels 0 to 2 and sparse ones, holes, cycles and shared
 * nodes, a degenerate tree, links beyond the device and to chain blocks,
 * damaged extenders, an extender DAG, truncation and each kind of
 * superblock damage.  The reference images come from the corpus directory
 * instead (the driver reads them from disk).
 */
#include <string.h>

#include "fixture.h"
#include "fuzz.h"

struct emit {
    fuzz_seed_cb cb;
    void *ctx;
    int n;
};

/* Hand the image (with its free list) to the callback, len bytes of it. */
static void emit_len(struct emit *em, const char *name, struct fx *fx, size_t len)
{
    fx_freelist(fx);
    if (len > fx_image_size(fx))
        len = fx_image_size(fx);
    em->cb(em->ctx, name, fx_image(fx), len);
    em->n++;
}

static void emit(struct emit *em, const char *name, struct fx *fx)
{
    emit_len(em, name, fx, fx_image_size(fx));
}

/* Emit the image as it is, without rebuilding the free list. */
static void emit_raw(struct emit *em, const char *name, struct fx *fx)
{
    em->cb(em->ctx, name, fx_image(fx), fx_image_size(fx));
    em->n++;
}

static uint64_t file_of(struct fx *fx, uint64_t dir, const char *name, size_t len, uint32_t seed)
{
    static uint8_t buf[80 * 512];
    if (len > sizeof(buf))
        len = sizeof(buf);
    fx_pattern(buf, len, seed);
    return fx_file(fx, dir, name, buf, len);
}

/* dirs a, a/b, c; files f (3 blocks), e (empty), a/b/g (1 byte). */
static struct fx *healthy(unsigned bits, unsigned al, uint64_t blocks)
{
    struct fx *fx = fx_new(bits, al, blocks);
    if (fx == NULL)
        return NULL;
    uint64_t root = fx_root(fx);
    uint64_t a = fx_mkdir(fx, root, "a");
    uint64_t b = fx_mkdir(fx, a, "b");
    fx_mkdir(fx, root, "c");
    file_of(fx, root, "f", (size_t)3 << bits, 1);
    file_of(fx, root, "e", 0, 2);
    file_of(fx, b, "g", 1, 3);
    return fx;
}

static void healthy_seeds(struct emit *em)
{
    const unsigned geo[][3] = {{9, 4, 64}, {9, 1, 48}, {10, 2, 32}, {11, 3, 24}, {12, 8, 16}};
    const char *names[] = {"healthy-512-a4", "healthy-512-a1", "healthy-1024-a2",
                           "healthy-2048-a3", "healthy-4096-a8"};
    for (int i = 0; i < 5; i++) {
        struct fx *fx = healthy(geo[i][0], geo[i][1], geo[i][2]);
        emit(em, names[i], fx);
        fx_free(fx);
    }
    /* Names: high bytes, the longest name, many siblings. */
    struct fx *fx = fx_new(9, 2, 80);
    char n255[256];
    memset(n255, 'L', 255);
    n255[255] = '\0';
    const char *names2[] = {"\xff", "b", "\x80", "A", "\xc3\xa9t\xc3\xa9", ".", "..", n255};
    for (int i = 0; i < 8; i++)
        fx_mkdir(fx, fx_root(fx), names2[i]);
    for (int i = 0; i < 40; i++) {
        char nm[8] = {'s', (char)('a' + i % 26), (char)('a' + i / 26), 0};
        file_of(fx, fx_root(fx), nm, (size_t)(i * 37), (uint32_t)i);
    }
    emit(em, "names", fx);
    fx_free(fx);
}

static void extender_seeds(struct emit *em)
{
    /* Level 1: 64 blocks at 512/8 (extmax 63). */
    struct fx *fx = fx_new(9, 8, 72);
    uint64_t f = file_of(fx, fx_root(fx), "l1", 64 * 512, 7);
    emit(em, "level1", fx);
    /* Damage it three ways. */
    uint64_t top = fx_get_subtree(fx, f);
    uint64_t c0 = fx_ext_get_slot(fx, top, 0), c1 = fx_ext_get_slot(fx, top, 1);
    fx_ext_set_level(fx, c1, 1);
    emit(em, "ext-wrong-level", fx);
    fx_ext_set_level(fx, c1, 0);
    fx_set_type(fx, c0, LANYFS_TYPE_DIR);
    emit(em, "ext-wrong-type", fx);
    fx_set_type(fx, c0, LANYFS_TYPE_EXT);
    fx_ext_set_slot(fx, c0, 5, 1000);
    emit(em, "ext-slot-beyond", fx);
    fx_ext_set_slot(fx, c0, 5, 0);
    fx_ext_set_slot(fx, top, 0, 0);
    emit(em, "ext-holes", fx);
    fx_free(fx);

    /* Sparse level 2: only file blocks 0 and 63*63 mapped. */
    fx = fx_new(9, 8, 24);
    f = fx_entry_new(fx, LANYFS_TYPE_FILE, "sparse", 6);
    fx_link(fx, fx_root(fx), f);
    top = fx_ext_new(fx, 2);
    uint64_t l1a = fx_ext_new(fx, 1), l1b = fx_ext_new(fx, 1);
    uint64_t l0a = fx_ext_new(fx, 0), l0b = fx_ext_new(fx, 0);
    fx_ext_set_slot(fx, top, 0, l1a);
    fx_ext_set_slot(fx, top, 1, l1b);
    fx_ext_set_slot(fx, l1a, 0, l0a);
    fx_ext_set_slot(fx, l1b, 0, l0b);
    uint64_t d0 = fx_alloc(fx), d1 = fx_alloc(fx);
    fx_pattern(fx_block(fx, d0), 512, 8);
    fx_pattern(fx_block(fx, d1), 512, 9);
    fx_ext_set_slot(fx, l0a, 0, d0);
    fx_ext_set_slot(fx, l0b, 0, d1);
    fx_set_subtree(fx, f, top);
    fx_set_size(fx, f, (63 * 63 + 1) * 512);
    emit(em, "sparse-level2", fx);
    /* A DAG: every slot of each level points at the same child. */
    for (uint32_t i = 0; i < 63; i++) {
        fx_ext_set_slot(fx, top, i, l1a);
        fx_ext_set_slot(fx, l1a, i, l0a);
        fx_ext_set_slot(fx, l0a, i, d0);
    }
    fx_set_size(fx, f, UINT64_MAX);
    emit(em, "ext-dag", fx);
    fx_free(fx);

    /* A file claiming a huge size without data, and one with its size cut. */
    fx = fx_new(10, 4, 20);
    f = fx_entry_new(fx, LANYFS_TYPE_FILE, "huge", 4);
    fx_link(fx, fx_root(fx), f);
    fx_set_size(fx, f, UINT64_MAX);
    uint64_t g = file_of(fx, fx_root(fx), "short", 5 * 1024, 10);
    fx_set_size(fx, g, 100);
    emit(em, "sizes", fx);
    fx_free(fx);

    /* Writes an unplug cut short: a's data pointer and size never landed
     * (its tree follows it), b's entry is wiped (its tree is no file's). */
    fx = fx_new(9, 4, 80);
    uint64_t a = file_of(fx, fx_root(fx), "a", 3 * 512 + 7, 11);
    uint64_t b = file_of(fx, fx_root(fx), "b", 70 * 512, 12);
    struct lanyfs_entry e;
    fx_entry_get(fx, a, &e);
    e.subtree = 0;
    e.size = 0;
    e.wrcnt = 0;
    fx_entry_put(fx, a, &e);
    memset(fx_block(fx, b), 0, 512);
    emit(em, "lost-trees", fx);
    fx_free(fx);
}

static void tree_seeds(struct emit *em)
{
    struct fx *fx = fx_new(9, 4, 40);
    uint64_t root = fx_root(fx);
    uint64_t m = fx_mkdir(fx, root, "m");
    uint64_t f = fx_mkdir(fx, root, "f");
    uint64_t h = fx_mkdir(fx, root, "h");
    (void)f;
    fx_set_left(fx, h, m);
    emit(em, "cycle-ancestor", fx);
    fx_set_left(fx, h, 0);
    fx_set_right(fx, h, h);
    emit(em, "cycle-self", fx);
    fx_set_right(fx, h, 0);
    uint64_t t = fx_mkdir(fx, root, "t");
    fx_set_right(fx, t, h);
    emit(em, "shared-node", fx);
    fx_set_right(fx, t, 0);
    fx_set_subtree(fx, m, root);
    emit(em, "subtree-to-root", fx);
    fx_set_subtree(fx, m, 0);
    fx_set_left(fx, t, 5000);
    fx_set_right(fx, t, UINT64_MAX);
    emit(em, "link-beyond", fx);
    fx_set_left(fx, t, 0);
    fx_set_right(fx, t, 0);
    fx_freelist(fx);
    fx_set_left(fx, t, lanyfs_get64(fx_block(fx, 0) + LANYFS_SB_FREEHEAD));
    emit_raw(em, "link-to-chain", fx);
    fx_free(fx);

    /* A degenerate tree 200 deep, and one out of order. */
    fx = fx_new(9, 2, 240);
    uint64_t prev = 0;
    for (int i = 0; i < 200; i++) {
        char name[8] = {'d', (char)('0' + i / 100), (char)('0' + i / 10 % 10),
                        (char)('0' + i % 10), 0};
        uint64_t b = fx_entry_new(fx, LANYFS_TYPE_DIR, name, 4);
        if (prev == 0)
            fx_set_subtree(fx, fx_root(fx), b);
        else
            fx_set_left(fx, prev, b);
        prev = b;
    }
    emit(em, "degenerate", fx);
    fx_free(fx);
    fx = fx_new(9, 4, 24);
    m = fx_mkdir(fx, fx_root(fx), "m");
    fx_set_left(fx, m, fx_entry_new(fx, LANYFS_TYPE_FILE, "a", 1));
    fx_set_right(fx, m, fx_entry_new(fx, LANYFS_TYPE_FILE, "m", 1));
    emit(em, "order-dup", fx);
    fx_free(fx);

    /* Renames caught halfway: x sits in /o's tree and in /n's, with /n's
     * time (the walk moves it to /n); then /o also in x's own tree. */
    fx = fx_new(9, 4, 40);
    uint64_t o = fx_mkdir(fx, fx_root(fx), "o"), n = fx_mkdir(fx, fx_root(fx), "n");
    uint64_t x = fx_mkdir(fx, o, "x"), y = fx_mkdir(fx, x, "y");
    file_of(fx, y, "f", 3, 4);
    uint64_t k = fx_mkdir(fx, n, "k");
    struct lanyfs_entry e;
    fx_entry_get(fx, n, &e);
    e.modified.nsec += 7;
    fx_entry_put(fx, n, &e);
    fx_entry_get(fx, x, &e);
    e.modified.nsec = e.modified.nsec + 7;
    fx_entry_put(fx, x, &e);
    fx_set_left(fx, k, x);
    emit(em, "rename-halfway", fx);
    fx_set_right(fx, y, o);
    emit(em, "rename-loop", fx);
    fx_free(fx);
}

static void super_seeds(struct emit *em)
{
    struct {
        const char *name;
        size_t off;
        int width; /* 1 or 8 bytes */
        uint64_t value;
    } damage[] = {
        {"sb-magic", LANYFS_SB_MAGIC, 1, 'X'},      {"sb-major", LANYFS_SB_MAJOR, 1, 2},
        {"sb-blockbits", LANYFS_SB_BLOCKBITS, 1, 13}, {"sb-addrlen", LANYFS_SB_ADDRLEN, 1, 0},
        {"sb-rootdir", LANYFS_SB_ROOTDIR, 8, 999},  {"sb-blocks-big", LANYFS_SB_BLOCKS, 8, 4096},
        {"sb-blocks-1", LANYFS_SB_BLOCKS, 8, 1},    {"sb-freehead", LANYFS_SB_FREEHEAD, 8, 77},
    };
    for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
        struct fx *fx = healthy(9, 4, 32);
        fx_freelist(fx);
        uint8_t *sb = fx_block(fx, 0);
        if (damage[i].width == 1)
            sb[damage[i].off] = (uint8_t)damage[i].value;
        else
            lanyfs_put64(sb + damage[i].off, damage[i].value);
        emit_raw(em, damage[i].name, fx);
        fx_free(fx);
    }
    /* Truncated inside a file's data, and just after the superblock. */
    struct fx *fx = healthy(9, 4, 32);
    emit_len(em, "truncated-data", fx, 9 * 512 + 100);
    emit_len(em, "truncated-head", fx, 600);
    fx_free(fx);
}

/*
 * A stick of 2048-byte blocks with 3-byte addresses formatted again with
 * 512-byte blocks: the new superblock over the earlier one, the earlier
 * root at 512-byte block 4 (EARLIER_FORMAT, its length told by the maps
 * of f's three blocks and h's two); and the same with the new format cut after its first
 * superblock write (rootdir = freehead = 0), which fsck takes back.
 */
static void earlier_seeds(struct emit *em)
{
    struct fx *old = healthy(11, 3, 24);
    struct fx *neu = fx_new(9, 4, 96);
    if (old == NULL || neu == NULL)
        goto out;
    file_of(old, fx_root(old), "h", (size_t)2 << 11, 4); /* two files of 2+ blocks tell */
    fx_freelist(old);
    fx_freelist(neu);
    memcpy(fx_block(old, 0), fx_block(neu, 0), 512);
    emit_raw(em, "earlier-format", old);
    uint8_t *sb = fx_block(old, 0);
    lanyfs_put64(sb + LANYFS_SB_ROOTDIR, 0);
    lanyfs_put64(sb + LANYFS_SB_FREEHEAD, 0);
    lanyfs_put64(sb + LANYFS_SB_FREETAIL, 0);
    emit_raw(em, "earlier-format-cut", old);
out:
    fx_free(old);
    fx_free(neu);
}

/*
 * A stick of 512-byte blocks formatted again with 2048-byte blocks: the
 * new format's blocks 0 to 2 over the earlier blocks 0 to 11, the rest of
 * the earlier tree (directories d and d/x, four files of two blocks) in
 * the new free space, an entry every 512 bytes (EARLIER_FORMAT_ENTRIES).
 */
static void earlier_smaller_seed(struct emit *em)
{
    struct fx *old = fx_new(9, 3, 96);
    struct fx *neu = fx_new(11, 4, 24);
    if (old == NULL || neu == NULL)
        goto out;
    file_of(old, fx_root(old), "pad", (size_t)10 << 9, 5); /* what the new format covers */
    uint64_t d = fx_mkdir(old, fx_root(old), "d");
    uint64_t x = fx_mkdir(old, d, "x");
    file_of(old, d, "p", (size_t)2 << 9, 6);
    file_of(old, d, "q", (size_t)2 << 9, 7);
    file_of(old, x, "r", (size_t)2 << 9, 8);
    file_of(old, x, "s", (size_t)2 << 9, 9);
    fx_freelist(old);
    fx_freelist(neu);
    memcpy(fx_block(old, 0), fx_block(neu, 0), (size_t)3 << 11);
    emit_raw(em, "earlier-smaller", old);
out:
    fx_free(old);
    fx_free(neu);
}

int fuzz_seeds(fuzz_seed_cb cb, void *ctx)
{
    struct emit em = {cb, ctx, 0};
    healthy_seeds(&em);
    extender_seeds(&em);
    tree_seeds(&em);
    super_seeds(&em);
    earlier_seeds(&em);
    earlier_smaller_seed(&em);
    return em.n;
}
