/*
 * crash.c -- salvage of simulated unplugs.
 *
 *   salvage-crash [--step N] [--tears] LANYFS WORKDIR SCENARIO...
 *
 * A SCENARIO is MODE:SEED:OPS:BLOCKSIZE:ADDRLEN:SIZE, MODE "correct" or
 * "2012" (tests/truth.h, as for tests/fsck/crash.c).  For each one `lanyfs simulate` (the
 * LANYFS program) writes an image, its write log and truth.json.  Then for
 * every write prefix K (every --step'th; with --tears also with write K+1
 * torn after each sector count) the state is rebuilt (lanyfs_replay),
 * scanned and salvaged into a fresh folder, and every file truth.json marks
 * complete by K (complete_after <= K) must be in the manifest as exact,
 * with its final size and SHA-256, and the file written must have them too.
 * In 2012 mode a path the state itself does not show (the core cannot read
 * it back as truth.json says) is counted apart instead: the driver's marks
 * can take a complete file out of the tree.
 *
 * It prints how many states and paths were checked and how many failed,
 * and exits 1 when any failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lanyfs.h"
#include "replay.h"
#include "salvage.h"
#include "scan.h"
#include "truth.h"
#include "undo.h"

static struct {
    uint64_t step;
    bool tears;
    const char *lanyfs;
    const char *work;
} opt = {1, false, NULL, NULL};

static struct {
    uint64_t states, failed, checked, not_shown, not_shown_found, stale, twice;
    uint64_t trees, early; /* lost trees copied out; of those, files the log had not completed yet, byte for byte */
    uint64_t named, unnamed, nameable; /* trees of known files: under their name, not; of those, with a live entry that has no tree */
} stats;

/* The SHA-256 and size of the file at dirfd/rel; false when it cannot be read. */
static bool file_sha(int dirfd, const char *rel, uint64_t *size, char hex[65])
{
    int fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return false;
    struct lanyfs_sha256 c;
    uint8_t buf[65536], sum[LANYFS_SHA256_LEN];
    ssize_t n;
    *size = 0;
    lanyfs_sha256_init(&c);
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        lanyfs_sha256_update(&c, buf, (size_t)n);
        *size += (uint64_t)n;
    }
    close(fd);
    if (n < 0)
        return false;
    lanyfs_sha256_final(&c, sum);
    lanyfs_sha256_hex(sum, hex);
    return true;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void rm_tree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Check every complete path in a salvage of the state at img. */
/*
 * In 2012 mode: path t is shown only through a link the driver kept to an
 * entry it had freed (MARK_STALE_TREE or MARK_FROZEN_PARENT, SPEC-9.12), as when a rename
 * replaces a file: the replaced file's block is in the free list before
 * the tree change lands.  The scan calls that entry deleted, and the path's
 * content (here the same) came out as a deleted file.
 */
static bool stale_link(const struct scan_result *scan, const struct salvage_item *it, size_t nit,
                       const struct truth_path *t)
{
    const struct scan_finding *f;
    size_t nf = scan_findings(scan, &f);
    char *shown = salvage_escape_shown((const uint8_t *)t->path, strlen(t->path));
    bool found = false;
    for (size_t j = 0; j < nit && shown != NULL && !found; j++) {
        if (it[j].kind != SALVAGE_KIND_DELETED || strcmp(it[j].source, shown) != 0 ||
            it[j].status != SALVAGE_EXACT || it[j].size != t->size ||
            strcmp(it[j].sha256, t->sha) != 0)
            continue;
        for (size_t i = 0; i < nf && !found; i++)
            found = (f[i].code == SCAN_PR_MARK_STALE_TREE ||
                     f[i].code == SCAN_PR_MARK_FROZEN_PARENT) &&
                    f[i].block2 == it[j].entry_block;
    }
    free(shown);
    return found;
}

/*
 * In 2012 mode: path t, or a directory above it, is an entry the driver
 * had freed and still links (MARK_STALE_TREE or MARK_FROZEN_PARENT), as
 * after a delete the driver failed (SPEC-9.9): the file reads back as the
 * holes its map was left with, or a directory it removed still shows what
 * it held.  The user deleted it; the salvage takes it for the deleted
 * entry it is, and recovers what the free space still holds of it (which
 * is not the holes).  As in the fsck matrix, such a path is not the
 * salvage's to keep.
 */
static bool shown_through_freed(struct lanyfs_fs *fs, const struct scan_result *scan,
                                const struct truth_path *t)
{
    const struct scan_finding *f;
    size_t nf = scan_findings(scan, &f);
    size_t len = strlen(t->path);
    char *p = malloc(len + 1);
    bool found = false;
    for (size_t end = 1; p != NULL && end <= len && !found; end++) {
        if (end < len && t->path[end] != '/')
            continue;
        memcpy(p, t->path, end);
        p[end] = '\0';
        uint64_t blk = 0;
        if (lanyfs_path_resolve(fs, p, &blk, NULL, NULL) != LANYFS_OK)
            break;
        for (size_t i = 0; i < nf && !found; i++)
            found = (f[i].code == SCAN_PR_MARK_STALE_TREE ||
                     f[i].code == SCAN_PR_MARK_FROZEN_PARENT) &&
                    f[i].block2 == blk;
    }
    free(p);
    return found;
}

/*
 * Path t, which the state shows, came out under another path the state
 * shows for the same entry: an entry in the trees of two directories (a
 * rename caught halfway, SPEC-9.9), or below one, comes out once, under
 * the path the scan kept, byte for byte.
 */
static bool kept_elsewhere(struct lanyfs_fs *fs, int dfd, const struct salvage_item *it,
                           size_t nit, const struct truth_path *t)
{
    uint64_t blk = 0, size = 0;
    char hex[65];
    if (lanyfs_path_resolve(fs, t->path, &blk, NULL, NULL) != LANYFS_OK)
        return false;
    for (size_t j = 0; j < nit; j++)
        if (it[j].kind == SALVAGE_KIND_LIVE && it[j].entry_block == blk &&
            it[j].status == SALVAGE_EXACT && it[j].size == t->size &&
            strcmp(it[j].sha256, t->sha) == 0 && file_sha(dfd, it[j].output, &size, hex) &&
            size == t->size && strcmp(hex, t->sha) == 0)
            return true;
    return false;
}

static bool check_state(const struct truth_scenario *sc, const char *img, uint64_t k,
                        const char *what)
{
    char out[1100];
    snprintf(out, sizeof(out), "%s/out", opt.work);
    rm_tree(out);
    struct lanyfs_fs *fs = NULL;
    struct scan_result *scan = NULL;
    struct salvage_result *res = NULL;
    struct lanyfs_error err = {0};
    bool ok = false;
    int dfd = -1;
    if (mkdir(out, 0777) != 0 || (dfd = open(out, O_RDONLY | O_DIRECTORY)) < 0) {
        printf("  %s: cannot make %s\n", what, out);
        goto done;
    }
    if (lanyfs_fs_open(img, LANYFS_OPEN_FORCE, &fs, &err) != LANYFS_OK ||
        scan_fs(fs, NULL, &scan, &err) != LANYFS_OK) {
        printf("  %s: cannot scan: %s\n", what, err.msg);
        goto done;
    }
    struct salvage_opts so = {.flags = SALVAGE_DELETED | SALVAGE_ORPHANS | SALVAGE_CARVE};
    if (salvage_run(scan, fs, dfd, &so, &res, &err) != LANYFS_OK) {
        printf("  %s: salvage fails: %s\n", what, err.msg);
        goto done;
    }
    const struct salvage_item *it;
    size_t nit = salvage_items(res, &it);
    ok = true;
    for (size_t i = 0; i < sc->npaths; i++) {
        const struct truth_path *t = &sc->paths[i];
        if (t->dir || t->complete > k)
            continue;
        char *shown = salvage_escape_shown((const uint8_t *)t->path, strlen(t->path));
        const struct salvage_item *x = NULL;
        for (size_t j = 0; j < nit && shown != NULL; j++)
            if (it[j].kind == SALVAGE_KIND_LIVE && strcmp(it[j].source, shown) == 0)
                x = &it[j];
        free(shown);
        uint64_t size = 0;
        char hex[65] = "";
        bool good = x != NULL && x->status == SALVAGE_EXACT && x->size == t->size &&
                    strcmp(x->sha256, t->sha) == 0 && file_sha(dfd, x->output, &size, hex) &&
                    size == t->size && strcmp(hex, t->sha) == 0;
        if (good) {
            stats.checked++;
            continue;
        }
        if (sc->driver && (stale_link(scan, it, nit, t) || shown_through_freed(fs, scan, t))) {
            stats.stale++;
            continue;
        }
        if (sc->driver && !truth_shows(fs, t)) {
            stats.not_shown++;
            /* Still copied out, under another name or kind? */
            for (size_t j = 0; j < nit; j++)
                if (it[j].size == t->size && strcmp(it[j].sha256, t->sha) == 0) {
                    stats.not_shown_found++;
                    break;
                }
            if (getenv("CRASH_VERBOSE") != NULL)
                printf("  %s: %s not shown\n", what, t->path);
            continue;
        }
        if (truth_shows(fs, t) && kept_elsewhere(fs, dfd, it, nit, t)) {
            stats.twice++;
            continue;
        }
        stats.checked++;
        ok = false;
        if (x == NULL)
            printf("  %s: %s is not in the manifest\n", what, t->path);
        else
            printf("  %s: %s comes out %s, %" PRIu64 " bytes, %s (truth: %" PRIu64
                   " bytes, %s)%s%s\n",
                   what, t->path, salvage_status_name(x->status), size, hex, t->size, t->sha,
                   x->note != NULL ? ": " : "", x->note != NULL ? x->note : "");
    }
    /* What the lost trees gave back (UNLINKED_FILE_DATA, LOST_DATA_TREE):
     * counted when it is a file the log had not completed by K, whole,
     * as it ends. */
    const struct scan_lost_tree *lost;
    size_t nlost = scan_lost_trees(scan, &lost);
    for (size_t j = 0; j < nit; j++) {
        /* Its file's tree, or a tree copied out as a carved piece (named by its first block). */
        bool tree = it[j].kind != SALVAGE_KIND_CARVED && it[j].entry != 0 &&
                    scan_lost_tree_of(scan, it[j].entry) != NULL;
        for (size_t m = 0; m < nlost && !tree && it[j].kind == SALVAGE_KIND_CARVED; m++)
            for (uint64_t d = 0; d < lost[m].ndata; d++)
                if (lost[m].data[d] != 0) {
                    tree = lost[m].data[d] == it[j].entry_block;
                    break;
                }
        if (!tree)
            continue;
        stats.trees++;
        for (size_t i = 0; i < sc->npaths; i++) {
            const struct truth_path *t = &sc->paths[i];
            if (!t->dir && t->complete > k && it[j].size == t->size &&
                strcmp(it[j].sha256, t->sha) == 0) {
                stats.early++;
                break;
            }
        }
        /* Whose data it is, by content: was it named after its file? */
        const struct truth_path *whose = NULL;
        for (size_t i = 0; i < sc->npaths && whose == NULL; i++)
            if (!sc->paths[i].dir && it[j].size == sc->paths[i].size && it[j].size != 0 &&
                strcmp(it[j].sha256, sc->paths[i].sha) == 0)
                whose = &sc->paths[i];
        if (whose == NULL)
            continue;
        if (it[j].kind != SALVAGE_KIND_CARVED) {
            stats.named++;
            continue;
        }
        stats.unnamed++;
        const struct scan_entry *ents;
        size_t nent = scan_entries(scan, &ents);
        for (size_t e = 0; e < nent; e++)
            if (ents[e].state == SCAN_ENTRY_LIVE && ents[e].path != NULL &&
                strcmp(ents[e].path, whose->path) == 0 && scan_entry_is_file(&ents[e]) &&
                scan_lost_tree_of(scan, ents[e].id) == NULL) {
                stats.nameable++;
                if (getenv("CRASH_VERBOSE") != NULL)
                    printf("  %s: %s: its tree (data from %" PRIu64 ") is not paired with"
                           " its entry at %" PRIu64 " (data %" PRIu64 ", size %" PRIu64
                           ", wrcnt %u)\n",
                           what, whose->path, it[j].entry_block, ents[e].block,
                           ents[e].e.subtree, ents[e].e.size, (unsigned)ents[e].e.wrcnt);
                break;
            }
    }
done:
    salvage_result_free(res);
    scan_result_free(scan);
    if (fs != NULL)
        lanyfs_fs_close(fs);
    if (dfd >= 0)
        close(dfd);
    rm_tree(out);
    return ok;
}

static void one_state(const struct truth_scenario *sc, uint64_t k, uint32_t tear)
{
    char base[1100], log[1100], img[1100], what[1200];
    snprintf(base, sizeof(base), "%s/base.img", sc->dir);
    snprintf(log, sizeof(log), "%s/writes.log", sc->dir);
    snprintf(img, sizeof(img), "%s/state.img", opt.work);
    snprintf(what, sizeof(what), "%.1000s K=%" PRIu64 " tear=%" PRIu32, sc->dir, k, tear);
    struct lanyfs_replay_opts ro = {.upto = k, .tear = tear, .force = true};
    struct lanyfs_error err = {0};
    stats.states++;
    if (lanyfs_replay(base, log, img, &ro, NULL, &err) != LANYFS_OK) {
        printf("  %s: replay failed: %s\n", what, err.msg);
        stats.failed++;
        return;
    }
    if (!check_state(sc, img, k, what))
        stats.failed++;
}

static bool run_scenario(const char *spec)
{
    struct truth_scenario sc;
    bool ok = truth_make(&sc, "salvage-crash", opt.lanyfs, opt.work, spec);
    if (ok) {
        uint32_t sectors = sc.blocksize / LANYFS_SECTOR_SIZE;
        for (uint64_t k = 0; k <= sc.writes; k += opt.step) {
            one_state(&sc, k, 0);
            if (!opt.tears || k + 1 > sc.writes)
                continue;
            for (uint32_t t = 1; t < sectors; t++)
                one_state(&sc, k, t);
        }
    }
    truth_free(&sc);
    return ok;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
            opt.step = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--tears") == 0)
            opt.tears = true;
        else
            break;
    }
    if (argc - i < 3 || opt.step == 0) {
        fprintf(stderr, "usage: salvage-crash [--step N] [--tears] LANYFS WORKDIR SCENARIO...\n");
        return 2;
    }
    opt.lanyfs = argv[i++];
    opt.work = argv[i++];
    rm_tree(opt.work);
    if (mkdir(opt.work, 0777) != 0 && errno != EEXIST) {
        perror(opt.work);
        return 1;
    }
    bool ok = true;
    for (; i < argc; i++)
        ok = run_scenario(argv[i]) && ok;
    printf("salvage-crash: %" PRIu64 " states, %" PRIu64 " failed; %" PRIu64
           " complete paths checked byte for byte, %" PRIu64
           " complete by the log but not shown by their state (2012 mode), %" PRIu64
           " of those copied out all the same, %" PRIu64 " shown only through an entry the"
           " driver freed (2012 mode), %" PRIu64 " shown twice by one entry and copied out"
           " at the other path\n",
           stats.states, stats.failed, stats.checked, stats.not_shown, stats.not_shown_found,
           stats.stale, stats.twice);
    printf("salvage-crash: %" PRIu64 " files copied out of extender trees no entry linked, %" PRIu64
           " of them files not complete by their cut, byte for byte as they end\n",
           stats.trees, stats.early);
    printf("salvage-crash: of the trees of a known file, %" PRIu64 " came out under its name, %"
           PRIu64 " carved, %" PRIu64 " of those while its live entry had no tree\n",
           stats.named, stats.unnamed, stats.nameable);
    return ok && stats.failed == 0 ? 0 : 1;
}
