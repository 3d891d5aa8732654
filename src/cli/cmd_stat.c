/*
 * cmd_stat.c -- `lanyfs stat [-f] [--json] IMAGE PATH`: everything the
 * entry block of PATH says, and for a file the map of its data.
 *
 * Shown: block, type, write counter, size and blocks needed (files),
 * created and modified (ISO 8601 UTC, with the raw offset in minutes),
 * attributes, name, the tree links (left, right, and subtree or data), and
 * for a file its data runs ("file blocks 0-9 -> disk 100-109", holes marked)
 * and its extender blocks with their levels, from lanyfs_file_walk.
 *
 * The walk (the core's) walks around a broken map: a bad slot, a wrong
 * level or an extender reached twice becomes a hole run and a problem,
 * reported here as "lanyfs: PATH: MESSAGE" with exit status 7; the rest of
 * the map is still shown.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct run {
    uint64_t fblk;  /* first file block */
    uint64_t dblk;  /* first disk block, 0 for a hole */
    uint64_t count; /* blocks */
};

struct ext {
    uint64_t block; /* extender block */
    unsigned level; /* its level */
};

struct walk {
    GArray *runs; /* struct run */
    GArray *exts; /* struct ext */
};

static int on_extent(void *ctx, uint64_t fblk, uint64_t dblk, uint64_t count)
{
    struct walk *w = ctx;
    struct run r = {fblk, dblk, count};
    g_array_append_val(w->runs, r);
    return 0;
}

static int on_extender(void *ctx, uint64_t blk, unsigned level)
{
    struct walk *w = ctx;
    struct ext x = {blk, level};
    g_array_append_val(w->exts, x);
    return 0;
}

static void walk_file(struct out_report *rep, struct lanyfs_fs *fs, const char *where,
                      const struct lanyfs_entry *e, struct walk *w)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = lanyfs_file_walk(fs, e, on_extent, on_extender, w, &err);
    if (rc != LANYFS_OK)
        out_report_error(rep, where, &err);
}

#define field(...) out_field(16, __VA_ARGS__)

static void field_ts(const char *name, const struct lanyfs_ts *ts)
{
    char buf[OUT_TS_LEN];
    out_ts_full(ts, buf, sizeof(buf));
    field(name, _("%s, raw offset %d min"), buf, ts->offset);
}

static void print_text(const char *path, uint64_t blk, const struct lanyfs_entry *e,
                       const struct lanyfs_geom *g, const struct walk *w)
{
    char *name = out_name(e);
    char *shown = out_escape(path, strlen(path), 0);
    char flags[OUT_ATTR_LEN], words[OUT_ATTR_WORDS_LEN];
    out_attr_flags(e->attr, flags, sizeof(flags));
    out_attr_words(e->attr, words, sizeof(words));
    bool file = lanyfs_entry_is_file(e);

    field(_("Path"), "%s", shown);
    field(_("Block"), "%" PRIu64, blk);
    field(_("Type"), "%s (0x%02x)", _(out_type_name(e->type)), e->type);
    field(_("Write counter"), "%u", e->wrcnt);
    if (file) {
        field(_("Size"), ngettext("%" PRIu64 " byte", "%" PRIu64 " bytes", e->size), e->size);
        field(_("Blocks needed"), "%" PRIu64, lanyfs_geom_blocks_for_size(g, e->size));
    }
    field_ts(_("Created"), &e->created);
    field_ts(_("Modified"), &e->modified);
    field(_("Attributes"), "%s (%s) 0x%04x", flags, words, e->attr);
    field(_("Name"), "%s", name);
    if (e->name_len > LANYFS_NAME_MAX)
        field(_("Name length"), _("%zu bytes (no NUL within the field)"), e->name_len);
    else
        field(_("Name length"),
              lanyfs_entry_name_ok(e)
                  ? ngettext("%zu byte", "%zu bytes", e->name_len)
                  : ngettext("%zu byte (not a valid name)", "%zu bytes (not a valid name)",
                             e->name_len),
              e->name_len);
    field(_("Left"), "%" PRIu64, e->left);
    field(_("Right"), "%" PRIu64, e->right);
    if (!file) {
        field(_("Subtree"), "%" PRIu64, e->subtree);
        goto out;
    }
    field(_("Data"), e->subtree ? _("%" PRIu64 " (top extender)") : _("%" PRIu64 " (none)"),
          e->subtree);
    field(_("Extenders"), "%u", w->exts->len);
    for (guint i = 0; i < w->exts->len; i++) {
        const struct ext *x = &g_array_index(w->exts, struct ext, i);
        printf(_("  extender %" PRIu64 " level %u\n"), x->block, x->level);
    }
    field(_("Data runs"), "%u", w->runs->len);
    for (guint i = 0; i < w->runs->len; i++) {
        const struct run *r = &g_array_index(w->runs, struct run, i);
        uint64_t flast = r->fblk + (r->count - 1);
        if (r->count == 1)
            printf(_("  file block %" PRIu64), r->fblk);
        else
            printf(_("  file blocks %" PRIu64 "-%" PRIu64), r->fblk, flast);
        if (r->dblk == 0)
            fputs(_(" -> hole\n"), stdout);
        else if (r->count == 1)
            printf(_(" -> disk %" PRIu64 "\n"), r->dblk);
        else
            printf(_(" -> disk %" PRIu64 "-%" PRIu64 "\n"), r->dblk, r->dblk + (r->count - 1));
    }
out:
    g_free(shown);
    g_free(name);
}

static void print_json(JsonBuilder *b, uint64_t blk, const struct lanyfs_entry *e,
                       const struct lanyfs_geom *g, const struct walk *w)
{
    bool file = lanyfs_entry_is_file(e);
    json_builder_set_member_name(b, "entry");
    json_builder_begin_object(b);
    out_json_entry_fields(b, blk, e);
    out_json_u64(b, "name_length", e->name_len);
    if (file) {
        out_json_u64(b, "blocks_needed", lanyfs_geom_blocks_for_size(g, e->size));
    } else {
        json_builder_set_member_name(b, "blocks_needed");
        json_builder_add_null_value(b);
    }
    out_json_u64(b, "left", e->left);
    out_json_u64(b, "right", e->right);
    out_json_u64(b, file ? "data" : "subtree", e->subtree);
    json_builder_end_object(b);

    json_builder_set_member_name(b, "extenders");
    json_builder_begin_array(b);
    for (guint i = 0; i < w->exts->len; i++) {
        const struct ext *x = &g_array_index(w->exts, struct ext, i);
        json_builder_begin_object(b);
        out_json_u64(b, "block", x->block);
        out_json_int(b, "level", x->level);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "runs");
    json_builder_begin_array(b);
    for (guint i = 0; i < w->runs->len; i++) {
        const struct run *r = &g_array_index(w->runs, struct run, i);
        json_builder_begin_object(b);
        out_json_u64(b, "file_block", r->fblk);
        if (r->dblk == 0) {
            json_builder_set_member_name(b, "disk_block");
            json_builder_add_null_value(b);
        } else {
            out_json_u64(b, "disk_block", r->dblk);
        }
        out_json_u64(b, "count", r->count);
        out_json_bool(b, "hole", r->dblk == 0);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"force", no_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool force = false, json = false;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            force = true;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            return cli_help(self);
        default:
            return cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 2)
        return cli_usage_error(self, _("expects IMAGE and PATH"));
    const char *image = argv[optind];
    const char *path = argv[optind + 1];

    struct out_report rep;
    out_report_init(&rep);
    struct walk w = {
        .runs = g_array_new(FALSE, FALSE, sizeof(struct run)),
        .exts = g_array_new(FALSE, FALSE, sizeof(struct ext)),
    };
    JsonBuilder *b = NULL;
    if (json) {
        b = out_json_begin(self->name, image);
        char *esc = out_escape(path, strlen(path), 0);
        out_json_str(b, "path", esc);
        g_free(esc);
    }
    uint64_t blk;
    struct lanyfs_entry e;
    struct lanyfs_fs *fs = cli_open(&rep, image, force);
    if (fs == NULL)
        goto out;
    if (!cli_resolve(&rep, fs, path, &blk, &e))
        goto out;
    if (lanyfs_entry_is_file(&e))
        walk_file(&rep, fs, path, &e, &w);
    if (json)
        print_json(b, blk, &e, lanyfs_fs_geom(fs), &w);
    else
        print_text(path, blk, &e, lanyfs_fs_geom(fs), &w);
out:
    lanyfs_fs_close(fs);
    int rc;
    if (json) {
        rc = out_json_end(b, &rep);
    } else {
        out_flush_stdout(&rep);
        rc = rep.exit_code;
    }
    g_array_free(w.exts, TRUE);
    g_array_free(w.runs, TRUE);
    out_report_free(&rep);
    return rc;
}

const struct cli_command cmd_stat = {
    "stat",
    N_("[-f] [--json] IMAGE PATH"),
    N_("Show an entry's fields and, for a file, its data map."),
    N_("Options:\n"
       "  -f, --force  read an image whose superblock fails its checks\n"
       "               (where block 0 fails, the geometry and root come from the blocks)\n"
       "      --json   write one JSON document (docs/json.md) instead of text\n"
       "  -h, --help   show this help\n\n"
       "Times are ISO 8601 UTC with the stored offset (minutes east of UTC) beside\n"
       "them.  Data runs read \"file blocks A-B -> disk C-D\" or \"-> hole\"; the\n"
       "extenders are listed in the order the walk meets them, with their levels.\n"),
    run,
};
