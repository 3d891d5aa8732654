/*
 * writer_cli.c -- the session, checks and reporting the writer commands
 * share (contract in writer_cli.h).
 *
 * The writer has no call that abandons a mount, and its unmount always
 * rewrites the superblock (SPEC-§8).  A refused operation must leave the
 * image as it was, so wcli_unmount drops a mount by unmounting with a
 * write hook that refuses every block: the writer fails its writes, frees
 * itself, and nothing reaches the image.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "writelog.h"
#include "writer_cli.h"

/* ---- options ------------------------------------------------------------- */

int wcli_option(const struct cli_command *self, char **argv, int ch, const char *arg,
                struct wcli_opts *o)
{
    switch (ch) {
    case WCLI_OPT_DRIVER:
        if (strcmp(arg, "2012") == 0) {
            o->mode = LANYFS_WRITE_DRIVER2012;
        } else if (strcmp(arg, "correct") == 0) {
            o->mode = LANYFS_WRITE_CORRECT;
        } else {
            char *esc = out_escape(arg, strlen(arg), 0);
            int rc = cli_usage_error(self, _("--driver takes '2012' or 'correct', not '%s'"), esc);
            g_free(esc);
            return rc;
        }
        return -1;
    case WCLI_OPT_LOG:
        if (arg[0] == '\0')
            return cli_usage_error(self, _("--log needs a file name"));
        o->log_path = arg;
        return -1;
    case 'h':
        return cli_help(self);
    default:
        return cli_bad_option(self, argv);
    }
}

/* ---- the write log -------------------------------------------------------- */

/* The write log: opened after the mount (it needs the geometry), closed last. */
static bool log_open(struct wcli *s)
{
    if (s->o.log_path == NULL)
        return true;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_wlog_open(s->o.log_path, lanyfs_fs_geom(s->fs), &s->log, &err) != LANYFS_OK) {
        lanyfs_error_prefix(&err, "cannot open the write log; nothing was changed");
        wcli_error(s, s->o.log_path, &err);
        s->log = NULL;
        return false;
    }
    lanyfs_wlog_attach(s->log, s->fs);
    lanyfs_wlog_attach_writer(s->log, s->w);
    return true;
}

static void log_op(struct wcli *s, const char *what)
{
    if (s->log == NULL)
        return;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    /* A failure stays in the log: its hook then refuses the writes, and close reports it. */
    (void)lanyfs_wlog_op(s->log, what, &err);
}

static bool log_close(struct wcli *s)
{
    if (s->log == NULL)
        return true;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    lanyfs_fs_set_write_hook(s->fs, NULL, NULL);
    enum lanyfs_err rc = lanyfs_wlog_close(s->log, &err);
    s->log = NULL;
    if (rc != LANYFS_OK) {
        lanyfs_error_prefix(&err, "write log");
        wcli_error(s, s->o.log_path, &err);
        return false;
    }
    return true;
}

/* ---- reporting ------------------------------------------------------------ */

static void note_hard(struct wcli *s, enum lanyfs_err code)
{
    if (s->hard == LANYFS_EXIT_OK)
        s->hard = out_exit_for_err(code);
}

void wcli_error(struct wcli *s, const char *where, const struct lanyfs_error *err)
{
    note_hard(s, err->code);
    out_report_error(&s->rep, where, err);
}

void wcli_fail(struct wcli *s, const char *where, enum lanyfs_err code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_hard(s, code);
    out_report_vaddf(&s->rep, where, code, LANYFS_NO_BLOCK, fmt, ap);
    va_end(ap);
}

void wcli_mark(struct wcli *s, const char *where, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    char *body = g_strdup_vprintf(fmt, ap);
    char *body_shown = g_strdup_vprintf(_(fmt), ap2);
    va_end(ap2);
    va_end(ap);
    char *msg = g_strconcat("warning: driver mode: ", body, NULL);
    char *shown = g_strdup_printf(_("warning: driver mode: %s"), body_shown);
    s->marked = true;
    out_report_add_l10n(&s->rep, where, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK, msg, shown);
    g_free(shown);
    g_free(msg);
    g_free(body_shown);
    g_free(body);
}

void wcli_warn(struct wcli *s, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *body = g_strdup_vprintf(_(fmt), ap);
    va_end(ap);
    char *b = out_escape(body, strlen(body), 0);
    s->warnings++;
    if (where != NULL) {
        char *w = out_escape(where, strlen(where), 0);
        fprintf(stderr, _("lanyfs: %s: warning: %s\n"), w, b);
        g_free(w);
    } else {
        fprintf(stderr, _("lanyfs: warning: %s\n"), b);
    }
    g_free(b);
    g_free(body);
}

/* ---- the session ------------------------------------------------------------ */

void wcli_init(struct wcli *s, const struct cli_command *cmd, const char *image,
               const struct wcli_opts *o)
{
    memset(s, 0, sizeof(*s));
    s->cmd = cmd;
    s->image = image;
    s->o = *o;
    out_report_init(&s->rep);
}

bool wcli_open(struct wcli *s)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc =
        lanyfs_fs_open(s->image, LANYFS_OPEN_RDWR | LANYFS_OPEN_FORCE | LANYFS_OPEN_EXCL, &s->fs,
                       &err);
    if (rc != LANYFS_OK) {
        wcli_error(s, s->image, &err);
        return false;
    }
    const struct lanyfs_sb_problem *pr;
    size_t n = lanyfs_fs_problems(s->fs, &pr);
    size_t refusing = 0;
    for (size_t i = 0; i < n && i < LANYFS_SB_PROBLEMS_MAX; i++) {
        if (!lanyfs_writer_refuses_problem(&pr[i]))
            continue;
        note_hard(s, pr[i].code);
        out_report_add(&s->rep, s->image, pr[i].code, 0, pr[i].msg);
        refusing++;
    }
    if (refusing > 0) {
        char *esc = out_escape(s->image, strlen(s->image), 0);
        fprintf(stderr, _("lanyfs: %s: refusing to write to an image whose superblock fails "
                          "its checks; nothing was changed\n"),
                esc);
        g_free(esc);
        return false;
    }
    return true;
}

bool wcli_mount(struct wcli *s)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = lanyfs_writer_mount(s->fs, s->o.mode, &s->w, &err);
    if (rc != LANYFS_OK) {
        lanyfs_error_prefix(&err, "cannot mount %s for writing; nothing was changed",
                            s->o.mode == LANYFS_WRITE_DRIVER2012 ? "as the 2012 driver"
                                                                 : "it");
        wcli_error(s, s->image, &err);
        return false;
    }
    if (!log_open(s)) {
        wcli_unmount(s, true);
        return false;
    }
    lanyfs_writer_state(s->w, &s->at_op);
    return true;
}

void wcli_op_begin(struct wcli *s, const char *verb, const char *path)
{
    char *what = g_strconcat(verb, " ", path, NULL);
    log_op(s, what);
    g_free(what);
    lanyfs_writer_state(s->w, &s->at_op);
}

bool wcli_op_unchanged(const struct wcli *s)
{
    struct lanyfs_writer_state now;
    lanyfs_writer_state(s->w, &now);
    return now.allocs == s->at_op.allocs && now.frees == s->at_op.frees &&
           now.freehead == s->at_op.freehead && now.freetail == s->at_op.freetail &&
           now.freeblocks == s->at_op.freeblocks;
}

bool wcli_op_end(struct wcli *s, enum lanyfs_err rc, const char *where,
                 const struct lanyfs_error *err)
{
    if (rc == LANYFS_OK) {
        s->ops_done++;
        return true;
    }
    if (s->ops_done == 0 && wcli_op_unchanged(s))
        s->refused = true;
    else
        s->ops_done++; /* it failed after changing something: unmount as usual */
    wcli_error(s, where, err);
    return false;
}

void wcli_op_done(struct wcli *s)
{
    s->ops_done++;
}

static int refuse_write(void *ctx, uint64_t block, const uint8_t *data)
{
    (void)ctx;
    (void)block;
    (void)data;
    return 1;
}

bool wcli_unmount(struct wcli *s, bool drop)
{
    bool ok = true;
    if (s->w == NULL)
        goto out_log;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (drop || s->ops_done == 0) {
        /* Every write fails, so the writer frees itself and the image stays as it was. */
        lanyfs_fs_set_write_hook(s->fs, refuse_write, NULL);
        lanyfs_writer_unmount(s->w, &err);
        lanyfs_fs_set_write_hook(s->fs, NULL, NULL);
    } else if (lanyfs_writer_unmount(s->w, &err) != LANYFS_OK) {
        lanyfs_error_prefix(&err, "unmount (writing back entries and the superblock)");
        wcli_error(s, s->image, &err);
        ok = false;
    }
    s->w = NULL;
out_log:
    if (!log_close(s))
        ok = false;
    return ok;
}

int wcli_finish(struct wcli *s)
{
    if (s->w != NULL)
        wcli_unmount(s, false);
    lanyfs_fs_close(s->fs);
    s->fs = NULL;
    int rc = s->hard != LANYFS_EXIT_OK ? s->hard : s->rep.exit_code;
    if (rc == LANYFS_EXIT_OK && s->marked)
        rc = LANYFS_EXIT_CORRUPT;
    out_report_free(&s->rep);
    return rc;
}

/* ---- names and paths ------------------------------------------------------ */

bool wcli_name_ok(struct wcli *s, const char *where, const char *name, size_t len)
{
    if (len == 0) {
        wcli_fail(s, where, LANYFS_E_NAME, N_("an empty name is not allowed"));
        return false;
    }
    if (len > LANYFS_NAME_MAX) {
        wcli_fail(s, where, LANYFS_E_NAME,
                  N_("the name '%.16s...' is %zu bytes long; LanyFS names hold at most %d bytes"),
                  name, len, LANYFS_NAME_MAX);
        return false;
    }
    if (memchr(name, '\0', len) != NULL) {
        wcli_fail(s, where, LANYFS_E_NAME, N_("a name cannot hold a NUL byte"));
        return false;
    }
    if (memchr(name, '/', len) != NULL) {
        wcli_fail(s, where, LANYFS_E_NAME, N_("the name '%.*s' holds a '/'"), (int)len, name);
        return false;
    }
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.')) {
        wcli_fail(s, where, LANYFS_E_NAME,
                  N_("'%.*s' cannot name a new entry (no driver can reach it)"), (int)len, name);
        return false;
    }
    return true;
}

bool wcli_path_split(struct wcli *s, const char *path, struct wcli_path *out)
{
    GPtrArray *names = g_ptr_array_new();
    bool ok = true;
    const char *p = path;
    for (;;) {
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > LANYFS_NAME_MAX) {
            wcli_fail(s, path, LANYFS_E_NAME,
                      N_("the name '%.16s...' is %zu bytes long; LanyFS names hold at most %d "
                         "bytes"),
                      p, len, LANYFS_NAME_MAX);
            ok = false;
            break;
        }
        g_ptr_array_add(names, g_strndup(p, len));
        p += len;
    }
    if (!ok) {
        for (size_t i = 0; i < names->len; i++)
            g_free(names->pdata[i]);
        g_ptr_array_free(names, TRUE);
        memset(out, 0, sizeof(*out));
        return false;
    }
    out->n = names->len;
    out->names = (char **)g_ptr_array_free(names, FALSE);
    return true;
}

void wcli_path_free(struct wcli_path *p)
{
    for (size_t i = 0; i < p->n; i++)
        g_free(p->names[i]);
    g_free(p->names);
    p->names = NULL;
    p->n = 0;
}

char *wcli_path_join(const struct wcli_path *p, size_t n)
{
    GString *s = g_string_new("/");
    for (size_t i = 0; i < n && i < p->n; i++) {
        if (i > 0)
            g_string_append_c(s, '/');
        g_string_append(s, p->names[i]);
    }
    return g_string_free(s, FALSE);
}

bool wcli_lookup(struct wcli *s, const char *where, uint64_t dir, const char *name,
                 bool *found, uint64_t *blk, struct lanyfs_entry *e)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    *found = false;
    enum lanyfs_err rc = lanyfs_dir_lookup(s->fs, dir, name, strlen(name), blk, e, &err);
    if (rc == LANYFS_OK) {
        *found = true;
        return true;
    }
    if (rc == LANYFS_E_NOTFOUND)
        return true;
    wcli_error(s, where, &err);
    return false;
}

bool wcli_target(struct wcli *s, const char *path, struct wcli_target *t)
{
    memset(t, 0, sizeof(*t));
    if (!wcli_path_split(s, path, &t->p))
        return false;
    uint64_t cur = lanyfs_fs_super(s->fs)->rootdir;
    struct lanyfs_entry e;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_fs_read_entry(s->fs, cur, &e, &err) != LANYFS_OK) {
        lanyfs_error_prefix(&err, "root directory");
        wcli_error(s, path, &err);
        return false;
    }
    if (t->p.n == 0) {
        t->exists = true;
        t->blk = cur;
        t->e = e;
        return true;
    }
    for (size_t i = 0; i < t->p.n; i++) {
        if (!lanyfs_entry_is_dir(&e)) {
            char *up = wcli_path_join(&t->p, i);
            wcli_fail(s, path, LANYFS_E_NOTDIR, N_("the parent %s is a file, not a directory"), up);
            g_free(up);
            return false;
        }
        bool found;
        uint64_t next;
        struct lanyfs_entry ne;
        if (!wcli_lookup(s, path, cur, t->p.names[i], &found, &next, &ne))
            return false;
        if (i + 1 == t->p.n) {
            t->parent = cur;
            t->exists = found;
            if (found) {
                t->blk = next;
                t->e = ne;
            }
            return true;
        }
        if (!found) {
            char *up = wcli_path_join(&t->p, i + 1);
            wcli_fail(s, path, LANYFS_E_NOTFOUND, N_("the parent directory %s does not exist"), up);
            g_free(up);
            return false;
        }
        cur = next;
        e = ne;
    }
    return true;
}

void wcli_target_free(struct wcli_target *t)
{
    wcli_path_free(&t->p);
}

/* ---- space ------------------------------------------------------------------ */

bool wcli_free_available(struct wcli *s, uint64_t *n)
{
    const struct lanyfs_super *sb = lanyfs_fs_super(s->fs);
    const struct lanyfs_geom *g = lanyfs_fs_geom(s->fs);
    bool drv = s->o.mode == LANYFS_WRITE_DRIVER2012;
    bool ok = true;
    uint8_t *b = NULL;
    struct lanyfs_blockset *seen = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    *n = 0;
    if (drv && (sb->freehead == 0 || sb->freeblocks == 0))
        goto out; /* the driver's allocator stops at once (SPEC-§8) */
    b = malloc(g->blocksize);
    seen = lanyfs_blockset_new();
    if (b == NULL || seen == NULL) {
        wcli_fail(s, NULL, LANYFS_E_NOMEM, N_("out of memory"));
        ok = false;
        goto out;
    }
    /* The driver pops slots 0 .. chainmax-2 only (SPEC-§9.1). */
    uint32_t nslots = drv ? g->chainmax - 1 : g->chainmax;
    uint64_t count = 0;
    for (uint64_t cur = sb->freehead; cur != 0;) {
        if (cur >= g->blocks || lanyfs_blockset_add(seen, cur) != 1) {
            wcli_fail(s, s->image, LANYFS_E_CORRUPT,
                      N_("the free list is broken at block %" PRIu64 " (run a check)"), cur);
            ok = false;
            goto out;
        }
        if (lanyfs_fs_read_block(s->fs, cur, b, &err) != LANYFS_OK) {
            wcli_error(s, s->image, &err);
            ok = false;
            goto out;
        }
        count++;
        for (uint32_t i = 0; i < nslots; i++)
            if (lanyfs_chain_slot(g, b, i) != 0)
                count++;
        struct lanyfs_chain_hdr h;
        lanyfs_chain_decode(&h, b);
        cur = h.next;
    }
    if (drv && count > sb->freeblocks)
        count = sb->freeblocks; /* the driver stops when its count reaches 0 (SPEC-§9.2) */
    *n = count;
out:
    free(b);
    lanyfs_blockset_free(seen);
    return ok;
}

uint64_t wcli_data_blocks(const struct wcli *s, uint64_t size)
{
    return lanyfs_geom_blocks_for_size(lanyfs_fs_geom(s->fs), size);
}

uint64_t wcli_file_blocks(const struct wcli *s, uint64_t size)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(s->fs);
    uint64_t n = wcli_data_blocks(s, size);
    if (n == 0)
        return 0;
    if (s->o.mode == LANYFS_WRITE_DRIVER2012)
        return n <= g->extmax ? n + 1 : (uint64_t)g->extmax + 2;
    uint64_t total = n;
    for (unsigned level = 0; level < 64; level++) {
        uint64_t cap = lanyfs_geom_tree_capacity(g, level);
        total += (n + cap - 1) / cap;
        if (cap >= n)
            break;
    }
    return total;
}

bool wcli_check_put_space(struct wcli *s, const char *where, uint64_t size,
                          const struct lanyfs_entry *old)
{
    uint64_t need = wcli_file_blocks(s, size) + (old == NULL ? 1 : 0);
    if (old != NULL && s->o.mode == LANYFS_WRITE_CORRECT) {
        uint64_t freed = wcli_file_blocks(s, old->size);
        need = need > freed ? need - freed : 0;
    }
    uint64_t avail;
    if (!wcli_free_available(s, &avail))
        return false;
    if (avail < need) {
        wcli_fail(s, where, LANYFS_E_NOSPC,
                  N_("no space left on the device: %" PRIu64 " blocks needed, %" PRIu64 " free"),
                  need, avail);
        return false;
    }
    return true;
}

/* ---- host files ------------------------------------------------------------- */

bool wcli_read_host(struct wcli *s, const char *path, bool follow, uint8_t **buf, size_t *cap,
                    size_t *len, struct stat *st)
{
    bool ok = false;
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO
                      : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
    *len = 0;
    if (fd < 0) {
        wcli_fail(s, path, LANYFS_E_IO, N_("cannot open: %s"), strerror(errno));
        return false;
    }
    if (fstat(fd, st) != 0) {
        wcli_fail(s, path, LANYFS_E_IO, N_("cannot stat: %s"), strerror(errno));
        goto out;
    }
    if (S_ISDIR(st->st_mode)) {
        wcli_fail(s, path, LANYFS_E_ISDIR, N_("is a directory (use 'put -r' for a tree)"));
        goto out;
    }
    if (!is_stdin && !S_ISREG(st->st_mode) && !(follow && S_ISFIFO(st->st_mode))) {
        wcli_fail(s, path, LANYFS_E_INVAL, N_("not a regular file"));
        goto out;
    }
    for (;;) {
        if (*len == *cap) {
            size_t ncap = *cap < 65536 ? 65536 : *cap * 2;
            if (S_ISREG(st->st_mode) && (uint64_t)st->st_size >= *cap &&
                (uint64_t)st->st_size < SIZE_MAX - 1)
                ncap = (size_t)st->st_size + 1; /* one more byte tells a file that grew */
            if (ncap <= *cap) {
                wcli_fail(s, path, LANYFS_E_NOMEM, N_("file too large to read"));
                goto out;
            }
            uint8_t *nb = realloc(*buf, ncap);
            if (nb == NULL) {
                wcli_fail(s, path, LANYFS_E_NOMEM, N_("out of memory reading the file"));
                goto out;
            }
            *buf = nb;
            *cap = ncap;
        }
        ssize_t got = read(fd, *buf + *len, *cap - *len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            wcli_fail(s, path, LANYFS_E_IO, N_("read error: %s"), strerror(errno));
            goto out;
        }
        if (got == 0)
            break;
        *len += (size_t)got;
    }
    ok = true;
out:
    if (!is_stdin)
        close(fd);
    return ok;
}

void wcli_mtime(const struct stat *st, struct lanyfs_ts *ts)
{
    time_t t = st->st_mtim.tv_sec;
    struct tm tm;
    int16_t off = 0;
    if (localtime_r(&t, &tm) != NULL)
        off = (int16_t)(tm.tm_gmtoff / 60);
    lanyfs_ts_from_time(ts, t, (uint32_t)st->st_mtim.tv_nsec, off);
}

/* ---- reading back --------------------------------------------------------- */

bool wcli_file_matches(struct wcli *s, const struct lanyfs_entry *e, const uint8_t *data,
                       uint64_t len, uint64_t *first_diff)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(s->fs);
    uint8_t *b = malloc(g->blocksize);
    bool same = e->size == len;
    *first_diff = UINT64_MAX;
    if (b == NULL)
        return false;
    for (uint64_t off = 0; off < len; off += g->blocksize) {
        size_t want = len - off < g->blocksize ? (size_t)(len - off) : g->blocksize;
        size_t got = 0;
        struct lanyfs_error err;
        lanyfs_error_clear(&err);
        if (lanyfs_file_pread(s->fs, e, off, b, want, &got, NULL, &err) != LANYFS_OK ||
            got != want || memcmp(b, data + off, want) != 0) {
            same = false;
            *first_diff = off >> g->blockbits;
            break;
        }
    }
    free(b);
    return same;
}

bool wcli_dir_list(struct wcli *s, const char *where, uint64_t dir, struct lanyfs_dirlist *out)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_dir_list(s->fs, dir, out, &err) != LANYFS_OK) {
        memset(out, 0, sizeof(*out));
        wcli_error(s, where, &err);
        return false;
    }
    return true;
}

#define DIFF_NAMES_MAX 8 /* names shown per kind of difference */

/* Append "KIND: a, b, c (and N more)" for the names in list. */
static void diff_append(GString *out, const char *kind, GPtrArray *names)
{
    if (names->len == 0)
        return;
    g_string_append_printf(out, "%s%s: ", out->len > 0 ? "; " : "", kind);
    for (size_t i = 0; i < names->len && i < DIFF_NAMES_MAX; i++)
        g_string_append_printf(out, "%s%s", i > 0 ? ", " : "", (char *)names->pdata[i]);
    if (names->len > DIFF_NAMES_MAX)
        g_string_append_printf(out, " (and %u more)", names->len - DIFF_NAMES_MAX);
}

static gint cmp_strp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *ent_name(const struct lanyfs_dirent *d)
{
    return g_strndup((const char *)d->e.name, d->e.name_len);
}

char *wcli_dir_diff(struct wcli *s, const char *where, uint64_t dir,
                    const struct lanyfs_dirlist *before, const char *const *removed,
                    size_t nremoved, const char *added, uint64_t added_blk)
{
    GHashTable *want = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    GPtrArray *gone = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *extra = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *moved = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *twice = g_ptr_array_new_with_free_func(g_free);
    GString *out = g_string_new("");
    struct lanyfs_dirlist now;
    bool listed = false;

    for (size_t i = 0; i < before->count; i++) {
        uint64_t *b = g_new(uint64_t, 1);
        *b = before->ents[i].block;
        g_hash_table_replace(want, ent_name(&before->ents[i]), b);
    }
    for (size_t i = 0; i < nremoved; i++)
        g_hash_table_remove(want, removed[i]);
    if (added != NULL) {
        uint64_t *b = g_new(uint64_t, 1);
        *b = added_blk;
        g_hash_table_replace(want, g_strdup(added), b);
    }
    if (!wcli_dir_list(s, where, dir, &now)) {
        g_string_append(out, "the directory cannot be listed");
        goto out;
    }
    listed = true;
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (size_t i = 0; i < now.count; i++) {
        char *name = ent_name(&now.ents[i]);
        char *shown = out_escape(name, strlen(name), OUT_ESC_SLASH);
        const uint64_t *b = g_hash_table_lookup(want, name);
        if (!g_hash_table_add(seen, g_strdup(name)))
            g_ptr_array_add(twice, g_strdup(shown));
        else if (b == NULL)
            g_ptr_array_add(extra, g_strdup(shown));
        else if (*b != now.ents[i].block)
            g_ptr_array_add(moved, g_strdup_printf("%s (block %" PRIu64 ", not %" PRIu64 ")",
                                                   shown, now.ents[i].block, *b));
        g_free(shown);
        g_free(name);
    }
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, want);
    while (g_hash_table_iter_next(&it, &key, NULL))
        if (!g_hash_table_contains(seen, key))
            g_ptr_array_add(gone, out_escape(key, strlen(key), OUT_ESC_SLASH));
    g_hash_table_destroy(seen);
    g_ptr_array_sort(gone, cmp_strp);
    diff_append(out, "no longer listed", gone);
    diff_append(out, "still or newly listed", extra);
    diff_append(out, "listed at another block", moved);
    diff_append(out, "listed twice", twice);
    if (now.problems != 0)
        g_string_append_printf(out, "%sits tree is damaged: %s", out->len > 0 ? "; " : "",
                               now.first.msg);
out:
    if (listed)
        lanyfs_dirlist_free(&now);
    g_hash_table_destroy(want);
    g_ptr_array_free(gone, TRUE);
    g_ptr_array_free(extra, TRUE);
    g_ptr_array_free(moved, TRUE);
    g_ptr_array_free(twice, TRUE);
    if (out->len == 0) {
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}
