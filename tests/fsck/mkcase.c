/*
 * mkcase.c -- damage an image on purpose, for the fsck image cases.
 *
 *   mkcase IMAGE block BLK              print a block number (see BLK below)
 *   mkcase IMAGE set BLK FIELD VALUE    store VALUE into FIELD of block BLK
 *   mkcase IMAGE name BLK NAME          set an entry's name (raw bytes, '' empty)
 *   mkcase IMAGE copy BLK BLK           copy the first block over the second
 *   mkcase IMAGE fill BLK BYTE          fill a block with one byte value
 *
 * BLK and VALUE are numbers or references resolved on the image as it
 * stands: @PATH (the entry's own block), @PATH:data (its top extender),
 * @PATH:blk:N (the disk block of its file block N), @PATH:parent (the
 * directory holding it), @freehead.
 *
 * FIELD: entry fields left, right, subtree (also data), size, wrcnt,
 * type, attr; extender level and slot:N; chain next and cslot:N; the
 * superblock's sb:blocks, sb:freehead, sb:freetail, sb:freeblocks,
 * sb:rootdir, sb:badblocks, sb:type; byte:OFF:SIZE for anything else.
 *
 * Writes go straight to the image file, around every check of the core:
 * the point is to make what the core would refuse to make.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanyfs.h"

static struct lanyfs_fs *fs;
static const char *image;

static void die(const char *what, const char *arg)
{
    fprintf(stderr, "mkcase: %s%s\n", what, arg ? arg : "");
    exit(2);
}

static void reopen(void)
{
    struct lanyfs_error err = {0};
    lanyfs_fs_close(fs);
    fs = NULL;
    if (lanyfs_fs_open(image, LANYFS_OPEN_RDWR | LANYFS_OPEN_FORCE, &fs, &err) != LANYFS_OK)
        die("cannot open: ", err.msg);
}

static uint64_t number(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *s == '\0' || *end != '\0')
        die("not a number or reference: ", s);
    return v;
}

static uint64_t resolve(const char *spec)
{
    if (spec[0] != '@')
        return number(spec);
    if (strcmp(spec, "@freehead") == 0)
        return lanyfs_fs_super(fs)->freehead;
    char path[4096];
    snprintf(path, sizeof(path), "%s", spec + 1);
    char *what = strchr(path, ':');
    if (what != NULL)
        *what++ = '\0';
    struct lanyfs_error err = {0};
    uint64_t blk;
    struct lanyfs_entry e;
    if (what != NULL && strcmp(what, "parent") == 0) {
        char *slash = strrchr(path, '/');
        if (slash == NULL)
            die("no parent: ", spec);
        *slash = '\0';
        if (path[0] == '\0')
            return lanyfs_fs_super(fs)->rootdir;
    }
    if (lanyfs_path_resolve(fs, path, &blk, &e, &err) != LANYFS_OK)
        die("cannot resolve: ", err.msg);
    if (what == NULL || strcmp(what, "parent") == 0)
        return blk;
    if (strcmp(what, "data") == 0)
        return e.subtree;
    if (strncmp(what, "blk:", 4) == 0) {
        uint64_t d;
        if (lanyfs_file_map(fs, &e, number(what + 4), &d, &err) != LANYFS_OK)
            die("cannot map: ", err.msg);
        return d;
    }
    die("unknown reference: ", spec);
    return 0;
}

static void put_le(uint8_t *p, unsigned size, uint64_t v)
{
    for (unsigned i = 0; i < size; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int main(int argc, char **argv)
{
    if (argc < 3)
        die("usage: mkcase IMAGE block|set|name|copy|fill ...", NULL);
    image = argv[1];
    reopen();
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    struct lanyfs_image *img = lanyfs_fs_image(fs);
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    struct lanyfs_error err = {0};
    const char *cmd = argv[2];
    if (strcmp(cmd, "block") == 0 && argc == 4) {
        printf("%" PRIu64 "\n", resolve(argv[3]));
    } else if (strcmp(cmd, "set") == 0 && argc == 6) {
        uint64_t blk = resolve(argv[3]);
        const char *field = argv[4];
        uint64_t v = resolve(argv[5]);
        if (lanyfs_image_pread(img, blk << g->blockbits, buf, g->blocksize, &err) != LANYFS_OK)
            die("cannot read: ", err.msg);
        unsigned off = 0, size = 8;
        if (strcmp(field, "left") == 0)
            off = LANYFS_EN_LEFT;
        else if (strcmp(field, "right") == 0)
            off = LANYFS_EN_RIGHT;
        else if (strcmp(field, "subtree") == 0 || strcmp(field, "data") == 0)
            off = LANYFS_EN_SUBTREE;
        else if (strcmp(field, "size") == 0)
            off = LANYFS_EN_SIZE;
        else if (strcmp(field, "attr") == 0)
            off = LANYFS_EN_ATTR, size = 2;
        else if (strcmp(field, "wrcnt") == 0)
            off = LANYFS_HDR_WRCNT, size = 2;
        else if (strcmp(field, "type") == 0 || strcmp(field, "sb:type") == 0)
            off = LANYFS_HDR_TYPE, size = 1;
        else if (strcmp(field, "level") == 0)
            off = LANYFS_EXT_LEVEL, size = 1;
        else if (strcmp(field, "next") == 0)
            off = LANYFS_CH_NEXT;
        else if (strncmp(field, "slot:", 5) == 0)
            off = LANYFS_EXT_SLOTS + (unsigned)number(field + 5) * g->addrlen, size = g->addrlen;
        else if (strncmp(field, "cslot:", 6) == 0)
            off = LANYFS_CH_SLOTS + (unsigned)number(field + 6) * g->addrlen, size = g->addrlen;
        else if (strcmp(field, "sb:blocks") == 0)
            off = LANYFS_SB_BLOCKS;
        else if (strcmp(field, "sb:freehead") == 0)
            off = LANYFS_SB_FREEHEAD;
        else if (strcmp(field, "sb:freetail") == 0)
            off = LANYFS_SB_FREETAIL;
        else if (strcmp(field, "sb:freeblocks") == 0)
            off = LANYFS_SB_FREEBLOCKS;
        else if (strcmp(field, "sb:rootdir") == 0)
            off = LANYFS_SB_ROOTDIR;
        else if (strcmp(field, "sb:badblocks") == 0)
            off = LANYFS_SB_BADBLOCKS;
        else if (strncmp(field, "byte:", 5) == 0) {
            char *end;
            off = (unsigned)strtoul(field + 5, &end, 0);
            size = *end == ':' ? (unsigned)strtoul(end + 1, NULL, 0) : 1;
        } else
            die("unknown field: ", field);
        if (size == 0 || size > 8 || off + size > g->blocksize)
            die("field outside the block: ", field);
        put_le(buf + off, size, v);
        if (lanyfs_image_pwrite(img, blk << g->blockbits, buf, g->blocksize, &err) != LANYFS_OK)
            die("cannot write: ", err.msg);
    } else if (strcmp(cmd, "name") == 0 && argc == 5) {
        uint64_t blk = resolve(argv[3]);
        if (lanyfs_image_pread(img, blk << g->blockbits, buf, g->blocksize, &err) != LANYFS_OK)
            die("cannot read: ", err.msg);
        size_t n = strlen(argv[4]);
        memset(buf + LANYFS_EN_NAME, 0, LANYFS_NAME_FIELD);
        memcpy(buf + LANYFS_EN_NAME, argv[4], n > LANYFS_NAME_FIELD ? LANYFS_NAME_FIELD : n);
        if (lanyfs_image_pwrite(img, blk << g->blockbits, buf, g->blocksize, &err) != LANYFS_OK)
            die("cannot write: ", err.msg);
    } else if (strcmp(cmd, "copy") == 0 && argc == 5) {
        uint64_t a = resolve(argv[3]), b = resolve(argv[4]);
        if (lanyfs_image_pread(img, a << g->blockbits, buf, g->blocksize, &err) != LANYFS_OK ||
            lanyfs_image_pwrite(img, b << g->blockbits, buf, g->blocksize, &err) != LANYFS_OK)
            die("cannot copy: ", err.msg);
    } else if (strcmp(cmd, "fill") == 0 && argc == 5) {
        uint64_t blk = resolve(argv[3]);
        memset(buf, (int)number(argv[4]), g->blocksize);
        if (lanyfs_image_pwrite(img, blk << g->blockbits, buf, g->blocksize, &err) != LANYFS_OK)
            die("cannot write: ", err.msg);
    } else {
        die("bad command: ", cmd);
    }
    lanyfs_fs_close(fs);
    return 0;
}
