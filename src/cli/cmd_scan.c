/*
 * cmd_scan.c -- `lanyfs scan [--db FILE] [--json] [--quiet] [--no-hash] IMAGE`:
 * the tolerant scan of a whole image, summed up as e2fsck sums up a check.
 *
 * The scan (scan.h) walks the trees, the files and the free list and
 * sweeps every block; a damaged filesystem is a successful scan with
 * findings.  The text output gives the geometry, the entries found (files,
 * directories, deleted, orphaned), the blocks by class, the free count
 * against the superblock's, the findings by severity and then each finding
 * with its severity, its code as 0xPPNNNN, its name and its message.
 * --json gives the same as one document (docs/json.md), with the lost trees
 * (scan_lost_trees) and their data maps besides; --quiet prints only
 * the findings of warning severity and above.  With --db the whole result
 * also goes into an SQLite database (docs/scan-db.md), one transaction per
 * scan, with the image's SHA-256, which a second thread computes while the
 * scan runs and its rows are written; the store waits for it last, before
 * its commit (store_file_sha256; --no-hash leaves it out).  The database is
 * opened before the scan starts, so a database that cannot be used fails at
 * once.
 *
 * Progress goes to stderr as a one-line bar (phase, percentage) when stderr
 * is a terminal and neither --quiet nor --json is given.
 *
 * Exit status: 0 when nothing above info was found, LANYFS_EXIT_WARNINGS (8)
 * when the worst finding is a warning, LANYFS_EXIT_CORRUPT (7) for an error
 * or a critical finding.  A scan that cannot run has the status of its
 * error (out_exit_for_err: 1 when the image cannot be opened or memory runs
 * out, 5 for an image too short to hold a superblock), and a database that
 * cannot be opened or written is LANYFS_EXIT_ERROR (1); no finding hides
 * either.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "scan.h"
#include "scan_run.h"
#include "scan_timings.h"
#include "store.h"
#include "termbar.h"

/* ---- hashing beside the scan ------------------------------------------------- */

struct hasher {
    const char *path;         /* the image */
    _Atomic uint64_t done;    /* bytes hashed so far */
    atomic_bool finished;     /* the thread is about to end */
    uint64_t total;           /* the image's size, 0 when unknown (a device) */
    char hex[65];             /* the result */
    enum lanyfs_err rc;       /* how the hash ended */
    struct lanyfs_error err;  /* why it failed */
};

static void on_hashed(void *ctx, uint64_t done)
{
    struct hasher *h = ctx;
    atomic_store(&h->done, done);
}

static gpointer hash_thread(gpointer data)
{
    struct hasher *h = data;
    lanyfs_error_clear(&h->err);
    h->rc = store_file_sha256(h->path, h->hex, on_hashed, h, &h->err);
    atomic_store(&h->finished, true);
    return NULL;
}

/* Wait for the hash, showing how far it is when the store finished first. */
static void hash_wait(struct hasher *h, GThread *th, struct cli_bar *bar)
{
    while (!atomic_load(&h->finished)) {
        cli_bar_show(bar, "hash", atomic_load(&h->done), h->total);
        g_usleep(20000);
    }
    g_thread_join(th);
}

/* The hash as the store asks for it, once its rows are written. */
struct hash_late {
    struct hasher *h;      /* the hash */
    GThread *th;           /* its thread, NULL once joined */
    struct cli_bar *bar;   /* where to show the wait */
};

static const char *hash_late_wait(void *ctx, struct lanyfs_error *err)
{
    struct hash_late *l = ctx;
    if (l->th != NULL) {
        hash_wait(l->h, l->th, l->bar);
        l->th = NULL;
    }
    if (l->h->rc != LANYFS_OK) {
        *err = l->h->err;
        return NULL;
    }
    return l->h->hex;
}

/* ---- text ----------------------------------------------------------------------- */

/*
 * The finding's message, escaped for the terminal (g_free): in the user's
 * language for the text report, in English for JSON, which reads the same
 * in every locale.
 */
static char *finding_text(const struct scan_finding *f, bool translated)
{
    char *msg = translated ? scan_finding_message_translated(f) : scan_finding_message(f);
    if (msg == NULL)
        return NULL;
    char *esc = out_escape(msg, strlen(msg), 0);
    free(msg);
    return esc;
}

static const char *code_name(uint32_t code)
{
    const struct scan_problem_info *p = scan_problem_lookup(code);
    return p != NULL ? p->name : "UNKNOWN";
}

static enum scan_severity code_severity(uint32_t code)
{
    const struct scan_problem_info *p = scan_problem_lookup(code);
    return p != NULL ? p->severity : SCAN_SEV_ERROR;
}

/* One finding line: "error    0x040001 BLOCK_SHARED: message". */
static bool print_finding(const struct scan_finding *f)
{
    char *msg = finding_text(f, true);
    if (msg == NULL)
        return false;
    printf("%-8s 0x%06" PRIx32 " %s: %s\n", scan_severity_name(code_severity(f->code)), f->code,
           code_name(f->code), msg);
    g_free(msg);
    return true;
}

#define W 16 /* column of the values */

static bool print_text(const char *image, const struct scan_result *res,
                       const struct scan_summary *sum, const char *db, int64_t scan_id,
                       const char *sha256)
{
    const struct lanyfs_geom *g = scan_geom(res);
    const struct lanyfs_super *sb = scan_super(res);
    char *img = out_escape(image, strlen(image), 0);
    out_field(W, _("Image"),
              ngettext("%s (%" PRIu64 " byte)", "%s (%" PRIu64 " bytes)",
                       (unsigned long)scan_image_bytes(res)),
              img, scan_image_bytes(res));
    g_free(img);
    if (sha256 != NULL)
        out_field(W, "SHA-256", "%s", sha256);
    if (g != NULL)
        out_field(W, _("Geometry"),
                  _("%" PRIu64 " blocks of %" PRIu32 " bytes, %u-byte addresses (%s)"), g->blocks,
                  g->blocksize, g->addrlen,
                  scan_geom_addrlen_given(res) ? _("given with --geometry")
                  : scan_geom_given(res) ? _("block size given with --geometry, address length "
                                             "inferred")
                  : scan_geom_inferred(res) ? _("inferred from the blocks")
                                            : _("from the superblock"));
    else
        out_field(W, _("Geometry"), "%s", _("unknown"));
    if (sb != NULL) {
        size_t n = strnlen((const char *)sb->label, sizeof(sb->label));
        char *label = out_escape(sb->label, n, 0);
        out_field(W, _("Label"), "%s", label);
        g_free(label);
    }
    out_field(W, _("Directories"), _("%" PRIu64 " (the root included)"), sum->dirs);
    out_field(W, _("Files"),
              ngettext("%" PRIu64 " (%" PRIu64 " byte)", "%" PRIu64 " (%" PRIu64 " bytes)",
                       (unsigned long)sum->bytes),
              sum->files, sum->bytes);
    out_field(W, _("Deleted"),
              ngettext("%" PRIu64 " entry", "%" PRIu64 " entries", (unsigned long)sum->deleted),
              sum->deleted);
    out_field(W, _("Orphaned"),
              ngettext("%" PRIu64 " entry", "%" PRIu64 " entries", (unsigned long)sum->orphans),
              sum->orphans);
    out_field(W, _("Blocks"), _("%" PRIu64 " in the map"), scan_block_count(res));
    for (int c = 0; c < SCAN_BLK_CLASSES; c++)
        if (sum->by_class[c] != 0)
            printf("  %-16s %12" PRIu64 "\n", scan_class_name((enum scan_class)c),
                   sum->by_class[c]);
    if (sb != NULL && sum->free_listed == sb->freeblocks)
        out_field(W, _("Free"), _("%" PRIu64 " in the free list, the superblock says %" PRIu64),
                  sum->free_listed, sb->freeblocks);
    else if (sb != NULL)
        out_field(W, _("Free"),
                  _("%" PRIu64 " in the free list, the superblock says %" PRIu64 " (they differ)"),
                  sum->free_listed, sb->freeblocks);
    else
        out_field(W, _("Free"), _("%" PRIu64 " in the free list"), sum->free_listed);
    uint64_t nerr = sum->findings_by_severity[SCAN_SEV_ERROR];
    uint64_t nwarn = sum->findings_by_severity[SCAN_SEV_WARNING];
    /* TRANSLATORS: the counts of findings by severity: critical, errors, warnings, info. */
    out_field(W, _("Findings"), _("%" PRIu64 " critical, %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64
                                  " info"),
              sum->findings_by_severity[SCAN_SEV_CRITICAL], nerr,
              ngettext("error", "errors", (unsigned long)nerr), nwarn,
              ngettext("warning", "warnings", (unsigned long)nwarn),
              sum->findings_by_severity[SCAN_SEV_INFO]);
    if (db != NULL) {
        char *d = out_escape(db, strlen(db), 0);
        out_field(W, _("Database"), _("%s, scan %" PRId64), d, scan_id);
        g_free(d);
    }
    const struct scan_finding *f;
    size_t nf = scan_findings(res, &f);
    if (nf != 0)
        putchar('\n');
    for (size_t i = 0; i < nf; i++)
        if (!print_finding(&f[i]))
            return false;
    return true;
}

/* --quiet: the findings of warning severity and above, nothing else. */
static bool print_quiet(const struct scan_result *res)
{
    const struct scan_finding *f;
    size_t nf = scan_findings(res, &f);
    for (size_t i = 0; i < nf; i++)
        if (code_severity(f[i].code) >= SCAN_SEV_WARNING && !print_finding(&f[i]))
            return false;
    return true;
}

/* ---- JSON -------------------------------------------------------------------------- */

static void json_null(JsonBuilder *b, const char *key)
{
    json_builder_set_member_name(b, key);
    json_builder_add_null_value(b);
}

/* An escaped string from the disk, or null. */
static void json_disk_str(JsonBuilder *b, const char *key, const char *s)
{
    if (s == NULL) {
        json_null(b, key);
        return;
    }
    char *esc = out_escape(s, strlen(s), 0);
    out_json_str(b, key, esc);
    g_free(esc);
}

/* One extent of a data map: [file_block, block, count]. */
static int json_extent(void *ctx, uint64_t file_block, uint64_t block, uint64_t count)
{
    JsonBuilder *b = ctx;
    json_builder_begin_array(b);
    out_json_u64_value(b, file_block);
    out_json_u64_value(b, block);
    out_json_u64_value(b, count);
    json_builder_end_array(b);
    return 0;
}

/* The lost trees, their data maps as extents the way the database stores them. */
static void json_lost_trees(JsonBuilder *b, const struct scan_result *res)
{
    const struct scan_lost_tree *t;
    size_t n = scan_lost_trees(res, &t);
    json_builder_set_member_name(b, "lost_trees");
    json_builder_begin_array(b);
    for (size_t i = 0; i < n; i++) {
        json_builder_begin_object(b);
        out_json_u64(b, "top", t[i].top);
        if (t[i].entry != 0)
            out_json_int(b, "entry", t[i].entry);
        else
            json_null(b, "entry");
        out_json_u64(b, "size", t[i].size);
        out_json_u64(b, "blocks_mapped", t[i].mapped);
        out_json_u64(b, "extenders", t[i].nexts);
        json_builder_set_member_name(b, "blocks");
        json_builder_begin_array(b);
        store_extents_of(t[i].data, t[i].ndata, json_extent, b);
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

static bool print_json(JsonBuilder *b, const struct scan_result *res,
                       const struct scan_summary *sum, const char *db, int64_t scan_id,
                       const char *sha256)
{
    const struct lanyfs_geom *g = scan_geom(res);
    const struct lanyfs_super *sb = scan_super(res);
    cli_db_json(b, db, scan_id);
    out_json_str(b, "image_sha256", sha256);

    json_builder_set_member_name(b, "geometry");
    json_builder_begin_object(b);
    out_json_bool(b, "known", g != NULL);
    out_json_bool(b, "inferred", scan_geom_inferred(res));
    out_json_bool(b, "given", scan_geom_given(res));
    out_json_bool(b, "addrlen_given", scan_geom_addrlen_given(res));
    if (g != NULL) {
        out_json_u64(b, "blocksize", g->blocksize);
        out_json_u64(b, "addrlen", g->addrlen);
        out_json_u64(b, "blocks", g->blocks);
    } else {
        json_null(b, "blocksize");
        json_null(b, "addrlen");
        json_null(b, "blocks");
    }
    out_json_u64(b, "map_blocks", scan_block_count(res));
    out_json_u64(b, "image_bytes", scan_image_bytes(res));
    json_builder_end_object(b);

    if (sb != NULL) {
        json_builder_set_member_name(b, "superblock");
        json_builder_begin_object(b);
        out_json_u64(b, "magic", sb->magic);
        out_json_int(b, "version_major", sb->major);
        out_json_int(b, "version_minor", sb->minor);
        out_json_int(b, "blocksize_exponent", sb->blockbits);
        out_json_int(b, "addrlen", sb->addrlen);
        out_json_u64(b, "rootdir", sb->rootdir);
        out_json_u64(b, "blocks", sb->blocks);
        out_json_u64(b, "freehead", sb->freehead);
        out_json_u64(b, "freetail", sb->freetail);
        out_json_u64(b, "freeblocks", sb->freeblocks);
        out_json_bytes(b, "label", sb->label,
                       strnlen((const char *)sb->label, sizeof(sb->label)), 0);
        json_builder_end_object(b);
    } else {
        json_null(b, "superblock");
    }

    json_builder_set_member_name(b, "summary");
    json_builder_begin_object(b);
    out_json_u64(b, "directories", sum->dirs);
    out_json_u64(b, "files", sum->files);
    out_json_u64(b, "bytes", sum->bytes);
    out_json_u64(b, "deleted", sum->deleted);
    out_json_u64(b, "orphaned", sum->orphans);
    out_json_u64(b, "free_listed", sum->free_listed);
    json_builder_set_member_name(b, "blocks_by_class");
    json_builder_begin_object(b);
    for (int c = 0; c < SCAN_BLK_CLASSES; c++)
        out_json_u64(b, scan_class_name((enum scan_class)c), sum->by_class[c]);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "findings_by_severity");
    json_builder_begin_object(b);
    for (int s = SCAN_SEV_INFO; s <= SCAN_SEV_CRITICAL; s++)
        out_json_u64(b, scan_severity_name((enum scan_severity)s), sum->findings_by_severity[s]);
    json_builder_end_object(b);
    out_json_str(b, "worst", scan_severity_name(sum->worst));
    json_builder_end_object(b);

    const struct scan_finding *f;
    size_t nf = scan_findings(res, &f);
    json_builder_set_member_name(b, "findings");
    json_builder_begin_array(b);
    for (size_t i = 0; i < nf; i++) {
        char hex[16];
        snprintf(hex, sizeof(hex), "0x%06" PRIx32, f[i].code);
        char *msg = finding_text(&f[i], false);
        if (msg == NULL)
            return false;
        json_builder_begin_object(b);
        out_json_int(b, "code", f[i].code);
        out_json_str(b, "code_hex", hex);
        out_json_str(b, "name", code_name(f[i].code));
        out_json_str(b, "severity", scan_severity_name(code_severity(f[i].code)));
        if (f[i].entry != 0)
            out_json_int(b, "entry", f[i].entry);
        else
            json_null(b, "entry");
        json_disk_str(b, "path", f[i].path);
        out_json_u64(b, "block", f[i].block);
        out_json_u64(b, "block2", f[i].block2);
        out_json_u64(b, "value", f[i].value);
        out_json_u64(b, "value2", f[i].value2);
        out_json_u64(b, "count", f[i].count);
        out_json_u64(b, "count2", f[i].count2);
        json_disk_str(b, "text", f[i].text);
        out_json_str(b, "message", msg);
        json_builder_end_object(b);
        g_free(msg);
    }
    json_builder_end_array(b);
    json_lost_trees(b, res);
    return true;
}

/* ---- the command ----------------------------------------------------------------- */

static int exit_for(enum scan_severity worst)
{
    switch (worst) {
    case SCAN_SEV_INFO:
        return LANYFS_EXIT_OK;
    case SCAN_SEV_WARNING:
        return LANYFS_EXIT_WARNINGS;
    case SCAN_SEV_ERROR:
    case SCAN_SEV_CRITICAL:
        return LANYFS_EXIT_CORRUPT;
    }
    return LANYFS_EXIT_CORRUPT;
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},
        {"no-hash", no_argument, NULL, 'n'},
        {"timings", no_argument, NULL, 't'},
        {"geometry", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dbpath = NULL;
    bool json = false, quiet = false, hash = true, timed = false;
    unsigned gbits = 0, gaddr = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qth", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            dbpath = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'n':
            hash = false;
            break;
        case 't':
            timed = true;
            break;
        case 'g':
            if ((c = cli_geometry_option(self, optarg, true, &gbits, &gaddr)) != 0)
                return c;
            break;
        case 'h':
            return cli_help(self);
        default:
            return cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(self, _("expects one IMAGE"));
    if (json && quiet)
        return cli_usage_error(self, _("--json and --quiet exclude each other"));
    const char *image = argv[optind];

    struct out_report rep;
    out_report_init(&rep);
    JsonBuilder *b = json ? out_json_begin(self->name, image) : NULL;
    struct cli_bar bar;
    cli_bar_init(&bar, !quiet && !json && isatty(STDERR_FILENO), 0);
    struct store_db *db = NULL;
    struct scan_result *res = NULL;
    struct hasher hs = {.path = image};
    GThread *hash_th = NULL;
    int64_t scan_id = 0;
    const char *sha256 = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);

    /* The database first: one that cannot be used fails before the scan. */
    if (!cli_db_open(&rep, dbpath, &db))
        goto out;
    if (db != NULL && hash) {
        struct stat st;
        if (stat(image, &st) == 0 && S_ISREG(st.st_mode))
            hs.total = (uint64_t)st.st_size;
        hash_th = g_thread_new("sha256", hash_thread, &hs);
    }

    struct cli_scan_clock clk;
    cli_scan_clock_start(&clk);
    struct cli_timings tm;
    cli_timings_init(&tm, timed, &bar);
    struct scan_opts so = {.progress = cli_timings_on_scan, .progress_ctx = &tm,
                           .blocksize = gbits ? (uint32_t)1 << gbits : 0, .addrlen = gaddr};
    enum lanyfs_err rc = scan_image(image, &so, &res, &err);
    cli_timings_end(&tm);
    cli_scan_clock_stop(&clk);
    if (rc != LANYFS_OK) {
        cli_bar_clear(&bar);
        out_report_error(&rep, NULL, &err); /* its code's status: 1, or 5 when too short */
        goto out;
    }

    /* The hash goes on while the rows are written; the store waits for it last. */
    struct hash_late late = {.h = &hs, .th = hash_th, .bar = &bar};
    if (db != NULL)
        cli_timings_begin(&tm, CLI_TIMING_STORE);
    bool stored = db == NULL ||
                  cli_db_add_scan(&rep, db, res, image, &clk, hash_th ? hash_late_wait : NULL,
                                  &late, &bar, &scan_id);
    cli_timings_end(&tm);
    hash_th = late.th; /* NULL once joined; else joined below */
    if (!stored)
        goto out;
    if (db != NULL && hash)
        sha256 = hs.hex;
    cli_bar_clear(&bar);
    cli_timings_print(&tm, stderr);

    struct scan_summary sum;
    scan_summarize(res, &sum);
    bool ok;
    if (json)
        ok = print_json(b, res, &sum, dbpath, scan_id, sha256);
    else if (quiet)
        ok = print_quiet(res);
    else
        ok = print_text(image, res, &sum, dbpath, scan_id, sha256);
    if (!ok) {
        out_report_status(&rep, LANYFS_EXIT_ERROR);
        out_report_add(&rep, NULL, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    out_report_status(&rep, exit_for(sum.worst));
    if (!json)
        out_flush_stdout(&rep);

out:
    cli_bar_clear(&bar);
    if (hash_th != NULL)
        g_thread_join(hash_th);
    scan_result_free(res);
    cli_db_close(&rep, db);
    int status = json ? out_json_end(b, &rep) : rep.exit_code;
    out_report_free(&rep);
    return status;
}

const struct cli_command cmd_scan = {
    "scan",
    N_("[--db FILE] [--json] [--quiet] [--no-hash] [--timings] [--geometry BS[:AL]] IMAGE"),
    N_("Scan a whole image: entries, blocks, free list, findings."),
    N_("Options:\n"
       "  --db FILE   also store the whole result in the SQLite database FILE\n"
       "              (created when missing; docs/scan-db.md), with the image's SHA-256\n"
       "  --no-hash   with --db: do not compute the image's SHA-256\n"
       "  --json      write one JSON document (docs/json.md) instead of text\n"
       "  -q, --quiet print only the findings of warning severity and above\n"
       "  -t, --timings  print on stderr the time each pass took, wall-clock and CPU\n"
       "  --geometry BS[:AL]  read the image with block size BS and address length AL\n"
       "              (inferred from the files' data maps when left out) whatever\n"
       "              block 0 says, the root and the free list searched for:\n"
       "              an earlier format's blocks on a stick formatted again\n"
       "  -h, --help  show this help\n\n"
       "The scan reads every block and never gives up on a damaged filesystem:\n"
       "what it finds wrong becomes findings, each with a severity (info, warning,\n"
       "error, critical), a stable code 0xPPNNNN and a name. Progress is shown on\n"
       "stderr when it is a terminal.\n\n"
       "Exit status of scan: 0 when no finding is above info, 8 when the worst is a\n"
       "warning, 7 for an error or a critical finding; 1 when the image cannot be\n"
       "read or the database cannot be used, 5 for an image too short to hold a\n"
       "superblock.\n"),
    run,
};
