/*
 * cmd_mv.c -- `lanyfs mv [-f] [-T] [--driver=MODE] [--log FILE] IMAGE OLD NEW`:
 * rename or move an entry.
 *
 * As mv(1): when NEW is an existing directory (or ends in '/'), OLD moves
 * into it under its own name; -T takes NEW as the new name in every case.
 * An existing target is refused unless -f is given; then a file replaces
 * a file and a directory an empty directory (the 2012 driver also tries a
 * non-empty one, and fails, SPEC-§9.9).  A directory cannot move below
 * itself.  Everything is checked on the disk before the mount, so a
 * refused command changes nothing.  After the unmount the directories
 * involved are listed again and compared with what the rename asked for.
 *
 * Driver mode renames as the 2012 driver does (SPEC-§8 "Rename", §9.9):
 * when its tree delete of the source fails, the source's links are cleared
 * (the entries below it in the tree drop out, orphaned) and it is added to
 * the new tree anyway; when the delete of an existing target fails, the
 * source ends in no directory at all; replacing a directory runs the
 * driver's rmdir, which freezes the new parent (§9.12).  Every such outcome
 * is named in a driver-mode warning and the exit status is 7.
 */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "writer_cli.h"

/* Is the path b the path a or below it? */
static bool path_within(const struct wcli_path *a, const struct wcli_path *b)
{
    if (b->n < a->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return false;
    return true;
}

/*
 * Compare a directory with what the rename should have left; report a
 * difference.  over_dir: the rename replaced a directory, which the 2012
 * driver removes with its rmdir, freezing the new parent (SPEC-§9.12).
 */
static void check_dir(struct wcli *s, const char *where, uint64_t dir,
                      const struct lanyfs_dirlist *before, const char *const *removed,
                      size_t nremoved, const char *added, uint64_t added_blk, bool over_dir)
{
    char *diff = wcli_dir_diff(s, where, dir, before, removed, nremoved, added, added_blk);
    if (diff == NULL)
        return;
    if (s->o.mode == LANYFS_WRITE_DRIVER2012)
        wcli_mark(s, where,
                  N_("after the rename this directory differs from what was asked (%s): %s"),
                  over_dir ? "the 2012 driver removes the directory it replaces with rmdir, "
                             "which drops the new parent's link count to 0, so the parent's "
                             "own tree changes are not written back, format section 9.12; "
                             "its rename also goes on when a tree delete fails, section 9.9"
                           : "the 2012 driver's rename goes on when its tree delete fails and "
                             "clears the source's links, format section 9.9",
                  diff);
    else
        wcli_fail(s, where, LANYFS_E_CORRUPT,
                  N_("after the rename this directory differs from what was asked: %s"), diff);
    g_free(diff);
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"force", no_argument, NULL, 'f'},
        {"no-target-directory", no_argument, NULL, 'T'},
        WCLI_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct wcli_opts o = {LANYFS_WRITE_CORRECT, NULL};
    bool force = false, no_target_dir = false;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+fTh", opts, NULL)) != -1) {
        if (ch == 'f') {
            force = true;
            continue;
        }
        if (ch == 'T') {
            no_target_dir = true;
            continue;
        }
        int rc = wcli_option(self, argv, ch, optarg, &o);
        if (rc >= 0)
            return rc;
    }
    if (argc - optind != 3)
        return cli_usage_error(self, _("expects IMAGE, OLD and NEW"));
    const char *image = argv[optind];
    const char *from = argv[optind + 1];
    const char *to = argv[optind + 2];
    bool drv = o.mode == LANYFS_WRITE_DRIVER2012;

    struct wcli s;
    struct wcli_target src = {0}, dst = {0};
    struct lanyfs_dirlist before_old = {0}, before_new = {0};
    bool listed_old = false, listed_new = false;
    char *into = NULL, *lfrom = NULL, *lto = NULL;
    wcli_init(&s, self, image, &o);
    if (!wcli_open(&s) || !wcli_target(&s, from, &src))
        goto out;
    if (src.p.n == 0) {
        wcli_fail(&s, from, LANYFS_E_INVAL, N_("the root directory cannot be moved"));
        goto out;
    }
    if (!src.exists) {
        wcli_fail(&s, from, LANYFS_E_NOTFOUND, N_("no such file or directory"));
        goto out;
    }
    if (!wcli_target(&s, to, &dst))
        goto out;
    size_t tlen = strlen(to);
    bool wants_dir = tlen > 0 && to[tlen - 1] == '/';
    const char *where = to;
    if (!no_target_dir && (wants_dir || (dst.exists && lanyfs_entry_is_dir(&dst.e) &&
                                         dst.blk != src.blk))) {
        if (!dst.exists) {
            wcli_fail(&s, to, LANYFS_E_NOTFOUND, N_("no such directory"));
            goto out;
        }
        if (!lanyfs_entry_is_dir(&dst.e)) {
            wcli_fail(&s, to, LANYFS_E_NOTDIR, N_("not a directory"));
            goto out;
        }
        char *base = g_strdup(src.p.names[src.p.n - 1]);
        into = dst.p.n == 0 ? g_strconcat("/", base, NULL)
                            : g_strconcat(to, wants_dir ? "" : "/", base, NULL);
        g_free(base);
        wcli_target_free(&dst);
        if (!wcli_target(&s, into, &dst))
            goto out;
        where = into;
    }
    if (dst.p.n == 0) {
        wcli_fail(&s, to, LANYFS_E_EXISTS, N_("the root directory cannot be replaced"));
        goto out;
    }
    if (dst.exists && dst.blk == src.blk)
        goto out; /* OLD and NEW are one entry: nothing to do */
    bool src_dir = lanyfs_entry_is_dir(&src.e);
    if (src_dir && path_within(&src.p, &dst.p)) {
        wcli_fail(&s, where, LANYFS_E_INVAL, N_("cannot move the directory %s below itself"), from);
        goto out;
    }
    if (dst.exists) {
        bool dst_dir = lanyfs_entry_is_dir(&dst.e);
        if (!force) {
            wcli_fail(&s, where, LANYFS_E_EXISTS, N_("already exists (-f replaces it)"));
            goto out;
        }
        if (src_dir && !dst_dir) {
            wcli_fail(&s, where, LANYFS_E_NOTDIR, N_("cannot replace a file with a directory"));
            goto out;
        }
        if (!src_dir && dst_dir) {
            wcli_fail(&s, where, LANYFS_E_ISDIR, N_("cannot replace a directory with a file"));
            goto out;
        }
        if (dst_dir && dst.e.subtree != 0 && !drv) {
            wcli_fail(&s, where, LANYFS_E_NOTEMPTY, N_("directory not empty"));
            goto out;
        }
    }
    const char *newname = dst.p.names[dst.p.n - 1];
    if (!wcli_name_ok(&s, where, newname, strlen(newname)))
        goto out;
    lfrom = wcli_path_join(&src.p, src.p.n);
    lto = wcli_path_join(&dst.p, dst.p.n);
    bool same_dir = src.parent == dst.parent;
    listed_old = wcli_dir_list(&s, from, src.parent, &before_old);
    if (!listed_old)
        goto out;
    if (!same_dir) {
        listed_new = wcli_dir_list(&s, where, dst.parent, &before_new);
        if (!listed_new)
            goto out;
    }
    if (!wcli_mount(&s))
        goto out;

    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    char *what = g_strconcat(lfrom, " -> ", lto, NULL);
    wcli_op_begin(&s, "mv", what);
    g_free(what);
    enum lanyfs_err rc = lanyfs_writer_rename(s.w, lfrom, lto, &err);
    if (rc != LANYFS_OK && drv) {
        /* The checks above passed: the driver failed half-way (SPEC-§9.9). */
        wcli_op_done(&s);
        wcli_mark(&s, where,
                  N_("the 2012 driver's rename failed half-way (format section 9.9): %s"),
                  err.msg);
    } else if (!wcli_op_end(&s, rc, where, &err)) {
        wcli_unmount(&s, s.refused);
        goto out;
    }
    if (!wcli_unmount(&s, false))
        goto out;
    const char *oldname = src.p.names[src.p.n - 1];
    bool over_dir = dst.exists && lanyfs_entry_is_dir(&dst.e);
    if (same_dir) {
        const char *removed[2] = {oldname, newname};
        check_dir(&s, where, dst.parent, &before_old, removed, dst.exists ? 2 : 1, newname,
                  src.blk, over_dir);
    } else {
        const char *removed_old[1] = {oldname};
        const char *removed_new[1] = {newname};
        char *oldparent = wcli_path_join(&src.p, src.p.n - 1);
        check_dir(&s, oldparent, src.parent, &before_old, removed_old, 1, NULL, 0, over_dir);
        g_free(oldparent);
        char *newparent = wcli_path_join(&dst.p, dst.p.n - 1);
        check_dir(&s, newparent, dst.parent, &before_new, removed_new, dst.exists ? 1 : 0,
                  newname, src.blk, over_dir);
        g_free(newparent);
    }
out:
    if (listed_old)
        lanyfs_dirlist_free(&before_old);
    if (listed_new)
        lanyfs_dirlist_free(&before_new);
    g_free(into);
    g_free(lfrom);
    g_free(lto);
    wcli_target_free(&src);
    wcli_target_free(&dst);
    return wcli_finish(&s);
}

static const char *const help_more[] = {
    WCLI_HELP_OPTIONS,
    "\n",
    N_("When NEW is an existing directory (or ends in '/'), OLD moves into it.\n\n"),
    WCLI_HELP_NOTES,
    NULL,
};

const struct cli_command cmd_mv = {
    "mv",
    N_("[-f] [-T] [--driver=MODE] [--log FILE] IMAGE OLD NEW"),
    N_("Rename or move a file or directory."),
    N_("Options:\n"
       "  -f, --force        replace an existing NEW (a file by a file, a directory by\n"
       "                     an empty directory)\n"
       "  -T, --no-target-directory\n"
       "                     NEW is the new name even when it is a directory\n"),
    run,
    help_more,
};
