/*
 * writelog.h -- a log of every block write made to a LanyFS, and its reader.
 *
 * A write log records, in issue order, each block write that passes a
 * lanyfs_fs's write hook (block number and the whole block), the points
 * where the 2012 driver would sync with the `flush` mount option (the
 * writer's sync hook), and the start of each operation ("put /a/b"), so
 * that an image can later be rebuilt as it stood after any prefix of the
 * writes, or with a write torn (lanyfs replay).  The format is described in
 * docs/writelog.md: a 32-byte header (magic "LANYWLOG", version 1, block
 * size), then records of a kind byte, a payload length and the payload.
 *
 * Writes are numbered 1..N and operations 1..M across the whole log: a log
 * opened again appends a new session, continuing both numbers.
 *
 * The write hook puts each write record into the log file (pwrite) before
 * it returns, so the block reaches the image only after its record: a
 * writing process that dies leaves no write on the image that the log
 * lacks.  The writing side keeps the first error it meets (a short write to
 * the log file): the hook then refuses further block writes, and
 * lanyfs_wlog_close reports it.  The hook sees a write before the image
 * does; a write the image then refuses is in the log all the same.
 *
 * The reader treats the log as hostile input: every length is checked
 * against the kind's exact size and the header's block size, every number
 * against the running counts (write and operation indexes must follow each
 * other), and a log that ends inside a record is LANYFS_E_TRUNCATED.  It
 * never allocates more than one record's worth of memory.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lanyfs.h"
#include "writer.h"

#define LANYFS_WLOG_VERSION 1
#define LANYFS_WLOG_MAGIC "LANYWLOG" /* 8 bytes, no NUL on disk */
#define LANYFS_WLOG_HEADER_SIZE 32
#define LANYFS_WLOG_DESC_MAX 4096 /* longest operation description kept */

/* ---- writing ------------------------------------------------------------- */

struct lanyfs_wlog;

/*
 * Create the log at path with a header for the block size of g, or, when
 * the file exists and is not empty, read it through (every record checked),
 * refuse it unless its version and block size match, and append a new
 * session after its last record.  A log that ends inside a record is
 * refused (LANYFS_E_TRUNCATED), as is one with another block size
 * (LANYFS_E_GEOMETRY) or version (LANYFS_E_VERSION).
 */
enum lanyfs_err lanyfs_wlog_open(const char *path, const struct lanyfs_geom *g,
                                 struct lanyfs_wlog **out, struct lanyfs_error *err);

/*
 * Install the write hook on fs: every block write of fs from now on is
 * recorded.  A filesystem with another block size than the log's makes the
 * hook refuse every write (and close report it).
 */
void lanyfs_wlog_attach(struct lanyfs_wlog *log, struct lanyfs_fs *fs);

/* Install the writer's sync hook: each sync point is recorded. */
void lanyfs_wlog_attach_writer(struct lanyfs_wlog *log, struct lanyfs_writer *w);

/*
 * Record the start of an operation described by description (cut at
 * LANYFS_WLOG_DESC_MAX bytes); writes from now on belong to it.
 */
enum lanyfs_err lanyfs_wlog_op(struct lanyfs_wlog *log, const char *description,
                               struct lanyfs_error *err);

/* Record a sync point by hand (the writer's hook calls this). */
enum lanyfs_err lanyfs_wlog_sync(struct lanyfs_wlog *log, struct lanyfs_error *err);

/* Writes recorded so far, in every session of the log. */
uint64_t lanyfs_wlog_writes(const struct lanyfs_wlog *log);
/* Operations recorded so far, in every session. */
uint64_t lanyfs_wlog_ops(const struct lanyfs_wlog *log);

/*
 * Flush and close the log and free it (always, even on failure).  Returns
 * the first error met while recording, or the failure to flush.  Detach the
 * hooks first (or close the fs and the writer first): they keep a pointer.
 */
enum lanyfs_err lanyfs_wlog_close(struct lanyfs_wlog *log, struct lanyfs_error *err);

/* ---- reading ------------------------------------------------------------- */

enum lanyfs_wlog_kind {
    LANYFS_WLOG_END = 0,     /* no more records (not on disk) */
    LANYFS_WLOG_WRITE = 1,   /* a block write */
    LANYFS_WLOG_SYNC = 2,    /* a sync point */
    LANYFS_WLOG_OP = 3,      /* the start of an operation */
    LANYFS_WLOG_SESSION = 4, /* the log was opened (created or appended to) */
};

struct lanyfs_wlog_rec {
    enum lanyfs_wlog_kind kind;
    uint64_t write;     /* WRITE: its index 1..N; others: writes recorded before it */
    uint64_t op;        /* WRITE: the operation it belongs to (0 = none yet);
                         * OP: its index 1..M; others: operations before it */
    uint64_t block;     /* WRITE: the block written */
    const uint8_t *data; /* WRITE: blocksize bytes; OP: the description (not NUL-terminated);
                          * valid until the next call */
    size_t len;         /* WRITE: blocksize; OP: description bytes; others 0 */
    uint64_t offset;    /* byte offset of the record in the log */
};

struct lanyfs_wlog_reader;

/* Open the log at path and check its header. */
enum lanyfs_err lanyfs_wlog_reader_open(const char *path, struct lanyfs_wlog_reader **out,
                                        struct lanyfs_error *err);
/* The same over len bytes in memory (borrowed; they must outlive the reader). */
enum lanyfs_err lanyfs_wlog_reader_open_mem(const void *buf, size_t len,
                                            struct lanyfs_wlog_reader **out,
                                            struct lanyfs_error *err);
void lanyfs_wlog_reader_close(struct lanyfs_wlog_reader *r);

/* The header's block size, and its log2. */
uint32_t lanyfs_wlog_reader_blocksize(const struct lanyfs_wlog_reader *r);
unsigned lanyfs_wlog_reader_blockbits(const struct lanyfs_wlog_reader *r);
/* The address length and block count the header noted at creation (informational). */
unsigned lanyfs_wlog_reader_addrlen(const struct lanyfs_wlog_reader *r);
uint64_t lanyfs_wlog_reader_blocks(const struct lanyfs_wlog_reader *r);

/*
 * Read the next record into rec; at the end of the log rec->kind is
 * LANYFS_WLOG_END and LANYFS_OK is returned.  A damaged record is an error
 * naming its offset (LANYFS_E_TRUNCATED when the log ends inside it,
 * LANYFS_E_CORRUPT for a bad kind, length or number); after an error every
 * further call fails the same way.
 */
enum lanyfs_err lanyfs_wlog_next(struct lanyfs_wlog_reader *r, struct lanyfs_wlog_rec *rec,
                                 struct lanyfs_error *err);
