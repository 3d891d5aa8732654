/*
 * mkfixtures.c -- write the images the `lanyfs` golden tests read.
 *
 * Usage: mkfixtures OUTDIR [STAMP].  Every image is built in memory with the
 * test fixture library (tests/fixture.h), so the images do not depend on
 * any writer of the project; the damage a case needs is done by hand
 * through the fixture's block access.  Beside the images it writes, for each
 * file a `cat` case reads, NAME.expect: the bytes the file must read as
 * (holes as zeros), computed here from the data put in, not by the reader
 * under test.  With STAMP, the file STAMP is written last, for the build
 * system to know that all is done.
 *
 * Images (blocks of 512 bytes unless said otherwise):
 *   tree.img        nested directories, files of several sizes, a hidden
 *                   file, attributes, odd timestamps, a file with holes
 *   levels.img      8-byte addresses (63 slots per extender): files with
 *                   extender trees of level 0, 1 and 2 (with holes), and a
 *                   sparse level-3 tree built by hand
 *   hostile.img     names with terminal escapes, invalid UTF-8, '/', bidi
 *                   controls, a 256-byte name with no NUL, an empty name,
 *                   a label with an escape sequence, and tree damage below
 *                   a directory whose name holds an escape
 *   cycle.img       a directory whose subtree leads back to an ancestor, a
 *                   tree cycle, a link beyond the device, a link to an
 *                   extender, an order violation
 *   badfile.img     files whose data map is broken: data pointing at a
 *                   directory, a slot beyond the device, a shared extender,
 *                   a size far beyond what the tree maps
 *   deep.img        directories nested 130 deep, past the depth `ls -R` follows
 *   lost.img        writes an unplug cut short: a file whose tree and data
 *                   landed but not its data pointer and size (a lost tree
 *                   paired with its entry), and a file with a hole whose
 *                   entry was wiped (a lost tree no file links)
 *   rootbeyond.img  rootdir beyond the device end
 *   badmagic.img    magic overwritten
 *   badversion.img  major version 2
 *   flipversion.img major version 3: 1 with one bit flipped
 *   badtype.img     superblock type byte 0x20, the rest right (a problem, not fatal)
 *   badgeom.img     block size exponent 13
 *   blank0.img      2 KiB blocks, 3-byte addresses, a file of three blocks,
 *                   block 0 zeroed (the geometry and root come from the blocks)
 *   blank0root.img  blank0.img with the root directory's block zeroed too
 *   truncated.img   tree.img cut after half of its used blocks
 *   tiny.img        100 bytes, too few for a superblock
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static const char *outdir;

static void fail(const char *what)
{
    fprintf(stderr, "mkfixtures: %s failed\n", what);
    exit(1);
}

#define NEED(expr)                                                                             \
    do {                                                                                       \
        if (!(expr))                                                                           \
            fail(#expr);                                                                       \
    } while (0)

static char *out_path(const char *name)
{
    size_t n = strlen(outdir) + strlen(name) + 2;
    char *p = malloc(n);
    NEED(p != NULL);
    snprintf(p, n, "%s/%s", outdir, name);
    return p;
}

static void save(struct fx *fx, const char *name)
{
    char *p = out_path(name);
    NEED(fx_save(fx, p) == 0);
    free(p);
}

/* Write the image as it is, free list untouched. */
static void write_image(struct fx *fx, const char *name)
{
    char *p = out_path(name);
    NEED(fx_write(fx, p) == 0);
    free(p);
}

static void write_file(const char *name, const void *data, size_t len)
{
    char *p = out_path(name);
    FILE *f = fopen(p, "wb");
    NEED(f != NULL);
    NEED(len == 0 || fwrite(data, 1, len, f) == len);
    NEED(fclose(f) == 0);
    free(p);
}

/* A buffer of len pattern bytes (seed), freed by the caller. */
static uint8_t *pattern(size_t len, uint32_t seed)
{
    uint8_t *b = malloc(len ? len : 1);
    NEED(b != NULL);
    fx_pattern(b, len, seed);
    return b;
}

/* A file of len pattern bytes; its contents also go to EXPECT (when not NULL). */
static uint64_t pattern_file(struct fx *fx, uint64_t dir, const char *name, size_t len,
                             uint32_t seed, const char *expect)
{
    uint8_t *b = pattern(len, seed);
    uint64_t blk = fx_file(fx, dir, name, b, len);
    NEED(blk != 0);
    if (expect != NULL)
        write_file(expect, b, len);
    free(b);
    return blk;
}

/* Empty the level-0 slot that maps file block fblk of the file at blk. */
static void punch(struct fx *fx, uint64_t blk, uint64_t fblk)
{
    uint64_t ext;
    uint32_t slot;
    NEED(fx_file_dblk(fx, blk, fblk, &ext, &slot) != 0);
    fx_ext_set_slot(fx, ext, slot, 0);
}

static void set_attr(struct fx *fx, uint64_t blk, uint16_t attr)
{
    struct lanyfs_entry e;
    fx_entry_get(fx, blk, &e);
    e.attr = attr;
    fx_entry_put(fx, blk, &e);
}

/* ---- tree.img ------------------------------------------------------------ */

static struct fx *build_tree(void)
{
    struct fx *fx = fx_new(9, 4, 1024);
    NEED(fx != NULL);
    uint64_t root = fx_root(fx);
    static const char hello[] = "Hello, LanyFS!\n";
    NEED(fx_file(fx, root, "README.txt", hello, strlen(hello)) != 0);
    write_file("tree-README.txt.expect", hello, strlen(hello));
    NEED(fx_file(fx, root, "empty.txt", NULL, 0) != 0);

    uint64_t docs = fx_mkdir(fx, root, "docs");
    NEED(docs != 0);
    pattern_file(fx, docs, "a.txt", 512, 1, NULL);
    pattern_file(fx, docs, "b.bin", 1000, 2, "tree-b.bin.expect");
    uint64_t sub = fx_mkdir(fx, docs, "sub");
    NEED(sub != 0);
    uint64_t deep = fx_mkdir(fx, sub, "deep");
    NEED(deep != 0);
    NEED(fx_file(fx, deep, "leaf.txt", "leaf\n", 5) != 0);
    NEED(fx_mkdir(fx, root, "zz-empty-dir") != 0);

    uint64_t hidden = fx_file(fx, root, "hidden.txt", "secret\n", 7);
    NEED(hidden != 0);
    set_attr(fx, hidden, LANYFS_ATTR_HIDDEN);
    uint64_t hdir = fx_mkdir(fx, root, "hidden-dir");
    NEED(hdir != 0);
    NEED(fx_file(fx, hdir, "inside.txt", "in\n", 3) != 0);
    set_attr(fx, hdir, LANYFS_ATTR_HIDDEN);

    /* Every attribute bit, one undefined bit, and times with offsets and nanoseconds. */
    uint64_t ro = pattern_file(fx, root, "ro.bin", 2000, 4, NULL);
    struct lanyfs_entry e;
    fx_entry_get(fx, ro, &e);
    e.attr = LANYFS_ATTR_NOWRITE | LANYFS_ATTR_NOEXEC | LANYFS_ATTR_ARCHIVE | 0x0100;
    e.created.offset = -300;
    e.modified.nsec = 123456789;
    e.modified.offset = 60;
    e.wrcnt = 65535;
    fx_entry_put(fx, ro, &e);

    uint64_t odd = fx_file(fx, root, "odd-times.txt", "x", 1);
    NEED(odd != 0);
    fx_entry_get(fx, odd, &e);
    e.modified.month = 13;
    memset(&e.created, 0, sizeof(e.created));
    fx_entry_put(fx, odd, &e);

    /* Ten blocks, the last one partial, with file blocks 3 and 4 punched out. */
    size_t hlen = 9 * 512 + 200;
    uint8_t *h = pattern(hlen, 3);
    uint64_t holes = fx_file(fx, root, "holes.bin", h, hlen);
    NEED(holes != 0);
    punch(fx, holes, 3);
    punch(fx, holes, 4);
    memset(h + 3 * 512, 0, 2 * 512);
    write_file("tree-holes.bin.expect", h, hlen);
    free(h);
    return fx;
}

/* ---- levels.img ---------------------------------------------------------- */

static void build_levels(void)
{
    struct fx *fx = fx_new(9, 8, 4400);
    NEED(fx != NULL);
    uint64_t root = fx_root(fx);
    uint32_t extmax = fx_geom(fx)->extmax; /* 63 */

    pattern_file(fx, root, "l0.bin", 10 * 512 - 7, 10, "levels-l0.bin.expect");
    pattern_file(fx, root, "l1.bin", 100 * 512, 11, "levels-l1.bin.expect");

    /* 4000 blocks need level 2 (63 * 63 = 3969 < 4000). */
    size_t len2 = 4000 * 512;
    uint8_t *d = pattern(len2, 12);
    uint64_t l2 = fx_file(fx, root, "l2.bin", d, len2);
    NEED(l2 != 0);
    /* A level-0 hole at file block 70, and a whole level-1 slot (blocks 126..188) empty. */
    punch(fx, l2, 70);
    memset(d + 70 * 512, 0, 512);
    uint64_t top = fx_get_subtree(fx, l2);
    NEED(fx_ext_level(fx, top) == 2);
    uint64_t mid = fx_ext_get_slot(fx, top, 0);
    NEED(mid != 0 && fx_ext_level(fx, mid) == 1);
    fx_ext_set_slot(fx, mid, 2, 0);
    memset(d + (size_t)2 * extmax * 512, 0, (size_t)extmax * 512);
    write_file("levels-l2.bin.expect", d, len2);
    free(d);

    /* A sparse level-3 tree: file blocks 0, 1 and extmax^3 + 5 mapped, the rest holes. */
    uint64_t sp = fx_entry_new(fx, LANYFS_TYPE_FILE, "sparse3.bin", strlen("sparse3.bin"));
    NEED(sp != 0 && fx_link(fx, root, sp) == 0);
    uint64_t e3 = fx_ext_new(fx, 3);
    uint64_t e2 = fx_ext_new(fx, 2), e1 = fx_ext_new(fx, 1), e0 = fx_ext_new(fx, 0);
    uint64_t f2 = fx_ext_new(fx, 2), f1 = fx_ext_new(fx, 1), f0 = fx_ext_new(fx, 0);
    NEED(e3 && e2 && e1 && e0 && f2 && f1 && f0);
    fx_ext_set_slot(fx, e3, 0, e2);
    fx_ext_set_slot(fx, e2, 0, e1);
    fx_ext_set_slot(fx, e1, 0, e0);
    fx_ext_set_slot(fx, e3, 1, f2);
    fx_ext_set_slot(fx, f2, 0, f1);
    fx_ext_set_slot(fx, f1, 0, f0);
    for (uint32_t i = 0; i < 2; i++) {
        uint64_t b = fx_alloc(fx);
        NEED(b != 0);
        fx_pattern(fx_block(fx, b), 512, 20 + i);
        fx_ext_set_slot(fx, e0, i, b);
    }
    uint64_t far = fx_alloc(fx);
    NEED(far != 0);
    fx_pattern(fx_block(fx, far), 512, 30);
    fx_ext_set_slot(fx, f0, 5, far);
    uint64_t cube = (uint64_t)extmax * extmax * extmax;
    fx_set_subtree(fx, sp, e3);
    fx_set_size(fx, sp, (cube + 6) * 512 - 100);
    save(fx, "levels.img");
    fx_free(fx);
}

/* ---- hostile.img --------------------------------------------------------- */

static void link_raw(struct fx *fx, uint64_t dir, uint8_t type, const void *name, size_t len)
{
    uint64_t b = fx_entry_new(fx, type, name, len);
    NEED(b != 0);
    NEED(fx_link(fx, dir, b) == 0);
}

static void build_hostile(void)
{
    static const char *const names[] = {
        "esc\x1b[31mred\x1b[0m",     /* ANSI colour */
        "title\x1b]0;pwned\x07",     /* OSC: set the terminal title */
        "bad\xff\xfeutf8",           /* invalid UTF-8 */
        "slash/inside",              /* '/' on disk */
        "back\\slash",               /* a backslash */
        "bidi\xe2\x80\xae" "evil",   /* U+202E right-to-left override */
        "new\nline",                 /* newline */
        "tab\there",                 /* tab */
        "del\x7f",                   /* DEL */
        "c1\xc2\x9b" "csi",          /* U+009B, the C1 CSI */
        "overlong\xc0\xaf",          /* overlong '/' */
        "surrogate\xed\xa0\x80",     /* an encoded surrogate */
        "line\xe2\x80\xa8sep",       /* U+2028 line separator */
        "caf\xc3\xa9",               /* valid UTF-8, shown as it is */
        "\xe6\x97\xa5\xe6\x9c\xac",  /* valid UTF-8 (CJK) */
    };
    struct fx *fx = fx_new(9, 2, 256);
    NEED(fx != NULL);
    uint64_t root = fx_root(fx);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        link_raw(fx, root, LANYFS_TYPE_FILE, names[i], strlen(names[i]));
    uint8_t longname[LANYFS_NAME_FIELD];
    memset(longname, 'N', sizeof(longname));
    link_raw(fx, root, LANYFS_TYPE_FILE, longname, sizeof(longname));
    link_raw(fx, root, LANYFS_TYPE_FILE, "", 0);
    /* A directory with an escape in its name, holding a file, for -R paths. */
    uint64_t d = fx_entry_new(fx, LANYFS_TYPE_DIR, "dir\x1b[2J", 7);
    NEED(d != 0 && fx_link(fx, root, d) == 0);
    uint64_t inner = fx_file(fx, d, "inner\x1b[Htxt", "x\n", 2);
    NEED(inner != 0);
    /* Damage below hostile names: problems must show the escaped path. */
    uint64_t back = fx_mkdir(fx, d, "back\\dir");
    NEED(back != 0);
    fx_set_subtree(fx, back, d);
    fx_set_left(fx, inner, 9999);
    fx_set_label(fx, "label\x1b]0;pwned\x07");
    save(fx, "hostile.img");
    fx_free(fx);
}

/* ---- cycle.img ----------------------------------------------------------- */

static void build_cycle(void)
{
    struct fx *fx = fx_new(9, 4, 256);
    NEED(fx != NULL);
    uint64_t root = fx_root(fx);

    /* /a/b's subtree is the entry of /a itself: -R meets /a again below /a/b. */
    uint64_t a = fx_mkdir(fx, root, "a");
    NEED(a != 0);
    uint64_t b = fx_mkdir(fx, a, "b");
    NEED(b != 0);
    NEED(fx_file(fx, a, "file-in-a", "a\n", 2) != 0);
    fx_set_subtree(fx, b, a);

    /* /loop: x, y, z linked in order, then z's left points back at the tree's root. */
    uint64_t loop = fx_mkdir(fx, root, "loop");
    NEED(loop != 0);
    uint64_t y = fx_file(fx, loop, "y", NULL, 0);
    uint64_t x = fx_file(fx, loop, "x", NULL, 0);
    uint64_t z = fx_file(fx, loop, "z", NULL, 0);
    NEED(x && y && z);
    fx_set_left(fx, z, y);

    /* /badptr: an entry whose right link lies beyond the device. */
    uint64_t bp = fx_mkdir(fx, root, "badptr");
    NEED(bp != 0);
    uint64_t p = fx_file(fx, bp, "p", NULL, 0);
    NEED(p != 0);
    fx_set_right(fx, p, 999999);

    /* /badtype: an entry whose left link names an extender block. */
    uint64_t bt = fx_mkdir(fx, root, "badtype");
    NEED(bt != 0);
    uint64_t q = fx_file(fx, bt, "q", NULL, 0);
    uint64_t ext = fx_ext_new(fx, 0);
    NEED(q != 0 && ext != 0);
    fx_set_left(fx, q, ext);

    /* /disorder: "a" hung to the left of "m", where only greater names belong. */
    uint64_t dis = fx_mkdir(fx, root, "disorder");
    NEED(dis != 0);
    uint64_t m = fx_file(fx, dis, "m", NULL, 0);
    uint64_t small = fx_entry_new(fx, LANYFS_TYPE_FILE, "a", 1);
    NEED(m != 0 && small != 0);
    fx_set_left(fx, m, small);
    save(fx, "cycle.img");
    fx_free(fx);
}

/* ---- badfile.img ---------------------------------------------------------- */

static void build_badfile(void)
{
    struct fx *fx = fx_new(9, 4, 256);
    NEED(fx != NULL);
    uint64_t root = fx_root(fx);
    uint32_t extmax = fx_geom(fx)->extmax; /* 126 */

    /* Data pointing at the root directory instead of an extender. */
    uint64_t nx = fx_file(fx, root, "notext.bin", NULL, 0);
    NEED(nx != 0);
    fx_set_subtree(fx, nx, root);
    fx_set_size(fx, nx, 1000);
    uint8_t zeros[1000] = {0};
    write_file("badfile-notext.bin.expect", zeros, sizeof(zeros));

    /* Block 1 of three maps beyond the device: blocks 0 and 2 still read. */
    size_t blen = 3 * 512;
    uint8_t *d = pattern(blen, 40);
    uint64_t be = fx_file(fx, root, "beyond.bin", d, blen);
    NEED(be != 0);
    fx_ext_set_slot(fx, fx_get_subtree(fx, be), 1, 999999);
    memset(d + 512, 0, 512);
    write_file("badfile-beyond.bin.expect", d, blen);
    free(d);

    /* A level-1 tree whose slots 0 and 1 share one level-0 extender. */
    uint64_t sh = fx_entry_new(fx, LANYFS_TYPE_FILE, "shared.bin", strlen("shared.bin"));
    NEED(sh != 0 && fx_link(fx, root, sh) == 0);
    uint64_t top = fx_ext_new(fx, 1), leaf = fx_ext_new(fx, 0), db = fx_alloc(fx);
    NEED(top && leaf && db);
    fx_pattern(fx_block(fx, db), 512, 41);
    fx_ext_set_slot(fx, leaf, 0, db);
    fx_ext_set_slot(fx, top, 0, leaf);
    fx_ext_set_slot(fx, top, 1, leaf);
    fx_set_subtree(fx, sh, top);
    fx_set_size(fx, sh, ((uint64_t)extmax + 1) * 512);

    /* A level-0 tree of two blocks under a size of 1 TiB. */
    uint8_t two[1024];
    fx_pattern(two, sizeof(two), 42);
    uint64_t huge = fx_file(fx, root, "huge.bin", two, sizeof(two));
    NEED(huge != 0);
    fx_set_size(fx, huge, (uint64_t)1 << 40);
    uint8_t *cap = calloc((size_t)extmax, 512);
    NEED(cap != NULL);
    memcpy(cap, two, sizeof(two));
    write_file("badfile-huge.bin.expect", cap, (size_t)extmax * 512);
    free(cap);
    save(fx, "badfile.img");
    fx_free(fx);
}

/* ---- deep.img -------------------------------------------------------------- */

static void build_deep(void)
{
    struct fx *fx = fx_new(9, 2, 256);
    NEED(fx != NULL);
    uint64_t dir = fx_root(fx);
    for (int i = 0; i < 130; i++) {
        dir = fx_mkdir(fx, dir, "d");
        NEED(dir != 0);
    }
    NEED(fx_file(fx, dir, "bottom.txt", "bottom\n", 7) != 0);
    save(fx, "deep.img");
    fx_free(fx);
}

/* ---- lost.img -------------------------------------------------------------- */

static void build_lost(void)
{
    struct fx *fx = fx_new(9, 4, 256);
    NEED(fx != NULL);
    uint64_t root = fx_root(fx);
    pattern_file(fx, root, "a.txt", 100, 50, NULL);

    /* b.bin: its tree (the block after it) landed, its data pointer and size
     * did not (counter 0, as just created). */
    uint64_t b = pattern_file(fx, root, "b.bin", 3 * 512, 51, NULL);
    NEED(fx_get_subtree(fx, b) == b + 1);
    struct lanyfs_entry e;
    fx_entry_get(fx, b, &e);
    e.subtree = 0;
    e.size = 0;
    e.wrcnt = 0;
    fx_entry_put(fx, b, &e);

    /* c.bin: five blocks, file block 2 a hole, its entry wiped. */
    uint64_t c = pattern_file(fx, root, "c.bin", 5 * 512, 52, NULL);
    punch(fx, c, 2);
    memset(fx_block(fx, c), 0, 512);
    save(fx, "lost.img");
    fx_free(fx);
}

/* ---- superblock damage ------------------------------------------------------ */

static void build_super_cases(void)
{
    struct lanyfs_super sb;
    struct fx *fx = fx_new(9, 4, 64);
    NEED(fx != NULL);
    NEED(fx_file(fx, fx_root(fx), "f", "f\n", 2) != 0);
    fx_freelist(fx);

    fx_super_get(fx, &sb);
    sb.rootdir = 5000;
    fx_super_put(fx, &sb);
    write_image(fx, "rootbeyond.img");

    fx_super_get(fx, &sb);
    sb.rootdir = 1;
    sb.magic = 0x12345678;
    fx_super_put(fx, &sb);
    write_image(fx, "badmagic.img");

    fx_super_get(fx, &sb);
    sb.magic = LANYFS_MAGIC;
    sb.major = 2;
    sb.minor = 0;
    fx_super_put(fx, &sb);
    write_image(fx, "badversion.img");

    fx_super_get(fx, &sb);
    sb.major = 3; /* 1 with bit 1 flipped */
    sb.minor = 4;
    fx_super_put(fx, &sb);
    write_image(fx, "flipversion.img");

    fx_super_get(fx, &sb);
    sb.major = 1;
    sb.minor = 4;
    sb.type = LANYFS_TYPE_FILE;
    fx_super_put(fx, &sb);
    write_image(fx, "badtype.img");

    fx_super_get(fx, &sb);
    sb.type = LANYFS_TYPE_SUPER;
    sb.blockbits = 13;
    fx_super_put(fx, &sb);
    write_image(fx, "badgeom.img");
    fx_free(fx);
}

/* ---- block 0 lost: -f reads with what the blocks imply ------------------- */

static void build_blank0(void)
{
    struct fx *fx = fx_new(11, 3, 256);
    NEED(fx != NULL);
    uint64_t root = fx_root(fx);
    uint64_t docs = fx_mkdir(fx, root, "docs");
    NEED(docs != 0);
    NEED(pattern_file(fx, docs, "big.bin", 3 * 2048 - 100, 61, "blank0-big.bin.expect") != 0);
    NEED(fx_file(fx, root, "note.txt", "note\n", 5) != 0);
    fx_freelist(fx);
    memset(fx_block(fx, 0), 0, 2048);
    write_image(fx, "blank0.img");
    /* The root gone as well: the search takes the directory with the most below it. */
    memset(fx_block(fx, root), 0, 2048);
    write_image(fx, "blank0root.img");
    fx_free(fx);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: mkfixtures OUTDIR [STAMP]\n");
        return 2;
    }
    outdir = argv[1];

    struct fx *tree = build_tree();
    save(tree, "tree.img");
    char *p = out_path("truncated.img");
    /* Cut inside the used blocks, so that some entries and data lie past the end. */
    NEED(fx_save_truncated(tree, p, fx_used_count(tree) / 2 * fx_blocksize(tree)) == 0);
    free(p);
    p = out_path("tiny.img");
    NEED(fx_save_truncated(tree, p, 100) == 0);
    free(p);
    fx_free(tree);

    build_levels();
    build_hostile();
    build_cycle();
    build_badfile();
    build_deep();
    build_lost();
    build_super_cases();
    build_blank0();

    if (argc == 3) {
        FILE *f = fopen(argv[2], "w");
        NEED(f != NULL);
        NEED(fputs("ok\n", f) >= 0);
        NEED(fclose(f) == 0);
    }
    return 0;
}
