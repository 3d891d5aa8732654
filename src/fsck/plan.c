/*
 * plan.c -- what fsck does about each finding, and the plan of a repair.
 *
 * Policy: every catalogue code maps to a kind of repair (enum fsck_cat),
 * looked up by the code's stable name so that codes the catalogue gains
 * later fall back safely (a row marked NO_REPAIR is a fact; any other
 * unknown row is a repair this version does not make).  Driver marks are
 * repaired where they waste space (the leaks, the uncounted push, the cut
 * free list, the extender flood, blocks mapped past the size) and left
 * alone where they are harmless (the formatter's chain type, the filled
 * last slot, the stale freetail, time drift, holes) or where a repair could
 * take away what a user sees (an entry whose failed delete left it in its
 * tree: it stays, readable as before).
 *
 * Answers are gathered per kind: a kind may be repaired when every
 * question of that kind (for per-entry kinds: about that entry) was
 * answered yes.  A repair no finding asked for is made only with -y.
 *
 * The plan (fsck_plan) is built in this order:
 *   1. the root, every live entry, relinked orphans, undeleted entries and
 *      the entries whose blocks a declined repair keeps, with their
 *      directories (orphans without one go to /lost+found);
 *   2. every entry's own block is claimed, then the trees of live files,
 *      of relinked orphans, of kept entries, then undeleted data: the first
 *      to claim a block keeps it (e2fsck's rule for shared blocks);
 *   3. the pool of blocks the repair may take (repair_clone.c);
 *   4. /lost+found and the names (repair_lostfound.c);
 *   5. each file's fixes and copies (repair_file.c), then each directory's
 *      tree (repair_tree.c).
 * Whatever no one claims at the end is free.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/i18n.h"
#include "repair.h"

/* ---- policy -------------------------------------------------------------------- */

struct policy {
    const char *name;   /* catalogue name */
    enum fsck_cat cat;  /* what fsck does */
    bool per_entry;     /* answers are per entry */
};

static const struct policy policies[] = {
    {"SB_BAD_MAGIC", FSCK_CAT_RESUPER, false},
    {"SB_BAD_TYPE", FSCK_CAT_SUPER, false},
    {"SB_VERSION", FSCK_CAT_NONE, false},
    {"SB_BAD_BLOCKSIZE", FSCK_CAT_RESUPER, false},
    {"SB_BAD_ADDRLEN", FSCK_CAT_RESUPER, false},
    {"SB_BLOCKS_SMALL", FSCK_CAT_GROW, false},
    {"SB_TRUNCATED", FSCK_CAT_NONE, false},
    {"SB_BLOCKS_OVER_ADDR", FSCK_CAT_CAP, false},
    {"SB_BLOCKS_LARGE", FSCK_CAT_CAP, false},
    {"SB_BLOCKSIZE_WRONG", FSCK_CAT_RESUPER, false},
    {"SB_ADDRLEN_WRONG", FSCK_CAT_RESUPER, false},
    {"SB_VERSION_FLIPPED", FSCK_CAT_SUPER, false},
    {"SB_ROOTDIR_RANGE", FSCK_CAT_ROOT, false},
    {"SB_FREEHEAD_RANGE", FSCK_CAT_FREELIST, false},
    {"SB_FREEHEAD_FLIPPED", FSCK_CAT_FREELIST, false},
    {"SB_FREETAIL_RANGE", FSCK_CAT_FREELIST, false},
    {"SB_BADBLOCKS_RANGE", FSCK_CAT_SUPER, false},
    {"SB_FREEBLOCKS_WRONG", FSCK_CAT_FREELIST, false},
    {"SB_TIME_INVALID", FSCK_CAT_SUPER, false},
    {"SB_LABEL_NO_NUL", FSCK_CAT_NONE, false},
    {"SB_GEOMETRY_INFERRED", FSCK_CAT_RESUPER, false},
    {"SB_FORMAT_INTERRUPTED", FSCK_CAT_ROOT, false},
    {"SB_ROOT_NOT_DIR", FSCK_CAT_ROOT, false},
    {"SB_IMAGE_TAIL", FSCK_CAT_NONE, false},
    {"SB_UNREADABLE", FSCK_CAT_RESUPER, false},
    {"TREE_PTR_RANGE", FSCK_CAT_TREE, false},
    {"TREE_PTR_TYPE", FSCK_CAT_TREE, false},
    {"TREE_CYCLE", FSCK_CAT_TREE, false},
    {"TREE_ORDER", FSCK_CAT_TREE, false},
    {"TREE_DUP_NAME", FSCK_CAT_TREE, false},
    {"TREE_NAME_EMPTY", FSCK_CAT_TREE, false},
    {"TREE_NAME_NO_NUL", FSCK_CAT_TREE, false},
    {"TREE_NAME_SLASH", FSCK_CAT_TREE, false},
    {"TREE_REACHED_TWICE", FSCK_CAT_TREE, false},
    {"TREE_TOO_DEEP", FSCK_CAT_NONE, false},
    {"TREE_TIME_INVALID", FSCK_CAT_TIME, true},
    {"TREE_UNREADABLE", FSCK_CAT_TREE, false},
    {"TREE_RENAME_HALFWAY", FSCK_CAT_TREE, false},
    {"FILE_DATA_RANGE", FSCK_CAT_FILE, true},
    {"FILE_DATA_TYPE", FSCK_CAT_FILE, true},
    {"EXT_LEVEL_WRONG", FSCK_CAT_FILE, true},
    {"EXT_SLOT_RANGE", FSCK_CAT_FILE, true},
    {"EXT_SLOT_METADATA", FSCK_CAT_FILE, true},
    {"FILE_SIZE_UNMAPPED", FSCK_CAT_FILE, true},
    {"FILE_SIZE_EXCESS", FSCK_CAT_FILE, true},
    {"FILE_HOLES", FSCK_CAT_NONE, false},
    {"EXT_TYPE", FSCK_CAT_FILE, true},
    {"EXT_SLOT_FLIPPED", FSCK_CAT_FILE, true},
    {"FILE_DATA_FLIPPED", FSCK_CAT_FILE, true},
    {"FILE_DATA_TYPE_FLIPPED", FSCK_CAT_FILE, true},
    {"FILE_DATA_UNWRITTEN", FSCK_CAT_FILE, true},
    {"EXT_HOLE_FLIPPED", FSCK_CAT_FILE, true},
    {"FREE_CYCLE", FSCK_CAT_FREELIST, false},
    {"FREE_PTR_RANGE", FSCK_CAT_FREELIST, false},
    {"FREE_END_WRONG", FSCK_CAT_FREELIST, false},
    {"FREE_SLOT_RANGE", FSCK_CAT_FREELIST, false},
    {"FREE_SLOT_IN_USE", FSCK_CAT_FREELIST, false},
    {"FREE_LISTED_TWICE", FSCK_CAT_FREELIST, false},
    {"FREE_CHAIN_TYPE", FSCK_CAT_FREELIST, false},
    {"FREE_PTR_ENTRY", FSCK_CAT_FREELIST, false},
    {"FREE_NEXT_FLIPPED", FSCK_CAT_FREELIST, false},
    {"FREE_SLOT_METADATA", FSCK_CAT_FREELIST, false},
    {"BLOCK_SHARED", FSCK_CAT_CLONE, false},
    {"BLOCKS_LEAKED", FSCK_CAT_FREELIST, false},
    {"ORPHAN_ENTRY", FSCK_CAT_ORPHAN, true},
    {"DELETED_ENTRY", FSCK_CAT_UNDELETE, true},
    {"ORPHAN_LINK_FLIPPED", FSCK_CAT_FILE, true},
    {"BLOCK_UNREADABLE", FSCK_CAT_NONE, false},
    {"TORN_CHAIN_COUNTER", FSCK_CAT_FREELIST, false},
    {"TORN_SECTORS", FSCK_CAT_TREE, false},
    {"ENTRY_NEVER_WRITTEN", FSCK_CAT_FILE, true},
    {"SB_STALE_FREEHEAD", FSCK_CAT_FREELIST, false},
    {"UNLINKED_FILE_DATA", FSCK_CAT_FILE, true},
    {"LOST_DATA_TREE", FSCK_CAT_ORPHAN, false},
    {"MARK_FORMATTER_CHAIN_TYPE", FSCK_CAT_NONE, false},
    {"MARK_LAST_SLOT_FILLED", FSCK_CAT_NONE, false},
    {"MARK_LAST_SLOT_LEAK", FSCK_CAT_FREELIST, false},
    {"MARK_UNCOUNTED_PUSH", FSCK_CAT_FREELIST, false},
    {"MARK_FREETAIL_STALE", FSCK_CAT_NONE, false},
    {"MARK_FREELIST_CUT", FSCK_CAT_FREELIST, false},
    {"MARK_EXTENDER_LEAK", FSCK_CAT_FREELIST, false},
    {"MARK_EXTENDER_FLOOD", FSCK_CAT_FREELIST, false},
    {"MARK_FIRST_BLOCK_OVERWRITTEN", FSCK_CAT_FILE, true},
    {"MARK_HOLE_TO_BLOCK0", FSCK_CAT_NONE, false},
    {"MARK_FAILED_DELETE", FSCK_CAT_NONE, false},
    {"MARK_RENAME_TWO_TREES", FSCK_CAT_TREE, false},
    {"MARK_FROZEN_PARENT", FSCK_CAT_TREE, false},
    {"MARK_EXTRA_MAPPED", FSCK_CAT_FILE, true},
    {"MARK_ENTRY_BECAME_CHAIN", FSCK_CAT_TREE, false},
    {"MARK_TIME_DRIFT", FSCK_CAT_NONE, false},
    {"MARK_ZERO_SIZE_EXTENDER", FSCK_CAT_FILE, true},
    {"MARK_DRIVER_ORPHAN", FSCK_CAT_ORPHAN, true},
    {"MARK_STALE_LINK", FSCK_CAT_TREE, false},
};

enum fsck_cat fsck_code_cat(uint32_t code, bool *per_entry)
{
    *per_entry = false;
    const struct scan_problem_info *pi = scan_problem_lookup(code);
    if (pi == NULL)
        return FSCK_CAT_UNSUPPORTED;
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        if (strcmp(policies[i].name, pi->name) == 0) {
            *per_entry = policies[i].per_entry;
            return policies[i].cat;
        }
    }
    if (pi->flags & (SCAN_PF_NO_REPAIR | SCAN_PF_RETIRED))
        return FSCK_CAT_NONE;
    return FSCK_CAT_UNSUPPORTED;
}

const char *fsck_cat_name(enum fsck_cat c)
{
    static const char *const names[FSCK_CAT_COUNT] = {
        "none", "unsupported", "superblock", "grow", "cap", "free list",
        "tree", "time", "file", "clone", "orphan", "undelete", "new superblock",
        "root",
    };
    return c < FSCK_CAT_COUNT ? names[c] : "?";
}

/* ---- answers ---------------------------------------------------------------------- */

bool fsck_decide(struct fsck_ctx *c, uint32_t code, uint32_t entry, enum fsck_answer a)
{
    if (c->ndec == c->capdec) {
        size_t ncap = c->capdec ? c->capdec * 2 : 64;
        void *p = realloc(c->dec, ncap * sizeof(*c->dec));
        if (p == NULL)
            return false;
        c->dec = p;
        c->capdec = ncap;
    }
    bool per;
    enum fsck_cat cat = fsck_code_cat(code, &per);
    c->dec[c->ndec++] = (struct fsck_decision){
        .code = code, .cat = cat, .entry = per ? entry : 0, .answer = a};
    return true;
}

bool fsck_allowed(const struct fsck_ctx *c, enum fsck_cat cat, uint32_t entry)
{
    bool seen = false;
    for (size_t i = 0; i < c->ndec; i++) {
        const struct fsck_decision *d = &c->dec[i];
        if (d->cat != cat)
            continue;
        if (entry != 0 && d->entry != 0 && d->entry != entry)
            continue;
        seen = true;
        if (d->answer != FSCK_ANSWER_YES)
            return false;
    }
    return seen || c->o->mode == FSCK_MODE_YES;
}

bool fsck_approved_any(const struct fsck_ctx *c, enum fsck_cat cat)
{
    for (size_t i = 0; i < c->ndec; i++)
        if (c->dec[i].cat == cat && c->dec[i].answer == FSCK_ANSWER_YES)
            return true;
    return false;
}

/* ---- helpers ------------------------------------------------------------------------ */

void fsck_note(struct fsck_ctx *c, const char *fmt, ...)
{
    if (!c->verbose || c->out == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs(_("  plan: "), c->out);
    vfprintf(c->out, fmt, ap);
    fputc('\n', c->out);
    va_end(ap);
}

enum lanyfs_err fsck_read(struct fsck_ctx *c, uint64_t blk, uint8_t *buf)
{
    return lanyfs_fs_read_block(c->fs, blk, buf, &c->err);
}

enum lanyfs_err fsck_write(struct fsck_ctx *c, uint64_t blk, const uint8_t *buf)
{
    enum lanyfs_err rc = lanyfs_fs_write_block(c->fs, blk, buf, &c->err);
    if (rc == LANYFS_OK)
        c->st.writes++;
    return rc;
}

bool fsck_claim(struct fsck_ctx *c, uint64_t blk, enum fsck_own k, uint32_t who)
{
    if (blk == 0 || blk >= c->nblocks || c->kind[blk] != OWN_FREE)
        return false;
    c->kind[blk] = (uint8_t)k;
    c->owner[blk] = who;
    return true;
}

struct tentry *fsck_te_add(struct fsck_ctx *c)
{
    if (c->nte == c->capte) {
        size_t ncap = c->capte ? c->capte * 2 : 64;
        void *p = realloc(c->te, ncap * sizeof(*c->te));
        if (p == NULL)
            return NULL;
        c->te = p;
        c->capte = ncap;
    }
    struct tentry *t = &c->te[c->nte++];
    memset(t, 0, sizeof(*t));
    t->parent = FSCK_NONE;
    return t;
}

struct tentry *fsck_te_new(struct fsck_ctx *c, uint64_t blk, uint8_t type, const char *name,
                           size_t len)
{
    struct tentry *t = fsck_te_add(c);
    if (t == NULL)
        return NULL;
    t->block = blk;
    t->is_new = true;
    t->name_dirty = true;
    t->e.type = type;
    t->e.created = c->now;
    t->e.modified = c->now;
    lanyfs_entry_set_name(&t->e, name, len);
    c->kind[blk] = OWN_ENTRY;
    c->owner[blk] = (uint32_t)(c->nte - 1);
    return t;
}

bool fsck_te_add_kid(struct fsck_ctx *c, uint32_t dir, uint32_t kid)
{
    struct tentry *d = &c->te[dir];
    if (d->nkids == d->capkids) {
        size_t ncap = d->capkids ? d->capkids * 2 : 8;
        void *p = realloc(d->kids, ncap * sizeof(*d->kids));
        if (p == NULL)
            return false;
        d->kids = p;
        d->capkids = ncap;
    }
    d->kids[d->nkids++] = kid;
    return true;
}

struct tentry *fsck_te_of_sid(struct fsck_ctx *c, uint32_t sid)
{
    if (sid == 0 || sid > c->nsid || c->by_sid[sid - 1] == 0)
        return NULL;
    return &c->te[c->by_sid[sid - 1] - 1];
}

void fsck_plan_free(struct fsck_ctx *c)
{
    for (size_t i = 0; i < c->nte; i++)
        free(c->te[i].kids);
    free(c->te);
    c->te = NULL;
    c->nte = c->capte = 0;
    for (size_t i = 0; i < c->nnb; i++) {
        free(c->nb[i].data);
        free(c->nb[i].slot_new);
    }
    free(c->nb);
    c->nb = NULL;
    c->nnb = c->capnb = 0;
    free(c->xe);
    c->xe = NULL;
    c->nxe = c->capxe = 0;
    free(c->fix);
    c->fix = NULL;
    c->nfix = c->capfix = 0;
    free(c->kind);
    free(c->owner);
    free(c->by_sid);
    free(c->pool);
    free(c->lost_named);
    c->lost_named = NULL;
    free(c->lost_data);
    c->lost_data = NULL;
    c->nlost_data = 0;
    c->lost_data_built = false;
    c->kind = NULL;
    c->owner = NULL;
    c->by_sid = NULL;
    c->pool = NULL;
    c->npool = c->pool_next = 0;
    c->nsid = 0;
}

bool fsck_plan_changes(const struct fsck_ctx *c)
{
    if (c->nnb > 0 || c->nxe > 0)
        return true;
    for (size_t i = 0; i < c->nte; i++) {
        const struct tentry *t = &c->te[i];
        if (t->fields_dirty || t->name_dirty || t->is_new || t->moved || t->tree_rebuild)
            return true;
    }
    return false;
}

/* ---- building the target ------------------------------------------------------- */

/* The orphan at the top of sid's chain of orphan parents (the one ORPHAN_ENTRY names). */
static uint32_t orphan_root(const struct scan_result *r, uint32_t sid)
{
    for (unsigned guard = 0; guard < 100000; guard++) {
        const struct scan_entry *x = scan_entry_by_id(r, sid);
        if (x == NULL || x->parent == 0)
            return sid;
        const struct scan_entry *p = scan_entry_by_id(r, x->parent);
        if (p == NULL || p->state != SCAN_ENTRY_ORPHAN)
            return sid;
        sid = x->parent;
    }
    return sid;
}

/* Add the target entry for scan entry x. */
static struct tentry *add_scan_entry(struct fsck_ctx *c, const struct scan_entry *x)
{
    if (x->block == 0 || x->block >= c->nblocks || c->kind[x->block] != OWN_FREE)
        return NULL;
    struct tentry *t = fsck_te_add(c);
    if (t == NULL)
        return NULL;
    t->block = x->block;
    t->sid = x->id;
    scan_entry_fields(x, &t->e);
    t->fin_root = 0;
    c->kind[x->block] = OWN_ENTRY;
    c->owner[x->block] = (uint32_t)(c->nte - 1);
    if (x->id <= c->nsid)
        c->by_sid[x->id - 1] = (uint32_t)c->nte;
    return t;
}

/* The marks plan.c needs from the findings, on the target entries. */
/*
 * FILE_DATA_FLIPPED, FILE_DATA_TYPE_FLIPPED: the data pointer names the
 * extender the scan walked for the file, the one just after its own block;
 * the tree the flipped pointer named stays the lost write of the file
 * before it, the block that is none stays whatever the scan read it as.
 * One write of the entry, in phase 2.
 */
static void unflip_data_pointer(struct fsck_ctx *c, struct tentry *t, uint64_t top)
{
    if (top == 0 || top >= c->nblocks || t->e.subtree == top)
        return;
    fsck_note(c, _("entry %" PRIu64 ": data pointer %" PRIu64 " -> %" PRIu64), t->block,
              t->e.subtree, top);
    t->e.subtree = top;
    t->fields_dirty = true;
}

/*
 * FILE_DATA_UNWRITTEN: the scan read the pointer as the 0 a create leaves
 * (t->e has it); the entry is written with it, in phase 2, unless a lost
 * tree of its own gives it another first (link_lost_tree).
 */
static void clear_data_pointer(struct fsck_ctx *c, struct tentry *t, uint64_t was)
{
    fsck_note(c, _("entry %" PRIu64 ": data pointer %" PRIu64 " -> %" PRIu64), t->block, was,
              t->e.subtree);
    t->fields_dirty = true;
}

/*
 * UNLINKED_FILE_DATA: the file gets the tree that holds its data as its
 * data pointer, and the size the data shows; the claims that follow take
 * the tree's blocks for it (repair_file.c).  One write of the entry, in
 * phase 2: interrupted before it, a second run finds the same tree.
 */
static void link_lost_tree(struct fsck_ctx *c, const struct scan_result *res, struct tentry *t)
{
    const struct scan_lost_tree *lt = scan_lost_tree_of(res, t->sid);
    if (lt == NULL || t->e.subtree != 0 || lt->top >= c->nblocks)
        return;
    t->e.subtree = lt->top;
    t->e.size = lt->size;
    t->fields_dirty = true;
    t->adopted = true;
    fsck_note(c, _("entry %" PRIu64 ": data pointer -> %" PRIu64 ", size %" PRIu64), t->block,
              lt->top, lt->size);
}

/*
 * LOST_DATA_TREE: each extender tree that maps data but that no file links
 * (nor a file this plan keeps) becomes a new file of /lost+found named
 * "#TOP", its data pointer the tree, its size what the data shows.  Its own
 * block must be one the old free list does not list: written before its
 * parent links it, a block of the old list would read, after an
 * interruption, as a deleted file that takes the tree along; an unlisted
 * one reads as an orphan, which the next run moves to /lost+found.  So it
 * is a block the scan found leaked (or an orphan extender nobody holds)
 * and no lost tree maps.  Where the free list's walk broke off, nothing is
 * leaked: the blocks no walk reached are unknown, and no list a reader can
 * walk names them, so one of those serves when no leaked one is left.
 * With none left either (and none the list can give, repair_unlist.c), the
 * last tree still to come gives its blocks up: with no block for the file
 * short of one, every tree from it on would go to the free list, and those
 * blocks are unlisted ones only it holds or names (correct:686 state 8146,
 * chain block 495 zeroed: the list read as ending there, its deleted files
 * as orphans and their old trees as lost ones, and the real lost write
 * #371 went free).
 */
/* The first block from *next on that may hold a lost tree's new file, as
 * the scan classed it cls (and an orphan extender nobody holds with it, for
 * leaked ones); 0 when none is left. */
static uint64_t spare_block(const struct fsck_ctx *c, const struct scan_block *map, uint64_t nmap,
                            const uint8_t *in_tree, enum scan_class cls, uint64_t *next)
{
    for (; *next < c->nblocks && *next < nmap; (*next)++) {
        const struct scan_block *m = &map[*next];
        if (c->kind[*next] == OWN_FREE && !in_tree[*next] && m->owner == 0 &&
            !(m->flags & SCAN_BF_SHARED) &&
            (m->cls == cls || (cls == SCAN_BLK_LEAKED && m->cls == SCAN_BLK_ORPHAN_EXT)))
            return (*next)++;
    }
    return 0;
}

/*
 * The blocks the lost trees hold or name: in_tree[b] is set for each, and,
 * when who is given, who[b] says which tree marked it (id, the tree's
 * index + 1), or WHO_MANY when more than one did.
 */
#define WHO_MANY UINT32_MAX
struct marks {
    uint8_t *in_tree;
    uint32_t *who;
    uint32_t id;
};

static void mark(struct marks *m, uint64_t v)
{
    m->in_tree[v] = 1;
    if (m->who != NULL && m->who[v] != m->id)
        m->who[v] = m->who[v] == 0 ? m->id : WHO_MANY;
}

/* Mark every block a slot of the extender at blk names (eb: a block
 * buffer). */
static void mark_ext_slots(struct fsck_ctx *c, uint64_t blk, struct marks *m, uint8_t *eb)
{
    if (blk >= c->nblocks || fsck_read(c, blk, eb) != LANYFS_OK)
        return;
    for (uint32_t j = 0; j < c->g.extmax; j++) {
        uint64_t v = lanyfs_ext_slot(&c->g, eb, j);
        if (v != 0 && v < c->nblocks)
            mark(m, v);
    }
}

/* The same for every extender of the lost tree. */
static void mark_all_slots(struct fsck_ctx *c, const struct scan_lost_tree *lt,
                           struct marks *m, uint8_t *eb)
{
    for (uint64_t k = 0; k < lt->nexts; k++)
        mark_ext_slots(c, lt->exts[k], m, eb);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * The same for a lost tree that becomes a new file here (size lt->size),
 * but only for slots below that size: the file's build clears a slot past
 * it (repair_file.c), so the block such a slot names may hold the new
 * file's entry.  On a nearly full stick whose free list broke off, a lost
 * write's slots past its data may name every block left (SPEC-9.4's
 * leftovers), and the tree was freed for want of one.  The descent from
 * the top follows the levels the build follows; an extender of the tree it
 * does not reach that way is marked whole (mark_all_slots), as the build
 * leaves such a one as it is.  The build also keeps an extender below the
 * top that the scan left out of every tree and nobody holds (one the free
 * list lists), with what it maps: the descent enters it too (correct:822
 * state 8148: the tree at 983, the old data of /src2/x0044.odt that a
 * replace was freeing, named the listed 643 at its slot 0; the new file's
 * block was taken off the list at 926, which 643 maps, and the file got a
 * hole there).  False without the memory for it.
 */
static bool mark_kept_slots(struct fsck_ctx *c, const struct scan_lost_tree *lt,
                            struct marks *m, uint8_t *eb)
{
    struct node {
        uint64_t blk, base;
        unsigned level;
    };
    uint64_t n = lt->nexts;
    if (n == 0)
        return true;
    if (n > SIZE_MAX / sizeof(struct node) - 1)
        return false;
    uint64_t *sorted = malloc((size_t)n * sizeof(*sorted));
    uint8_t *state = calloc((size_t)n, 1); /* 1 queued, 2 walked */
    size_t cap = (size_t)n + 1, sp = 0;
    struct node *stack = malloc(cap * sizeof(*stack));
    struct lanyfs_blockset *extra = lanyfs_blockset_new(); /* the unheld ones entered */
    bool ok = sorted != NULL && state != NULL && stack != NULL && extra != NULL;
    if (!ok)
        goto out;
    memcpy(sorted, lt->exts, (size_t)n * sizeof(*sorted));
    qsort(sorted, (size_t)n, sizeof(*sorted), cmp_u64);
    uint64_t needed = lanyfs_geom_blocks_for_size(&c->g, lt->size);
    uint64_t *at = bsearch(&lt->top, sorted, (size_t)n, sizeof(*sorted), cmp_u64);
    if (at != NULL && lt->top < c->nblocks &&
        fsck_read(c, lt->top, eb) == LANYFS_OK) {
        state[at - sorted] = 1;
        stack[sp++] = (struct node){lt->top, 0, eb[LANYFS_EXT_LEVEL]};
    }
    while (sp > 0) {
        struct node x = stack[--sp];
        if (fsck_read(c, x.blk, eb) != LANYFS_OK ||
            eb[LANYFS_HDR_TYPE] != LANYFS_TYPE_EXT || eb[LANYFS_EXT_LEVEL] != x.level ||
            x.level > FSCK_LEVEL_MAX)
            continue; /* not walked: marked whole below */
        uint64_t *self = bsearch(&x.blk, sorted, (size_t)n, sizeof(*sorted), cmp_u64);
        if (self != NULL)
            state[self - sorted] = 2;
        for (uint32_t j = 0; j < c->g.extmax; j++) {
            uint64_t v = lanyfs_ext_slot(&c->g, eb, j);
            uint64_t fb = fsck_slot_base(&c->g, x.base, x.level, j);
            if (v == 0 || v >= c->nblocks || fb >= needed)
                continue;
            mark(m, v);
            if (x.level == 0)
                continue;
            uint64_t *child = bsearch(&v, sorted, (size_t)n, sizeof(*sorted), cmp_u64);
            if (child != NULL) {
                if (state[child - sorted] != 0)
                    continue;
                state[child - sorted] = 1;
            } else {
                if (c->kind[v] != OWN_FREE)
                    continue;
                int added = lanyfs_blockset_add(extra, v); /* 0: entered already */
                if (added < 0) {
                    ok = false;
                    goto out;
                }
                if (added == 0)
                    continue;
            }
            if (sp == cap) {
                struct node *ns = cap <= SIZE_MAX / 2 / sizeof(*ns)
                                      ? realloc(stack, cap * 2 * sizeof(*ns))
                                      : NULL;
                if (ns == NULL) {
                    ok = false;
                    goto out;
                }
                stack = ns;
                cap *= 2;
            }
            stack[sp++] = (struct node){v, fb, x.level - 1};
        }
    }
    for (uint64_t k = 0; k < n; k++)
        if (state[k] != 2)
            mark_ext_slots(c, sorted[k], m, eb);
out:
    free(sorted);
    free(state);
    free(stack);
    lanyfs_blockset_free(extra);
    return ok;
}

/* A lost tree whose repair was declined keeps its blocks out of the free list. */
static void keep_tree(struct fsck_ctx *c, const struct scan_lost_tree *lt)
{
    for (uint64_t k = 0; k < lt->nexts; k++)
        if (lt->exts[k] < c->nblocks && c->kind[lt->exts[k]] == OWN_FREE)
            c->kind[lt->exts[k]] = OWN_KEEP;
    for (uint64_t k = 0; k < lt->ndata; k++)
        if (lt->data[k] != 0 && lt->data[k] < c->nblocks && c->kind[lt->data[k]] == OWN_FREE)
            c->kind[lt->data[k]] = OWN_KEEP;
}

/* A lost tree that becomes a new file here, not its known file's data. */
static bool own_tree(struct fsck_ctx *c, const struct scan_lost_tree *lt)
{
    return lt->entry == 0 || fsck_te_of_sid(c, lt->entry) == NULL;
}

/* Mark the blocks of every lost tree and those their slots name, each tree
 * as the id of its index + 1. */
static void mark_trees(struct fsck_ctx *c, const struct scan_lost_tree *lt, size_t n,
                       struct marks *m, uint8_t *eb)
{
    for (size_t i = 0; i < n; i++) {
        m->id = (uint32_t)(i + 1);
        for (uint64_t k = 0; k < lt[i].nexts; k++)
            if (lt[i].exts[k] < c->nblocks)
                mark(m, lt[i].exts[k]);
        for (uint64_t k = 0; k < lt[i].ndata; k++)
            if (lt[i].data[k] != 0 && lt[i].data[k] < c->nblocks)
                mark(m, lt[i].data[k]);
        /* Nor a block a slot of theirs names that the scan left out of the
         * tree (a leaked block the driver's marks explain, among others):
         * the file's own walk may keep it. */
        if (!own_tree(c, &lt[i]) || !mark_kept_slots(c, &lt[i], m, eb))
            mark_all_slots(c, &lt[i], m, eb);
    }
}

/*
 * A block of the lost tree lt (its extenders, then its data) that no other
 * lost tree holds or names, for the file of a tree before it: *k is where
 * the last call stopped.  0 when none is left.
 */
static uint64_t given_block(const struct fsck_ctx *c, const struct scan_block *map, uint64_t nmap,
                            const struct scan_lost_tree *lt, const uint32_t *who, uint32_t id,
                            uint64_t *k)
{
    for (; *k < lt->nexts + lt->ndata; (*k)++) {
        uint64_t b = *k < lt->nexts ? lt->exts[*k] : lt->data[*k - lt->nexts];
        if (b != 0 && b < c->nblocks && b < nmap && c->kind[b] == OWN_FREE && who[b] == id &&
            map[b].owner == 0 && !(map[b].flags & SCAN_BF_SHARED)) {
            (*k)++;
            return b;
        }
    }
    return 0;
}

static enum lanyfs_err add_lost_files(struct fsck_ctx *c, const struct scan_result *r)
{
    const struct scan_lost_tree *lt;
    size_t n = scan_lost_trees(r, &lt);
    c->lost_freed = false;
    c->lost_missing = 0;
    if (n == 0)
        return LANYFS_OK;
    if (!c->allow_freelist || !c->allow_tree || !fsck_allowed(c, FSCK_CAT_ORPHAN, 0)) {
        for (size_t i = 0; i < n; i++)
            if (own_tree(c, &lt[i]))
                keep_tree(c, &lt[i]);
        return LANYFS_OK;
    }
    const struct scan_block *map = scan_blocks(r);
    uint64_t nmap = scan_block_count(r);
    struct marks m = {calloc(c->nblocks ? c->nblocks : 1, 1), NULL, 0};
    uint8_t *eb = malloc(c->g.blocksize);
    if (m.in_tree == NULL || eb == NULL) {
        free(m.in_tree);
        free(eb);
        return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    }
    mark_trees(c, lt, n, &m, eb);
    uint64_t next = 1, next_unknown = 1;
    size_t end = n;                 /* trees from end on give their blocks up */
    size_t pool = n;                /* the one whose blocks are being handed out */
    uint64_t pool_k = 0;
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t i = 0; i < end; i++) {
        if (!own_tree(c, &lt[i]))
            continue; /* its file's (UNLINKED_FILE_DATA), or kept as it is */
        uint64_t blk = spare_block(c, map, nmap, m.in_tree, SCAN_BLK_LEAKED, &next);
        if (blk == 0)
            blk = spare_block(c, map, nmap, m.in_tree, SCAN_BLK_UNKNOWN, &next_unknown);
        if (blk == 0) {
            c->lost_freed = true; /* no block for the file: a tree's blocks go free */
            c->lost_missing++;
            if (m.who == NULL) {
                /* Which tree names each block: built once, when first needed. */
                m.who = calloc(c->nblocks ? c->nblocks : 1, sizeof(*m.who));
                if (m.who != NULL)
                    mark_trees(c, lt, n, &m, eb);
            }
            while (m.who != NULL && blk == 0) {
                if (pool < n)
                    blk = given_block(c, map, nmap, &lt[pool], m.who, (uint32_t)pool + 1, &pool_k);
                if (blk != 0)
                    break;
                /* The last tree still to come gives its blocks up, which go
                 * free with it anyway when this one has none. */
                size_t j = end;
                while (j > i + 1 && !own_tree(c, &lt[j - 1]))
                    j--;
                if (j <= i + 1)
                    break;
                end = pool = j - 1;
                pool_k = 0;
                c->lost_missing++;
                fsck_note(c, _("the extender tree at %" PRIu64 " gives its blocks up for the "
                               "files of the lost trees before it"),
                          lt[pool].top);
            }
            if (blk == 0)
                continue;
        }
        char name[32];
        int len = snprintf(name, sizeof(name), "#%" PRIu64, lt[i].top);
        struct tentry *t = fsck_te_new(c, blk, LANYFS_TYPE_FILE, name, (size_t)len);
        if (t == NULL) {
            rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            break;
        }
        t->lost_tree = true;
        t->adopted = true;
        t->moved = true;
        t->to_lostfound = true;
        t->file_allowed = true;
        t->e.subtree = lt[i].top;
        t->e.size = lt[i].size;
        fsck_note(c, _("block %" PRIu64 ": new file /lost+found/%s for the extender tree at %" PRIu64),
                  blk, name, lt[i].top);
    }
    free(m.who);
    free(eb);
    c->lost_named = m.in_tree; /* for repair_unlist.c; freed with the plan */
    return rc;
}

/* EXT_SLOT_FLIPPED: the file maps the block of its run at that slot;
 * EXT_HOLE_FLIPPED (value 0): the slot is a hole again; so is a data slot
 * at a block that is no data of the file (EXT_SLOT_METADATA, value 0),
 * another file's extender among them, which the build would copy. */
static void add_fix(struct fsck_ctx *c, const struct scan_finding *f)
{
    if (f->block >= c->nblocks || f->value >= c->nblocks || f->count >= c->g.extmax)
        return;
    if (c->nfix == c->capfix) {
        size_t ncap = c->capfix ? c->capfix * 2 : 8;
        struct slotfix *p = realloc(c->fix, ncap * sizeof(*p));
        if (p == NULL)
            return; /* the slot stays as it is: a copy or a clear, as before */
        c->fix = p;
        c->capfix = ncap;
    }
    c->fix[c->nfix++] = (struct slotfix){.ext = f->block, .slot = (uint32_t)f->count,
                                         .from = f->block2, .to = f->value};
}

static int cmp_fix(const void *a, const void *b)
{
    const struct slotfix *x = a, *y = b;
    if (x->ext != y->ext)
        return x->ext < y->ext ? -1 : 1;
    return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static void apply_marks(struct fsck_ctx *c, const struct scan_result *res)
{
    const struct scan_finding *fs;
    size_t n = scan_findings(res, &fs);
    for (size_t i = 0; i < n; i++) {
        const struct scan_problem_info *pi = scan_problem_lookup(fs[i].code);
        if (pi == NULL)
            continue;
        struct tentry *t = fsck_te_of_sid(c, fs[i].entry);
        /* A lost tree's flipped slot (lostdata.c): the file made of the
         * tree in /lost+found maps the run's block. */
        if (fs[i].entry == 0 && strcmp(pi->name, "EXT_SLOT_FLIPPED") == 0 &&
            fsck_allowed(c, FSCK_CAT_FILE, 0))
            add_fix(c, &fs[i]);
        if (strcmp(pi->name, "TORN_SECTORS") == 0 && fs[i].block < c->nblocks &&
            c->kind[fs[i].block] == OWN_ENTRY && c->owner[fs[i].block] != FSCK_NONE)
            t = &c->te[c->owner[fs[i].block]];
        if (t == NULL)
            continue;
        if (strcmp(pi->name, "FILE_SIZE_UNMAPPED") == 0)
            t->marks |= FSCK_M_UNMAPPED;
        else if (strcmp(pi->name, "MARK_FIRST_BLOCK_OVERWRITTEN") == 0) {
            t->marks |= FSCK_M_FIRST_OVER;
            t->cut_to = fs[i].count;
        } else if (strcmp(pi->name, "ENTRY_NEVER_WRITTEN") == 0)
            t->marks |= FSCK_M_NEVER_WRITTEN;
        else if (strcmp(pi->name, "TREE_TIME_INVALID") == 0)
            t->marks |= FSCK_M_TIME;
        else if (strcmp(pi->name, "TORN_SECTORS") == 0)
            t->marks |= FSCK_M_TORN;
        else if ((strcmp(pi->name, "EXT_SLOT_FLIPPED") == 0 ||
                  strcmp(pi->name, "EXT_HOLE_FLIPPED") == 0 ||
                  strcmp(pi->name, "EXT_SLOT_METADATA") == 0) &&
                 t->file_allowed)
            add_fix(c, &fs[i]);
        else if (strcmp(pi->name, "FILE_DATA_FLIPPED") == 0 && t->file_allowed)
            unflip_data_pointer(c, t, fs[i].value);
        else if (strcmp(pi->name, "FILE_DATA_TYPE_FLIPPED") == 0 && t->file_allowed)
            unflip_data_pointer(c, t, fs[i].value2);
        else if (strcmp(pi->name, "ORPHAN_LINK_FLIPPED") == 0 && t->file_allowed && t->moved)
            t->fields_dirty = true; /* the scan's mended link, written with the entry */
        else if (strcmp(pi->name, "FILE_DATA_UNWRITTEN") == 0 && t->file_allowed)
            clear_data_pointer(c, t, fs[i].block2);
        else if (strcmp(pi->name, "UNLINKED_FILE_DATA") == 0 && t->file_allowed)
            link_lost_tree(c, res, t);
        else if (strcmp(pi->name, "UNLINKED_FILE_DATA") == 0 &&
                 scan_lost_tree_of(res, t->sid) != NULL)
            keep_tree(c, scan_lost_tree_of(res, t->sid));
    }
}

enum lanyfs_err fsck_plan(struct fsck_ctx *c)
{
    enum lanyfs_err rc = LANYFS_OK;
    struct scan_result *r = c->scan;
    const struct scan_entry *ents;
    size_t nents = scan_entries(r, &ents);
    const struct lanyfs_super *sb = lanyfs_fs_super(c->fs);
    c->g = *lanyfs_fs_geom(c->fs);
    c->nblocks = sb->blocks;
    if (c->nblocks > lanyfs_fs_image_blocks(c->fs))
        c->nblocks = lanyfs_fs_image_blocks(c->fs);
    c->root = FSCK_NONE;
    c->lostfound = FSCK_NONE;
    c->kind = calloc(c->nblocks ? c->nblocks : 1, 1);
    c->owner = malloc((c->nblocks ? c->nblocks : 1) * sizeof(*c->owner));
    c->nsid = nents;
    c->by_sid = calloc(nents ? nents : 1, sizeof(*c->by_sid));
    if (c->kind == NULL || c->owner == NULL || c->by_sid == NULL) {
        rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    for (uint64_t b = 0; b < c->nblocks; b++)
        c->owner[b] = FSCK_NONE;
    c->kind[0] = OWN_SUPER;

    /* Blocks that cannot be read stay out of the free list. */
    const struct scan_block *map = scan_blocks(r);
    uint64_t nmap = scan_block_count(r);
    for (uint64_t b = 1; b < c->nblocks && b < nmap; b++)
        if (map[b].cls == SCAN_BLK_UNREADABLE)
            c->kind[b] = OWN_KEEP;

    c->allow_freelist = fsck_allowed(c, FSCK_CAT_FREELIST, 0);
    c->allow_clone = c->allow_freelist && fsck_allowed(c, FSCK_CAT_CLONE, 0);
    c->allow_tree = fsck_allowed(c, FSCK_CAT_TREE, 0);
    c->allow_super = fsck_allowed(c, FSCK_CAT_SUPER, 0);

    /* 1. The root and the live entries. */
    for (size_t i = 0; i < nents; i++) {
        const struct scan_entry *x = &ents[i];
        if (x->state == SCAN_ENTRY_LIVE && x->block == sb->rootdir && scan_entry_is_dir(x)) {
            if (add_scan_entry(c, x) != NULL)
                c->root = (uint32_t)(c->nte - 1);
            break;
        }
    }
    if (c->root == FSCK_NONE)
        goto out; /* nothing can be relinked without a root: the plan stays empty */
    for (size_t i = 0; i < nents; i++) {
        const struct scan_entry *x = &ents[i];
        if (x->state != SCAN_ENTRY_LIVE || x->block == sb->rootdir)
            continue;
        if (!scan_entry_is_dir(x) && !scan_entry_is_file(x))
            continue;
        struct tentry *t = add_scan_entry(c, x);
        if (t != NULL)
            t->file_allowed = fsck_allowed(c, FSCK_CAT_FILE, x->id);
    }
    /* Orphans: relinked, or kept where they are. */
    for (size_t i = 0; i < nents; i++) {
        const struct scan_entry *x = &ents[i];
        if (x->state != SCAN_ENTRY_ORPHAN)
            continue;
        if (!scan_entry_is_dir(x) && !scan_entry_is_file(x))
            continue;
        uint32_t top = orphan_root(r, x->id);
        bool relink = fsck_allowed(c, FSCK_CAT_ORPHAN, top) && c->allow_tree;
        struct tentry *t = add_scan_entry(c, x);
        if (t == NULL)
            continue;
        t->moved = relink;
        t->file_allowed = relink && fsck_allowed(c, FSCK_CAT_FILE, x->id);
        /* A block a live file holds is not an orphan's: live files' blocks
         * never reach the free list, so the orphan is an old entry whose
         * blocks were handed out again (its own block too, before its new
         * contents landed).  Its slot is cleared, not copied. */
        t->adopted = relink;
        t->orphan = relink;
        if (!relink)
            c->kind[t->block] = OWN_KEEP;
    }
    /* Deleted entries asked back. */
    if (c->o->undelete && c->allow_freelist && c->allow_tree) {
        for (size_t i = 0; i < nents; i++) {
            const struct scan_entry *x = &ents[i];
            if (x->state != SCAN_ENTRY_DELETED || !fsck_allowed(c, FSCK_CAT_UNDELETE, x->id))
                continue;
            if (!scan_entry_is_dir(x) && !scan_entry_is_file(x))
                continue;
            if (scan_entry_is_file(x) && x->blocks_intact < x->blocks_needed)
                continue;
            struct tentry *t = add_scan_entry(c, x);
            if (t == NULL)
                continue;
            t->moved = true;
            t->file_allowed = true;
        }
    }

    /* Extender trees no file links: new files of /lost+found. */
    rc = add_lost_files(c, r);
    if (rc != LANYFS_OK)
        goto out;

    /* Parents. */
    for (size_t i = 0; i < c->nte; i++) {
        struct tentry *t = &c->te[i];
        if (i == c->root || c->kind[t->block] == OWN_KEEP)
            continue;
        const struct scan_entry *x = scan_entry_by_id(r, t->sid);
        struct tentry *p = x ? fsck_te_of_sid(c, x->parent) : NULL;
        if (p != NULL && lanyfs_entry_is_dir(&p->e) && c->kind[p->block] == OWN_ENTRY &&
            (x->state == SCAN_ENTRY_LIVE || p->moved || x->state == SCAN_ENTRY_DELETED))
            t->parent = (uint32_t)(p - c->te);
        else
            t->to_lostfound = true;
    }

    apply_marks(c, r);
    if (c->nfix > 1) /* looked up by extender and slot for every slot walked */
        qsort(c->fix, c->nfix, sizeof(*c->fix), cmp_fix);

    /* 2. Claims: live files, relinked orphans, kept orphans; then undeleted data. */
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < c->nte; i++) {
            struct tentry *t = &c->te[i];
            const struct scan_entry *x = scan_entry_by_id(r, t->sid);
            if (x == NULL || !lanyfs_entry_is_file(&t->e))
                continue;
            bool kept = c->kind[t->block] == OWN_KEEP;
            int want = x->state == SCAN_ENTRY_LIVE ? 0 : kept ? 2 : 1;
            if (want != pass || x->state == SCAN_ENTRY_DELETED)
                continue;
            rc = fsck_file_claim(c, (uint32_t)i);
            if (rc != LANYFS_OK)
                goto out;
        }
    }
    for (size_t i = 0; i < c->nte; i++) {
        if (!c->te[i].lost_tree)
            continue;
        rc = fsck_file_claim(c, (uint32_t)i);
        if (rc != LANYFS_OK)
            goto out;
    }
    for (size_t i = 0; i < c->nte; i++) {
        struct tentry *t = &c->te[i];
        const struct scan_entry *x = scan_entry_by_id(r, t->sid);
        if (x == NULL || x->state != SCAN_ENTRY_DELETED)
            continue;
        if (lanyfs_entry_is_file(&t->e) && !fsck_undelete_claim(c, (uint32_t)i)) {
            /* Not intact after all: it stays deleted. */
            c->kind[t->block] = OWN_FREE;
            c->owner[t->block] = FSCK_NONE;
            c->by_sid[t->sid - 1] = 0;
            t->moved = false;
            t->block = 0;
        }
    }

    /* 3. The pool. */
    rc = fsck_pool_build(c);
    if (rc != LANYFS_OK)
        goto out;

    /* 4. /lost+found, the children of every directory, their names. */
    rc = fsck_lostfound_prepare(c);
    if (rc != LANYFS_OK)
        goto out;
    for (size_t i = 0; i < c->nte; i++) {
        struct tentry *t = &c->te[i];
        if (t->block == 0 || i == c->root || c->kind[t->block] == OWN_KEEP)
            continue;
        if (t->to_lostfound && i != c->lostfound) {
            if (c->lostfound == FSCK_NONE) {
                /* Nowhere to go: the entry stays where it is, out of every tree. */
                c->kind[t->block] = OWN_KEEP;
                t->moved = false;
                continue;
            }
            t->parent = c->lostfound;
        }
        if (t->parent == FSCK_NONE)
            continue;
        if (!fsck_te_add_kid(c, t->parent, (uint32_t)i)) {
            rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            goto out;
        }
    }
    /* Depths, for the order of the tree writes. */
    for (size_t i = 0; i < c->nte; i++) {
        uint32_t d = 0;
        for (uint32_t p = c->te[i].parent; p != FSCK_NONE && d < 100000; p = c->te[p].parent)
            d++;
        c->te[i].depth = d;
    }
    rc = fsck_names_fix(c);
    if (rc != LANYFS_OK)
        goto out;

    /* 5. Files, then trees. */
    for (size_t i = 0; i < c->nte; i++) {
        struct tentry *t = &c->te[i];
        if (t->block == 0 || c->kind[t->block] != OWN_ENTRY)
            continue;
        if (t->moved)
            t->must_write = true;
        if (!lanyfs_entry_is_file(&t->e)) {
            if (!t->is_new)
                fsck_entry_marks(c, (uint32_t)i);
            continue;
        }
        const struct scan_entry *x = scan_entry_by_id(r, t->sid);
        if (x != NULL && x->state == SCAN_ENTRY_DELETED)
            rc = fsck_undelete_build(c, (uint32_t)i);
        else if (x != NULL || t->lost_tree)
            rc = fsck_file_build(c, (uint32_t)i);
        if (rc != LANYFS_OK)
            goto out;
    }
    rc = fsck_tree_plan(c);
out:
    return rc;
}
