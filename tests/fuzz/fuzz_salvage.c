/*
 * fuzz_salvage.c -- fuzz target: an image's bytes scanned and salvaged.
 *
 * The input (at most FUZZ_IMAGE_MAX bytes) is written to an in-memory file
 * (memfd), opened with LANYFS_OPEN_FORCE, scanned, and salvaged with every
 * flag (deleted files, orphans, lost trees, also asked for by their top,
 * carving, versions) into a fresh folder "out" of a per-process temporary
 * folder (fuzz_tmp_root), beside a sentinel folder.  A run whose planned
 * bytes pass FUZZ_BYTES_MAX is cancelled at its first progress report
 * (salvage has no cap of its own but the device's size).  Besides the
 * sanitizers, it checks what salvage.h promises:
 *  - the run ends: done, or cancelled when this target cancelled it;
 *  - nothing lands outside "out": the temporary folder holds only "out"
 *    and the sentinel, whose one file is untouched; inside "out" there are
 *    only directories and regular files with one link, no symbolic link;
 *  - the directories made are the ones the totals count, and the regular
 *    files are the manifests and the items written, each once;
 *  - manifest.csv (RFC 4180, the same fields in every row) and
 *    manifest.json (parsed with json-glib) list the items the callback
 *    saw, in its order, with their output paths, sizes and SHA-256;
 *  - every item written is a file of its size and SHA-256.
 * Then "out" is removed for the next input.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "salvage.h"
#include "scan.h"
#include "sha256.h"

#define FUZZ_IMAGE_MAX ((size_t)256 << 10)
#define FUZZ_BYTES_MAX ((uint64_t)16 << 20)
#define SENTINEL "sentinel"
#define SENTINEL_FILE "keep"
#define SENTINEL_TEXT "nothing may touch this\n"

static int memfd = -1;
static char memfd_path[64];
static int root_fd = -1;

static const char *image_path(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("lanyfs-fuzz-salvage", MFD_CLOEXEC);
        if (memfd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) != 0)
        abort();
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(memfd, data + done, size - done, (off_t)done);
        if (n <= 0)
            abort();
        done += (size_t)n;
    }
    return memfd_path;
}

/* The temporary folder with its sentinel, made once. */
static void root_setup(void)
{
    if (root_fd >= 0)
        return;
    const char *root = fuzz_tmp_root("lanyfs-fuzz-salvage");
    root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0 || mkdirat(root_fd, SENTINEL, 0777) != 0)
        abort();
    int s = openat(root_fd, SENTINEL "/" SENTINEL_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                   0666);
    if (s < 0 || write(s, SENTINEL_TEXT, strlen(SENTINEL_TEXT)) != (ssize_t)strlen(SENTINEL_TEXT))
        abort();
    close(s);
}

/* The bytes of dirfd/rel (NUL-terminated, malloc), or NULL. */
static char *slurp(int dirfd, const char *rel, size_t *n)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *b = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (b = malloc((size_t)st.st_size + 1))) {
        size_t got = 0;
        ssize_t r;
        while (got < (size_t)st.st_size &&
               (r = read(fd, b + got, (size_t)st.st_size - got)) > 0)
            got += (size_t)r;
        b[got] = '\0';
        *n = got;
    }
    close(fd);
    return b;
}

/* ---- the run ----------------------------------------------------------------- */

struct run {
    volatile int cancel;
    bool cancelled;     /* this target cancelled it */
    size_t items;       /* items the callback saw */
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct run *r = ctx;
    (void)done;
    if (total > FUZZ_BYTES_MAX && !r->cancelled) {
        r->cancelled = true;
        r->cancel = 1;
    }
}

static void on_item(void *ctx, const struct salvage_item *it)
{
    struct run *r = ctx;
    FUZZ_CHECK(it->output != NULL && it->source != NULL, "item %zu without paths", r->items);
    r->items++;
}

static bool written(const struct salvage_item *it)
{
    return it->status == SALVAGE_EXACT || it->status == SALVAGE_PARTIAL ||
           it->status == SALVAGE_UNRECOVERABLE;
}

/* ---- the folder -------------------------------------------------------------- */

struct tally {
    uint64_t dirs;
    uint64_t files;
};

/* Every entry under fd: directories and regular files of one link only. */
static void walk(int fd, const char *path, unsigned depth, struct tally *t)
{
    FUZZ_CHECK(depth < 8192, "%s: deeper than salvage goes", path);
    int d = dup(fd);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    FUZZ_CHECK(dir != NULL, "%s: cannot be listed", path);
    rewinddir(dir); /* the descriptor's offset is shared with fd's */
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        FUZZ_CHECK(fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0, "%s/%s: %s", path,
                   de->d_name, strerror(errno));
        FUZZ_CHECK(!S_ISLNK(st.st_mode), "%s/%s is a symbolic link", path, de->d_name);
        if (S_ISDIR(st.st_mode)) {
            t->dirs++;
            int sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            FUZZ_CHECK(sub >= 0, "%s/%s: %s", path, de->d_name, strerror(errno));
            walk(sub, depth < 2 ? de->d_name : path, depth + 1, t);
            close(sub);
        } else {
            FUZZ_CHECK(S_ISREG(st.st_mode), "%s/%s is neither file nor directory", path,
                       de->d_name);
            FUZZ_CHECK(st.st_nlink == 1, "%s/%s has %ju links", path, de->d_name,
                       (uintmax_t)st.st_nlink);
            t->files++;
        }
    }
    closedir(dir);
}

/* The temporary folder holds out and the sentinel, untouched. */
static void check_root(void)
{
    int d = dup(root_fd);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    FUZZ_CHECK(dir != NULL, "the temporary folder cannot be listed");
    rewinddir(dir);
    struct dirent *de;
    while ((de = readdir(dir)) != NULL)
        FUZZ_CHECK(strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                       strcmp(de->d_name, "out") == 0 || strcmp(de->d_name, SENTINEL) == 0,
                   "'%s' appeared beside the output folder", de->d_name);
    closedir(dir);
    int s = openat(root_fd, SENTINEL, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    FUZZ_CHECK(s >= 0, "the sentinel folder is gone or replaced");
    struct tally t = {0};
    walk(s, SENTINEL, 0, &t);
    FUZZ_CHECK(t.dirs == 0 && t.files == 1, "the sentinel folder holds %ju folders, %ju files",
               (uintmax_t)t.dirs, (uintmax_t)t.files);
    size_t n = 0;
    char *b = slurp(s, SENTINEL_FILE, &n);
    FUZZ_CHECK(b != NULL && strcmp(b, SENTINEL_TEXT) == 0, "the sentinel file was changed");
    free(b);
    close(s);
}

/* Open out/rel one component at a time, never through a link. */
static int open_item(int out, const char *rel)
{
    char *p = strdup(rel);
    if (p == NULL)
        abort();
    int fd = dup(out);
    char *save = NULL;
    char *c = strtok_r(p, "/", &save);
    while (c != NULL && fd >= 0) {
        char *next = strtok_r(NULL, "/", &save);
        int nfd = openat(fd, c, (next != NULL ? O_DIRECTORY : 0) | O_RDONLY | O_NOFOLLOW |
                                    O_CLOEXEC);
        close(fd);
        fd = nfd;
        c = next;
    }
    free(p);
    return fd;
}

static void check_file(int out, const struct salvage_item *it, size_t i)
{
    FUZZ_CHECK(it->output[0] != '/' && strstr(it->output, "//") == NULL,
               "item %zu: output path '%s'", i, it->output);
    for (const char *c = it->output; c != NULL; c = strchr(c, '/')) {
        if (*c == '/')
            c++;
        FUZZ_CHECK(strncmp(c, "..", 2) != 0 || (c[2] != '/' && c[2] != '\0'),
                   "item %zu: output path '%s' climbs", i, it->output);
    }
    int fd = open_item(out, it->output);
    FUZZ_CHECK(fd >= 0, "item %zu: %s was written but cannot be opened: %s", i, it->output,
               strerror(errno));
    struct stat st;
    FUZZ_CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode), "item %zu: %s is no file", i,
               it->output);
    FUZZ_CHECK((uint64_t)st.st_size == it->size, "item %zu: %s has %jd bytes, the item %ju", i,
               it->output, (intmax_t)st.st_size, (uintmax_t)it->size);
    struct lanyfs_sha256 sha;
    lanyfs_sha256_init(&sha);
    static uint8_t buf[1 << 16];
    ssize_t r;
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        lanyfs_sha256_update(&sha, buf, (size_t)r);
    close(fd);
    uint8_t sum[LANYFS_SHA256_LEN];
    char hex[65];
    lanyfs_sha256_final(&sha, sum);
    lanyfs_sha256_hex(sum, hex);
    FUZZ_CHECK(strcmp(hex, it->sha256) == 0, "item %zu: %s has SHA-256 %s, the item %s", i,
               it->output, hex, it->sha256);
}

static void check_csv(int out, const struct salvage_item *items, size_t n)
{
    size_t len = 0;
    char *text = slurp(out, "manifest.csv", &len);
    FUZZ_CHECK(text != NULL, "no manifest.csv");
    fuzz_check_printable("manifest.csv", text, len);
    struct fuzz_csv c;
    fuzz_csv_read("manifest.csv", text, len, &c);
    FUZZ_CHECK(c.nrows == n + 1, "manifest.csv has %zu rows for %zu items", c.nrows, n);
    FUZZ_CHECK(c.ncols == 19 && strcmp(c.rows[0][0], "kind") == 0 &&
                   strcmp(c.rows[0][2], "output_path") == 0 && strcmp(c.rows[0][4], "size") == 0 &&
                   strcmp(c.rows[0][6], "sha256") == 0,
               "manifest.csv: header of %zu fields", c.ncols);
    for (size_t i = 0; i < n; i++) {
        char **row = c.rows[i + 1];
        char size[32];
        snprintf(size, sizeof(size), "%ju", (uintmax_t)items[i].size);
        FUZZ_CHECK(strcmp(row[0], salvage_kind_name(items[i].kind)) == 0 &&
                       strcmp(row[2], items[i].output) == 0 &&
                       strcmp(row[3], salvage_status_name(items[i].status)) == 0 &&
                       strcmp(row[4], size) == 0 && strcmp(row[6], items[i].sha256) == 0,
                   "manifest.csv row %zu is not item %zu (%s)", i + 1, i, items[i].output);
    }
    fuzz_csv_free(&c);
    free(text);
}

static void check_json(int out, const struct salvage_item *items, size_t n)
{
    size_t len = 0;
    char *text = slurp(out, "manifest.json", &len);
    FUZZ_CHECK(text != NULL, "no manifest.json");
    fuzz_check_printable("manifest.json", text, len);
    JsonParser *p = json_parser_new();
    GError *e = NULL;
    FUZZ_CHECK(json_parser_load_from_data(p, text, (gssize)len, &e), "manifest.json: %s",
               e != NULL ? e->message : "?");
    JsonNode *root = json_parser_get_root(p);
    FUZZ_CHECK(root != NULL && JSON_NODE_HOLDS_OBJECT(root), "manifest.json is no object");
    JsonObject *o = json_node_get_object(root);
    JsonNode *fn = json_object_get_member(o, "files");
    FUZZ_CHECK(fn != NULL && JSON_NODE_HOLDS_ARRAY(fn), "manifest.json has no files array");
    JsonArray *files = json_node_get_array(fn);
    FUZZ_CHECK(json_array_get_length(files) == n, "manifest.json lists %u files for %zu items",
               json_array_get_length(files), n);
    for (size_t i = 0; i < n; i++) {
        JsonObject *f = json_array_get_object_element(files, (guint)i);
        FUZZ_CHECK(f != NULL, "manifest.json file %zu is no object", i);
        const char *op = json_object_get_string_member_with_default(f, "output_path", "");
        gint64 size = json_object_get_int_member_with_default(f, "size", -1);
        FUZZ_CHECK(strcmp(op, items[i].output) == 0 && size == (gint64)items[i].size,
                   "manifest.json file %zu is not item %zu (%s)", i, i, items[i].output);
    }
    g_object_unref(p);
    free(text);
}

static void salvage_once(struct scan_result *scan, struct lanyfs_fs *fs)
{
    FUZZ_CHECK(mkdirat(root_fd, "out", 0777) == 0, "out: %s", strerror(errno));
    int out = openat(root_fd, "out", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    FUZZ_CHECK(out >= 0, "out: %s", strerror(errno));
    struct run run = {0};
    /* Two lost trees asked for by their top (written once all the same),
     * and a top that is none. */
    const struct scan_lost_tree *lt;
    size_t nlt = scan_lost_trees(scan, &lt);
    uint64_t tops[3] = {nlt > 0 ? lt[0].top : 1, nlt > 1 ? lt[nlt - 1].top : 1, 0};
    struct salvage_opts o = {
        .flags = SALVAGE_DELETED | SALVAGE_ORPHANS | SALVAGE_LOST | SALVAGE_CARVE |
                 SALVAGE_VERSIONS,
        .lost_tops = tops,
        .nlost_tops = 3,
        .progress = on_progress,
        .progress_ctx = &run,
        .on_item = on_item,
        .item_ctx = &run,
        .cancel = &run.cancel,
        .image_name = "fuzz\x01image\xff.img",
    };
    struct salvage_result *res = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc = salvage_run(scan, fs, out, &o, &res, &err);
    check_root();
    if (rc == LANYFS_E_GEOMETRY && res == NULL) {
        /* No geometry: nothing may have been written. */
        struct tally t = {0};
        walk(out, "out", 0, &t);
        FUZZ_CHECK(t.dirs == 0 && t.files == 0, "a run without geometry wrote %ju files",
                   (uintmax_t)t.files);
        goto out;
    }
    FUZZ_CHECK(rc == LANYFS_OK || (rc == LANYFS_E_INVAL && run.cancelled),
               "salvage failed (%d): %s", (int)rc, err.msg);
    FUZZ_CHECK(res != NULL, "salvage returned no result");
    const struct salvage_item *items;
    size_t n = salvage_items(res, &items);
    FUZZ_CHECK(n == run.items, "%zu items, the callback saw %zu", n, run.items);
    struct salvage_totals tot;
    salvage_get_totals(res, &tot);
    size_t nwritten = 0;
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(items[i].status != SALVAGE_SKIPPED && items[i].status != SALVAGE_FAILED,
                   "item %zu (%s) %s in a fresh folder: %s", i, items[i].output,
                   salvage_status_name(items[i].status), items[i].note ? items[i].note : "");
        FUZZ_CHECK(items[i].recovered <= items[i].size, "item %zu: %ju of %ju bytes recovered",
                   i, (uintmax_t)items[i].recovered, (uintmax_t)items[i].size);
        if (written(&items[i])) {
            check_file(out, &items[i], i);
            nwritten++;
        }
    }
    check_csv(out, items, n);
    check_json(out, items, n);
    struct tally t = {0};
    walk(out, "out", 0, &t);
    FUZZ_CHECK(t.files == nwritten + 2, "out holds %ju files: %zu items written and 2 manifests",
               (uintmax_t)t.files, nwritten);
    FUZZ_CHECK(t.dirs == tot.dirs, "out holds %ju folders, the totals say %ju made",
               (uintmax_t)t.dirs, (uintmax_t)tot.dirs);
out:
    salvage_result_free(res);
    fuzz_rm_inside(out);
    close(out);
    FUZZ_CHECK(unlinkat(root_fd, "out", AT_REMOVEDIR) == 0, "out cannot be removed: %s",
               strerror(errno));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_IMAGE_MAX)
        return 0;
    root_setup();
    struct lanyfs_fs *fs = NULL;
    struct scan_result *scan = NULL;
    struct lanyfs_error err;
    if (lanyfs_fs_open(image_path(data, size), LANYFS_OPEN_FORCE, &fs, &err) != LANYFS_OK)
        return 0;
    struct scan_opts so = {0};
    fuzz_given_geometry(data, size, &so.blocksize, &so.addrlen);
    if (scan_fs(fs, &so, &scan, &err) == LANYFS_OK)
        salvage_once(scan, fs);
    scan_result_free(scan);
    lanyfs_fs_close(fs);
    return 0;
}
