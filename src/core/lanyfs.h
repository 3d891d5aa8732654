/*
 * lanyfs.h -- the public interface of the LanyFS core library.
 *
 * The core reads and writes the LanyFS 1.4 format (lanyfs_raw.h) for every
 * block size and address length.  It knows nothing of SQLite, GLib or GTK.
 * Grouped by the file that implements each part, as e2fsprogs' ext2fs.h is.
 *
 * Conventions: functions return enum lanyfs_err (LANYFS_OK == 0) and fill an
 * optional struct lanyfs_error at the origin.  Block numbers are uint64_t.
 * Decoders never fail on field values: they return what the disk says, and
 * the checks (lanyfs_super_check, the walkers) judge it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "errors.h"
#include "lanyfs_raw.h"

/* ---- endian.c: little-endian and short-address access ------------------ */

uint16_t lanyfs_get16(const uint8_t *p);
uint32_t lanyfs_get32(const uint8_t *p);
uint64_t lanyfs_get64(const uint8_t *p);
void lanyfs_put16(uint8_t *p, uint16_t v);
void lanyfs_put32(uint8_t *p, uint32_t v);
void lanyfs_put64(uint8_t *p, uint64_t v);
/* An address of addrlen (1..8) bytes, little-endian, zero-extended. */
uint64_t lanyfs_get_addr(const uint8_t *p, unsigned addrlen);
/* Store the low addrlen bytes of v; the caller checks that v fits. */
void lanyfs_put_addr(uint8_t *p, unsigned addrlen, uint64_t v);
/* Largest address that addrlen bytes hold. */
uint64_t lanyfs_addr_max(unsigned addrlen);

/* ---- geometry.c: derived sizes --------------------------------------- */

struct lanyfs_geom {
    unsigned blockbits;   /* log2 of the block size, 9..12 */
    uint32_t blocksize;   /* bytes per block */
    unsigned addrlen;     /* bytes per slot address, 1..8 */
    uint32_t chainmax;    /* slots in a chain block: (blocksize - 16) / addrlen */
    uint32_t extmax;      /* slots in an extender: (blocksize - 5) / addrlen */
    uint64_t blocks;      /* blocks on the device, as the superblock says */
};

/*
 * A geometry as written on a command line, "BLOCKSIZE:ADDRLEN" (e.g.
 * "2048:2"): decimal, a block size of 512..4096 that is a power of two and
 * 1..8 address bytes.  The block size comes back as its log2.
 */
bool lanyfs_geom_parse(const char *s, unsigned *blockbits, unsigned *addrlen);
/* The same, or "BLOCKSIZE" alone, for which *addrlen comes back 0: a
 * reader that can infer the address length (the scan). */
bool lanyfs_geom_parse_bs(const char *s, unsigned *blockbits, unsigned *addrlen);
/* Fill g from the raw superblock values; LANYFS_E_GEOMETRY when out of range. */
enum lanyfs_err lanyfs_geom_init(struct lanyfs_geom *g, unsigned blockbits, unsigned addrlen,
                                 uint64_t blocks, struct lanyfs_error *err);
/*
 * extmax^(level+1): the number of file blocks a level-`level` extender tree
 * maps, saturated at UINT64_MAX.  Computed by multiplication, not the
 * driver's squaring helper (SPEC-§9.8).
 */
uint64_t lanyfs_geom_tree_capacity(const struct lanyfs_geom *g, unsigned level);
/* extmax^level, saturated at UINT64_MAX. */
uint64_t lanyfs_geom_pow(const struct lanyfs_geom *g, unsigned level);
/* Smallest level whose tree maps nblocks file blocks. */
unsigned lanyfs_geom_level_for(const struct lanyfs_geom *g, uint64_t nblocks);
/* ceil(size / blocksize) without overflow. */
uint64_t lanyfs_geom_blocks_for_size(const struct lanyfs_geom *g, uint64_t size);

/* ---- timestamp.c ------------------------------------------------------ */

struct lanyfs_ts {
    uint16_t year;      /* 0..9999 */
    uint8_t month;      /* 1..12 */
    uint8_t day;        /* 1..31 */
    uint8_t hour;       /* 0..23 */
    uint8_t minute;     /* 0..59 */
    uint8_t second;     /* 0..60 */
    uint8_t res7;       /* reserved byte 7, kept for byte-exact rewrites */
    uint32_t nsec;      /* < 10^9 */
    int16_t offset;     /* minutes east of UTC, informational */
    uint16_t res14;     /* reserved bytes 14..15 */
};

void lanyfs_ts_decode(struct lanyfs_ts *ts, const uint8_t *p);
void lanyfs_ts_encode(const struct lanyfs_ts *ts, uint8_t *p);
/* All named fields zero (the reserved bytes may hold anything, SPEC-§9.16). */
bool lanyfs_ts_is_unset(const struct lanyfs_ts *ts);
/* The same named fields (the reserved bytes are not compared). */
bool lanyfs_ts_same(const struct lanyfs_ts *a, const struct lanyfs_ts *b);
/* Order of the UTC fields (the offset is informational): <0, 0, >0. */
int lanyfs_ts_cmp(const struct lanyfs_ts *a, const struct lanyfs_ts *b);
/* Every field within its range. */
bool lanyfs_ts_is_valid(const struct lanyfs_ts *ts);
/* UTC fields from t, the given offset stored beside them. */
void lanyfs_ts_from_time(struct lanyfs_ts *ts, time_t t, uint32_t nsec, int16_t offset_min);
/* Seconds since the epoch of the UTC fields (the offset is not applied). */
bool lanyfs_ts_to_time(const struct lanyfs_ts *ts, time_t *out);
/*
 * ISO 8601 into buf (at least 40 bytes): "2026-12-03T01:02:15Z", with
 * ".nnnnnnnnn" when nsec is non-zero and "+hh:mm" for a non-zero offset
 * shown beside the UTC time as "(offset +01:00)"; "unset" for an unset one.
 */
void lanyfs_ts_format(const struct lanyfs_ts *ts, char *buf, size_t len);
/*
 * "Now" for a writer: SOURCE_DATE_EPOCH when set (offset 0), otherwise the
 * clock and the local offset.
 */
void lanyfs_ts_now(struct lanyfs_ts *ts);

/* ---- superblock.c ----------------------------------------------------- */

struct lanyfs_super {
    uint8_t type;             /* 0xD0 */
    uint8_t res1;             /* reserved byte 1 */
    uint16_t wrcnt;           /* write counter */
    uint32_t magic;           /* LANYFS_MAGIC */
    uint8_t major;            /* 1 */
    uint8_t minor;            /* 4 */
    uint8_t blockbits;        /* 9..12 */
    uint8_t addrlen;          /* 1..8 */
    uint8_t res_odd[5];       /* reserved bytes 9, 11, 13, 15 and 1 is res1 */
    uint64_t rootdir;         /* root directory block */
    uint64_t blocks;          /* blocks on the device */
    uint64_t freehead;        /* first chain block */
    uint64_t freetail;        /* last chain block (stale on driver media) */
    uint64_t freeblocks;      /* free blocks, chain blocks included */
    struct lanyfs_ts created; /* format time */
    struct lanyfs_ts updated; /* last superblock change */
    struct lanyfs_ts checked; /* last successful check */
    uint64_t badblocks;       /* first bad-block chain block, 0 = none */
    uint8_t res112[8];        /* reserved */
    uint8_t label[256];       /* raw label bytes */
};

void lanyfs_super_decode(struct lanyfs_super *sb, const uint8_t *block);
/* Store every field into block (at least 376 bytes); other bytes untouched. */
void lanyfs_super_encode(const struct lanyfs_super *sb, uint8_t *block);
/* Label as a C string into buf (257 bytes): bytes up to the NUL or 256. */
void lanyfs_super_label(const struct lanyfs_super *sb, char *buf, size_t len);

/* One problem the superblock check found. */
struct lanyfs_sb_problem {
    enum lanyfs_err code; /* BADMAGIC, VERSION, GEOMETRY, BADTYPE, TRUNCATED, RANGE */
    const char *field;    /* the superblock field it concerns */
    bool fatal;           /* the image cannot be read as a filesystem */
    char msg[200];        /* a sentence that names the field and its value */
};

#define LANYFS_SB_PROBLEMS_MAX 16

/*
 * A major version that is 1 with one bit flipped (3, 5, 9, ..., 129):
 * LanyFS never had another major, so such a value is damage, not a newer
 * format.  0 is not counted: the driver mounts it (major <= 1).
 */
bool lanyfs_super_major_flipped(uint8_t major);
/*
 * Judge a decoded superblock against the format and an image of image_bytes
 * bytes (0 = unknown).  Fills up to max problems, returns how many it found
 * (which may exceed max).  Checks magic, type, version (major <= 1), block
 * size, address length, blocks against the address limit, the image and the
 * formatter minimum, and rootdir, freehead, freetail, badblocks within the
 * device.
 */
size_t lanyfs_super_check(const struct lanyfs_super *sb, uint64_t image_bytes,
                          struct lanyfs_sb_problem *out, size_t max);

/* ---- entry.c: directory and file blocks ------------------------------ */

/* An entry block's fields but its name: struct lanyfs_entry, and the
 * scanner's struct scan_entry_fields, which keeps the name elsewhere. */
#define LANYFS_ENTRY_FIELDS                                                                 \
    uint8_t type;              /* LANYFS_TYPE_DIR or LANYFS_TYPE_FILE (or what the disk says) */ \
    uint8_t res1;              /* reserved byte 1 */                                        \
    uint16_t wrcnt;            /* write counter */                                          \
    uint64_t left;             /* sibling with a greater name */                            \
    uint64_t right;            /* sibling with a smaller name */                            \
    uint64_t subtree;          /* directory: root of its entries; file: top extender */     \
    uint64_t size;             /* file size in bytes */                                     \
    struct lanyfs_ts created;  /* creation */                                               \
    struct lanyfs_ts modified; /* last modification */                                      \
    uint16_t attr;             /* LANYFS_ATTR_* */

struct lanyfs_entry {
    LANYFS_ENTRY_FIELDS
    uint8_t name[256];          /* raw name field */
    size_t name_len;            /* bytes before the first NUL, 256 when none */
};

void lanyfs_entry_decode(struct lanyfs_entry *e, const uint8_t *block);
/*
 * Store every field into block; the name field is written from name[] as it
 * is (all 256 bytes), other bytes are untouched.
 */
void lanyfs_entry_encode(const struct lanyfs_entry *e, uint8_t *block);
/* Set name and name_len from bytes (len <= 255), padding with NUL. */
void lanyfs_entry_set_name(struct lanyfs_entry *e, const char *name, size_t len);
/* The root directory the formatter writes (SPEC-§9.16): LANYFSROOT, wrcnt 1, attr 0, times now. */
void lanyfs_entry_init_root(struct lanyfs_entry *e, const struct lanyfs_ts *now);
/* A directory named LANYFSROOT, as the formatter names the root. */
bool lanyfs_entry_is_formatter_root(const struct lanyfs_entry *e);
/* The name field holds a NUL within 256 bytes, and no '/' and is not empty. */
bool lanyfs_entry_name_ok(const struct lanyfs_entry *e);
/*
 * The format's tree order (SPEC-§5): strncmp(node, x, 256) as unsigned
 * bytes.  < 0 means x is greater than node and goes LEFT.
 */
int lanyfs_name_cmp(const uint8_t *node_name, const uint8_t *x, size_t xlen);

static inline bool lanyfs_entry_is_dir(const struct lanyfs_entry *e)
{
    return e->type == LANYFS_TYPE_DIR;
}

static inline bool lanyfs_entry_is_file(const struct lanyfs_entry *e)
{
    return e->type == LANYFS_TYPE_FILE;
}

/* ---- chain.c: free-list chain blocks --------------------------------- */

struct lanyfs_chain_hdr {
    uint8_t type;   /* 0x70 (0x80 from the 2012 formatter) */
    uint16_t wrcnt; /* write counter */
    uint64_t next;  /* next chain block, 0 = end */
};

void lanyfs_chain_decode(struct lanyfs_chain_hdr *h, const uint8_t *block);
void lanyfs_chain_encode(const struct lanyfs_chain_hdr *h, uint8_t *block);
uint64_t lanyfs_chain_slot(const struct lanyfs_geom *g, const uint8_t *block, uint32_t i);
void lanyfs_chain_set_slot(const struct lanyfs_geom *g, uint8_t *block, uint32_t i, uint64_t v);

/* ---- extender.c: file data map --------------------------------------- */

struct lanyfs_ext_hdr {
    uint8_t type;   /* 0x80 */
    uint16_t wrcnt; /* write counter */
    uint8_t level;  /* 0: slots are data blocks; L: slots are level L-1 extenders */
};

void lanyfs_ext_decode(struct lanyfs_ext_hdr *h, const uint8_t *block);
void lanyfs_ext_encode(const struct lanyfs_ext_hdr *h, uint8_t *block);
uint64_t lanyfs_ext_slot(const struct lanyfs_geom *g, const uint8_t *block, uint32_t i);
void lanyfs_ext_set_slot(const struct lanyfs_geom *g, uint8_t *block, uint32_t i, uint64_t v);

/* ---- image.c: regular files and block devices ------------------------ */

struct lanyfs_image;

#define LANYFS_IMAGE_RDWR 0x1 /* open for writing (default read-only) */
#define LANYFS_IMAGE_EXCL 0x2 /* O_EXCL on a block device: refuse one in use */

enum lanyfs_err lanyfs_image_open(const char *path, unsigned flags, struct lanyfs_image **out,
                                  struct lanyfs_error *err);
void lanyfs_image_close(struct lanyfs_image *img);
/* Size in bytes (fstat, or BLKGETSIZE64 for a block device). */
uint64_t lanyfs_image_size(const struct lanyfs_image *img);
const char *lanyfs_image_path(const struct lanyfs_image *img);
bool lanyfs_image_is_device(const struct lanyfs_image *img);
bool lanyfs_image_writable(const struct lanyfs_image *img);
/* Read exactly len bytes at off; a short read is LANYFS_E_TRUNCATED. */
enum lanyfs_err lanyfs_image_pread(struct lanyfs_image *img, uint64_t off, void *buf, size_t len,
                                   struct lanyfs_error *err);
/* The same, but a 512-byte sector that fails with an I/O error reads as
 * zeros and is counted in *lost; only other failures (truncation, a range
 * beyond any image) fail the call. */
enum lanyfs_err lanyfs_image_pread_sectors(struct lanyfs_image *img, uint64_t off, void *buf,
                                           size_t len, size_t *lost, struct lanyfs_error *err);
enum lanyfs_err lanyfs_image_pwrite(struct lanyfs_image *img, uint64_t off, const void *buf,
                                    size_t len, struct lanyfs_error *err);
enum lanyfs_err lanyfs_image_sync(struct lanyfs_image *img, struct lanyfs_error *err);

/* ---- fs.c: an opened filesystem -------------------------------------- */

struct lanyfs_fs;

#define LANYFS_OPEN_RDWR 0x1   /* allow block writes */
#define LANYFS_OPEN_FORCE 0x2  /* open although the superblock fails its checks */
#define LANYFS_OPEN_EXCL 0x4   /* O_EXCL on block devices */
#define LANYFS_OPEN_BAD0 0x8   /* with FORCE: open although block 0 cannot be read whole;
                                * sectors that fail read as zeros (lanyfs_fs_block0_lost) */

/*
 * Called for every block write, before it reaches the image, in the order
 * the writes are issued.  Returning non-zero fails the write.
 */
typedef int (*lanyfs_write_hook)(void *ctx, uint64_t block, const uint8_t *data);

/*
 * Open the image at path and read its superblock.  Without LANYFS_OPEN_FORCE
 * a fatal superblock problem fails the open with that problem's code and
 * message; with it the handle is returned and the problems are kept
 * (lanyfs_fs_problems).  A block size the superblock does not name validly
 * is taken as 512 under FORCE, so that block 0 can still be shown.
 */
enum lanyfs_err lanyfs_fs_open(const char *path, unsigned flags, struct lanyfs_fs **out,
                               struct lanyfs_error *err);
/* Same, over an image already opened; the handle takes ownership of img. */
enum lanyfs_err lanyfs_fs_open_image(struct lanyfs_image *img, unsigned flags,
                                     struct lanyfs_fs **out, struct lanyfs_error *err);
void lanyfs_fs_close(struct lanyfs_fs *fs);
/* Sectors of block 0 that could not be read (LANYFS_OPEN_BAD0); 0 = none. */
unsigned lanyfs_fs_block0_lost(const struct lanyfs_fs *fs);
/* Whether the superblock's own sector (block 0's first) was among them: its
 * fields are then zeros, not what the disk says. */
bool lanyfs_fs_super_lost(const struct lanyfs_fs *fs);
/*
 * Read and write with this geometry instead of the one block 0 gives (a
 * geometry inferred from the blocks, for writing a new superblock): the
 * block cache and the copy of block 0 are made anew at the new block size.
 * The decoded superblock stays as it is until a superblock with this
 * geometry is written to block 0 (lanyfs_fs_write_super).
 */
enum lanyfs_err lanyfs_fs_set_geometry(struct lanyfs_fs *fs, unsigned blockbits, unsigned addrlen,
                                       uint64_t blocks, struct lanyfs_error *err);

/*
 * Read a handle opened read-only as if block 0 held sb, which is never
 * written: the geometry as lanyfs_fs_set_geometry gives it (sb->blockbits,
 * sb->addrlen, sb->blocks), paths resolved from sb->rootdir, and
 * lanyfs_fs_super returning sb.  For reading a stick whose superblock is
 * lost with what its blocks imply (scan_locate).  LANYFS_E_INVAL on a
 * handle opened for writing.
 */
enum lanyfs_err lanyfs_fs_assume_super(struct lanyfs_fs *fs, const struct lanyfs_super *sb,
                                       struct lanyfs_error *err);

const struct lanyfs_super *lanyfs_fs_super(const struct lanyfs_fs *fs);
const struct lanyfs_geom *lanyfs_fs_geom(const struct lanyfs_fs *fs);
struct lanyfs_image *lanyfs_fs_image(struct lanyfs_fs *fs);
/* Problems the superblock check found at open. */
size_t lanyfs_fs_problems(const struct lanyfs_fs *fs, const struct lanyfs_sb_problem **out);
/* Blocks the image really holds (may differ from the superblock's blocks). */
uint64_t lanyfs_fs_image_blocks(const struct lanyfs_fs *fs);

/*
 * Read block blk into buf (blocksize bytes).  blk must be below the
 * superblock's blocks (LANYFS_E_RANGE otherwise, naming the block) and in
 * the image (LANYFS_E_TRUNCATED otherwise).  Served from a bounded cache.
 */
enum lanyfs_err lanyfs_fs_read_block(struct lanyfs_fs *fs, uint64_t blk, uint8_t *buf,
                                     struct lanyfs_error *err);
/* As lanyfs_fs_read_block, but bounded by the image only (for tools that look past blocks). */
enum lanyfs_err lanyfs_fs_read_raw(struct lanyfs_fs *fs, uint64_t blk, uint8_t *buf,
                                   struct lanyfs_error *err);
/* Write one block (needs LANYFS_OPEN_RDWR); passes through the write hook. */
enum lanyfs_err lanyfs_fs_write_block(struct lanyfs_fs *fs, uint64_t blk, const uint8_t *buf,
                                      struct lanyfs_error *err);
/* Write block 0 from the in-memory superblock (the raw bytes beyond 376 kept). */
enum lanyfs_err lanyfs_fs_write_super(struct lanyfs_fs *fs, const struct lanyfs_super *sb,
                                      struct lanyfs_error *err);
void lanyfs_fs_set_write_hook(struct lanyfs_fs *fs, lanyfs_write_hook hook, void *ctx);
/* Drop every cached block (after writes that bypassed the handle). */
void lanyfs_fs_cache_drop(struct lanyfs_fs *fs);

/* Read and decode an entry block; LANYFS_E_BADTYPE unless dir or file. */
enum lanyfs_err lanyfs_fs_read_entry(struct lanyfs_fs *fs, uint64_t blk, struct lanyfs_entry *e,
                                     struct lanyfs_error *err);

/* ---- blockset.c: a set of block numbers (visited sets) --------------- */

struct lanyfs_blockset;

struct lanyfs_blockset *lanyfs_blockset_new(void);
void lanyfs_blockset_free(struct lanyfs_blockset *s);
/* Insert blk; returns 1 when added, 0 when present, -1 when out of memory. */
int lanyfs_blockset_add(struct lanyfs_blockset *s, uint64_t blk);
bool lanyfs_blockset_has(const struct lanyfs_blockset *s, uint64_t blk);
size_t lanyfs_blockset_count(const struct lanyfs_blockset *s);

/* ---- dir.c: directory lookup and iteration --------------------------- */

struct lanyfs_dirent {
    uint64_t block;          /* the entry's own block */
    struct lanyfs_entry e;   /* its decoded contents */
};

/* Soft problems a directory walk met and walked around. */
#define LANYFS_DIR_CYCLE 0x01    /* a node was reached twice (cycle or shared node) */
#define LANYFS_DIR_BADPTR 0x02   /* a link points outside the device */
#define LANYFS_DIR_BADTYPE 0x04  /* a link points at a block that is no entry */
#define LANYFS_DIR_ORDER 0x08    /* the reversed tree order is violated */
#define LANYFS_DIR_DUP 0x10      /* two entries share a name */
#define LANYFS_DIR_READERR 0x20  /* a node could not be read */
#define LANYFS_DIR_BADNAME 0x40  /* an entry's name is empty, unterminated or has '/' */

struct lanyfs_dirlist {
    struct lanyfs_dirent *ents; /* sorted by name, bytewise */
    size_t count;               /* entries */
    unsigned problems;          /* LANYFS_DIR_* */
    struct lanyfs_error first;  /* the first problem met, naming its block */
};

/*
 * List the directory whose block is dir: walk its tree iteratively (explicit
 * stack, visited set), then sort.  Hard errors (the directory itself
 * unreadable or no directory, out of memory) are returned; problems inside
 * the tree are walked around and recorded in out->problems and out->first.
 */
enum lanyfs_err lanyfs_dir_list(struct lanyfs_fs *fs, uint64_t dir, struct lanyfs_dirlist *out,
                                struct lanyfs_error *err);
void lanyfs_dirlist_free(struct lanyfs_dirlist *l);

/*
 * Find name in the directory whose block is dir, following the reversed
 * search order.  LANYFS_E_NOTFOUND when absent; LANYFS_E_CYCLE when the
 * search path loops.  *blk and *e (either may be NULL) receive the entry.
 */
enum lanyfs_err lanyfs_dir_lookup(struct lanyfs_fs *fs, uint64_t dir, const char *name,
                                  size_t len, uint64_t *blk, struct lanyfs_entry *e,
                                  struct lanyfs_error *err);

/* ---- path.c ------------------------------------------------------------ */

/*
 * Resolve an absolute or root-relative path ("/", "a/b", "/a/b/") to its
 * entry.  Empty components are skipped; "." and ".." are not special in
 * LanyFS and are looked up as names.
 */
enum lanyfs_err lanyfs_path_resolve(struct lanyfs_fs *fs, const char *path, uint64_t *blk,
                                    struct lanyfs_entry *e, struct lanyfs_error *err);

/* ---- file.c: reading file data ----------------------------------------- */

/*
 * Map file block fblk of the file e to its disk block: *dblk = 0 for a hole
 * (an empty slot, or no data at all).  A top extender that is not an
 * extender, a child of the wrong level, or a slot beyond the device is
 * LANYFS_E_CORRUPT naming the block.
 */
enum lanyfs_err lanyfs_file_map(struct lanyfs_fs *fs, const struct lanyfs_entry *e, uint64_t fblk,
                                uint64_t *dblk, struct lanyfs_error *err);

/*
 * Read len bytes at off from file e into buf (holes read as zero).  Reading
 * past size is clipped; *got receives the bytes read.  *holes (may be NULL)
 * is incremented per hole block met.
 */
enum lanyfs_err lanyfs_file_pread(struct lanyfs_fs *fs, const struct lanyfs_entry *e, uint64_t off,
                                  void *buf, size_t len, size_t *got, uint64_t *holes,
                                  struct lanyfs_error *err);

/* Called once per mapped run: file blocks [fblk, fblk+count) at [dblk, dblk+count). */
typedef int (*lanyfs_extent_cb)(void *ctx, uint64_t fblk, uint64_t dblk, uint64_t count);
/* Called once per extender block of the file's tree, with its level. */
typedef int (*lanyfs_extender_cb)(void *ctx, uint64_t blk, unsigned level);

/*
 * Walk the extender tree of e (iteratively), reporting data runs (holes are
 * runs with dblk 0) for the file blocks its size needs, and each extender.
 * Either callback may be NULL; a non-zero return stops the walk.
 */
enum lanyfs_err lanyfs_file_walk(struct lanyfs_fs *fs, const struct lanyfs_entry *e,
                                 lanyfs_extent_cb on_extent, lanyfs_extender_cb on_extender,
                                 void *ctx, struct lanyfs_error *err);

/* ---- format.c: writing a new filesystem ---- */

#define LANYFS_FORMAT_MIN_BLOCKS 16                  /* smaller devices are refused, SPEC-§9.16 */
#define LANYFS_FORMAT_DEFAULT_LABEL "LanyFS Storage" /* the 2012 formatter's default label */

/* Where the formatter is; pos and blocks as the progress callback gets them. */
enum lanyfs_format_stage {
    LANYFS_FORMAT_SUPER_FIRST, /* about to write the provisional superblock; pos 0 */
    LANYFS_FORMAT_ROOT,        /* about to write the root directory; pos = its block */
    LANYFS_FORMAT_FREE_START,  /* about to map free space; pos = first listed block (3) */
    LANYFS_FORMAT_FREE_CHAIN,  /* about to fill a chain block; pos = first block it lists */
    LANYFS_FORMAT_FREE_DONE,   /* free list written; pos = one past the last listed block */
    LANYFS_FORMAT_SUPER_FINAL, /* about to write the final superblock; pos 0 */
    LANYFS_FORMAT_DONE,        /* all written and synced; pos as at FREE_DONE */
};

/* Called at every stage; blocks is the superblock's block count. */
typedef void (*lanyfs_format_progress_cb)(void *ctx, enum lanyfs_format_stage stage, uint64_t pos,
                                          uint64_t blocks);

struct lanyfs_format_opts {
    unsigned blockbits;                 /* log2 of the block size, 9..12 */
    unsigned addrlen;                   /* slot address length in bytes, 1..8 */
    const char *label;                  /* label bytes, need not end in NUL; NULL when none */
    size_t label_len;                   /* <= 255; compat2012: the first 256 bytes are kept,
                                         * and a label of 256 or more has no NUL (SPEC-§9.16) */
    bool compat2012;                    /* reproduce the 2012 formatter byte for byte */
    const struct lanyfs_ts *now;        /* the format time; NULL: lanyfs_ts_now() */
    lanyfs_format_progress_cb progress; /* may be NULL */
    void *progress_ctx;                 /* passed to progress */
};

/* What the formatter writes on a device of a given size. */
struct lanyfs_format_layout {
    struct lanyfs_geom geom;  /* geometry; geom.blocks == blocks */
    uint64_t device_bytes;    /* the device size */
    uint64_t device_blocks;   /* whole blocks on the device */
    uint64_t overhead;        /* bytes after the last whole block, not used */
    uint64_t cap;             /* most blocks the address length allows (2012: 1 for 8 bytes) */
    bool capped;              /* device_blocks > cap: part of the device is not used */
    uint64_t blocks;          /* the superblock's blocks: min(device_blocks, cap) */
    uint32_t slots_used;      /* slots filled per chain block: chainmax (2012) or chainmax-1 */
    uint64_t chain_blocks;    /* chain blocks in the free list */
    uint64_t rootdir;         /* 1 */
    uint64_t freehead;        /* 2 */
    uint64_t freetail;        /* the last chain block */
    uint64_t freeblocks;      /* chain blocks + listed blocks */
};

/*
 * Compute the layout for a device of device_bytes bytes without writing.
 * LANYFS_E_GEOMETRY for a bad block size, address length or a device of
 * fewer than LANYFS_FORMAT_MIN_BLOCKS whole blocks; LANYFS_E_NAME for a
 * label over 255 bytes outside compat2012.
 */
enum lanyfs_err lanyfs_format_plan(const struct lanyfs_format_opts *o, uint64_t device_bytes,
                                   struct lanyfs_format_layout *out, struct lanyfs_error *err);
/*
 * Write a new filesystem onto img (opened read-write), laid out as
 * lanyfs_format_plan says for lanyfs_image_size(img), and sync it.
 */
enum lanyfs_err lanyfs_format(struct lanyfs_image *img, const struct lanyfs_format_opts *o,
                              struct lanyfs_error *err);
