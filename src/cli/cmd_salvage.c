/*
 * cmd_salvage.c -- `lanyfs salvage [OPTIONS] IMAGE OUTDIR [PATH...]`: copy
 * files out of a damaged image into a folder.
 *
 * The image is opened read-only (also when its superblock fails its
 * checks), scanned (scan.h) and salvaged (salvage.h) into OUTDIR, which is
 * made when missing: the live tree, or the live PATHs given, under
 * OUTDIR/files/; with --deleted the deleted files under OUTDIR/deleted/,
 * with --orphans the orphaned entries under OUTDIR/orphans/, with --lost
 * the data of extender trees no file links under OUTDIR/lost/, with
 * --carve the runs of data blocks no file owns under OUTDIR/carved/, with
 * --versions the earlier versions of each path beside it as NAME.~N~;
 * --all is all five.  OUTDIR/manifest.csv and manifest.json list every
 * file.  Nothing is written outside OUTDIR, and nothing in it is replaced
 * without --force (docs/salvage.md has the rules).
 *
 * Output: the files that did not come out exact, one line each ("partial
 * /a/b -> files/a/b: why"), then a closing summary with the exact, partial
 * and unrecoverable counts; --quiet leaves out the summary, --json prints
 * one document instead.  Progress goes to stderr as a one-line bar (scan
 * phases, then the bytes salvaged) when stderr is a terminal and neither
 * --quiet nor --json is given.  --db FILE adds the scan (docs/scan-db.md)
 * and the salvage rows (docs/salvage.md) to an SQLite scan database.
 *
 * Exit status: 0 when every file came out exact; LANYFS_EXIT_INCOMPLETE
 * (9) when every file was written but some are partial or unrecoverable;
 * LANYFS_EXIT_NOTFOUND (6) when a PATH names no live entry; 1 when a file
 * could not be written (it exists, without --force, or the folder refused
 * it), the folder or the database cannot be used, or the image cannot be
 * read, or the run was interrupted (SIGINT, SIGTERM: the salvage stops at
 * the next file and the manifests list what was copied).  The hardest of
 * these wins: 1, then 6, then 9.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "salvage.h"
#include "scan.h"
#include "scan_run.h"
#include "store.h"
#include "store_salvage.h"
#include "termbar.h"
#include "i18n.h"

/* ---- progress ------------------------------------------------------------------ */

static void on_salvage_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_bar_show_bytes(ctx, "salvage", done, total);
}

/* A file that is not exact, as it is done (text mode). */
struct lines {
    struct cli_bar *bar;
};

static void on_item(void *ctx, const struct salvage_item *it)
{
    struct lines *l = ctx;
    if (it->status == SALVAGE_EXACT)
        return;
    cli_bar_clear(l->bar);
    printf("%-13s %s -> %s%s%s\n", salvage_status_name(it->status), it->source,
           it->output != NULL ? it->output : "?", it->note != NULL ? ": " : "",
           it->note != NULL ? it->note : "");
}

/* ---- interruption -------------------------------------------------------------------- */

/*
 * Set by SIGINT or SIGTERM: the scan, or the salvage at its next file,
 * stops; the manifests then list what was copied.  An int, as the scan and
 * salvage options take it (sig_atomic_t is int on every platform built for).
 */
static volatile int interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* Catch SIGINT and SIGTERM into `interrupted` (restore: put back *old). */
static void catch_signals(struct sigaction old[2], bool restore)
{
    static const int sigs[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        if (restore) {
            sigaction(sigs[i], &old[i], NULL);
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, &old[i]);
    }
}

/* ---- output ------------------------------------------------------------------------- */

#define W 16 /* column of the values */

static void print_summary(const char *image, const char *outdir, const struct salvage_totals *t,
                          const struct scan_result *scan, unsigned flags, const char *db,
                          int64_t scan_id)
{
    char *img = out_escape(image, strlen(image), 0);
    char *out = out_escape(outdir, strlen(outdir), 0);
    out_field(W, "Image", "%s", img);
    out_field(W, "Output", "%s", out);
    out_field(W, "Files", "%" PRIu64 " exact, %" PRIu64 " partial, %" PRIu64 " unrecoverable",
              t->exact, t->partial, t->unrecoverable);
    if (t->skipped != 0 || t->failed != 0)
        out_field(W, "Not written", "%" PRIu64 " skipped (the output exists), %" PRIu64 " failed",
                  t->skipped, t->failed);
    out_field(W, "Directories", "%" PRIu64 " made", t->dirs);
    out_field(W, "Bytes", "%" PRIu64 " written, %" PRIu64 " of them recovered", t->bytes,
              t->recovered);
    out_field(W, "Manifests", "%s/manifest.csv, %s/manifest.json", out, out);
    /* What the scan found that was not asked for. */
    struct scan_summary sum;
    scan_summarize(scan, &sum);
    bool del = sum.deleted != 0 && !(flags & SALVAGE_DELETED);
    bool orph = sum.orphans != 0 && !(flags & SALVAGE_ORPHANS);
    if (del && orph)
        out_field(W, "Left out", "%" PRIu64 " deleted entries (--deleted), %" PRIu64
                  " orphaned entries (--orphans)", sum.deleted, sum.orphans);
    else if (del)
        out_field(W, "Left out", "%" PRIu64 " deleted entries (--deleted)", sum.deleted);
    else if (orph)
        out_field(W, "Left out", "%" PRIu64 " orphaned entries (--orphans)", sum.orphans);
    /* The lost trees no file takes its data from (their own files' trees
     * come with those files). */
    const struct scan_lost_tree *lt;
    size_t nlt = scan_lost_trees(scan, &lt), unpaired = 0;
    for (size_t i = 0; i < nlt; i++)
        unpaired += lt[i].entry == 0;
    if (unpaired != 0 && !(flags & (SALVAGE_LOST | SALVAGE_CARVE)))
        out_field(W, "Left out", "%zu extender trees of data that no file links (--lost)",
                  unpaired);
    /* An earlier format's files, which only its own geometry reads. */
    const struct scan_finding *fs;
    size_t nf = scan_findings(scan, &fs);
    for (size_t i = 0; i < nf; i++) {
        if (fs[i].code == SCAN_PR_EARLIER_FORMAT && fs[i].text != NULL)
            out_field(W, "Earlier format", "%" PRIu64 "-byte blocks, its root at block %" PRIu64
                      ": %s", fs[i].value, fs[i].block, fs[i].text);
        else if (fs[i].code == SCAN_PR_EARLIER_FORMAT_ENTRIES && fs[i].text != NULL)
            out_field(W, "Earlier format", "%" PRIu64 "-byte blocks, %" PRIu64
                      " of its entries in unused blocks: %s", fs[i].value, fs[i].count,
                      fs[i].text);
    }
    if (db != NULL) {
        char *d = out_escape(db, strlen(db), 0);
        out_field(W, "Database", "%s, scan %" PRId64, d, scan_id);
        g_free(d);
    }
    g_free(img);
    g_free(out);
}

static void json_ranges(JsonBuilder *b, const char *key, const struct salvage_ranges *r)
{
    json_builder_set_member_name(b, key);
    json_builder_begin_array(b);
    for (size_t i = 0; i < r->n; i++) {
        json_builder_begin_array(b);
        json_builder_add_int_value(b, (gint64)r->r[i].first);
        json_builder_add_int_value(b, (gint64)r->r[i].count);
        json_builder_end_array(b);
    }
    json_builder_end_array(b);
}

static void print_json(JsonBuilder *b, const char *outdir, const struct salvage_result *res,
                       const char *db, int64_t scan_id)
{
    struct salvage_totals t;
    salvage_get_totals(res, &t);
    char *out = out_escape(outdir, strlen(outdir), 0);
    out_json_str(b, "output", out);
    g_free(out);
    cli_db_json(b, db, scan_id);
    json_builder_set_member_name(b, "summary");
    json_builder_begin_object(b);
    out_json_u64(b, "exact", t.exact);
    out_json_u64(b, "partial", t.partial);
    out_json_u64(b, "unrecoverable", t.unrecoverable);
    out_json_u64(b, "skipped", t.skipped);
    out_json_u64(b, "failed", t.failed);
    out_json_u64(b, "missing_paths", t.missing);
    out_json_u64(b, "directories", t.dirs);
    out_json_u64(b, "bytes", t.bytes);
    out_json_u64(b, "bytes_recovered", t.recovered);
    json_builder_end_object(b);

    const char *const *probs;
    size_t np = salvage_problems(res, &probs);
    json_builder_set_member_name(b, "salvage_problems");
    json_builder_begin_array(b);
    for (size_t i = 0; i < np; i++) {
        char *m = out_escape(probs[i], strlen(probs[i]), OUT_ESC_KEEP_BSL);
        json_builder_add_string_value(b, m);
        g_free(m);
    }
    json_builder_end_array(b);

    const struct salvage_item *it;
    size_t n = salvage_items(res, &it);
    json_builder_set_member_name(b, "files");
    json_builder_begin_array(b);
    for (size_t i = 0; i < n; i++) {
        json_builder_begin_object(b);
        out_json_str(b, "kind", salvage_kind_name(it[i].kind));
        out_json_str(b, "source_path", it[i].source);
        out_json_str(b, "output_path", it[i].output);
        out_json_str(b, "status", salvage_status_name(it[i].status));
        out_json_u64(b, "size", it[i].size);
        out_json_u64(b, "bytes_recovered", it[i].recovered);
        out_json_str(b, "sha256", it[i].sha256[0] ? it[i].sha256 : NULL);
        out_json_str(b, "mime", it[i].mime);
        out_json_str(b, "extension", it[i].ext);
        out_json_u64(b, "entry_block", it[i].entry_block);
        if (it[i].version > 0) {
            out_json_u64(b, "version", it[i].version);
        } else {
            json_builder_set_member_name(b, "version");
            json_builder_add_null_value(b);
        }
        json_ranges(b, "source_blocks", &it[i].blocks);
        json_ranges(b, "holes", &it[i].holes);
        json_ranges(b, "unreadable", &it[i].unreadable);
        json_ranges(b, "reused", &it[i].reused);
        out_json_str(b, "note", it[i].note);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

/* ---- the command ------------------------------------------------------------------- */

/* OUTDIR, made when missing, opened as a directory. */
static int open_outdir(struct out_report *rep, const char *outdir)
{
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        char msg[300];
        snprintf(msg, sizeof(msg), "cannot make the folder: %s", strerror(errno));
        out_report_add(rep, outdir, LANYFS_E_IO, LANYFS_NO_BLOCK, msg);
        return -1;
    }
    int fd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        char msg[300];
        snprintf(msg, sizeof(msg), "cannot open the folder: %s", strerror(errno));
        out_report_add(rep, outdir, LANYFS_E_IO, LANYFS_NO_BLOCK, msg);
    }
    return fd;
}

static int exit_for(const struct salvage_totals *t)
{
    if (t->skipped != 0 || t->failed != 0)
        return LANYFS_EXIT_ERROR;
    if (t->missing != 0)
        return LANYFS_EXIT_NOTFOUND;
    if (t->partial != 0 || t->unrecoverable != 0)
        return LANYFS_EXIT_INCOMPLETE;
    return LANYFS_EXIT_OK;
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"deleted", no_argument, NULL, 'D'},
        {"orphans", no_argument, NULL, 'O'},
        {"carve", no_argument, NULL, 'C'},
        {"lost", no_argument, NULL, 'L'},
        {"versions", no_argument, NULL, 'V'},
        {"all", no_argument, NULL, 'a'},
        {"force", no_argument, NULL, 'f'},
        {"db", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},
        {"geometry", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dbpath = NULL;
    bool json = false, quiet = false;
    unsigned flags = 0, gbits = 0, gaddr = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "afqh", opts, NULL)) != -1) {
        switch (c) {
        case 'D':
            flags |= SALVAGE_DELETED;
            break;
        case 'O':
            flags |= SALVAGE_ORPHANS;
            break;
        case 'C':
            flags |= SALVAGE_CARVE;
            break;
        case 'L':
            flags |= SALVAGE_LOST;
            break;
        case 'V':
            flags |= SALVAGE_VERSIONS;
            break;
        case 'a':
            flags |= SALVAGE_DELETED | SALVAGE_ORPHANS | SALVAGE_LOST | SALVAGE_CARVE |
                     SALVAGE_VERSIONS;
            break;
        case 'f':
            flags |= SALVAGE_FORCE;
            break;
        case 'd':
            dbpath = optarg;
            break;
        case 'g':
            if ((c = cli_geometry_option(self, optarg, true, &gbits, &gaddr)) != 0)
                return c;
            break;
        case 'j':
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            return cli_help(self);
        default:
            return cli_bad_option(self, argv);
        }
    }
    if (argc - optind < 2)
        return cli_usage_error(self, "expects IMAGE and OUTDIR");
    if (json && quiet)
        return cli_usage_error(self, "--json and --quiet exclude each other");
    const char *image = argv[optind];
    const char *outdir = argv[optind + 1];

    struct out_report rep;
    out_report_init(&rep);
    JsonBuilder *b = json ? out_json_begin(self->name, image) : NULL;
    struct cli_bar bar;
    cli_bar_init(&bar, !quiet && !json && isatty(STDERR_FILENO), CLI_BAR_ERASE | CLI_BAR_SHOW_END);
    struct lines lines = {.bar = &bar};
    struct store_db *db = NULL;
    struct lanyfs_fs *fs = NULL;
    struct scan_result *scan = NULL;
    struct salvage_result *res = NULL;
    int outfd = -1;
    int64_t scan_id = 0;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);

    /* The database first: one that cannot be used fails before anything is read. */
    if (!cli_db_open(&rep, dbpath, &db))
        goto out;
    if (lanyfs_fs_open(image, LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0, &fs, &err) != LANYFS_OK) {
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    outfd = open_outdir(&rep, outdir);
    if (outfd < 0)
        goto out;

    struct cli_scan_clock clk;
    cli_scan_clock_start(&clk);
    struct sigaction old_sig[2];
    interrupted = 0;
    catch_signals(old_sig, false);
    struct scan_opts so = {.progress = cli_bar_on_scan, .progress_ctx = &bar,
                           .cancel = &interrupted,
                           .blocksize = gbits ? (uint32_t)1 << gbits : 0, .addrlen = gaddr};
    enum lanyfs_err src = scan_fs(fs, &so, &scan, &err);
    if (src != LANYFS_OK) {
        catch_signals(old_sig, true);
        cli_bar_clear(&bar);
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    cli_scan_clock_stop(&clk);

    struct salvage_opts sopt = {
        .flags = flags,
        .paths = (const char *const *)(argv + optind + 2),
        .npaths = (size_t)(argc - optind - 2),
        .progress = on_salvage_progress,
        .progress_ctx = &bar,
        .on_item = json ? NULL : on_item,
        .item_ctx = &lines,
        .image_name = image,
        .cancel = &interrupted,
    };
    enum lanyfs_err rc = salvage_run(scan, fs, outfd, &sopt, &res, &err);
    catch_signals(old_sig, true);
    cli_bar_clear(&bar);
    if (res != NULL) {
        const char *const *probs;
        size_t np = salvage_problems(res, &probs);
        for (size_t i = 0; i < np; i++)
            fprintf(stderr, "lanyfs: %s\n", probs[i]);
    }
    if (rc != LANYFS_OK) {
        out_report_status(&rep, LANYFS_EXIT_ERROR);
        out_report_error(&rep, outdir, &err);
        goto out;
    }

    if (db != NULL) {
        if (!cli_db_add_scan(&rep, db, scan, image, &clk, NULL, NULL, &bar, &scan_id))
            goto out;
        if (store_add_salvage(db, scan_id, outdir, res, NULL, &err) != LANYFS_OK) {
            cli_bar_clear(&bar);
            out_report_status(&rep, LANYFS_EXIT_ERROR);
            out_report_error(&rep, NULL, &err);
            goto out;
        }
        cli_bar_clear(&bar);
    }

    struct salvage_totals t;
    salvage_get_totals(res, &t);
    if (json)
        print_json(b, outdir, res, dbpath, scan_id);
    else if (!quiet)
        print_summary(image, outdir, &t, scan, flags, dbpath, scan_id);
    out_report_status(&rep, exit_for(&t));
    if (!json)
        out_flush_stdout(&rep);

out:
    cli_bar_clear(&bar);
    salvage_result_free(res);
    scan_result_free(scan);
    if (fs != NULL)
        lanyfs_fs_close(fs);
    if (outfd >= 0)
        close(outfd);
    cli_db_close(&rep, db);
    int status = json ? out_json_end(b, &rep) : rep.exit_code;
    out_report_free(&rep);
    return status;
}

const struct cli_command cmd_salvage = {
    "salvage",
    N_("[--deleted] [--orphans] [--lost] [--carve] [--versions] [--all] [--force] [--db FILE] "
       "[--json] "
       "[--quiet] [--geometry BS[:AL]] IMAGE OUTDIR [PATH...]"),
    N_("Copy files out of a damaged image into a folder."),
    "Options:\n"
    "  --deleted   also deleted files whose blocks were not handed out again (deleted/)\n"
    "  --orphans   also entries that nothing reaches any more (orphans/)\n"
    "  --lost      also the data of extender trees no file links: files written\n"
    "              just before an unplug whose entries never got them (lost/)\n"
    "  --carve     also runs of data blocks no file owns, typed by libmagic (carved/)\n"
    "  --versions  also earlier versions of each path, beside it as NAME.~N~\n"
    "  -a, --all   all five of the above\n"
    "  -f, --force replace files (and symbolic links) that are in the way in OUTDIR\n"
    "  --db FILE   add the scan and the salvage to the SQLite database FILE\n"
    "  --json      write one JSON document instead of text\n"
    "  -q, --quiet print only the files that did not come out exact\n"
    "  --geometry BS[:AL]  read the image with block size BS and address length AL\n"
    "              (inferred from the files' data maps when left out) whatever\n"
    "              block 0 says: an earlier format's files on a stick formatted\n"
    "              again (the scan's EARLIER_FORMAT or EARLIER_FORMAT_ENTRIES\n"
    "              finding names it)\n"
    "  -h, --help  show this help\n\n"
    "The image is only read. OUTDIR is made when missing; the live tree (or the\n"
    "PATHs given) goes to OUTDIR/files/, and OUTDIR/manifest.csv and manifest.json\n"
    "list every file: exact, partial (zeros stand for what could not be had) or\n"
    "unrecoverable. Names are escaped, nothing is written outside OUTDIR, no link\n"
    "is followed and no file replaced without --force (docs/salvage.md).\n\n"
    "Exit status of salvage: 0 when every file came out exact, 9 when some are\n"
    "partial or unrecoverable, 6 when a PATH names no live entry, 1 when a file\n"
    "could not be written (it exists, or the folder refused it) or the image,\n"
    "the folder or the database cannot be used.\n",
    run,
};
