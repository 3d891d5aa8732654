/*
 * btree.c -- insert into and delete from a directory's search tree.
 *
 * The tree lives in the entries' own blocks with the REVERSED order of
 * SPEC-§5: at node N a name X goes left when strncmp(N.name, X) < 0.  The
 * changes are made to the in-memory inodes and reach the disk at writeback.
 * Every function here reads everything it needs before it changes the
 * first inode, so a failure leaves the tree in memory as it was; each
 * inode is saved for the caller's undo (wr_isave) before it changes.
 *
 * Correct mode deletes a node with two children by putting the leftmost
 * node of its right subtree (the next smaller name) in its place, and
 * refuses a tree with a link to a block that is no entry or outside the
 * device (LANYFS_E_CORRUPT): fsck repairs such a tree, the writer does not
 * build on it.
 *
 * Driver mode follows lanyfs_btree_add_inode, __lanyfs_btree_del_inode and
 * __lanyfs_btree_lookup (SPEC-§9.9, §9.14):
 *  - a link whose block cannot be read as an entry is absent to a lookup,
 *    fails an insert (EINVAL), makes a delete's descent report success
 *    without change, and fails a delete at the node (ENOENT);
 *  - the delete picks its case from the raw link values, and fails with
 *    ENOENT when the node has two children and the leftmost node of its
 *    right subtree is a leaf that is not its direct child.
 *
 * Every walk keeps a visited set, so a cycle on disk ends it with
 * LANYFS_E_CYCLE instead of the driver's unbounded recursion.
 */
#include <inttypes.h>
#include <string.h>

#include "writer_priv.h"

/*
 * The inode a link names: *out NULL and *bad false when there is no link,
 * *bad true when the link names a block that is no entry (or lies outside
 * the device, or cannot be read).  Only running out of memory fails.
 */
static enum lanyfs_err follow(struct lanyfs_writer *w, uint64_t blk, struct winode **out,
                              bool *bad, struct lanyfs_error *err)
{
    *out = NULL;
    *bad = false;
    if (blk == 0)
        return LANYFS_OK;
    struct lanyfs_error sub;
    enum lanyfs_err rc = wr_iget(w, blk, out, &sub);
    if (rc == LANYFS_E_NOMEM) {
        if (err)
            *err = sub;
        return rc;
    }
    if (rc != LANYFS_OK) {
        *out = NULL;
        *bad = true;
    }
    return LANYFS_OK;
}

/* The correct writer's refusal of a link that names no entry. */
static enum lanyfs_err bad_link(struct winode *from, uint64_t to, struct lanyfs_error *err)
{
    return lanyfs_fail(err, LANYFS_E_CORRUPT, from->blk,
                       "block %" PRIu64 " links to block %" PRIu64
                       ", which is no directory or file (run fsck-lanyfs)",
                       from->blk, to);
}

static enum lanyfs_err seen_once(struct lanyfs_blockset *seen, uint64_t blk, uint64_t dir,
                                 struct lanyfs_error *err)
{
    int r = lanyfs_blockset_add(seen, blk);
    if (r < 0)
        return lanyfs_fail(err, LANYFS_E_NOMEM, blk, "out of memory");
    if (r == 0)
        return lanyfs_fail(err, LANYFS_E_CYCLE, blk,
                           "directory %" PRIu64 ": block %" PRIu64
                           " is reached twice (a cycle in the tree)",
                           dir, blk);
    return LANYFS_OK;
}

enum lanyfs_err wr_tree_insert(struct lanyfs_writer *w, struct winode *dir, struct winode *child,
                               struct lanyfs_error *err)
{
    struct winode *cur;
    bool bad;
    struct lanyfs_blockset *seen = NULL;
    enum lanyfs_err rc = follow(w, dir->e.subtree, &cur, &bad, err);
    if (rc != LANYFS_OK)
        goto out;
    if (bad) {
        rc = drv(w) ? lanyfs_fail(err, LANYFS_E_INVAL, dir->blk,
                                  "directory %" PRIu64 ": its tree's root %" PRIu64
                                  " is no entry, so the 2012 driver cannot insert (EINVAL)",
                                  dir->blk, dir->e.subtree)
                    : bad_link(dir, dir->e.subtree, err);
        goto out;
    }
    if (cur == NULL) {
        wr_isave(w, dir);
        dir->e.subtree = child->blk;
        wr_idirty(w, dir);
        goto out;
    }
    seen = lanyfs_blockset_new();
    if (seen == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, dir->blk, "out of memory");
        goto out;
    }
    for (;;) {
        rc = seen_once(seen, cur->blk, dir->blk, err);
        if (rc != LANYFS_OK)
            break;
        int c = lanyfs_name_cmp(cur->e.name, child->e.name, child->e.name_len);
        if (c == 0 || cur == child) {
            rc = lanyfs_fail(err, LANYFS_E_EXISTS, cur->blk,
                             "directory %" PRIu64 " already holds that name (block %" PRIu64 ")",
                             dir->blk, cur->blk);
            break;
        }
        uint64_t *link = c < 0 ? &cur->e.left : &cur->e.right;
        struct winode *next;
        if ((rc = follow(w, *link, &next, &bad, err)) != LANYFS_OK)
            break;
        if (bad) {
            rc = drv(w) ? lanyfs_fail(err, LANYFS_E_INVAL, cur->blk,
                                      "block %" PRIu64 " links to block %" PRIu64
                                      ", which is no entry: the 2012 driver cannot insert "
                                      "(EINVAL)",
                                      cur->blk, *link)
                        : bad_link(cur, *link, err);
            break;
        }
        if (next == NULL) {
            wr_isave(w, cur);
            *link = child->blk;
            wr_idirty(w, cur);
            break;
        }
        cur = next;
    }
out:
    lanyfs_blockset_free(seen);
    return rc;
}

enum lanyfs_err wr_tree_lookup(struct lanyfs_writer *w, struct winode *dir, const char *name,
                               size_t len, struct winode **out, struct lanyfs_error *err)
{
    struct winode *cur;
    struct lanyfs_blockset *seen = NULL;
    uint64_t from = dir->blk, link = dir->e.subtree;
    bool bad;
    *out = NULL;
    enum lanyfs_err rc = follow(w, link, &cur, &bad, err);
    if (rc != LANYFS_OK)
        goto out;
    seen = lanyfs_blockset_new();
    if (seen == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, dir->blk, "out of memory");
        goto out;
    }
    for (;;) {
        if (bad) {
            if (drv(w))
                break; /* __lanyfs_btree_lookup: an unreadable link is absent */
            struct winode *src = NULL;
            wr_iget(w, from, &src, NULL);
            rc = src ? bad_link(src, link, err)
                     : lanyfs_fail(err, LANYFS_E_CORRUPT, from, "bad link in the tree");
            goto out;
        }
        if (cur == NULL)
            break;
        if ((rc = seen_once(seen, cur->blk, dir->blk, err)) != LANYFS_OK)
            goto out;
        int c = lanyfs_name_cmp(cur->e.name, (const uint8_t *)name, len);
        if (c == 0) {
            *out = cur;
            goto out;
        }
        from = cur->blk;
        link = c < 0 ? cur->e.left : cur->e.right;
        if ((rc = follow(w, link, &cur, &bad, err)) != LANYFS_OK)
            goto out;
    }
    rc = lanyfs_fail(err, LANYFS_E_NOTFOUND, dir->blk, "no such entry in directory block %" PRIu64,
                     dir->blk);
out:
    lanyfs_blockset_free(seen);
    return rc;
}

/* ENOENT from __lanyfs_btree_del_inode at the node (SPEC-§9.9). */
static enum lanyfs_err drv_cannot(struct winode *node, const char *why,
                                  struct lanyfs_error *err)
{
    return lanyfs_fail(err, LANYFS_E_NOTFOUND, node->blk,
                       "the 2012 driver cannot delete entry block %" PRIu64
                       " from its tree: %s (ENOENT)",
                       node->blk, why);
}

/* Replace in the parent (or the directory) the link that names node. */
static void relink(struct lanyfs_writer *w, struct winode *owner, uint64_t *link, uint64_t to)
{
    wr_isave(w, owner);
    *link = to;
    wr_idirty(w, owner);
}

/* The delete at the node, in the driver's cases (raw link values). */
static enum lanyfs_err delete_driver(struct lanyfs_writer *w, struct winode *dir,
                                     struct winode *owner, uint64_t *link, struct winode *node,
                                     struct lanyfs_blockset *seen, struct lanyfs_error *err)
{
    struct winode *r, *m, *next, *p, *tmp;
    bool bad;
    enum lanyfs_err rc;
    if (node->e.left == 0 && node->e.right == 0) {
        relink(w, owner, link, 0); /* case I: a leaf */
        return LANYFS_OK;
    }
    if (node->e.left == 0 || node->e.right == 0) {
        /* case III: one subtree, the left one preferred */
        uint64_t only = node->e.left ? node->e.left : node->e.right;
        if ((rc = follow(w, only, &tmp, &bad, err)) != LANYFS_OK)
            return rc;
        if (bad)
            return drv_cannot(node, "its only child is no entry", err);
        relink(w, owner, link, tmp->blk);
        return LANYFS_OK;
    }
    /* case II: two subtrees */
    if ((rc = follow(w, node->e.right, &r, &bad, err)) != LANYFS_OK)
        return rc;
    if (bad)
        return drv_cannot(node, "its right child is no entry", err);
    p = node;
    m = r;
    while (m->e.left != 0) {
        if ((rc = seen_once(seen, m->blk, dir->blk, err)) != LANYFS_OK)
            return rc;
        if ((rc = follow(w, m->e.left, &next, &bad, err)) != LANYFS_OK)
            return rc;
        if (bad)
            return lanyfs_fail(err, LANYFS_E_CORRUPT, m->blk,
                               "block %" PRIu64 " links to block %" PRIu64
                               ", which is no entry (the 2012 driver crashes here)",
                               m->blk, m->e.left);
        p = m;
        m = next;
    }
    if (p != node) {
        /* The leftmost node's child (lanyfs_btree_any_link: its right one) takes its place. */
        if (m->e.right == 0)
            return drv_cannot(node, "its replacement is a leaf below its right child", err);
        if ((rc = follow(w, m->e.right, &tmp, &bad, err)) != LANYFS_OK)
            return rc;
        if (bad)
            return drv_cannot(node, "its replacement's child is no entry", err);
        wr_isave(w, p);
        if (p->e.left == m->blk)
            p->e.left = tmp->blk;
        else if (p->e.right == m->blk)
            p->e.right = tmp->blk;
        wr_idirty(w, p);
        wr_isave(w, m);
        m->e.right = node->e.right;
        wr_idirty(w, m);
    }
    wr_isave(w, m);
    m->e.left = node->e.left;
    wr_idirty(w, m);
    relink(w, owner, link, m->blk);
    return LANYFS_OK;
}

/* The textbook delete at the node, every link checked first. */
static enum lanyfs_err delete_correct(struct lanyfs_writer *w, struct winode *dir,
                                      struct winode *owner, uint64_t *link, struct winode *node,
                                      struct lanyfs_blockset *seen, struct lanyfs_error *err)
{
    struct winode *l, *r, *m, *next, *mr;
    bool bad;
    enum lanyfs_err rc;
    if ((rc = follow(w, node->e.left, &l, &bad, err)) != LANYFS_OK)
        return rc;
    if (bad)
        return bad_link(node, node->e.left, err);
    if ((rc = follow(w, node->e.right, &r, &bad, err)) != LANYFS_OK)
        return rc;
    if (bad)
        return bad_link(node, node->e.right, err);
    if (l == NULL || r == NULL) {
        struct winode *only = l ? l : r;
        relink(w, owner, link, only ? only->blk : 0);
        return LANYFS_OK;
    }
    if (l == r || l == node || r == node)
        return lanyfs_fail(err, LANYFS_E_CYCLE, node->blk,
                           "directory %" PRIu64 ": the children of block %" PRIu64
                           " are not two distinct subtrees",
                           dir->blk, node->blk);
    if ((rc = follow(w, r->e.left, &m, &bad, err)) != LANYFS_OK)
        return rc;
    if (bad)
        return bad_link(r, r->e.left, err);
    if (m == NULL) {
        /* The right child has no greater child: it takes the node's place. */
        wr_isave(w, r);
        r->e.left = l->blk;
        wr_idirty(w, r);
        relink(w, owner, link, r->blk);
        return LANYFS_OK;
    }
    struct winode *p = r;
    for (;;) {
        if ((rc = seen_once(seen, m->blk, dir->blk, err)) != LANYFS_OK)
            return rc;
        if ((rc = follow(w, m->e.left, &next, &bad, err)) != LANYFS_OK)
            return rc;
        if (bad)
            return bad_link(m, m->e.left, err);
        if (next == NULL)
            break;
        p = m;
        m = next;
    }
    if ((rc = follow(w, m->e.right, &mr, &bad, err)) != LANYFS_OK)
        return rc;
    if (bad)
        return bad_link(m, m->e.right, err);
    if (m == l)
        return lanyfs_fail(err, LANYFS_E_CYCLE, m->blk,
                           "directory %" PRIu64 ": block %" PRIu64 " is reached twice",
                           dir->blk, m->blk);
    wr_isave(w, p);
    p->e.left = mr ? mr->blk : 0;
    wr_idirty(w, p);
    wr_isave(w, m);
    m->e.left = l->blk;
    m->e.right = r->blk;
    wr_idirty(w, m);
    relink(w, owner, link, m->blk);
    return LANYFS_OK;
}

enum lanyfs_err wr_tree_delete(struct lanyfs_writer *w, struct winode *dir, struct winode *node,
                               bool *removed, struct lanyfs_error *err)
{
    struct winode *owner = dir, *cur;
    uint64_t *link = &dir->e.subtree;
    struct lanyfs_blockset *seen = NULL;
    bool bad;
    if (removed)
        *removed = false;
    enum lanyfs_err rc = follow(w, dir->e.subtree, &cur, &bad, err);
    if (rc != LANYFS_OK)
        goto out;
    seen = lanyfs_blockset_new();
    if (seen == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, dir->blk, "out of memory");
        goto out;
    }
    /* Find the node by its name, remembering the link that names it. */
    for (;;) {
        if (bad) {
            if (drv(w))
                goto out; /* the driver's descent: an unreadable link counts as success */
            rc = bad_link(owner, *link, err);
            goto out;
        }
        if (cur == NULL || cur == node)
            break;
        if ((rc = seen_once(seen, cur->blk, dir->blk, err)) != LANYFS_OK)
            goto out;
        int c = lanyfs_name_cmp(cur->e.name, node->e.name, node->e.name_len);
        if (c == 0)
            break; /* same name, other block: not the node we were given */
        owner = cur;
        link = c < 0 ? &cur->e.left : &cur->e.right;
        if ((rc = follow(w, *link, &cur, &bad, err)) != LANYFS_OK)
            goto out;
    }
    if (cur != node) {
        rc = lanyfs_fail(err, LANYFS_E_NOTFOUND, node->blk,
                         "entry block %" PRIu64 " is not in the tree of directory %" PRIu64,
                         node->blk, dir->blk);
        goto out;
    }
    if ((rc = seen_once(seen, node->blk, dir->blk, err)) != LANYFS_OK)
        goto out;
    rc = drv(w) ? delete_driver(w, dir, owner, link, node, seen, err)
                : delete_correct(w, dir, owner, link, node, seen, err);
    if (rc == LANYFS_OK && removed)
        *removed = true;
out:
    lanyfs_blockset_free(seen);
    return rc;
}
