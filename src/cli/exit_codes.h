/*
 * exit_codes.h -- the exit status of every `lanyfs` command.
 *
 * A script can tell from the status alone why a command failed.  The codes
 * are part of the interface: they are listed in `lanyfs --help` and in
 * docs/json.md, and JSON output repeats the status as "exit_code".  When a
 * command meets several problems, the first one decides, except that
 * corruption found while output is still given (LANYFS_EXIT_CORRUPT) never
 * hides an earlier, harder failure.  out_exit_for_err (output.h) maps the
 * core's enum lanyfs_err onto these codes in one table.
 */
#pragma once

enum lanyfs_exit {
    LANYFS_EXIT_OK = 0,          /* success */
    LANYFS_EXIT_ERROR = 1,       /* operational or I/O error (open, read, write, memory) */
    LANYFS_EXIT_USAGE = 2,       /* bad command line */
    LANYFS_EXIT_NOTLANYFS = 3,   /* not a LanyFS image (bad magic) */
    LANYFS_EXIT_UNSUPPORTED = 4, /* unsupported version or geometry */
    LANYFS_EXIT_TRUNCATED = 5,   /* the image is shorter than the filesystem */
    LANYFS_EXIT_NOTFOUND = 6,    /* the path names no entry */
    LANYFS_EXIT_CORRUPT = 7,     /* corrupt structure found (reported, output still given) */
    /*
     * scan only: the worst finding is a warning (consistent, but wasteful
     * or suspicious: leaked blocks, a driver mark); an error or a critical
     * finding is LANYFS_EXIT_CORRUPT.
     */
    LANYFS_EXIT_WARNINGS = 8,
    /* salvage only: some files came out partial or could not be recovered. */
    LANYFS_EXIT_INCOMPLETE = 9,
};
