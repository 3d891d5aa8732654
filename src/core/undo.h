/*
 * undo.h -- the undo file of a repair: old block contents, saved before they
 * are overwritten, and the tool that puts them back.
 *
 * A repair (fsck-lanyfs) installs an undo recorder on its lanyfs_fs.  On the
 * first write it creates the undo file and writes its header: the format
 * version, the block size, the device size, the filesystem's block count
 * and a SHA-256 of block 0 as it stood, protected by a header checksum.
 * Before any block reaches the device for the first time, its old contents
 * are appended (with their SHA-256); before every write, the SHA-256 of the
 * new contents is appended.  Each append is fsync'ed before the write hook
 * returns, so the device never holds a write the undo file does not know.
 * When the repair has finished and synced the device, a closing record
 * marks the undo file complete.  docs/undo.md describes the bytes.
 *
 * Restoring (lanyfs-undo) reads the file as hostile input (every record
 * carries a SHA-256; lengths are exact; block numbers bounded by the size),
 * checks the device against the recorded identity -- its size, its block
 * size, and for every recorded block that its current contents are the old
 * contents or what the repair wrote (for a complete file: the last write;
 * for an interrupted repair: any of its writes) -- and then writes the old
 * contents back, the blocks in the reverse order of their first change.
 * A restored block matches "old", so restoring again is harmless: the tool
 * can be re-run after an interruption of its own.
 *
 * The recorder chains to a write hook installed before it (a write log):
 * the caller passes that hook in, and the recorder calls it after the old
 * contents are safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lanyfs.h"
#include "sha256.h"

#define LANYFS_UNDO_MAGIC "LANYUNDO" /* 8 bytes, no NUL on disk */
#define LANYFS_UNDO_VERSION 1
#define LANYFS_UNDO_HEADER_SIZE 128

/* ---- recording ---------------------------------------------------------- */

struct lanyfs_undo;

#define LANYFS_UNDO_OVERWRITE 0x1 /* replace an existing undo file (default: refuse) */

/*
 * A recorder that will create the undo file at path on the first write it
 * sees.  Nothing touches the disk yet.  NULL when out of memory.
 */
struct lanyfs_undo *lanyfs_undo_new(const char *path, unsigned flags);

/*
 * Install the recorder as fs's write hook.  prev (may be NULL) is the hook
 * that was installed before and prev_ctx its context: it is called for every
 * write after the old contents are recorded, and its refusal fails the
 * write.  The recorder refuses every write after its first error (it cannot
 * create the file, a short write, a failed fsync, a block beyond the image),
 * so the device never holds a change the undo file lacks.
 */
void lanyfs_undo_attach(struct lanyfs_undo *u, struct lanyfs_fs *fs, lanyfs_write_hook prev,
                        void *prev_ctx);

/* The hook itself, for callers that chain hooks of their own (ctx is the recorder). */
int lanyfs_undo_hook(void *ctx, uint64_t block, const uint8_t *data);

/* True once the file exists (at least one write was seen). */
bool lanyfs_undo_started(const struct lanyfs_undo *u);
/* Blocks recorded and writes seen so far. */
uint64_t lanyfs_undo_blocks(const struct lanyfs_undo *u);
uint64_t lanyfs_undo_writes(const struct lanyfs_undo *u);
const char *lanyfs_undo_path(const struct lanyfs_undo *u);
/* The first error met, or LANYFS_OK; err (may be NULL) gets its message. */
enum lanyfs_err lanyfs_undo_error(const struct lanyfs_undo *u, struct lanyfs_error *err);

/*
 * Mark the undo file complete (call after the device is synced), close it
 * and free the recorder.  A recorder that never started writes nothing.
 * Returns the first error met while recording or closing.
 */
enum lanyfs_err lanyfs_undo_finish(struct lanyfs_undo *u, struct lanyfs_error *err);
/* Close the file without marking it complete (an interrupted repair); free. */
void lanyfs_undo_abandon(struct lanyfs_undo *u);

/* ---- reading and restoring -------------------------------------------------- */

struct lanyfs_undo_file;

/* What the header and the records say. */
struct lanyfs_undo_info {
    uint32_t version;          /* LANYFS_UNDO_VERSION */
    uint32_t blocksize;        /* bytes */
    uint64_t device_bytes;     /* the device size at recording */
    uint64_t fs_blocks;        /* the superblock's blocks at recording (informational) */
    uint8_t sb_sha256[LANYFS_SHA256_LEN]; /* block 0 before the repair */
    int64_t created;           /* seconds since the epoch */
    uint64_t blocks;           /* blocks recorded */
    uint64_t writes;           /* writes recorded */
    bool complete;             /* the closing record is present */
    bool torn_tail;            /* the file ends inside a record (ignored) */
};

/*
 * Read and check the whole undo file at path.  LANYFS_E_BADMAGIC when it is
 * no undo file, LANYFS_E_VERSION for another version, LANYFS_E_CORRUPT for a
 * bad checksum or an inconsistent record (naming its offset).  A last record
 * cut short is tolerated (torn_tail): the repair stopped while appending
 * it, before the write it announced.
 */
enum lanyfs_err lanyfs_undo_file_open(const char *path, struct lanyfs_undo_file **out,
                                      struct lanyfs_error *err);
void lanyfs_undo_file_close(struct lanyfs_undo_file *f);
const struct lanyfs_undo_info *lanyfs_undo_file_info(const struct lanyfs_undo_file *f);

/* How a recorded block of the device compares with the undo file. */
enum lanyfs_undo_state {
    LANYFS_UNDO_AT_OLD = 0,    /* holds the old contents (not changed, or restored) */
    LANYFS_UNDO_AT_NEW = 1,    /* holds what the repair wrote */
    LANYFS_UNDO_MISMATCH = 2,  /* holds something else */
};

struct lanyfs_undo_check {
    bool size_ok;              /* device size as recorded */
    bool blocksize_ok;         /* block 0 names no other block size */
    uint64_t at_old;           /* recorded blocks holding the old contents */
    uint64_t at_new;           /* recorded blocks holding what the repair wrote */
    uint64_t mismatched;       /* recorded blocks holding anything else */
    uint64_t first_mismatch;   /* the first of those, LANYFS_NO_BLOCK when none */
    uint64_t device_bytes;     /* the device's size now */
};

/*
 * Compare the device img with the undo file (reads only).  Fills chk; the
 * device matches when size_ok, blocksize_ok and mismatched == 0.
 */
enum lanyfs_err lanyfs_undo_file_check(struct lanyfs_undo_file *f, struct lanyfs_image *img,
                                       struct lanyfs_undo_check *chk, struct lanyfs_error *err);

/*
 * Write every recorded block's old contents back to img (opened read-write),
 * in the reverse order of first change, then sync.  The caller has checked
 * the device (or was told to force).  *restored (may be NULL) receives the
 * blocks written.  A device smaller than a recorded block is LANYFS_E_RANGE.
 */
enum lanyfs_err lanyfs_undo_file_restore(struct lanyfs_undo_file *f, struct lanyfs_image *img,
                                         uint64_t *restored, struct lanyfs_error *err);
