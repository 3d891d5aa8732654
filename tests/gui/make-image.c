/*
 * make-image.c -- LanyFS images for the GUI's tests, made with the core's own writer.
 *
 *     make-image [--files N] [--blocks B] [--blockbits K] [--unplugged] IMAGE
 *
 * Formats IMAGE (B blocks of 2^K bytes; by default as many as the files
 * need) and writes, in one mount of the correct writer:
 *  - /docs: a few text files, one of several blocks, and picture.png (a
 *    real PNG drawn with cairo, for the preview);
 *  - /names: files whose names need escaping: a backslash, a byte that is
 *    not UTF-8, a leading dot, a name of 255 bytes;
 *  - /bulk/dNNN: N small files spread over directories of 500, so that a
 *    big N makes a tree of realistic width (files alternate between empty
 *    and one block);
 *  - /old: files that are then deleted (their entry blocks stay intact in
 *    the free list, the scanner's deleted entries);
 *  - /lost: a directory holding three files, whose tree is then cut from
 *    it by hand after the unmount (its files become orphans);
 *  - with --unplugged, /unplugged: two writes an unplug cut short, their
 *    entries' data pointers and sizes set back to 0 after the unmount:
 *    report.txt, just created (its tree follows its entry: the scanner's
 *    UNLINKED_FILE_DATA), and draft.txt, written twice (its second tree
 *    lies away from its entry: LOST_DATA_TREE).
 * The result is deterministic (SOURCE_DATE_EPOCH-style fixed time).
 */
#include <cairo.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lanyfs.h"
#include "writer.h"

#define DIR_WIDTH 500

static int fail(const char *what, const struct lanyfs_error *err)
{
    fprintf(stderr, "make-image: %s: %s\n", what,
            err->msg[0] ? err->msg : lanyfs_strerror(err->code));
    return 1;
}

static cairo_status_t append_png(void *closure, const unsigned char *data, unsigned int len)
{
    struct {
        unsigned char *p;
        size_t n;
    } *buf = closure;
    unsigned char *np = realloc(buf->p, buf->n + len);

    if (np == NULL)
        return CAIRO_STATUS_NO_MEMORY;
    memcpy(np + buf->n, data, len);
    buf->p = np;
    buf->n += len;
    return CAIRO_STATUS_SUCCESS;
}

/* A 96 x 64 picture: a blue-to-green gradient with a white disc. */
static unsigned char *make_png(size_t *len)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 96, 64);
    cairo_t *cr = cairo_create(s);
    cairo_pattern_t *pat = cairo_pattern_create_linear(0, 0, 96, 64);
    struct {
        unsigned char *p;
        size_t n;
    } buf = {NULL, 0};

    cairo_pattern_add_color_stop_rgb(pat, 0, 0.10, 0.37, 0.71);
    cairo_pattern_add_color_stop_rgb(pat, 1, 0.15, 0.64, 0.41);
    cairo_set_source(cr, pat);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_arc(cr, 48, 32, 18, 0, 6.2832);
    cairo_fill(cr);
    cairo_pattern_destroy(pat);
    cairo_destroy(cr);
    cairo_surface_write_to_png_stream(s, append_png, &buf);
    cairo_surface_destroy(s);
    *len = buf.n;
    return buf.p;
}

static int put(struct lanyfs_writer *w, const char *path, const void *data, size_t len)
{
    struct lanyfs_error err = {0};

    if (lanyfs_writer_put(w, path, data, len, NULL, &err) != LANYFS_OK)
        return fail(path, &err);
    return 0;
}

static int mkdir_(struct lanyfs_writer *w, const char *path)
{
    struct lanyfs_error err = {0};

    if (lanyfs_writer_mkdir(w, path, &err) != LANYFS_OK)
        return fail(path, &err);
    return 0;
}

static int write_tree(struct lanyfs_writer *w, unsigned long files, uint32_t blocksize)
{
    static const char letter[] =
        "Dear finder,\n\nthis stick was pulled out in the middle of a write. What you read "
        "here survived.\n";
    char path[512];
    char *text;
    size_t text_len = (size_t)blocksize * 3 + 100;
    unsigned char *png;
    size_t png_len = 0;
    unsigned char block[4096];
    int rc = 0;

    rc |= mkdir_(w, "/docs");
    rc |= put(w, "/docs/letter.txt", letter, sizeof(letter) - 1);
    text = malloc(text_len);
    for (size_t i = 0; i < text_len; i++)
        text[i] = (char)(i % 64 == 63 ? '\n' : 'a' + (int)(i % 26));
    rc |= put(w, "/docs/long.txt", text, text_len);
    free(text);
    png = make_png(&png_len);
    rc |= put(w, "/docs/picture.png", png, png_len);
    free(png);
    rc |= put(w, "/docs/empty.txt", "", 0);

    rc |= mkdir_(w, "/names");
    rc |= put(w, "/names/back\\slash", "b", 1);
    rc |= put(w, "/names/bad\xff" "byte", "x", 1);
    rc |= put(w, "/names/.hidden", "h", 1);
    memset(path, 'n', sizeof(path));
    memcpy(path, "/names/", 7);
    path[7 + 255] = '\0';
    rc |= put(w, path, "long", 4);

    rc |= mkdir_(w, "/old");
    for (int i = 0; i < 6; i++) {
        char body[64];
        int n = snprintf(body, sizeof(body), "deleted file %d, still on the stick\n", i);
        snprintf(path, sizeof(path), "/old/gone-%d.txt", i);
        rc |= put(w, path, body, (size_t)n);
    }
    rc |= mkdir_(w, "/lost");
    rc |= put(w, "/lost/one.txt", "one\n", 4);
    rc |= put(w, "/lost/two.txt", "two\n", 4);
    rc |= put(w, "/lost/three.txt", "three\n", 6);

    if (files > 0)
        rc |= mkdir_(w, "/bulk");
    memset(block, 'z', sizeof(block));
    for (unsigned long i = 0; i < files && rc == 0; i++) {
        if (i % DIR_WIDTH == 0) {
            snprintf(path, sizeof(path), "/bulk/d%04lu", i / DIR_WIDTH);
            rc |= mkdir_(w, path);
        }
        snprintf(path, sizeof(path), "/bulk/d%04lu/file-%06lu.dat", i / DIR_WIDTH, i);
        rc |= put(w, path, block, i % 2 ? (blocksize < sizeof(block) ? blocksize : sizeof(block)) : 0);
    }
    return rc;
}

/* The texts of /unplugged (test-models-real.c knows them too). */
static const char report_text[] = "the report, written just before the unplug\n";
static const char draft_text[] = "the second draft, which never reached its entry\n";

static int write_unplugged(struct lanyfs_writer *w)
{
    int rc = mkdir_(w, "/unplugged");
    rc |= put(w, "/unplugged/report.txt", report_text, sizeof(report_text) - 1);
    rc |= put(w, "/unplugged/draft.txt", "the first draft\n", 16);
    rc |= put(w, "/unplugged/draft.txt", draft_text, sizeof(draft_text) - 1);
    return rc;
}

/* Set path's data pointer and size back to 0 (and its counter, with fresh). */
static int unlink_data(struct lanyfs_fs *fs, const char *path, int fresh)
{
    struct lanyfs_error err = {0};
    struct lanyfs_entry e;
    uint64_t blk = 0;
    uint8_t *buf = malloc(lanyfs_fs_geom(fs)->blocksize);
    int rc = 0;

    if (buf == NULL || lanyfs_path_resolve(fs, path, &blk, &e, &err) != LANYFS_OK ||
        lanyfs_fs_read_block(fs, blk, buf, &err) != LANYFS_OK) {
        rc = fail(path, &err);
    } else {
        e.subtree = 0;
        e.size = 0;
        if (fresh)
            e.wrcnt = 0;
        lanyfs_entry_encode(&e, buf);
        if (lanyfs_fs_write_block(fs, blk, buf, &err) != LANYFS_OK)
            rc = fail(path, &err);
    }
    free(buf);
    return rc;
}

static int cut_unplugged(const char *image)
{
    struct lanyfs_error err = {0};
    struct lanyfs_fs *fs = NULL;
    int rc;

    if (lanyfs_fs_open(image, LANYFS_OPEN_RDWR, &fs, &err) != LANYFS_OK)
        return fail(image, &err);
    rc = unlink_data(fs, "/unplugged/report.txt", 1);
    rc |= unlink_data(fs, "/unplugged/draft.txt", 0);
    lanyfs_fs_close(fs);
    return rc;
}

static int delete_old(struct lanyfs_writer *w)
{
    struct lanyfs_error err = {0};
    char path[64];

    for (int i = 0; i < 6; i += 2) {
        snprintf(path, sizeof(path), "/old/gone-%d.txt", i);
        if (lanyfs_writer_unlink(w, path, &err) != LANYFS_OK)
            return fail(path, &err);
    }
    return 0;
}

/* Cut /lost's tree from it: its files stay valid, and nothing reaches them. */
static int orphan_lost(const char *image)
{
    struct lanyfs_error err = {0};
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_entry e;
    uint64_t blk = 0;
    uint8_t *buf;
    int rc = 0;

    if (lanyfs_fs_open(image, LANYFS_OPEN_RDWR, &fs, &err) != LANYFS_OK)
        return fail(image, &err);
    if (lanyfs_path_resolve(fs, "/lost", &blk, &e, &err) != LANYFS_OK) {
        rc = fail("/lost", &err);
        goto out_close;
    }
    buf = malloc(lanyfs_fs_geom(fs)->blocksize);
    if (lanyfs_fs_read_block(fs, blk, buf, &err) != LANYFS_OK) {
        rc = fail("/lost", &err);
    } else {
        e.subtree = 0;
        lanyfs_entry_encode(&e, buf);
        if (lanyfs_fs_write_block(fs, blk, buf, &err) != LANYFS_OK)
            rc = fail("/lost", &err);
    }
    free(buf);
out_close:
    lanyfs_fs_close(fs);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned long files = 0;
    unsigned long long blocks = 0;
    unsigned blockbits = 9;
    int unplugged = 0;
    const char *image = NULL;
    struct lanyfs_error err = {0};
    struct lanyfs_image *img = NULL;
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_writer *w = NULL;
    struct lanyfs_format_opts o = {0};
    struct lanyfs_ts now;
    int fd;
    int rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--files") == 0 && i + 1 < argc)
            files = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--blocks") == 0 && i + 1 < argc)
            blocks = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--blockbits") == 0 && i + 1 < argc)
            blockbits = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--unplugged") == 0)
            unplugged = 1;
        else if (argv[i][0] != '-' && image == NULL)
            image = argv[i];
        else {
            fprintf(stderr, "usage: make-image [--files N] [--blocks B] [--blockbits K] [--unplugged] IMAGE\n");
            return 2;
        }
    }
    if (image == NULL || blockbits < 9 || blockbits > 12) {
        fprintf(stderr, "usage: make-image [--files N] [--blocks B] [--blockbits K] [--unplugged] IMAGE\n");
        return 2;
    }
    if (blocks == 0)
        blocks = 4096 + (unsigned long long)files * 2 + files / 32;

    fd = open(image, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, (off_t)(blocks << blockbits)) != 0) {
        fprintf(stderr, "make-image: %s: %s\n", image, strerror(errno));
        return 1;
    }
    close(fd);

    lanyfs_ts_from_time(&now, 1796259735, 0, 0);
    o.blockbits = blockbits;
    o.addrlen = 4;
    o.label = "RESCUE TEST";
    o.label_len = strlen(o.label);
    o.now = &now;
    if (lanyfs_image_open(image, LANYFS_IMAGE_RDWR, &img, &err) != LANYFS_OK)
        return fail(image, &err);
    rc = lanyfs_format(img, &o, &err);
    lanyfs_image_close(img);
    if (rc != LANYFS_OK)
        return fail("format", &err);

    if (lanyfs_fs_open(image, LANYFS_OPEN_RDWR, &fs, &err) != LANYFS_OK)
        return fail(image, &err);
    if (lanyfs_writer_mount(fs, LANYFS_WRITE_CORRECT, &w, &err) != LANYFS_OK)
        return fail("mount", &err);
    lanyfs_writer_set_time(w, &now);
    rc = write_tree(w, files, 1u << blockbits);
    if (rc == 0)
        rc = delete_old(w);
    if (rc == 0 && unplugged)
        rc = write_unplugged(w);
    if (lanyfs_writer_unmount(w, &err) != LANYFS_OK)
        rc = fail("unmount", &err);
    lanyfs_fs_close(fs);
    if (rc == 0)
        rc = orphan_lost(image);
    if (rc == 0 && unplugged)
        rc = cut_unplugged(image);
    return rc;
}
