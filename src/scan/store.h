/*
 * store.h -- scan results in an SQLite database: writing them, reading them.
 *
 * One database file holds any number of scans, of one image or of many.  A
 * scan is written whole, in one transaction, or not at all: a failure rolls
 * it back and leaves the database as it was.  The schema is described,
 * table by table and with the queries the GUI makes, in docs/scan-db.md;
 * its version is PRAGMA user_version (STORE_SCHEMA_VERSION) and its
 * PRAGMA application_id is STORE_APPLICATION_ID ("LANY").
 *
 * Opening: an empty or new file gets the schema; a file of this schema
 * version is used as it is; a newer version is refused (LANYFS_E_VERSION,
 * "use a newer lanyfs-tools"), and so is a file holding other tables or
 * another application id, or one whose tables of scan rows are views or
 * virtual tables, whose SQL the readers would run (LANYFS_E_BADMAGIC).  A
 * database written by this tool is opened in WAL mode, so the GUI can read
 * while a scan is written.
 *
 * What is stored and how:
 *  - names (entries.name) and the volume label (scans.sb_label) are BLOBs
 *    holding the exact bytes from the disk;
 *  - every TEXT column is valid UTF-8: text from the disk or the command
 *    line (paths, finding texts and messages, the image path) is stored in
 *    the escaped form store_escape() gives, in which each byte that is not
 *    part of valid UTF-8 or belongs to a control character (U+0000..U+001F,
 *    U+007F..U+009F) is written \xNN and a backslash \\; text that needs
 *    no escape (nearly all of it) is stored unchanged, and store_unescape()
 *    gives the bytes back;
 *  - 64-bit values are INTEGERs with the same 64 bits: a value of 2^63 or
 *    more (only a hostile disk holds one, in a superblock field or a
 *    finding's value) reads back negative from SQL, and as the original
 *    uint64_t through this API;
 *  - timestamps are ISO 8601 UTC text ("2026-12-03T01:02:15Z", with
 *    ".nnnnnnnnn" when the nanoseconds are not 0), NULL when unset; the
 *    fields of an invalid one are written as stored (month 13 stays 13).
 *
 * Reading: every query of the reader API hands its rows to a callback, one
 * at a time, with pointers into SQLite's row buffers that are valid during
 * that call only; a callback that returns non-zero stops the query, which
 * then returns LANYFS_OK.  A database file is as hostile as the disk it
 * describes: a row whose values break what this header promises of them
 * (an id outside 1..UINT32_MAX, a value outside its enum, a NULL where the
 * schema has NOT NULL, an extent or run that overlaps the one before ...)
 * ends the query with LANYFS_E_CORRUPT naming the file, the statement, the
 * scan and the row; text columns are handed on as stored, so a hand-edited
 * one may hold any bytes up to its NUL.  Errors come back as enum
 * lanyfs_err with a struct lanyfs_error whose message names the database
 * file and the statement ("scan.db: INSERT INTO entries: database or disk
 * is full").
 * A handle is used by one thread at a time.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lanyfs.h"
#include "scan.h"

#define STORE_SCHEMA_VERSION 3
/* The oldest version a read-only handle reads as it is (older ones are
 * refused until a scan written into them upgrades them). */
#define STORE_READ_OLDEST 2
#define STORE_APPLICATION_ID 0x594e414c /* "LANY" as the superblock's magic */

struct store_db;

/* ---- opening and closing ------------------------------------------------ */

#define STORE_OPEN_READONLY 0x1 /* read only: never create, never write */

/*
 * Open (and with write access create) the database at path.  Refuses a
 * newer schema version (LANYFS_E_VERSION) and a file that is not a scan
 * database (LANYFS_E_BADMAGIC); SQLite failures are LANYFS_E_IO.
 */
enum lanyfs_err store_open(const char *path, unsigned flags, struct store_db **out,
                           struct lanyfs_error *err);
/* Close the handle (NULL is ignored); an error to close is reported. */
enum lanyfs_err store_close(struct store_db *db, struct lanyfs_error *err);
/* The path the database was opened with. */
const char *store_path(const struct store_db *db);
/* The file's schema version: STORE_SCHEMA_VERSION, or an older one (at
 * least STORE_READ_OLDEST) that a read-only handle reads as it is. */
int64_t store_schema_version(const struct store_db *db);

/* ---- writing a scan --------------------------------------------------------- */

/* What the scan result does not say about itself. */
struct store_scan_meta {
    const char *image_path;   /* the image as named on the command line; required */
    int64_t started;          /* when the scan started, seconds since the epoch (UTC) */
    uint32_t started_nsec;    /* and nanoseconds */
    double seconds;           /* how long the scan took, 0 when unknown */
    const char *image_sha256; /* 64 lowercase hex digits, or NULL when not computed */
    /*
     * Or, for a hash computed beside the store: called once, after the rows
     * are written and before the commit, to wait for it; returns its 64 hex
     * digits (the scan keeps them), or NULL with *err set, which fails the
     * whole write.  May be NULL.
     */
    const char *(*image_sha256_wait)(void *ctx, struct lanyfs_error *err);
    void *sha256_ctx;
    const char *tool_version; /* NULL: this build's version */
    /* Called now and then while rows are written (done <= total); may be NULL. */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
};

/*
 * Write the whole result r as a new scan: the scans row, findings, entries
 * and their data blocks, the lost trees and their data blocks, the block
 * map as runs, the write counters of every metadata block, and the
 * catalogue rows of problem.h (refreshed).  One
 * transaction: on failure nothing is written.  *scan_id (may be NULL)
 * receives the new scan's id.
 */
enum lanyfs_err store_add_scan(struct store_db *db, const struct scan_result *r,
                               const struct store_scan_meta *meta, int64_t *scan_id,
                               struct lanyfs_error *err);

/* Remove a scan and every row that belongs to it; LANYFS_E_NOTFOUND when absent. */
enum lanyfs_err store_delete_scan(struct store_db *db, int64_t scan_id, struct lanyfs_error *err);

/* ---- reading: scans ------------------------------------------------------- */

/* The superblock as the scan read it (the fields the database keeps). */
struct store_super {
    uint8_t type;
    uint16_t wrcnt;
    uint32_t magic;
    uint8_t major;
    uint8_t minor;
    uint8_t blockbits;
    uint8_t addrlen;
    uint64_t rootdir;
    uint64_t blocks;
    uint64_t freehead;
    uint64_t freetail;
    uint64_t freeblocks;
    uint64_t badblocks;
    char *created;      /* ISO 8601 or NULL when unset (owned) */
    char *updated;      /* (owned) */
    char *checked;      /* (owned) */
    uint8_t label[256]; /* label bytes up to the first NUL */
    size_t label_len;   /* bytes in label */
};

/* One row of scans, owned by the caller: free it with store_scan_clear. */
struct store_scan {
    int64_t id;                   /* scans.id, 1, 2, ... in the order written */
    char *started;                /* ISO 8601 UTC (owned) */
    double seconds;               /* scan duration, 0 when unknown */
    char *tool_version;           /* (owned) */
    char *image_path;             /* escaped (owned) */
    uint64_t image_size;          /* bytes */
    char *image_sha256;           /* hex, NULL when not computed (owned) */
    bool have_geometry;           /* a geometry was read or inferred */
    uint32_t block_size;          /* bytes, 512..4096; valid with have_geometry */
    unsigned address_length;      /* bytes, 1..8; valid with have_geometry */
    uint64_t blocks;              /* blocks of the geometry; valid with have_geometry */
    uint64_t map_blocks;          /* cells of the block map (block_runs cover 0..map_blocks-1) */
    bool geometry_inferred;       /* block 0 was unusable, the geometry was inferred */
    bool have_super;              /* sb holds what block 0 said */
    struct store_super sb;        /* the superblock as read */
    struct scan_summary summary;  /* the scan's summary; by_class from block_runs */
    uint64_t entries;             /* rows in entries for this scan */
    uint64_t findings;            /* rows in findings for this scan */
};

void store_scan_clear(struct store_scan *s);

/* Read one scan; LANYFS_E_NOTFOUND when there is no such id. */
enum lanyfs_err store_get_scan(struct store_db *db, int64_t scan_id, struct store_scan *out,
                               struct lanyfs_error *err);

/*
 * Every scan in the database, oldest first, or only those of image_path
 * (as given to store_add_scan; NULL: all).  *out receives an array of *n
 * rows to free with store_scans_free.
 */
enum lanyfs_err store_list_scans(struct store_db *db, const char *image_path,
                                 struct store_scan **out, size_t *n, struct lanyfs_error *err);
void store_scans_free(struct store_scan *scans, size_t n);

/* ---- reading: entries ------------------------------------------------------ */

/* One row of entries; pointers valid during the callback only. */
struct store_entry {
    uint32_t id;                 /* the scan's entry id, 1-based */
    uint64_t block;              /* its own block */
    uint32_t parent;             /* the directory holding it, 0 for the root or unknown */
    enum scan_entry_state state; /* live, deleted, orphaned */
    uint8_t type;                /* the type byte: LANYFS_TYPE_DIR or LANYFS_TYPE_FILE */
    const uint8_t *name;         /* the exact name bytes (not NUL-terminated) */
    size_t name_len;             /* bytes in name */
    const char *path;            /* the full path, escaped */
    uint64_t size;               /* size field */
    const char *created;         /* ISO 8601, NULL when unset */
    const char *modified;        /* ISO 8601, NULL when unset */
    int created_offset;          /* minutes east of UTC, as stored beside the time */
    int modified_offset;         /* minutes east of UTC */
    uint16_t attr;               /* attribute word */
    uint16_t wrcnt;              /* write counter */
    uint64_t blocks_needed;      /* ceil(size / blocksize) for files */
    uint64_t blocks_mapped;      /* data blocks found */
    uint64_t blocks_intact;      /* of those, not owned by anyone else now */
};

typedef int (*store_entry_cb)(void *ctx, const struct store_entry *e);

#define STORE_ANY_STATE (-1)

/*
 * The entries of a scan whose path starts with path_prefix (escaped form,
 * as stored; NULL or "" for all), in one state or STORE_ANY_STATE, ordered
 * by path.  The prefix is a byte prefix: "/docs/" gives what lies below
 * /docs, "/docs" also /docs itself and /docs2.
 */
enum lanyfs_err store_entries(struct store_db *db, int64_t scan_id, const char *path_prefix,
                              int state, store_entry_cb cb, void *ctx, struct lanyfs_error *err);

/*
 * The data map of one entry as extents, in file order: file blocks
 * file_block .. file_block+count-1 are disk blocks block .. block+count-1.
 * Holes have no extent.  An extent is at most STORE_EXTENT_MAX blocks long.
 * The extents are checked as they are read: one of count 0 or above
 * STORE_EXTENT_MAX, at block 0, running past 2^64 or overlapping the one
 * before ends the query with LANYFS_E_CORRUPT.
 */
#define STORE_EXTENT_MAX 1024
typedef int (*store_entry_block_cb)(void *ctx, uint64_t file_block, uint64_t block,
                                    uint64_t count);
enum lanyfs_err store_entry_blocks(struct store_db *db, int64_t scan_id, uint32_t entry,
                                   store_entry_block_cb cb, void *ctx, struct lanyfs_error *err);
/*
 * The entries whose data map holds block, with the file block there: cross-links show twice.
 * The extents met are checked as store_entry_blocks checks them (but for overlaps).
 */
typedef int (*store_block_owner_cb)(void *ctx, uint32_t entry, uint64_t file_block);
enum lanyfs_err store_block_owners(struct store_db *db, int64_t scan_id, uint64_t block,
                                   store_block_owner_cb cb, void *ctx, struct lanyfs_error *err);

/*
 * The data map as extents, as the store writes it (entry_blocks,
 * lost_tree_blocks) and `lanyfs scan --json` shows it: cb is called for
 * each run of consecutive file blocks in consecutive disk blocks, cut at
 * STORE_EXTENT_MAX blocks, holes (0) left out, in file order.  Returns the
 * first non-zero value of cb, which stops it, or 0.
 */
int store_extents_of(const uint64_t *data, uint64_t n, store_entry_block_cb cb, void *ctx);

/* ---- reading: lost trees --------------------------------------------------- */

/* One row of lost_trees. */
struct store_lost_tree {
    uint64_t top;           /* its top extender */
    uint32_t entry;         /* the file it belongs to, 0 when not known */
    uint64_t size;          /* bytes its data shows */
    uint64_t blocks_mapped; /* data blocks it maps */
    uint64_t extenders;     /* extender blocks in it */
};
typedef int (*store_lost_tree_cb)(void *ctx, const struct store_lost_tree *t);
/*
 * The lost trees of a scan, by top: orphan extender trees that still map a
 * file's data (scan.h, struct scan_lost_tree).  A row whose top is 0 or
 * whose entry lies outside 1..UINT32_MAX ends the query with
 * LANYFS_E_CORRUPT; size and the counts are given as stored, so a caller
 * bounds them before it sizes anything by them.
 */
enum lanyfs_err store_lost_trees(struct store_db *db, int64_t scan_id, store_lost_tree_cb cb,
                                 void *ctx, struct lanyfs_error *err);
/* A lost tree's data map as extents, in file order (as store_entry_blocks). */
enum lanyfs_err store_lost_tree_blocks(struct store_db *db, int64_t scan_id, uint64_t top,
                                       store_entry_block_cb cb, void *ctx,
                                       struct lanyfs_error *err);

/* ---- reading: findings --------------------------------------------------- */

/* One row of findings; pointers valid during the callback only. */
struct store_finding {
    uint64_t seq;                /* its place in the scan's findings, 0-based */
    uint32_t code;               /* SCAN_PR_* */
    const char *code_name;       /* "TREE_CYCLE" */
    enum scan_severity severity; /* the severity the scan gave it (critical when none) */
    uint32_t entry;              /* the entry concerned, 0 = none */
    uint64_t block;
    uint64_t block2;
    uint64_t value;
    uint64_t value2;
    uint64_t count;
    uint64_t count2;
    const char *path;            /* escaped, NULL when none */
    const char *text;            /* escaped, NULL when none */
    const char *message;         /* the finished message, escaped */
};

typedef int (*store_finding_cb)(void *ctx, const struct store_finding *f);

/*
 * The findings of a scan, in the order the scan made them: only those of
 * code (0: every code) and of at least min_severity (SCAN_SEV_INFO: all).
 */
enum lanyfs_err store_findings(struct store_db *db, int64_t scan_id, uint32_t code,
                               enum scan_severity min_severity, store_finding_cb cb, void *ctx,
                               struct lanyfs_error *err);

/* ---- reading: the block map ------------------------------------------------ */

/*
 * A run of blocks with equal class, owner and flags.  A metadata cell (one
 * that carries a header, SCAN_BF_METADATA) is always a run of its own, with
 * its write counter.
 */
struct store_block_run {
    uint64_t first;       /* first block */
    uint64_t count;       /* blocks in the run, >= 1 */
    enum scan_class cls;  /* what they are */
    uint32_t owner;       /* owning entry, 0 = none */
    uint8_t flags;        /* SCAN_BF_* */
    bool has_wrcnt;       /* a metadata cell: wrcnt is its header's counter */
    uint16_t wrcnt;       /* the write counter */
};

typedef int (*store_block_run_cb)(void *ctx, const struct store_block_run *run);

/*
 * The runs that hold any block of first..last (inclusive), in block order:
 * the first one may begin before first, the last one end after last.
 * They never overlap and none ends past 2^64.
 */
enum lanyfs_err store_block_runs(struct store_db *db, int64_t scan_id, uint64_t first,
                                 uint64_t last, store_block_run_cb cb, void *ctx,
                                 struct lanyfs_error *err);

/* ---- reading: write counters ---------------------------------------------- */

typedef int (*store_counter_cb)(void *ctx, uint64_t block, enum scan_class cls, uint16_t wrcnt);

#define STORE_ANY_CLASS (-1)

/*
 * The write counter of every metadata block of one class (or STORE_ANY_CLASS),
 * by block: the runs of block_runs that carry one (what the counters view shows).
 */
enum lanyfs_err store_counters(struct store_db *db, int64_t scan_id, int cls, store_counter_cb cb,
                               void *ctx, struct lanyfs_error *err);

/* ---- the image's hash -------------------------------------------------------- */

/* Called after each chunk hashed with the bytes hashed so far. */
typedef void (*store_hash_progress_cb)(void *ctx, uint64_t done);

/*
 * The SHA-256 of the whole file at path as 64 lowercase hex digits into
 * hex (for store_scan_meta.image_sha256).  It uses the x86 SHA extensions
 * when the processor has them.  on_chunk may be NULL.
 */
enum lanyfs_err store_file_sha256(const char *path, char hex[65], store_hash_progress_cb on_chunk,
                                  void *ctx, struct lanyfs_error *err);
/* The same over len bytes in memory; portable forces the portable rounds (for tests). */
void store_sha256(const void *data, size_t len, bool portable, char hex[65]);

/* ---- text ------------------------------------------------------------------ */

/*
 * The stored form of len bytes at src (see the header): newly allocated
 * with malloc, NULL when out of memory.
 */
char *store_escape(const void *src, size_t len);
/*
 * The bytes an escaped text stands for, newly allocated (malloc) and
 * NUL-terminated, their count in *len (may be NULL).  A backslash not
 * followed by \ or xNN is kept as it is.  NULL when out of memory.
 */
uint8_t *store_unescape(const char *text, size_t *len);
