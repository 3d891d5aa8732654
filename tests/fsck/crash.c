/*
 * crash.c -- the crash matrix of fsck-lanyfs.
 *
 *   fsck-crash [--step N] [--tears] [--cuts N] [--cut-every N] [--max-states N]
 *              LANYFS WORKDIR SCENARIO...
 *
 * A SCENARIO is MODE:SEED:OPS:BLOCKSIZE:ADDRLEN:SIZE, MODE "correct" or
 * "2012" (e.g. 2012:3:12:1024:2:256K).  For each one `lanyfs simulate`
 * (the LANYFS program) writes an image, its write log and truth.json.
 * Then for every write prefix K (every --step'th) -- and with --tears also
 * with write K+1 torn after each sector count -- the state is rebuilt
 * (lanyfs_replay) and:
 *   1. every path truth.json marks complete by K (complete_after <= K)
 *      that the state itself shows with its final size and SHA-256 is
 *      noted;
 *   2. fsck -y runs in a child process (a crash or a hang of more than a
 *      minute is a failure); its status must be 0 or 1;
 *   3. fsck -n must then exit 0 (clean);
 *   4. every noted path must read back with the same size and SHA-256, or,
 *      when the state showed its entry (or an ancestor's) at another path
 *      too (an entry in two directories' trees, of which a repair keeps
 *      one), that other path must: another noted path naming the same
 *      entry, or the path where the scan of the state keeps the entry,
 *      when the state shows it there through live nodes only (no freed,
 *      listed or deleted block on the way).
 * With --cuts N, on every --cut-every'th state whose repair writes, the
 * repair is cut at up to N points spread over its writes (by refusing
 * write c through the write hook below the undo recorder, and at every
 * other cut also landing that write's first sector, a torn write), then
 * fsck -y runs again and steps 3 and 4 must hold.
 *
 *   fsck-crash --cut-image IMAGE [--cuts N]
 *
 * cuts the repair of one damaged image instead: every file and directory
 * the image shows before the repair and the whole repair keeps is noted
 * (walks from the root), the repair is cut at up to N points (default: every write), each time also
 * torn at its first sector, run again, and steps 3 and 4 must hold.
 *
 * With CRASH_KEEP=N in the environment, --cut-image also keeps the image a
 * repair cut at write N (not torn) leaves, as IMAGE.keep, to look at.
 *
 * It prints how many states and cuts were tried and how many failed, and
 * exits 1 when any failed.  Paths that the state did not show complete to
 * begin with are counted apart (they were not the repair's to keep).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsck.h"
#include "lanyfs.h"
#include "replay.h"
#include "scan.h"
#include "truth.h"
#include "undo.h"

static struct {
    uint64_t step;
    bool tears;
    uint64_t cuts;
    uint64_t cut_every;
    uint64_t max_states;
    const char *lanyfs;
    const char *work;
} opt = {1, false, 0, 1, UINT64_MAX, NULL, NULL};

static struct {
    uint64_t states;
    uint64_t failed;
    uint64_t cuts;
    uint64_t cuts_failed;
    uint64_t kept;        /* path checks made */
    uint64_t not_shown;   /* complete by truth, not shown by the state before the repair */
    uint64_t stale;       /* shown only through a link to an entry the driver freed (2012) */
    uint64_t stale_map;   /* files read through a block another entry holds (2012) */
    uint64_t twice;       /* shown twice (one entry in two trees), kept at the other path */
    uint64_t scan_kept;   /* of those, kept where the scan of the state keeps the entry,
                           * a path the log does not end with */
} stats;

/* ---- reading a path back ----------------------------------------------------- */

/* Does img show t as truth.json says it ends? */
static bool shows(const char *img, const struct truth_path *t)
{
    struct lanyfs_fs *fs = NULL;
    if (lanyfs_fs_open(img, LANYFS_OPEN_FORCE, &fs, NULL) != LANYFS_OK)
        return false;
    bool ok = truth_shows(fs, t);
    lanyfs_fs_close(fs);
    return ok;
}

/* ---- running fsck in a child ---------------------------------------------------- */

struct cut {
    uint64_t *count;      /* shared with the parent: writes seen */
    uint64_t at;          /* refuse this write (1-based), 0 = never */
    uint32_t torn;        /* sectors of it that land first */
    int fd;               /* the image, for the torn part */
    uint32_t blocksize;   /* bytes */
};

static int cut_hook(void *ctx, uint64_t block, const uint8_t *data)
{
    struct cut *c = ctx;
    uint64_t n = ++*c->count;
    if (c->at == 0 || n < c->at)
        return 0;
    if (n == c->at && c->torn > 0) {
        size_t len = (size_t)c->torn * LANYFS_SECTOR_SIZE;
        if (pwrite(c->fd, data, len, (off_t)(block * c->blocksize)) != (ssize_t)len)
            return -1;
    }
    return -1;
}

/* Run fsck on img in a child; returns its exit status, or -1 for a crash or a hang. */
static int run_fsck(const char *img, enum fsck_mode mode, uint64_t *shared, uint64_t cut_at,
                    uint32_t torn, uint32_t blocksize)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        alarm(60);
        FILE *nul = fopen("/dev/null", "w");
        struct fsck_opts o;
        memset(&o, 0, sizeof(o));
        o.mode = mode;
        o.no_undo = true;
        o.progress_fd = -1;
        o.device = img;
        o.out = nul;
        o.errout = nul;
        o.no_mount_check = true;
        struct cut c = {.count = shared, .at = cut_at, .torn = torn, .fd = -1,
                        .blocksize = blocksize};
        if (shared != NULL) {
            c.fd = open(img, O_WRONLY);
            o.test_hook = cut_hook;
            o.test_hook_ctx = &c;
        }
        int rc = fsck_run(&o);
        _exit(rc);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    if (!WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static bool copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    bool ok = a != NULL && b != NULL;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof(buf), a)) > 0)
        ok = fwrite(buf, 1, n, b) == n;
    if (a)
        fclose(a);
    if (b && fclose(b) != 0)
        ok = false;
    return ok;
}

/*
 * What the state showed, kept for verify: the entry block each noted path
 * names (0: none), and for a noted path whose entry (or an ancestor's) the
 * state holds in two directories' trees, the path where the scan of the
 * state keeps it.  An entry the state holds in two trees (a rename caught
 * halfway, or the driver's failed delete, SPEC-9.9) can keep only one of
 * them; entries inserted below it through either tree show at both.
 */
struct alt {
    size_t i;     /* the noted path */
    char *other;  /* the same entry's path there, the rest of path i appended */
};

struct state_view {
    uint64_t *blocks; /* per noted path */
    struct alt *alts;
    size_t nalts;
};

static void state_view_free(struct state_view *v)
{
    if (v == NULL)
        return;
    for (size_t k = 0; k < v->nalts; k++)
        free(v->alts[k].other);
    free(v->alts);
    free(v->blocks);
}

/* A block the scan of the state found in a live tree (not freed, listed or deleted). */
static bool live_node(const struct scan_result *r, uint64_t blk)
{
    const struct scan_block *map = scan_blocks(r);
    if (blk == 0 || blk >= scan_block_count(r))
        return false;
    return map[blk].cls == SCAN_BLK_DIR || map[blk].cls == SCAN_BLK_FILE;
}

/*
 * The entry block path (its first len bytes) names, found by the tree
 * order through live nodes only; 0 when it names none that way.
 */
static uint64_t live_resolve(struct lanyfs_fs *fs, const struct scan_result *r, const char *path,
                             size_t len)
{
    uint64_t cur = lanyfs_fs_super(fs)->rootdir, limit = scan_block_count(r);
    size_t at = 0;
    while (at < len) {
        while (at < len && path[at] == '/')
            at++;
        if (at == len)
            break;
        size_t end = at;
        while (end < len && path[end] != '/')
            end++;
        struct lanyfs_entry e;
        if (lanyfs_fs_read_entry(fs, cur, &e, NULL) != LANYFS_OK || !lanyfs_entry_is_dir(&e))
            return 0;
        uint64_t node = e.subtree, found = 0;
        for (uint64_t steps = 0; node != 0 && found == 0 && steps < limit; steps++) {
            struct lanyfs_entry n;
            if (!live_node(r, node) || lanyfs_fs_read_entry(fs, node, &n, NULL) != LANYFS_OK)
                return 0;
            int c = lanyfs_name_cmp(n.name, (const uint8_t *)path + at, end - at);
            if (c == 0)
                found = node;
            else
                node = c < 0 ? n.left : n.right;
        }
        if (found == 0)
            return 0;
        cur = found;
        at = end;
    }
    return cur;
}

static bool state_view_get(const struct truth_scenario *sc, const char *img, const bool *must,
                           struct state_view *v)
{
    memset(v, 0, sizeof(*v));
    v->blocks = calloc(sc->npaths + 1, sizeof(*v->blocks));
    struct lanyfs_fs *fs = NULL;
    struct scan_result *r = NULL;
    if (v->blocks == NULL)
        return false;
    if (lanyfs_fs_open(img, LANYFS_OPEN_FORCE, &fs, NULL) != LANYFS_OK)
        return true;
    for (size_t i = 0; i < sc->npaths; i++)
        if (must[i] && lanyfs_path_resolve(fs, sc->paths[i].path, &v->blocks[i], NULL, NULL) !=
                           LANYFS_OK)
            v->blocks[i] = 0;
    if (scan_fs(fs, NULL, &r, NULL) != LANYFS_OK)
        goto out;
    const struct scan_entry *ents;
    size_t nents = scan_entries(r, &ents);
    size_t cap = 0;
    for (size_t i = 0; i < sc->npaths; i++) {
        if (!must[i])
            continue;
        const char *p = sc->paths[i].path;
        size_t len = strlen(p);
        for (size_t cut = len; cut > 0; cut--) {
            if (cut < len && p[cut] != '/')
                continue;
            uint64_t b = live_resolve(fs, r, p, cut);
            const struct scan_entry *x = NULL;
            for (size_t k = 0; k < nents && x == NULL && b != 0; k++)
                if (ents[k].block == b && ents[k].state == SCAN_ENTRY_LIVE)
                    x = &ents[k];
            if (x == NULL || x->path == NULL ||
                (strlen(x->path) == cut && strncmp(x->path, p, cut) == 0) ||
                live_resolve(fs, r, x->path, strlen(x->path)) != b)
                continue;
            if (v->nalts == cap) {
                size_t ncap = cap ? cap * 2 : 8;
                struct alt *na = realloc(v->alts, ncap * sizeof(*na));
                if (na == NULL)
                    goto out;
                v->alts = na;
                cap = ncap;
            }
            size_t olen = strlen(x->path) + (len - cut) + 1;
            char *other = malloc(olen);
            if (other == NULL)
                goto out;
            snprintf(other, olen, "%s%s", x->path, p + cut);
            v->alts[v->nalts++] = (struct alt){i, other};
        }
    }
out:
    scan_result_free(r);
    lanyfs_fs_close(fs);
    return true;
}

/*
 * Does img show path i where the state also showed it: below another noted
 * path that named the same entry as path i or one of its ancestors, or at
 * the path where the scan of the state keeps that entry, which the state
 * showed through live nodes too?
 */
static bool kept_elsewhere(const struct truth_scenario *sc, const char *img, const bool *must,
                           const struct state_view *v, size_t i)
{
    if (v == NULL || v->blocks == NULL)
        return false;
    const uint64_t *blocks = v->blocks;
    const char *p = sc->paths[i].path;
    size_t len = strlen(p);
    for (size_t cut = len; cut > 0; cut--) {
        if (cut < len && p[cut] != '/')
            continue;
        /* The noted path p[0..cut) and the entry it names. */
        size_t a = SIZE_MAX;
        for (size_t k = 0; k < sc->npaths && a == SIZE_MAX; k++)
            if (must[k] && blocks[k] != 0 && strlen(sc->paths[k].path) == cut &&
                strncmp(sc->paths[k].path, p, cut) == 0)
                a = k;
        if (a == SIZE_MAX)
            continue;
        for (size_t j = 0; j < sc->npaths; j++) {
            if (j == a || !must[j] || blocks[j] != blocks[a])
                continue;
            char other[4200];
            snprintf(other, sizeof(other), "%s%s", sc->paths[j].path, p + cut);
            struct truth_path t = sc->paths[i];
            t.path = other;
            if (shows(img, &t))
                return true;
        }
    }
    for (size_t k = 0; k < v->nalts; k++) {
        if (v->alts[k].i != i)
            continue;
        struct truth_path t = sc->paths[i];
        t.path = v->alts[k].other;
        if (shows(img, &t)) {
            stats.scan_kept++;
            return true;
        }
    }
    return false;
}

/* Steps 3 and 4 on img: -n clean, the noted paths intact.  Prints why not. */
static bool verify(const struct truth_scenario *sc, const char *img, const bool *must,
                   const struct state_view *view, const char *what)
{
    bool ok = true;
    int rc = run_fsck(img, FSCK_MODE_NO, NULL, 0, 0, sc->blocksize);
    if (rc != 0) {
        printf("  %s: fsck -n exits %d after the repair\n", what, rc);
        ok = false;
    }
    for (size_t i = 0; i < sc->npaths; i++) {
        if (!must[i])
            continue;
        stats.kept++;
        if (!shows(img, &sc->paths[i])) {
            if (kept_elsewhere(sc, img, must, view, i)) {
                stats.twice++;
                continue;
            }
            printf("  %s: %s no longer reads back as it was\n", what, sc->paths[i].path);
            ok = false;
        }
    }
    return ok;
}

/*
 * In 2012 mode, the paths that img shows only through a link the driver
 * kept to an entry it had freed (MARK_STALE_TREE, MARK_FROZEN_PARENT,
 * SPEC-9.12), as when a rename replaced a file and was cut off before its
 * tree change: the entry is the replaced file, whose block is in the free
 * list, and whose content matches the path's final one only by chance (an
 * empty file).  The repair unlinks it as the deleted file it is; such a
 * path is not noted, nor any path below it (a directory the driver freed
 * after a failed delete of what it held, SPEC-9.9).  Nor is a file whose
 * own map has such a link (MARK_STALE_TREE from one of its extenders): a
 * block freed twice was handed out twice, and another entry, which now
 * holds it, wrote over the file's data there.  The state reads that entry
 * in the file (as the driver does, whose reads the log's hashes are); the
 * repair leaves the block to its holder and a hole in the file.
 */
static void drop_stale(const struct truth_scenario *sc, const char *img, bool *must)
{
    struct lanyfs_fs *fs = NULL;
    struct scan_result *r = NULL;
    bool *dropped = calloc(sc->npaths + 1, sizeof(*dropped));
    if (dropped == NULL || !sc->driver ||
        lanyfs_fs_open(img, LANYFS_OPEN_FORCE, &fs, NULL) != LANYFS_OK) {
        free(dropped);
        return;
    }
    if (scan_fs(fs, NULL, &r, NULL) == LANYFS_OK) {
        const struct scan_finding *f;
        size_t nf = scan_findings(r, &f);
        uint64_t stale0 = stats.stale + stats.stale_map;
        for (size_t i = 0; i < sc->npaths; i++) {
            uint64_t blk = 0;
            if (!must[i] || lanyfs_path_resolve(fs, sc->paths[i].path, &blk, NULL, NULL) !=
                                LANYFS_OK)
                continue;
            for (size_t j = 0; j < nf && must[i]; j++) {
                const struct scan_entry *x = scan_entry_by_id(r, f[j].entry);
                bool own_map = f[j].code == SCAN_PR_MARK_STALE_TREE && !sc->paths[i].dir &&
                               x != NULL && x->block == blk && f[j].block != blk;
                if (((f[j].code == SCAN_PR_MARK_STALE_TREE ||
                      f[j].code == SCAN_PR_MARK_FROZEN_PARENT) &&
                     f[j].block2 == blk) ||
                    own_map) {
                    must[i] = false;
                    dropped[i] = true;
                    if (own_map && f[j].block2 != blk)
                        stats.stale_map++;
                    else
                        stats.stale++;
                }
            }
        }
        /* What the state shows below such an entry it shows through it too. */
        for (size_t i = 0; i < sc->npaths && stats.stale + stats.stale_map > stale0; i++) {
            for (size_t j = 0; j < sc->npaths && must[i]; j++) {
                size_t n = strlen(sc->paths[j].path);
                if (dropped[j] && strncmp(sc->paths[i].path, sc->paths[j].path, n) == 0 &&
                    sc->paths[i].path[n] == '/') {
                    must[i] = false;
                    stats.stale++;
                }
            }
        }
    }
    free(dropped);
    scan_result_free(r);
    lanyfs_fs_close(fs);
}

/* One state: the first k writes, write k+1 torn after `tear` sectors (0: none). */
static void one_state(const struct truth_scenario *sc, uint64_t k, uint32_t tear,
                      uint64_t *shared, uint64_t index)
{
    char base[1100], log[1100], img[1100], cutimg[1100], what[1200];
    snprintf(base, sizeof(base), "%s/base.img", sc->dir);
    snprintf(log, sizeof(log), "%s/writes.log", sc->dir);
    snprintf(img, sizeof(img), "%s/state.img", opt.work);
    snprintf(cutimg, sizeof(cutimg), "%s/cut.img", opt.work);
    snprintf(what, sizeof(what), "%.1000s K=%" PRIu64 " tear=%" PRIu32, sc->dir, k, tear);
    struct lanyfs_replay_opts ro = {.upto = k, .tear = tear, .force = true};
    struct lanyfs_error err = {0};
    if (lanyfs_replay(base, log, img, &ro, NULL, &err) != LANYFS_OK) {
        printf("  %s: replay failed: %s\n", what, err.msg);
        stats.failed++;
        return;
    }
    stats.states++;
    bool *must = calloc(sc->npaths + 1, sizeof(*must));
    if (must == NULL)
        abort();
    for (size_t i = 0; i < sc->npaths; i++) {
        if (sc->paths[i].complete > k)
            continue;
        must[i] = shows(img, &sc->paths[i]);
        if (!must[i])
            stats.not_shown++;
    }
    drop_stale(sc, img, must);
    struct state_view view;
    if (!state_view_get(sc, img, must, &view))
        abort();
    bool cut_here = opt.cuts > 0 && index % opt.cut_every == 0;
    if (cut_here && !copy_file(img, cutimg))
        cut_here = false;
    *shared = 0;
    int rc = run_fsck(img, FSCK_MODE_YES, shared, 0, 0, sc->blocksize);
    uint64_t writes = *shared;
    bool ok = true;
    if (rc != 0 && rc != 1) {
        printf("  %s: fsck -y exits %d%s\n", what, rc, rc < 0 ? " (crash or hang)" : "");
        ok = false;
    }
    if (!verify(sc, img, must, &view, what))
        ok = false;
    if (!ok)
        stats.failed++;
    if (!cut_here || writes == 0)
        goto out;
    /* The repair cut short, then run again. */
    uint64_t n = opt.cuts < writes ? opt.cuts : writes;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t at = 1 + j * writes / n;
        uint32_t torn = (j % 2 == 1 && sc->blocksize > LANYFS_SECTOR_SIZE) ? 1 : 0;
        char what2[1400];
        snprintf(what2, sizeof(what2), "%.1250s, repair cut at write %" PRIu64 "%s", what, at,
                 torn ? " (torn)" : "");
        char again[1100];
        snprintf(again, sizeof(again), "%s/again.img", opt.work);
        if (!copy_file(cutimg, again))
            break;
        stats.cuts++;
        *shared = 0;
        int c1 = run_fsck(again, FSCK_MODE_YES, shared, at, torn, sc->blocksize);
        int c2 = run_fsck(again, FSCK_MODE_YES, NULL, 0, 0, sc->blocksize);
        bool cok = c1 >= 0 && c2 >= 0 && (c2 == 0 || c2 == 1);
        if (!cok)
            printf("  %s: fsck exits %d, then %d\n", what2, c1, c2);
        if (!verify(sc, again, must, &view, what2))
            cok = false;
        if (!cok)
            stats.cuts_failed++;
    }
out:
    state_view_free(&view);
    free(must);
}

static bool run_scenario(const char *spec, uint64_t *shared, uint64_t *index)
{
    struct truth_scenario sc;
    if (!truth_make(&sc, "crash", opt.lanyfs, opt.work, spec)) {
        truth_free(&sc);
        return false;
    }
    uint32_t sectors = sc.blocksize / LANYFS_SECTOR_SIZE;
    for (uint64_t k = 0; k <= sc.writes && stats.states < opt.max_states; k += opt.step) {
        one_state(&sc, k, 0, shared, (*index)++);
        if (!opt.tears || k + 1 > sc.writes)
            continue;
        for (uint32_t t = 1; t < sectors && stats.states < opt.max_states; t++)
            one_state(&sc, k, t, shared, (*index)++);
    }
    truth_free(&sc);
    return true;
}

/* ---- one damaged image -------------------------------------------------------- */

struct plist {
    struct truth_path *p;
    size_t n;
    size_t cap;
};

static void plist_add(struct plist *l, const char *path, bool dir, uint64_t size,
                      const char *sha)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->p = realloc(l->p, l->cap * sizeof(*l->p));
        if (l->p == NULL)
            abort();
    }
    struct truth_path *t = &l->p[l->n++];
    memset(t, 0, sizeof(*t));
    t->path = strdup(path);
    t->dir = dir;
    t->size = size;
    if (sha)
        snprintf(t->sha, sizeof(t->sha), "%s", sha);
}

/* Every entry reached from dir, as a path list (depth-bounded). */
static void walk(struct lanyfs_fs *fs, uint64_t dir, const char *prefix, unsigned depth,
                 struct plist *l)
{
    struct lanyfs_dirlist dl;
    if (depth > 32 || lanyfs_dir_list(fs, dir, &dl, NULL) != LANYFS_OK)
        return;
    for (size_t i = 0; i < dl.count; i++) {
        const struct lanyfs_entry *e = &dl.ents[i].e;
        if (e->name_len == 0 || e->name_len > LANYFS_NAME_MAX ||
            memchr(e->name, '/', e->name_len) != NULL)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%.*s", prefix, (int)e->name_len, (const char *)e->name);
        if (lanyfs_entry_is_dir(e)) {
            plist_add(l, path, true, 0, NULL);
            walk(fs, dl.ents[i].block, path, depth + 1, l);
        } else if (lanyfs_entry_is_file(e) && e->size <= ((uint64_t)1 << 26)) {
            uint8_t *buf = malloc(e->size ? e->size : 1);
            size_t got = 0;
            if (buf != NULL &&
                lanyfs_file_pread(fs, e, 0, buf, e->size, &got, NULL, NULL) == LANYFS_OK &&
                got == e->size) {
                uint8_t sum[32];
                char hex[65];
                lanyfs_sha256(buf, got, sum);
                lanyfs_sha256_hex(sum, hex);
                plist_add(l, path, false, e->size, hex);
            }
            free(buf);
        }
    }
    lanyfs_dirlist_free(&dl);
}

static int cut_image(const char *image)
{
    struct truth_scenario sc;
    memset(&sc, 0, sizeof(sc));
    snprintf(sc.dir, sizeof(sc.dir), "%s", image);
    struct lanyfs_fs *fs = NULL;
    if (lanyfs_fs_open(image, LANYFS_OPEN_FORCE, &fs, NULL) != LANYFS_OK) {
        fprintf(stderr, "crash: cannot open %s\n", image);
        return 2;
    }
    sc.blocksize = lanyfs_fs_geom(fs)->blocksize;
    struct plist l = {0};
    walk(fs, lanyfs_fs_super(fs)->rootdir, "", 0, &l);
    lanyfs_fs_close(fs);
    sc.paths = l.p;
    sc.npaths = l.n;
    bool *must = calloc(sc.npaths + 1, sizeof(*must));
    for (size_t i = 0; i < sc.npaths; i++)
        must[i] = shows(image, &sc.paths[i]);
    uint64_t *shared = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED || must == NULL)
        return 2;
    char probe[4200], again[4200];
    snprintf(probe, sizeof(probe), "%s.probe", image);
    snprintf(again, sizeof(again), "%s.cut", image);
    if (!copy_file(image, probe))
        return 2;
    *shared = 0;
    int rc = run_fsck(probe, FSCK_MODE_YES, shared, 0, 0, sc.blocksize);
    uint64_t writes = *shared;
    stats.states++;
    /*
     * The whole repair may drop what the image showed twice (an entry in two
     * trees keeps one place); what it keeps, a cut repair must keep too.
     */
    size_t dropped = 0;
    for (size_t i = 0; i < sc.npaths; i++) {
        if (must[i] && !shows(probe, &sc.paths[i])) {
            must[i] = false;
            dropped++;
        }
    }
    if ((rc != 0 && rc != 1) || !verify(&sc, probe, must, NULL, image))
        stats.failed++;
    uint64_t n = opt.cuts && opt.cuts < writes ? opt.cuts : writes;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t at = 1 + j * writes / n;
        for (uint32_t torn = 0; torn <= (sc.blocksize > LANYFS_SECTOR_SIZE ? 1u : 0u); torn++) {
            char what[4400];
            snprintf(what, sizeof(what), "%.4000s, repair cut at write %" PRIu64 "%s", image, at,
                     torn ? " (torn)" : "");
            if (!copy_file(image, again))
                return 2;
            stats.cuts++;
            *shared = 0;
            int c1 = run_fsck(again, FSCK_MODE_YES, shared, at, torn, sc.blocksize);
            const char *keep_at = getenv("CRASH_KEEP");
            if (keep_at != NULL && strtoull(keep_at, NULL, 10) == at && torn == 0) {
                char keep[4300];
                snprintf(keep, sizeof(keep), "%.4000s.keep", image);
                if (!copy_file(again, keep))
                    printf("  %s: cannot keep it as %s\n", what, keep);
            }
            int c2 = run_fsck(again, FSCK_MODE_YES, NULL, 0, 0, sc.blocksize);
            bool ok = c1 >= 0 && (c2 == 0 || c2 == 1);
            if (!ok)
                printf("  %s: fsck exits %d, then %d\n", what, c1, c2);
            if (!verify(&sc, again, must, NULL, what))
                ok = false;
            if (!ok)
                stats.cuts_failed++;
        }
    }
    remove(probe);
    remove(again);
    size_t npaths = sc.npaths;
    truth_free(&sc);
    free(must);
    munmap(shared, sizeof(uint64_t));
    printf("cut repair of %s: %" PRIu64 " writes, %" PRIu64 " cuts tried, %" PRIu64
           " failed; %zu paths, %zu of them not kept by the whole repair\n",
           image, writes, stats.cuts, stats.cuts_failed, npaths, dropped);
    return stats.failed == 0 && stats.cuts_failed == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int i = 1;
    const char *one = NULL;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--cut-image") == 0 && i + 1 < argc)
            one = argv[++i];
        else if (strcmp(argv[i], "--tears") == 0)
            opt.tears = true;
        else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
            opt.step = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--cuts") == 0 && i + 1 < argc)
            opt.cuts = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--cut-every") == 0 && i + 1 < argc)
            opt.cut_every = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--max-states") == 0 && i + 1 < argc)
            opt.max_states = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "crash: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (one != NULL)
        return cut_image(one);
    if (argc - i < 3 || opt.step == 0 || opt.cut_every == 0) {
        fprintf(stderr, "usage: fsck-crash [--step N] [--tears] [--cuts N] [--cut-every N] "
                        "[--max-states N] LANYFS WORKDIR SCENARIO...\n");
        return 2;
    }
    opt.lanyfs = argv[i++];
    opt.work = argv[i++];
    mkdir(opt.work, 0755);
    uint64_t *shared = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        return 1;
    uint64_t index = 0;
    bool ok = true;
    for (; i < argc; i++)
        ok = run_scenario(argv[i], shared, &index) && ok;
    printf("crash matrix: %" PRIu64 " states tried, %" PRIu64 " failed; %" PRIu64
           " repairs cut short and rerun, %" PRIu64 " failed; %" PRIu64 " path checks, %" PRIu64
           " paths complete by the log but not shown by their state, %" PRIu64
           " shown only through a link to a freed entry (2012 mode), %" PRIu64
           " files read through a block their map shares with another entry (2012 mode), %" PRIu64
           " shown twice by one entry in two trees and kept at the other path (%" PRIu64
           " of them where the scan keeps the entry, a path the log does not end with)\n",
           stats.states, stats.failed, stats.cuts, stats.cuts_failed, stats.kept,
           stats.not_shown, stats.stale, stats.stale_map, stats.twice, stats.scan_kept);
    return ok && stats.failed == 0 && stats.cuts_failed == 0 ? 0 : 1;
}
