/*
 * fuzz_open.c -- fuzz target: an image's bytes through the whole reading
 * path of the core.
 *
 * The input is written to an in-memory file (memfd) and opened with
 * lanyfs_fs_open and LANYFS_OPEN_FORCE, so that every superblock, however
 * broken, reaches the readers.  The target then lists the root directory
 * recursively with an explicit, bounded work list (a visited set of
 * directories, at most MAX_DIRS directories and MAX_ENTRIES entries), looks
 * every listed name up again, resolves a path to it, maps and reads every
 * file (a bounded number of blocks at its start and end) and walks its
 * extender tree (callbacks stop the walk after MAX_RUNS runs or extenders),
 * and follows the free list for a few chain blocks.
 *
 * Besides the sanitizers, it checks what the core promises: a listing is
 * sorted and names blocks inside the device; a lookup of a listed name
 * never loops; a mapped block lies inside the device; a read returns
 * exactly the bytes the size allows; walk runs are contiguous from block 0;
 * every error message is a terminated string.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "lanyfs.h"

#define MAX_DIRS 64
#define MAX_ENTRIES 2048
#define MAX_RUNS 4096
#define READ_BLOCKS 4
#define CHAIN_STEPS 16
#define PATH_CAP 64

static void check_err(const struct lanyfs_error *err)
{
    FUZZ_CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL, "unterminated message");
}

struct walkstate {
    uint64_t next;   /* file block the next run must start at */
    uint64_t calls;  /* callbacks so far */
    uint64_t blocks; /* device size */
};

static int on_extent(void *ctx, uint64_t fblk, uint64_t dblk, uint64_t count)
{
    struct walkstate *w = ctx;
    FUZZ_CHECK(fblk == w->next, "walk run starts at %llu, expected %llu",
               (unsigned long long)fblk, (unsigned long long)w->next);
    FUZZ_CHECK(count > 0, "empty walk run");
    FUZZ_CHECK(dblk == 0 || (dblk < w->blocks && count <= w->blocks - dblk),
               "walk run %llu+%llu outside the device", (unsigned long long)dblk,
               (unsigned long long)count);
    w->next = fblk + count;
    return ++w->calls >= MAX_RUNS;
}

static int on_extender(void *ctx, uint64_t blk, unsigned level)
{
    struct walkstate *w = ctx;
    FUZZ_CHECK(blk != 0 && blk < w->blocks, "extender %llu outside the device",
               (unsigned long long)blk);
    FUZZ_CHECK(level < 64, "extender level %u", level);
    return ++w->calls >= MAX_RUNS;
}

static void read_file(struct lanyfs_fs *fs, const struct lanyfs_entry *e)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    struct lanyfs_error err;
    uint64_t nblocks = lanyfs_geom_blocks_for_size(g, e->size);
    static uint8_t buf[READ_BLOCKS * LANYFS_BLOCKSIZE_MAX];

    /* The first and the last few blocks, and a piece across a block boundary. */
    uint64_t offs[3] = {0, 0, g->blocksize - 7};
    if (e->size > sizeof(buf))
        offs[1] = e->size - sizeof(buf) + 3;
    for (int i = 0; i < 3; i++) {
        size_t len = READ_BLOCKS * g->blocksize;
        size_t got = 0;
        uint64_t holes = 0;
        enum lanyfs_err rc = lanyfs_file_pread(fs, e, offs[i], buf, len, &got, &holes, &err);
        if (rc != LANYFS_OK) {
            check_err(&err);
            continue;
        }
        uint64_t want = offs[i] >= e->size ? 0 : e->size - offs[i];
        if (want > len)
            want = len;
        FUZZ_CHECK(got == want, "pread at %llu got %zu bytes, size allows %llu",
                   (unsigned long long)offs[i], got, (unsigned long long)want);
    }
    const uint64_t fblks[4] = {0, 1, nblocks ? nblocks - 1 : 0, nblocks / 2};
    for (int i = 0; i < 4; i++) {
        uint64_t dblk = 0;
        if (lanyfs_file_map(fs, e, fblks[i], &dblk, &err) == LANYFS_OK)
            FUZZ_CHECK(dblk < g->blocks, "file block %llu maps to %llu, beyond the device",
                       (unsigned long long)fblks[i], (unsigned long long)dblk);
        else
            check_err(&err);
    }
    struct walkstate w = {0, 0, g->blocks};
    enum lanyfs_err rc = lanyfs_file_walk(fs, e, on_extent, on_extender, &w, &err);
    if (rc != LANYFS_OK)
        check_err(&err);
    FUZZ_CHECK(w.next <= nblocks, "walk ran to %llu of %llu blocks", (unsigned long long)w.next,
               (unsigned long long)nblocks);
}

/* dir + "/" + name into out (PATH_CAP bytes); false when it does not fit. */
static bool join(char *out, const char *dir, const struct lanyfs_entry *e)
{
    size_t dl = strlen(dir);
    if (!lanyfs_entry_name_ok(e) || dl + 1 + e->name_len + 1 > PATH_CAP)
        return false;
    memcpy(out, dir, dl);
    out[dl] = '/';
    memcpy(out + dl + 1, e->name, e->name_len);
    out[dl + 1 + e->name_len] = '\0';
    return true;
}

/* strncmp over 256 bytes is the format's order (unsigned bytes). */
static int order(const struct lanyfs_entry *a, const struct lanyfs_entry *b)
{
    return strncmp((const char *)a->name, (const char *)b->name, LANYFS_NAME_FIELD);
}

static void walk_tree(struct lanyfs_fs *fs)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    if (seen == NULL)
        return;
    uint64_t work[MAX_DIRS];
    char paths[MAX_DIRS][PATH_CAP];
    size_t nwork = 0, ndirs = 0, nentries = 0;
    work[nwork] = lanyfs_fs_super(fs)->rootdir;
    strcpy(paths[nwork], "");
    nwork++;
    lanyfs_blockset_add(seen, work[0]);
    while (nwork > 0 && ndirs < MAX_DIRS && nentries < MAX_ENTRIES) {
        nwork--;
        uint64_t dir = work[nwork];
        char path[PATH_CAP];
        memcpy(path, paths[nwork], sizeof(path));
        ndirs++;
        struct lanyfs_dirlist l;
        struct lanyfs_error err;
        if (lanyfs_dir_list(fs, dir, &l, &err) != LANYFS_OK) {
            check_err(&err);
            continue;
        }
        check_err(&l.first);
        for (size_t i = 0; i < l.count && nentries < MAX_ENTRIES; i++, nentries++) {
            const struct lanyfs_dirent *d = &l.ents[i];
            FUZZ_CHECK(d->block != 0 && d->block < g->blocks, "listed block %llu",
                       (unsigned long long)d->block);
            if (i > 0)
                FUZZ_CHECK(order(&l.ents[i - 1].e, &d->e) <= 0, "listing not sorted at %zu",
                           i);
            /* Look the name up again: found, missed or a reported error, never a loop. */
            uint64_t blk;
            size_t nlen = d->e.name_len < LANYFS_NAME_FIELD ? d->e.name_len : LANYFS_NAME_MAX;
            enum lanyfs_err rc = lanyfs_dir_lookup(fs, dir, (const char *)d->e.name, nlen, &blk,
                                                   NULL, &err);
            if (rc != LANYFS_OK)
                check_err(&err);
            /* A path to it, when its name and the path are short and plain. */
            char p[PATH_CAP];
            if (join(p, path, &d->e) && lanyfs_path_resolve(fs, p, &blk, NULL, &err) != LANYFS_OK)
                check_err(&err);
            if (lanyfs_entry_is_file(&d->e)) {
                read_file(fs, &d->e);
            } else if (lanyfs_entry_is_dir(&d->e) && nwork < MAX_DIRS &&
                       lanyfs_blockset_add(seen, d->block) == 1) {
                work[nwork] = d->block;
                if (!join(paths[nwork], path, &d->e))
                    strcpy(paths[nwork], "/?");
                nwork++;
            }
        }
        lanyfs_dirlist_free(&l);
    }
    lanyfs_blockset_free(seen);
}

/* A few steps along the free list, decoding every slot. */
static void walk_free_list(struct lanyfs_fs *fs)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    uint8_t buf[LANYFS_BLOCKSIZE_MAX];
    uint64_t cur = lanyfs_fs_super(fs)->freehead;
    for (int step = 0; step < CHAIN_STEPS && cur != 0; step++) {
        struct lanyfs_error err;
        if (lanyfs_fs_read_block(fs, cur, buf, &err) != LANYFS_OK) {
            check_err(&err);
            return;
        }
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, buf);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < g->chainmax; i++)
            sum += lanyfs_chain_slot(g, buf, i);
        (void)sum;
        cur = h.next;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc =
        lanyfs_fs_open(fuzz_memfd_image(data, size, NULL), LANYFS_OPEN_FORCE, &fs, &err);
    if (rc != LANYFS_OK) {
        check_err(&err);
        FUZZ_CHECK(fs == NULL, "failed open returned a handle");
        return 0;
    }
    const struct lanyfs_sb_problem *pr;
    size_t np = lanyfs_fs_problems(fs, &pr);
    FUZZ_CHECK(np <= LANYFS_SB_PROBLEMS_MAX, "%zu problems", np);
    for (size_t i = 0; i < np; i++)
        FUZZ_CHECK(pr[i].field != NULL && memchr(pr[i].msg, '\0', sizeof(pr[i].msg)) != NULL,
                   "bad problem %zu", i);
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    char text[LANYFS_NAME_FIELD + 1];
    lanyfs_super_label(sb, text, sizeof(text));
    char ts[64];
    lanyfs_ts_format(&sb->created, ts, sizeof(ts));
    lanyfs_ts_format(&sb->checked, ts, sizeof(ts));
    walk_tree(fs);
    walk_free_list(fs);
    lanyfs_fs_close(fs);
    return 0;
}
