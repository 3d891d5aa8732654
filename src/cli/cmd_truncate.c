/*
 * cmd_truncate.c -- `lanyfs truncate [--driver=MODE] [--log FILE] IMAGE PATH
 * SIZE`: set the size of a file.
 *
 * SIZE is a number of bytes, with an optional suffix K, M, G or T (powers
 * of 1024; "KiB" and the like are accepted too).  Shrinking frees the
 * blocks past the new end (in driver mode the extenders stay, SPEC-§9.4);
 * growing leaves a hole that reads as zeros.  PATH must be a file; the
 * checks run on the disk before the mount, so a refused command changes
 * nothing.  After the unmount the file's size is read back.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writer_cli.h"

/* Parse SIZE; false when it is not a size. */
static bool parse_size(const char *arg, uint64_t *out)
{
    if (!isdigit((unsigned char)arg[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno != 0)
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift != 0 && strcmp(end, "iB") == 0)
        end += 2;
    else if (strcmp(end, "B") == 0)
        end++;
    if (*end != '\0')
        return false;
    if (shift != 0 && v > (UINT64_MAX >> shift))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

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
    if (argc - optind != 3)
        return cli_usage_error(self, _("expects IMAGE, PATH and SIZE"));
    const char *image = argv[optind];
    const char *path = argv[optind + 1];
    uint64_t size;
    if (!parse_size(argv[optind + 2], &size)) {
        char *esc = out_escape(argv[optind + 2], strlen(argv[optind + 2]), 0);
        int rc = cli_usage_error(self, _("'%s' is not a size (bytes, or a number with K, M, G "
                                   "or T)"), esc);
        g_free(esc);
        return rc;
    }

    struct wcli s;
    struct wcli_target t = {0};
    char *lpath = NULL;
    wcli_init(&s, self, image, &o);
    if (!wcli_open(&s) || !wcli_target(&s, path, &t))
        goto out;
    if (!t.exists) {
        wcli_fail(&s, path, LANYFS_E_NOTFOUND, N_("no such file"));
        goto out;
    }
    if (!lanyfs_entry_is_file(&t.e)) {
        wcli_fail(&s, path, LANYFS_E_ISDIR, N_("is a directory"));
        goto out;
    }
    lpath = wcli_path_join(&t.p, t.p.n);
    if (!wcli_mount(&s))
        goto out;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    wcli_op_begin(&s, "truncate", lpath);
    bool ok = wcli_op_end(&s, lanyfs_writer_truncate(s.w, lpath, size, &err), path, &err);
    if (!wcli_unmount(&s, s.refused) || !ok)
        goto out;
    uint64_t blk;
    struct lanyfs_entry e;
    lanyfs_error_clear(&err);
    if (lanyfs_path_resolve(s.fs, lpath, &blk, &e, &err) != LANYFS_OK || e.size != size) {
        const char *why = err.code != LANYFS_OK ? err.msg : "its size did not change";
        if (o.mode == LANYFS_WRITE_DRIVER2012)
            wcli_mark(&s, path,
                      N_("after the unmount the file does not have the new size: %s"), why);
        else
            wcli_fail(&s, path, LANYFS_E_CORRUPT,
                      N_("after the unmount the file does not have the new size: %s"), why);
    }
out:
    g_free(lpath);
    wcli_target_free(&t);
    return wcli_finish(&s);
}

static const char *const help_more[] = {
    WCLI_HELP_OPTIONS,
    "\n",
    N_("SIZE is in bytes, or a number followed by K, M, G or T (powers of 1024).\n\n"),
    WCLI_HELP_NOTES,
    NULL,
};

const struct cli_command cmd_truncate = {
    "truncate",
    N_("[--driver=MODE] [--log FILE] IMAGE PATH SIZE"),
    N_("Set the size of a file (shrink, or grow with a hole)."),
    N_("Options:\n"),
    run,
    help_more,
};
