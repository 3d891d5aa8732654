/*
 * fsck.h -- fsck-lanyfs: checking and repairing a LanyFS after a yank.
 *
 * The check is the scanner's (src/scan): it reads every block and reports
 * findings from the catalogue (problem.h).  fsck shows them pass by pass,
 * asks per problem what to do (prompt.c), plans the repairs the answers
 * allow (plan.c and the repair_*.c files), writes them in an order that
 * keeps every state an interruption can leave repairable (driver.c),
 * checks the result with a second scan and prints a summary.
 *
 * The library (lanyfs-fsck) holds everything but main(), so the tests and
 * the crash matrix drive the real code through fsck_run().
 *
 * Exit status, as fsck(8), a sum of:
 *   0 no errors, 1 errors corrected, 2 corrected and the device should be
 *   re-mounted (never: a mounted device is refused), 4 errors left
 *   uncorrected, 8 operational error, 16 usage error, 32 cancelled.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "device.h"
#include "lanyfs.h"
#include "problem.h"
#include "scan.h"

#define FSCK_EXIT_OK 0
#define FSCK_EXIT_CORRECTED 1
#define FSCK_EXIT_REBOOT 2
#define FSCK_EXIT_UNCORRECTED 4
#define FSCK_EXIT_ERROR 8
#define FSCK_EXIT_USAGE 16
#define FSCK_EXIT_CANCELLED 32

#define FSCK_PROGRAM "fsck-lanyfs"

/* How questions are answered. */
enum fsck_mode {
    FSCK_MODE_ASK = 0,   /* ask on the terminal */
    FSCK_MODE_NO = 1,    /* -n: read-only, answer no */
    FSCK_MODE_PREEN = 2, /* -p, -a: fix what the catalogue marks preen-safe */
    FSCK_MODE_YES = 3,   /* -y, --repair: answer yes */
};

struct fsck_opts {
    enum fsck_mode mode;       /* how to answer */
    bool force;                /* -f: accepted; every run is a full check */
    bool verbose;              /* -v: info findings and every write planned */
    int progress_fd;           /* -C FD, -1 when none */
    const char *db;            /* --db FILE: store the scan there, NULL when not */
    bool json;                 /* --json: a JSON report on stdout instead of text */
    const char *undo_path;     /* -z FILE, NULL for the default name */
    bool no_undo;              /* --no-undo */
    bool undo_overwrite;       /* --undo-overwrite: replace an existing undo file */
    bool undelete;             /* --undelete: relink intact deleted entries */
    const char *device;        /* the image or block device */

    /* Where things go; NULL: stdout, stderr, and /dev/tty for questions. */
    FILE *out;                 /* report */
    FILE *errout;              /* error messages */
    FILE *tty_in;              /* answers (ASK mode) */
    FILE *tty_out;             /* questions (ASK mode) */

    /*
     * For tests: a write hook placed below the undo recorder, so it sees
     * each write after the old contents are safe and may refuse it (a cut
     * repair).  NULL in normal use.
     */
    lanyfs_write_hook test_hook;
    void *test_hook_ctx;
    /* For tests: skip the mount check (images in a test folder). */
    bool no_mount_check;
};

/* Parse argv into o; returns 0, or FSCK_EXIT_USAGE after printing why (or after --help: -1). */
int fsck_parse_args(int argc, char **argv, struct fsck_opts *o, FILE *out, FILE *err);
/* Run the check and repair o describes; returns the exit status. */
int fsck_run(const struct fsck_opts *o);
/* The whole command: parse, run. */
int fsck_main(int argc, char **argv);

/* ---- prompt.c: answering questions ---------------------------------------- */

enum fsck_answer {
    FSCK_ANSWER_NO = 0,
    FSCK_ANSWER_YES = 1,
    FSCK_ANSWER_QUIT = 2, /* the user cancelled */
};

struct fsck_prompt;

struct fsck_prompt *fsck_prompt_new(const struct fsck_opts *o);
void fsck_prompt_free(struct fsck_prompt *p);
/* Whether questions can be asked (ASK mode needs a terminal). */
bool fsck_prompt_usable(const struct fsck_prompt *p);
/*
 * Decide one question.  question is the repair ("Rebuild the free list"),
 * preen_ok from the catalogue.  The answer is printed to out after the
 * question ("Rebuild the free list? yes").  In ASK mode: y, n, a (yes to
 * all from now on), q (quit); an empty line takes the default, yes.
 */
enum fsck_answer fsck_prompt_ask(struct fsck_prompt *p, FILE *out, const char *question,
                                 bool preen_ok);

/* ---- progress.c: -C FD ------------------------------------------------------ */

struct fsck_progress;

/* fd 0: a bar on the terminal (stdout); other fds: "pass done total device" lines. */
struct fsck_progress *fsck_progress_new(int fd, const char *device);
void fsck_progress_free(struct fsck_progress *p);
/* pass 1..7, done <= total. */
void fsck_progress_update(struct fsck_progress *p, int pass, uint64_t done, uint64_t total);
/* Clear the bar before other output is printed. */
void fsck_progress_clear(struct fsck_progress *p);

/* ---- text.c: printing names from the disk ---------------------------------- */

/*
 * Escape len bytes for a terminal: bytes that are not printable UTF-8 as
 * \xNN, a backslash as \\.  Returns a malloc'ed string, NULL on no memory.
 */
char *fsck_escape(const void *s, size_t len);
/* Append s as a JSON string (with quotes) to f; invalid UTF-8 bytes as \u00NN of \xNN text. */
void fsck_json_string(FILE *f, const char *s);
