/*
 * repair_tree.c -- each directory's tree (SPEC-§5): kept, added to, or
 * rebuilt balanced, and written so that no entry is ever out of reach.
 *
 * Plan.  A directory's tree is walked from its subtree pointer on disk,
 * following left and right to blocks that are entries, each reached once.
 * It is kept when it is exactly a search tree of the directory's children
 * in the reversed order (greater names left): no link out of the device or
 * to a block that is no entry, no node reached twice, no node that is not
 * a child, no name out of order or renamed.  A kept tree takes the children
 * it lacks (relinked entries, a new /lost+found) as leaves, in median
 * order, so a new directory's tree comes out balanced.  Any other tree is
 * rebuilt balanced from the sorted children.
 *
 * Writes.  The entries are the tree's nodes, so a tree cannot be built
 * beside the old one and switched in one write.  An interruption must
 * never leave a child unreachable from its directory: a rerun would take
 * it for an orphan and move it to /lost+found.  So each write is chosen to
 * keep every node reached before it reached after it:
 *   - the pending writes (a node's final links and name, the directory's
 *     final subtree pointer) are tried in post-order of the final tree,
 *     the pointer last; the first one that loses no reachable node is
 *     made; a node nothing reaches can always be written;
 *   - when every pending write would lose a node, the nodes the first one
 *     would lose are parked first: hung on an empty link of a node that
 *     stays reached (a write that only adds a link).  The park is undone
 *     by that node's own final write, once the parked node hangs in its
 *     final place.
 * Intermediate states may hold a node twice or out of order; the scan
 * reaches it all the same and a rerun rebuilds the tree.  Directories are
 * written deepest first (a new /lost+found exists before the root links
 * it), those whose old tree runs through another directory's children
 * before all others.  Every node write also clears the block past the 360
 * bytes an entry uses and counts a write in wrcnt.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/i18n.h"
#include "repair.h"

/* ---- the model of the blocks a directory's writes can change ---------------- */

struct mnode {
    uint64_t blk;        /* the block */
    uint64_t left;       /* current left link (0 when none or not an entry) */
    uint64_t right;      /* current right link */
    bool entry;          /* the block is a directory or file entry now */
    uint32_t kid;        /* te index when a child of the directory, FSCK_NONE otherwise */
    uint32_t a;          /* reach mark, epoch A */
    uint32_t b;          /* reach mark, epoch B */
};

struct model {
    struct fsck_ctx *c;
    uint32_t dir;        /* te index of the directory */
    struct mnode *n;     /* nodes */
    size_t count;        /* used */
    size_t cap;          /* allocated */
    uint64_t *keys;      /* block + 1, 0 empty */
    uint32_t *vals;      /* index into n */
    size_t hcap;         /* power of two */
    uint64_t root;       /* the directory's subtree pointer now */
    uint32_t epoch;      /* last mark value used */
    uint32_t *stack;     /* walk stack */
    size_t stack_cap;    /* allocated */
    uint8_t *buf;        /* one block */
};

static size_t mhash(uint64_t k, size_t cap)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static uint32_t m_find(const struct model *m, uint64_t blk)
{
    if (m->hcap == 0)
        return FSCK_NONE;
    for (size_t j = mhash(blk + 1, m->hcap);; j = (j + 1) & (m->hcap - 1)) {
        if (m->keys[j] == 0)
            return FSCK_NONE;
        if (m->keys[j] == blk + 1)
            return m->vals[j];
    }
}

static bool m_rehash(struct model *m)
{
    size_t ncap = m->hcap ? m->hcap * 2 : 64;
    uint64_t *nk = calloc(ncap, sizeof(*nk));
    uint32_t *nv = calloc(ncap, sizeof(*nv));
    if (nk == NULL || nv == NULL) {
        free(nk);
        free(nv);
        return false;
    }
    for (size_t i = 0; i < m->count; i++) {
        size_t j = mhash(m->n[i].blk + 1, ncap);
        while (nk[j] != 0)
            j = (j + 1) & (ncap - 1);
        nk[j] = m->n[i].blk + 1;
        nv[j] = (uint32_t)i;
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->hcap = ncap;
    return true;
}

/* Add blk (read from disk) to the model; its index, FSCK_NONE on no memory or error. */
static uint32_t m_add(struct model *m, uint64_t blk, enum lanyfs_err *rc)
{
    uint32_t have = m_find(m, blk);
    if (have != FSCK_NONE)
        return have;
    struct fsck_ctx *c = m->c;
    if (m->count == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        void *p = realloc(m->n, ncap * sizeof(*m->n));
        if (p == NULL)
            goto nomem;
        m->n = p;
        m->cap = ncap;
    }
    if ((m->count + 1) * 2 > m->hcap && !m_rehash(m))
        goto nomem;
    struct mnode *x = &m->n[m->count];
    memset(x, 0, sizeof(*x));
    x->blk = blk;
    x->kid = FSCK_NONE;
    if (blk != 0 && blk < c->nblocks &&
        lanyfs_fs_read_block(c->fs, blk, m->buf, NULL) == LANYFS_OK) {
        struct lanyfs_entry e;
        lanyfs_entry_decode(&e, m->buf);
        if (lanyfs_entry_is_dir(&e) || lanyfs_entry_is_file(&e)) {
            x->entry = true;
            x->left = e.left;
            x->right = e.right;
        }
    }
    size_t j = mhash(blk + 1, m->hcap);
    while (m->keys[j] != 0)
        j = (j + 1) & (m->hcap - 1);
    m->keys[j] = blk + 1;
    m->vals[j] = (uint32_t)m->count;
    return (uint32_t)m->count++;
nomem:
    *rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    return FSCK_NONE;
}

static bool push(struct model *m, size_t *sp, uint32_t v)
{
    if (*sp == m->stack_cap) {
        size_t ncap = m->stack_cap ? m->stack_cap * 2 : 64;
        void *p = realloc(m->stack, ncap * sizeof(*m->stack));
        if (p == NULL)
            return false;
        m->stack = p;
        m->stack_cap = ncap;
    }
    m->stack[(*sp)++] = v;
    return true;
}

/* Close the model over every entry reached from the blocks already in it. */
static enum lanyfs_err m_close(struct model *m)
{
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t i = 0; i < m->count && rc == LANYFS_OK; i++) {
        if (!m->n[i].entry)
            continue;
        uint64_t l = m->n[i].left, r = m->n[i].right;
        if (l != 0 && l < m->c->nblocks)
            m_add(m, l, &rc);
        if (rc == LANYFS_OK && r != 0 && r < m->c->nblocks)
            m_add(m, r, &rc);
    }
    return rc;
}

static void m_free(struct model *m)
{
    free(m->n);
    free(m->keys);
    free(m->vals);
    free(m->stack);
    free(m->buf);
}

/* The model of directory d as the disk stands now. */
static enum lanyfs_err m_build(struct model *m, struct fsck_ctx *c, uint32_t d)
{
    memset(m, 0, sizeof(*m));
    m->c = c;
    m->dir = d;
    m->buf = malloc(c->g.blocksize);
    if (m->buf == NULL)
        return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    enum lanyfs_err rc = LANYFS_OK;
    struct tentry *dir = &c->te[d];
    m->root = 0;
    if (!dir->is_new) {
        rc = fsck_read(c, dir->block, m->buf);
        if (rc != LANYFS_OK)
            return rc;
        struct lanyfs_entry e;
        lanyfs_entry_decode(&e, m->buf);
        m->root = e.subtree;
    }
    if (m->root != 0 && m->root < c->nblocks)
        m_add(m, m->root, &rc);
    for (size_t k = 0; k < dir->nkids && rc == LANYFS_OK; k++) {
        uint32_t idx = m_add(m, c->te[dir->kids[k]].block, &rc);
        if (idx != FSCK_NONE)
            m->n[idx].kid = dir->kids[k];
    }
    if (rc == LANYFS_OK)
        rc = m_close(m);
    return rc;
}

/*
 * Mark (with a fresh epoch in field a or b) every node reached from root;
 * node `over` (FSCK_NONE: none) is taken to have links ol/or.
 */
static uint32_t m_reach(struct model *m, uint64_t root, uint32_t over, uint64_t ol, uint64_t orr,
                        bool into_b)
{
    uint32_t ep = ++m->epoch;
    size_t sp = 0;
    uint32_t r = root ? m_find(m, root) : FSCK_NONE;
    if (r != FSCK_NONE && m->n[r].entry) {
        if (into_b)
            m->n[r].b = ep;
        else
            m->n[r].a = ep;
        if (!push(m, &sp, r))
            return ep;
    }
    while (sp > 0) {
        uint32_t i = m->stack[--sp];
        uint64_t links[2] = {m->n[i].left, m->n[i].right};
        if (i == over) {
            links[0] = ol;
            links[1] = orr;
        }
        for (int k = 0; k < 2; k++) {
            if (links[k] == 0)
                continue;
            uint32_t j = m_find(m, links[k]);
            if (j == FSCK_NONE || !m->n[j].entry)
                continue;
            uint32_t *mark = into_b ? &m->n[j].b : &m->n[j].a;
            if (*mark == ep)
                continue;
            *mark = ep;
            if (!push(m, &sp, j))
                return ep;
        }
    }
    return ep;
}

/* ---- planning ----------------------------------------------------------------- */

static int te_name_cmp(const struct tentry *a, const struct tentry *b)
{
    size_t n = a->e.name_len < b->e.name_len ? a->e.name_len : b->e.name_len;
    int r = memcmp(a->e.name, b->e.name, n);
    if (r != 0)
        return r;
    return a->e.name_len < b->e.name_len ? -1 : a->e.name_len > b->e.name_len;
}

/* Balanced tree over kids[lo..hi) (sorted ascending); returns the root's block. */
static uint64_t build_balanced(struct fsck_ctx *c, const uint32_t *kids, size_t lo, size_t hi)
{
    if (lo >= hi)
        return 0;
    size_t mid = lo + (hi - lo) / 2;
    struct tentry *t = &c->te[kids[mid]];
    t->fin_left = build_balanced(c, kids, mid + 1, hi); /* greater names */
    t->fin_right = build_balanced(c, kids, lo, mid);    /* smaller names */
    return t->block;
}

/* Insert te x as a leaf of d's final tree. */
static void insert_leaf(struct fsck_ctx *c, struct tentry *d, uint32_t x)
{
    struct tentry *t = &c->te[x];
    t->fin_left = t->fin_right = 0;
    if (d->fin_root == 0) {
        d->fin_root = t->block;
        return;
    }
    uint64_t cur = d->fin_root;
    for (size_t guard = 0; guard <= d->nkids; guard++) {
        struct tentry *n = &c->te[c->owner[cur]];
        uint64_t *link = te_name_cmp(n, t) < 0 ? &n->fin_left : &n->fin_right;
        if (*link == 0) {
            *link = t->block;
            return;
        }
        cur = *link;
    }
}

/* Insert kids[lo..hi) (sorted) median first. */
static void insert_median(struct fsck_ctx *c, struct tentry *d, const uint32_t *kids, size_t lo,
                          size_t hi)
{
    if (lo >= hi)
        return;
    size_t mid = lo + (hi - lo) / 2;
    insert_leaf(c, d, kids[mid]);
    insert_median(c, d, kids, lo, mid);
    insert_median(c, d, kids, mid + 1, hi);
}

/* Is node x, no child of m's directory, an entry another directory holds? */
static bool other_dirs_child(const struct model *m, const struct mnode *x)
{
    const struct fsck_ctx *c = m->c;
    return x->kid == FSCK_NONE && x->blk < c->nblocks && c->kind[x->blk] == OWN_ENTRY &&
           c->owner[x->blk] != FSCK_NONE && c->te[c->owner[x->blk]].parent != m->dir;
}

/*
 * Does the tree on disk reach some of d's children only below a node that
 * is another directory's child (a rename caught halfway: the entry moved,
 * its old links still hold d's tree)?  Then d is written before that
 * directory, whose writes relink the node.  Field b takes the marks.
 */
static bool kids_below_foreign(struct model *m)
{
    uint32_t r = m->root != 0 ? m_find(m, m->root) : FSCK_NONE;
    if (r == FSCK_NONE || !m->n[r].entry)
        return false;
    struct bframe {
        uint32_t node;
        bool below; /* a node of another directory lies above it */
    };
    struct bframe *st = malloc((m->count + 1) * sizeof(*st));
    if (st == NULL)
        return false;
    uint32_t ep = ++m->epoch;
    size_t sp = 0;
    bool found = false;
    st[sp++] = (struct bframe){r, false};
    m->n[r].b = ep;
    while (sp > 0 && !found) {
        struct bframe f = st[--sp];
        const struct mnode *x = &m->n[f.node];
        if (x->kid != FSCK_NONE && f.below) {
            found = true;
            break;
        }
        bool other = other_dirs_child(m, x);
        uint64_t links[2] = {x->left, x->right};
        for (int k = 0; k < 2; k++) {
            uint32_t j = links[k] != 0 ? m_find(m, links[k]) : FSCK_NONE;
            if (j == FSCK_NONE || !m->n[j].entry || m->n[j].b == ep || sp > m->count)
                continue;
            m->n[j].b = ep;
            st[sp++] = (struct bframe){j, f.below || other};
        }
    }
    free(st);
    return found;
}

/*
 * Is the tree on disk exactly a search tree of d's children?  Kids reached
 * are marked in m (field a = epoch), *foreign tells whether it reaches a
 * node that is a child of another directory.
 */
static bool tree_is_valid(struct model *m, bool *foreign)
{
    struct fsck_ctx *c = m->c;
    struct tentry *d = &c->te[m->dir];
    *foreign = false;
    bool ok = true;
    uint32_t ep = ++m->epoch; /* marks start at 0: every walk takes a new epoch */
    if (m->root == 0)
        return true;
    uint32_t r = m_find(m, m->root);
    if (r == FSCK_NONE || !m->n[r].entry)
        return false;
    /* Depth-first with bounds: (node, lower bound te, upper bound te). */
    struct frame {
        uint32_t node;
        uint32_t lo;  /* names must be greater than this te's, FSCK_NONE none */
        uint32_t hi;  /* names must be smaller */
    };
    size_t cap = m->count + 1, sp = 0;
    struct frame *st = malloc(cap * sizeof(*st));
    if (st == NULL)
        return false;
    st[sp++] = (struct frame){r, FSCK_NONE, FSCK_NONE};
    m->n[r].a = ep;
    while (sp > 0) {
        struct frame f = st[--sp];
        struct mnode *x = &m->n[f.node];
        if (x->kid == FSCK_NONE) {
            ok = false;
            if (other_dirs_child(m, x))
                *foreign = true;
            continue;
        }
        struct tentry *t = &c->te[x->kid];
        if (t->name_dirty)
            ok = false;
        if (f.lo != FSCK_NONE && te_name_cmp(t, &c->te[f.lo]) <= 0)
            ok = false;
        if (f.hi != FSCK_NONE && te_name_cmp(t, &c->te[f.hi]) >= 0)
            ok = false;
        uint64_t links[2] = {x->left, x->right};
        for (int k = 0; k < 2; k++) {
            if (links[k] == 0)
                continue;
            uint32_t j = m_find(m, links[k]);
            if (j == FSCK_NONE || !m->n[j].entry) {
                ok = false; /* a link out of the device or to no entry */
                continue;
            }
            if (m->n[j].a == ep) {
                ok = false; /* reached twice: a cycle or a shared node */
                continue;
            }
            m->n[j].a = ep;
            if (sp < cap)
                st[sp++] = k == 0 ? (struct frame){j, x->kid, f.hi}
                                  : (struct frame){j, f.lo, x->kid};
        }
    }
    free(st);
    (void)d;
    return ok;
}

enum lanyfs_err fsck_tree_plan(struct fsck_ctx *c)
{
    enum lanyfs_err rc = LANYFS_OK;
    uint32_t *fresh = NULL;
    for (size_t d = 0; d < c->nte && rc == LANYFS_OK; d++) {
        struct tentry *dir = &c->te[d];
        if (dir->block == 0 || !lanyfs_entry_is_dir(&dir->e) || c->kind[dir->block] != OWN_ENTRY)
            continue;
        struct model m;
        rc = m_build(&m, c, (uint32_t)d);
        if (rc != LANYFS_OK) {
            m_free(&m);
            break;
        }
        bool foreign = false;
        bool through = !dir->is_new && kids_below_foreign(&m);
        bool valid = dir->is_new ? true : tree_is_valid(&m, &foreign);
        uint32_t ep = m.epoch;
        size_t nfresh = 0;
        free(fresh);
        fresh = malloc((dir->nkids + 1) * sizeof(*fresh));
        if (fresh == NULL) {
            rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            m_free(&m);
            break;
        }
        for (size_t k = 0; k < dir->nkids; k++) {
            uint32_t idx = m_find(&m, c->te[dir->kids[k]].block);
            bool reached = !dir->is_new && idx != FSCK_NONE && m.n[idx].a == ep;
            if (!reached)
                fresh[nfresh++] = dir->kids[k];
        }
        if (valid && !dir->is_new && nfresh == 0) {
            /* Nothing to change. */
            dir->fin_root = m.root;
            for (size_t k = 0; k < dir->nkids; k++) {
                struct tentry *t = &c->te[dir->kids[k]];
                uint32_t idx = m_find(&m, t->block);
                t->fin_left = m.n[idx].left;
                t->fin_right = m.n[idx].right;
            }
        } else if (valid) {
            dir->fin_root = m.root;
            for (size_t k = 0; k < dir->nkids; k++) {
                struct tentry *t = &c->te[dir->kids[k]];
                uint32_t idx = m_find(&m, t->block);
                t->fin_left = idx != FSCK_NONE ? m.n[idx].left : 0;
                t->fin_right = idx != FSCK_NONE ? m.n[idx].right : 0;
            }
            insert_median(c, dir, fresh, 0, nfresh);
            c->st.links_added += nfresh;
            /* TRANSLATORS: English keeps one form, as it always printed. */
            fsck_note(c,
                      ngettext("directory %" PRIu64 ": %zu entries linked in",
                               "directory %" PRIu64 ": %zu entries linked in", nfresh),
                      dir->block, nfresh);
        } else if (c->allow_tree) {
            dir->tree_rebuild = true;
            dir->fin_root = build_balanced(c, dir->kids, 0, dir->nkids);
            c->st.dirs_rebuilt++;
            fsck_note(c,
                      ngettext("directory %" PRIu64 ": tree rebuilt over %zu entries",
                               "directory %" PRIu64 ": tree rebuilt over %zu entries", dir->nkids),
                      dir->block, dir->nkids);
        } else {
            /* A broken tree the answers keep: leave it as it is. */
            dir->fin_root = m.root;
            for (size_t k = 0; k < dir->nkids; k++) {
                struct tentry *t = &c->te[dir->kids[k]];
                uint32_t idx = m_find(&m, t->block);
                t->fin_left = idx != FSCK_NONE ? m.n[idx].left : 0;
                t->fin_right = idx != FSCK_NONE ? m.n[idx].right : 0;
                t->name_dirty = false;
            }
        }
        /* Directories whose tree runs through others' children are written first. */
        dir->marks &= ~(unsigned)(FSCK_M_FOREIGN | FSCK_M_THROUGH);
        if (foreign)
            dir->marks |= FSCK_M_FOREIGN;
        if (through)
            dir->marks |= FSCK_M_THROUGH;
        m_free(&m);
    }
    free(fresh);
    return rc;
}

/* ---- writing ------------------------------------------------------------------ */

/* Write node x's final links (and name) of directory m->dir, or park: set one link. */
static enum lanyfs_err write_links(struct model *m, uint32_t x, uint64_t left, uint64_t right,
                                   bool with_name)
{
    struct fsck_ctx *c = m->c;
    struct mnode *n = &m->n[x];
    enum lanyfs_err rc = fsck_read(c, n->blk, m->buf);
    if (rc != LANYFS_OK)
        return rc;
    struct lanyfs_entry e;
    lanyfs_entry_decode(&e, m->buf);
    e.left = left;
    e.right = right;
    if (with_name && n->kid != FSCK_NONE) {
        const struct tentry *t = &c->te[n->kid];
        memcpy(e.name, t->e.name, sizeof(e.name));
        e.name_len = t->e.name_len;
    }
    e.wrcnt++;
    lanyfs_entry_encode(&e, m->buf);
    memset(m->buf + LANYFS_EN_USED, 0, c->g.blocksize - LANYFS_EN_USED);
    rc = fsck_write(c, n->blk, m->buf);
    if (rc != LANYFS_OK)
        return rc;
    n->left = left;
    n->right = right;
    if (with_name && n->kid != FSCK_NONE) {
        c->te[n->kid].name_dirty = false;
        c->te[n->kid].must_write = false;
    }
    return LANYFS_OK;
}

/* Write the directory's subtree pointer (a new directory: its whole block). */
static enum lanyfs_err write_root(struct model *m)
{
    struct fsck_ctx *c = m->c;
    struct tentry *d = &c->te[m->dir];
    enum lanyfs_err rc;
    struct lanyfs_entry e;
    if (d->is_new) {
        memset(m->buf, 0, c->g.blocksize);
        e = d->e;
        e.type = LANYFS_TYPE_DIR;
        e.wrcnt = 1;
        e.left = d->fin_left;
        e.right = d->fin_right;
        e.subtree = d->fin_root;
        e.size = 0;
    } else {
        rc = fsck_read(c, d->block, m->buf);
        if (rc != LANYFS_OK)
            return rc;
        lanyfs_entry_decode(&e, m->buf);
        e.subtree = d->fin_root;
        e.wrcnt++;
    }
    lanyfs_entry_encode(&e, m->buf);
    memset(m->buf + LANYFS_EN_USED, 0, c->g.blocksize - LANYFS_EN_USED);
    rc = fsck_write(c, d->block, m->buf);
    if (rc != LANYFS_OK)
        return rc;
    if (d->is_new) {
        d->is_new = false; /* it exists now: its parent treats it as any node */
        d->name_dirty = false;
    }
    m->root = d->fin_root;
    return LANYFS_OK;
}

static bool node_pending(const struct model *m, uint32_t i)
{
    const struct mnode *n = &m->n[i];
    if (n->kid == FSCK_NONE)
        return false;
    const struct tentry *t = &m->c->te[n->kid];
    return n->left != t->fin_left || n->right != t->fin_right || t->name_dirty || t->must_write;
}

/* Post-order of the final tree (node indexes of the model) into out; returns the count. */
static size_t post_order(struct model *m, uint32_t *out, size_t max)
{
    struct fsck_ctx *c = m->c;
    struct tentry *d = &c->te[m->dir];
    size_t n = 0, sp = 0;
    /* Iterative post-order: a node is emitted when both its children are. */
    struct pf {
        uint32_t i;
        int state;
    } *st = malloc((max + 1) * sizeof(*st));
    if (st == NULL)
        return 0;
    uint32_t r = d->fin_root ? m_find(m, d->fin_root) : FSCK_NONE;
    uint32_t ep = ++m->epoch;
    if (r != FSCK_NONE && m->n[r].kid != FSCK_NONE) {
        st[sp++] = (struct pf){r, 0};
        m->n[r].b = ep;
    }
    while (sp > 0 && n < max) {
        struct pf *f = &st[sp - 1];
        struct tentry *t = &c->te[m->n[f->i].kid];
        if (f->state < 2) {
            uint64_t link = f->state == 0 ? t->fin_left : t->fin_right;
            f->state++;
            uint32_t j = link ? m_find(m, link) : FSCK_NONE;
            if (j != FSCK_NONE && m->n[j].kid != FSCK_NONE && m->n[j].b != ep && sp <= max) {
                m->n[j].b = ep;
                st[sp++] = (struct pf){j, 0};
            }
            continue;
        }
        out[n++] = f->i;
        sp--;
    }
    free(st);
    return n;
}

/* Would node w with links l/r lose a child reached now (epoch ep_now in a)? */
static bool loses_with(struct model *m, uint32_t w, uint64_t l, uint64_t r, uint32_t ep_now)
{
    if (m->n[w].a != ep_now)
        return false; /* nothing reaches it: its links reach nothing yet */
    uint32_t ep = m_reach(m, m->root, w, l, r, true);
    for (size_t i = 0; i < m->count; i++)
        if (m->n[i].a == ep_now && m->n[i].b != ep && m->n[i].kid != FSCK_NONE)
            return true;
    return false;
}

/* Would writing candidate w (a node index, or FSCK_NONE for the root pointer) lose a node? */
static bool loses(struct model *m, uint32_t w, uint32_t ep_now)
{
    struct fsck_ctx *c = m->c;
    struct tentry *d = &c->te[m->dir];
    if (w != FSCK_NONE) {
        const struct tentry *t = &c->te[m->n[w].kid];
        return loses_with(m, w, t->fin_left, t->fin_right, ep_now);
    }
    uint32_t ep = m_reach(m, d->fin_root, FSCK_NONE, 0, 0, true);
    for (size_t i = 0; i < m->count; i++)
        if (m->n[i].a == ep_now && m->n[i].b != ep && m->n[i].kid != FSCK_NONE)
            return true;
    return false;
}

/*
 * Before the tree is switched: a child of the directory that links another
 * directory's child (a rename caught halfway left it there) drops that link
 * first, where no child of this directory hangs below it.  Otherwise a cut
 * just after the switch would leave that entry in two live trees, and the
 * next run could not tell which one is its own; before the switch, a tree
 * the driver left stale (SPEC-9.12) reached it only through a freed node,
 * which the scan does not let outrank a live tree.
 */
static enum lanyfs_err drop_foreign_links(struct model *m)
{
    struct fsck_ctx *c = m->c;
    /* A dropped link loses no child, so the children reached stay so. */
    uint32_t ep_now = m_reach(m, m->root, FSCK_NONE, 0, 0, false);
    for (size_t i = 0; i < m->count; i++) {
        struct mnode *x = &m->n[i];
        if (x->kid == FSCK_NONE || x->a != ep_now)
            continue;
        const struct tentry *t = &c->te[x->kid];
        uint64_t links[2] = {x->left, x->right}, fin[2] = {t->fin_left, t->fin_right};
        bool drop = false;
        for (int k = 0; k < 2; k++) {
            uint32_t j = links[k] != 0 ? m_find(m, links[k]) : FSCK_NONE;
            if (j != FSCK_NONE && links[k] != fin[k] && m->n[j].entry &&
                other_dirs_child(m, &m->n[j])) {
                links[k] = 0;
                drop = true;
            }
        }
        if (!drop || loses_with(m, (uint32_t)i, links[0], links[1], ep_now))
            continue;
        enum lanyfs_err rc = write_links(m, (uint32_t)i, links[0], links[1], false);
        if (rc != LANYFS_OK)
            return rc;
    }
    return LANYFS_OK;
}

/* Park every child the write w would lose on an empty link of a node that stays reached. */
static enum lanyfs_err park_for(struct model *m, uint32_t w, uint32_t ep_now, bool *parked)
{
    struct fsck_ctx *c = m->c;
    struct tentry *d = &c->te[m->dir];
    *parked = false;
    for (size_t guard = 0; guard < m->count + 1; guard++) {
        uint32_t ep;
        uint64_t root = w == FSCK_NONE ? d->fin_root : m->root;
        uint64_t ol = 0, orr = 0;
        if (w != FSCK_NONE) {
            ol = c->te[m->n[w].kid].fin_left;
            orr = c->te[m->n[w].kid].fin_right;
        }
        ep = m_reach(m, root, w, ol, orr, true);
        uint32_t lost = FSCK_NONE;
        for (size_t i = 0; i < m->count && lost == FSCK_NONE; i++)
            if (m->n[i].a == ep_now && m->n[i].b != ep && m->n[i].kid != FSCK_NONE)
                lost = (uint32_t)i;
        if (lost == FSCK_NONE)
            return LANYFS_OK;
        /* A node that stays reached, with an empty link (as it will stand after w). */
        uint32_t p = FSCK_NONE;
        int side = 0;
        for (size_t i = 0; i < m->count && p == FSCK_NONE; i++) {
            struct mnode *x = &m->n[i];
            if (x->b != ep || !x->entry || i == lost || (uint32_t)i == w)
                continue;
            for (int k = 0; k < 2 && p == FSCK_NONE; k++) {
                uint64_t link = k == 0 ? x->left : x->right;
                uint32_t j = link ? m_find(m, link) : FSCK_NONE;
                if (link == 0 || j == FSCK_NONE || !m->n[j].entry) {
                    p = (uint32_t)i;
                    side = k;
                }
            }
        }
        if (p == FSCK_NONE)
            return LANYFS_OK; /* nowhere to park: the caller goes on regardless */
        uint64_t nl = side == 0 ? m->n[lost].blk : m->n[p].left;
        uint64_t nr = side == 1 ? m->n[lost].blk : m->n[p].right;
        enum lanyfs_err rc = write_links(m, p, nl, nr, false);
        if (rc != LANYFS_OK)
            return rc;
        *parked = true;
        /* What was reached before still is; the parked node is reached again. */
        m_reach(m, m->root, FSCK_NONE, 0, 0, false);
        ep_now = m->epoch;
    }
    return LANYFS_OK;
}

/* Write directory d's tree. */
static enum lanyfs_err write_dir(struct fsck_ctx *c, uint32_t d)
{
    struct model m;
    enum lanyfs_err rc = m_build(&m, c, d);
    uint32_t *order = NULL;
    if (rc != LANYFS_OK)
        goto out;
    struct tentry *dir = &c->te[d];
    size_t max = m.count + 1;
    order = malloc(max * sizeof(*order));
    if (order == NULL) {
        rc = lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    size_t norder = post_order(&m, order, max);
    size_t limit = 8 * (norder + 2) + 64;
    if (m.root != dir->fin_root && !dir->is_new) {
        rc = drop_foreign_links(&m);
        if (rc != LANYFS_OK)
            goto out;
    }
    for (size_t step = 0; step < limit; step++) {
        bool root_pending = m.root != dir->fin_root || dir->is_new;
        bool any = root_pending;
        for (size_t k = 0; k < norder && !any; k++)
            any = node_pending(&m, order[k]);
        if (!any)
            goto out;
        m_reach(&m, m.root, FSCK_NONE, 0, 0, false);
        uint32_t ep_now = m.epoch;
        uint32_t first = FSCK_NONE;
        bool first_is_root = false, done = false;
        for (size_t k = 0; k < norder && !done; k++) {
            uint32_t i = order[k];
            if (!node_pending(&m, i))
                continue;
            if (first == FSCK_NONE)
                first = i;
            if (!loses(&m, i, ep_now)) {
                const struct tentry *t = &c->te[m.n[i].kid];
                rc = write_links(&m, i, t->fin_left, t->fin_right, true);
                if (rc != LANYFS_OK)
                    goto out;
                done = true;
            }
        }
        if (!done && root_pending) {
            if (first == FSCK_NONE)
                first_is_root = true;
            if (!loses(&m, FSCK_NONE, ep_now)) {
                rc = write_root(&m);
                if (rc != LANYFS_OK)
                    goto out;
                done = true;
            }
        }
        if (done)
            continue;
        /* Stuck: park what a pending write would lose, then make it.  While
         * the directory's pointer is still to be switched, that write is
         * the switch: what it would lose can always be hung on the new
         * tree as it stands (its last nodes have empty links), where a
         * node's write may leave nowhere to park, as when it makes the old
         * tree's top a leaf: then only that node stays reached. */
        uint32_t w = first_is_root || root_pending ? FSCK_NONE : first;
        bool parked;
        rc = park_for(&m, w, ep_now, &parked);
        if (rc != LANYFS_OK)
            goto out;
        if (w == FSCK_NONE) {
            rc = write_root(&m);
        } else {
            const struct tentry *t = &c->te[m.n[w].kid];
            rc = write_links(&m, w, t->fin_left, t->fin_right, true);
        }
        if (rc != LANYFS_OK)
            goto out;
    }
    /* The step limit: finish with plain writes (still correct once complete). */
    for (size_t k = 0; k < norder; k++) {
        if (!node_pending(&m, order[k]))
            continue;
        const struct tentry *t = &c->te[m.n[order[k]].kid];
        rc = write_links(&m, order[k], t->fin_left, t->fin_right, true);
        if (rc != LANYFS_OK)
            goto out;
    }
    if (m.root != dir->fin_root || dir->is_new)
        rc = write_root(&m);
out:
    free(order);
    m_free(&m);
    return rc;
}

static struct fsck_ctx *order_ctx;

static int cmp_dirs(const void *pa, const void *pb)
{
    const struct tentry *a = &order_ctx->te[*(const uint32_t *)pa];
    const struct tentry *b = &order_ctx->te[*(const uint32_t *)pb];
    if (a->is_new != b->is_new)
        return a->is_new ? -1 : 1; /* a new directory exists before anything links it */
    /* Children below another's child first: that one's writes would drop them. */
    bool ta = (a->marks & FSCK_M_THROUGH) != 0, tb = (b->marks & FSCK_M_THROUGH) != 0;
    if (ta != tb)
        return ta ? -1 : 1;
    bool fa = (a->marks & FSCK_M_FOREIGN) != 0, fb = (b->marks & FSCK_M_FOREIGN) != 0;
    if (fa != fb)
        return fa ? -1 : 1;
    if (a->depth != b->depth)
        return a->depth > b->depth ? -1 : 1;
    return a->block < b->block ? -1 : a->block > b->block;
}

enum lanyfs_err fsck_tree_write(struct fsck_ctx *c)
{
    enum lanyfs_err rc = LANYFS_OK;
    uint32_t *dirs = malloc((c->nte + 1) * sizeof(*dirs));
    if (dirs == NULL)
        return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < c->nte; i++) {
        struct tentry *t = &c->te[i];
        if (t->block != 0 && lanyfs_entry_is_dir(&t->e) && c->kind[t->block] == OWN_ENTRY)
            dirs[n++] = (uint32_t)i;
    }
    order_ctx = c;
    qsort(dirs, n, sizeof(*dirs), cmp_dirs);
    for (size_t i = 0; i < n && rc == LANYFS_OK; i++)
        rc = write_dir(c, dirs[i]);
    /* Renamed or relinked entries whose directory needed no other change. */
    free(dirs);
    return rc;
}
