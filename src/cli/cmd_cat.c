/*
 * cmd_cat.c -- `lanyfs cat [-f] IMAGE PATH`: a file's bytes to stdout.
 *
 * The file is read block by block through lanyfs_file_pread, so a block
 * that cannot be read (a corrupt extender, a slot beyond the device) costs
 * only that block: it is written as zeros, reported, and the copy goes on,
 * which is what a recovery wants.  Holes read as zeros too; a note on
 * stderr says how many hole blocks were met.  The copy stops where the
 * device or the file's extender tree ends, even when the size field says
 * more (reported as corruption).  A directory is refused.
 * There is no JSON form of file contents: --json is a usage error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define EXT_LEVEL_MAX LANYFS_EXT_LEVEL_MAX /* deepest tree the core's reader follows */

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/*
 * How many bytes of e can hold data: no more than the device (and the
 * image) holds, no more than the top extender's tree maps, nothing without
 * a data pointer.  A size beyond that is reported and the copy stops
 * there, so a hostile size cannot make the output endless.
 */
static uint64_t readable_size(struct out_report *rep, struct lanyfs_fs *fs, const char *where,
                              const struct lanyfs_entry *e)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint64_t blocks = g->blocks;
        enum { DEVICE, IMAGE, NO_DATA, TREE } what = DEVICE;
    if (lanyfs_fs_image_blocks(fs) < blocks) {
        blocks = lanyfs_fs_image_blocks(fs);
        what = IMAGE;
    }
    uint64_t cap = mul_sat(blocks, g->blocksize);
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    struct lanyfs_ext_hdr h;
    if (e->subtree == 0) {
        cap = 0;
        what = NO_DATA;
    } else if (lanyfs_fs_read_block(fs, e->subtree, buf, NULL) == LANYFS_OK) {
        lanyfs_ext_decode(&h, buf);
        if (h.type == LANYFS_TYPE_EXT && h.level <= EXT_LEVEL_MAX) {
            uint64_t tree = mul_sat(lanyfs_geom_tree_capacity(g, h.level), g->blocksize);
            if (tree < cap) {
                cap = tree;
                what = TREE;
            }
        }
    }
    if (e->size <= cap)
        return e->size;
    /* One whole sentence per limit, so that each translates as a whole. */
    enum lanyfs_err c = LANYFS_E_CORRUPT;
    uint64_t nb = LANYFS_NO_BLOCK;
    switch (what) {
    case DEVICE:
        out_report_addf(rep, where, c, nb, N_("size %" PRIu64 " bytes is more than the device "
                                              "holds (%" PRIu64 " bytes); output stops there"),
                        e->size, cap);
        break;
    case IMAGE:
        out_report_addf(rep, where, c, nb, N_("size %" PRIu64 " bytes is more than the image "
                                              "holds (%" PRIu64 " bytes); output stops there"),
                        e->size, cap);
        break;
    case NO_DATA:
        out_report_addf(rep, where, c, nb, N_("size %" PRIu64 " bytes is more than a file "
                                              "without a data pointer holds (%" PRIu64
                                              " bytes); output stops there"),
                        e->size, cap);
        break;
    case TREE:
        out_report_addf(rep, where, c, nb, N_("size %" PRIu64 " bytes is more than its "
                                              "extender tree maps (%" PRIu64
                                              " bytes); output stops there"),
                        e->size, cap);
        break;
    }
    return cap;
}

/* Copy the file e to stdout; problems go to rep. */
static void copy_file(struct out_report *rep, struct lanyfs_fs *fs, const char *where,
                      const struct lanyfs_entry *e)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    uint64_t holes = 0, failed = 0;
    struct lanyfs_error err;
    uint64_t size = readable_size(rep, fs, where, e);
    for (uint64_t off = 0; off < size;) {
        size_t want = g->blocksize;
        if (want > size - off)
            want = (size_t)(size - off);
        size_t got = 0;
        lanyfs_error_clear(&err);
        if (lanyfs_file_pread(fs, e, off, buf, want, &got, &holes, &err) != LANYFS_OK) {
            if (failed == 0)
                out_report_error(rep, where, &err);
            failed++;
            memset(buf, 0, want);
            got = want;
        }
        if (got == 0)
            break; /* the reader clipped: nothing more to copy */
        if (fwrite(buf, 1, got, stdout) != got) {
            out_flush_stdout(rep);
            return;
        }
        off += got;
    }
    if (failed > 0) {
        out_report_addf(rep, where, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                        N_("%" PRIu64 " unreadable block(s) written as zeros"), failed);
    }
    if (holes > 0) {
        char *esc = out_escape(where, strlen(where), 0);
        fprintf(stderr, _("lanyfs: %s: note: %" PRIu64 " hole block(s) read as zeros\n"), esc,
                holes);
        g_free(esc);
    }
    out_flush_stdout(rep);
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"force", no_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool force = false;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            force = true;
            break;
        case 'j':
            return cli_usage_error(self, _("file contents have no JSON form; use 'lanyfs stat "
                                     "--json' for a file's metadata"));
        case 'h':
            return cli_help(self);
        default:
            return cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 2)
        return cli_usage_error(self, _("expects IMAGE and PATH"));
    const char *image = argv[optind];
    const char *path = argv[optind + 1];

    struct out_report rep;
    out_report_init(&rep);
    uint64_t blk;
    struct lanyfs_entry e;
    struct lanyfs_fs *fs = cli_open(&rep, image, force);
    if (fs == NULL)
        goto out;
    if (!cli_resolve(&rep, fs, path, &blk, &e))
        goto out;
    if (lanyfs_entry_is_dir(&e)) {
        out_report_addf(&rep, path, LANYFS_E_ISDIR, blk, N_("is a directory"));
        goto out;
    }
    copy_file(&rep, fs, path, &e);
out:
    lanyfs_fs_close(fs);
    int rc = rep.exit_code;
    out_report_free(&rep);
    return rc;
}

const struct cli_command cmd_cat = {
    "cat",
    N_("[-f] IMAGE PATH"),
    N_("Write a file's bytes to standard output."),
    N_("Options:\n"
       "  -f, --force  read an image whose superblock fails its checks\n"
       "               (where block 0 fails, the geometry and root come from the blocks)\n"
       "  -h, --help   show this help\n\n"
       "Holes read as zeros; a note on stderr counts them.  A block that cannot be\n"
       "read is written as zeros and reported, and the copy goes on (exit status 7).\n"
       "The copy stops where the extender tree or the device ends, whatever the\n"
       "size says (reported, exit status 7).\n"
       "A directory is refused.  --json is refused: use 'lanyfs stat --json'.\n"),
    run,
};
