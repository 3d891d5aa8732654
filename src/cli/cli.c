/*
 * cli.c -- helpers every `lanyfs` subcommand shares (contract in cli.h):
 * help and usage messages, opening an image, resolving a path.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scan.h"

bool cli_parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

int cli_geometry_option(const struct cli_command *cmd, const char *arg, bool bs_alone,
                        unsigned *bits, unsigned *addrlen)
{
    if (bs_alone ? lanyfs_geom_parse_bs(arg, bits, addrlen)
                 : lanyfs_geom_parse(arg, bits, addrlen))
        return 0;
    if (bs_alone)
        return cli_usage_error(cmd, _("--geometry expects BLOCKSIZE or BLOCKSIZE:ADDRLEN with a "
                                      "block size 512..4096 and 1..8 address bytes, not '%s'"),
                               arg);
    return cli_usage_error(cmd, _("--geometry expects BLOCKSIZE:ADDRLEN with a block size "
                                  "512..4096 and 1..8 address bytes, not '%s'"),
                           arg);
}

void cli_print_exit_codes(FILE *out)
{
    fputs(_("Exit status:\n"
          "  0  success\n"
          "  1  operational or I/O error\n"
          "  2  usage error\n"
          "  3  not a LanyFS image (bad magic)\n"
          "  4  unsupported version or geometry\n"
          "  5  truncated image\n"
          "  6  path not found\n"
          "  7  corrupt structure found (reported on stderr, output still given)\n"
          "  8  (scan) the worst finding is a warning\n"
          "  9  (salvage) some files came out partial or unrecoverable\n"),
          out);
}

int cli_help(const struct cli_command *cmd)
{
    /* TRANSLATORS: the usage line; %s are the command and its arguments. */
    printf(_("Usage: lanyfs %s %s\n"), cmd->name, _(cmd->synopsis));
    printf("%s\n\n%s", _(cmd->summary), _(cmd->options));
    for (const char *const *p = cmd->more; p != NULL && *p != NULL; p++)
        fputs(_(*p), stdout);
    putchar('\n');
    cli_print_exit_codes(stdout);
    return fflush(stdout) == 0 ? LANYFS_EXIT_OK : LANYFS_EXIT_ERROR;
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "lanyfs %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fprintf(stderr, _("Usage: lanyfs %s %s\n"), cmd->name, _(cmd->synopsis));
    fprintf(stderr, _("Try 'lanyfs %s --help' for more information.\n"), cmd->name);
    return LANYFS_EXIT_USAGE;
}

int cli_bad_option(const struct cli_command *cmd, char **argv)
{
    /* getopt_long leaves the offending word at optind - 1. */
    const char *word = optind > 0 ? argv[optind - 1] : "?";
    char *esc = out_escape(word, strlen(word), 0);
    int rc;
    if (optopt != 0 && optopt != '?')
        rc = cli_usage_error(cmd, _("invalid option -- '%c' (in '%s')"), optopt, esc);
    else
        rc = cli_usage_error(cmd, _("unrecognized option '%s'"), esc);
    g_free(esc);
    return rc;
}

/*
 * Under -f, a block 0 that fails its checks gives way to the geometry and
 * root directory the blocks imply (scan_locate, as the scan finds them),
 * reported as one more problem.  False (reported) when no root is found.
 */
static bool assume_located(struct out_report *r, const char *image, struct lanyfs_fs *fs)
{
    struct lanyfs_error err;
    struct scan_location loc;
    lanyfs_error_clear(&err);
    if (scan_locate(fs, &loc, &err) != LANYFS_OK) {
        out_report_error(r, image, &err);
        return false;
    }
    bool ok = false;
    if (loc.rootdir == 0) {
        out_report_addf(r, image, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                        N_("no root directory found in its blocks ('lanyfs salvage' still "
                           "looks for files)"));
        goto out;
    }
    struct lanyfs_super sb = *lanyfs_fs_super(fs);
    sb.magic = LANYFS_MAGIC;
    sb.type = LANYFS_TYPE_SUPER;
    sb.blockbits = (uint8_t)loc.blockbits;
    sb.addrlen = (uint8_t)loc.addrlen;
    sb.blocks = loc.blocks;
    sb.rootdir = loc.rootdir;
    sb.freehead = loc.freehead;
    if (lanyfs_fs_assume_super(fs, &sb, &err) != LANYFS_OK) {
        out_report_error(r, image, &err);
        goto out;
    }
    if (loc.how != NULL)
        out_report_add(r, image, LANYFS_E_CORRUPT, 0, loc.how);
    if (loc.root_searched)
        out_report_addf(r, image, LANYFS_E_CORRUPT, loc.rootdir,
                        N_("the root directory is taken to be block %" PRIu64
                           ", found by a search of the blocks"),
                        loc.rootdir);
    ok = true;
out:
    scan_location_free(&loc);
    return ok;
}

struct lanyfs_fs *cli_open(struct out_report *r, const char *image, bool force)
{
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    unsigned flags = force ? LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0 : 0;
    enum lanyfs_err rc = lanyfs_fs_open(image, flags, &fs, &err);
    if (rc != LANYFS_OK) {
        out_report_error(r, NULL, &err);
        /* A superblock that fails its checks: -f would read past it. */
        struct lanyfs_fs *forced = NULL;
        if (!force && lanyfs_fs_open(image, LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0, &forced,
                                     NULL) == LANYFS_OK) {
            char *shown = out_escape(image, strlen(image), 0);
            fprintf(stderr, _("lanyfs: %s: -f tries to read it all the same, with the geometry "
                              "and root directory its blocks imply\n"),
                    shown);
            g_free(shown);
        }
        lanyfs_fs_close(forced);
        return NULL;
    }
    if (force) {
        const struct lanyfs_sb_problem *pr;
        size_t n = lanyfs_fs_problems(fs, &pr);
        bool fatal = lanyfs_fs_super_lost(fs);
        for (size_t i = 0; i < n; i++)
            if (pr[i].fatal) {
                out_report_add(r, image, pr[i].code, 0, pr[i].msg);
                fatal = true;
            }
        if (fatal && !assume_located(r, image, fs)) {
            lanyfs_fs_close(fs);
            return NULL;
        }
    }
    return fs;
}

bool cli_resolve(struct out_report *r, struct lanyfs_fs *fs, const char *path, uint64_t *blk,
                 struct lanyfs_entry *e)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = lanyfs_path_resolve(fs, path, blk, e, &err);
    if (rc == LANYFS_OK)
        return true;
    if (rc == LANYFS_E_NOTFOUND) {
        /* The core's message repeats the path; the plain form (lanyfs_strerror's
         * text, marked here for translation) says it all. */
        out_report_addf(r, path, rc, err.block, N_("no such file or directory"));
        return false;
    }
    /* Core messages about a path may start with the path; it is in front already. */
    size_t n = strlen(path);
    if (strncmp(err.msg, path, n) == 0 && strncmp(err.msg + n, ": ", 2) == 0)
        memmove(err.msg, err.msg + n + 2, strlen(err.msg + n + 2) + 1);
    out_report_error(r, path, &err);
    return false;
}
