/*
 * writer_cli.h -- what the `lanyfs` commands that change an image share:
 * mkdir, put, rm, rmdir, mv and truncate.
 *
 * Contract.  A writer command is one session:
 *
 *     wcli_init -> wcli_open -> checks on the disk -> wcli_mount ->
 *     (wcli_op_begin -> a lanyfs_writer_* call)... -> wcli_unmount -> wcli_finish
 *
 * and so exactly one mount of the filesystem, as the 2012 driver's
 * semantics require (its free-list tail is reset at mount, its inodes are
 * written back at unmount).
 *
 * - wcli_open opens the image read-write.  An image whose superblock fails
 *   the checks is refused before anything is written, with every fatal
 *   problem named and a last line saying that nothing was changed.
 * - Before mounting, a command checks on the disk what it can (every name
 *   of the path, the parent, the target, the free space it needs, in both
 *   modes), so a refused command never mounts.  The writer checks again
 *   before its first write; when it refuses (an error, and the free-list
 *   state as it was at wcli_op_begin), wcli_unmount drops the mount
 *   without its unmount writes, so a refused command leaves the image
 *   byte for byte as it was.
 * - Failures are reported as "lanyfs: WHERE: MESSAGE" and give the exit
 *   status of out_exit_for_err.  In driver mode an operation that the 2012
 *   driver completes with a corruption (SPEC-§9.7, §9.9, §9.12) is reported
 *   as "lanyfs: WHERE: warning: driver mode: ..." naming what happened, and
 *   the command exits with LANYFS_EXIT_CORRUPT (7) unless a harder failure
 *   came too, which then decides.
 * - With --log FILE every block write is appended to a write log, and each
 *   operation is marked in it where it starts.
 *
 * Names given on the command line or read from a host directory are checked
 * here: not empty, at most LANYFS_NAME_MAX bytes, no '/', no NUL, and not
 * "." or ".." for a new entry.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cli.h"
#include "writer.h"

/* ---- the options every writer command takes --------------------------- */

struct wcli_opts {
    enum lanyfs_write_mode mode; /* --driver=2012, default correct */
    const char *log_path;        /* --log FILE, or NULL */
};

#define WCLI_OPT_DRIVER 0x100 /* getopt code of --driver */
#define WCLI_OPT_LOG 0x101    /* getopt code of --log */

/* The long options of wcli_opts, for a command's getopt_long table. */
#define WCLI_LONG_OPTIONS                                     \
    {"driver", required_argument, NULL, WCLI_OPT_DRIVER},     \
    {"log", required_argument, NULL, WCLI_OPT_LOG},           \
    {"help", no_argument, NULL, 'h'}

/*
 * The help lines of those options and of what the writer commands share,
 * for the more parts of a command's help (cli.h): each is translated on
 * its own, so the commands share one translation.
 */
#define WCLI_HELP_OPTIONS                                                                 \
    N_("      --driver=MODE  'correct' (default): keep the filesystem exact; '2012':\n"   \
       "                     write as the 2012 kernel driver does, bugs included\n"       \
       "      --log FILE     append every block write to the write log FILE\n"            \
       "  -h, --help         show this help\n")

#define WCLI_HELP_NOTES                                                                   \
    N_("The command is one mount of the filesystem.  A refused command (a bad or\n"       \
       "too long name, a missing parent or a parent that is a file, an existing\n"        \
       "target, too little space, an image that fails its checks) changes nothing.\n"     \
       "With --driver=2012 an operation that the 2012 driver completes with a\n"          \
       "corruption is done as the driver does it, a warning on stderr names what\n"       \
       "happened, and the exit status is 7.\n")

/*
 * Handle an option the command's own switch did not (ch from getopt_long,
 * arg its optarg): returns -1 when it was a shared option, otherwise the
 * exit status the command returns (a usage error, or 0 after --help).
 */
int wcli_option(const struct cli_command *self, char **argv, int ch, const char *arg,
                struct wcli_opts *o);

/* ---- a session ----------------------------------------------------------- */

struct lanyfs_wlog;

struct wcli {
    /* Borrowed */
    const struct cli_command *cmd; /* the command running */
    const char *image;             /* the image path as given */
    /* Settings */
    struct wcli_opts o;            /* mode and log */
    /* Owned */
    struct out_report rep;         /* problems reported */
    struct lanyfs_fs *fs;          /* the image, opened read-write */
    struct lanyfs_writer *w;       /* the mount, NULL when not mounted */
    struct lanyfs_wlog *log;       /* the write log, or NULL */
    /* State */
    struct lanyfs_writer_state at_op; /* free-list state when the last operation began */
    uint64_t ops_done;             /* operations of this mount that changed something */
    bool refused;                  /* the first operation was refused, changing nothing */
    int hard;                      /* status of the first failure that is not a driver mark */
    bool marked;                   /* a driver-mode corruption was reported */
    uint64_t warnings;             /* plain warnings printed (skipped host entries) */
};

void wcli_init(struct wcli *s, const struct cli_command *cmd, const char *image,
               const struct wcli_opts *o);
/* Open the image read-write; false (reported) when it cannot be or fails its checks. */
bool wcli_open(struct wcli *s);
/* Mount the writer in the chosen mode and attach the write log; false when reported. */
bool wcli_mount(struct wcli *s);
/* The start of one operation: "VERB PATH" is marked in the write log. */
void wcli_op_begin(struct wcli *s, const char *verb, const char *path);
/* After a failed operation: did it leave the free-list state as wcli_op_begin saw it? */
bool wcli_op_unchanged(const struct wcli *s);
/*
 * The end of an operation that returned rc (err filled when rc is not OK):
 * a failure is reported under where; when it is the mount's first
 * operation and changed nothing, s->refused is set, so wcli_unmount(s,
 * s->refused) leaves the image untouched.  Returns rc == LANYFS_OK.
 */
bool wcli_op_end(struct wcli *s, enum lanyfs_err rc, const char *where,
                 const struct lanyfs_error *err);
/* Count an operation that changed the filesystem although the writer returned a failure. */
void wcli_op_done(struct wcli *s);
/*
 * Unmount.  With drop, or when no operation of the mount changed anything,
 * the mount is abandoned without its unmount writes (after a refused
 * operation: nothing reaches the image); otherwise everything is written
 * back and the superblock rewritten.  Then the write log is closed.  False
 * when that failed (reported).
 */
bool wcli_unmount(struct wcli *s, bool drop);
/* Close everything and return the exit status. */
int wcli_finish(struct wcli *s);

/* ---- reporting ------------------------------------------------------------ */

/* A failure from the core, under where (a path, or NULL). */
void wcli_error(struct wcli *s, const char *where, const struct lanyfs_error *err);
/*
 * The formats of these three are English and marked N_() (i18n.h): stderr
 * gets the translation, the JSON problems keep the English text.
 */
/* A failure of the given kind with a message. */
void wcli_fail(struct wcli *s, const char *where, enum lanyfs_err code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A corruption the 2012 driver leaves (driver mode): "warning: driver mode: ...", status 7. */
void wcli_mark(struct wcli *s, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A warning that does not change the exit status (a skipped host entry). */
void wcli_warn(struct wcli *s, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- names and paths ------------------------------------------------------ */

/*
 * Is name (len bytes) acceptable for a new entry?  Reports under where why
 * not: empty, longer than 255 bytes, holding '/' or NUL, "." or "..".
 */
bool wcli_name_ok(struct wcli *s, const char *where, const char *name, size_t len);

/* A LanyFS path split into its names (empty components dropped). */
struct wcli_path {
    char **names; /* owned, NUL-terminated */
    size_t n;     /* number of names; 0 is the root */
};

/* Split path; every name must pass wcli_name_ok's length check (false: reported). */
bool wcli_path_split(struct wcli *s, const char *path, struct wcli_path *out);
void wcli_path_free(struct wcli_path *p);
/* "/" followed by the first n names joined with '/' (newly allocated, g_free). */
char *wcli_path_join(const struct wcli_path *p, size_t n);

/* Where a path leads on the disk. */
struct wcli_target {
    struct wcli_path p;     /* the names */
    uint64_t parent;        /* block of the parent directory (0 for the root) */
    bool exists;            /* the last name is present */
    uint64_t blk;           /* its block when it exists */
    struct lanyfs_entry e;  /* its contents when it exists */
};

/*
 * Resolve path on the disk: every name but the last must exist and be a
 * directory (reported otherwise: a missing parent, a parent that is a
 * file); the last one may be absent.  The root has exists true and parent 0.
 */
bool wcli_target(struct wcli *s, const char *path, struct wcli_target *t);
void wcli_target_free(struct wcli_target *t);

/* Look up name in directory dir on the disk; false with *found false when absent. */
bool wcli_lookup(struct wcli *s, const char *where, uint64_t dir, const char *name,
                 bool *found, uint64_t *blk, struct lanyfs_entry *e);

/* ---- space ------------------------------------------------------------------ */

/* Free blocks the writer of this mode can hand out, from the disk (before mounting). */
bool wcli_free_available(struct wcli *s, uint64_t *n);
/*
 * Blocks a new file of size bytes takes in this mode: data and extenders
 * (not its entry).  In driver mode a file of more than extmax blocks is
 * counted up to the level-1 extender the driver adds; its growth loop then
 * takes whatever is free (SPEC-§9.7).
 */
uint64_t wcli_file_blocks(const struct wcli *s, uint64_t size);
/*
 * Check that a put of size bytes fits (old: the entry it replaces, or NULL):
 * false, reported under where as a full device, when it does not.  Correct
 * mode counts the old file's blocks as freed first; the 2012 driver does
 * not count its frees (SPEC-§9.2), so they are not credited there.
 */
bool wcli_check_put_space(struct wcli *s, const char *where, uint64_t size,
                          const struct lanyfs_entry *old);
/* Data blocks of a file of size bytes. */
uint64_t wcli_data_blocks(const struct wcli *s, uint64_t size);

/* ---- host files ------------------------------------------------------------- */

/*
 * Read the regular file at path into *buf (grown as needed; *cap its size),
 * its length into *len and its status into *st.  Only when follow is true
 * is a symbolic link followed and a named pipe read; "-" reads standard
 * input.  False when reported.
 */
bool wcli_read_host(struct wcli *s, const char *path, bool follow, uint8_t **buf, size_t *cap,
                    size_t *len, struct stat *st);
/* The modified time of st as a LanyFS timestamp, the local offset beside it. */
void wcli_mtime(const struct stat *st, struct lanyfs_ts *ts);

/* ---- reading back --------------------------------------------------------- */

/* List directory dir (reported under where on failure). */
bool wcli_dir_list(struct wcli *s, const char *where, uint64_t dir, struct lanyfs_dirlist *out);

/*
 * Compare directory dir as it is now with before, as changed by removing
 * the names in removed[] and adding the entry added (block added_blk; NULL
 * for none).  NULL when they agree, otherwise a description of the
 * differences (g_free): names no longer listed, names still listed, blocks
 * changed, names listed twice, tree problems.
 */
char *wcli_dir_diff(struct wcli *s, const char *where, uint64_t dir,
                    const struct lanyfs_dirlist *before, const char *const *removed,
                    size_t nremoved, const char *added, uint64_t added_blk);

/*
 * Compare the file entry e with len bytes at data: true when its size and
 * every byte match.  *first_diff receives the first differing file block.
 */
bool wcli_file_matches(struct wcli *s, const struct lanyfs_entry *e, const uint8_t *data,
                       uint64_t len, uint64_t *first_diff);
