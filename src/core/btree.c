/*
 * btree.c -- insert into and delete from a directory's search tree.
 *
 * The tree lives in the entries' own blocks with the REVERSED order of
 * SPEC-§5: at node N a name X goes left when strncmp(N.name, X) < 0.  The
 * changes are made to the in-memory inodes and reach the disk at writeback.
 *
 * Deletion of a node with two children puts the leftmost node of its right
 * subtree (the next smaller name) in its place.  The 2012 driver fails
 * with ENOENT when that node is a leaf and not the deleted node's direct
 * child (SPEC-§9.9); in driver mode wr_tree_delete does the same, changing
 * nothing.  Links to blocks outside the device or of other types are
 * treated as absent, as the driver does (SPEC-§9.14).  Every descent keeps
 * a visited set, so a cycle on disk ends the walk with LANYFS_E_CYCLE.
 */
#include <inttypes.h>
#include <string.h>

#include "writer_priv.h"

/* The inode a link names, or NULL when the driver would treat it as absent. */
static enum lanyfs_err follow(struct lanyfs_writer *w, uint64_t blk, struct winode **out,
                              struct lanyfs_error *err)
{
    *out = NULL;
    if (blk == 0 || blk >= w->g->blocks)
        return LANYFS_OK;
    struct lanyfs_error sub;
    enum lanyfs_err rc = wr_iget(w, blk, out, &sub);
    if (rc == LANYFS_E_BADTYPE) {
        *out = NULL;
        return LANYFS_OK;
    }
    if (rc != LANYFS_OK && err)
        *err = sub;
    return rc;
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
    enum lanyfs_err rc = follow(w, dir->e.subtree, &cur, err);
    if (rc != LANYFS_OK)
        return rc;
    if (cur == NULL) {
        dir->e.subtree = child->blk;
        wr_idirty(w, dir);
        return LANYFS_OK;
    }
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    if (seen == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, dir->blk, "out of memory");
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
        rc = follow(w, *link, &next, err);
        if (rc != LANYFS_OK)
            break;
        if (next == NULL) {
            *link = child->blk;
            wr_idirty(w, cur);
            break;
        }
        cur = next;
    }
    lanyfs_blockset_free(seen);
    return rc;
}

enum lanyfs_err wr_tree_lookup(struct lanyfs_writer *w, struct winode *dir, const char *name,
                               size_t len, struct winode **out, struct lanyfs_error *err)
{
    struct winode *cur;
    *out = NULL;
    enum lanyfs_err rc = follow(w, dir->e.subtree, &cur, err);
    if (rc != LANYFS_OK)
        return rc;
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    if (seen == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, dir->blk, "out of memory");
    rc = LANYFS_E_NOTFOUND;
    while (cur != NULL) {
        enum lanyfs_err src = seen_once(seen, cur->blk, dir->blk, err);
        if (src != LANYFS_OK) {
            rc = src;
            break;
        }
        int c = lanyfs_name_cmp(cur->e.name, (const uint8_t *)name, len);
        if (c == 0) {
            *out = cur;
            rc = LANYFS_OK;
            break;
        }
        src = follow(w, c < 0 ? cur->e.left : cur->e.right, &cur, err);
        if (src != LANYFS_OK) {
            rc = src;
            break;
        }
    }
    lanyfs_blockset_free(seen);
    if (rc == LANYFS_E_NOTFOUND)
        lanyfs_fail(err, rc, dir->blk, "no such entry in directory block %" PRIu64, dir->blk);
    return rc;
}

enum lanyfs_err wr_tree_delete(struct lanyfs_writer *w, struct winode *dir, struct winode *node,
                               struct lanyfs_error *err)
{
    struct winode *parent = dir, *cur;
    uint64_t *link = &dir->e.subtree;
    enum lanyfs_err rc = follow(w, dir->e.subtree, &cur, err);
    if (rc != LANYFS_OK)
        return rc;
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    if (seen == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, dir->blk, "out of memory");

    /* Find the node by its name, remembering the link that names it. */
    while (cur != NULL && cur != node) {
        rc = seen_once(seen, cur->blk, dir->blk, err);
        if (rc != LANYFS_OK)
            goto out;
        int c = lanyfs_name_cmp(cur->e.name, node->e.name, node->e.name_len);
        if (c == 0)
            break; /* same name, other block: not the node we were given */
        parent = cur;
        link = c < 0 ? &cur->e.left : &cur->e.right;
        rc = follow(w, *link, &cur, err);
        if (rc != LANYFS_OK)
            goto out;
    }
    if (cur != node) {
        rc = lanyfs_fail(err, LANYFS_E_NOTFOUND, node->blk,
                         "entry block %" PRIu64 " is not in the tree of directory %" PRIu64,
                         node->blk, dir->blk);
        goto out;
    }

    struct winode *l, *r;
    if ((rc = follow(w, node->e.left, &l, err)) != LANYFS_OK ||
        (rc = follow(w, node->e.right, &r, err)) != LANYFS_OK)
        goto out;
    if (l == NULL || r == NULL) {
        struct winode *only = l ? l : r;
        *link = only ? only->blk : 0;
    } else {
        struct winode *m;
        if ((rc = follow(w, r->e.left, &m, err)) != LANYFS_OK)
            goto out;
        if (m == NULL) {
            /* The right child has no greater child: it takes the node's place. */
            r->e.left = l->blk;
            *link = r->blk;
            wr_idirty(w, r);
        } else {
            struct winode *p = r, *next;
            lanyfs_blockset_free(seen);
            seen = lanyfs_blockset_new();
            if (seen == NULL) {
                rc = lanyfs_fail(err, LANYFS_E_NOMEM, dir->blk, "out of memory");
                goto out;
            }
            for (;;) {
                if ((rc = seen_once(seen, m->blk, dir->blk, err)) != LANYFS_OK ||
                    (rc = follow(w, m->e.left, &next, err)) != LANYFS_OK)
                    goto out;
                if (next == NULL)
                    break;
                p = m;
                m = next;
            }
            struct winode *mr;
            if ((rc = follow(w, m->e.right, &mr, err)) != LANYFS_OK)
                goto out;
            if (drv(w) && mr == NULL) {
                /* SPEC-§9.9: __lanyfs_btree_del_inode returns ENOENT here. */
                rc = lanyfs_fail(err, LANYFS_E_NOTFOUND, node->blk,
                                 "the 2012 driver cannot delete entry block %" PRIu64
                                 " from its tree (its replacement %" PRIu64
                                 " is a leaf below its right child)",
                                 node->blk, m->blk);
                goto out;
            }
            p->e.left = mr ? mr->blk : 0;
            m->e.left = l->blk;
            m->e.right = r->blk;
            *link = m->blk;
            wr_idirty(w, p);
            wr_idirty(w, m);
        }
    }
    wr_idirty(w, parent);
    rc = LANYFS_OK;
out:
    lanyfs_blockset_free(seen);
    return rc;
}
