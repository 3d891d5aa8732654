/*
 * cmd_put.c -- copy host files into an image:
 *
 *     lanyfs put [-f] [--driver=MODE] [--log FILE] IMAGE HOSTFILE PATH
 *     lanyfs put -r [--driver=MODE] [--log FILE] IMAGE HOSTDIR PATH
 *
 * One file: PATH names the new file; when PATH is an existing directory or
 * ends in '/', the file goes into it under HOSTFILE's name.  An existing
 * file is replaced only with -f.  HOSTFILE "-" is standard input.  The
 * host file's modified time becomes the entry's.
 *
 * A tree (-r): the contents of HOSTDIR go into the directory PATH, which is
 * created when it does not exist (its parent must).  The host tree is
 * walked first, completely, with an explicit stack (never C recursion),
 * each directory's names sorted bytewise, so the image is the same on
 * every run; symbolic links are not followed but skipped with a warning,
 * as are other non-regular files and the image itself.  That walk checks
 * every name and sums the blocks the copy needs (entries, data, extenders),
 * so a bad name, a name PATH already holds, or too little space refuses
 * the whole copy before anything is written.  Then directories are created
 * parents first and files are copied in that order, with their modified
 * times, all in one mount; the directories get theirs last.
 *
 * SIGINT or SIGTERM stops a tree copy between two entries; what was copied
 * is unmounted properly and stays in the image.
 *
 * Driver mode copies files of more than extmax blocks as the 2012 driver
 * would (SPEC-§9.7): the command reports what the growth loop did and exits
 * with status 7.  A single file is read back after the unmount and
 * compared with HOSTFILE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer_cli.h"

/* Set by SIGINT or SIGTERM during a tree copy: stop after the entry being copied. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* One host entry to copy. */
struct item {
    char *host;     /* host path (owned) */
    char *lpath;    /* LanyFS path (owned) */
    bool dir;       /* a directory, otherwise a regular file */
    bool top;       /* directly inside HOSTDIR */
    uint64_t size;  /* file size at the walk */
    dev_t dev;      /* host device, to see the file was not swapped */
    ino_t ino;      /* host inode */
};

/* A host directory waiting to be read. */
struct pending_dir {
    char *host;  /* host path (owned) */
    char *lpath; /* LanyFS path (owned) */
    bool top;    /* HOSTDIR itself */
};

struct walk {
    struct wcli *s;        /* the session */
    GPtrArray *items;      /* struct item *, owned, in copy order */
    GPtrArray *stack;      /* struct pending_dir *, owned */
    GHashTable *dirs_seen; /* "dev:ino" of host directories entered */
    struct stat image_st;  /* the image file, never copied into itself */
    bool have_image_st;    /* image_st is valid */
    uint64_t need;         /* blocks the copy needs */
    uint64_t skipped;      /* host entries skipped */
};

static void item_free(gpointer p)
{
    struct item *it = p;
    g_free(it->host);
    g_free(it->lpath);
    g_free(it);
}

static void pending_free(gpointer p)
{
    struct pending_dir *d = p;
    g_free(d->host);
    g_free(d->lpath);
    g_free(d);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    if (n > 0 && dir[n - 1] == '/')
        return g_strconcat(dir, name, NULL);
    return g_strconcat(dir, "/", name, NULL);
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Enter a host directory once: a directory reached twice (bind mounts) is refused. */
static bool enter_once(struct walk *wk, const char *host, const struct stat *st)
{
    char *key = g_strdup_printf("%ju:%ju", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
    if (!g_hash_table_add(wk->dirs_seen, key)) {
        wcli_fail(wk->s, host, LANYFS_E_CYCLE,
                  N_("this host directory is reached twice (a loop of mounts); not copied"));
        return false;
    }
    return true;
}

/*
 * The names in host directory path, sorted; NULL when reported.  *dfd_out
 * receives a descriptor of the directory (for fstatat), which the caller
 * closes.
 */
static GPtrArray *read_names(struct walk *wk, const char *path, int *dfd_out)
{
    GPtrArray *names = NULL;
    DIR *d = NULL;
    *dfd_out = -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || (d = fdopendir(fd)) == NULL)
        goto out_fail;
    names = g_ptr_array_new_with_free_func(g_free);
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL)
            break;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        g_ptr_array_add(names, g_strdup(de->d_name));
    }
    if (errno != 0 || (*dfd_out = dup(dirfd(d))) < 0)
        goto out_fail;
    g_ptr_array_sort(names, cmp_names);
    closedir(d);
    return names;
out_fail:
    wcli_fail(wk->s, path, LANYFS_E_IO, N_("cannot read the directory: %s"), strerror(errno));
    if (names != NULL)
        g_ptr_array_free(names, TRUE);
    if (d != NULL)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    return NULL;
}

/* Read one host directory from the stack: queue its entries, push its subdirectories. */
static bool walk_dir(struct walk *wk, struct pending_dir *pd)
{
    struct wcli *s = wk->s;
    int dfd = -1;
    bool ok = false;
    GPtrArray *names = read_names(wk, pd->host, &dfd);
    if (names == NULL)
        return false;
    size_t mark = wk->stack->len;
    for (size_t i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        char *host = join(pd->host, name);
        if (strlen(host) >= PATH_MAX) {
            wcli_fail(s, host, LANYFS_E_NAME, N_("the host path is longer than %d bytes"),
                      PATH_MAX - 1);
            g_free(host);
            goto out;
        }
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            wcli_fail(s, host, LANYFS_E_IO, N_("cannot stat: %s"), strerror(errno));
            g_free(host);
            goto out;
        }
        if (S_ISLNK(st.st_mode) || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
            if (S_ISLNK(st.st_mode))
                wcli_warn(s, host, N_("symbolic link skipped"));
            else
                wcli_warn(s, host, N_("not a regular file or directory skipped"));
            wk->skipped++;
            g_free(host);
            continue;
        }
        if (wk->have_image_st && st.st_dev == wk->image_st.st_dev &&
            st.st_ino == wk->image_st.st_ino) {
            wcli_warn(s, host, N_("the image itself is skipped"));
            wk->skipped++;
            g_free(host);
            continue;
        }
        if (!wcli_name_ok(s, host, name, strlen(name))) {
            g_free(host);
            goto out;
        }
        struct item *it = g_new0(struct item, 1);
        it->host = host;
        it->lpath = join(pd->lpath, name);
        it->dir = S_ISDIR(st.st_mode);
        it->top = pd->top;
        it->size = it->dir ? 0 : (uint64_t)st.st_size;
        it->dev = st.st_dev;
        it->ino = st.st_ino;
        g_ptr_array_add(wk->items, it);
        wk->need += 1 + (it->dir ? 0 : wcli_file_blocks(s, it->size));
        if (it->dir) {
            if (!enter_once(wk, host, &st))
                goto out;
            struct pending_dir *sub = g_new0(struct pending_dir, 1);
            sub->host = g_strdup(it->host);
            sub->lpath = g_strdup(it->lpath);
            g_ptr_array_add(wk->stack, sub);
        }
    }
    /* The stack pops from its end: reverse the new ones so they come out in name order. */
    for (size_t i = mark, j = wk->stack->len; i + 1 < j; i++, j--) {
        gpointer t = wk->stack->pdata[i];
        wk->stack->pdata[i] = wk->stack->pdata[j - 1];
        wk->stack->pdata[j - 1] = t;
    }
    ok = true;
out:
    close(dfd);
    g_ptr_array_free(names, TRUE);
    return ok;
}

/* Walk the host tree at host, to be copied into the LanyFS directory lpath. */
static bool walk_tree(struct walk *wk, const char *host, const char *lpath)
{
    struct stat st;
    if (stat(host, &st) != 0) {
        wcli_fail(wk->s, host, LANYFS_E_IO, N_("cannot stat: %s"), strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        wcli_fail(wk->s, host, LANYFS_E_NOTDIR, N_("not a directory (put -r copies a tree)"));
        return false;
    }
    if (!enter_once(wk, host, &st))
        return false;
    struct pending_dir *top = g_new0(struct pending_dir, 1);
    top->host = g_strdup(host);
    top->lpath = g_strdup(lpath);
    top->top = true;
    g_ptr_array_add(wk->stack, top);
    while (wk->stack->len > 0) {
        struct pending_dir *pd = g_ptr_array_steal_index(wk->stack, wk->stack->len - 1);
        bool ok = walk_dir(wk, pd);
        pending_free(pd);
        if (!ok)
            return false;
    }
    return true;
}

/*
 * Report what the 2012 driver did to a file of more than extmax blocks
 * (SPEC-§9.7): file block extmax lands on file block 0's disk block; from
 * extmax + 1 on, the growth loop allocates extenders until the device is full.
 */
static void mark_growth(struct wcli *s, const char *lpath, uint64_t nblocks,
                        const struct lanyfs_writer_state *before)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(s->fs);
    struct lanyfs_writer_state now;
    lanyfs_writer_state(s->w, &now);
    uint64_t allocs = now.allocs - before->allocs;
    if (nblocks == (uint64_t)g->extmax + 1) {
        wcli_mark(s, lpath,
                  N_("the file has %" PRIu64 " blocks, one more than an extender maps: the 2012 "
                     "driver added a level-1 extender without a child for file block %" PRIu32
                     " and wrote that block over file block 0's disk block (format section 9.7); "
                     "the file reads back with its first block replaced"),
                  nblocks, g->extmax);
        return;
    }
    wcli_mark(s, lpath,
              N_("the file has %" PRIu64 " blocks, more than the %" PRIu32 " an extender maps: the "
                 "2012 driver wrote file block %" PRIu32 " over file block 0's disk block, and "
                 "from file block %" PRIu32 " on its growth loop allocated empty extenders, all "
                 "but the last orphaned, until %s: %" PRIu64 " blocks allocated for this file, %"
                 PRIu64 " left free (format section 9.7); the file does not read back as written"),
              nblocks, g->extmax, g->extmax, g->extmax + 1,
              now.freeblocks == 0 || now.freehead == 0 ? "the device was full"
                                                        : "its data was written",
              allocs, now.freeblocks);
}

/* Copy the host file of a tree item into the mounted image (buf: reused buffer). */
static bool put_item(struct wcli *s, const struct item *it, uint8_t **buf, size_t *cap,
                     size_t *len)
{
    struct stat st;
    if (!wcli_read_host(s, it->host, false, buf, cap, len, &st))
        return false;
    if (st.st_dev != it->dev || st.st_ino != it->ino) {
        wcli_fail(s, it->host, LANYFS_E_IO, N_("the host file was replaced during the copy"));
        return false;
    }
    if (*len != it->size)
        wcli_warn(s, it->host, N_("the file changed size during the copy (%" PRIu64
                     " bytes, now %zu)"), it->size, *len);
    struct lanyfs_ts mtime;
    wcli_mtime(&st, &mtime);
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    wcli_op_begin(s, "put", it->lpath);
    struct lanyfs_writer_state before = s->at_op;
    enum lanyfs_err rc = lanyfs_writer_put(s->w, it->lpath, *buf, *len, &mtime, &err);
    if (!wcli_op_end(s, rc, it->lpath, &err))
        return false;
    uint64_t nblocks = wcli_data_blocks(s, *len);
    if (s->o.mode == LANYFS_WRITE_DRIVER2012 && nblocks > lanyfs_fs_geom(s->fs)->extmax)
        mark_growth(s, it->lpath, nblocks, &before);
    return true;
}

/* Give a copied directory its host directory's modified time (at the writeback). */
static bool set_dir_time(struct wcli *s, const char *host, const char *lpath)
{
    struct stat st;
    if (lstat(host, &st) != 0) {
        wcli_warn(s, host, N_("cannot read the directory's modified time: %s"), strerror(errno));
        return true;
    }
    struct lanyfs_ts mtime;
    wcli_mtime(&st, &mtime);
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_writer_set_mtime(s->w, lpath, &mtime, &err) != LANYFS_OK) {
        wcli_error(s, lpath, &err);
        return false;
    }
    return true;
}

/*
 * After every entry is in: the directories' times, deepest first, and the
 * top's when the copy created it (an existing PATH keeps its own).
 */
static bool set_dir_times(struct wcli *s, const struct walk *wk, const char *hostdir,
                          const char *top, bool create_top)
{
    for (size_t i = wk->items->len; i-- > 0;) {
        const struct item *it = wk->items->pdata[i];
        if (it->dir && !set_dir_time(s, it->host, it->lpath))
            return false;
    }
    return !create_top || set_dir_time(s, hostdir, top);
}

/* put -r */
static void put_tree(struct wcli *s, const char *hostdir, const char *path)
{
    struct walk wk = {
        .s = s,
        .items = g_ptr_array_new_with_free_func(item_free),
        .stack = g_ptr_array_new_with_free_func(pending_free),
        .dirs_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    };
    struct wcli_target t;
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0, done = 0;
    bool create_top = false;
    char *top = NULL;
    wk.have_image_st = stat(s->image, &wk.image_st) == 0;

    if (!wcli_target(s, path, &t))
        goto out;
    top = wcli_path_join(&t.p, t.p.n);
    if (t.exists && !lanyfs_entry_is_dir(&t.e)) {
        wcli_fail(s, path, LANYFS_E_EXISTS, N_("already exists, as a file"));
        goto out;
    }
    if (!t.exists) {
        const char *name = t.p.names[t.p.n - 1];
        if (!wcli_name_ok(s, path, name, strlen(name)))
            goto out;
        create_top = true;
        wk.need++;
    }
    if (!walk_tree(&wk, hostdir, top))
        goto out;
    if (t.exists) {
        /* Merging into a directory: every name at the top must be new. */
        size_t clashes = 0;
        for (size_t i = 0; i < wk.items->len; i++) {
            struct item *it = wk.items->pdata[i];
            const char *slash = strrchr(it->lpath, '/');
            if (!it->top)
                continue;
            bool found;
            uint64_t blk;
            struct lanyfs_entry e;
            if (!wcli_lookup(s, it->lpath, t.blk, slash + 1, &found, &blk, &e))
                goto out;
            if (found) {
                wcli_fail(s, it->lpath, LANYFS_E_EXISTS, N_("already exists"));
                clashes++;
            }
        }
        if (clashes > 0)
            goto out;
    }
    uint64_t avail;
    if (!wcli_free_available(s, &avail))
        goto out;
    if (avail < wk.need) {
        wcli_fail(s, path, LANYFS_E_NOSPC,
                  N_("no space left on the device: the copy needs %" PRIu64 " blocks, %" PRIu64
                     " are free"),
                  wk.need, avail);
        goto out;
    }

    if (!wcli_mount(s))
        goto out;
    /* An interrupt ends the copy between two entries, and the mount is unmounted. */
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    bool ok = true;
    if (create_top) {
        struct lanyfs_error err;
        lanyfs_error_clear(&err);
        wcli_op_begin(s, "mkdir", top);
        ok = wcli_op_end(s, lanyfs_writer_mkdir(s->w, top, &err), top, &err);
    }
    for (; ok && done < wk.items->len; done++) {
        struct item *it = wk.items->pdata[done];
        if (interrupted) {
            wcli_fail(s, path, LANYFS_E_IO,
                      N_("interrupted after %zu of %u entries; those are in the image"), done,
                      wk.items->len);
            ok = false;
            break;
        }
        if (it->dir) {
            struct lanyfs_error err;
            lanyfs_error_clear(&err);
            wcli_op_begin(s, "mkdir", it->lpath);
            ok = wcli_op_end(s, lanyfs_writer_mkdir(s->w, it->lpath, &err), it->lpath, &err);
        } else {
            ok = put_item(s, it, &buf, &cap, &len);
        }
        if (!ok)
            break;
    }
    if (ok)
        ok = set_dir_times(s, &wk, hostdir, top, create_top);
    if (!ok && s->ops_done > 0 && !interrupted)
        wcli_fail(s, path, LANYFS_E_IO,
                  N_("the copy stopped after %zu of %u entries; those are in the image"), done,
                  wk.items->len);
    wcli_unmount(s, s->refused);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
out:
    g_free(top);
    wcli_target_free(&t);
    free(buf);
    g_ptr_array_free(wk.items, TRUE);
    g_ptr_array_free(wk.stack, TRUE);
    g_hash_table_destroy(wk.dirs_seen);
}

/* The last name of a host path ("a/b/" -> "b"), newly allocated; NULL when there is none. */
static char *host_basename(const char *host)
{
    char *copy = g_strdup(host);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    const char *slash = strrchr(copy, '/');
    char *base = g_strdup(slash ? slash + 1 : copy);
    g_free(copy);
    if (base[0] == '\0' || strcmp(base, "-") == 0) {
        g_free(base);
        return NULL;
    }
    return base;
}

/* put, one file */
static void put_file(struct wcli *s, const char *host, const char *path, bool force)
{
    struct wcli_target t;
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    char *lpath = NULL, *into = NULL;
    struct stat st;
    if (!wcli_read_host(s, host, true, &buf, &cap, &len, &st))
        goto out_nt;
    if (!wcli_target(s, path, &t))
        goto out;
    size_t plen = strlen(path);
    bool wants_dir = plen > 0 && path[plen - 1] == '/';
    if ((t.exists && lanyfs_entry_is_dir(&t.e)) || wants_dir) {
        if (!t.exists) {
            wcli_fail(s, path, LANYFS_E_NOTFOUND, N_("no such directory"));
            goto out;
        }
        if (!lanyfs_entry_is_dir(&t.e)) {
            wcli_fail(s, path, LANYFS_E_NOTDIR, N_("not a directory"));
            goto out;
        }
        char *base = host_basename(host);
        if (base == NULL) {
            wcli_fail(s, path, LANYFS_E_INVAL, N_("is a directory; name the new file"));
            goto out;
        }
        into = join(path, base);
        g_free(base);
        wcli_target_free(&t);
        if (!wcli_target(s, into, &t))
            goto out;
        if (t.exists && lanyfs_entry_is_dir(&t.e)) {
            wcli_fail(s, into, LANYFS_E_ISDIR, N_("is a directory"));
            goto out;
        }
    }
    const char *where = into ? into : path;
    if (t.exists && !force) {
        wcli_fail(s, where, LANYFS_E_EXISTS, N_("already exists (-f replaces it)"));
        goto out;
    }
    const char *name = t.p.names[t.p.n - 1];
    if (!wcli_name_ok(s, where, name, strlen(name)))
        goto out;
    if (!wcli_check_put_space(s, where, len, t.exists ? &t.e : NULL))
        goto out;
    lpath = wcli_path_join(&t.p, t.p.n);
    if (!wcli_mount(s))
        goto out;
    /* The file was read before mounting; put it through the same path as a tree copy. */
    struct lanyfs_ts mtime;
    bool is_stdin = strcmp(host, "-") == 0;
    if (!is_stdin)
        wcli_mtime(&st, &mtime);
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    wcli_op_begin(s, "put", lpath);
    struct lanyfs_writer_state before = s->at_op;
    enum lanyfs_err rc =
        lanyfs_writer_put(s->w, lpath, buf, len, is_stdin ? NULL : &mtime, &err);
    bool ok = wcli_op_end(s, rc, where, &err);
    uint64_t nblocks = wcli_data_blocks(s, len);
    bool grows = s->o.mode == LANYFS_WRITE_DRIVER2012 &&
                 nblocks > lanyfs_fs_geom(s->fs)->extmax;
    if (ok && grows)
        mark_growth(s, where, nblocks, &before);
    if (!wcli_unmount(s, s->refused) || !ok)
        goto out;
    /* Read back and compare. */
    uint64_t blk, diff;
    struct lanyfs_entry e;
    lanyfs_error_clear(&err);
    if (lanyfs_path_resolve(s->fs, lpath, &blk, &e, &err) != LANYFS_OK) {
        if (s->o.mode == LANYFS_WRITE_DRIVER2012)
            wcli_mark(s, where, N_("the file is not on the disk after the unmount: %s"), err.msg);
        else
            wcli_fail(s, where, LANYFS_E_CORRUPT,
                      N_("the file is not on the disk after the unmount: %s"), err.msg);
    } else if (!wcli_file_matches(s, &e, buf, len, &diff) && !grows) {
        if (s->o.mode == LANYFS_WRITE_DRIVER2012)
            wcli_mark(s, where, N_("the file reads back different from %s (size %" PRIu64
                         ", first difference in file block %" PRIu64 ")"),
                      host, e.size, diff);
        else
            wcli_fail(s, where, LANYFS_E_CORRUPT,
                      N_("the file reads back different from %s (size %" PRIu64
                         ", first difference in file block %" PRIu64 ")"),
                      host, e.size, diff);
    }
out:
    wcli_target_free(&t);
out_nt:
    g_free(lpath);
    g_free(into);
    free(buf);
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"recursive", no_argument, NULL, 'r'},
        {"force", no_argument, NULL, 'f'},
        WCLI_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct wcli_opts o = {LANYFS_WRITE_CORRECT, NULL};
    bool recursive = false, force = false;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "+rRfh", opts, NULL)) != -1) {
        if (ch == 'r' || ch == 'R') {
            recursive = true;
            continue;
        }
        if (ch == 'f') {
            force = true;
            continue;
        }
        int rc = wcli_option(self, argv, ch, optarg, &o);
        if (rc >= 0)
            return rc;
    }
    if (argc - optind != 3)
        return cli_usage_error(self, _("expects IMAGE, a host file and PATH"));
    if (recursive && force)
        return cli_usage_error(self, _("-f replaces one file; a tree copy never replaces"));
    const char *image = argv[optind];
    const char *host = argv[optind + 1];
    const char *path = argv[optind + 2];
    if (recursive && strcmp(host, "-") == 0)
        return cli_usage_error(self, _("-r copies a host directory, not standard input"));

    struct wcli s;
    wcli_init(&s, self, image, &o);
    if (wcli_open(&s)) {
        if (recursive)
            put_tree(&s, host, path);
        else
            put_file(&s, host, path, force);
    }
    return wcli_finish(&s);
}

static const char *const help_more[] = {
    WCLI_HELP_OPTIONS,
    "\n",
    N_("Modified times are copied from the host.  Without -r, a PATH that is a\n"
       "directory (or ends in '/') receives the file under its host name, and\n"
       "HOSTFILE '-' reads standard input.  A tree copy checks every name and the\n"
       "space it needs before it writes anything.\n\n"),
    WCLI_HELP_NOTES,
    NULL,
};

const struct cli_command cmd_put = {
    "put",
    N_("[-r | -f] [--driver=MODE] [--log FILE] IMAGE HOSTFILE PATH"),
    N_("Copy a host file (or with -r a host directory's tree) into the image."),
    N_("Options:\n"
       "  -r, --recursive    copy the contents of the host directory HOSTFILE into the\n"
       "                     directory PATH, created when missing; names are copied in\n"
       "                     sorted order, symbolic links and special files are skipped\n"
       "                     with a warning; no existing entry is ever replaced\n"
       "  -f, --force        replace an existing file PATH\n"),
    run,
    help_more,
};
