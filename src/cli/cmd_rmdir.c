/*
 * cmd_rmdir.c -- `lanyfs rmdir [--driver=MODE] [--log FILE] IMAGE PATH`:
 * remove an empty directory.
 *
 * PATH must be an empty directory other than the root.  The checks run on
 * the disk before the mount, so a refused command changes nothing.  After
 * the unmount the parent directory is listed again and compared with its
 * listing before, less the directory.
 *
 * Driver mode removes as the 2012 driver does: its rmdir drops the parent's
 * link count, so a parent read from disk stops being written back in this
 * mount (SPEC-§9.12); when the removed directory was the root of the
 * parent's tree, the parent on disk still points at the freed block.  A
 * tree delete the driver cannot do (§9.9) fails with nothing changed.  Both
 * are reported as driver-mode warnings with exit status 7.
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
    bool drv = o.mode == LANYFS_WRITE_DRIVER2012;

    struct wcli s;
    struct wcli_target t = {0};
    struct lanyfs_dirlist before = {0};
    struct lanyfs_entry parent_e;
    bool listed = false;
    char *lpath = NULL;
    wcli_init(&s, self, image, &o);
    if (!wcli_open(&s) || !wcli_target(&s, path, &t))
        goto out;
    if (t.p.n == 0) {
        wcli_fail(&s, path, LANYFS_E_INVAL, N_("the root directory cannot be removed"));
        goto out;
    }
    if (!t.exists) {
        wcli_fail(&s, path, LANYFS_E_NOTFOUND, N_("no such directory"));
        goto out;
    }
    if (!lanyfs_entry_is_dir(&t.e)) {
        wcli_fail(&s, path, LANYFS_E_NOTDIR, N_("not a directory (rm deletes files)"));
        goto out;
    }
    if (t.e.subtree != 0) {
        wcli_fail(&s, path, LANYFS_E_NOTEMPTY, N_("directory not empty"));
        goto out;
    }
    lpath = wcli_path_join(&t.p, t.p.n);
    char *parent = wcli_path_join(&t.p, t.p.n - 1);
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    listed = wcli_dir_list(&s, parent, t.parent, &before);
    g_free(parent);
    if (!listed)
        goto out;
    if (lanyfs_fs_read_entry(s.fs, t.parent, &parent_e, &err) != LANYFS_OK) {
        wcli_error(&s, path, &err);
        goto out;
    }
    if (!wcli_mount(&s))
        goto out;

    lanyfs_error_clear(&err);
    wcli_op_begin(&s, "rmdir", lpath);
    enum lanyfs_err rc = lanyfs_writer_rmdir(s.w, lpath, &err);
    bool tree_failed = rc == LANYFS_E_NOTFOUND && drv;
    if (tree_failed) {
        wcli_op_done(&s); /* the driver's unmount follows, as after any failed call */
        wcli_mark(&s, path,
                  N_("the 2012 driver's tree delete failed (format section 9.9: %s): rmdir "
                     "fails with ENOENT and the directory stays"),
                  err.msg);
    } else if (!wcli_op_end(&s, rc, path, &err)) {
        wcli_unmount(&s, s.refused);
        goto out;
    }
    if (!wcli_unmount(&s, false))
        goto out;
    const char *removed[1] = {t.p.names[t.p.n - 1]};
    char *diff = wcli_dir_diff(&s, path, t.parent, &before, tree_failed ? NULL : removed,
                               tree_failed ? 0 : 1, NULL, 0);
    if (diff == NULL)
        goto out;
    if (!drv) {
        wcli_fail(&s, path, LANYFS_E_CORRUPT,
                  N_("after the removal its parent differs from what was asked: %s"), diff);
    } else if (parent_e.subtree == t.blk) {
        wcli_mark(&s, path,
                  N_("the 2012 driver dropped the parent's link count to 0 (format section "
                     "9.12), so the parent was not written back: its tree on disk still starts "
                     "at the removed directory's freed block %" PRIu64 " (%s)"),
                  t.blk, diff);
    } else {
        wcli_mark(&s, path, N_("after the removal its parent differs from what was asked: %s"),
                  diff);
    }
    g_free(diff);
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
    WCLI_HELP_NOTES,
    NULL,
};

const struct cli_command cmd_rmdir = {
    "rmdir",
    N_("[--driver=MODE] [--log FILE] IMAGE PATH"),
    N_("Remove an empty directory."),
    N_("Options:\n"),
    run,
    help_more,
};
