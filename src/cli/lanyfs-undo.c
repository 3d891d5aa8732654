/*
 * lanyfs-undo.c -- `lanyfs-undo [-n] [-f] [-v] UNDOFILE DEVICE`: put back
 * the blocks a repair changed, from the undo file it wrote (undo.h).
 *
 * The undo file is read and checked whole first; then the device: its
 * size and block size must be the recorded ones, and every recorded block
 * must hold either its old contents or what the repair wrote there (after
 * an interrupted repair: any of its writes).  A device that does not match
 * is refused, nothing written, unless --force.  Restoring writes the old
 * contents of every recorded block, the last changed first, and syncs.
 * A block already restored matches its old contents, so an interrupted
 * restore is completed by running the same command again.  A mounted
 * device is refused; a block device is opened with O_EXCL.
 *
 * Exit status: 0 restored (with -n: it matches and could be restored),
 * 1 operational error (the undo file unreadable or damaged, I/O), 2 usage
 * error, 3 the device does not match the undo file (nothing written).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "device.h"
#include "i18n.h"
#include "undo.h"

#define PROG "lanyfs-undo"

enum {
    UNDO_EXIT_OK = 0,
    UNDO_EXIT_ERROR = 1,
    UNDO_EXIT_USAGE = 2,
    UNDO_EXIT_MISMATCH = 3,
};

static void help(FILE *f)
{
    fprintf(f,
            _("Usage: %s [-n] [-f] [-v] UNDOFILE DEVICE\n"
              "Restore the blocks a repair by fsck-lanyfs changed, from its undo file.\n"
              "\n"
              "Options:\n"
              "  -n, --dry-run   check the device against the undo file; write nothing\n"
              "  -f, --force     restore even when the device does not match the undo file\n"
              "  -v, --verbose   say more about the undo file and the device\n"
              "  -h, --help      show this help\n"
              "  -V, --version   show the version\n"
              "\n"
              "The device must have the recorded size and block size, and every recorded\n"
              "block must hold its old contents or what the repair wrote; running the\n"
              "command again after an interruption completes the restore.\n"
              "\n"
              "Exit status:\n"
              "  0  restored (with -n: matches and could be restored)\n"
              "  1  operational error (undo file unreadable or damaged, I/O)\n"
              "  2  usage error\n"
              "  3  the device does not match the undo file (nothing written)\n"),
            PROG);
}

__attribute__((format(printf, 1, 2))) static void say_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", PROG);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* msg is English, marked N_(), and translated here. */
static int usage(const char *msg, const char *arg)
{
    fprintf(stderr, PROG ": %s%s\n", _(msg), arg ? arg : "");
    fprintf(stderr, _("Try '%s --help' for more information.\n"), PROG);
    return UNDO_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"dry-run", no_argument, NULL, 'n'},
        {"force", no_argument, NULL, 'f'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    bool dry = false, force = false, verbose = false;
    int c;
    cli_i18n_init();
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":nfvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            dry = true;
            break;
        case 'f':
            force = true;
            break;
        case 'v':
            verbose = true;
            break;
        case 'h':
            help(stdout);
            return UNDO_EXIT_OK;
        case 'V':
            printf(PROG " %s\n", PACKAGE_VERSION);
            return UNDO_EXIT_OK;
        default:
            return usage(N_("unknown option "), argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return usage(argc - optind < 2 ? N_("an undo file and a device are needed")
                                       : N_("too many arguments"),
                     NULL);
    const char *upath = argv[optind];
    const char *dpath = argv[optind + 1];

    int rc = UNDO_EXIT_ERROR;
    struct lanyfs_undo_file *uf = NULL;
    struct lanyfs_image *img = NULL;
    struct lanyfs_error err = {0};
    if (lanyfs_undo_file_open(upath, &uf, &err) != LANYFS_OK) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto out;
    }
    const struct lanyfs_undo_info *info = lanyfs_undo_file_info(uf);
    if (verbose) {
        char hex[65];
        lanyfs_sha256_hex(info->sb_sha256, hex);
        printf(_("%s: undo file version %" PRIu32 ", block size %" PRIu32 ", device %" PRIu64
                 " bytes, %" PRIu64 " blocks recorded, %" PRIu64 " writes, %s\n"),
               upath, info->version, info->blocksize, info->device_bytes, info->blocks,
               info->writes, info->complete ? _("complete") : _("incomplete"));
        printf(_("%s: superblock before the repair: SHA-256 %s\n"), upath, hex);
    }
    if (!info->complete)
        printf(_("%s: the repair did not finish; recorded blocks may hold any of its writes\n"),
               upath);
    if (info->torn_tail)
        printf(_("%s: its last record is incomplete (written as the repair stopped) and is "
                 "ignored\n"),
               upath);
    const char *where = NULL;
    if (!dry && fsck_device_mounted(dpath, &where)) {
        say_error(_("%s is mounted on %s: unmount it first"), dpath, where ? where : "?");
        goto out;
    }
    unsigned flags = dry ? 0 : (LANYFS_IMAGE_RDWR | LANYFS_IMAGE_EXCL);
    if (lanyfs_image_open(dpath, flags, &img, &err) != LANYFS_OK) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto out;
    }
    struct lanyfs_undo_check chk;
    if (lanyfs_undo_file_check(uf, img, &chk, &err) != LANYFS_OK) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        goto out;
    }
    bool match = chk.size_ok && chk.blocksize_ok && chk.mismatched == 0;
    if (!chk.size_ok)
        say_error(_("%s holds %" PRIu64 " bytes; the undo file was made for %" PRIu64),
                  dpath, chk.device_bytes, info->device_bytes);
    if (!chk.blocksize_ok)
        say_error(_("%s's superblock names another block size than the undo file's %" PRIu32),
                  dpath, info->blocksize);
    if (chk.mismatched > 0)
        say_error(_("%" PRIu64 " recorded blocks of %s hold neither their old contents nor "
                    "what the repair wrote (first: block %" PRIu64 ")"),
                  chk.mismatched, dpath, chk.first_mismatch);
    printf(_("%s: %" PRIu64 " blocks hold what the repair wrote, %" PRIu64
             " their old contents\n"),
           dpath, chk.at_new, chk.at_old);
    if (!match && !force) {
        say_error(_("%s does not match %s: nothing written (--force restores anyway)"), dpath,
                  upath);
        rc = UNDO_EXIT_MISMATCH;
        goto out;
    }
    if (dry) {
        if (match)
            printf(_("%s: matches the undo file; %" PRIu64 " blocks would be restored\n"),
                   dpath, info->blocks);
        else
            printf(_("%s: does not match the undo file; %" PRIu64
                     " blocks would be restored\n"),
                   dpath, info->blocks);
        rc = match ? UNDO_EXIT_OK : UNDO_EXIT_MISMATCH;
        goto out;
    }
    uint64_t restored = 0;
    if (lanyfs_undo_file_restore(uf, img, &restored, &err) != LANYFS_OK) {
        say_error(_("%s (%" PRIu64 " blocks restored; run again to finish)"), err.msg,
                  restored);
        goto out;
    }
    printf(_("%s: %" PRIu64 " blocks restored from %s\n"), dpath, restored, upath);
    rc = UNDO_EXIT_OK;
out:
    lanyfs_image_close(img);
    lanyfs_undo_file_close(uf);
    return rc;
}
