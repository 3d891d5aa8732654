/*
 * blockcheck.c -- account for every block of a LanyFS image.
 *
 * Usage: blockcheck [--clean] IMAGE
 *
 * Walks everything reachable from the root directory (every entry block,
 * every extender and data block of every file, as lanyfs_file_walk maps
 * them for the file's size) and the free list (every chain block from
 * freehead along next, and every non-zero slot), counting how often each
 * block 1..blocks-1 is met.  Prints one "key=value" line per figure:
 *
 *   blocks          blocks on the device
 *   entries         directory and file blocks reachable
 *   extenders       extender blocks reachable
 *   data            data blocks reachable (holes not counted)
 *   free_chain      chain blocks in the free list
 *   free_slots      blocks listed in chain slots
 *   leaked          blocks neither reachable nor free
 *   leaked_ext      leaked blocks that hold an extender header (type 0x80)
 *   double          blocks met more than once (cross-links, a block free and used)
 *   tree_problems   directories whose tree walk met a problem (lanyfs_dir_list)
 *   sb_freeblocks, real_freeblocks, sb_freehead, sb_freetail, real_freetail
 *
 * With --clean the exit status is 1 unless nothing leaked, nothing is
 * met twice, no tree has a problem, freeblocks is exact and freetail is
 * the real last chain block.  Exit 2 when the image cannot be walked.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanyfs.h"
#include "writer.h"

struct acct {
    struct lanyfs_fs *fs;   /* the image */
    uint64_t blocks;        /* device blocks */
    uint32_t *seen;         /* times each block was met */
    uint64_t outside;       /* references beyond the device */
    uint64_t extenders;     /* extender blocks reachable */
    uint64_t data;          /* data blocks reachable */
};

static void mark(struct acct *a, uint64_t blk)
{
    if (blk == 0 || blk >= a->blocks) {
        a->outside++;
        return;
    }
    if (a->seen[blk] < UINT32_MAX)
        a->seen[blk]++;
}

static int on_extent(void *ctx, uint64_t fblk, uint64_t dblk, uint64_t count)
{
    struct acct *a = ctx;
    (void)fblk;
    if (dblk == 0)
        return 0;
    for (uint64_t i = 0; i < count; i++) {
        mark(a, dblk + i);
        a->data++;
    }
    return 0;
}

static int on_extender(void *ctx, uint64_t blk, unsigned level)
{
    struct acct *a = ctx;
    (void)level;
    mark(a, blk);
    a->extenders++;
    return 0;
}

int main(int argc, char **argv)
{
    bool clean = false;
    int argi = 1;
    if (argi < argc && strcmp(argv[argi], "--clean") == 0) {
        clean = true;
        argi++;
    }
    if (argc - argi != 1) {
        fprintf(stderr, "usage: blockcheck [--clean] IMAGE\n");
        return 2;
    }
    int status = 2;
    struct acct a = {0};
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    uint64_t *stack = NULL;
    size_t sp = 0, scap = 0;
    uint64_t entries = 0, tree_problems = 0;
    uint8_t *b = NULL;

    if (lanyfs_fs_open(argv[argi], 0, &a.fs, &err) != LANYFS_OK) {
        fprintf(stderr, "blockcheck: %s\n", err.msg);
        goto out;
    }
    const struct lanyfs_super *sb = lanyfs_fs_super(a.fs);
    const struct lanyfs_geom *g = lanyfs_fs_geom(a.fs);
    a.blocks = sb->blocks;
    a.seen = calloc(a.blocks, sizeof(*a.seen));
    b = malloc(g->blocksize);
    if (a.seen == NULL || b == NULL)
        goto out;

    /* Everything reachable from the root, directories from an explicit stack. */
    mark(&a, sb->rootdir);
    entries++;
    scap = 64;
    stack = malloc(scap * sizeof(*stack));
    if (stack == NULL)
        goto out;
    stack[sp++] = sb->rootdir;
    while (sp > 0) {
        uint64_t dir = stack[--sp];
        struct lanyfs_dirlist l;
        if (lanyfs_dir_list(a.fs, dir, &l, &err) != LANYFS_OK) {
            fprintf(stderr, "blockcheck: %s\n", err.msg);
            goto out;
        }
        if (l.problems != 0)
            tree_problems++;
        for (size_t i = 0; i < l.count; i++) {
            const struct lanyfs_dirent *d = &l.ents[i];
            mark(&a, d->block);
            entries++;
            if (a.seen[d->block] > 1)
                continue; /* met before: do not walk it twice */
            if (lanyfs_entry_is_dir(&d->e)) {
                if (sp == scap) {
                    scap *= 2;
                    uint64_t *n = realloc(stack, scap * sizeof(*stack));
                    if (n == NULL) {
                        lanyfs_dirlist_free(&l);
                        goto out;
                    }
                    stack = n;
                }
                stack[sp++] = d->block;
            } else if (lanyfs_file_walk(a.fs, &d->e, on_extent, on_extender, &a, &err) !=
                       LANYFS_OK) {
                fprintf(stderr, "blockcheck: file block %" PRIu64 ": %s\n", d->block, err.msg);
                lanyfs_dirlist_free(&l);
                goto out;
            }
        }
        lanyfs_dirlist_free(&l);
    }

    /* The free list. */
    uint64_t chains = 0, slots = 0, tail = 0, steps = 0;
    for (uint64_t cur = sb->freehead; cur != 0 && steps <= a.blocks; steps++) {
        if (cur >= a.blocks) {
            a.outside++;
            break;
        }
        mark(&a, cur);
        chains++;
        tail = cur;
        if (lanyfs_fs_read_block(a.fs, cur, b, &err) != LANYFS_OK) {
            fprintf(stderr, "blockcheck: %s\n", err.msg);
            goto out;
        }
        for (uint32_t i = 0; i < g->chainmax; i++) {
            uint64_t s = lanyfs_chain_slot(g, b, i);
            if (s != 0) {
                mark(&a, s);
                slots++;
            }
        }
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, b);
        if (a.seen[cur] > 1)
            break; /* a cycle */
        cur = h.next;
    }
    uint64_t c2, s2, t2;
    if (lanyfs_freelist_count(a.fs, &c2, &s2, &t2, &err) == LANYFS_OK &&
        (c2 != chains || s2 != slots || t2 != tail))
        fprintf(stderr, "blockcheck: lanyfs_freelist_count says %" PRIu64 "+%" PRIu64
                " tail %" PRIu64 ", the walk %" PRIu64 "+%" PRIu64 " tail %" PRIu64 "\n",
                c2, s2, t2, chains, slots, tail);

    uint64_t leaked = 0, leaked_ext = 0, dbl = 0;
    for (uint64_t blk = 1; blk < a.blocks; blk++) {
        if (a.seen[blk] > 1)
            dbl++;
        if (a.seen[blk] != 0)
            continue;
        leaked++;
        if (lanyfs_fs_read_block(a.fs, blk, b, &err) == LANYFS_OK && b[0] == LANYFS_TYPE_EXT)
            leaked_ext++;
    }
    printf("blocks=%" PRIu64 "\n", a.blocks);
    printf("entries=%" PRIu64 "\n", entries);
    printf("extenders=%" PRIu64 "\n", a.extenders);
    printf("data=%" PRIu64 "\n", a.data);
    printf("free_chain=%" PRIu64 "\n", chains);
    printf("free_slots=%" PRIu64 "\n", slots);
    printf("leaked=%" PRIu64 "\n", leaked);
    printf("leaked_ext=%" PRIu64 "\n", leaked_ext);
    printf("double=%" PRIu64 "\n", dbl);
    printf("outside=%" PRIu64 "\n", a.outside);
    printf("tree_problems=%" PRIu64 "\n", tree_problems);
    printf("sb_freeblocks=%" PRIu64 "\n", sb->freeblocks);
    printf("real_freeblocks=%" PRIu64 "\n", chains + slots);
    printf("sb_freehead=%" PRIu64 "\n", sb->freehead);
    printf("sb_freetail=%" PRIu64 "\n", sb->freetail);
    printf("real_freetail=%" PRIu64 "\n", tail);
    status = 0;
    if (clean && (leaked != 0 || dbl != 0 || a.outside != 0 || tree_problems != 0 ||
                  sb->freeblocks != chains + slots || sb->freetail != tail))
        status = 1;
out:
    free(stack);
    free(b);
    free(a.seen);
    lanyfs_fs_close(a.fs);
    return status;
}
