/*
 * driver.c -- one run of fsck-lanyfs: check, ask, repair, check again.
 *
 *  1. Refuse a mounted device (a read-only check only warns), open it
 *     (read-write with O_EXCL on a block device when repairing), install
 *     the undo recorder.
 *  2. Scan.  Show the findings pass by pass, e2fsck's way: a heading per
 *     pass, each finding's message, and for each one fsck can repair the
 *     question and its answer.  Questions of one global kind (the free
 *     list, the trees, copies) are asked once per round and the answer
 *     holds for the rest of that kind; per-entry kinds (an orphan, a file)
 *     are asked per entry.
 *  3. A 'blocks' smaller than the image (or beyond the address limit) is
 *     fixed first, alone, and the check starts again over the new size.
 *  4. Plan the repair (plan.c) and write it in phases:
 *       1. fresh blocks (copies, new extenders), which nothing refers to
 *          until phase 2: an interruption leaves them leaked, and leaked
 *          blocks are what a rerun frees;
 *       2. file fixes in place (extender slots, then entry fields): each
 *          one a single-block write that leaves a consistent file;
 *       3. directory trees (repair_tree.c), never leaving a live entry
 *          out of reach, so a rerun finds every entry where it was, and
 *          orphans linked in one write each;
 *       4. the new free list, tail first, into blocks the old list does
 *          not use where possible;
 *       5. the superblock, switching to the new list in one sector.
 *     Until phase 5 the old superblock and free list still describe the
 *     device; the free list is only ever derived, from what the trees
 *     reach, so a rerun after any write rebuilds it again.  Nothing a tree
 *     reached is freed before the tree stops reaching it.
 *  5. Sync, then scan again (pass 7 of the progress): problems left after
 *     writing start another round (at most three); a clean result sets
 *     'checked'.  The undo file is closed complete after the last sync.
 *
 * Exit status: a sum of 1 (something was corrected), 4 (problems left),
 * 8 (an operational error), 32 (cancelled); 16 comes from the parser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "../cli/i18n.h"
#include "repair.h"
#include "store.h"
#include "undo.h"

#define MAX_ROUNDS 3

struct run {
    const struct fsck_opts *o;
    FILE *out;                    /* text report, NULL with --json */
    FILE *err;                    /* error messages */
    const char *dev;              /* the device as named */
    char *dev_esc;                /* escaped for printing (owned) */
    struct fsck_prompt *prompt;   /* answers (owned) */
    struct fsck_progress *prog;   /* -C (owned), NULL without */
    int prog_pass;                /* pass number the scan reports under */
    struct lanyfs_fs *fs;         /* the filesystem (owned) */
    struct lanyfs_undo *undo;     /* the recorder (owned), NULL without */
    char *undo_path;              /* its path (owned) */
    bool undo_used;               /* the undo file was written */
    struct fsck_report rep;       /* for --json */
    struct fsck_ctx ctx;          /* answers and the plan */
    bool readonly;                /* -n */
    bool cancelled;               /* the user quit */
    bool failed;                  /* an operational error */
    bool modified;                /* the device was written */
    uint64_t writes;              /* block writes */
    uint64_t lost_found;          /* entries moved to /lost+found */
    uint64_t lost_root;           /* entries moved to the root: no room for /lost+found */
    uint64_t uncopied;            /* the last repair's shared blocks it had no room to copy */
    bool preen_left;              /* preen met a problem it may not fix */
    bool unlisted;                /* free blocks were taken off the list for lost trees */
    char errmsg[512];             /* the first operational error */
};

static void fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct run *r, const char *fmt, ...)
{
    if (!r->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
        va_end(ap);
        fprintf(r->err, "%s: %s\n", FSCK_PROGRAM, r->errmsg);
    }
    r->failed = true;
}

static void progress_cb(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total)
{
    struct run *r = ctx;
    int pass = r->prog_pass ? r->prog_pass : (int)phase + 1;
    fsck_progress_update(r->prog, pass, done, total);
}

/* Text output helper: a line, prefixed with the device in preen mode. */
static void say(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct run *r, const char *fmt, ...)
{
    if (r->out == NULL)
        return;
    fsck_progress_clear(r->prog);
    if (r->o->mode == FSCK_MODE_PREEN)
        fprintf(r->out, "%s: ", r->dev_esc);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->out, fmt, ap);
    va_end(ap);
    fputc('\n', r->out);
}

/* ---- findings -------------------------------------------------------------- */

/* Does fsck count f as a problem (something to repair, or an error it cannot)? */
static bool is_problem(const struct run *r, const struct scan_finding *f, enum fsck_cat *cat_out,
                       bool *per_entry)
{
    const struct scan_problem_info *pi = scan_problem_lookup(f->code);
    enum fsck_cat cat = fsck_code_cat(f->code, per_entry);
    if (cat == FSCK_CAT_UNDELETE)
        cat = (r->o->undelete && f->count >= f->count2) ? cat : FSCK_CAT_NONE;
    *cat_out = cat;
    if (cat == FSCK_CAT_NONE)
        return pi == NULL || pi->severity >= SCAN_SEV_ERROR;
    return true;
}

static size_t count_problems(const struct run *r, const struct scan_result *res)
{
    const struct scan_finding *fs;
    size_t n = scan_findings(res, &fs), k = 0;
    for (size_t i = 0; i < n; i++) {
        enum fsck_cat cat;
        bool per;
        if (is_problem(r, &fs[i], &cat, &per))
            k++;
    }
    return k;
}

static const char *pass_title(unsigned pass)
{
    switch (pass) {
    case SCAN_PASS_SUPER:
        return _("Pass 1: Checking the superblock and geometry");
    case SCAN_PASS_TREE:
        return _("Pass 2: Checking directory trees");
    case SCAN_PASS_FILE:
        return _("Pass 3: Checking files and extender trees");
    case SCAN_PASS_FREE:
        return _("Pass 4: Checking the free list");
    case SCAN_PASS_BLOCKS:
        return _("Pass 5: Checking block ownership");
    case SCAN_PASS_COUNTER:
        return _("Pass 6: Checking write counters");
    case SCAN_PASS_DRIVER:
    default:
        return _("Pass 7: Checking marks of the 2012 driver and formatter");
    }
}

/* "rebuild the free list" -> "Rebuild the free list" */
static void question_of(const char *repair, char *buf, size_t len)
{
    snprintf(buf, len, "%s", repair);
    if (buf[0] >= 'a' && buf[0] <= 'z')
        buf[0] = (char)(buf[0] - 'a' + 'A');
}

/*
 * Show every finding of res pass by pass and record the answers in r->ctx.
 * Returns false on no memory.
 */
static bool present(struct run *r, struct scan_result *res, unsigned round)
{
    const struct scan_finding *fs;
    size_t n = scan_findings(res, &fs);
    enum fsck_answer latched[FSCK_CAT_COUNT];
    bool have_latch[FSCK_CAT_COUNT] = {false};
    bool preen_all[FSCK_CAT_COUNT];
    for (int k = 0; k < FSCK_CAT_COUNT; k++) {
        preen_all[k] = true;
        latched[k] = FSCK_ANSWER_NO;
    }
    for (size_t i = 0; i < n; i++) {
        enum fsck_cat cat;
        bool per;
        if (!is_problem(r, &fs[i], &cat, &per))
            continue;
        const struct scan_problem_info *pi = scan_problem_lookup(fs[i].code);
        if (pi == NULL || !(pi->flags & SCAN_PF_PREEN_OK))
            preen_all[cat] = false;
    }
    bool preen = r->o->mode == FSCK_MODE_PREEN;
    for (unsigned pass = 0; pass <= SCAN_PASS_DRIVER && !r->cancelled; pass++) {
        if (!preen)
            say(r, "%s", pass_title(pass));
        for (size_t i = 0; i < n && !r->cancelled; i++) {
            const struct scan_finding *f = &fs[i];
            if ((f->code >> 16) != pass)
                continue;
            const struct scan_problem_info *pi = scan_problem_lookup(f->code);
            enum fsck_cat cat;
            bool per;
            bool problem = is_problem(r, f, &cat, &per);
            /* The screen in the user's language, the JSON in the catalogue's English. */
            char *raw = r->o->json ? scan_finding_message(f) : scan_finding_message_translated(f);
            char *msg = raw ? fsck_escape(raw, strlen(raw)) : NULL;
            free(raw);
            if (msg == NULL)
                return false;
            const char *answer = "none";
            bool show = problem || r->o->verbose ||
                        (pi != NULL && pi->severity >= SCAN_SEV_WARNING);
            if (show)
                say(r, "%s", msg);
            if (problem && cat == FSCK_CAT_UNSUPPORTED) {
                say(r, _("  (this version of %s cannot repair it)"), FSCK_PROGRAM);
            } else if (problem && cat != FSCK_CAT_NONE) {
                char q[300];
                /* The catalogue proposes no repair of a deleted entry; --undelete makes one. */
                question_of(cat == FSCK_CAT_UNDELETE ? _("relink it (undelete)")
                                                     : pi ? scan_problem_repair_text(pi) : _("fix it"),
                            q, sizeof(q));
                enum fsck_answer a;
                if (!per && have_latch[cat]) {
                    a = latched[cat];
                    if (r->out != NULL) {
                        fsck_progress_clear(r->prog);
                        if (preen)
                            fprintf(r->out, "%s: ", r->dev_esc);
                        fprintf(r->out, "%s? %s\n", q, a == FSCK_ANSWER_YES ? _("yes") : _("no"));
                    }
                } else {
                    bool preen_ok = per ? (pi && (pi->flags & SCAN_PF_PREEN_OK)) : preen_all[cat];
                    fsck_progress_clear(r->prog);
                    if (preen && r->out != NULL)
                        fprintf(r->out, "%s: ", r->dev_esc);
                    a = fsck_prompt_ask(r->prompt, r->out, q, preen_ok);
                    if (!per) {
                        have_latch[cat] = true;
                        latched[cat] = a;
                    }
                }
                if (!preen && r->out != NULL)
                    fputc('\n', r->out);
                if (a == FSCK_ANSWER_QUIT) {
                    r->cancelled = true;
                    answer = "quit";
                } else {
                    answer = a == FSCK_ANSWER_YES ? "yes" : "no";
                    if (preen && a == FSCK_ANSWER_NO)
                        r->preen_left = true;
                    if (!fsck_decide(&r->ctx, f->code, f->entry, a)) {
                        free(msg);
                        return false;
                    }
                }
            }
            if ((show || problem) && !fsck_report_add(&r->rep, round, f, msg, answer)) {
                free(msg);
                return false;
            }
            free(msg);
        }
    }
    return true;
}

/* ---- scanning and storing ---------------------------------------------------- */

/* A scan with the geometry block 0 gives, or with blocksize and addrlen when both are set. */
static struct scan_result *do_scan_geometry(struct run *r, int prog_pass, uint32_t blocksize,
                                            unsigned addrlen)
{
    struct scan_opts so = {.progress = r->prog ? progress_cb : NULL,
                           .progress_ctx = r,
                           .blocksize = blocksize,
                           .addrlen = addrlen};
    r->prog_pass = prog_pass;
    struct scan_result *res = NULL;
    struct lanyfs_error err = {0};
    lanyfs_fs_cache_drop(r->fs);
    enum lanyfs_err rc = scan_fs(r->fs, &so, &res, &err);
    fsck_progress_clear(r->prog);
    if (rc != LANYFS_OK) {
        fail(r, _("the check failed: %s"), err.msg[0] ? err.msg : lanyfs_strerror(rc));
        return NULL;
    }
    return res;
}

static struct scan_result *do_scan(struct run *r, int prog_pass)
{
    return do_scan_geometry(r, prog_pass, 0, 0);
}

static void store_scan(struct run *r, struct scan_result *res, time_t started)
{
    struct store_db *db = NULL;
    struct lanyfs_error err = {0};
    enum lanyfs_err rc = store_open(r->o->db, 0, &db, &err);
    if (rc == LANYFS_OK) {
        struct store_scan_meta meta = {.image_path = r->dev, .started = (int64_t)started};
        rc = store_add_scan(db, res, &meta, NULL, &err);
    }
    struct lanyfs_error cerr = {0};
    enum lanyfs_err crc = store_close(db, &cerr);
    if (rc == LANYFS_OK && crc != LANYFS_OK) {
        rc = crc;
        err = cerr;
    }
    if (rc != LANYFS_OK)
        fail(r, _("cannot store the scan: %s"), err.msg[0] ? err.msg : lanyfs_strerror(rc));
}

/* ---- the undo file ------------------------------------------------------------ */

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The undo file's path: -z, or ./fsck-lanyfs-NAME.undo (NAME.1, NAME.2 ... when taken). */
static bool undo_setup(struct run *r)
{
    const struct fsck_opts *o = r->o;
    if (o->no_undo || r->readonly)
        return true;
    char buf[4096];
    if (o->undo_path != NULL) {
        if (exists(o->undo_path) && !o->undo_overwrite) {
            fail(r, _("the undo file %s exists: remove it, name another with -z, or give "
                      "--undo-overwrite"),
                 o->undo_path);
            return false;
        }
        snprintf(buf, sizeof(buf), "%s", o->undo_path);
    } else {
        const char *base = strrchr(r->dev, '/');
        base = base ? base + 1 : r->dev;
        if (*base == '\0')
            base = "device";
        snprintf(buf, sizeof(buf), "fsck-lanyfs-%.200s.undo", base);
        for (int k = 1; exists(buf) && k < 1000; k++)
            snprintf(buf, sizeof(buf), "fsck-lanyfs-%.200s.%d.undo", base, k);
        if (exists(buf)) {
            fail(r, "%s", _("no free name for the undo file here: give -z FILE or --no-undo"));
            return false;
        }
    }
    r->undo_path = strdup(buf);
    r->undo = r->undo_path ? lanyfs_undo_new(r->undo_path,
                                             o->undo_overwrite ? LANYFS_UNDO_OVERWRITE : 0)
                           : NULL;
    if (r->undo == NULL) {
        fail(r, "%s", _("out of memory"));
        return false;
    }
    return true;
}

/* ---- repairing ------------------------------------------------------------------ */

/* The first finding of that code (about block *blk when blk is set), NULL when none. */
static const struct scan_finding *find_code(const struct scan_result *res, const char *name,
                                            const uint64_t *blk)
{
    const struct scan_finding *fs;
    size_t n = scan_findings(res, &fs);
    for (size_t i = 0; i < n; i++) {
        const struct scan_problem_info *pi = scan_problem_lookup(fs[i].code);
        if (pi != NULL && (blk == NULL || fs[i].block == *blk) && strcmp(pi->name, name) == 0)
            return &fs[i];
    }
    return NULL;
}

static bool has_code(const struct scan_result *res, const char *name)
{
    return find_code(res, name, NULL) != NULL;
}

/*
 * A format cut before it wrote its root directory, over an earlier format
 * of a larger block size whose root the search found and whose address
 * length the data maps of two or more of its files tell (EARLIER_FORMAT):
 * the cut format wrote only its
 * block 0 (its root at block 1 would have been found first), which held
 * the earlier superblock, so that format can come back whole.  Returns a
 * scan in its geometry, whose first repair is a superblock for it (asked
 * for as any new superblock), or NULL when this is not such a stick (or
 * the scan failed: *failed).
 */
static struct scan_result *earlier_format(struct run *r, const struct scan_result *res,
                                          bool *failed)
{
    struct scan_anchors a;
    *failed = false;
    if (!has_code(res, "SB_FORMAT_INTERRUPTED"))
        return NULL;
    scan_get_anchors(res, &a);
    const struct scan_finding *ef = find_code(res, "EARLIER_FORMAT", &a.rootdir);
    /* Two files' data maps at least: one file alone does not carry a
     * superblock. */
    if (a.rootdir <= 1 || !fsck_root_is_formatters(res, a.rootdir) || ef == NULL ||
        ef->value2 == 0 || ef->value > LANYFS_BLOCKSIZE_MAX || ef->value2 > LANYFS_ADDRLEN_MAX ||
        ef->count < 2)
        return NULL;
    struct scan_result *eres = do_scan_geometry(r, 0, (uint32_t)ef->value, (unsigned)ef->value2);
    if (eres == NULL) {
        *failed = true;
        return NULL;
    }
    struct scan_anchors ea;
    scan_get_anchors(eres, &ea);
    if (ea.rootdir != 1) { /* not where that format put it: refused as another format's */
        scan_result_free(eres);
        return NULL;
    }
    say(r, _("%s: the format was cut before it wrote its root directory, and block %" PRIu64
             " holds the root directory of an earlier format of %" PRIu64 "-byte blocks and "
             "%" PRIu64 "-byte addresses, which the cut format wrote over only where its "
             "superblock was: checking in that format's geometry."),
        r->dev_esc, a.rootdir, ef->value, ef->value2);
    return eres;
}

/* Plan and write one round's repair.  Returns false on an operational error. */
static bool repair(struct run *r, struct scan_result *res)
{
    struct fsck_ctx *c = &r->ctx;
    c->scan = res;
    c->fs = r->fs;
    memset(&c->st, 0, sizeof(c->st));
    bool ok = false;
    enum lanyfs_err rc = fsck_plan(c);
    if (rc != LANYFS_OK) {
        fail(r, _("cannot plan the repair: %s"), c->err.msg);
        goto out;
    }
    /* Lost trees with no unlisted block for their files: blocks are taken
     * off the free list first, in a write of their own (repair_unlist.c),
     * and the check starts again, once. */
    if (c->lost_missing > 0 && !r->unlisted) {
        r->unlisted = true;
        uint64_t taken = 0;
        if ((rc = fsck_unlist(c, c->lost_missing, &taken)) != LANYFS_OK)
            goto out_err;
        if (taken > 0) {
            if ((rc = lanyfs_image_sync(lanyfs_fs_image(r->fs), &c->err)) != LANYFS_OK)
                goto out_err;
            say(r,
                ngettext("%" PRIu64 " free block is taken off the free list for the files of "
                         "lost extender trees; checking again.",
                         "%" PRIu64 " free blocks are taken off the free list for the files of "
                         "lost extender trees; checking again.",
                         taken),
                taken);
            ok = true;
            goto out;
        }
    }
    bool need_free = c->allow_freelist && (fsck_approved_any(c, FSCK_CAT_FREELIST) ||
                                           fsck_plan_changes(c) || c->lost_freed);
    fsck_progress_update(r->prog, 6, 0, 5);
    struct fsck_freelist fl;
    if ((rc = fsck_newblk_write(c)) != LANYFS_OK)
        goto out_err;
    fsck_progress_update(r->prog, 6, 1, 5);
    if ((rc = fsck_file_write(c)) != LANYFS_OK)
        goto out_err;
    fsck_progress_update(r->prog, 6, 2, 5);
    if ((rc = fsck_tree_write(c)) != LANYFS_OK)
        goto out_err;
    fsck_progress_update(r->prog, 6, 3, 5);
    if (need_free && (rc = fsck_freelist_write(c, &fl)) != LANYFS_OK)
        goto out_err;
    fsck_progress_update(r->prog, 6, 4, 5);
    if ((rc = fsck_super_write(c, need_free ? &fl : NULL)) != LANYFS_OK)
        goto out_err;
    if (c->st.writes > 0 && (rc = lanyfs_image_sync(lanyfs_fs_image(r->fs), &c->err)) != LANYFS_OK)
        goto out_err;
    fsck_progress_update(r->prog, 6, 5, 5);
    for (size_t i = 0; i < c->nte; i++) {
        if (!c->te[i].moved || c->te[i].parent != c->lostfound || c->lostfound == FSCK_NONE)
            continue;
        if (c->lostfound == c->root)
            r->lost_root++;
        else
            r->lost_found++;
    }
    ok = true;
    goto out;
out_err:
    fail(r, _("the repair stopped: %s"), c->err.msg[0] ? c->err.msg : lanyfs_strerror(rc));
out:
    r->writes += c->st.writes;
    r->uncopied = c->st.uncopied;
    if (c->st.writes > 0)
        r->modified = true;
    fsck_plan_free(c);
    return ok;
}

/* ---- the run ---------------------------------------------------------------------- */

static void summarize(struct run *r, const struct scan_result *res, uint64_t free_before,
                      struct fsck_summary *s)
{
    memset(s, 0, sizeof(*s));
    if (res != NULL) {
        struct scan_summary ss;
        scan_summarize(res, &ss);
        s->files = ss.files;
        s->dirs = ss.dirs;
        /* An inferred geometry's count when the superblock's is not to be believed. */
        s->blocks = scan_geom_inferred(res) ? scan_geom(res)->blocks
                                            : lanyfs_fs_super(r->fs)->blocks;
        s->free = ss.free_listed;
        s->used = s->blocks > s->free ? s->blocks - s->free : 0;
        s->reclaimed = ss.free_listed > free_before ? ss.free_listed - free_before : 0;
    }
    s->lost_found = r->lost_found;
    s->writes = r->writes;
    s->modified = r->modified;
    s->undo = r->undo_used ? r->undo_path : NULL;
}

/*
 * The last line: "DEV: 3 files, 2 directories, 40/64 blocks used (24 free),
 * 0 blocks reclaimed, 0 entries moved to /lost+found", each part in the
 * plural form its count decides.  The English line is the one fsck-lanyfs
 * always printed (scripts read it, "1 directories" too), so its singular
 * and plural msgids are the same text.  The parts go through outf, not
 * fprintf: GCC with the sanitizers takes an ngettext in fprintf's format
 * for a null format string.
 */
static void outf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void outf(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
}

static void print_summary(FILE *out, const char *dev, const struct fsck_summary *s)
{
    fprintf(out, "%s: ", dev);
    /* TRANSLATORS: the summary line's parts; English keeps one form. */
    outf(out, ngettext("%" PRIu64 " files", "%" PRIu64 " files", s->files), s->files);
    fputs(", ", out);
    outf(out, ngettext("%" PRIu64 " directories", "%" PRIu64 " directories", s->dirs),
         s->dirs);
    fputs(", ", out);
    outf(out, ngettext("%" PRIu64 "/%" PRIu64 " blocks used (%" PRIu64 " free)",
                       "%" PRIu64 "/%" PRIu64 " blocks used (%" PRIu64 " free)", s->blocks),
         s->used, s->blocks, s->free);
    fputs(", ", out);
    outf(out, ngettext("%" PRIu64 " blocks reclaimed", "%" PRIu64 " blocks reclaimed",
                       s->reclaimed),
         s->reclaimed);
    fputs(", ", out);
    outf(out, ngettext("%" PRIu64 " entries moved to /lost+found",
                       "%" PRIu64 " entries moved to /lost+found", s->lost_found),
         s->lost_found);
    fputc('\n', out);
}

int fsck_run(const struct fsck_opts *o)
{
    struct run run;
    struct run *r = &run;
    memset(r, 0, sizeof(*r));
    r->o = o;
    r->out = o->json ? NULL : (o->out ? o->out : stdout);
    r->err = o->errout ? o->errout : stderr;
    r->dev = o->device;
    r->readonly = o->mode == FSCK_MODE_NO;
    r->ctx.o = o;
    r->ctx.out = r->out;
    r->ctx.verbose = o->verbose;
    lanyfs_ts_now(&r->ctx.now);
    struct scan_result *res = NULL;
    uint64_t free_before = 0;
    bool clean = false;
    int exit_code = 0;
    time_t started = time(NULL);

    r->dev_esc = fsck_escape(o->device, strlen(o->device));
    r->prompt = fsck_prompt_new(o);
    if (r->dev_esc == NULL || r->prompt == NULL) {
        fail(r, "%s", _("out of memory"));
        goto out;
    }
    if (!fsck_prompt_usable(r->prompt)) {
        fail(r, "%s", _("interactive repairs need a terminal: give -n, -p or -y"));
        goto out;
    }
    const char *where = NULL;
    if (!o->no_mount_check && fsck_device_mounted(o->device, &where)) {
        if (!r->readonly) {
            fail(r, _("%s is mounted: unmount it before repairing it"), r->dev_esc);
            goto out;
        }
        fprintf(r->err, _("%s: warning: %s is mounted on %s; the check may see it change\n"),
                FSCK_PROGRAM, r->dev_esc, where ? where : "?");
    }
    if (!undo_setup(r))
        goto out;
    /* A block 0 with sectors that fail opens too: the scan infers what it
     * lost, and nothing is written on an inferred geometry (below). */
    unsigned flags = LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0;
    if (!r->readonly)
        flags |= LANYFS_OPEN_RDWR | LANYFS_OPEN_EXCL;
    struct lanyfs_error err = {0};
    if (lanyfs_fs_open(o->device, flags, &r->fs, &err) != LANYFS_OK) {
        fail(r, "%s", err.msg);
        goto out;
    }
    if (r->undo != NULL)
        lanyfs_undo_attach(r->undo, r->fs, o->test_hook, o->test_hook_ctx);
    else if (o->test_hook != NULL)
        lanyfs_fs_set_write_hook(r->fs, o->test_hook, o->test_hook_ctx);
    r->prog = fsck_progress_new(o->progress_fd, o->device);

    if (r->out != NULL && o->mode != FSCK_MODE_PREEN)
        {
        fprintf(r->out, "%s %s\n", FSCK_PROGRAM, PACKAGE_VERSION);
        fprintf(r->out, _("Checking %s\n"), r->dev_esc);
    }
    res = do_scan(r, 0);
    if (res == NULL)
        goto out;
    if (o->db != NULL)
        store_scan(r, res, started);
    {
        struct scan_summary ss;
        scan_summarize(res, &ss);
        free_before = ss.free_listed;
    }
    bool grown = false, resupered = false, rerooted = false, earlier = false;
    for (unsigned round = 1;; round++) {
        r->ctx.ndec = 0;
        if (round == 1) {
            bool failed;
            struct scan_result *eres = earlier_format(r, res, &failed);
            if (failed)
                break;
            if (eres != NULL) {
                struct scan_summary ss;
                earlier = true;
                scan_result_free(res);
                res = eres;
                scan_summarize(res, &ss);
                free_before = ss.free_listed;
            }
        }
        if (!present(r, res, round)) {
            fail(r, "%s", _("out of memory"));
            break;
        }
        if (r->cancelled || r->readonly)
            break;
        /*
         * An image shorter than its filesystem is a copy cut short or a
         * device that lost its tail: what lies past the end is unknown,
         * so every repair (cutting the pointers that lead there, a free
         * list rebuilt without those blocks) would destroy what a whole
         * copy still holds.  Nothing is written, as e2fsck aborts on a
         * device smaller than its filesystem.
         */
        /*
         * A geometry inferred from the blocks is not the one the handle
         * writes with (that comes from block 0), and a repair on it would
         * write its blocks where the inference did not look.  So the first
         * write is a new superblock with the inferred geometry, made
         * through a handle switched to it, and the check starts again over
         * it; declined, nothing at all is written.
         */
        if (scan_geom_inferred(res)) {
            if (earlier && !resupered && !fsck_allowed(&r->ctx, FSCK_CAT_RESUPER, 0)) {
                const struct lanyfs_geom *eg = scan_geom(res);
                say(r, _("%s: no superblock is written for the earlier format, so nothing is "
                         "repaired.  Copy its files out with lanyfs salvage --geometry %u:%u."),
                    r->dev_esc, eg->blocksize, eg->addrlen);
                break;
            }
            if (resupered || !fsck_allowed(&r->ctx, FSCK_CAT_RESUPER, 0)) {
                say(r, _("%s has no superblock that can be used, so its geometry was inferred "
                         "from the blocks: nothing is repaired without a new superblock.  Copy "
                         "the files out with lanyfs salvage."),
                    r->dev_esc);
                break;
            }
            resupered = true;
            struct lanyfs_error serr = {0};
            enum lanyfs_err src = fsck_super_rebuild(r->fs, res, &r->ctx.now, &serr);
            if (src == LANYFS_E_NOTFOUND) {
                say(r, _("%s: no root directory was found, so no superblock can be written.  "
                         "Copy the files out with lanyfs salvage."),
                    r->dev_esc);
                break;
            }
            if (src != LANYFS_OK ||
                lanyfs_image_sync(lanyfs_fs_image(r->fs), &serr) != LANYFS_OK) {
                fail(r, _("cannot write the superblock: %s"), serr.msg);
                break;
            }
            r->writes++;
            r->modified = true;
            const struct lanyfs_super *nsb = lanyfs_fs_super(r->fs);
            say(r, _("A new superblock is written: %u-byte blocks, %u-byte addresses, %" PRIu64
                     " blocks, the root directory at block %" PRIu64 "; checking again."),
                1u << nsb->blockbits, (unsigned)nsb->addrlen, nsb->blocks, nsb->rootdir);
            scan_result_free(res);
            res = do_scan(r, 0);
            if (res == NULL)
                break;
            continue;
        }
        if (has_code(res, "SB_TRUNCATED")) {
            say(r, _("%s is shorter than its filesystem: not repaired, since a repair would "
                     "act on a partial view.  Make a whole copy of the device, or copy the "
                     "files out with lanyfs salvage."),
                r->dev_esc);
            break;
        }
        /*
         * A root the superblock does not name rightly: 'rootdir' is set
         * first, since the plan starts from it, to the formatter's root
         * the scan found by searching the blocks, or else to a new, empty
         * root (repair_root.c); the next round moves what nothing reaches
         * to /lost+found.
         */
        if (!rerooted &&
            (has_code(res, "SB_ROOTDIR_RANGE") || has_code(res, "SB_ROOT_NOT_DIR") ||
             has_code(res, "SB_FORMAT_INTERRUPTED")) &&
            fsck_allowed(&r->ctx, FSCK_CAT_ROOT, 0)) {
            struct scan_anchors a;
            scan_get_anchors(res, &a);
            rerooted = true;
            /* A cut format's root can only be at block 1, where the
             * formatter writes it (SPEC-9.16): a LANYFSROOT elsewhere is
             * another format's, whose pointers count other blocks. */
            if (has_code(res, "SB_FORMAT_INTERRUPTED") && a.rootdir > 1 &&
                fsck_root_is_formatters(res, a.rootdir)) {
                /* That format put its root at its own block 1: the scan
                 * names its block size when the root lies at one, and the
                 * address length when its files' data maps tell it. */
                const struct scan_finding *ef = find_code(res, "EARLIER_FORMAT", &a.rootdir);
                if (ef != NULL && ef->value2 != 0)
                    say(r, _("%s: the format was cut before it wrote its root directory, and "
                             "block %" PRIu64 " holds the root directory of an earlier format "
                             "of %" PRIu64 "-byte blocks: not repaired, since a new root would "
                             "give that format's blocks away.  Copy its files out with "
                             "lanyfs salvage --geometry %" PRIu64 ":%" PRIu64 "."),
                        r->dev_esc, a.rootdir, ef->value, ef->value, ef->value2);
                else if (ef != NULL)
                    say(r, _("%s: the format was cut before it wrote its root directory, and "
                             "block %" PRIu64 " holds the root directory of an earlier format "
                             "of %" PRIu64 "-byte blocks: not repaired, since a new root would "
                             "give that format's blocks away.  Copy its files out with "
                             "lanyfs salvage --geometry %" PRIu64 ", which infers the address "
                             "length."),
                        r->dev_esc, a.rootdir, ef->value, ef->value);
                else
                    say(r, _("%s: the format was cut before it wrote its root directory, and "
                             "block %" PRIu64 " holds the root directory of another format: not "
                             "repaired, since a new root would give that format's blocks away.  "
                             "Copy the files out with lanyfs salvage (--geometry for the other "
                             "format)."),
                        r->dev_esc, a.rootdir);
                break;
            }
            bool found = a.rootdir != 0 && fsck_root_is_formatters(res, a.rootdir);
            uint64_t old_root = lanyfs_fs_super(r->fs)->rootdir;
            if (!found || a.rootdir != old_root) {
                struct lanyfs_error rerr = {0};
                uint64_t root = a.rootdir;
                enum lanyfs_err rrc = found ? fsck_super_set_root(r->fs, root, &rerr)
                                            : fsck_root_make(r->fs, res, &r->ctx.now, &root, &rerr);
                if (rrc == LANYFS_OK)
                    rrc = lanyfs_image_sync(lanyfs_fs_image(r->fs), &rerr);
                if (rrc != LANYFS_OK) {
                    fail(r, _("cannot write the root directory: %s"), rerr.msg);
                    break;
                }
                r->writes += found || root == old_root ? 1 : 2;
                r->modified = true;
                if (found)
                    say(r, _("The root directory is now block %" PRIu64 ", found by searching the "
                             "blocks; checking again."),
                        root);
                else
                    say(r, _("No root directory was found: a new, empty one is made at block "
                             "%" PRIu64 "; checking again."),
                        root);
                scan_result_free(res);
                res = do_scan(r, 0);
                if (res == NULL)
                    break;
                continue;
            }
        }
        const struct lanyfs_super *sb = lanyfs_fs_super(r->fs);
        uint64_t target = fsck_super_grow_target(r->fs);
        bool small = has_code(res, "SB_BLOCKS_SMALL") && fsck_allowed(&r->ctx, FSCK_CAT_GROW, 0);
        bool over = (has_code(res, "SB_BLOCKS_OVER_ADDR") || has_code(res, "SB_BLOCKS_LARGE")) &&
                    fsck_allowed(&r->ctx, FSCK_CAT_CAP, 0);
        if (!grown && ((small && target > sb->blocks) || (over && target < sb->blocks))) {
            grown = true;
            struct lanyfs_error gerr = {0};
            if (fsck_super_set_blocks(r->fs, target, &gerr) != LANYFS_OK ||
                lanyfs_image_sync(lanyfs_fs_image(r->fs), &gerr) != LANYFS_OK) {
                fail(r, _("cannot write the superblock: %s"), gerr.msg);
                break;
            }
            r->writes++;
            r->modified = true;
            say(r, _("'blocks' is now %" PRIu64 "; checking again."), target);
            scan_result_free(res);
            res = do_scan(r, 0);
            if (res == NULL)
                break;
            continue;
        }
        if (count_problems(r, res) == 0)
            break;
        uint64_t before = r->writes;
        bool ok = repair(r, res);
        if (!ok)
            break;
        scan_result_free(res);
        res = do_scan(r, 7);
        if (res == NULL)
            break;
        if (r->writes == before || count_problems(r, res) == 0 || round >= MAX_ROUNDS)
            break;
        if (r->out != NULL && o->mode != FSCK_MODE_PREEN)
            {
            size_t left = count_problems(r, res);
            fprintf(r->out,
                    /* TRANSLATORS: English keeps one form, as it always printed. */
                    ngettext("Restarting the check: %zu problems are left.\n\n",
                             "Restarting the check: %zu problems are left.\n\n", left),
                    left);
        }
    }
    if (res != NULL)
        clean = count_problems(r, res) == 0;
    if (clean && !r->readonly && !r->cancelled && !r->failed) {
        struct lanyfs_error cerr = {0};
        if (fsck_super_set_checked(r->fs, &r->ctx.now, &cerr) != LANYFS_OK ||
            lanyfs_image_sync(lanyfs_fs_image(r->fs), &cerr) != LANYFS_OK)
            fail(r, _("cannot write the superblock: %s"), cerr.msg);
        else
            r->writes++;
    }
out:
    if (r->undo != NULL) {
        r->undo_used = lanyfs_undo_started(r->undo);
        struct lanyfs_error uerr = {0};
        if (r->failed) {
            lanyfs_undo_abandon(r->undo);
        } else if (lanyfs_undo_finish(r->undo, &uerr) != LANYFS_OK) {
            fail(r, "%s", uerr.msg);
        }
        r->undo = NULL;
    }
    {
        struct fsck_summary s;
        summarize(r, res, free_before, &s);
        s.clean = clean;
        if (r->modified && r->writes > 0)
            exit_code |= FSCK_EXIT_CORRECTED;
        if (!clean)
            exit_code |= FSCK_EXIT_UNCORRECTED;
        if (r->failed)
            exit_code |= FSCK_EXIT_ERROR;
        if (r->cancelled)
            exit_code = FSCK_EXIT_CANCELLED | (exit_code & FSCK_EXIT_CORRECTED);
        if (r->failed && res == NULL)
            exit_code &= ~FSCK_EXIT_UNCORRECTED;
        if (o->json) {
            fsck_report_json(o->out ? o->out : stdout, o, &r->rep, &s, exit_code,
                             r->failed ? r->errmsg : NULL);
        } else if (r->out != NULL && res != NULL) {
            fsck_progress_clear(r->prog);
            if (r->cancelled)
                fprintf(r->out, _("%s: cancelled: nothing more was written.\n"), r->dev_esc);
            if (r->modified)
                fprintf(r->out, _("\n%s: ***** FILESYSTEM WAS MODIFIED *****\n"), r->dev_esc);
            if (!clean && o->mode == FSCK_MODE_PREEN && r->preen_left)
                fprintf(r->out,
                        _("\n%s: UNEXPECTED INCONSISTENCY; RUN %s MANUALLY.\n"
                          "\t(i.e., without -a or -p options)\n"),
                        r->dev_esc, FSCK_PROGRAM);
            else if (!clean)
                fprintf(r->out, _("\n%s: ********** WARNING: Filesystem still has errors **********\n"),
                        r->dev_esc);
            if (r->lost_root > 0)
                fprintf(r->out,
                        ngettext("%s: no block was free for /lost+found: %" PRIu64
                                 " entry moved to the root directory instead\n",
                                 "%s: no block was free for /lost+found: %" PRIu64
                                 " entries moved to the root directory instead\n",
                                 r->lost_root),
                        r->dev_esc, r->lost_root);
            if (!clean && r->uncopied > 0)
                fprintf(r->out,
                        ngettext("%s: no block was free for the copy of %" PRIu64
                                 " shared block: both files still map it. Copy them out "
                                 "(lanyfs salvage), free some space, and run again\n",
                                 "%s: no block was free for the copies of %" PRIu64
                                 " shared blocks: both files still map each. Copy them out "
                                 "(lanyfs salvage), free some space, and run again\n",
                                 r->uncopied),
                        r->dev_esc, r->uncopied);
            print_summary(r->out, r->dev_esc, &s);
            if (s.undo != NULL) {
                char *u = fsck_escape(s.undo, strlen(s.undo));
                fprintf(r->out, _("Undo file: %s (restore with: lanyfs-undo %s %s)\n"),
                        u ? u : "?", u ? u : "?", r->dev_esc);
                free(u);
            }
        }
    }
    if (r->out != NULL)
        fflush(r->out);
    scan_result_free(res);
    free(r->ctx.dec);
    fsck_report_free(&r->rep);
    fsck_progress_free(r->prog);
    lanyfs_fs_close(r->fs);
    fsck_prompt_free(r->prompt);
    free(r->undo_path);
    free(r->dev_esc);
    return exit_code;
}
