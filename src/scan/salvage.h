/*
 * salvage.h -- copying files out of a scanned image into a folder, safely.
 *
 * Salvage reads only.  It takes a scan (scan.h) and the filesystem handle
 * the scan read, and writes what the scan can reach into an output folder
 * given as an open directory descriptor:
 *
 *   files/      the live tree, or the live paths asked for, at their paths
 *   deleted/    (SALVAGE_DELETED) deleted files, under their own names
 *   orphans/    (SALVAGE_ORPHANS) orphaned entries, under the orphaned
 *               directories they were found in
 *   lost/       (SALVAGE_LOST) the data of extender trees no file links
 *               (LOST_DATA_TREE, UNLINKED_FILE_DATA: a file written just
 *               before an unplug), one file per tree in its order, named
 *               after its top extender and the type libmagic gives
 *               ("00000071.txt"); a file this run copies from its tree
 *               (a live file UNLINKED_FILE_DATA pairs) is not repeated
 *   carved/     (SALVAGE_CARVE) runs of data blocks no file owns, one file
 *               per run or per signature found in it, named after the
 *               first block and the type libmagic gives ("000123.png")
 *   manifest.csv, manifest.json   one row per file written
 *
 * With SALVAGE_VERSIONS the earlier versions of a path that freed blocks
 * still hold (deleted entries of the same name, in the same directory where
 * the scan can tell) are written beside the path's copy as NAME.~N~, N = 1
 * for the newest earlier version; earlier versions of a path that is no
 * longer live go to deleted/ the same way.
 *
 * Every file is exact or partial: a block that cannot be had is written as
 * zeros and listed (a hole, an unreadable block, or for a deleted file a
 * block the free list has handed out again).  A deleted file's candidate
 * blocks are judged by the block map (still free, owned by nobody else),
 * by their count against the size, and by libmagic where the name's
 * extension says what the content should be.  Modification times are set
 * on every copy and directory.
 *
 * Safety: every name from the disk is escaped (salvage_escape_name); every
 * directory and file is made relative to a directory descriptor under the
 * output folder (mkdirat, openat with O_NOFOLLOW, files with O_EXCL), so a
 * name or a planted symbolic link can never lead a write outside it.  An
 * existing file is never overwritten, and an existing symbolic link never
 * followed, without SALVAGE_FORCE; with it the file or link is removed and
 * a new file made (a hard link's other names keep their contents).  A
 * manifest of an earlier run in the folder stops the run before anything
 * is written unless SALVAGE_FORCE is given.
 *
 * The code is shared by the command-line tool and the GUI: it never prints,
 * reports progress and each finished file through callbacks, and stops at
 * the next file when the cancel flag is set.  One run at a time per result.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lanyfs.h"
#include "scan.h"

/* Options (struct salvage_opts.flags). */
#define SALVAGE_DELETED 0x01  /* deleted files to deleted/ */
#define SALVAGE_ORPHANS 0x02  /* orphaned entries to orphans/ */
#define SALVAGE_CARVE 0x04    /* unowned data blocks to carved/ */
#define SALVAGE_VERSIONS 0x08 /* earlier versions as NAME.~N~ */
#define SALVAGE_FORCE 0x10    /* replace existing files and links */
#define SALVAGE_LOST 0x20     /* lost extender trees to lost/ */

/* The longest name salvage makes: longer escaped names keep a prefix and a hash. */
#define SALVAGE_NAME_MAX 200

enum salvage_kind {
    SALVAGE_KIND_LIVE = 0,    /* a file of the live tree */
    SALVAGE_KIND_DELETED = 1, /* a deleted file */
    SALVAGE_KIND_ORPHAN = 2,  /* an orphaned file */
    SALVAGE_KIND_VERSION = 3, /* an earlier version of a path (a deleted entry) */
    SALVAGE_KIND_CARVED = 4,  /* a run of unowned data blocks */
    SALVAGE_KIND_LOST = 5,    /* the data of a lost extender tree */
};

enum salvage_status {
    SALVAGE_EXACT = 0,         /* every byte came from the file's own readable blocks */
    SALVAGE_PARTIAL = 1,       /* some bytes are zeros standing for what could not be had */
    SALVAGE_UNRECOVERABLE = 2, /* no byte of a non-empty file could be had */
    SALVAGE_SKIPPED = 3,       /* not written: the output exists (no SALVAGE_FORCE) */
    SALVAGE_FAILED = 4,        /* not written: the output folder refused it */
};

/* A range: file blocks or disk blocks first .. first + count - 1. */
struct salvage_range {
    uint64_t first;
    uint64_t count;
};

/* One list of ranges. */
struct salvage_ranges {
    struct salvage_range *r;
    size_t n;
    size_t cap;
};

/* One file written (or meant to be), as the manifests list it. */
struct salvage_item {
    enum salvage_kind kind;
    enum salvage_status status;
    uint32_t entry;               /* the scan's entry id; 0 for carved files; lost: the
                                   * file the tree belongs to, 0 when not known */
    uint64_t entry_block;         /* the entry's own block; carved: the first block;
                                   * lost: the top extender */
    char *source;                 /* the source, shown (escaped UTF-8): "/a/b", or
                                   * "blocks 123-130" for a carved file */
    char *output;                 /* path relative to the output folder, as made */
    uint64_t size;                /* bytes written (the size field, capped at the device) */
    uint64_t recovered;           /* of those, bytes known good */
    char sha256[65];              /* of the bytes written; "" when not written */
    char *mime;                   /* libmagic's MIME type, NULL when none */
    char *magic;                  /* libmagic's description, NULL when none */
    char *ext;                    /* carved: the extension given, NULL otherwise */
    unsigned version;             /* N of NAME.~N~, 0 for none */
    uint16_t wrcnt;               /* the entry's write counter */
    struct lanyfs_ts created;     /* the entry's times (carved: unset) */
    struct lanyfs_ts modified;
    struct salvage_ranges blocks;     /* disk blocks read, in file order */
    struct salvage_ranges holes;      /* file blocks zero-filled: no block known */
    struct salvage_ranges unreadable; /* file blocks zero-filled: the read failed */
    struct salvage_ranges reused;     /* file blocks zero-filled: handed out again */
    struct salvage_ranges shared;     /* file blocks copied that another owner also claims */
    char *note;                   /* why the status, or NULL */
};

struct salvage_totals {
    uint64_t exact, partial, unrecoverable, skipped, failed;
    uint64_t dirs;            /* directories made */
    uint64_t bytes;           /* bytes written */
    uint64_t recovered;       /* bytes known good */
    uint64_t missing;         /* paths asked for that name no live entry */
};

struct salvage_opts {
    unsigned flags;                /* SALVAGE_* */
    const char *const *paths;      /* live paths to copy (raw bytes as the scan joins them,
                                    * or in shown form); none: the whole live tree */
    size_t npaths;
    /*
     * Entries to copy by scan entry id, of any state (a directory: it and
     * everything of its state below it), each written where its state's
     * flag would write it (files/, deleted/, orphans/).  With paths, both
     * are copied; with neither, the whole live tree.
     */
    const uint32_t *entries;
    size_t nentries;
    /*
     * Lost trees to write to lost/ by their top extender (scan_lost_trees),
     * with or without SALVAGE_LOST.  A top that names no lost tree is a
     * problem of the result.  With only these, the live tree is not copied.
     */
    const uint64_t *lost_tops;
    size_t nlost_tops;
    /* Bytes done of the bytes planned; may be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* Each file when it is done; may be NULL. */
    void (*on_item)(void *ctx, const struct salvage_item *it);
    void *item_ctx;
    /* Set non-zero (by another thread or a signal handler) to stop at the next file. */
    volatile int *cancel;
    /* Recorded in manifest.json; may be NULL. */
    const char *image_name;
};

struct salvage_result;

/*
 * Salvage from scan (made over fs, which stays open) into the folder open
 * at outdir_fd.  Hard errors only: out of memory, the folder's manifest
 * cannot be written, a manifest of an earlier run without SALVAGE_FORCE,
 * a cancel (LANYFS_E_INVAL; the manifests still list what was done).  A
 * file that cannot be written is an item with status skipped or failed;
 * a path that names nothing is a problem of the result.  *out is set
 * whenever the run started, also on failure.
 */
enum lanyfs_err salvage_run(const struct scan_result *scan, struct lanyfs_fs *fs, int outdir_fd,
                            const struct salvage_opts *opts, struct salvage_result **out,
                            struct lanyfs_error *err);
void salvage_result_free(struct salvage_result *r);

size_t salvage_items(const struct salvage_result *r, const struct salvage_item **out);
void salvage_get_totals(const struct salvage_result *r, struct salvage_totals *out);
/* Problems that are no file: a path that names nothing, a directory that could not be made. */
size_t salvage_problems(const struct salvage_result *r, const char *const **out);

const char *salvage_kind_name(enum salvage_kind k);     /* "live", "deleted", ... */
const char *salvage_status_name(enum salvage_status s); /* "exact", "partial", ... */

/*
 * The file name salvage makes of name bytes (malloc, NULL on no memory):
 * never empty, never "." or "..", no '/', valid UTF-8 without control or
 * format characters.  A byte that is not part of such a character becomes
 * \xNN, a backslash \\, '/' \x2f, an empty name \x00, and a leading '.' of
 * "." or ".." \x2e.  Over SALVAGE_NAME_MAX bytes, a prefix and "~" and 16
 * hex digits of the name's SHA-256 stay.
 */
char *salvage_escape_name(const uint8_t *name, size_t len);
/* The same escape without the dot rule and the length cap, for paths shown (malloc). */
char *salvage_escape_shown(const uint8_t *s, size_t len);
/* Ranges as text, "6-11 14" (malloc). */
char *salvage_ranges_text(const struct salvage_ranges *r);

/* ---- versions ----------------------------------------------------------------- */

/* One version of a path. */
struct salvage_version {
    unsigned number;              /* 0: the live entry, N: the Nth newest earlier one */
    uint32_t entry;               /* the scan's entry id */
    enum scan_entry_state state;  /* live or deleted */
    uint64_t block;               /* its entry block */
    uint16_t wrcnt;               /* its write counter */
    struct lanyfs_ts created;
    struct lanyfs_ts modified;
    uint64_t size;                /* its size field */
    uint64_t blocks_needed;       /* data blocks its size needs */
    uint64_t blocks_intact;       /* of those, found and still its own */
    bool dir_known;               /* the directory it was in is known (not only its name) */
};

/*
 * Every version of path in scan, newest first: the live entry at path (if
 * any) as number 0, then the deleted files of the same name whose directory
 * is path's or unknown, by modification time (then creation time, then
 * write counter).  path is raw bytes as the scan joins them, or in shown
 * form.  *out (free with free()) receives *n versions; none is LANYFS_OK
 * with *n == 0.
 */
enum lanyfs_err salvage_versions(const struct scan_result *scan, const char *path,
                                 struct salvage_version **out, size_t *n,
                                 struct lanyfs_error *err);
