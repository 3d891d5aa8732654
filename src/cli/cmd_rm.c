/*
 * cmd_rm.c -- `lanyfs rm [--driver=MODE] [--log FILE] IMAGE PATH`: delete a
 * file.
 *
 * PATH must be a file (a directory is refused: rmdir removes those).  The
 * checks run on the disk before the mount, so a refused command changes
 * nothing.  After the unmount the parent directory is listed again and
 * compared with its listing before, less the file.
 *
 * Driver mode deletes as the 2012 driver does (SPEC-§8 "Delete a file"):
 * the data blocks are freed first, the extenders stay (a leak, §9.4).
 * When the driver's tree delete fails (§9.9) the file stays listed with
 * its old size but no data; that, and any other difference the listing
 * shows, is reported as a driver-mode warning with exit status 7.
 */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "writer_cli.h"

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        WCLI_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct wcli_opts o = {LANYFS_WRITE_CORRECT, NULL};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        int rc = wcli_option(self, argv, ch, optarg, &o);
        if (rc >= 0)
            return rc;
    }
    if (argc - optind != 2)
        return cli_usage_error(self, _("expects IMAGE and PATH"));
    const char *image = argv[optind];
    const char *path = argv[optind + 1];

    struct wcli s;
    struct wcli_target t = {0};
    struct lanyfs_dirlist before = {0};
    bool listed = false;
    char *lpath = NULL;
    wcli_init(&s, self, image, &o);
    if (!wcli_open(&s) || !wcli_target(&s, path, &t))
        goto out;
    if (t.p.n == 0) {
        wcli_fail(&s, path, LANYFS_E_ISDIR, N_("the root directory cannot be deleted"));
        goto out;
    }
    if (!t.exists) {
        wcli_fail(&s, path, LANYFS_E_NOTFOUND, N_("no such file"));
        goto out;
    }
    if (!lanyfs_entry_is_file(&t.e)) {
        wcli_fail(&s, path, LANYFS_E_ISDIR, N_("is a directory (rmdir removes directories)"));
        goto out;
    }
    lpath = wcli_path_join(&t.p, t.p.n);
    char *parent = wcli_path_join(&t.p, t.p.n - 1);
    listed = wcli_dir_list(&s, parent, t.parent, &before);
    g_free(parent);
    if (!listed || !wcli_mount(&s))
        goto out;

    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    wcli_op_begin(&s, "rm", lpath);
    enum lanyfs_err rc = lanyfs_writer_unlink(s.w, lpath, &err);
    bool tree_failed = rc == LANYFS_E_NOTFOUND && o.mode == LANYFS_WRITE_DRIVER2012;
    if (tree_failed) {
        /* SPEC-§9.9: the truncate happened, the tree delete did not. */
        wcli_op_done(&s);
        wcli_mark(&s, path,
                  N_("the 2012 driver's tree delete failed (format section 9.9: %s): the "
                     "file's %" PRIu64 " data block(s) were freed and its extender emptied, but "
                     "it stays listed with its old size of %" PRIu64 " bytes and reads as holes"),
                  err.msg, wcli_data_blocks(&s, t.e.size), t.e.size);
    } else if (!wcli_op_end(&s, rc, path, &err)) {
        wcli_unmount(&s, s.refused);
        goto out;
    }
    if (!wcli_unmount(&s, false))
        goto out;
    /* Read back: the parent lists what it did, less the file. */
    const char *removed[1] = {t.p.names[t.p.n - 1]};
    char *diff = wcli_dir_diff(&s, path, t.parent, &before, tree_failed ? NULL : removed,
                               tree_failed ? 0 : 1, NULL, 0);
    if (diff != NULL) {
        if (o.mode == LANYFS_WRITE_DRIVER2012)
            wcli_mark(&s, path,
                      N_("after the delete its directory differs from what was asked: %s"),
                      diff);
        else
            wcli_fail(&s, path, LANYFS_E_CORRUPT,
                      N_("after the delete its directory differs from what was asked: %s"), diff);
        g_free(diff);
    }
out:
    if (listed)
        lanyfs_dirlist_free(&before);
    g_free(lpath);
    wcli_target_free(&t);
    return wcli_finish(&s);
}

static const char *const help_more[] = {
    WCLI_HELP_OPTIONS,
    "\n",
    N_("Directories are removed with rmdir.  With --driver=2012 the file's extenders\n"
       "stay allocated (leaked), as the 2012 driver leaves them.\n\n"),
    WCLI_HELP_NOTES,
    NULL,
};

const struct cli_command cmd_rm = {
    "rm",
    N_("[--driver=MODE] [--log FILE] IMAGE PATH"),
    N_("Delete a file."),
    N_("Options:\n"),
    run,
    help_more,
};
