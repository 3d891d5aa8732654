/*
 * cmd_info.c -- `lanyfs info [--json] IMAGE`: the superblock, field by
 * field, and the geometry that follows from it, in the manner of
 * `dumpe2fs -h`.
 *
 * The image is opened with LANYFS_OPEN_FORCE, so that a superblock failing
 * its checks is still shown; its problems follow the fields as "Problem:"
 * lines (non-fatal ones marked so), and the exit status is that of the first
 * fatal one, or 7 (corrupt structure) when every problem is non-fatal.  Derived values (slots, largest files, blocks in the image) are
 * only computed from a block size and address length inside the format's
 * range; otherwise they are shown as unknown.  Every byte string from the
 * disk (label, magic) is escaped.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define LEVELS_SHOWN 4 /* largest file for tree levels 0..3 */

/* Everything derived from the superblock and the image size. */
struct derived {
    bool geom_ok;                   /* block size and address length are valid */
    struct lanyfs_geom g;           /* valid when geom_ok */
    uint64_t image_bytes;           /* size of the image */
    uint64_t image_blocks;          /* whole blocks in the image (geom_ok) */
    uint64_t overhead;              /* bytes after the last whole block (geom_ok) */
    uint64_t lf_blocks[LEVELS_SHOWN]; /* largest file per tree level, in blocks */
    uint64_t lf_bytes[LEVELS_SHOWN];  /* the same in bytes, saturated */
};

static void derive(struct lanyfs_fs *fs, struct derived *d)
{
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    memset(d, 0, sizeof(*d));
    d->image_bytes = lanyfs_image_size(lanyfs_fs_image(fs));
    d->geom_ok = lanyfs_geom_init(&d->g, sb->blockbits, sb->addrlen, sb->blocks, NULL) ==
                 LANYFS_OK;
    if (!d->geom_ok)
        return;
    d->image_blocks = d->image_bytes >> d->g.blockbits;
    d->overhead = d->image_bytes & (d->g.blocksize - 1);
    for (unsigned l = 0; l < LEVELS_SHOWN; l++) {
        d->lf_blocks[l] = lanyfs_geom_tree_capacity(&d->g, l);
        if (__builtin_mul_overflow(d->lf_blocks[l], (uint64_t)d->g.blocksize, &d->lf_bytes[l]))
            d->lf_bytes[l] = UINT64_MAX;
    }
}

static bool reserved_zero(const struct lanyfs_super *sb)
{
    static const uint8_t zero[8];
    return sb->res1 == 0 && memcmp(sb->res_odd, zero, sizeof(sb->res_odd)) == 0 &&
           memcmp(sb->res112, zero, sizeof(sb->res112)) == 0;
}

#define field(...) out_field(26, __VA_ARGS__)

static void field_ts(const char *name, const struct lanyfs_ts *ts)
{
    char buf[OUT_TS_LEN];
    out_ts_full(ts, buf, sizeof(buf));
    field(name, "%s", buf);
}

static void print_text(const struct lanyfs_super *sb, const struct derived *d,
                       const struct lanyfs_sb_problem *pr, size_t npr)
{
    uint8_t magic[4];
    lanyfs_put32(magic, sb->magic);
    char *magic_esc = out_escape(magic, sizeof(magic), 0);
    char *label = out_escape(sb->label, strnlen((const char *)sb->label, sizeof(sb->label)), 0);

    field(_("Block type"), "0x%02x (%s)", sb->type, _(out_type_name(sb->type)));
    field(_("Write counter"), "%u", sb->wrcnt);
    field(_("Magic number"), "0x%08" PRIx32 " (\"%s\")", sb->magic, magic_esc);
    field(_("Version"), "%u.%u", sb->major, sb->minor);
    if (d->geom_ok)
        field(_("Block size"), _("%" PRIu32 " bytes (exponent %u)"), d->g.blocksize,
              sb->blockbits);
    else
        field(_("Block size"), _("exponent %u"), sb->blockbits);
    field(_("Address length"), ngettext("%u byte (%u bit)", "%u bytes (%u bit)", sb->addrlen),
          sb->addrlen, sb->addrlen * 8u);
    field(_("Root directory"), "%" PRIu64, sb->rootdir);
    field(_("Blocks"), "%" PRIu64, sb->blocks);
    field(_("Free head"), "%" PRIu64, sb->freehead);
    field(_("Free tail"), "%" PRIu64, sb->freetail);
    field(_("Free blocks"), "%" PRIu64, sb->freeblocks);
    field_ts(_("Created"), &sb->created);
    field_ts(_("Updated"), &sb->updated);
    field_ts(_("Checked"), &sb->checked);
    field(_("Bad blocks list"), sb->badblocks ? "%" PRIu64 : _("%" PRIu64 " (none)"),
          sb->badblocks);
    field(_("Volume label"), "%s", label);
    field(_("Reserved bytes"), "%s", reserved_zero(sb) ? _("zero") : _("not zero"));
    if (d->geom_ok) {
        field(_("Chain slots per block"), "%" PRIu32, d->g.chainmax);
        field(_("Extender slots"), "%" PRIu32, d->g.extmax);
        for (unsigned l = 0; l < LEVELS_SHOWN; l++) {
            char name[40];
            snprintf(name, sizeof(name), _("Largest file, level %u"), l);
            field(name,
                  d->lf_bytes[l] == UINT64_MAX
                      ? _("%" PRIu64 " blocks (%" PRIu64 " bytes or more)")
                      : _("%" PRIu64 " blocks (%" PRIu64 " bytes)"),
                  d->lf_blocks[l], d->lf_bytes[l]);
        }
    } else {
        field(_("Chain slots per block"), _("unknown (invalid geometry)"));
        field(_("Extender slots"), _("unknown (invalid geometry)"));
    }
    field(_("Image size"), _("%" PRIu64 " bytes"), d->image_bytes);
    if (d->geom_ok) {
        if (d->image_blocks > sb->blocks)
            field(_("Image blocks"), _("%" PRIu64 " (%" PRIu64 " more than 'blocks')"),
                  d->image_blocks, d->image_blocks - sb->blocks);
        else if (d->image_blocks < sb->blocks)
            field(_("Image blocks"), _("%" PRIu64 " (%" PRIu64 " fewer than 'blocks')"),
                  d->image_blocks, sb->blocks - d->image_blocks);
        else
            field(_("Image blocks"), "%" PRIu64, d->image_blocks);
        field(_("Overhead"), _("%" PRIu64 " bytes"), d->overhead);
    } else {
        field(_("Image blocks"), _("unknown (invalid geometry)"));
        field(_("Overhead"), _("unknown (invalid geometry)"));
    }
    for (size_t i = 0; i < npr; i++) {
        char *msg = out_escape(pr[i].msg, strlen(pr[i].msg), 0);
        printf(pr[i].fatal ? _("Problem: %s\n") : _("Problem: %s (not fatal)\n"), msg);
        g_free(msg);
    }
    g_free(label);
    g_free(magic_esc);
}

static void json_opt_u64(JsonBuilder *b, const char *key, bool have, uint64_t v)
{
    if (have) {
        out_json_u64(b, key, v);
    } else {
        json_builder_set_member_name(b, key);
        json_builder_add_null_value(b);
    }
}

static void print_json(JsonBuilder *b, const struct lanyfs_super *sb, const struct derived *d,
                       const struct lanyfs_sb_problem *pr, size_t npr)
{
    json_builder_set_member_name(b, "superblock");
    json_builder_begin_object(b);
    out_json_int(b, "type", sb->type);
    out_json_int(b, "wrcnt", sb->wrcnt);
    out_json_u64(b, "magic", sb->magic);
    out_json_bool(b, "magic_ok", sb->magic == LANYFS_MAGIC);
    out_json_int(b, "version_major", sb->major);
    out_json_int(b, "version_minor", sb->minor);
    out_json_int(b, "blocksize_exponent", sb->blockbits);
    json_opt_u64(b, "blocksize", d->geom_ok, d->g.blocksize);
    out_json_int(b, "addrlen", sb->addrlen);
    out_json_u64(b, "rootdir", sb->rootdir);
    out_json_u64(b, "blocks", sb->blocks);
    out_json_u64(b, "freehead", sb->freehead);
    out_json_u64(b, "freetail", sb->freetail);
    out_json_u64(b, "freeblocks", sb->freeblocks);
    out_json_ts(b, "created", &sb->created);
    out_json_ts(b, "updated", &sb->updated);
    out_json_ts(b, "checked", &sb->checked);
    out_json_u64(b, "badblocks", sb->badblocks);
    out_json_bytes(b, "label", sb->label, strnlen((const char *)sb->label, sizeof(sb->label)),
                   0);
    out_json_bool(b, "reserved_zero", reserved_zero(sb));
    json_builder_end_object(b);

    json_builder_set_member_name(b, "geometry");
    json_builder_begin_object(b);
    out_json_bool(b, "valid", d->geom_ok);
    json_opt_u64(b, "chain_slots", d->geom_ok, d->g.chainmax);
    json_opt_u64(b, "extender_slots", d->geom_ok, d->g.extmax);
    json_builder_set_member_name(b, "largest_file");
    json_builder_begin_array(b);
    for (unsigned l = 0; d->geom_ok && l < LEVELS_SHOWN; l++) {
        json_builder_begin_object(b);
        out_json_int(b, "level", l);
        out_json_u64(b, "blocks", d->lf_blocks[l]);
        out_json_u64(b, "bytes", d->lf_bytes[l]);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    out_json_u64(b, "image_bytes", d->image_bytes);
    json_opt_u64(b, "image_blocks", d->geom_ok, d->image_blocks);
    json_opt_u64(b, "overhead_bytes", d->geom_ok, d->overhead);
    json_builder_end_object(b);

    json_builder_set_member_name(b, "superblock_problems");
    json_builder_begin_array(b);
    for (size_t i = 0; i < npr; i++) {
        char *msg = out_escape(pr[i].msg, strlen(pr[i].msg), 0);
        json_builder_begin_object(b);
        out_json_str(b, "code", out_err_name(pr[i].code));
        out_json_str(b, "field", pr[i].field);
        out_json_bool(b, "fatal", pr[i].fatal);
        out_json_str(b, "message", msg);
        json_builder_end_object(b);
        g_free(msg);
    }
    json_builder_end_array(b);
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'h':
            return cli_help(self);
        default:
            return cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(self, _("expects one IMAGE"));
    const char *image = argv[optind];

    struct out_report rep;
    out_report_init(&rep);
    JsonBuilder *b = json ? out_json_begin(self->name, image) : NULL;
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_fs_open(image, LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0, &fs, &err) != LANYFS_OK) {
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    /* Zeros in place of the fields are nothing to show. */
    if (lanyfs_fs_super_lost(fs)) {
        lanyfs_fail(&err, LANYFS_E_IO, 0,
                    _("%s: the superblock cannot be read (block 0's first sector fails); "
                      "lanyfs scan infers the geometry from the other blocks"),
                    image);
        out_report_error(&rep, NULL, &err);
        goto out;
    }

    struct derived d;
    derive(fs, &d);
    const struct lanyfs_super *sb = lanyfs_fs_super(fs);
    const struct lanyfs_sb_problem *pr;
    size_t npr = lanyfs_fs_problems(fs, &pr);
    for (size_t i = 0; i < npr; i++) {
        if (pr[i].fatal) {
            out_report_status(&rep, out_exit_for_err(pr[i].code));
            break;
        }
    }
    if (npr > 0)
        out_report_status(&rep, LANYFS_EXIT_CORRUPT); /* only problems that are not fatal */
    if (json) {
        print_json(b, sb, &d, pr, npr);
    } else {
        print_text(sb, &d, pr, npr);
        out_flush_stdout(&rep);
    }

out:
    lanyfs_fs_close(fs);
    int rc = json ? out_json_end(b, &rep) : rep.exit_code;
    out_report_free(&rep);
    return rc;
}

const struct cli_command cmd_info = {
    "info",
    N_("[--json] IMAGE"),
    N_("Show the superblock, its problems and the geometry it implies."),
    N_("Options:\n"
       "  --json      write one JSON document (docs/json.md) instead of text\n"
       "  -h, --help  show this help\n\n"
       "The image is shown even when its superblock fails the checks; each problem\n"
       "follows the fields as a \"Problem:\" line, and the exit status is that of\n"
       "the first fatal one, or 7 when none of them is fatal.\n"),
    run,
};
