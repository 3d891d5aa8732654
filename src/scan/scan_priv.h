/*
 * scan_priv.h -- the scanner's state, shared by the files of src/scan.
 *
 * One struct scan_result is both the state of a running scan and its
 * result.  The passes run in this order (scan.c), each in its own file:
 *
 *   super.c     pass 0: every superblock field; the geometry the scan uses
 *   infer.c     geometry, root and free-list head from the blocks themselves
 *               when block 0 is unusable (and the root when it is lost)
 *   freelist.c  pass 3: the chained free list, claiming chain and free blocks
 *   tree.c      pass 1: every directory tree from the root (and orphan trees)
 *   files.c     pass 2: every file's extender tree; blocks mapped vs size
 *   sweep.c     pass 4: every block of the device; deleted and orphaned
 *               entries, orphan extenders, leaked and unknown blocks
 *   counters.c  pass 5: write counters and torn writes (SPEC-§10)
 *   marks.c     pass 6: the marks of the 2012 driver and formatter (SPEC-§9),
 *               which decide between a mark and the damage it resembles
 *
 * and the helpers:
 *
 *   blockio.c   reading blocks with the scan's geometry (not the handle's)
 *   blockmap.c  the ownership map: 16 bytes a block, claims and conflicts
 *   entries.c   the table of entries found, their paths
 *   finding.c   recording findings and filling message templates
 *   probe.c     judging what a block's bytes look like (entry, chain,
 *               extender), shared by the sweep, the inference and the marks
 *   prefault.c  a helper thread that faults in the large arrays ahead of use
 *               (the scan's only other thread; it never touches their bytes)
 *               and runs one job at a time for the scan
 *   freeread.c  that job: the free space read while the walks run
 *   subentries.c  entries of a smaller earlier block size inside unused
 *               blocks, noted while those are read, judged after the sweep
 *
 * The free list is walked before the trees, so a tree link that lands on a
 * freed block is recognised when it is followed (a frozen parent, SPEC-§9.12)
 * instead of being taken for a live entry and undone later.
 *
 * Memory: the block map (16 bytes a block), the entries and their paths and
 * data lists, the findings, and O(depth) walk stacks.  No other per-block
 * table exists: a pass that needs a fact about a block keeps it in the
 * block's cell (the SC_BF_* scratch flags below, cleared before the result
 * is handed out) or reads the block again.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "scan.h"

/* Scratch flags of a map cell, used between passes and cleared at the end. */
#define SC_BF_ACTIVE 0x80   /* tree walk: the node is on the current path */
#define SC_BF_LINKED 0x40   /* sweep: an orphan candidate links to it */
#define SC_BF_AUX 0x20      /* sweep: leaked chain-like block / empty orphan extender */
#define SC_BF_CHECKED 0x10  /* walks: the torn check of the cell's class is made (counters.c) */
#define SC_BF_SCRATCH (SC_BF_ACTIVE | SC_BF_LINKED | SC_BF_AUX | SC_BF_CHECKED)

/* Which link of a node reached an entry. */
enum sc_link {
    SC_LINK_NONE = 0,    /* a root: the superblock's rootdir, or an orphan root */
    SC_LINK_SUBTREE = 1, /* the directory's subtree pointer */
    SC_LINK_RIGHT = 2,   /* a sibling's right link (smaller names) */
    SC_LINK_LEFT = 3,    /* a sibling's left link (greater names) */
};

/* A live file's level-0 slot past its size, claimed after every file's own blocks. */
struct sc_excess {
    uint64_t blk;    /* the block it names */
    uint64_t parent; /* the extender holding the slot */
    uint64_t fb;     /* the file block it maps */
    uint32_t id;     /* the file */
    uint32_t slot;   /* the slot */
};

/* Facts about an entry that the result does not publish. */
/* A live entry of the tree walk, by directory and a hash of its name. */
struct sc_dupkey {
    uint32_t parent; /* its directory */
    uint32_t id;     /* the entry */
    uint64_t hash;   /* FNV-1a of its name, with the length */
};

/* sc_aux.tw */
#define SC_TW_ORDER_BAD 0x01 /* its name broke the order where first reached */
#define SC_TW_MOVED 0x02     /* moved to the other tree of a rename caught halfway */
#define SC_TW_REHOMED 0x04   /* below such an entry, given back to the tree it fits */
#define SC_TW_LINKS_UP 0x08  /* links its own directory's block: links of the tree above */

struct sc_aux {
    uint64_t from;          /* block of the node whose link reached it, 0 for a root */
    uint8_t link;           /* enum sc_link */
    bool via_stale;         /* reached through a freed node (a frozen parent's stale link) */
    bool path_set;          /* sweep: the orphan's path and parent are final */
    uint8_t tw;             /* tree walk: SC_TW_* */
    uint32_t depth;         /* directory nesting of its directory (root = 0) */
    /* files.c, for the size judgments of marks.c */
    bool walked;            /* its extender tree was walked */
    bool tree_broken;       /* a structural finding was made inside its tree */
    bool tree_conflict;     /* a block of its tree is held by another owner */
    bool run_broken;        /* a data block one bit off the run of a neighbour (flipped.c) */
    uint8_t top_level;      /* level of its top extender */
    uint16_t ext_wrcnt_max; /* highest counter among its extenders */
    uint64_t extenders;     /* extenders in its tree */
    uint64_t holes;         /* file blocks below the size that map nothing */
    uint64_t holes0;        /* of those, empty slots of level-0 extenders */
    uint64_t excess;        /* data blocks mapped at file blocks past the size */
    /* stash.c: the top extender's leading bytes, kept by the tree walk */
    bool data_pooled;       /* its data list lies in the lists pool (sc_data_new) */
    uint32_t stash_off;     /* where in the stash */
    uint8_t stash_len;      /* how many; 0 = none kept */
    /* lostdata.c, once the analysis found it */
    uint32_t lost;          /* index + 1 in r->lost of the tree holding its data, 0 = none */
};

/* Small allocations freed together (bigmem.c). */
struct sc_pool {
    struct sc_pool_chunk *head; /* the newest chunk, NULL when none */
    void *spare;                /* the next chunk, mapped ahead (sc_pool_spare), or NULL */
};

/* An entry's data pointer read as a create's 0 with one bit flipped (entries.c). */
struct sc_unwritten_ptr {
    uint64_t blk; /* the entry's block */
    uint64_t was; /* the pointer as read */
};

/* A link past the device that an unreached entry's block read and the
 * sweep mended (sc_probe_entry_tolerant). */
struct sc_wild_link {
    uint64_t blk; /* the entry's block */
    uint64_t was; /* the link as read */
};

/* A torn block a walk found, reported when the sweep reaches it (counters.c). */
struct sc_torn_note {
    uint64_t blk;    /* the block */
    uint32_t sector; /* the first sector that tells another story */
    uint8_t cls;     /* the class it was judged as */
    uint8_t what;    /* which story (counters.c's table) */
};

/* Sectors of unused blocks that probe as entries of 512-byte blocks: one
 * list for the sweep (scan_result.sub), one for the helper's read of the
 * free space (freeread.c), each touched by one thread. */
struct sc_subprobe {
    bool on;                /* the block size is above 512 */
    unsigned bits;          /* the scan's block bits */
    struct lanyfs_geom g512;/* 512-byte blocks, 8-byte addresses */
    uint64_t n512;          /* sectors in the image */
    uint64_t *v;            /* sector numbers noted */
    size_t n, cap;
};
/* A bit per cell of the block map, allocated at its first bit (blockmap.c). */
struct sc_cellbits {
    uint64_t *bits; /* NULL until a bit is set */
    uint64_t n;     /* cells it has bits for */
};

struct scan_result {
    /* Borrowed or owned handles */
    struct lanyfs_fs *fs;          /* the filesystem handle */
    bool own_fs;                   /* scan_image opened it: close it with the result */
    struct lanyfs_image *img;      /* borrowed from fs */
    const struct scan_opts *opts;  /* borrowed, only while scanning */

    /* What block 0 says, and the geometry in use */
    struct lanyfs_super sb;        /* decoded block 0 */
    struct lanyfs_geom g;          /* the geometry the scan reads with; g.blocks = dev_blocks */
    bool inferred;                 /* g was inferred from the blocks (or given) */
    bool geom_given;               /* g is the caller's (scan_opts.blocksize, addrlen) */
    unsigned given_bits;           /* with geom_given: log2 of the block size */
    unsigned given_addrlen;        /* with geom_given: the address length, 0 = infer it */
    bool sb_usable;                /* the superblock's pointers and counts may be believed */
    bool sb_lost;                  /* its sector could not be read: sb is zeros */
    bool format_interrupted;       /* rootdir = freehead = 0 (SPEC-§9.16) */
    uint64_t image_bytes;          /* size of the image */
    uint64_t image_blocks;         /* whole blocks the image holds */
    uint64_t fs_blocks;            /* the filesystem's end as the superblock says it */
    uint64_t dev_blocks;           /* the end pointers are judged against */
    uint64_t nblocks;              /* cells in map */
    uint64_t past_image_refs;      /* reads and claims of blocks past the image's end */
    struct scan_block *map;        /* the ownership map, owned */

    /* Roots of the walks */
    uint64_t rootdir;              /* root directory in use, 0 = none */
    uint64_t freehead;             /* free-list head in use, 0 = empty list */

    /* The free list, as freelist.c found it */
    bool free_complete;            /* walked to its end without a break */
    bool head_rejected;            /* freehead did not look like a chain block */
    bool chain_lost;               /* a chain block in the list read as zeros or junk */
    uint64_t free_end;             /* the last chain block reached */
    uint64_t free_chains;          /* chain blocks in the list */
    uint64_t free_listed;          /* chain blocks + listed blocks, each counted once */
    struct sc_cellbits free_doubted; /* blocks listed by a slot its chain block's counter
                                      * rules out (freelist.c) */
    struct sc_cellbits run_flipped; /* blocks listed by a chain slot one bit off the run
                                     * of its neighbours (lostdata.c) */
    struct sc_cellbits listed_taken; /* listed blocks a live file's walk took over
                                      * (FREE_SLOT_IN_USE, files.c) */
    struct sc_cellbits cut_listed; /* blocks a leaked chain-like block lists: a list the
                                    * driver cut off (SPEC-9.3), marked by marks.c later
                                    * (sweep.c) */
    struct sc_cellbits ext_named;  /* blocks a slot of a level-0 orphan extender names:
                                    * a lost write's data, perhaps (sweep.c, flipped.c) */
    uint64_t chains_formatter;     /* chain blocks of type 0x80 */
    uint64_t chains_last_filled;   /* chain blocks whose last slot is filled */
    uint64_t first_formatter_chain;/* the first of those, for the finding */
    uint64_t first_last_filled;    /* the first chain block with its last slot filled */

    /* Findings and entries, owned */
    struct scan_finding *findings; /* in the order found */
    struct scan_finding *alt;      /* findings' alternatives (sc_report_alt), code 0 = none */
    size_t nfindings;              /* used */
    size_t findings_cap;           /* allocated */
    struct sc_cellbits named_bad;  /* cells a live link names as an entry or extender
                                    * they do not read as, and the data blocks after
                                    * such a file's top (finding.c) */
    bool map_lost;                 /* a live file's extender reads as none (FILE_DATA_TYPE,
                                    * EXT_TYPE): some blocks no one holds are its data */
    struct scan_entry *entries;    /* entries[id - 1] */
    struct sc_aux *aux;            /* aux[id - 1] */
    size_t nentries;               /* used */
    size_t entries_cap;            /* allocated */
    size_t entries_bytes;          /* bytes of the mapping of entries (bigmem.c) */
    size_t aux_bytes;              /* bytes of the mapping of aux */
    size_t entries_populated;      /* bytes of entries faulted in (sc_mem_populate_ahead) */
    size_t aux_populated;          /* and of aux */
    struct sc_pool paths;          /* the entries' paths (entries.c) */
    struct sc_pool lists;          /* small data lists (sc_data_alloc) */
    struct sc_dupkey *dupkeys;     /* live entries' name keys, for sc_tree_dups */
    size_t ndupkeys, dupkeys_cap;  /* used, allocated */
    bool dupkeys_off;              /* sc_tree_dups has run: no more keys */
    struct sc_excess *excess;      /* files.c: data slots past a size, claimed last */
    size_t nexcess, excess_cap;    /* used, allocated */
    struct sc_excess *oexcess;     /* files.c: an orphan's data slots past its size,
                                    * adopted after the lost trees (sc_orphan_excess) */
    size_t noexcess, oexcess_cap;  /* used, allocated */
    uint8_t *stash;                /* stash.c's bytes, NULL when none */
    size_t stash_used, stash_bytes;/* used, mapped */
    size_t stash_populated;        /* faulted in, or asked of the helper (prefault.c) */

    /* What marks.c attributed to the driver */
    uint64_t leak_last_slot;       /* MARK_LAST_SLOT_LEAK blocks */
    uint64_t leak_cut;             /* MARK_FREELIST_CUT blocks */
    uint32_t flood_file;           /* the file of MARK_EXTENDER_FLOOD, 0 = none */

    /* Orphan extender trees that still map data (lostdata.c), owned */
    struct scan_lost_tree *lost;   /* in the order of their tops */
    size_t nlost, lost_cap;        /* used, allocated */
    uint64_t lost_cells;           /* cells of their data lists, all together */

    /* Entries whose data pointer was read as 0 (sc_entry_add), by their
     * block: FILE_DATA_UNWRITTEN, reported by the counters pass */
    struct sc_unwritten_ptr *unwritten;
    size_t nunwritten, unwritten_cap; /* used, allocated */
    /* Unreached entries read with a mended link (sweep.c), by their block */
    struct sc_wild_link *wild;
    size_t nwild, wild_cap; /* used, allocated */

    /* Once-only findings */
    bool too_deep_reported;        /* TREE_TOO_DEEP */

    /* Entries the tree walk moved to the tree a rename left them in (tree.c) */
    uint32_t tree_moves;           /* moves made; their paths are redone after the walk */
    uint64_t tree_move_steps;      /* parent links followed to rule out cycles, capped */
    size_t unreadable_reported;    /* BLOCK_UNREADABLE findings so far (capped) */

    /* Reads */
    struct sc_readahead *ra;       /* blockio.c's window cache, owned; NULL until first read */
    struct sc_prefault *pf;        /* prefault.c's helper thread, NULL when none */
    struct sc_freeread *fr;        /* freeread.c's read of the free space, NULL when none */
    struct sc_subprobe sub;        /* subentries.c: what the sweep noted */
    uint64_t bytes_read;           /* block bytes read from the image (blockio.c) */
    struct sc_torn_note *torn;     /* torn blocks the walks found, for the sweep */
    size_t ntorn, torn_cap;        /* used, allocated */
    size_t torn_next;              /* the sweep's place in them once sorted */
    bool torn_sorted;              /* sorted by block: no more are added */

    /* Stop state */
    enum lanyfs_err stop;          /* NOMEM or INVAL (cancelled); OK while running */
};

/* Deepest directory nesting the walk follows (TREE_TOO_DEEP). */
#define SC_DEPTH_MAX 256
/* Longest path kept; deeper paths keep their last components behind "/...". */
#define SC_PATH_MAX 4096
/* Highest extender level a device can need (extmax >= 63, 63^11 > 2^64). */
#define SC_LEVEL_MAX 11
/* BLOCK_UNREADABLE findings made one by one; the rest are counted in the last. */
#define SC_UNREADABLE_MAX 64

/* ---- scan.c --------------------------------------------------------------- */

/* True when the scan must stop (out of memory, cancelled); checks the cancel flag. */
bool sc_stopped(struct scan_result *r);
void sc_progress(struct scan_result *r, enum scan_phase phase, uint64_t done, uint64_t total);
/* Does a live link name blk as an entry or extender it does not read as
 * (TREE_PTR_TYPE, FILE_DATA_TYPE, EXT_TYPE, reported or pending)? */
bool sc_named_bad(const struct scan_result *r, uint64_t blk);
/* sc_named_bad, and blk reads as zeros: a live structure's sector that read
 * back blank (a block whose window cannot be read: no). */
bool sc_named_blank(struct scan_result *r, uint64_t blk);
/* Record running out of memory; returns false for "if (!x) return sc_oom(r);". */
bool sc_oom(struct scan_result *r);

/* ---- lostdata.c ----------------------------------------------------------- */

/* Find the orphan extender trees that still map data, record and report
 * them (UNLINKED_FILE_DATA, LOST_DATA_TREE); the extenders of those that map
 * nothing are added to *empty (the first in *empty_first) for marks.c's
 * extender leak.  Every block of them is marked SC_BF_LINKED.  b: a block buffer. */
bool sc_lost_trees(struct scan_result *r, uint8_t *b, uint64_t *empty, uint64_t *empty_first);
/* files.c: the blocks orphans map past their sizes, adopted after the lost trees. */
void sc_orphan_excess(struct scan_result *r);
void sc_lost_free(struct scan_result *r);

/* ---- blockio.c ------------------------------------------------------------ */

/* Read block blk (the scan's block size) into buf; TRUNCATED past the image. */
enum lanyfs_err sc_read(struct scan_result *r, uint64_t blk, uint8_t *buf,
                        struct lanyfs_error *err);
/* Like sc_read, for walks whose blocks lie far apart (the free list's chain
 * blocks, each a chain's length from the next): from a window already in
 * the cache, else the block alone, so no 64 KiB window is read for it. */
enum lanyfs_err sc_read_one(struct scan_result *r, uint64_t blk, uint8_t *buf,
                            struct lanyfs_error *err);
/* The block's bytes in the window cache, its window read when missing; NULL
 * when the window cannot be read whole (sc_read then reads the block alone). */
const uint8_t *sc_window(struct scan_result *r, uint64_t blk);
/* The block's bytes when its window is in the cache, else NULL; reads nothing. */
const uint8_t *sc_cached(struct scan_result *r, uint64_t blk);
/* stash.c: keep a live file's top extender from a cached window; read it
 * (like sc_read) from there; forget them all. */
void sc_stash_top(struct scan_result *r, uint32_t id);
enum lanyfs_err sc_read_top(struct scan_result *r, uint32_t id, uint64_t blk, uint8_t *buf,
                            struct lanyfs_error *err);
void sc_stash_drop(struct scan_result *r);
/* Map the stash, or grow it; false when refused (sc_stash_top's, and
 * sc_entries_ready's, to map it before the walk). */
bool sc_stash_grow(struct scan_result *r);
/* Free the window cache of sc_read. */
void sc_read_done(struct scan_result *r);
/* blk lies in a window the cache has read whole: it can be read. */
bool sc_read_before(const struct scan_result *r, uint64_t blk);
/* Read count blocks from first into buf (count * blocksize bytes). */
enum lanyfs_err sc_read_run(struct scan_result *r, uint64_t first, uint64_t count, uint8_t *buf,
                            struct lanyfs_error *err);

/* ---- blockmap.c ----------------------------------------------------------- */

enum sc_claim {
    SC_CLAIM_OK = 0,      /* the cell was free and now holds the claim */
    SC_CLAIM_HELD = 1,    /* someone holds it: the cell is unchanged but for SHARED */
    SC_CLAIM_OUTSIDE = 2, /* no cell: blk >= nblocks */
};

bool sc_map_init(struct scan_result *r);
/* Claim blk for an owner; see enum sc_claim. */
enum sc_claim sc_claim(struct scan_result *r, uint64_t blk, enum scan_class cls, uint32_t owner,
                       uint64_t index);
/* Overwrite a cell (a claim that wins a conflict); SHARED is set when it held a claim. */
void sc_claim_over(struct scan_result *r, uint64_t blk, enum scan_class cls, uint32_t owner,
                   uint64_t index);
/*
 * Give an unowned sweep cell (unknown, leaked, orphan extender, beyond) to an
 * orphaned or deleted entry.  False when the cell is owned or structural.
 */
bool sc_adopt(struct scan_result *r, uint64_t blk, enum scan_class cls, uint32_t owner,
              uint64_t index);
/* Note a header's counter in the cell. */
void sc_map_meta(struct scan_result *r, uint64_t blk, uint16_t wrcnt);
static inline struct scan_block *sc_cell(struct scan_result *r, uint64_t blk)
{
    return blk < r->nblocks ? &r->map[blk] : NULL;
}
/* An array of *cap elements of elem bytes grown to twice as many (first
 * when empty): the new array, *cap updated; NULL (v and *cap as they
 * were) when memory runs out or the size would overflow. */
static inline void *sc_grow(void *v, size_t *cap, size_t elem, size_t first)
{
    size_t ncap = *cap ? *cap * 2 : first;
    if (ncap < *cap || elem == 0 || ncap > SIZE_MAX / elem)
        return NULL;
    void *n = realloc(v, ncap * elem);
    if (n != NULL)
        *cap = ncap;
    return n;
}
/* Is cls the class of a live structure's block: the superblock, a live
 * entry, extender or data block, a chain block of the free list? */
static inline bool sc_class_live(enum scan_class cls)
{
    return cls == SCAN_BLK_SUPER || cls == SCAN_BLK_DIR || cls == SCAN_BLK_FILE ||
           cls == SCAN_BLK_EXTENDER || cls == SCAN_BLK_DATA || cls == SCAN_BLK_CHAIN;
}
/* Is v a single set bit: two block numbers one flipped bit apart, xored? */
static inline bool sc_one_bit(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}
/* Who holds a cell, as a phrase for {text}: "/a/b", "the free list", ... */
void sc_owner_phrase(const struct scan_result *r, const struct scan_block *c, char *buf,
                     size_t len);
void sc_map_clear_scratch(struct scan_result *r);
/* Set blk's bit (a block past the map has none); false when memory ran out. */
bool sc_cellbits_set(const struct scan_result *r, struct sc_cellbits *s, uint64_t blk);
bool sc_cellbits_get(const struct sc_cellbits *s, uint64_t blk);
void sc_cellbits_free(struct sc_cellbits *s);

/* ---- entries.c ------------------------------------------------------------ */

/*
 * Add an entry found at blk with contents e; its path is dirpath + "/" +
 * name (dirpath NULL or "/" for the top).  Returns its id, 0 on no memory.
 */
uint32_t sc_entry_add(struct scan_result *r, uint64_t blk, const struct lanyfs_entry *e,
                      enum scan_entry_state state, uint32_t parent, const char *dirpath);
static inline struct scan_entry *sc_entry(struct scan_result *r, uint32_t id)
{
    return (id >= 1 && id <= r->nentries) ? &r->entries[id - 1] : NULL;
}
static inline struct sc_aux *sc_aux(struct scan_result *r, uint32_t id)
{
    return (id >= 1 && id <= r->nentries) ? &r->aux[id - 1] : NULL;
}
/* Replace an entry's path by dirpath + "/" + name. */
bool sc_entry_set_path(struct scan_result *r, uint32_t id, const char *dirpath);
/* Make an entry's path "/" (the root directory's, whatever its name). */
bool sc_entry_set_root_path(struct scan_result *r, uint32_t id);
/* dirpath + "/" + name into a new string (NULL on no memory). */
char *sc_path_join(const char *dirpath, const uint8_t *name, size_t name_len);
/* Give entry id a new zeroed data list of n blocks (small ones from a
 * pool), freeing its old one; NULL (and no list) on no memory or n = 0.
 * sc_data_free frees an entry's list, wherever it came from. */
uint64_t *sc_data_new(struct scan_result *r, uint32_t id, uint64_t n);
void sc_data_free(struct scan_result *r, uint32_t id);
/*
 * Take back the orphaned entries ids (n of them), whose blocks the sweep
 * read as entries but are files' data: their cells are unowned again, and
 * the entries after them move down, keeping their order (cells, findings
 * and parents follow), so ids stay dense.  Only before the orphans are
 * linked and walked: nothing else may hold ids of sweep entries yet.  One
 * pass over the map whatever n is.  False on no memory.
 */
bool sc_entries_remove(struct scan_result *r, const uint32_t *ids, size_t n);
/* "directory" or "file". */
const char *sc_kind_name(const struct scan_entry *x);
/* Some file carries the no-exec attribute the 2012 driver gives every file
 * it creates (SPEC-9.14): the driver wrote this medium. */
bool sc_driver_files(const struct scan_result *r);
void sc_entries_free(struct scan_result *r);
/* On a large image, have the first chunks of the paths and lists pools and
 * the stash mapped and faulted in on the helper thread before the walk. */
void sc_entries_ready(struct scan_result *r);

/* ---- finding.c ------------------------------------------------------------ */

/*
 * Record a finding: f's numbers, path (copied, may be NULL) and a text
 * formatted from fmt (NULL: none).  False when out of memory.
 */
bool sc_report(struct scan_result *r, const struct scan_finding *f, const char *path,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * Record a driver mark that only the image's other evidence can confirm:
 * sc_settle keeps f (with path and text) when the image shows the 2012
 * driver wrote it, and replaces it by alt (with alt_path and alt_text, the
 * damage it resembles) otherwise.  Strings are copied; any may be NULL.
 */
bool sc_report_alt(struct scan_result *r, const struct scan_finding *f, const char *path,
                   const char *text, const struct scan_finding *alt, const char *alt_path,
                   const char *alt_text);
/* An alternative that drops the provisional finding when the driver's hand is not shown. */
#define SC_ALT_DROP UINT32_MAX
/* Settle the provisional findings (see sc_report_alt) and drop those of code 0. */
void sc_settle(struct scan_result *r, bool driver);
/* How many findings of a code were made. */
size_t sc_count_code(const struct scan_result *r, uint32_t code);
void sc_findings_free(struct scan_result *r);

/* ---- probe.c -------------------------------------------------------------- */

/* A timestamp is acceptable: unset, or every field in range. */
bool sc_ts_ok(const struct lanyfs_ts *ts);
/* A timestamp as seconds; false when unset or invalid. */
bool sc_ts_seconds(const struct lanyfs_ts *ts, time_t *t);
/*
 * The bytes look like a directory or file block a writer made: its type, a
 * name of 1..255 bytes, reserved bytes 4..7 zero, acceptable times, links
 * below dev_blocks, and nothing but zeros past the 360 bytes an entry uses.
 * e receives the decoded entry (always).
 */
bool sc_probe_entry(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b,
                    struct lanyfs_entry *e);
/*
 * A block no walk reached read as an entry (deleted or orphaned): one
 * sc_probe_entry takes, or one that fails only where one flipped bit
 * spoils a whole entry: one link past the device (its highest set bit
 * cleared when that brings it in, else read as 0; the link as read in
 * *wild_link, else 0 there), or one bit set past the entry's end.  Not
 * more there: an earlier format's smaller blocks follow its entries
 * (earlier.c).
 */
bool sc_probe_entry_tolerant(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b,
                             struct lanyfs_entry *e, uint64_t *wild_link);
/* A link v past the device with its highest set bit cleared, when that
 * brings it below dev_blocks; else 0. */
uint64_t sc_link_unflipped(uint64_t v, uint64_t dev_blocks);
/* Does b, whose type byte says entry, fail so many of an entry's checks
 * that it holds none (data or junk a damaged link names)? */
bool sc_entry_junk(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b,
                   const struct lanyfs_entry *e);
/*
 * The bytes look like a chain block: type 0x70 or 0x80, reserved bytes
 * 4..7 zero, next and every slot below dev_blocks.  An all-zero 0x80 block
 * is an empty extender, not a chain block.
 */
bool sc_probe_chain(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b);
/* The bytes look like an extender: type 0x80, a level a device can need, slots in range. */
bool sc_probe_extender(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b);
/* An extender sc_probe_extender takes, or one whose slots are all below
 * dev_blocks but one that one flipped bit put past it (its highest set
 * bit cleared brings it in): an orphaned extender a flip spoilt. */
bool sc_probe_extender_tolerant(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b);
/* Every slot of the extender is zero. */
bool sc_extender_empty(const struct lanyfs_geom *g, const uint8_t *b);
/* The bytes look like an extender (sc_probe_extender) with a slot that is not zero. */
bool sc_extender_maps(const struct lanyfs_geom *g, uint64_t dev_blocks, const uint8_t *b);
/*
 * The chain block at blk holds the formatter's pattern: slot i lists
 * blk + 1 + i for every filled slot.  *matches receives the slots that do.
 */
bool sc_chain_formatter_like(const struct lanyfs_geom *g, uint64_t blk, const uint8_t *b,
                             uint32_t *matches);
/* Every byte from off to the end of the block is zero. */
bool sc_zero_from(const uint8_t *b, size_t off, size_t len);

/* ---- super.c -------------------------------------------------------------- */

/* Pass 0: judge block 0 and settle the geometry (inferring it when needed). */
bool sc_super_pass(struct scan_result *r);
/*
 * After the walks: an image shorter than 'blocks' whose blocks refer to none
 * past its end has a wrong 'blocks', not a lost tail (SB_BLOCKS_LARGE).
 */
void sc_super_settle(struct scan_result *r);
/*
 * A 'freehead' inside the device that names a block that is no chain
 * block (the caller read it): the head's rewrite did not land and its
 * block was handed out (SB_STALE_FREEHEAD, counters.c), or one bit
 * flipped.  It flipped when the one chain block one bit away heads a list
 * of exactly the blocks 'freeblocks' counts: a stale superblock counts
 * the blocks handed out since too (correct:930 state 15682, bit 7 of byte
 * 32 of block 0: 'freehead' went from 1159 to 1031, a data block, and
 * every block of the list read as unknown).  Returns that chain block, or
 * 0 (also where 'freehead' was already moved off the superblock's).
 */
uint64_t sc_freehead_flipped_inside(struct scan_result *r);
/*
 * Chain block prev's next, next, names a block that is no chain block, or
 * one past the device: one flipped bit when the one chain block one bit
 * away, not yet in the list, continues it so that the list from the head
 * holds exactly the blocks 'freeblocks' counts (correct:986 state 13840,
 * bit 6 of byte 8 of chain block 1958: its next went from 1517 to 1453, a
 * data block read as chain slots, and the deleted /a0118's blocks the
 * list's rest held went to a lost tree).  Returns that chain block, or 0.
 */
uint64_t sc_next_flipped(struct scan_result *r, uint64_t prev, uint64_t next);

/* ---- infer.c -------------------------------------------------------------- */

/* Infer block size, address length, root and free-list head; fills r->g and friends. */
bool sc_infer_geometry(struct scan_result *r, const char *why);
/* Search the device for the root directory; 0 when none is found. */
uint64_t sc_find_root(struct scan_result *r, uint64_t exclude);
/*
 * Push the blocks entry e links to onto a growing stack of *n of *cap:
 * its subtree when it is a directory, its siblings unless it is the top
 * of the walk (a root's siblings are not its own).  False on no memory.
 */
bool sc_push_links(uint64_t **stack, size_t *n, size_t *cap, const struct lanyfs_entry *e,
                   bool top);
/* Push left, right and subtree, those not 0, as sc_push_links does. */
bool sc_push_link_set(uint64_t **stack, size_t *n, size_t *cap, uint64_t left, uint64_t right,
                      uint64_t subtree);
/* qsort's comparison of uint64_t values. */
int sc_cmp_u64(const void *a, const void *b);

/* ---- subentries.c --------------------------------------------------------- */

void sc_subprobe_init(struct sc_subprobe *p, const struct scan_result *r);
/* Note the sectors of blk (bytes b) that probe as entries; skip_first when
 * b is an entry of the scan's block size. */
void sc_subprobe_block(struct sc_subprobe *p, uint64_t blk, const uint8_t *b, bool skip_first);
void sc_subprobe_free(struct sc_subprobe *p);
/*
 * EARLIER_FORMAT_ENTRIES when the sectors noted in r->sub and in other
 * (NULL: none) tell an earlier format of a smaller block size.  False on
 * no memory (reported) or a stop.
 */
bool sc_earlier_smaller(struct scan_result *r, const struct sc_subprobe *other);

/* ---- earlier.c ------------------------------------------------------------ */

/*
 * EARLIER_FORMAT for each earlier format's root directory among the
 * entries found; made, when known, is when this filesystem was made.
 * False on no memory (reported) or a stop.
 */
bool sc_earlier_formats(struct scan_result *r, const time_t *made);
/*
 * The address length of a tree whose root directory is block root at
 * block size 1 << bits, read from its files' data maps: *addrlen, 0 when
 * they do not tell, and *files, the files that decided; with fits (9
 * cells), fits[a], how many of those fit length a.  False on no memory or
 * a stop.
 */
bool sc_addrlen_from_maps(struct scan_result *r, unsigned bits, uint64_t root, unsigned *addrlen,
                          uint64_t *files, uint64_t *fits);

/* ---- freelist.c ----------------------------------------------------------- */

bool sc_free_pass(struct scan_result *r);
/* The chain block before chain in the list, 0 when it is the head or absent. */
uint64_t sc_free_prev(struct scan_result *r, uint64_t chain);
/* Is blk listed by a slot its chain block's counter rules out? */
bool sc_free_doubted(const struct scan_result *r, uint64_t blk);
/* blk is listed free and its number has a single bit set: what one bit
 * flipped in an empty chain slot lists. */
bool sc_free_one_bit(const struct scan_result *r, uint64_t blk);

/* ---- tree.c --------------------------------------------------------------- */

bool sc_tree_pass(struct scan_result *r);
/* The DUP_NAME check over every live directory (after the walk). */
bool sc_tree_dups(struct scan_result *r);

/* bigmem.c: advice for large arrays (2 MiB pages; fault in ahead of use) */
void sc_mem_huge(void *base, size_t bytes);
/* Grow an array (NULL: a new one) to new_bytes, zero beyond old_bytes; NULL
 * on failure, the old array untouched.  Freed by sc_mem_release only. */
void *sc_mem_grow(void *p, size_t old_bytes, size_t new_bytes);
void sc_mem_release(void *p, size_t bytes);
/* sc_mem_grow reserves address space only (pages are backed as they are
 * touched); false where it falls back to realloc, which fills them. */
bool sc_mem_lazy(void);
/* Before using bytes up to need of an array of cap bytes, fault in the next
 * step past *populated (bytes faulted in so far), which it advances. */
void sc_mem_populate_ahead(void *base, size_t need, size_t *populated, size_t cap);
void sc_mem_populate(void *base, size_t bytes);
/* bytes (at most a quarter of a chunk) aligned to align (a power of two),
 * zeroed, from the pool; NULL on no memory.  Freed with the pool only. */
void *sc_pool_alloc(struct sc_pool *pool, size_t bytes, size_t align);
/* The bytes of a pool's chunk. */
#define SC_POOL_CHUNK ((size_t)2 << 20)
/* When the pool has no chunk yet, or its chunk is half used, and no spare:
 * map the chunk it takes next (zero, not faulted in) and return it, for
 * the caller to have faulted in; else NULL. */
void *sc_pool_spare(struct sc_pool *pool);
void sc_pool_free(struct sc_pool *pool);

/* ---- prefault.c ----------------------------------------------------------- */

/* The arrays the helper thread faults in. */
enum sc_pf_track {
    SC_PF_MAP,      /* the block map, whole */
    SC_PF_WINDOWS,  /* blockio.c's window cache, whole */
    SC_PF_ENTRIES,  /* the entries, ahead of use */
    SC_PF_AUX,      /* their records, ahead of use */
    SC_PF_STASH,    /* stash.c's bytes, ahead of use */
    SC_PF_PATHS,    /* the paths pool's next chunk (sc_pool_spare), whole */
    SC_PF_LISTS,    /* the lists pool's next chunk, whole */
    SC_PF_TRACKS
};
/* Start the helper thread (r->pf); without it the calls below populate in
 * the caller's thread.  sc_prefault_stop ends and joins it. */
void sc_prefault_start(struct scan_result *r);
void sc_prefault_stop(struct scan_result *r);
/* Fault in bytes of base, all of them. */
void sc_prefault_all(struct scan_result *r, enum sc_pf_track which, void *base, size_t bytes);
/* An array of cap bytes at base is in use up to need: have it faulted in
 * ahead of that.  *asked keeps how far (the array's populated mark). */
void sc_prefault_need(struct scan_result *r, enum sc_pf_track which, void *base, size_t need,
                      size_t *asked, size_t cap);

/* Hand the helper a job: step is called (on the helper thread) until it
 * returns false.  False when there is no helper or it has a job. */
bool sc_helper_job(struct scan_result *r, bool (*step)(void *ctx), void *ctx);
/* Until the job is done, or abandoned because the helper stopped. */
void sc_helper_wait(struct scan_result *r);

/* ---- freeread.c ----------------------------------------------------------- */

/* After the free-list walk: have the helper read the free blocks (r->fr). */
void sc_freeread_start(struct scan_result *r);
/* Before the sweep: wait for it; an abandoned read is dropped. */
void sc_freeread_wait(struct scan_result *r);
/* The helper read blk whole; *entry: its bytes look like an entry. */
bool sc_freeread_known(const struct scan_result *r, uint64_t blk, bool *entry);
/* The sectors the free space read noted (subentries.c), NULL when it did not finish. */
const struct sc_subprobe *sc_freeread_subprobe(const struct scan_result *r);
void sc_freeread_drop(struct scan_result *r);

/* ---- files.c -------------------------------------------------------------- */

enum sc_file_mode {
    SC_FILE_LIVE,     /* claim extenders and data, report every problem */
    SC_FILE_ORPHAN,   /* adopt unowned blocks for an orphan, quietly */
    SC_FILE_DELETED,  /* adopt a deleted file's leftover extenders, quietly */
    SC_FILE_RECOVER,  /* read a deleted file's freed map into its data list, claim nothing */
};

/* Walk the extender tree of entry id. */
bool sc_file_walk(struct scan_result *r, uint32_t id, enum sc_file_mode mode);
/* The same; with SC_FILE_RECOVER, also set a bit in ext_marks (one per
 * block of the device) for each extender the walk reads. */
bool sc_file_walk_marks(struct scan_result *r, uint32_t id, enum sc_file_mode mode,
                        uint64_t *ext_marks);
bool sc_files_pass(struct scan_result *r);
/* The size findings of every live file (after the marks know the device). */
bool sc_files_judge(struct scan_result *r);
/* A data block a live file maps only past its size: the driver's leftover
 * slot (SPEC-9.13), whose block a truncate freed for the next write, or a
 * damaged slot.  A lost write's tree or an orphan that names it has the
 * better claim. */
bool sc_past_size_data(struct scan_result *r, const struct scan_block *c);
/* The level-0 extender and slot through which live file x maps file block
 * fb to blk (top_level: its top's level); false when the path down from
 * the top does not read so.  b: a block buffer. */
bool sc_file_slot_of(struct scan_result *r, const struct scan_entry *x, unsigned top_level,
                     uint64_t fb, uint64_t blk, uint8_t *b, uint64_t *ext, uint32_t *slot);

/* ---- flipped.c ------------------------------------------------------------ */

/* blk, which an orphan's tree or a lost tree names (claimant: what names
 * it, for the finding), is a live (or orphaned: leaked, with an owner)
 * file's data block: when its slot is a
 * flipped bit off the file's run and the block of the run is left over,
 * the file maps that one instead (EXT_SLOT_FLIPPED), and when it is one
 * bit next to holes, a hole (EXT_HOLE_FLIPPED: only when claim_sure,
 * the claimant takes blk as an extender or in a run of its own slots);
 * with claim_sure and lone_skip (not NULL: which blocks the claimant names
 * itself, that no slot of another may take), a slot in no run maps the
 * only left-over block one bit away that lone_skip does not name, when
 * there is just one; blk is unowned again.  True when it moved. */
/* Does the claimant name blk itself (ctx: the claimant's own record)? */
typedef bool (*sc_names_fn)(const void *ctx, uint64_t blk);
bool sc_flip_release(struct scan_result *r, uint64_t blk, const char *claimant, bool claim_sure,
                     sc_names_fn lone_skip, const void *ctx);
/* Does a live or orphaned file map blk as data at a slot one flipped bit
 * off its run, the block of the run left over (what sc_flip_release moves
 * it to)? */
bool sc_flip_run_breaks(struct scan_result *r, uint64_t blk);
/* Another live file's walk takes blk, which a live file maps as data, as
 * an extender (claimant names it): the file's slot becomes a hole
 * (EXT_SLOT_METADATA) and blk is unowned again.  True when it did. */
bool sc_data_slot_gives(struct scan_result *r, uint64_t blk, const char *claimant);
/* Does slot k of the level-0 extender eb, naming s, continue a run with a
 * neighbour slot? */
bool sc_slot_in_run(const struct lanyfs_geom *g, const uint8_t *eb, uint32_t k, uint64_t s);
/* Slot k of the level-0 extender eb names s and breaks the run its
 * neighbour slots make: the block that continues the run (the same from
 * both sides when both have one), one bit away from s, that fits accepts
 * and that reads as data; 0 when there is none.  b is a block buffer. */
uint64_t sc_flip_slot_alt(struct scan_result *r, const uint8_t *eb, uint32_t k, uint64_t s,
                          sc_names_fn fits, const void *ctx, uint8_t *b);
/* The same for an orphaned file's slot naming s, an extender nothing
 * holds (a lost write's top, lostdata.c): the run's block left to nobody,
 * which the file maps instead. */
uint64_t sc_flip_orphan_slot(struct scan_result *r, const uint8_t *eb, uint32_t k, uint64_t s,
                             uint8_t *b);
/* The same for a live file's (id) slot naming s, a block a live file
 * walked before it maps in a run of its own, or that the file maps itself
 * in a run at another slot of eb (whose first file block is base,
 * UINT64_MAX when not known): the run's block left to nobody, which the
 * file maps instead (sc_flip_release is the other walk order). */
uint64_t sc_flip_live_slot(struct scan_result *r, const uint8_t *eb, uint64_t base, uint32_t k,
                           uint64_t s, uint32_t id, uint8_t *b);
/* Slot k of the live file id's level-0 extender eb (its first file block
 * base) names s in a run, where an earlier slot of eb, walked already,
 * names s too and breaks its own run: the block that continues that
 * earlier slot's run, left to nobody (0: none); the caller moves it. */
uint64_t sc_flip_own_earlier(struct scan_result *r, const uint8_t *eb, uint64_t base, uint32_t k,
                             uint64_t s, uint32_t id, uint8_t *b);
/* Live files' slots one flipped bit moved from a hole onto a block that
 * reads as an extender mapping data: holes again, the block left for the
 * sweep (after the live walks; false only when the scan must stop). */
bool sc_flip_hole_tops(struct scan_result *r);
/* Does d[k], of a data list of n blocks, break a neighbour's run where the
 * block one bit away would continue it?  Arithmetic only. */
bool sc_breaks_run(const uint64_t *d, uint64_t n, uint64_t k);
/* Live files' data slots one flipped bit moved onto a listed free block
 * (after the lost trees; false only when the scan must stop). */
bool sc_flip_free_claims(struct scan_result *r);
/*
 * The live file x's data pointer with one flipped bit, onto another file's
 * lost write (FILE_DATA_FLIPPED) or onto a block that is no extender
 * (FILE_DATA_TYPE_FLIPPED), both reported here: the extender it named
 * before the flip, to walk instead; 0 when the disk shows no such flip.
 * The entry keeps the pointer it reads; fsck sets it.
 */
uint64_t sc_flip_data_pointer(struct scan_result *r, const struct scan_entry *x);
/* The top the walk took for the live file x: its data pointer, or the
 * extender sc_flip_data_pointer found in its place. */
uint64_t sc_walked_top(const struct scan_result *r, const struct scan_entry *x);

/* ---- sweep.c -------------------------------------------------------------- */

bool sc_sweep_pass(struct scan_result *r);
/* Note the blocks the slots of b, an unowned level-0 extender, name
 * (ext_named: a lost tree may map them).  False when out of memory. */
bool sc_ext_name_slots(struct scan_result *r, const uint8_t *b);

/* ---- orphandata.c --------------------------------------------------------- */

/* Orphaned entries that are an orphaned file's data (before link_orphans). */
bool sc_orphan_data_entries(struct scan_result *r);
/* Orphaned files whose map names an orphaned or live entry made after the
 * file last changed are deleted ones (before the sweep judges its deleted
 * entries). */
bool sc_orphans_deleted(struct scan_result *r);

/* ---- counters.c ----------------------------------------------------------- */

/* A chain block's counter against its slots (called by the free-list walk). */
bool sc_counter_chain(struct scan_result *r, uint64_t blk, const uint8_t *b);
/* Does the block's counter allow that the formatter wrote it full (SPEC-10)? */
bool sc_chain_counter_formatter(const struct scan_result *r, uint64_t blk, const uint8_t *b);
/*
 * The one slot of a chain block that its counter rules out while the rest
 * fit it (a bit flipped in an empty slot), or UINT32_MAX when there is none.
 */
uint32_t sc_chain_doubted_slot(const struct scan_result *r, uint64_t blk, const uint8_t *b);
/*
 * A block whose sectors tell different stories, judged as its class.  The
 * walks call sc_counter_torn_early with the bytes they read when they claim
 * a block: the cell is marked checked (SC_BF_CHECKED) and a torn block
 * noted, so that the sweep need not read it again.  The sweep calls
 * sc_counter_torn in block order, which reports the noted ones then (b may
 * be NULL for a checked cell) and judges the others from b; findings come
 * in the same order either way.  sc_torn_free forgets the notes.
 */
void sc_counter_torn_early(struct scan_result *r, uint64_t blk, const uint8_t *b);
bool sc_counter_torn(struct scan_result *r, uint64_t blk, const uint8_t *b);
/* The cell needs its bytes for sc_counter_torn. */
bool sc_counter_torn_needs(const struct scan_result *r, const struct scan_block *c);
void sc_torn_free(struct scan_result *r);
/* Entries never written back; a superblock freehead handed out. */
bool sc_counters_pass(struct scan_result *r);

/* ---- marks.c -------------------------------------------------------------- */

/* An entry block reached a second time (TREE_REACHED_TWICE or a failed rename). */
bool sc_mark_reached_twice(struct scan_result *r, uint32_t first, uint32_t dir, const char *path,
                           uint64_t from);
/* A live leaf an orphaned entry links: the driver's failed rename
 * (MARK_RENAME_TWO_TREES), or on other media a stale sibling link that
 * moving the orphan rewrites (no finding). */
bool sc_mark_orphan_leaf(struct scan_result *r, uint32_t leaf);
/*
 * A tree finding (TREE_CYCLE, TREE_PTR_TYPE, TREE_ORDER, TREE_REACHED_TWICE,
 * TREE_DUP_NAME) that on driver media is the leftover of a tree the driver
 * went on using after freeing its entries: MARK_STALE_TREE, provisionally.
 */
bool sc_mark_tree_anomaly(struct scan_result *r, const struct scan_finding *f, const char *path,
                          const char *text);
/*
 * A tree link from entry src (by link) lands on a block of the free list
 * or one it lost: a chain block (chain, type its type byte) or a listed
 * block.
 */
bool sc_mark_stale_link(struct scan_result *r, uint32_t src, enum sc_link link, uint64_t blk,
                        bool chain, uint8_t type);
/* The free list's marks and the superblock's counts against it. */
bool sc_marks_free(struct scan_result *r);
/* Leaked blocks and orphan extenders the driver explains; BLOCKS_LEAKED for the rest. */
bool sc_marks_leaks(struct scan_result *r);
/* Entries' time drift (SPEC-§9.15). */
bool sc_marks_times(struct scan_result *r);
/* ORPHAN_ENTRY, or MARK_DRIVER_ORPHAN on media the driver wrote. */
bool sc_marks_orphans(struct scan_result *r);
/* Decide whether the image shows the driver's hand and settle the provisional findings. */
void sc_marks_settle(struct scan_result *r);
/* What the marks of one file explain, so files.c does not report it as damage. */
struct sc_file_marks {
    bool failed_delete;     /* MARK_FAILED_DELETE: a tree that maps nothing under a size */
    bool extra_mapped;      /* MARK_EXTRA_MAPPED: blocks mapped past the size */
    bool first_overwritten; /* MARK_FIRST_BLOCK_OVERWRITTEN: the holes past extmax */
    bool holes_to_block0;   /* MARK_HOLE_TO_BLOCK0: its data went to block 0 (SPEC-§9.8) */
};
/* Report the driver marks one live file carries (after sc_marks_leaks). */
bool sc_mark_file(struct scan_result *r, uint32_t id, struct sc_file_marks *m);
