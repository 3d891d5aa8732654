/*
 * test-models-fake.c -- the models behind LanyFS Rescue's views, on scans built by hand.
 *
 * Display-less: GTK is never initialised; only its list models are used.
 * The scan results come from tests/store/fake_scan.c (which stands in for
 * the scan engine) or from RescueData filled directly, so that every
 * corner can be reached: parent cycles, deleted entries under live
 * directories, names that need escaping, a scan database written from a
 * result and read back.
 */
#include "config.h"

#include <cairo.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "fake_scan.h"
#include "lanyfs.h"
#include "rescue-block-paint.h"
#include "rescue-data-scan.h"
#include "rescue-data-store.h"
#include "rescue-data.h"
#include "rescue-entry.h"
#include "rescue-export.h"
#include "rescue-files-model.h"
#include "rescue-finding.h"
#include "rescue-findings-model.h"
#include "rescue-format.h"
#include "rescue-progress.h"
#include "store.h"

#include <sqlite3.h>

/* ---- a hand-built RescueData ------------------------------------------------ */

/*
 * ids: 1 "/" root, 2 dir "alpha", 3 dir "beta", 4 file "alpha/a1" (live),
 * 5 file "alpha/a2" (deleted), 6 file "beta/b1" (live), 7 file "lost.txt"
 * (orphaned, no parent), 8 and 9 dirs "c8" and "c9" parents of each other.
 */
static RescueEntryInfo *add(RescueData *d, const char *name, const char *path, guint32 parent,
                            guint8 state, guint8 type, guint64 size)
{
    RescueEntryInfo *e = rescue_data_append_entry(d, (const guint8 *)name, strlen(name), path);

    e->parent = parent;
    e->state = state;
    e->type = type;
    e->size = size;
    e->block = 100 + e->id;
    if (type == LANYFS_TYPE_FILE) {
        e->blocks_needed = (size + 511) / 512;
        e->blocks_mapped = e->blocks_needed;
        e->blocks_intact = state == SCAN_ENTRY_DELETED ? e->blocks_needed / 2 : e->blocks_needed;
    }
    return e;
}

static RescueData *hand_data(void)
{
    RescueData *d = rescue_data_new(RESCUE_SOURCE_NONE, "/tmp/hand.img");
    struct scan_block *cells;

    add(d, "", "/", 0, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, 0);
    add(d, "beta", "/beta", 1, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, 0);
    add(d, "alpha", "/alpha", 1, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, 0);
    add(d, "a2", "/alpha/a2", 3, SCAN_ENTRY_DELETED, LANYFS_TYPE_FILE, 2048);
    add(d, "a1", "/alpha/a1", 3, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, 100);
    add(d, "b1", "/beta/b1", 2, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, 0);
    add(d, "lost.txt", "/lost.txt", 0, SCAN_ENTRY_ORPHAN, LANYFS_TYPE_FILE, 10);
    add(d, "c8", "/c8", 9, SCAN_ENTRY_ORPHAN, LANYFS_TYPE_DIR, 0);
    add(d, "c9", "/c9", 8, SCAN_ENTRY_ORPHAN, LANYFS_TYPE_DIR, 0);

    rescue_data_append_finding(d, SCAN_PR_TREE_PTR_RANGE, SCAN_SEV_ERROR, 3, 103, 9999,
                               "/alpha: block 103 links to block 9999, beyond the device end",
                               "/alpha");
    rescue_data_append_finding(d, SCAN_PR_BLOCKS_LEAKED, SCAN_SEV_WARNING, 0, 40, 0,
                               "7 blocks are neither used nor free (first: 40)", NULL);
    rescue_data_append_finding(d, SCAN_PR_DELETED_ENTRY, SCAN_SEV_INFO, 4, 104, 0,
                               "deleted file '/alpha/a2' at block 104: 2 of 4 data blocks intact",
                               "/alpha/a2");

    cells = rescue_data_alloc_blocks(d, 200);
    cells[0].cls = SCAN_BLK_SUPER;
    cells[0].flags = SCAN_BF_METADATA;
    cells[0].wrcnt = 40;
    for (int b = 1; b < 200; b++)
        cells[b].cls = SCAN_BLK_FREE;
    cells[104].cls = SCAN_BLK_FILE;
    cells[104].owner = 4;
    cells[104].flags = SCAN_BF_METADATA;
    cells[104].wrcnt = 3;
    cells[150].cls = SCAN_BLK_DATA;
    cells[150].owner = 5;
    cells[150].flags = SCAN_BF_SHARED;
    rescue_data_finish(d);
    return d;
}

/*
 * Lost trees: one on its file (6, b1: size 0) is read through it; one
 * naming no file, a directory, a file that has a tree already, or an id
 * past the entries stands for itself as "#TOP" at the top level.
 */
static void test_lost_trees(void)
{
    RescueData *d = rescue_data_new(RESCUE_SOURCE_NONE, "/tmp/lost.img");
    static const guint64 map[] = {41, 0, 43};
    const guint64 *got = NULL;
    guint64 n = 0;
    RescueEntryInfo *e;
    guint32 ntop = 0;
    const guint32 *top;

    add(d, "", "/", 0, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, 0);
    add(d, "dir", "/dir", 1, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, 0);
    add(d, "b1", "/b1", 1, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, 0);
    e = rescue_data_append_lost(d, 40, 3, 1100, 2, map, 3, FALSE);
    g_assert_cmpuint(e->id, ==, 3);
    g_assert_cmpuint(e->lost_top, ==, 40);
    g_assert_false(e->lost_only);
    g_assert_cmpuint(e->size, ==, 0);
    g_assert_cmpuint(rescue_entry_content_size(e), ==, 1100);
    g_assert_cmpuint(e->blocks_needed, ==, 3);
    g_assert_cmpuint(e->blocks_mapped, ==, 2);
    /* None of these may take it: each becomes an entry of its own. */
    g_assert_cmpuint(rescue_data_append_lost(d, 50, 3, 10, 1, NULL, 0, FALSE)->id, ==, 4);
    g_assert_cmpuint(rescue_data_append_lost(d, 60, 2, 10, 1, NULL, 0, FALSE)->id, ==, 5);
    g_assert_cmpuint(rescue_data_append_lost(d, 70, 0, 10, 1, NULL, 0, FALSE)->id, ==, 6);
    g_assert_cmpuint(rescue_data_append_lost(d, 80, 999, 10, 1, NULL, 0, FALSE)->id, ==, 7);
    g_assert_cmpuint(rescue_data_append_lost(d, 90, 6, 10, 1, NULL, 0, FALSE)->id, ==, 8);
    rescue_data_finish(d);

    g_assert_true(rescue_data_get_entry_data(d, 3, &got, &n));
    g_assert_cmpuint(n, ==, 3);
    g_assert_cmpuint(got[2], ==, 43);
    e = (RescueEntryInfo *)rescue_data_get_entry(d, 6);
    g_assert_true(e->lost_only);
    g_assert_cmpstr(e->name, ==, "#70");
    g_assert_cmpstr(e->path, ==, "/#70");
    g_assert_cmpuint(e->block, ==, 70);
    g_assert_cmpuint(e->state, ==, SCAN_ENTRY_ORPHAN);
    g_assert_cmpuint(e->type, ==, LANYFS_TYPE_FILE);
    g_assert_cmpuint(e->size, ==, 10);
    g_assert_cmpstr(rescue_format_entry_state(e), ==, "Lost data");
    g_assert_cmpstr(rescue_format_entry_state(rescue_data_get_entry(d, 3)), ==, "Live");
    top = rescue_data_get_top_level(d, &ntop);
    for (guint32 id = 4; id <= 8; id++) {
        gboolean seen = FALSE;
        for (guint32 i = 0; i < ntop; i++)
            seen |= top[i] == id;
        g_assert_true(seen);
        g_assert_true(rescue_data_get_entry(d, id)->lost_only);
    }
    rescue_data_unref(d);
}

/* Which EARLIER_FORMAT finding gives the geometry to read again. */
static void test_earlier_geometry(void)
{
    RescueData *d = hand_data();
    RescueData *e = rescue_data_new(RESCUE_SOURCE_NONE, "/tmp/earlier.img");
    RescueFindingInfo *f;
    unsigned bits = 0, addrlen = 0;

    /* None among the findings. */
    g_assert_false(rescue_data_get_earlier_geometry(d, &bits, &addrlen));
    /* Values no scan makes (a database may hold any): not a geometry. */
    f = rescue_data_append_finding(e, SCAN_PR_EARLIER_FORMAT, SCAN_SEV_INFO, 0, 2, 0, "odd", NULL);
    f->value = 3000;
    f->value2 = 3;
    f = rescue_data_append_finding(e, SCAN_PR_EARLIER_FORMAT, SCAN_SEV_INFO, 0, 2, 0, "odd", NULL);
    f->value = 2048;
    f->value2 = 9;
    /* Entries of a smaller earlier block size: taken while no root is found. */
    f = rescue_data_append_finding(e, SCAN_PR_EARLIER_FORMAT_ENTRIES, SCAN_SEV_INFO, 0, 3, 0,
                                   "entries", NULL);
    f->value = 1024;
    f->value2 = 0;
    g_assert_true(rescue_data_get_earlier_geometry(e, &bits, &addrlen));
    g_assert_cmpuint(bits, ==, 10);
    g_assert_cmpuint(addrlen, ==, 0);
    /* An address length not told: 0, for the scan to infer; a root wins. */
    f = rescue_data_append_finding(e, SCAN_PR_EARLIER_FORMAT, SCAN_SEV_INFO, 0, 4, 0, "a", NULL);
    f->value = 2048;
    f->value2 = 0;
    g_assert_true(rescue_data_get_earlier_geometry(e, &bits, &addrlen));
    g_assert_cmpuint(bits, ==, 11);
    g_assert_cmpuint(addrlen, ==, 0);
    /* One whose length was told wins over it. */
    f = rescue_data_append_finding(e, SCAN_PR_EARLIER_FORMAT, SCAN_SEV_INFO, 0, 8, 0, "b", NULL);
    f->value = 4096;
    f->value2 = 2;
    rescue_data_finish(e);
    g_assert_true(rescue_data_get_earlier_geometry(e, &bits, &addrlen));
    g_assert_cmpuint(bits, ==, 12);
    g_assert_cmpuint(addrlen, ==, 2);
    rescue_data_unref(d);
    rescue_data_unref(e);
}

static void test_data_tree(void)
{
    g_autoptr(RescueData) d = hand_data();
    const guint32 *ids;
    guint32 n = 0;
    guint na = 0;
    g_autofree guint32 *chain = NULL;
    g_autofree guint32 *cycle = NULL;

    g_assert_cmpuint(rescue_data_get_n_entries(d), ==, 9);
    g_assert_cmpuint(rescue_data_get_root(d), ==, 1);

    /* The root's children, directories first by name, then the loose entries, then a cycle. */
    ids = rescue_data_get_top_level(d, &n);
    g_assert_cmpuint(n, ==, 4);
    g_assert_cmpuint(ids[0], ==, 3); /* alpha */
    g_assert_cmpuint(ids[1], ==, 2); /* beta */
    g_assert_cmpuint(ids[2], ==, 7); /* lost.txt */
    g_assert_true(ids[3] == 8 || ids[3] == 9);

    ids = rescue_data_get_children(d, 3, &n);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpuint(ids[0], ==, 5); /* a1 */
    g_assert_cmpuint(ids[1], ==, 4); /* a2 */
    g_assert_cmpuint(rescue_data_get_entry(d, 3)->subtree_states, ==,
                     RESCUE_STATE_BIT(SCAN_ENTRY_LIVE) | RESCUE_STATE_BIT(SCAN_ENTRY_DELETED));
    g_assert_cmpuint(rescue_data_get_entry(d, 1)->subtree_states & RESCUE_STATE_ALL, !=, 0);

    chain = rescue_data_get_ancestry(d, 4, &na);
    g_assert_cmpuint(na, ==, 2);
    g_assert_cmpuint(chain[0], ==, 3);
    g_assert_cmpuint(chain[1], ==, 4);
    /* In a cycle the chain stops where the cycle was cut into the top level. */
    cycle = rescue_data_get_ancestry(d, ids[3] == 8 ? 9 : 8, &na);
    g_assert_cmpuint(na, ==, 2);
    g_assert_cmpuint(cycle[0], ==, ids[3]);

    g_assert_null(rescue_data_get_entry(d, 0));
    g_assert_null(rescue_data_get_entry(d, 10));
    g_assert_null(rescue_data_get_block(d, 200));
    g_assert_cmpuint(rescue_data_get_wear_max(d), ==, 40);
    g_assert_cmpuint(rescue_data_get_findings_by_severity(d)[SCAN_SEV_ERROR], ==, 1);
    g_assert_true(rescue_data_get_finding(d, 1)->has_block);
    g_assert_cmpstr(rescue_data_get_folded_name(d, 3), ==, "alpha");
}

static void test_text(void)
{
    g_autofree char *e1 = rescue_escape_bytes("a\\b\xff\n\xc3\xa4", 7);
    g_autofree char *code = rescue_format_code(SCAN_PR_TREE_PTR_RANGE);
    g_autofree char *unknown = rescue_format_code(0x7f0001);
    g_autofree char *hex = NULL;
    g_autofree char *flags = NULL;
    g_autoptr(RescueData) d = hand_data();
    g_autofree char *tip = rescue_format_block_tooltip(d, 104);
    g_autofree char *where = rescue_format_finding_where(rescue_data_get_finding(d, 1));
    g_autofree char *pct = rescue_format_recoverable(rescue_data_get_entry(d, 4));
    static const guint8 bytes[20] = "LANY\x01\x02 hello!";

    g_assert_cmpstr(e1, ==, "a\\\\b\\xff\\x0a\xc3\xa4");
    g_assert_cmpstr(code, ==, "0x010001 TREE_PTR_RANGE");
    g_assert_cmpstr(unknown, ==, "0x7f0001 UNKNOWN");
    g_assert_cmpstr(rescue_format_repair(SCAN_PR_TREE_PTR_RANGE), ==, "clear the link");

    hex = rescue_format_hex(bytes, sizeof(bytes), 0x100, 16);
    g_assert_true(g_str_has_prefix(hex, "00000100  4c 41 4e 59 01 02 20 68  65 6c 6c 6f 21 00 00 00"));
    g_assert_nonnull(strstr(hex, "LANY.. hello!..."));
    g_assert_nonnull(strstr(hex, "\n00000110  00 00 00 00"));
    g_free(hex);
    hex = rescue_format_hex(bytes, 8, 0, 8);
    g_assert_cmpstr(hex, ==, "00000000  4c 41 4e 59 01 02 20 68  LANY.. h");

    g_assert_true(rescue_looks_like_text((const guint8 *)"plain text\n", 11));
    g_assert_false(rescue_looks_like_text((const guint8 *)"bin\0ary", 7));
    g_assert_false(rescue_looks_like_text((const guint8 *)"\xff\xfe\xfd nope", 8));

    flags = rescue_format_block_flags(SCAN_BF_SHARED | SCAN_BF_TORN);
    g_assert_cmpstr(flags, ==, "shared by two owners, torn write");
    g_assert_nonnull(strstr(tip, "Block 104"));
    g_assert_nonnull(strstr(tip, "Owner: /alpha/a2"));
    g_assert_nonnull(strstr(tip, "Write counter: 3"));
    g_assert_cmpstr(where, ==, "Block 40");
    /* 2 of 4 blocks intact. */
    g_assert_cmpstr(pct, ==, "50 %");
    g_assert_cmpfloat(rescue_recoverable_fraction(rescue_data_get_entry(d, 3)), <, 0);
    g_assert_cmpfloat(rescue_recoverable_fraction(rescue_data_get_entry(d, 6)), ==, 1);
}

/* Wait until the model's idle filtering and sorting are done. */
static void drain(RescueFilesModel *m)
{
    while (rescue_files_model_get_pending(m) || g_main_context_pending(NULL))
        g_main_context_iteration(NULL, FALSE);
}

static guint32 row_id(GtkTreeListModel *tree, guint pos)
{
    g_autoptr(GtkTreeListRow) row = gtk_tree_list_model_get_row(tree, pos);
    g_autoptr(GObject) item = row != NULL ? gtk_tree_list_row_get_item(row) : NULL;

    return item != NULL ? rescue_entry_get_id(RESCUE_ENTRY(item)) : 0;
}

static void test_files_model(void)
{
    g_autoptr(RescueData) d = hand_data();
    g_autoptr(RescueFilesModel) m = rescue_files_model_new(d, NULL);
    GtkTreeListModel *tree = rescue_files_model_get_model(m);
    g_autoptr(GtkTreeListRow) alpha = NULL;
    guint pos;

    drain(m);
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 4);
    g_assert_cmpuint(row_id(tree, 0), ==, 3);
    alpha = gtk_tree_list_model_get_row(tree, 0);
    g_assert_true(gtk_tree_list_row_is_expandable(alpha));
    gtk_tree_list_row_set_expanded(alpha, TRUE);
    drain(m);
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 6);
    g_assert_cmpuint(row_id(tree, 1), ==, 5);
    g_assert_cmpuint(row_id(tree, 2), ==, 4);

    /* Live only: alpha, a1 and beta stay; a2 and the orphans go. */
    rescue_files_model_set_states(m, RESCUE_STATE_BIT(SCAN_ENTRY_LIVE));
    drain(m);
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 3);
    g_assert_cmpuint(rescue_files_model_reveal(m, 4), ==, G_MAXUINT);
    /* Deleted only: alpha stays for the sake of a2, beta and the orphans go. */
    rescue_files_model_set_states(m, RESCUE_STATE_BIT(SCAN_ENTRY_DELETED));
    drain(m);
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 2);
    g_assert_cmpuint(row_id(tree, 0), ==, 3);
    g_assert_cmpuint(row_id(tree, 1), ==, 4);

    /* Search: flat, case-insensitive, within the states shown. */
    rescue_files_model_set_states(m, RESCUE_STATE_ALL);
    rescue_files_model_set_search(m, "A");
    drain(m);
    g_assert_true(rescue_files_model_get_searching(m));
    tree = rescue_files_model_get_model(m);
    /* alpha, beta, a2, a1: every name holding an "a" (the root has no name). */
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 4);
    rescue_files_model_set_search(m, "a1");
    drain(m);
    g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(tree)), ==, 1);
    g_assert_cmpuint(row_id(tree, 0), ==, 5);

    /* Reveal ends the search and expands the way down. */
    pos = rescue_files_model_reveal(m, 6);
    g_assert_false(rescue_files_model_get_searching(m));
    tree = rescue_files_model_get_model(m);
    drain(m);
    g_assert_cmpuint(pos, !=, G_MAXUINT);
    g_assert_cmpuint(row_id(tree, pos), ==, 6);

    g_assert_true(rescue_files_model_entry_visible(d, 5, RESCUE_STATE_ALL, "a1", FALSE));
    g_assert_false(rescue_files_model_entry_visible(d, 5, RESCUE_STATE_ALL, "zz", FALSE));
    g_assert_false(rescue_files_model_entry_visible(d, 99, RESCUE_STATE_ALL, NULL, TRUE));
}

static int sort_by_size(gconstpointer a, gconstpointer b, gpointer user_data)
{
    guint64 x = rescue_entry_get_info(RESCUE_ENTRY((gpointer)a))->size;
    guint64 y = rescue_entry_get_info(RESCUE_ENTRY((gpointer)b))->size;

    (void)user_data;
    return x < y ? GTK_ORDERING_SMALLER : (x > y ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL);
}

static void test_files_model_sorted(void)
{
    g_autoptr(RescueData) d = hand_data();
    g_autoptr(GtkSorter) sorter = GTK_SORTER(gtk_custom_sorter_new(sort_by_size, NULL, NULL));
    g_autoptr(RescueFilesModel) m = rescue_files_model_new(d, sorter);
    GtkTreeListModel *tree = rescue_files_model_get_model(m);
    g_autoptr(GtkTreeListRow) alpha = NULL;
    guint n;

    drain(m);
    n = g_list_model_get_n_items(G_LIST_MODEL(tree));
    g_assert_cmpuint(n, ==, 4);
    /* Sorted within each level: alpha's children by size, a1 (100) before a2 (2048). */
    for (guint i = 0; i < n; i++)
        if (row_id(tree, i) == 3)
            alpha = gtk_tree_list_model_get_row(tree, i);
    g_assert_nonnull(alpha);
    gtk_tree_list_row_set_expanded(alpha, TRUE);
    drain(m);
    {
        guint p = gtk_tree_list_row_get_position(alpha);
        g_assert_cmpuint(row_id(tree, p + 1), ==, 5);
        g_assert_cmpuint(row_id(tree, p + 2), ==, 4);
    }
}

static void test_findings_model(void)
{
    g_autoptr(RescueData) d = hand_data();
    g_autoptr(RescueFindingsModel) m = rescue_findings_model_new(d);
    GListModel *list = rescue_findings_model_get_model(m);
    g_autoptr(RescueFinding) first = NULL;

    g_assert_cmpuint(g_list_model_get_n_items(list), ==, 3);
    rescue_findings_model_set_min_severity(m, SCAN_SEV_WARNING);
    g_assert_cmpuint(g_list_model_get_n_items(list), ==, 2);
    rescue_findings_model_set_min_severity(m, SCAN_SEV_ERROR);
    g_assert_cmpuint(g_list_model_get_n_items(list), ==, 1);
    first = g_list_model_get_item(list, 0);
    g_assert_cmpuint(rescue_finding_get_info(first)->code, ==, SCAN_PR_TREE_PTR_RANGE);
    rescue_findings_model_set_min_severity(m, SCAN_SEV_INFO);
    g_assert_cmpuint(g_list_model_get_n_items(list), ==, 3);
}

/* ---- from a scan result and from a scan database -------------------------------- */

static struct scan_result *fake_result(void)
{
    struct scan_result *r = fake_new(9, 4, 64);
    static const uint64_t data_a[] = {10, 0, 12};
    static const uint64_t data_b[] = {20};

    fake_block(r, 0, SCAN_BLK_SUPER, SCAN_BF_METADATA, 7, 0, 0);
    fake_block(r, 1, SCAN_BLK_DIR, SCAN_BF_METADATA, 3, 1, 0);
    fake_block(r, 2, SCAN_BLK_FILE, SCAN_BF_METADATA, 2, 2, 0);
    fake_block(r, 10, SCAN_BLK_DATA, 0, 0, 2, 0);
    fake_block(r, 12, SCAN_BLK_DATA, SCAN_BF_SHARED, 0, 2, 2);
    fake_block(r, 3, SCAN_BLK_DELETED, SCAN_BF_METADATA, 1, 3, 0);
    for (uint64_t b = 30; b < 64; b++)
        fake_block(r, b, SCAN_BLK_FREE, 0, 0, 0, 0);

    fake_entry(r, 1, 0, SCAN_ENTRY_LIVE, LANYFS_TYPE_DIR, "LANYFSROOT", 10, "/", 0, NULL, 0);
    fake_entry(r, 2, 1, SCAN_ENTRY_LIVE, LANYFS_TYPE_FILE, "notes, \"draft\".txt", 18,
               "/notes, \"draft\".txt", 1300, data_a, 3);
    fake_entry(r, 3, 1, SCAN_ENTRY_DELETED, LANYFS_TYPE_FILE, "old\xff", 4, "/old\xff", 10,
               data_b, 1);
    fake_last_entry(r)->blocks_needed = 1;
    fake_last_entry(r)->blocks_mapped = 1;
    fake_last_entry(r)->blocks_intact = 0;
    fake_finding(r, SCAN_PR_BLOCK_SHARED, 2, 12, 0, 0, 0, 0, 0, "/notes, \"draft\".txt",
                 "/old");
    fake_finding(r, SCAN_PR_DELETED_ENTRY, 3, 3, 0, 0, 0, 0, 1, "/old\xff", "file");
    return r;
}

static void check_fake_data(RescueData *d, gboolean from_store)
{
    const RescueEntryInfo *e;
    const guint64 *map = NULL;
    guint64 nmap = 0;
    const RescueFindingInfo *f;

    g_assert_cmpuint(rescue_data_get_n_entries(d), ==, 3);
    g_assert_cmpuint(rescue_data_get_root(d), ==, 1);
    e = rescue_data_get_entry(d, 2);
    g_assert_cmpstr(e->name, ==, "notes, \"draft\".txt");
    g_assert_cmpuint(e->size, ==, 1300);
    g_assert_cmpuint(e->parent, ==, 1);
    g_assert_true(rescue_data_get_entry_data(d, 2, &map, &nmap));
    g_assert_cmpuint(nmap, ==, 3);
    g_assert_cmpuint(map[0], ==, 10);
    g_assert_cmpuint(map[1], ==, 0);
    g_assert_cmpuint(map[2], ==, 12);
    e = rescue_data_get_entry(d, 3);
    g_assert_cmpuint(e->state, ==, SCAN_ENTRY_DELETED);
    g_assert_cmpstr(e->name, ==, "old\\xff");
    g_assert_cmpstr(e->path, ==, "/old\\xff");
    g_assert_cmpuint(e->raw_name_len, ==, 4);
    g_assert_cmpint(e->raw_name[3], ==, 0xff);

    g_assert_cmpuint(rescue_data_get_n_findings(d), ==, 2);
    f = rescue_data_get_finding(d, 0);
    g_assert_cmpuint(f->code, ==, SCAN_PR_BLOCK_SHARED);
    g_assert_cmpuint(f->entry, ==, 2);
    g_assert_cmpuint(f->block, ==, 12);
    g_assert_true(f->has_block);
    g_assert_nonnull(strstr(f->message, "block 12 is owned by"));
    f = rescue_data_get_finding(d, 1);
    g_assert_cmpuint(f->severity, ==, SCAN_SEV_INFO);
    g_assert_cmpstr(f->path, ==, "/old\\xff");

    g_assert_cmpuint(rescue_data_get_n_blocks(d), ==, 64);
    g_assert_cmpuint(rescue_data_get_block(d, 0)->cls, ==, SCAN_BLK_SUPER);
    g_assert_cmpuint(rescue_data_get_block(d, 0)->wrcnt, ==, 7);
    g_assert_cmpuint(rescue_data_get_block(d, 12)->flags & SCAN_BF_SHARED, !=, 0);
    g_assert_cmpuint(rescue_data_get_block(d, 12)->owner, ==, 2);
    g_assert_cmpuint(rescue_data_get_block(d, 40)->cls, ==, SCAN_BLK_FREE);
    g_assert_cmpuint(rescue_data_get_wear_max(d), ==, 7);
    g_assert_cmpuint(rescue_data_get_geometry(d)->blocksize, ==, 512);
    g_assert_cmpuint(rescue_data_get_geometry(d)->addrlen, ==, 4);
    if (from_store)
        g_assert_cmpint(rescue_data_get_kind(d), ==, RESCUE_SOURCE_DATABASE);
}

static void test_from_scan(void)
{
    g_autoptr(RescueData) d = rescue_data_new_from_scan(fake_result(), RESCUE_SOURCE_IMAGE,
                                                        "/images/stick.img");

    check_fake_data(d, FALSE);
    g_assert_cmpstr(rescue_data_get_image_path(d), ==, "/images/stick.img");
}

static void test_from_store(void)
{
    g_autofree char *dir = g_dir_make_tmp("rescue-test-XXXXXX", NULL);
    g_autofree char *db_path = g_build_filename(dir, "scan.db", NULL);
    struct scan_result *r = fake_result();
    struct store_db *db = NULL;
    struct lanyfs_error err = {0};
    struct store_scan_meta meta = {.image_path = "/images/stick.img"};
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueData) d = NULL;

    g_assert_cmpint(store_open(db_path, 0, &db, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_add_scan(db, r, &meta, NULL, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_close(db, &err), ==, LANYFS_OK);
    scan_result_free(r);

    d = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(d);
    check_fake_data(d, TRUE);
    g_assert_cmpstr(rescue_data_get_image_path(d), ==, "/images/stick.img");

    /* Not a scan database. */
    g_clear_pointer(&d, rescue_data_unref);
    g_assert_true(g_file_set_contents(db_path, "not sqlite", -1, NULL));
    d = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
    g_assert_null(d);
    g_assert_nonnull(error);
    g_unlink(db_path);
    g_rmdir(dir);
}

/* fake_result() stored in a new database at db_path, then sql run on it. */
static void store_edited(const char *db_path, const char *sql)
{
    struct scan_result *r = fake_result();
    struct store_db *db = NULL;
    struct lanyfs_error err = {0};
    struct store_scan_meta meta = {.image_path = "/images/stick.img"};
    sqlite3 *h = NULL;

    g_unlink(db_path);
    g_assert_cmpint(store_open(db_path, 0, &db, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_add_scan(db, r, &meta, NULL, &err), ==, LANYFS_OK);
    g_assert_cmpint(store_close(db, &err), ==, LANYFS_OK);
    scan_result_free(r);
    g_assert_cmpint(sqlite3_open(db_path, &h), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_changes(h), ==, 1);
    g_assert_cmpint(sqlite3_close(h), ==, SQLITE_OK);
}

/* What the loader takes from a hand-edited database is bounded before use. */
static void test_from_store_hostile(void)
{
    g_autofree char *dir = g_dir_make_tmp("rescue-test-XXXXXX", NULL);
    g_autofree char *db_path = g_build_filename(dir, "scan.db", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(RescueData) d = NULL;
    const RescueEntryInfo *e;
    const guint64 *map = NULL;
    guint64 nmap = 1;

    /* A block map no memory holds: an error, not an abort. */
    store_edited(db_path, "UPDATE scans SET map_blocks = 4611686018427387904");
    d = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
    g_assert_null(d);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_FAILED);
    g_assert_nonnull(strstr(error->message, "does not fit in memory"));
    g_clear_error(&error);

    /* Without the root's row the ids close up: the map's owners follow them. */
    store_edited(db_path, "DELETE FROM entries WHERE id = 1");
    d = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rescue_data_get_n_entries(d), ==, 2);
    e = rescue_data_get_entry(d, rescue_data_get_block(d, 12)->owner);
    g_assert_nonnull(e);
    g_assert_cmpstr(e->name, ==, "notes, \"draft\".txt");
    e = rescue_data_get_entry(d, rescue_data_get_block(d, 3)->owner);
    g_assert_nonnull(e);
    g_assert_cmpstr(e->name, ==, "old\\xff");
    g_clear_pointer(&d, rescue_data_unref);

    /* An extent four billion file blocks out is left out, not allocated for. */
    store_edited(db_path, "UPDATE entry_blocks SET file_block = 4000000000 WHERE entry = 3");
    d = rescue_data_new_from_store(db_path, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_true(rescue_data_get_entry_data(d, 3, &map, &nmap));
    g_assert_cmpuint(nmap, ==, 0);
    g_clear_pointer(&d, rescue_data_unref);

    g_unlink(db_path);
    for (const char *const *suffix = (const char *const[]){"-wal", "-shm", NULL}; *suffix;
         suffix++) {
        g_autofree char *side = g_strconcat(db_path, *suffix, NULL);
        g_unlink(side);
    }
    g_rmdir(dir);
}

/* ---- exports ------------------------------------------------------------------- */

static char *bytes_text(GBytes *b)
{
    gsize n = 0;
    const char *p = g_bytes_get_data(b, &n);

    return g_strndup(p, n);
}

static void test_export(void)
{
    g_autoptr(RescueData) d = rescue_data_new_from_scan(fake_result(), RESCUE_SOURCE_IMAGE,
                                                        "/images/stick.img");
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) csv = rescue_export_to_bytes(d, RESCUE_EXPORT_FINDINGS_CSV, &error);
    g_autoptr(GBytes) json = rescue_export_to_bytes(d, RESCUE_EXPORT_FINDINGS_JSON, &error);
    g_autoptr(GBytes) map = rescue_export_to_bytes(d, RESCUE_EXPORT_MAP_CSV, &error);
    g_autoptr(GBytes) png = rescue_export_to_bytes(d, RESCUE_EXPORT_MAP_PNG, &error);
    g_autofree char *csv_text = bytes_text(csv);
    g_autofree char *map_text = bytes_text(map);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autofree char *json_text = bytes_text(json);
    JsonObject *root;
    JsonArray *findings;
    g_autofree char *name = rescue_export_suggest_name(d, RESCUE_EXPORT_WEAR_PNG);
    gsize n = 0;
    const guint8 *p;

    g_assert_no_error(error);
    g_assert_true(g_str_has_prefix(csv_text, "severity,code,name,message,path,block,entry,repair\r\n"));
    /* A path with a comma and quotes is quoted, the quotes doubled. */
    g_assert_nonnull(strstr(csv_text, ",\"/notes, \"\"draft\"\".txt\",12,2,"));
    g_assert_nonnull(strstr(csv_text, "error,0x040001,BLOCK_SHARED,"));

    g_assert_true(json_parser_load_from_data(parser, json_text, -1, &error));
    root = json_node_get_object(json_parser_get_root(parser));
    g_assert_cmpstr(json_object_get_string_member(root, "source"), ==, "/images/stick.img");
    findings = json_object_get_array_member(root, "findings");
    g_assert_cmpuint(json_array_get_length(findings), ==, 2);
    g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(findings, 0),
                                                  "name"),
                    ==, "BLOCK_SHARED");
    g_assert_cmpint(json_object_get_int_member(json_array_get_object_element(findings, 0),
                                               "block"),
                    ==, 12);

    g_assert_true(g_str_has_prefix(map_text, "first,count,class,owner,owner_path,flags\r\n"
                                             "0,1,super,,,0x04\r\n1,1,dir,1,/,0x04\r\n"));
    g_assert_nonnull(strstr(map_text, "\r\n30,34,free,,,0x00\r\n"));
    /* Wear is the wear report's: refused here (tests of it in test-models-real). */
    {
        g_autoptr(GError) wear_error = NULL;
        g_assert_null(rescue_export_to_bytes(d, RESCUE_EXPORT_WEAR_CSV, &wear_error));
        g_assert_error(wear_error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
    }

    p = g_bytes_get_data(png, &n);
    g_assert_cmpuint(n, >, 8);
    g_assert_cmpint(memcmp(p, "\x89PNG\r\n\x1a\n", 8), ==, 0);
    g_assert_cmpstr(name, ==, "stick-wear.png");
}

static void test_csv_field(void)
{
    g_autoptr(GString) s = g_string_new(NULL);

    rescue_csv_append_field(s, "plain");
    g_string_append_c(s, '|');
    rescue_csv_append_field(s, "a,b");
    g_string_append_c(s, '|');
    rescue_csv_append_field(s, "say \"hi\"");
    g_string_append_c(s, '|');
    rescue_csv_append_field(s, "two\nlines");
    g_assert_cmpstr(s->str, ==, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"");
}

/* ---- the block map's pixels ------------------------------------------------------ */

static void test_block_paint(void)
{
    g_autoptr(RescueData) d = hand_data();
    RescueMapLayout layout;
    guint32 *pixels;
    const int w = 100;
    const int h = 12;

    rescue_map_layout(1000, 100, 4, &layout);
    g_assert_cmpuint(layout.columns, ==, 25);
    g_assert_cmpuint(layout.rows, ==, 40);
    g_assert_cmpuint(layout.gap, ==, 1);
    rescue_map_layout(1000, 100, 1, &layout);
    g_assert_cmpuint(layout.gap, ==, 0);
    g_assert_cmpuint(rescue_zoom_step(4, 1), ==, 6);
    g_assert_cmpuint(rescue_zoom_step(4, -1), ==, 3);
    g_assert_cmpuint(rescue_zoom_step(32, 1), ==, 32);
    g_assert_cmpuint(rescue_zoom_step(1, -1), ==, 1);

    /* 200 blocks, 25 a row of 4 pixels: rows 4, 5, 6 (blocks 100..174) from y = -2. */
    rescue_map_layout(rescue_data_get_n_blocks(d), w, 4, &layout);
    pixels = g_new0(guint32, w * h);
    rescue_block_paint(d, &layout, 4, -2, pixels, w, h, w, FALSE);
    /* Block 104: row 4, column 4, at x 16..18, y -2..0: its last painted line is y = 0. */
    g_assert_cmpuint(pixels[0 * w + 16], ==, rescue_class_colour(SCAN_BLK_FILE));
    g_assert_cmpuint(pixels[0 * w + 19] >> 24, ==, 0); /* the gap */
    g_assert_cmpuint(pixels[1 * w + 16] >> 24, ==, 0); /* the gap below */
    /* Block 150 (row 6, column 0, y 6..8) is shared: red. */
    g_assert_cmpuint(pixels[6 * w + 0], ==, rescue_block_colour(rescue_data_get_block(d, 150),
                                                                 FALSE, 1));
    g_assert_cmpuint(pixels[6 * w + 0], ==, 0xffe01b24);
    /* With wear, the superblock (40 of 40 writes) is darkest and a free block faded. */
    rescue_map_layout(rescue_data_get_n_blocks(d), w, 4, &layout);
    rescue_block_paint(d, &layout, 0, 0, pixels, w, h, w, TRUE);
    g_assert_cmpuint(pixels[0], ==, 0xffa51d2d);
    g_assert_cmpuint(pixels[4] >> 24, ==, 0xff);
    g_assert_cmpuint(pixels[4], !=, rescue_class_colour(SCAN_BLK_FREE));
    g_free(pixels);
}

/* ---- progress relay ------------------------------------------------------------ */

typedef struct {
    guint reports;
    double last;
    gboolean went_back;
    gboolean done;
} ProgressSeen;

static void on_progress(double fraction, const char *text, gpointer user_data)
{
    ProgressSeen *seen = user_data;

    g_assert_nonnull(text);
    if (fraction < seen->last)
        seen->went_back = TRUE;
    seen->last = fraction;
    seen->reports++;
}

static gpointer poster(gpointer user_data)
{
    RescueProgress *p = user_data;

    for (guint i = 0; i <= 200000; i++)
        rescue_progress_post(p, (double)(i % 1000 == 999 ? 0 : i) / 200000.0, "working");
    return NULL;
}

static void test_progress(void)
{
    ProgressSeen seen = {0};
    g_autoptr(RescueProgress) p = rescue_progress_new(on_progress, &seen);
    GThread *t = g_thread_new("poster", poster, p);

    g_thread_join(t);
    while (g_main_context_iteration(NULL, FALSE))
        ;
    g_assert_cmpuint(rescue_progress_get_posts(p), ==, 200001);
    /* At most one report waits at a time, so the main loop saw few. */
    g_assert_cmpuint(seen.reports, >=, 1);
    g_assert_cmpuint(seen.reports, <, 200001 / 10);
    g_assert_false(seen.went_back);
    g_assert_cmpfloat(seen.last, ==, 1.0);

    /* Closed: nothing more arrives, even what was already queued. */
    rescue_progress_post(p, 1.0, "late");
    rescue_progress_close(p);
    while (g_main_context_iteration(NULL, FALSE))
        ;
    g_assert_cmpuint(rescue_progress_get_reports(p), ==, seen.reports);
}

/* Finished: the report still queued arrives at once, then nothing more. */
static void test_progress_finish(void)
{
    ProgressSeen seen = {0};
    g_autoptr(RescueProgress) p = rescue_progress_new(on_progress, &seen);

    rescue_progress_post(p, 0.5, "half");
    rescue_progress_post(p, 0.75, "most");
    g_assert_cmpuint(seen.reports, ==, 0);
    rescue_progress_finish(p);
    g_assert_cmpuint(seen.reports, ==, 1);
    g_assert_cmpfloat(seen.last, ==, 0.75);
    while (g_main_context_iteration(NULL, FALSE))
        ;
    g_assert_cmpuint(rescue_progress_get_reports(p), ==, 1);
    /* Nothing queued: nothing delivered. */
    rescue_progress_finish(p);
    g_assert_cmpuint(rescue_progress_get_reports(p), ==, 1);
}

int main(int argc, char **argv)
{
    g_setenv("LC_ALL", "C", TRUE);
    g_setenv("TZ", "UTC", TRUE);
    g_test_init(&argc, &argv, NULL);

    g_test_add_func("/data/tree", test_data_tree);
    g_test_add_func("/data/earlier-geometry", test_earlier_geometry);
    g_test_add_func("/data/text", test_text);
    g_test_add_func("/data/from-scan", test_from_scan);
    g_test_add_func("/data/from-store", test_from_store);
    g_test_add_func("/data/from-store-hostile", test_from_store_hostile);
    g_test_add_func("/data/lost-trees", test_lost_trees);
    g_test_add_func("/files-model/filters-and-search", test_files_model);
    g_test_add_func("/files-model/sorted-levels", test_files_model_sorted);
    g_test_add_func("/findings-model/severity", test_findings_model);
    g_test_add_func("/export/all", test_export);
    g_test_add_func("/export/csv-field", test_csv_field);
    g_test_add_func("/block-paint/pixels", test_block_paint);
    g_test_add_func("/progress/coalesced", test_progress);
    g_test_add_func("/progress/finish", test_progress_finish);
    return g_test_run();
}
