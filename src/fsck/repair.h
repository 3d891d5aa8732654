/*
 * repair.h -- the repair plan of fsck-lanyfs, shared by driver.c, plan.c
 * and the repair_*.c files.
 *
 * A repair is planned whole before its first write.  From the scan (its
 * entries and findings) and the answers, plan.c builds the filesystem as it
 * must end: the target entries (live ones, orphans relinked, entries
 * undeleted, a new /lost+found), each directory's children, and an
 * ownership map of every block.  The repair_*.c files add to the plan:
 *
 *   repair_file.c      every target file's extender tree: invalid pointers
 *                      and slots cleared, blocks past the size cut, the
 *                      size fitted to what the tree maps, shared blocks
 *                      marked for a copy; the new trees of undeleted files;
 *   repair_clone.c     the pool of blocks the repair may take, and the
 *                      copies of shared blocks (e2fsck's clone);
 *   repair_lostfound.c /lost+found, found or made, and unique names for
 *                      what is moved there;
 *   repair_tree.c      each directory's tree: kept, added to, or rebuilt
 *                      balanced, and written so that no entry is ever out
 *                      of reach;
 *   repair_freelist.c  the new free list, written tail first;
 *   repair_super.c     the superblock: its geometry, its fields, the switch
 *                      to the new free list and the 'checked' time.
 *
 * The writes then run in phases (driver.c gives the reasons):
 *   1. fresh blocks (copies, new extenders), unreachable until referenced;
 *   2. file fixes in place (extender slots, then entry fields);
 *   3. directory trees, deepest directory first;
 *   4. the free list's chain blocks, from the tail to the head;
 *   5. the superblock, switching to the new free list.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsck.h"

#define FSCK_NONE UINT32_MAX

/* What kind of repair a finding asks for; answers are gathered per kind. */
enum fsck_cat {
    FSCK_CAT_NONE = 0,       /* nothing to repair (a fact, or left alone) */
    FSCK_CAT_UNSUPPORTED,    /* a repair this version does not make */
    FSCK_CAT_SUPER,          /* superblock fields: type, times, badblocks */
    FSCK_CAT_GROW,           /* 'blocks' smaller than the image: grow */
    FSCK_CAT_CAP,            /* 'blocks' beyond the address limit: cap */
    FSCK_CAT_FREELIST,       /* rebuild the free list */
    FSCK_CAT_TREE,           /* directory trees: links, cycles, order, names */
    FSCK_CAT_TIME,           /* an entry's invalid timestamps (per entry) */
    FSCK_CAT_FILE,           /* a file's extender tree and size (per entry) */
    FSCK_CAT_CLONE,          /* copies of shared blocks */
    FSCK_CAT_ORPHAN,         /* relink an orphan to /lost+found (per entry) */
    FSCK_CAT_UNDELETE,       /* relink a deleted entry (per entry, --undelete) */
    FSCK_CAT_RESUPER,        /* a new superblock from the inferred geometry */
    FSCK_CAT_ROOT,           /* 'rootdir' set to the root directory the scan found */
    FSCK_CAT_COUNT
};

/* The repair kind of a code, and whether its answers are per entry. */
enum fsck_cat fsck_code_cat(uint32_t code, bool *per_entry);
const char *fsck_cat_name(enum fsck_cat c);

/* One answered question. */
struct fsck_decision {
    uint32_t code;            /* SCAN_PR_* */
    enum fsck_cat cat;        /* its kind */
    uint32_t entry;           /* scan entry id for per-entry kinds, 0 otherwise */
    enum fsck_answer answer;  /* yes or no */
};

/* Who holds a block in the repaired filesystem. */
enum fsck_own {
    OWN_FREE = 0,    /* goes to the free list */
    OWN_SUPER = 1,   /* block 0 */
    OWN_ENTRY = 2,   /* a target entry's own block */
    OWN_EXT = 3,     /* an extender of a target file */
    OWN_DATA = 4,    /* a data block of a target file */
    OWN_KEEP = 5,    /* kept as it is: unreadable, or what a declined repair leaves */
    OWN_NEW = 6,     /* taken by the repair (a copy, a new extender, a chain block) */
};

/* An entry of the repaired filesystem. */
struct tentry {
    uint64_t block;           /* its own block */
    uint32_t sid;             /* the scan's entry id, 0 for one the repair makes */
    uint32_t parent;          /* index of its directory in ctx->te, FSCK_NONE for the root */
    bool is_new;              /* made by the repair (/lost+found) */
    bool moved;               /* relinked from orphaned or deleted */
    bool to_lostfound;        /* relinked under /lost+found */
    bool lost_tree;           /* a new file for an extender tree no file links (LOST_DATA_TREE) */
    bool adopted;             /* its tree is a lost tree it takes (LOST_DATA_TREE,
                               * UNLINKED_FILE_DATA), or it is a relinked orphan:
                               * blocks others hold are not its */
    bool orphan;              /* a relinked orphan: a block another relinked
                               * orphan holds is copied, not cleared */
    struct lanyfs_entry e;    /* contents as they must end (links aside) */
    bool fields_dirty;        /* data, size or times change (written in phase 2) */
    bool name_dirty;          /* the name changes (written with the links, phase 3) */
    bool must_write;          /* written in phase 3 even when its links stay (relinked) */
    bool file_allowed;        /* FILE repairs allowed for it */
    uint32_t data_new;        /* file: index + 1 of a new top extender in ctx->nb, 0 none */
    unsigned marks;           /* FSCK_M_*: what the findings say about it */
    uint64_t cut_to;          /* FSCK_M_FIRST_OVER: the blocks it keeps */
    uint32_t depth;           /* directory nesting, the root 0 */
    /* directories */
    uint32_t *kids;           /* indexes of its children */
    size_t nkids;             /* used */
    size_t capkids;           /* allocated */
    uint64_t fin_root;        /* the root of its tree as it must end */
    bool tree_rebuild;        /* its tree is rebuilt (else kept, perhaps added to) */
    /* as a node in its parent's tree */
    uint64_t fin_left;        /* final left link */
    uint64_t fin_right;       /* final right link */
};

/* What findings say about a target entry (tentry.marks). */
#define FSCK_M_UNMAPPED 0x01      /* FILE_SIZE_UNMAPPED: fit the size to the tree */
#define FSCK_M_FIRST_OVER 0x02    /* MARK_FIRST_BLOCK_OVERWRITTEN: cut to cut_to blocks */
#define FSCK_M_NEVER_WRITTEN 0x04 /* ENTRY_NEVER_WRITTEN: write it once */
#define FSCK_M_TIME 0x08          /* TREE_TIME_INVALID: fix its times */
#define FSCK_M_TORN 0x10          /* TORN_SECTORS on its block: clear the unused tail */
#define FSCK_M_FOREIGN 0x100      /* directory: its old tree runs through another's children */
#define FSCK_M_THROUGH 0x200      /* directory: some of its children hang below another's child */

/* A slot of an existing extender that changes (phase 2). */
struct xedit {
    uint64_t block;           /* the extender */
    uint32_t slot;            /* slot index */
    uint64_t value;           /* new value (0 = cleared), or a new block's handle */
    bool to_new;              /* value is an index into ctx->nb, resolved after allocation */
};

/* A slot the scan found one flipped bit off its file's run (EXT_SLOT_FLIPPED). */
struct slotfix {
    uint64_t ext;             /* the level-0 extender */
    uint32_t slot;            /* the slot */
    uint64_t from;            /* what it holds */
    uint64_t to;              /* the block of the run, which the file maps instead */
};

/* A block the repair writes fresh (phase 1): a copy or a new extender. */
struct newblk {
    uint64_t dst;             /* where it goes (allocated from the pool) */
    uint64_t copy_from;       /* data copy: the block to copy, 0 otherwise */
    uint8_t *data;            /* a new extender's contents (owned), NULL for a copy */
    uint32_t *slot_new;       /* per slot: index+1 of a new block it must point to, 0 none */
    uint32_t depth;           /* written deeper first */
};

/* A block write of the plan, for -v and the summary. */
struct fsck_stats {
    uint64_t writes;          /* block writes made */
    uint64_t cloned;          /* blocks copied */
    uint64_t uncopied;        /* shared blocks left shared: no block for their copy */
    uint64_t moved_lf;        /* entries moved to /lost+found */
    uint64_t undeleted;       /* entries undeleted */
    uint64_t dirs_rebuilt;    /* directory trees rebuilt */
    uint64_t links_added;     /* entries linked into existing trees */
    uint64_t slots_cleared;   /* extender slots and data pointers cleared */
    uint64_t sizes_fixed;     /* sizes changed */
    uint64_t chain_blocks;    /* chain blocks in the new free list */
    uint64_t free_before;     /* free blocks (listed) before */
    uint64_t free_after;      /* free blocks listed by the new free list */
    bool freelist_written;    /* the new free list was written */
    bool grown;               /* 'blocks' was changed */
};

/* A block the scan gave to the lost tree at top (data or extender). */
struct fsck_lost_block {
    uint64_t blk;
    uint64_t top;
    size_t tree; /* its index among scan_lost_trees() */
};

struct fsck_ctx {
    const struct fsck_opts *o;
    FILE *out;                       /* the report (NULL in JSON mode) */
    struct lanyfs_fs *fs;            /* the filesystem (borrowed) */
    struct scan_result *scan;        /* the scan the plan is made from (borrowed) */
    struct lanyfs_geom g;            /* geometry of the plan */
    uint64_t nblocks;                /* the filesystem's blocks */
    struct lanyfs_ts now;            /* the check time */
    bool verbose;                    /* -v: list what is planned */

    /* answers */
    struct fsck_decision *dec;       /* every question answered, in order */
    size_t ndec;                     /* used */
    size_t capdec;                   /* allocated */

    /* the target filesystem */
    uint8_t *kind;                   /* per block: enum fsck_own */
    uint32_t *owner;                 /* per block: index into te of the holder, FSCK_NONE */
    struct tentry *te;               /* target entries */
    size_t nte;                      /* used */
    size_t capte;                    /* allocated */
    uint32_t root;                   /* index of the root directory */
    uint32_t lostfound;              /* index of /lost+found, FSCK_NONE when none is needed */
    uint32_t *by_sid;                /* scan id -> te index + 1 (0 = not a target entry) */
    size_t nsid;                     /* entries in by_sid */

    /* what phases 1 and 2 write */
    struct xedit *xe;                /* extender slot edits */
    size_t nxe;                      /* used */
    size_t capxe;                    /* allocated */
    struct slotfix *fix;             /* flipped slots the file repairs set back */
    size_t nfix;                     /* used */
    size_t capfix;                   /* allocated */
    struct newblk *nb;               /* fresh blocks */
    size_t nnb;                      /* used */
    size_t capnb;                    /* allocated */

    /* the pool of blocks the repair may take */
    uint64_t *pool;                  /* free in the plan, in order of preference */
    size_t npool;                    /* entries */
    size_t pool_next;                /* next one to hand out */
    bool pool_short;                 /* the pool ran out */

    /* what the answers allow */
    bool allow_freelist;             /* the free list is rebuilt */
    bool allow_clone;                /* shared blocks are copied */
    bool allow_tree;                 /* trees are repaired */
    bool allow_super;
    bool lost_freed;                 /* a lost tree had no block for its new file: free list rebuilt */
    uint64_t lost_missing;           /* lost trees with no block for their new file */
    uint8_t *lost_named;             /* per block: a lost tree holds it or a slot of one names it */
    struct fsck_lost_block *lost_data; /* every lost tree's blocks, by block (repair_file.c) */
    size_t nlost_data;
    bool lost_data_built;

    struct fsck_stats st;            /* counts for the summary */
    struct lanyfs_error err;         /* the first hard error */
};

/* ---- plan.c -------------------------------------------------------------- */

/* Record an answer. */
bool fsck_decide(struct fsck_ctx *c, uint32_t code, uint32_t entry, enum fsck_answer a);
/*
 * May repairs of kind cat be made (for entry, a scan id, or 0)?  Yes when
 * the findings of that kind (for that entry, for per-entry kinds) were all
 * answered yes; when none was asked, only with -y.
 */
bool fsck_allowed(const struct fsck_ctx *c, enum fsck_cat cat, uint32_t entry);
/* Was a question of kind cat (for entry) answered yes? */
bool fsck_approved_any(const struct fsck_ctx *c, enum fsck_cat cat);

/* Build the plan from c->scan.  LANYFS_E_NOMEM or an I/O error are hard errors. */
enum lanyfs_err fsck_plan(struct fsck_ctx *c);
/* Free everything the plan holds (not the decisions). */
void fsck_plan_free(struct fsck_ctx *c);
/* Does the plan change anything? */
bool fsck_plan_changes(const struct fsck_ctx *c);

/* Claim blk for te index who as kind k; false when it is held already. */
bool fsck_claim(struct fsck_ctx *c, uint64_t blk, enum fsck_own k, uint32_t who);
/* A new target entry (zeroed, parent FSCK_NONE); NULL on no memory. */
struct tentry *fsck_te_add(struct fsck_ctx *c);
/* A target entry the repair makes in blk (held as OWN_ENTRY), named and timed now. */
struct tentry *fsck_te_new(struct fsck_ctx *c, uint64_t blk, uint8_t type, const char *name,
                           size_t len);
bool fsck_te_add_kid(struct fsck_ctx *c, uint32_t dir, uint32_t kid);
/* The target entry of a scan id, or NULL. */
struct tentry *fsck_te_of_sid(struct fsck_ctx *c, uint32_t sid);

/* Read a block for the plan (the plan's geometry); errors land in c->err. */
enum lanyfs_err fsck_read(struct fsck_ctx *c, uint64_t blk, uint8_t *buf);
/* Write a block, counting it; errors land in c->err. */
enum lanyfs_err fsck_write(struct fsck_ctx *c, uint64_t blk, const uint8_t *buf);
/* Print a line of the plan with -v. */
void fsck_note(struct fsck_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- repair_file.c ---------------------------------------------------------- */

/* The deepest extender level the repair's walks follow. */
#define FSCK_LEVEL_MAX 11

/* The first file block slot i of a level-`level` extender whose first file
 * block is base maps, saturated at UINT64_MAX. */
uint64_t fsck_slot_base(const struct lanyfs_geom *g, uint64_t base, unsigned level, uint32_t i);

/* Claim every block target file i maps (first pass), noting what is shared. */
enum lanyfs_err fsck_file_claim(struct fsck_ctx *c, uint32_t i);
/* Plan the fixes and copies of target file i (second pass, pool ready). */
enum lanyfs_err fsck_file_build(struct fsck_ctx *c, uint32_t i);
/* Claim the data an undeleted file i keeps (its scan data list); false when not intact. */
bool fsck_undelete_claim(struct fsck_ctx *c, uint32_t i);
/* Give undeleted file i a new extender tree over its data (pool ready). */
enum lanyfs_err fsck_undelete_build(struct fsck_ctx *c, uint32_t i);
/* Fixes of target entry i that need no walk (times, never written, torn tail). */
void fsck_entry_marks(struct fsck_ctx *c, uint32_t i);
/* Phase 2: extender slot edits, then entry fields (data, size, times). */
enum lanyfs_err fsck_file_write(struct fsck_ctx *c);

/* ---- repair_clone.c --------------------------------------------------------- */

/* Make the pool from the blocks the plan leaves free, best first. */
/* repair_unlist.c: take up to want free blocks off the free list, in one
 * write of a chain block, for the files of lost trees; *taken says how many. */
enum lanyfs_err fsck_unlist(struct fsck_ctx *c, uint64_t want, uint64_t *taken);
enum lanyfs_err fsck_pool_build(struct fsck_ctx *c);
/* Take a block from the pool (0 when it is empty). */
uint64_t fsck_pool_take(struct fsck_ctx *c);
/* A fresh block: a copy of src (data) or new contents (data != NULL, taken over). */
uint32_t fsck_newblk_add(struct fsck_ctx *c, uint64_t copy_from, uint8_t *data, uint32_t depth);
/* Phase 1: write every fresh block, deepest first. */
enum lanyfs_err fsck_newblk_write(struct fsck_ctx *c);

/* ---- repair_lostfound.c ----------------------------------------------------- */

/* Find or plan /lost+found (needs the pool for a new one). */
enum lanyfs_err fsck_lostfound_prepare(struct fsck_ctx *c);
/* Give every child of each target directory a unique, valid name. */
enum lanyfs_err fsck_names_fix(struct fsck_ctx *c);

/* ---- repair_tree.c ---------------------------------------------------------- */

/* Decide each directory's final tree (kept, added to, or rebuilt). */
enum lanyfs_err fsck_tree_plan(struct fsck_ctx *c);
/* Phase 3: write the trees, deepest directory first, never losing an entry. */
enum lanyfs_err fsck_tree_write(struct fsck_ctx *c);

/* ---- repair_freelist.c ------------------------------------------------------ */

struct fsck_freelist {
    uint64_t head;            /* first chain block, 0 when no block is free */
    uint64_t tail;            /* last chain block */
    uint64_t count;           /* chain blocks + listed blocks */
};

/* Phase 4: write the new free list (tail first); *fl receives its ends. */
enum lanyfs_err fsck_freelist_write(struct fsck_ctx *c, struct fsck_freelist *fl);

/* ---- repair_super.c --------------------------------------------------------- */

/* Phase 5: the superblock: new free list (fl may be NULL) and fields the answers allow. */
enum lanyfs_err fsck_super_write(struct fsck_ctx *c, const struct fsck_freelist *fl);
/* Set 'blocks' to nblocks (grow or cap); one write. */
enum lanyfs_err fsck_super_set_blocks(struct lanyfs_fs *fs, uint64_t nblocks,
                                      struct lanyfs_error *err);
/*
 * Replace a superblock that cannot be used by one with the geometry, root
 * and free list the scan inferred (res); one write of block 0, after the
 * handle is switched to that geometry.  LANYFS_E_NOTFOUND when the scan
 * found no root directory.
 */
enum lanyfs_err fsck_super_rebuild(struct lanyfs_fs *fs, const struct scan_result *res,
                                   const struct lanyfs_ts *now, struct lanyfs_error *err);
/* Set 'rootdir' to root (a directory the scan found by searching); one write. */
enum lanyfs_err fsck_super_set_root(struct lanyfs_fs *fs, uint64_t root, struct lanyfs_error *err);
/* The scan's entry at blk is a directory named LANYFSROOT (repair_root.c). */
bool fsck_root_is_formatters(const struct scan_result *res, uint64_t blk);
/*
 * Write a new, empty root directory (created at now) and point 'rootdir'
 * at it: the old root's block when nothing owns it, else a free block no
 * deleted entry's map names; *blk gets the block.  LANYFS_E_NOSPC when
 * there is none.
 */
enum lanyfs_err fsck_root_make(struct lanyfs_fs *fs, const struct scan_result *res,
                               const struct lanyfs_ts *now, uint64_t *blk,
                               struct lanyfs_error *err);
/* Set 'checked' to now; one write. */
enum lanyfs_err fsck_super_set_checked(struct lanyfs_fs *fs, const struct lanyfs_ts *now,
                                       struct lanyfs_error *err);
/* The blocks a grown filesystem gets: the image's, capped by the address limit. */
uint64_t fsck_super_grow_target(struct lanyfs_fs *fs);

/* ---- report.c ---------------------------------------------------------------- */

/* One finding as shown, for the JSON report. */
struct fsck_row {
    unsigned round;               /* 1 for the first check, 2.. after a restart */
    uint32_t code;                /* SCAN_PR_* */
    enum scan_severity severity;  /* from the scan */
    char *message;                /* escaped (owned) */
    const char *repair;           /* the catalogue's proposal */
    const char *answer;           /* "yes", "no", or "none" when nothing was asked */
};

struct fsck_summary {
    uint64_t files;               /* live files after the run */
    uint64_t dirs;                /* live directories, the root included */
    uint64_t blocks;              /* the filesystem's blocks */
    uint64_t used;                /* blocks not in the free list */
    uint64_t free;                /* blocks in the free list */
    uint64_t reclaimed;           /* free blocks gained */
    uint64_t lost_found;          /* entries moved to /lost+found */
    uint64_t writes;              /* block writes made */
    bool modified;                /* the device was written */
    bool clean;                   /* no problem is left */
    const char *undo;             /* the undo file written, or NULL */
};

struct fsck_report {
    struct fsck_row *rows;        /* in the order shown */
    size_t nrows;                 /* used */
    size_t cap;                   /* allocated */
};

bool fsck_report_add(struct fsck_report *rep, unsigned round, const struct scan_finding *f,
                     const char *message, const char *answer);
void fsck_report_free(struct fsck_report *rep);
/* The whole JSON document (docs/fsck.md). */
void fsck_report_json(FILE *f, const struct fsck_opts *o, const struct fsck_report *rep,
                      const struct fsck_summary *s, int exit_code, const char *error);
