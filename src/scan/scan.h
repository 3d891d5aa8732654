/*
 * scan.h -- the tolerant scanner: what is on a stick, block by block.
 *
 * A scan never trusts the disk and never gives up: it walks the directory
 * trees from the root, every file's extender tree and the chained free
 * list, then sweeps every block of the device, and accounts for each block
 * in an ownership map.  Problems become findings (problem.h); the walk goes
 * on around them.  It reads only.
 *
 * The result is plain data for the store (SQLite), fsck, salvage and the
 * GUI: the geometry (read or inferred), the findings, every entry found
 * (live, deleted, orphaned) and the block map.  Nothing here knows about
 * SQLite or GTK.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lanyfs.h"
#include "problem.h"

/* What a block is, as the scan accounts for it. */
enum scan_class {
    SCAN_BLK_UNKNOWN = 0,    /* nothing reaches it and its contents say nothing */
    SCAN_BLK_SUPER = 1,      /* block 0 */
    SCAN_BLK_DIR = 2,        /* a live directory */
    SCAN_BLK_FILE = 3,       /* a live file */
    SCAN_BLK_EXTENDER = 4,   /* an extender of a live file (level in index) */
    SCAN_BLK_DATA = 5,       /* data of a live file (file block in index) */
    SCAN_BLK_CHAIN = 6,      /* a chain block of the free list */
    SCAN_BLK_FREE = 7,       /* listed in a chain slot */
    SCAN_BLK_LEAKED = 8,     /* neither reachable nor free */
    SCAN_BLK_ORPHAN = 9,     /* a plausible entry block that nothing reaches */
    SCAN_BLK_DELETED = 10,   /* an entry block in the free list, contents intact */
    SCAN_BLK_UNREADABLE = 11,/* the read failed */
    SCAN_BLK_BEYOND = 12,    /* in the image but past the filesystem's blocks */
    SCAN_BLK_ORPHAN_EXT = 13,/* an extender nothing reaches (driver leaks, SPEC-9.4/9.7) */
    SCAN_BLK_CLASSES
};

/* Flags of a block map cell. */
#define SCAN_BF_SHARED 0x01   /* claimed by more than one owner (cross-link) */
#define SCAN_BF_TORN 0x02     /* a torn-write suspect */
#define SCAN_BF_METADATA 0x04 /* carries a header (its wrcnt is meaningful) */
#define SCAN_BF_DRIVER 0x08   /* unreachable because of a 2012 driver mark (SPEC-9), not damage */

/* One cell of the block map: 16 bytes a block. */
struct scan_block {
    uint8_t cls;     /* enum scan_class */
    uint8_t flags;   /* SCAN_BF_* */
    uint16_t wrcnt;  /* the header's write counter, for metadata blocks */
    uint32_t owner;  /* id of the owning entry (1-based), 0 = none */
    uint64_t index;  /* data: file block; extender: level; free: chain block listing it */
};

enum scan_entry_state {
    SCAN_ENTRY_LIVE = 0,     /* reached from the root */
    SCAN_ENTRY_DELETED = 1,  /* its block is in the free list (SPEC-§11) */
    SCAN_ENTRY_ORPHAN = 2,   /* a valid entry block nothing reaches */
};

/*
 * An entry's decoded fields as struct lanyfs_entry holds them, but with
 * its name kept apart: name_len bytes (and a NUL after them) in the
 * result's pool, not the 256-byte field, which made a scan of 100,000
 * small files keep 25 MB of mostly zero bytes.  The bytes of the field
 * after its first NUL are not kept.  scan_entry_fields() gives the whole
 * struct lanyfs_entry for the core's functions.
 */
struct scan_entry_fields {
    LANYFS_ENTRY_FIELDS
    const uint8_t *name;        /* name_len bytes, then a NUL; never NULL */
    size_t name_len;            /* bytes before the first NUL, 256 when none */
};

struct scan_entry {
    uint32_t id;                  /* 1-based, stable within a result */
    uint64_t block;               /* its own block */
    uint32_t parent;              /* id of the directory holding it; 0 for the root or unknown */
    enum scan_entry_state state;  /* live, deleted, orphaned */
    struct scan_entry_fields e;   /* decoded contents; the data pointer of a live or
                                   * orphaned file that the scan read as a flipped bit
                                   * of 0 is 0 here (FILE_DATA_UNWRITTEN has it) */
    char *path;                   /* full path ("/a/b"); for deleted and orphaned
                                   * entries the best path known, or "/name" */
    uint64_t blocks_needed;       /* ceil(size / blocksize) for files */
    uint64_t blocks_mapped;       /* data blocks found for it (not holes) */
    uint64_t blocks_intact;       /* of those, not owned by anyone else now */
    uint64_t *data;               /* its data blocks in file order, 0 = hole or unknown */
    uint64_t ndata;               /* entries in data */
};

struct scan_finding {
    uint32_t code;     /* SCAN_PR_* */
    uint32_t entry;    /* id of the entry concerned, 0 = none */
    uint64_t block;    /* {block} */
    uint64_t block2;   /* {block2} */
    uint64_t value;    /* {value} */
    uint64_t value2;   /* {value2} */
    uint64_t count;    /* {count} */
    uint64_t count2;   /* {count2} */
    char *path;        /* {path}, may be NULL */
    char *text;        /* {text}, may be NULL */
};

/* Phases, for progress reports. */
enum scan_phase {
    SCAN_PHASE_SUPER,
    SCAN_PHASE_TREE,
    SCAN_PHASE_FREE,
    SCAN_PHASE_SWEEP,
    SCAN_PHASE_ANALYSE,
    SCAN_PHASE_DONE,
};

struct scan_opts {
    /* Called now and then; done <= total.  May be NULL. */
    void (*progress)(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* When non-NULL and set non-zero by another thread, the scan stops (LANYFS_E_INVAL). */
    volatile int *cancel;
    /*
     * blocksize non-zero: read the image with this block size (512..4096,
     * a power of two) and address length (1..8) whatever block 0 says,
     * with the root and the free list found as for an inferred geometry:
     * the way to an earlier format's blocks on a stick formatted again.
     * addrlen 0 with a block size: the address length is inferred (from
     * the data maps of the files under the root, else from slot values).
     */
    uint32_t blocksize;
    unsigned addrlen;
};

struct scan_summary {
    uint64_t dirs;            /* live directories, the root included */
    uint64_t files;           /* live files */
    uint64_t deleted;         /* deleted entries found */
    uint64_t orphans;         /* orphaned entries found */
    uint64_t bytes;           /* bytes in live files */
    uint64_t by_class[SCAN_BLK_CLASSES]; /* blocks per class */
    uint64_t free_listed;     /* chain blocks + listed blocks, counted once each */
    uint64_t findings_by_severity[4];
    enum scan_severity worst; /* highest severity found (info when none) */
};

struct scan_result;

/*
 * Scan the image at path (opened read-only, superblock checks forced).  Hard
 * errors only: the image cannot be opened, out of memory, cancelled.  A
 * damaged filesystem is a successful scan with findings.
 */
enum lanyfs_err scan_image(const char *path, const struct scan_opts *opts,
                           struct scan_result **out, struct lanyfs_error *err);
/* Same over an opened filesystem (opened with LANYFS_OPEN_FORCE). */
enum lanyfs_err scan_fs(struct lanyfs_fs *fs, const struct scan_opts *opts,
                        struct scan_result **out, struct lanyfs_error *err);
void scan_result_free(struct scan_result *r);

const struct lanyfs_geom *scan_geom(const struct scan_result *r);
/* The superblock as read; NULL when its sector could not be read. */
const struct lanyfs_super *scan_super(const struct scan_result *r);
/* True when block 0 was unusable and the geometry was inferred. */
bool scan_geom_inferred(const struct scan_result *r);
/* True when the geometry was given by the caller (scan_opts.blocksize, addrlen). */
bool scan_geom_given(const struct scan_result *r);
/* True when the address length was given too, false when it was inferred
 * (scan_opts.addrlen 0) or the geometry was not given. */
bool scan_geom_addrlen_given(const struct scan_result *r);
/*
 * Some 512-byte sector of the bs-byte block b that starts within its first
 * len bytes (the bytes a file takes from it) starts like a metadata block
 * of some LanyFS format (an entry, a chain block or an extender, any
 * address length, blocks of an image of image_bytes): what a later format
 * writes over an earlier one's data (or a LanyFS image kept as a file).
 */
bool scan_foreign_metadata(const uint8_t *b, uint32_t bs, size_t len, uint64_t image_bytes);

/* What the scan took as the root directory and the free list, whether the
 * superblock named them or they were inferred from the blocks. */
struct scan_anchors {
    uint64_t rootdir;     /* the root directory's block; 0 = none found */
    uint64_t freehead;    /* the free list's first chain block; 0 = none */
    uint64_t freetail;    /* its last chain block, as walked; 0 = none */
    uint64_t free_listed; /* the blocks it lists */
};
void scan_get_anchors(const struct scan_result *r, struct scan_anchors *out);
uint64_t scan_image_bytes(const struct scan_result *r);

/*
 * The geometry and root directory to read an image by, without a whole
 * scan (locate.c): block 0's when it gives them, else those the blocks
 * imply, found as the scan finds them (SB_GEOMETRY_INFERRED).  For reading
 * single paths of a stick whose superblock is lost (lanyfs ls -f).
 */
struct scan_location {
    unsigned blockbits;  /* log2 of the block size */
    unsigned addrlen;    /* bytes per slot address */
    uint64_t blocks;     /* blocks on the device */
    uint64_t rootdir;    /* the root directory's block; 0 = none found */
    uint64_t freehead;   /* the free list's first chain block; 0 = none */
    bool inferred;       /* the geometry is not block 0's */
    bool root_searched;  /* the root was found by a search, not named by block 0 */
    char *how;           /* how the geometry was inferred (a finding's message, translated),
                          * NULL when it was not */
};
enum lanyfs_err scan_locate(struct lanyfs_fs *fs, struct scan_location *out,
                            struct lanyfs_error *err);
void scan_location_free(struct scan_location *l);

size_t scan_findings(const struct scan_result *r, const struct scan_finding **out);
size_t scan_entries(const struct scan_result *r, const struct scan_entry **out);
/* The entry of an id, or NULL. */
const struct scan_entry *scan_entry_by_id(const struct scan_result *r, uint32_t id);
/* x's fields as the core's struct lanyfs_entry (the name field NUL-padded). */
void scan_entry_fields(const struct scan_entry *x, struct lanyfs_entry *out);
/* A directory named LANYFSROOT, as the formatter names the root (lanyfs_entry_is_formatter_root). */
bool scan_entry_is_formatter_root(const struct scan_entry *x);
static inline bool scan_entry_is_dir(const struct scan_entry *x)
{
    return x->e.type == LANYFS_TYPE_DIR;
}
static inline bool scan_entry_is_file(const struct scan_entry *x)
{
    return x->e.type == LANYFS_TYPE_FILE;
}
/* Bytes of blocks the scan read from the image: about the image's size once
 * the passes share their reads (the sweep skips what the walks read). */
uint64_t scan_bytes_read(const struct scan_result *r);
/* The block map: one cell per block of the device (the superblock's blocks,
 * or what the image holds when that is larger and the geometry is sane). */
uint64_t scan_block_count(const struct scan_result *r);
const struct scan_block *scan_blocks(const struct scan_result *r);
void scan_summarize(const struct scan_result *r, struct scan_summary *out);

/*
 * An orphan extender tree that no file links but that still maps data
 * blocks nobody else holds: a write whose entry update never landed
 * (SPEC-§8, §10; lostdata.c).  UNLINKED_FILE_DATA names it when its file is
 * known, LOST_DATA_TREE when not.
 */
struct scan_lost_tree {
    uint64_t top;        /* its top extender */
    uint32_t entry;      /* the file it holds the data of: the file entry in the
                          * block before top, with no data pointer; 0 = not known */
    uint64_t size;       /* bytes: the file blocks it maps, the zero tail of the
                          * last one left out (the size never landed) */
    uint64_t *data;      /* its data blocks in file order, 0 = hole */
    uint64_t ndata;      /* entries in data: the last file block it maps + 1 */
    uint64_t mapped;     /* the non-zero ones */
    uint64_t *exts;      /* its extenders, the top first */
    uint64_t nexts;      /* entries in exts */
};
size_t scan_lost_trees(const struct scan_result *r, const struct scan_lost_tree **out);
/* The lost tree holding the data of the file entry, NULL when none. */
const struct scan_lost_tree *scan_lost_tree_of(const struct scan_result *r, uint32_t entry);

/* "leaked", "data", ... stable names for the database and JSON. */
const char *scan_class_name(enum scan_class c);
const char *scan_entry_state_name(enum scan_entry_state s);

/* The finding's message with its fields filled in; the caller frees it. */
char *scan_finding_message(const struct scan_finding *f);
