/*
 * crash.c -- salvage of simulated unplugs.
 *
 *   salvage-crash [--step N] [--tears] LANYFS WORKDIR SCENARIO...
 *
 * A SCENARIO is MODE:SEED:OPS:BLOCKSIZE:ADDRLEN:SIZE, MODE "correct" or
 * "2012" (as in tests/fsck/crash.c).  For each one `lanyfs simulate` (the
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
#include <glib.h>
#include <inttypes.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lanyfs.h"
#include "replay.h"
#include "salvage.h"
#include "scan.h"
#include "undo.h"

struct tpath {
    char *path;        /* as truth.json gives it */
    uint64_t size;     /* file size */
    char sha[65];      /* SHA-256, hex */
    uint64_t complete; /* complete_after */
};

struct scenario {
    char dir[1024];
    bool driver;         /* 2012 mode */
    uint64_t writes;
    uint32_t blocksize;
    struct tpath *paths; /* files only */
    size_t npaths;
};

static struct {
    uint64_t step;
    bool tears;
    const char *lanyfs;
    const char *work;
} opt = {1, false, NULL, NULL};

static struct {
    uint64_t states, failed, checked, not_shown;
} stats;

static bool run_prog(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, STDOUT_FILENO);
            dup2(nul, STDERR_FILENO);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return false;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool load_truth(struct scenario *sc)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/truth.json", sc->dir);
    GError *gerr = NULL;
    JsonParser *p = json_parser_new();
    bool ok = false;
    if (!json_parser_load_from_file(p, path, &gerr)) {
        fprintf(stderr, "salvage-crash: %s: %s\n", path, gerr->message);
        g_error_free(gerr);
        goto out;
    }
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    sc->writes = (uint64_t)json_object_get_int_member(root, "writes");
    JsonObject *o = json_object_get_object_member(root, "options");
    sc->blocksize = (uint32_t)json_object_get_int_member(o, "blocksize");
    JsonArray *arr = json_object_get_array_member(root, "paths");
    guint n = json_array_get_length(arr);
    sc->paths = calloc(n ? n : 1, sizeof(*sc->paths));
    if (sc->paths == NULL)
        goto out;
    for (guint i = 0; i < n; i++) {
        JsonObject *x = json_array_get_object_element(arr, i);
        JsonNode *ca = json_object_get_member(x, "complete_after");
        JsonNode *sha = json_object_get_member(x, "sha256");
        if (strcmp(json_object_get_string_member(x, "type"), "directory") == 0 || ca == NULL ||
            JSON_NODE_HOLDS_NULL(ca) || sha == NULL || JSON_NODE_HOLDS_NULL(sha))
            continue;
        struct tpath *t = &sc->paths[sc->npaths++];
        t->path = strdup(json_object_get_string_member(x, "path"));
        t->complete = (uint64_t)json_node_get_int(ca);
        t->size = (uint64_t)json_object_get_int_member(x, "size");
        snprintf(t->sha, sizeof(t->sha), "%s", json_node_get_string(sha));
    }
    ok = true;
out:
    g_object_unref(p);
    return ok;
}

/* Does the state show t as truth.json says it ends (read by the core)? */
static bool shows(struct lanyfs_fs *fs, const struct tpath *t)
{
    struct lanyfs_entry e;
    bool ok = false;
    if (lanyfs_path_resolve(fs, t->path, NULL, &e, NULL) != LANYFS_OK ||
        !lanyfs_entry_is_file(&e) || e.size != t->size || e.size > ((uint64_t)1 << 30))
        return false;
    uint8_t *buf = malloc(e.size ? e.size : 1);
    size_t got = 0;
    if (buf != NULL && lanyfs_file_pread(fs, &e, 0, buf, e.size, &got, NULL, NULL) == LANYFS_OK &&
        got == e.size) {
        uint8_t sum[LANYFS_SHA256_LEN];
        char hex[65];
        lanyfs_sha256(buf, got, sum);
        lanyfs_sha256_hex(sum, hex);
        ok = strcmp(hex, t->sha) == 0;
    }
    free(buf);
    return ok;
}

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
static bool check_state(const struct scenario *sc, const char *img, uint64_t k, const char *what)
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
    struct salvage_opts so = {.flags = SALVAGE_DELETED | SALVAGE_ORPHANS};
    if (salvage_run(scan, fs, dfd, &so, &res, &err) != LANYFS_OK) {
        printf("  %s: salvage fails: %s\n", what, err.msg);
        goto done;
    }
    const struct salvage_item *it;
    size_t nit = salvage_items(res, &it);
    ok = true;
    for (size_t i = 0; i < sc->npaths; i++) {
        const struct tpath *t = &sc->paths[i];
        if (t->complete > k)
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
        if (sc->driver && !shows(fs, t)) {
            stats.not_shown++;
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

static void one_state(const struct scenario *sc, uint64_t k, uint32_t tear)
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
    char mode[16], size[32];
    unsigned long long seed, ops, bs, al;
    if (sscanf(spec, "%15[^:]:%llu:%llu:%llu:%llu:%31s", mode, &seed, &ops, &bs, &al, size) != 6) {
        fprintf(stderr, "salvage-crash: bad scenario '%s'\n", spec);
        return false;
    }
    struct scenario sc;
    memset(&sc, 0, sizeof(sc));
    sc.driver = strcmp(mode, "2012") == 0;
    snprintf(sc.dir, sizeof(sc.dir), "%s/%s-%llu-%llu-%llu", opt.work, mode, seed, bs, al);
    char s_seed[32], s_ops[32], s_geo[64];
    snprintf(s_seed, sizeof(s_seed), "%llu", seed);
    snprintf(s_ops, sizeof(s_ops), "%llu", ops);
    snprintf(s_geo, sizeof(s_geo), "%llu:%llu", bs, al);
    char *argv[16];
    int a = 0;
    argv[a++] = (char *)opt.lanyfs;
    argv[a++] = "simulate";
    argv[a++] = "--seed";
    argv[a++] = s_seed;
    argv[a++] = "--ops";
    argv[a++] = s_ops;
    argv[a++] = "--geometry";
    argv[a++] = s_geo;
    argv[a++] = "--size";
    argv[a++] = size;
    argv[a++] = "--force";
    if (sc.driver)
        argv[a++] = "--driver=2012";
    argv[a++] = sc.dir;
    argv[a] = NULL;
    bool ok = run_prog(argv) && load_truth(&sc);
    if (!ok) {
        fprintf(stderr, "salvage-crash: the simulator failed for %s\n", spec);
    } else {
        uint32_t sectors = sc.blocksize / LANYFS_SECTOR_SIZE;
        for (uint64_t k = 0; k <= sc.writes; k += opt.step) {
            one_state(&sc, k, 0);
            if (!opt.tears || k + 1 > sc.writes)
                continue;
            for (uint32_t t = 1; t < sectors; t++)
                one_state(&sc, k, t);
        }
    }
    for (size_t i = 0; i < sc.npaths; i++)
        free(sc.paths[i].path);
    free(sc.paths);
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
           " complete by the log but not shown by their state (2012 mode)\n",
           stats.states, stats.failed, stats.checked, stats.not_shown);
    return ok && stats.failed == 0 ? 0 : 1;
}
