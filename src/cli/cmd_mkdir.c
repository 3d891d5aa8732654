/*
 * cmd_mkdir.c -- `lanyfs mkdir [-p] [--driver=MODE] [--log FILE] IMAGE PATH`:
 * create a directory.
 *
 * Without -p the parent must exist and be a directory, and PATH must not
 * exist.  With -p every missing directory along PATH is created, parents
 * first, and a PATH that is already a directory is no error (nothing is
 * mounted or written then).  Everything is checked on the disk before the
 * mount: the names, the parents, and that the free list holds one block for
 * each directory to create, so a refused command changes nothing (see
 * writer_cli.h).  After the unmount every new directory is looked up again.
 */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "writer_cli.h"

/*
 * Walk path on the disk: *first receives the index of the first missing
 * name (p->n when all exist), *dir the block of the last existing one.
 */
static bool walk_existing(struct wcli *s, const char *path, const struct wcli_path *p,
                          size_t *first, uint64_t *dir, struct lanyfs_entry *last)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    uint64_t cur = lanyfs_fs_super(s->fs)->rootdir;
    if (lanyfs_fs_read_entry(s->fs, cur, last, &err) != LANYFS_OK) {
        wcli_error(s, path, &err);
        return false;
    }
    size_t i;
    for (i = 0; i < p->n; i++) {
        if (!lanyfs_entry_is_dir(last)) {
            char *up = wcli_path_join(p, i);
            wcli_fail(s, path, LANYFS_E_NOTDIR, N_("the parent %s is a file, not a directory"), up);
            g_free(up);
            return false;
        }
        bool found;
        uint64_t next;
        struct lanyfs_entry e;
        if (!wcli_lookup(s, path, cur, p->names[i], &found, &next, &e))
            return false;
        if (!found)
            break;
        cur = next;
        *last = e;
    }
    *first = i;
    *dir = cur;
    return true;
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"parents", no_argument, NULL, 'p'},
        WCLI_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct wcli_opts o = {LANYFS_WRITE_CORRECT, NULL};
    bool parents = false;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+ph", opts, NULL)) != -1) {
        if (ch == 'p') {
            parents = true;
            continue;
        }
        int rc = wcli_option(self, argv, ch, optarg, &o);
        if (rc >= 0)
            return rc;
    }
    if (argc - optind != 2)
        return cli_usage_error(self, _("expects IMAGE and PATH"));
    const char *image = argv[optind];
    const char *path = argv[optind + 1];

    struct wcli s;
    struct wcli_path p = {0};
    struct lanyfs_entry last;
    size_t first = 0;
    uint64_t dir = 0;
    wcli_init(&s, self, image, &o);
    if (!wcli_open(&s) || !wcli_path_split(&s, path, &p))
        goto out;
    if (p.n == 0) {
        if (!parents)
            wcli_fail(&s, path, LANYFS_E_EXISTS, N_("the root directory already exists"));
        goto out;
    }
    if (!walk_existing(&s, path, &p, &first, &dir, &last))
        goto out;
    if (first == p.n) {
        if (!lanyfs_entry_is_dir(&last))
            wcli_fail(&s, path, LANYFS_E_EXISTS, N_("already exists, as a file"));
        else if (!parents)
            wcli_fail(&s, path, LANYFS_E_EXISTS, N_("already exists"));
        goto out; /* -p and a directory: nothing to do */
    }
    if (!parents && first + 1 < p.n) {
        char *up = wcli_path_join(&p, first + 1);
        wcli_fail(&s, path, LANYFS_E_NOTFOUND,
                  N_("the parent directory %s does not exist (-p creates it)"), up);
        g_free(up);
        goto out;
    }
    for (size_t i = first; i < p.n; i++)
        if (!wcli_name_ok(&s, path, p.names[i], strlen(p.names[i])))
            goto out;
    uint64_t avail;
    if (!wcli_free_available(&s, &avail))
        goto out;
    if (avail < p.n - first) {
        wcli_fail(&s, path, LANYFS_E_NOSPC,
                  N_("no space left on the device: %zu block(s) needed, %" PRIu64 " free"),
                  p.n - first, avail);
        goto out;
    }

    if (!wcli_mount(&s))
        goto out;
    for (size_t i = first; i < p.n; i++) {
        char *sub = wcli_path_join(&p, i + 1);
        struct lanyfs_error err;
        lanyfs_error_clear(&err);
        wcli_op_begin(&s, "mkdir", sub);
        enum lanyfs_err rc = lanyfs_writer_mkdir(s.w, sub, &err);
        bool ok = wcli_op_end(&s, rc, sub, &err);
        g_free(sub);
        if (!ok)
            break;
    }
    if (!wcli_unmount(&s, s.refused) || s.refused || s.hard != LANYFS_EXIT_OK)
        goto out;
    /* Read back: every directory made must be on the disk now. */
    for (size_t i = first; i < p.n; i++) {
        char *sub = wcli_path_join(&p, i + 1);
        uint64_t blk;
        struct lanyfs_entry e;
        struct lanyfs_error err;
        lanyfs_error_clear(&err);
        enum lanyfs_err rc = lanyfs_path_resolve(s.fs, sub, &blk, &e, &err);
        if (rc != LANYFS_OK || !lanyfs_entry_is_dir(&e)) {
            const char *why = rc != LANYFS_OK ? err.msg : "it reads back as a file";
            if (o.mode == LANYFS_WRITE_DRIVER2012)
                wcli_mark(&s, sub, N_("the new directory is not on the disk after the unmount: %s"),
                          why);
            else
                wcli_fail(&s, sub, LANYFS_E_CORRUPT,
                          N_("the new directory is not on the disk after the unmount: %s"), why);
        }
        g_free(sub);
    }
out:
    wcli_path_free(&p);
    return wcli_finish(&s);
}

static const char *const help_more[] = {
    WCLI_HELP_OPTIONS,
    "\n",
    WCLI_HELP_NOTES,
    NULL,
};

const struct cli_command cmd_mkdir = {
    "mkdir",
    N_("[-p] [--driver=MODE] [--log FILE] IMAGE PATH"),
    N_("Create a directory."),
    N_("Options:\n"
       "  -p, --parents      create missing parents too; an existing directory is\n"
       "                     no error\n"),
    run,
    help_more,
};
