/*
 * repair_lostfound.c -- /lost+found, and names every directory can hold.
 *
 * Entries without a directory (orphans, and deleted entries asked back
 * whose directory is gone) go to /lost+found: the directory of that name
 * in the root when there is one, otherwise a new one in a block of the
 * pool.  On a full stick, with no block for it, they go to the root
 * directory itself, as e2fsck places lost files in the root when it
 * cannot make its lost+found: linking them takes no block.
 *
 * Names: in every target directory each child needs a valid name (1..255
 * bytes, no '/', SPEC-§5) and a unique one.  A name that is empty becomes
 * "block-N" (N its block), one without a NUL is cut at 255 bytes, a '/'
 * becomes '_'.  Of children sharing a name, the one that was in the
 * directory before keeps it (the lowest block among equals); each other
 * one gets "#N" appended (the name cut so that it fits), which keeps the
 * original name and is the same on every run, so an interrupted repair
 * names an entry the same way when it is run again.  Live entries are
 * renamed only when tree repairs are allowed; relinked ones always are.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/i18n.h"
#include "repair.h"

#define LOSTFOUND_NAME "lost+found"

static bool name_is(const struct lanyfs_entry *e, const char *name)
{
    size_t n = strlen(name);
    return e->name_len == n && memcmp(e->name, name, n) == 0;
}

enum lanyfs_err fsck_lostfound_prepare(struct fsck_ctx *c)
{
    bool needed = false;
    for (size_t i = 0; i < c->nte && !needed; i++) {
        const struct tentry *t = &c->te[i];
        needed = t->block != 0 && t->to_lostfound && c->kind[t->block] == OWN_ENTRY;
    }
    if (!needed)
        return LANYFS_OK;
    for (size_t i = 0; i < c->nte; i++) {
        const struct tentry *t = &c->te[i];
        if (t->parent == c->root && !t->to_lostfound && t->block != 0 &&
            c->kind[t->block] == OWN_ENTRY && lanyfs_entry_is_dir(&t->e) &&
            name_is(&t->e, LOSTFOUND_NAME)) {
            c->lostfound = (uint32_t)i;
            return LANYFS_OK;
        }
    }
    if (!c->allow_freelist)
        return LANYFS_OK;
    uint64_t blk = fsck_pool_take(c);
    if (blk == 0) {
        c->lostfound = c->root;
        fsck_note(c, _("no block is free for a new /%s: lost entries go to the root directory"),
                  LOSTFOUND_NAME);
        return LANYFS_OK;
    }
    struct tentry *t = fsck_te_new(c, blk, LANYFS_TYPE_DIR, LOSTFOUND_NAME, strlen(LOSTFOUND_NAME));
    if (t == NULL)
        return lanyfs_fail(&c->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    t->parent = c->root;
    c->lostfound = (uint32_t)(c->nte - 1);
    fsck_note(c, _("block %" PRIu64 ": new directory /%s"), blk, LOSTFOUND_NAME);
    return LANYFS_OK;
}

/* Make e's name valid (1..255 bytes, no '/'); true when it changed. */
static bool valid_name(struct lanyfs_entry *e, uint64_t blk)
{
    bool changed = false;
    if (e->name_len == 0) {
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "block-%" PRIu64, blk);
        lanyfs_entry_set_name(e, buf, (size_t)n);
        return true;
    }
    if (e->name_len > LANYFS_NAME_MAX) {
        char buf[LANYFS_NAME_MAX];
        memcpy(buf, e->name, LANYFS_NAME_MAX);
        lanyfs_entry_set_name(e, buf, LANYFS_NAME_MAX);
        changed = true;
    }
    for (size_t i = 0; i < e->name_len; i++) {
        if (e->name[i] == '/') {
            e->name[i] = '_';
            changed = true;
        }
    }
    return changed;
}

/* Append "#blk" (and "~k" when k > 0), cutting the name to fit 255 bytes. */
static void suffix_name(struct lanyfs_entry *e, const uint8_t *orig, size_t orig_len, uint64_t blk,
                        unsigned k)
{
    char suf[48];
    int n = k ? snprintf(suf, sizeof(suf), "#%" PRIu64 "~%u", blk, k)
              : snprintf(suf, sizeof(suf), "#%" PRIu64, blk);
    size_t keep = orig_len;
    if (keep + (size_t)n > LANYFS_NAME_MAX)
        keep = LANYFS_NAME_MAX - (size_t)n;
    char buf[LANYFS_NAME_MAX + 1];
    memcpy(buf, orig, keep);
    memcpy(buf + keep, suf, (size_t)n);
    lanyfs_entry_set_name(e, buf, keep + (size_t)n);
}

struct kidref {
    struct fsck_ctx *c;
    uint32_t idx;   /* te index */
};

static int name_cmp(const struct lanyfs_entry *a, const struct lanyfs_entry *b)
{
    size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
    int r = memcmp(a->name, b->name, n);
    if (r != 0)
        return r;
    return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

static struct fsck_ctx *sort_ctx;

/* By name, then the entry that was there before first, then by block. */
static int cmp_kid(const void *pa, const void *pb)
{
    const struct tentry *a = &sort_ctx->te[*(const uint32_t *)pa];
    const struct tentry *b = &sort_ctx->te[*(const uint32_t *)pb];
    int r = name_cmp(&a->e, &b->e);
    if (r != 0)
        return r;
    if (a->moved != b->moved)
        return a->moved ? 1 : -1;
    return a->block < b->block ? -1 : a->block > b->block;
}

/* Is name taken among kids[0..n) other than skip? */
static bool taken(struct fsck_ctx *c, const uint32_t *kids, size_t n, uint32_t skip,
                  const struct lanyfs_entry *e)
{
    for (size_t i = 0; i < n; i++)
        if (kids[i] != skip && name_cmp(&c->te[kids[i]].e, e) == 0)
            return true;
    return false;
}

enum lanyfs_err fsck_names_fix(struct fsck_ctx *c)
{
    for (size_t d = 0; d < c->nte; d++) {
        struct tentry *dir = &c->te[d];
        if (dir->nkids == 0)
            continue;
        for (size_t k = 0; k < dir->nkids; k++) {
            struct tentry *t = &c->te[dir->kids[k]];
            if (!t->moved && !t->is_new && !c->allow_tree)
                continue;
            if (valid_name(&t->e, t->block))
                t->name_dirty = true;
        }
        sort_ctx = c;
        qsort(dir->kids, dir->nkids, sizeof(*dir->kids), cmp_kid);
        /* Each against the first of its run of equal names, which keeps
         * it: the one just before may have been renamed already (three
         * orphans of one name: correct:868 state 9800, root block 1
         * zeroed, left two named alike). */
        size_t first = 0;
        for (size_t k = 1; k < dir->nkids; k++) {
            struct tentry *t = &c->te[dir->kids[k]];
            if (name_cmp(&t->e, &c->te[dir->kids[first]].e) != 0) {
                first = k;
                continue;
            }
            if (!t->moved && !t->is_new && !c->allow_tree)
                continue;
            uint8_t orig[LANYFS_NAME_FIELD];
            size_t olen = t->e.name_len > LANYFS_NAME_MAX ? LANYFS_NAME_MAX : t->e.name_len;
            memcpy(orig, t->e.name, olen);
            for (unsigned tries = 0; tries < 1000; tries++) {
                suffix_name(&t->e, orig, olen, t->block, tries);
                if (!taken(c, dir->kids, dir->nkids, dir->kids[k], &t->e))
                    break;
            }
            t->name_dirty = true;
            fsck_note(c, _("entry %" PRIu64 ": renamed to keep names unique"), t->block);
        }
        qsort(dir->kids, dir->nkids, sizeof(*dir->kids), cmp_kid);
    }
    return LANYFS_OK;
}
