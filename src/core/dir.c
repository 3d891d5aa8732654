/*
 * dir.c -- directory lookup and listing.
 *
 * A directory's entries form a binary search tree of their own blocks with
 * the REVERSED order of SPEC-§5: at node N a name X goes left when
 * strncmp(N.name, X) < 0, so the left subtree holds greater names.  An
 * in-order walk that visits right, node, left therefore yields ascending
 * names.
 *
 * Both walks are iterative: the listing keeps an explicit stack and a
 * visited set, the lookup a visited set, so a cycle or a degenerate tree as
 * deep as the device is reported, never followed forever, and the depth the
 * disk controls never touches the C stack.  The listing walks around bad
 * links (recording them as soft problems, first one with its block) and
 * sorts what it reached, so its output is sorted even when the disk's order
 * is not.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanyfs.h"

struct dirvec {
    struct lanyfs_dirent *v; /* elements */
    size_t n;                /* used */
    size_t cap;              /* allocated */
};

static bool vec_push(struct dirvec *d, uint64_t blk, const struct lanyfs_entry *e)
{
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 16;
        struct lanyfs_dirent *nv = realloc(d->v, ncap * sizeof(*nv));
        if (nv == NULL)
            return false;
        d->v = nv;
        d->cap = ncap;
    }
    d->v[d->n].block = blk;
    d->v[d->n].e = *e;
    d->n++;
    return true;
}

/* Record a problem; the first one keeps its message, its block and code. */
__attribute__((format(printf, 5, 6))) static void note_code(struct lanyfs_dirlist *out,
                                                            unsigned what, enum lanyfs_err code,
                                                            uint64_t blk, const char *fmt, ...)
{
    if (out->problems == 0) {
        char msg[sizeof(out->first.msg)];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        lanyfs_fail(&out->first, code, blk, "%s", msg);
    }
    out->problems |= what;
}

#define note(out, what, blk, ...)                                                                 \
    note_code(out, what, (what) == LANYFS_DIR_CYCLE ? LANYFS_E_CYCLE : LANYFS_E_CORRUPT, blk,  \
              __VA_ARGS__)

static int dirent_cmp(const void *a, const void *b)
{
    const struct lanyfs_dirent *x = a, *y = b;
    /* Ascending: x < y when y goes left of x, i.e. name_cmp(x, y) < 0. */
    int c = lanyfs_name_cmp(x->e.name, y->e.name, y->e.name_len);
    if (c != 0)
        return c;
    return x->block < y->block ? -1 : x->block > y->block;
}

/*
 * Check the link from..->blk and read the node.  Returns true when the node
 * is a usable entry (then *e holds it).
 */
static bool take_node(struct lanyfs_fs *fs, struct lanyfs_blockset *seen, uint64_t dir,
                      uint64_t from, uint64_t blk, struct lanyfs_entry *e,
                      struct lanyfs_dirlist *out, bool *oom)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    if (blk >= g->blocks) {
        note(out, LANYFS_DIR_BADPTR, from,
             "directory %" PRIu64 ": block %" PRIu64 " links to block %" PRIu64
             ", beyond the device end (%" PRIu64 " blocks)",
             dir, from, blk, g->blocks);
        return false;
    }
    if (blk == dir || lanyfs_blockset_has(seen, blk)) {
        note(out, LANYFS_DIR_CYCLE, blk,
             "directory %" PRIu64 ": block %" PRIu64 " links to block %" PRIu64
             ", which the walk already reached (a cycle in the tree)",
             dir, from, blk);
        return false;
    }
    if (lanyfs_blockset_add(seen, blk) < 0) {
        *oom = true;
        return false;
    }
    struct lanyfs_error rerr;
    enum lanyfs_err rc = lanyfs_fs_read_entry(fs, blk, e, &rerr);
    if (rc == LANYFS_E_BADTYPE) {
        note(out, LANYFS_DIR_BADTYPE, blk,
             "directory %" PRIu64 ": block %" PRIu64 " links to block %" PRIu64
             " of type 0x%02x, which is no directory entry",
             dir, from, blk, e->type);
        return false;
    }
    if (rc != LANYFS_OK) {
        note_code(out, LANYFS_DIR_READERR, rc, blk, "directory %" PRIu64 ": %s", dir, rerr.msg);
        return false;
    }
    if (!lanyfs_entry_name_ok(e))
        note(out, LANYFS_DIR_BADNAME, blk,
             "directory %" PRIu64 ": entry block %" PRIu64 " has a bad name (%s)", dir, blk,
             e->name_len == 0              ? "empty"
             : e->name_len > LANYFS_NAME_MAX ? "no NUL within 256 bytes"
                                           : "contains '/'");
    return true;
}

enum lanyfs_err lanyfs_dir_list(struct lanyfs_fs *fs, uint64_t dir, struct lanyfs_dirlist *out,
                                struct lanyfs_error *err)
{
    memset(out, 0, sizeof(*out));
    lanyfs_error_clear(&out->first);
    struct lanyfs_entry d;
    enum lanyfs_err rc = lanyfs_fs_read_entry(fs, dir, &d, err);
    if (rc != LANYFS_OK)
        return rc;
    if (!lanyfs_entry_is_dir(&d))
        return lanyfs_fail(err, LANYFS_E_NOTDIR, dir, "block %" PRIu64 " is a file, not a "
                           "directory", dir);

    struct dirvec result = {0}, stack = {0};
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    bool oom = seen == NULL;
    uint64_t cur = d.subtree, from = dir;
    bool have_prev = false;
    size_t prev_idx = 0;

    while (!oom && (cur != 0 || stack.n > 0)) {
        while (cur != 0 && !oom) {
            struct lanyfs_entry e;
            if (!take_node(fs, seen, dir, from, cur, &e, out, &oom))
                break;
            if (!vec_push(&stack, cur, &e)) {
                oom = true;
                break;
            }
            from = cur;
            cur = e.right;
        }
        if (oom || stack.n == 0)
            break;
        struct lanyfs_dirent top = stack.v[--stack.n];
        if (!vec_push(&result, top.block, &top.e)) {
            oom = true;
            break;
        }
        if (have_prev) {
            const struct lanyfs_entry *prev = &result.v[prev_idx].e;
            int c = lanyfs_name_cmp(prev->name, top.e.name, top.e.name_len);
            if (c == 0)
                note(out, LANYFS_DIR_DUP, top.block,
                     "directory %" PRIu64 ": entry blocks %" PRIu64 " and %" PRIu64
                     " share a name",
                     dir, result.v[prev_idx].block, top.block);
            else if (c > 0)
                note(out, LANYFS_DIR_ORDER, top.block,
                     "directory %" PRIu64 ": entry block %" PRIu64
                     " is out of the tree's order (reversed rule: greater names left)",
                     dir, top.block);
        }
        prev_idx = result.n - 1;
        have_prev = true;
        from = top.block;
        cur = top.e.left;
    }
    free(stack.v);
    lanyfs_blockset_free(seen);
    if (oom) {
        free(result.v);
        return lanyfs_fail(err, LANYFS_E_NOMEM, dir, "directory %" PRIu64 ": out of memory",
                           dir);
    }
    if (result.n > 1)
        qsort(result.v, result.n, sizeof(*result.v), dirent_cmp);
    out->ents = result.v;
    out->count = result.n;
    return LANYFS_OK;
}

void lanyfs_dirlist_free(struct lanyfs_dirlist *l)
{
    free(l->ents);
    l->ents = NULL;
    l->count = 0;
}

enum lanyfs_err lanyfs_dir_lookup(struct lanyfs_fs *fs, uint64_t dir, const char *name,
                                  size_t len, uint64_t *blk, struct lanyfs_entry *e,
                                  struct lanyfs_error *err)
{
    struct lanyfs_entry d, n;
    enum lanyfs_err rc = lanyfs_fs_read_entry(fs, dir, &d, err);
    if (rc != LANYFS_OK)
        return rc;
    if (!lanyfs_entry_is_dir(&d))
        return lanyfs_fail(err, LANYFS_E_NOTDIR, dir, "block %" PRIu64 " is a file, not a "
                           "directory", dir);
    if (len == 0 || len > LANYFS_NAME_MAX)
        return lanyfs_fail(err, LANYFS_E_NOTFOUND, dir, "no entry of that name in directory "
                           "block %" PRIu64, dir);
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    if (seen == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, dir, "out of memory");
    uint64_t cur = d.subtree;
    rc = LANYFS_E_NOTFOUND;
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint64_t from = dir;
    while (cur != 0) {
        if (cur >= g->blocks) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, cur,
                             "directory %" PRIu64 ": block %" PRIu64 " links to block %" PRIu64
                             ", beyond the device end (%" PRIu64 " blocks)",
                             dir, from, cur, g->blocks);
            goto out;
        }
        int added = lanyfs_blockset_add(seen, cur);
        if (added < 0) {
            rc = lanyfs_fail(err, LANYFS_E_NOMEM, dir, "out of memory");
            goto out;
        }
        if (added == 0 || cur == dir) {
            rc = lanyfs_fail(err, LANYFS_E_CYCLE, cur,
                             "directory %" PRIu64 ": the search reaches block %" PRIu64
                             " twice (a cycle in the tree)",
                             dir, cur);
            goto out;
        }
        rc = lanyfs_fs_read_entry(fs, cur, &n, err);
        if (rc != LANYFS_OK) {
            lanyfs_error_prefix(err, "directory %" PRIu64, dir);
            goto out;
        }
        int c = lanyfs_name_cmp(n.name, (const uint8_t *)name, len);
        if (c == 0) {
            if (blk)
                *blk = cur;
            if (e)
                *e = n;
            rc = LANYFS_OK;
            goto out;
        }
        from = cur;
        cur = c < 0 ? n.left : n.right;
    }
    rc = lanyfs_fail(err, LANYFS_E_NOTFOUND, dir, "no entry of that name in directory block "
                     "%" PRIu64, dir);
out:
    lanyfs_blockset_free(seen);
    return rc;
}
