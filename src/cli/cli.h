/*
 * cli.h -- the interface between `lanyfs` and its subcommands.
 *
 * A subcommand is one file, cmd_NAME.c, that defines
 *
 *     const struct cli_command cmd_NAME = { "NAME", synopsis, summary, options, run };
 *
 * and one line, X(NAME), in the command list of lanyfs.c.  main picks the
 * command by its name and calls run with argv[0] set to that name; run
 * parses its own options (getopt_long, every command takes --help), does
 * its work and returns an exit status from exit_codes.h.  It never calls
 * exit() itself.  The helpers below give every command the same help
 * layout, the same usage errors and the same way of opening an image and
 * resolving a path, with problems going into a struct out_report.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "exit_codes.h"
#include "i18n.h"
#include "lanyfs.h"
#include "output.h"

/*
 * synopsis, summary, options and the strings of more are English, marked
 * with N_() (i18n.h) and translated where they are printed.
 */
struct cli_command {
    const char *name;     /* the word after "lanyfs" */
    const char *synopsis; /* arguments after the name, for usage lines */
    const char *summary;  /* one line for `lanyfs --help` */
    const char *options;  /* option and detail text for `lanyfs NAME --help` */
    int (*run)(const struct cli_command *self, int argc, char **argv); /* exit status */
    /* Help text printed after options, in parts translated one by one (texts
     * several commands share); NULL-terminated, or NULL when there is none. */
    const char *const *more;
};

/* Print the command's help (usage, summary, options, exit status) to stdout. */
int cli_help(const struct cli_command *cmd);
/* Print "lanyfs NAME: MESSAGE" and a hint to stderr; returns LANYFS_EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The usage error for an option getopt_long rejected (it returned '?' or ':'). */
int cli_bad_option(const struct cli_command *cmd, char **argv);

/* A decimal number without sign, spaces or overflow (option values); false when not one. */
bool cli_parse_u64(const char *s, uint64_t *out);
/* lanyfs_geom_parse (or with bs_alone lanyfs_geom_parse_bs: BLOCKSIZE alone
 * gives *addrlen 0, to infer) for --geometry ARG: 0, or the usage error's
 * exit status. */
int cli_geometry_option(const struct cli_command *cmd, const char *arg, bool bs_alone,
                        unsigned *bits, unsigned *addrlen);

/* The exit-status table as text, for the help screens. */
void cli_print_exit_codes(FILE *out);

/*
 * Open image read-only.  With force, a superblock that fails its checks is
 * still opened and each of its problems is reported (so the exit status
 * tells about it); without, the open fails with the first fatal problem.
 * Returns the handle or NULL (the failure is in r).
 */
struct lanyfs_fs *cli_open(struct out_report *r, const char *image, bool force);

/*
 * Resolve path from the root directory into *blk and *e; on failure the
 * problem is reported under the path's name and false is returned.
 */
bool cli_resolve(struct out_report *r, struct lanyfs_fs *fs, const char *path, uint64_t *blk,
                 struct lanyfs_entry *e);
