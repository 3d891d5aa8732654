/*
 * test-models-real.c -- LanyFS Rescue's models over the real scanner's results.
 *
 * Display-less.  RESCUE_TEST_IMAGE names an image made by make-image (text
 * files, a PNG, names that need escaping, deleted files, an orphaned
 * directory's files); RESCUE_TEST_BULK one with a few thousand more files.
 * The tests run the scan as the window does (in a GTask, progress on the
 * main loop), read files back through RescueImage, salvage everything into
 * a temporary folder and compare, and check that a scan read back from a
 * scan database is the scan it was written from.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lanyfs.h"
#include "rescue-data-scan.h"
#include "rescue-data-store.h"
#include "rescue-data.h"
#include "rescue-entry.h"
#include "rescue-files-model.h"
#include "rescue-format.h"
#include "rescue-image.h"
#include "rescue-magic.h"
#include "rescue-salvage.h"
#include "rescue-scan-task.h"
#include "rescue-wear-export.h"
#include "store.h"

static const char letter[] =
    "Dear finder,\n\nthis stick was pulled out in the middle of a write. What you read "
    "here survived.\n";

typedef struct {
    RescueData *data;
    GError *error;
    gboolean done;
    guint reports;
    double last;
    gboolean went_back;
} ScanRun;

static void on_progress(double fraction, const char *phase, gpointer user_data)
{
    ScanRun *run = user_data;

    g_assert_nonnull(phase);
    if (fraction < run->last)
        run->went_back = TRUE;
    run->last = fraction;
    run->reports++;
}

static void on_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
    ScanRun *run = user_data;

    (void)source;
    run->data = rescue_scan_finish(result, &run->error);
    run->done = TRUE;
}

static RescueData *scan(const char *path, GCancellable *cancellable, ScanRun *run)
{
    rescue_scan_async(path, cancellable, on_progress, run, on_done, run);
    while (!run->done)
        g_main_context_iteration(NULL, TRUE);
    /* Nothing may arrive after the end. */
    {
        guint reports = run->reports;
        while (g_main_context_iteration(NULL, FALSE))
            ;
        g_assert_cmpuint(run->reports, ==, reports);
    }
    return run->data;
}

static const char *image_path(void)
{
    const char *p = g_getenv("RESCUE_TEST_IMAGE");

    g_assert_nonnull(p);
    return p;
}

static guint32 find_path(RescueData *d, const char *path, guint8 state)
{
    for (guint32 id = 1; id <= rescue_data_get_n_entries(d); id++) {
        const RescueEntryInfo *e = rescue_data_get_entry(d, id);
        if (e->state == state && strcmp(e->path, path) == 0)
            return id;
    }
    return 0;
}

static guint32 find_name(RescueData *d, const char *name, guint8 state)
{
    for (guint32 id = 1; id <= rescue_data_get_n_entries(d); id++) {
        const RescueEntryInfo *e = rescue_data_get_entry(d, id);
        if (e->state == state && strcmp(e->name, name) == 0)
            return id;
    }
    return 0;
}

static void test_scan_task(void)
{
    ScanRun run = {0};
    g_autoptr(RescueData) d = scan(image_path(), NULL, &run);
    guint32 letter_id;
    gboolean orphan_finding = FALSE;
    gboolean deleted_finding = FALSE;

    g_assert_no_error(run.error);
    g_assert_nonnull(d);
    g_assert_cmpuint(run.reports, >=, 1);
    g_assert_false(run.went_back);
    g_assert_cmpint(rescue_data_get_kind(d), ==, RESCUE_SOURCE_IMAGE);
    g_assert_cmpstr(rescue_data_get_geometry(d)->label, ==, "RESCUE TEST");

    letter_id = find_path(d, "/docs/letter.txt", SCAN_ENTRY_LIVE);
    g_assert_cmpuint(letter_id, !=, 0);
    g_assert_cmpuint(rescue_data_get_entry(d, letter_id)->size, ==, sizeof(letter) - 1);
    g_assert_cmpuint(find_path(d, "/names/back\\\\slash", SCAN_ENTRY_LIVE), !=, 0);
    g_assert_cmpuint(find_path(d, "/names/bad\\xffbyte", SCAN_ENTRY_LIVE), !=, 0);
    g_assert_cmpuint(find_name(d, "gone-2.txt", SCAN_ENTRY_DELETED), !=, 0);
    g_assert_cmpuint(find_name(d, "gone-1.txt", SCAN_ENTRY_LIVE), !=, 0);
    g_assert_cmpuint(find_name(d, "one.txt", SCAN_ENTRY_ORPHAN), !=, 0);
    for (guint i = 0; i < rescue_data_get_n_findings(d); i++) {
        guint32 code = rescue_data_get_finding(d, i)->code;
        orphan_finding |= code == SCAN_PR_ORPHAN_ENTRY;
        deleted_finding |= code == SCAN_PR_DELETED_ENTRY;
    }
    g_assert_true(orphan_finding);
    g_assert_true(deleted_finding);
    g_assert_cmpuint(rescue_data_get_n_blocks(d), ==, rescue_data_get_geometry(d)->fs_blocks);
    g_assert_cmpuint(rescue_data_get_block(d, 0)->cls, ==, SCAN_BLK_SUPER);
}

static void test_scan_errors(void)
{
    g_autoptr(GCancellable) cancellable = g_cancellable_new();
    ScanRun run = {0};
    ScanRun missing = {0};
    RescueData *d;

    g_cancellable_cancel(cancellable);
    d = scan(image_path(), cancellable, &run);
    g_assert_null(d);
    g_assert_error(run.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error(&run.error);

    d = scan("/nonexistent/stick.img", NULL, &missing);
    g_assert_null(d);
    g_assert_nonnull(missing.error);
    g_assert_nonnull(strstr(missing.error->message, "stick.img"));
    g_clear_error(&missing.error);
}

static void test_image_reads(void)
{
    ScanRun run = {0};
    g_autoptr(RescueData) d = scan(image_path(), NULL, &run);
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueImage) img = rescue_image_open(d, &error);
    guint8 buf[8192];
    guint64 lost = 0;
    gssize got;
    guint32 id;
    g_autofree char *desc = NULL;
    g_autofree char *mime = NULL;
    static const char gone0[] = "deleted file 2, still on the stick\n";

    g_assert_no_error(error);
    g_assert_cmpuint(rescue_image_get_block_size(img), ==, 512);
    g_assert_true(rescue_image_read_block(img, 0, buf, &error));
    g_assert_cmpint(buf[0], ==, LANYFS_TYPE_SUPER);

    id = find_path(d, "/docs/letter.txt", SCAN_ENTRY_LIVE);
    got = rescue_image_read_entry(img, id, 0, buf, sizeof(buf), &lost, &error);
    g_assert_no_error(error);
    g_assert_cmpint(got, ==, (gssize)sizeof(letter) - 1);
    g_assert_cmpmem(buf, got, letter, sizeof(letter) - 1);
    g_assert_cmpuint(lost, ==, 0);
    /* From an offset, clipped at the size. */
    got = rescue_image_read_entry(img, id, 5, buf, 3, NULL, &error);
    g_assert_cmpint(got, ==, 3);
    g_assert_cmpmem(buf, 3, "fin", 3);
    g_assert_cmpint(rescue_image_read_entry(img, id, 10000, buf, 10, NULL, &error), ==, 0);

    /* A deleted file whose blocks are intact, through the scan's data map. */
    id = 0;
    for (guint32 i = 1; i <= rescue_data_get_n_entries(d) && id == 0; i++) {
        const RescueEntryInfo *e = rescue_data_get_entry(d, i);
        if (e->state == SCAN_ENTRY_DELETED && e->size > 0 && e->blocks_needed > 0 &&
            e->blocks_intact == e->blocks_needed)
            id = i;
    }
    g_assert_cmpuint(id, !=, 0);
    lost = 0;
    got = rescue_image_read_entry(img, id, 0, buf, sizeof(buf), &lost, &error);
    g_assert_cmpint(got, ==, (gssize)sizeof(gone0) - 1);
    g_assert_cmpuint(lost, ==, 0);
    {
        /* What the block holds now, whatever the writer left in it after the delete. */
        const guint64 *map = NULL;
        guint64 nmap = 0;
        guint8 raw[512];
        g_assert_true(rescue_data_get_entry_data(d, id, &map, &nmap));
        g_assert_cmpuint(nmap, >=, 1);
        g_assert_true(rescue_image_read_block(img, map[0], raw, &error));
        g_assert_cmpmem(buf, got, raw, (gsize)got);
    }

    id = find_path(d, "/docs/picture.png", SCAN_ENTRY_LIVE);
    got = rescue_image_read_entry(img, id, 0, buf, sizeof(buf), NULL, &error);
    g_assert_cmpint(got, >, 8);
    rescue_magic_describe(buf, (gsize)got, &desc, &mime);
    g_assert_cmpstr(mime, ==, "image/png");
    g_assert_nonnull(strstr(desc, "PNG image data, 96 x 64"));
}

static char *read_text(const char *path)
{
    char *text = NULL;

    if (!g_file_get_contents(path, &text, NULL, NULL))
        return NULL;
    return text;
}

static gboolean find_file(const char *dir, const char *name, char **found)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *n;

    if (d == NULL)
        return FALSE;
    while ((n = g_dir_read_name(d)) != NULL) {
        g_autofree char *p = g_build_filename(dir, n, NULL);
        if (strcmp(n, name) == 0) {
            *found = g_steal_pointer(&p);
            return TRUE;
        }
        if (g_file_test(p, G_FILE_TEST_IS_DIR) && find_file(p, name, found))
            return TRUE;
    }
    return FALSE;
}

static void remove_tree(const char *path)
{
    g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
    const char *n;

    if (d != NULL) {
        while ((n = g_dir_read_name(d)) != NULL) {
            g_autofree char *p = g_build_filename(path, n, NULL);
            if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
                remove_tree(p);
            else
                g_unlink(p);
        }
    }
    g_rmdir(path);
}

static void test_salvage(void)
{
    ScanRun run = {0};
    g_autoptr(RescueData) d = scan(image_path(), NULL, &run);
    g_autofree char *dest = g_dir_make_tmp("rescue-salvage-XXXXXX", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueSalvageReport) report = NULL;
    g_autoptr(RescueSalvageReport) again = NULL;
    g_autoptr(RescueSalvageReport) one = NULL;
    g_autoptr(RescueSalvageReport) deleted = NULL;
    g_autoptr(GCancellable) cancelled = g_cancellable_new();
    g_autofree char *text = NULL;
    g_autofree char *path = NULL;
    g_autofree char *orphan = NULL;
    g_autofree char *manifest = NULL;
    g_autofree char *base = g_path_get_basename(image_path());
    g_autofree char *expect_folder = NULL;
    guint32 id;
    struct stat st;

    report = rescue_salvage_run(d, NULL, 0, dest, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(report);
    expect_folder = g_strdup_printf("%s/%s-salvage", dest, base);
    g_assert_cmpstr(report->folder, ==, expect_folder);
    g_assert_cmpuint(report->not_written, ==, 0);
    g_assert_cmpuint(rescue_salvage_report_files(report), >, 10);

    path = g_build_filename(report->folder, "files", "docs", "letter.txt", NULL);
    text = read_text(path);
    g_assert_cmpstr(text, ==, letter);
    g_assert_cmpint(g_stat(path, &st), ==, 0);
    g_assert_cmpint(st.st_mtime, ==, 1796259735);
    g_free(path);
    g_free(text);
    /* Names escaped as the command-line tools print them. */
    path = g_build_filename(report->folder, "files", "names", "back\\\\slash", NULL);
    g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
    g_free(path);
    path = g_build_filename(report->folder, "files", "names", "bad\\xffbyte", NULL);
    g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
    g_free(path);
    /* Deleted files under deleted/, orphans under orphans/, as `lanyfs salvage` puts them. */
    path = NULL;
    {
        g_autofree char *folder = g_build_filename(report->folder, "deleted", NULL);
        g_assert_true(find_file(folder, "gone-2.txt", &path));
    }
    g_free(path);
    path = NULL;
    {
        g_autofree char *folder = g_build_filename(report->folder, "orphans", NULL);
        g_assert_true(find_file(folder, "one.txt", &orphan));
        text = read_text(orphan);
        g_assert_cmpstr(text, ==, "one\n");
        g_free(text);
        text = NULL;
    }
    /* The engine's manifests. */
    manifest = g_build_filename(report->folder, "manifest.csv", NULL);
    text = read_text(manifest);
    g_assert_nonnull(text);
    g_assert_true(g_str_has_prefix(text, "kind,source_path,output_path,status,size,"));
    g_assert_nonnull(strstr(text, "live,/docs/letter.txt,files/docs/letter.txt,exact,"));
    g_free(manifest);
    manifest = g_build_filename(report->folder, "manifest.json", NULL);
    g_assert_true(g_file_test(manifest, G_FILE_TEST_IS_REGULAR));

    /* A second salvage never touches the first: a new folder. */
    again = rescue_salvage_run(d, NULL, 0, dest, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_true(g_str_has_suffix(again->folder, "-salvage-2"));

    /* One file alone. */
    id = find_path(d, "/docs/long.txt", SCAN_ENTRY_LIVE);
    one = rescue_salvage_run(d, &id, 1, dest, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rescue_salvage_report_files(one), ==, 1);
    g_assert_cmpuint(one->exact, ==, 1);
    g_assert_cmpuint(one->bytes, ==, rescue_data_get_entry(d, id)->size);

    /* A deleted file selected: that file alone, into deleted/. */
    id = find_name(d, "gone-2.txt", SCAN_ENTRY_DELETED);
    g_assert_cmpuint(id, !=, 0);
    deleted = rescue_salvage_run(d, &id, 1, dest, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rescue_salvage_report_files(deleted), ==, 1);
    g_free(path);
    path = NULL;
    {
        g_autofree char *folder = g_build_filename(deleted->folder, "deleted", NULL);
        g_autofree char *files = g_build_filename(deleted->folder, "files", NULL);
        g_autofree char *other = NULL;
        g_assert_true(find_file(folder, "gone-2.txt", &path));
        g_assert_false(find_file(folder, "gone-4.txt", &other));
        g_assert_false(g_file_test(files, G_FILE_TEST_EXISTS));
    }

    /* Cancelled: an error, not a report. */
    g_cancellable_cancel(cancelled);
    g_assert_null(rescue_salvage_run(d, NULL, 0, dest, NULL, cancelled, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error(&error);

    /* A destination that is not there. */
    g_assert_null(rescue_salvage_run(d, NULL, 0, "/nonexistent/dest", NULL, NULL, &error));
    g_assert_nonnull(error);
    remove_tree(dest);
}

/* The scan read back from a database is the scan that was written. */
/*
 * RESCUE_TEST_EARLIER: /old.txt on a 4 KiB format of 3-byte addresses,
 * whose block 0 a 1 KiB format wrote over.  Read as block 0 says, /old.txt
 * is no live file, and the scan names the earlier format's geometry
 * (EARLIER_FORMAT, what the window's "Read the Earlier Format" uses); read
 * with that geometry (lanyfs-rescue --geometry 4096:3), it is, and salvage
 * reads it the same way: the copy is exact.
 */
/* The texts make-image --unplugged writes. */
static const char report_text[] = "the report, written just before the unplug\n";
static const char draft_text[] = "the second draft, which never reached its entry\n";

/* Reads entry id's whole content through RescueImage (g_free). */
static char *read_entry_text(RescueData *d, guint32 id)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueImage) img = rescue_image_open(d, &error);
    char buf[4096];
    gssize got;

    g_assert_no_error(error);
    got = rescue_image_read_entry(img, id, 0, buf, sizeof(buf) - 1, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(got, >=, 0);
    return g_strndup(buf, (gsize)got);
}

/*
 * Two writes an unplug cut short: report.txt's entry reads its content
 * from the tree that holds it; draft.txt's second tree, whose file nothing
 * tells, is an entry of its own ("#TOP", lost data) that reads and
 * salvages alone, to lost/.
 */
static void test_lost_data(void)
{
    const char *p = g_getenv("RESCUE_TEST_UNPLUGGED");
    ScanRun run = {0};
    g_autoptr(RescueData) d = NULL;
    g_autofree char *dest = g_dir_make_tmp("rescue-lost-XXXXXX", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueSalvageReport) report = NULL;
    g_autofree char *text = NULL;
    g_autofree char *copy = NULL;
    g_autofree char *name = NULL;
    g_autofree char *lostdir = NULL;
    const RescueEntryInfo *e;
    guint32 id, lost = 0, nlost = 0;

    g_assert_nonnull(p);
    d = scan(p, NULL, &run);
    g_assert_no_error(run.error);
    g_assert_nonnull(d);

    id = find_path(d, "/unplugged/report.txt", SCAN_ENTRY_LIVE);
    g_assert_cmpuint(id, !=, 0);
    e = rescue_data_get_entry(d, id);
    g_assert_cmpuint(e->size, ==, 0);
    g_assert_cmpuint(e->lost_top, !=, 0);
    g_assert_false(e->lost_only);
    g_assert_cmpuint(rescue_entry_content_size(e), ==, strlen(report_text));
    text = read_entry_text(d, id);
    g_assert_cmpstr(text, ==, report_text);
    g_clear_pointer(&text, g_free);

    for (guint32 i = 1; i <= rescue_data_get_n_entries(d); i++)
        if (rescue_data_get_entry(d, i)->lost_only) {
            lost = i;
            nlost++;
        }
    g_assert_cmpuint(nlost, ==, 1);
    e = rescue_data_get_entry(d, lost);
    name = g_strdup_printf("#%" G_GUINT64_FORMAT, e->lost_top);
    g_assert_cmpstr(e->name, ==, name);
    g_assert_cmpuint(e->block, ==, e->lost_top);
    g_assert_cmpuint(e->state, ==, SCAN_ENTRY_ORPHAN);
    g_assert_cmpuint(e->parent, ==, 0);
    g_assert_cmpuint(e->size, ==, strlen(draft_text));
    g_assert_cmpstr(rescue_format_entry_state(e), ==, "Lost data");
    text = read_entry_text(d, lost);
    g_assert_cmpstr(text, ==, draft_text);
    g_clear_pointer(&text, g_free);
    /* At the top level, where orphans are. */
    {
        guint32 n = 0;
        const guint32 *top = rescue_data_get_top_level(d, &n);
        gboolean seen = FALSE;
        for (guint32 i = 0; i < n; i++)
            seen |= top[i] == lost;
        g_assert_true(seen);
    }

    /* Selected alone: only it, to lost/, named after its top extender. */
    report = rescue_salvage_run(d, &lost, 1, dest, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(report);
    g_assert_cmpuint(rescue_salvage_report_files(report), ==, 1);
    g_assert_cmpuint(report->partial, ==, 1);
    lostdir = g_build_filename(report->folder, "lost", NULL);
    g_clear_pointer(&name, g_free);
    name = g_strdup_printf("%08" G_GUINT64_FORMAT ".txt", e->lost_top);
    g_assert_true(find_file(lostdir, name, &copy));
    text = read_text(copy);
    g_assert_cmpstr(text, ==, draft_text);
    g_clear_pointer(&text, g_free);
    {
        g_autofree char *files = g_build_filename(report->folder, "files", NULL);
        g_assert_false(g_file_test(files, G_FILE_TEST_EXISTS));
    }
    remove_tree(dest);

    /* Read back from a scan database, the trees are where they were. */
    {
        g_autofree char *dir = g_dir_make_tmp("rescue-lostdb-XXXXXX", NULL);
        g_autofree char *db_path = g_build_filename(dir, "scan.db", NULL);
        struct scan_result *r = NULL;
        struct lanyfs_error err = {0};
        struct store_db *db = NULL;
        struct store_scan_meta meta = {.image_path = p};
        g_autoptr(RescueData) stored = NULL;
        guint32 sid;

        g_assert_cmpint(scan_image(p, NULL, &r, &err), ==, LANYFS_OK);
        g_assert_cmpint(store_open(db_path, 0, &db, &err), ==, LANYFS_OK);
        g_assert_cmpint(store_add_scan(db, r, &meta, NULL, &err), ==, LANYFS_OK);
        g_assert_cmpint(store_close(db, &err), ==, LANYFS_OK);
        scan_result_free(r);
        stored = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(rescue_data_get_n_entries(stored), ==, rescue_data_get_n_entries(d));
        sid = find_path(stored, "/unplugged/report.txt", SCAN_ENTRY_LIVE);
        g_assert_cmpuint(rescue_data_get_entry(stored, sid)->lost_top, ==,
                         rescue_data_get_entry(d, id)->lost_top);
        text = read_entry_text(stored, sid);
        g_assert_cmpstr(text, ==, report_text);
        g_clear_pointer(&text, g_free);
        g_assert_true(rescue_data_get_entry(stored, lost)->lost_only);
        g_assert_cmpstr(rescue_data_get_entry(stored, lost)->name, ==,
                        rescue_data_get_entry(d, lost)->name);
        g_assert_cmpuint(rescue_data_get_entry(stored, lost)->blocks_needed, ==,
                         rescue_data_get_entry(d, lost)->blocks_needed);
        text = read_entry_text(stored, lost);
        g_assert_cmpstr(text, ==, draft_text);
        g_clear_pointer(&stored, rescue_data_unref);
        remove_tree(dir);
    }
}

static void test_given_geometry(void)
{
    const char *p = g_getenv("RESCUE_TEST_EARLIER");
    ScanRun run = {0}, grun = {0};
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueSalvageReport) report = NULL;
    g_autoptr(RescueData) d = NULL;
    g_autofree char *dest = g_dir_make_tmp("rescue-geometry-XXXXXX", NULL);
    g_autofree char *copy = NULL;
    g_autofree char *text = NULL;
    guint32 id;
    unsigned bits = 0, addrlen = 0;

    g_assert_nonnull(p);
    g_assert_nonnull(dest);
    {
        g_autoptr(RescueData) plain = scan(p, NULL, &run);
        g_assert_no_error(run.error);
        g_assert_cmpuint(find_path(plain, "/old.txt", SCAN_ENTRY_LIVE), ==, 0);
        g_assert_true(rescue_data_get_earlier_geometry(plain, &bits, &addrlen));
        g_assert_cmpuint(bits, ==, 12);
        g_assert_cmpuint(addrlen, ==, 3);
    }
    {
        /* The block size alone: the scan reads the address length from the
         * same data maps. */
        ScanRun arun = {0};
        rescue_scan_geometry_async(p, 12, 0, NULL, on_progress, &arun, on_done, &arun);
        while (!arun.done)
            g_main_context_iteration(NULL, TRUE);
        g_assert_no_error(arun.error);
        g_assert_nonnull(arun.data);
        g_assert_cmpuint(rescue_data_get_geometry(arun.data)->blocksize, ==, 4096);
        g_assert_cmpuint(rescue_data_get_geometry(arun.data)->addrlen, ==, 3);
        g_clear_pointer(&arun.data, rescue_data_unref);
    }
    rescue_scan_geometry_async(p, bits, addrlen, NULL, on_progress, &grun, on_done, &grun);
    while (!grun.done)
        g_main_context_iteration(NULL, TRUE);
    g_assert_no_error(grun.error);
    d = grun.data;
    g_assert_nonnull(d);
    g_assert_cmpuint(rescue_data_get_geometry(d)->blocksize, ==, 4096);
    /* Read in its own geometry, the earlier format is no earlier one. */
    g_assert_false(rescue_data_get_earlier_geometry(d, &bits, &addrlen));
    id = find_path(d, "/big.txt", SCAN_ENTRY_LIVE);
    g_assert_cmpuint(id, !=, 0);
    g_assert_cmpuint(rescue_data_get_entry(d, id)->blocks_mapped, ==, 3);
    id = find_path(d, "/old.txt", SCAN_ENTRY_LIVE);
    g_assert_cmpuint(id, !=, 0);

    report = rescue_salvage_run(d, &id, 1, dest, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(report);
    g_assert_cmpuint(report->exact, ==, 1);
    copy = g_build_filename(report->folder, "files", "old.txt", NULL);
    text = read_text(copy);
    g_assert_cmpstr(text, ==, "kept in the earlier format\n");
    remove_tree(dest);
}

static void test_store_equivalence(void)
{
    g_autofree char *dir = g_dir_make_tmp("rescue-db-XXXXXX", NULL);
    g_autofree char *db_path = g_build_filename(dir, "scan.db", NULL);
    struct scan_result *r = NULL;
    struct lanyfs_error err = {0};
    struct store_db *db = NULL;
    struct store_scan_meta meta = {.image_path = image_path()};
    g_autoptr(RescueData) direct = NULL;
    g_autoptr(RescueData) stored = NULL;
    g_autoptr(GError) error = NULL;
    ScanRun run = {0};

    g_assert_cmpint(scan_image(image_path(), NULL, &r, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_open(db_path, 0, &db, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_add_scan(db, r, &meta, NULL, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_close(db, &err), ==, LANYFS_OK);
    direct = rescue_data_new_from_scan(r, RESCUE_SOURCE_IMAGE, image_path());
    stored = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);

    g_assert_cmpuint(rescue_data_get_n_entries(stored), ==, rescue_data_get_n_entries(direct));
    for (guint32 id = 1; id <= rescue_data_get_n_entries(direct); id++) {
        const RescueEntryInfo *a = rescue_data_get_entry(direct, id);
        const RescueEntryInfo *b = rescue_data_get_entry(stored, id);
        const guint64 *ma = NULL, *mb = NULL;
        guint64 na = 0, nb = 0;

        g_assert_cmpstr(a->name, ==, b->name);
        g_assert_cmpstr(a->path, ==, b->path);
        g_assert_cmpuint(a->state, ==, b->state);
        g_assert_cmpuint(a->parent, ==, b->parent);
        g_assert_cmpuint(a->size, ==, b->size);
        g_assert_cmpint(a->modified, ==, b->modified);
        g_assert_cmpuint(a->blocks_intact, ==, b->blocks_intact);
        g_assert_true(rescue_data_get_entry_data(direct, id, &ma, &na));
        g_assert_true(rescue_data_get_entry_data(stored, id, &mb, &nb));
        /* The database keeps mapped blocks; trailing holes are not stored. */
        while (na > 0 && ma[na - 1] == 0)
            na--;
        g_assert_cmpuint(na, ==, nb);
        for (guint64 i = 0; i < na; i++)
            g_assert_cmpuint(ma[i], ==, mb[i]);
    }
    g_assert_cmpuint(rescue_data_get_n_findings(stored), ==, rescue_data_get_n_findings(direct));
    for (guint i = 0; i < rescue_data_get_n_findings(direct); i++) {
        g_assert_cmpuint(rescue_data_get_finding(direct, i)->code, ==,
                         rescue_data_get_finding(stored, i)->code);
        g_assert_cmpstr(rescue_data_get_finding(direct, i)->message, ==,
                        rescue_data_get_finding(stored, i)->message);
    }
    g_assert_cmpuint(rescue_data_get_n_blocks(stored), ==, rescue_data_get_n_blocks(direct));
    for (guint64 b = 0; b < rescue_data_get_n_blocks(direct); b++) {
        const struct scan_block *x = rescue_data_get_block(direct, b);
        const struct scan_block *y = rescue_data_get_block(stored, b);
        g_assert_cmpuint(x->cls, ==, y->cls);
        g_assert_cmpuint(x->owner, ==, y->owner);
        if (x->flags & SCAN_BF_METADATA)
            g_assert_cmpuint(x->wrcnt, ==, y->wrcnt);
    }

    /* And the window's task opens the database the same way. */
    g_clear_pointer(&stored, rescue_data_unref);
    stored = scan(db_path, NULL, &run);
    g_assert_no_error(run.error);
    g_assert_cmpint(rescue_data_get_kind(stored), ==, RESCUE_SOURCE_DATABASE);
    g_assert_cmpuint(rescue_data_get_n_entries(stored), ==, rescue_data_get_n_entries(direct));
    g_clear_pointer(&stored, rescue_data_unref);
    g_unlink(db_path);
    {
        g_autofree char *wal = g_strconcat(db_path, "-wal", NULL);
        g_autofree char *shm = g_strconcat(db_path, "-shm", NULL);
        g_unlink(wal);
        g_unlink(shm);
    }
    g_rmdir(dir);
}

static void drain(RescueFilesModel *m)
{
    while (rescue_files_model_get_pending(m) || g_main_context_pending(NULL))
        g_main_context_iteration(NULL, FALSE);
}

/* A few thousand entries: the incremental filters finish and find what they should. */
/* Wear through the wear report: the table and heat image of `lanyfs wear`, also from a database. */
static void test_wear_export(void)
{
    g_autofree char *dir = g_dir_make_tmp("rescue-wear-XXXXXX", NULL);
    g_autofree char *db_path = g_build_filename(dir, "scan.db", NULL);
    g_autofree char *csv_path = g_build_filename(dir, "wear.csv", NULL);
    g_autofree char *db_csv_path = g_build_filename(dir, "wear-db.csv", NULL);
    g_autofree char *png_path = g_build_filename(dir, "wear.png", NULL);
    g_autofree char *bad_path = g_build_filename(dir, "missing", "wear.png", NULL);
    g_autofree char *csv = NULL, *db_csv = NULL, *png = NULL;
    gsize png_len = 0;
    struct scan_result *r = NULL;
    struct lanyfs_error err = {0};
    struct store_db *db = NULL;
    struct store_scan_meta meta = {.image_path = image_path()};
    g_autoptr(RescueData) direct = NULL;
    g_autoptr(RescueData) stored = NULL;
    g_autoptr(GError) error = NULL;

    g_assert_cmpint(scan_image(image_path(), NULL, &r, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_open(db_path, 0, &db, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_add_scan(db, r, &meta, NULL, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_close(db, &err), ==, LANYFS_OK);
    direct = rescue_data_new_from_scan(r, RESCUE_SOURCE_IMAGE, image_path());
    g_assert_true(rescue_data_get_scan_result(direct) == r);
    stored = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_null(rescue_data_get_scan_result(stored));

    g_assert_true(rescue_wear_export_handles(RESCUE_EXPORT_WEAR_CSV));
    g_assert_false(rescue_wear_export_handles(RESCUE_EXPORT_MAP_CSV));
    g_assert_true(rescue_wear_export_to_file(direct, RESCUE_EXPORT_WEAR_CSV, csv_path, &error));
    g_assert_no_error(error);
    g_assert_true(g_file_get_contents(csv_path, &csv, NULL, NULL));
    g_assert_true(g_str_has_prefix(csv, "block,kind,class,wrcnt,owner,path,flags\n0,super,"));
    g_assert_nonnull(strstr(csv, ",/docs/letter.txt,"));

    /* From a database: the image it names is scanned again; the same table. */
    g_assert_true(rescue_wear_export_to_file(stored, RESCUE_EXPORT_WEAR_CSV, db_csv_path, &error));
    g_assert_no_error(error);
    g_assert_true(g_file_get_contents(db_csv_path, &db_csv, NULL, NULL));
    g_assert_cmpstr(db_csv, ==, csv);

    g_assert_true(rescue_wear_export_to_file(direct, RESCUE_EXPORT_WEAR_PNG, png_path, &error));
    g_assert_no_error(error);
    g_assert_true(g_file_get_contents(png_path, &png, &png_len, NULL));
    g_assert_cmpuint(png_len, >, 8);
    g_assert_cmpint(memcmp(png, "\x89PNG\r\n\x1a\n", 8), ==, 0);

    /* A folder that is not there: an error, and nothing left behind. */
    g_assert_false(rescue_wear_export_to_file(direct, RESCUE_EXPORT_WEAR_PNG, bad_path, &error));
    g_assert_nonnull(error);
    remove_tree(dir);
}

static void test_bulk_model(void)
{
    const char *bulk = g_getenv("RESCUE_TEST_BULK");
    ScanRun run = {0};
    g_autoptr(RescueData) d = NULL;
    g_autoptr(RescueFilesModel) m = NULL;
    GtkTreeListModel *tree;
    guint32 id;
    guint pos;
    gint64 t0;

    g_assert_nonnull(bulk);
    d = scan(bulk, NULL, &run);
    g_assert_no_error(run.error);
    g_assert_cmpuint(rescue_data_get_n_entries(d), >, 5000);
    m = rescue_files_model_new(d, NULL);
    drain(m);

    t0 = g_get_monotonic_time();
    rescue_files_model_set_search(m, "file-004321");
    drain(m);
    tree = rescue_files_model_get_model(m);
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 1);
    rescue_files_model_set_search(m, "file-001");
    drain(m);
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 1000);
    g_test_message("two searches over %u entries: %.1f ms", rescue_data_get_n_entries(d),
                   (g_get_monotonic_time() - t0) / 1000.0);

    id = find_name(d, "file-005432.dat", SCAN_ENTRY_LIVE);
    pos = rescue_files_model_reveal(m, id);
    drain(m);
    tree = rescue_files_model_get_model(m);
    g_assert_cmpuint(pos, !=, G_MAXUINT);
    {
        g_autoptr(GtkTreeListRow) row = gtk_tree_list_model_get_row(tree, pos);
        g_autoptr(GObject) item = gtk_tree_list_row_get_item(row);
        g_assert_cmpuint(rescue_entry_get_id(RESCUE_ENTRY(item)), ==, id);
        g_assert_cmpuint(gtk_tree_list_row_get_depth(row), ==, 2);
    }
}

int main(int argc, char **argv)
{
    g_setenv("LC_ALL", "C", TRUE);
    g_setenv("TZ", "UTC", TRUE);
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/real/scan-task", test_scan_task);
    g_test_add_func("/real/scan-errors", test_scan_errors);
    g_test_add_func("/real/image-reads", test_image_reads);
    g_test_add_func("/real/salvage", test_salvage);
    g_test_add_func("/real/lost-data", test_lost_data);
    g_test_add_func("/real/store-equivalence", test_store_equivalence);
    g_test_add_func("/real/given-geometry", test_given_geometry);
    g_test_add_func("/real/wear-export", test_wear_export);
    g_test_add_func("/real/bulk-model", test_bulk_model);
    return g_test_run();
}
