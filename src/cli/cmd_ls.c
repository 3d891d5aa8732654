/*
 * cmd_ls.c -- `lanyfs ls [-l] [-R] [-a] [-f] [--json] IMAGE [PATH]`: list a
 * directory (the root by default), sorted by name as the core sorts.
 *
 * A PATH naming a file lists that file alone.  -l adds type, attributes,
 * size, modified time and block; -a shows entries with the hidden
 * attribute, which are skipped otherwise; -R descends into subdirectories.
 *
 * The descent uses an explicit work stack, never C recursion, so the disk
 * cannot choose the depth of the C stack.  Every directory block is
 * claimed by the first path that reaches it; a second path to it is
 * reported and not entered, which ends every cycle.  Nesting deeper than
 * DEPTH_MAX is reported and not followed.  Problems lanyfs_dir_list met
 * inside a tree (cycles, bad links, disorder, bad names) go to stderr as
 * "lanyfs: PATH: MESSAGE" and make the exit status LANYFS_EXIT_CORRUPT, but
 * everything reachable is listed.
 * Names are escaped (output.h).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define DEPTH_MAX 128 /* directory levels -R follows below PATH */

struct ls_opts {
    bool longfmt;   /* -l */
    bool recursive; /* -R */
    bool all;       /* -a */
    bool force;     /* -f */
    bool json;      /* --json */
};

/* A directory waiting to be listed. */
struct work {
    char *path;     /* display path, escaped (owned) */
    uint64_t block; /* its block */
    unsigned depth; /* levels below the starting directory */
};

struct ls_ctx {
    const struct ls_opts *o;  /* options */
    struct lanyfs_fs *fs;     /* the image */
    struct out_report *rep;   /* problems */
    JsonBuilder *b;           /* JSON output, or NULL */
    GPtrArray *stack;         /* struct work *, owned */
    GHashTable *claimed;      /* directory block -> first display path */
    unsigned listings;        /* directories printed so far */
};

static void work_free(gpointer p)
{
    struct work *w = p;
    g_free(w->path);
    g_free(w);
}

static char *child_path(const char *parent, const char *name)
{
    size_t n = strlen(parent);
    if (n > 0 && parent[n - 1] == '/')
        return g_strconcat(parent, name, NULL);
    return g_strconcat(parent, "/", name, NULL);
}

static void print_entry_text(const struct ls_ctx *c, uint64_t block, const struct lanyfs_entry *e)
{
    char *name = out_name(e);
    if (c->o->longfmt) {
        char attr[OUT_ATTR_LEN], mod[OUT_TS_LEN], size[24];
        out_attr_flags(e->attr, attr, sizeof(attr));
        struct lanyfs_ts secs = e->modified;
        secs.nsec = 0; /* whole seconds keep the column straight; stat shows the rest */
        out_ts_utc(&secs, mod, sizeof(mod));
        if (lanyfs_entry_is_file(e))
            snprintf(size, sizeof(size), "%" PRIu64, e->size);
        else
            snprintf(size, sizeof(size), "-");
        printf("%c %-5s %12s %-20s %10" PRIu64 " %s\n", lanyfs_entry_is_dir(e) ? 'd' : '-',
               attr, size, mod, block, name);
    } else {
        printf("%s\n", name);
    }
    g_free(name);
}

static void print_entry(const struct ls_ctx *c, uint64_t block, const struct lanyfs_entry *e)
{
    if (c->b != NULL) {
        json_builder_begin_object(c->b);
        out_json_entry_fields(c->b, block, e);
        json_builder_end_object(c->b);
    } else {
        print_entry_text(c, block, e);
    }
}

/* Open a listing: the header of -R in text, the object in JSON. */
static void listing_begin(struct ls_ctx *c, const char *path, bool have_block, uint64_t block,
                          bool is_dir)
{
    if (c->b != NULL) {
        json_builder_begin_object(c->b);
        out_json_str(c->b, "path", path);
        if (have_block)
            out_json_u64(c->b, "block", block);
        else
            out_json_str(c->b, "block", NULL);
        out_json_bool(c->b, "directory", is_dir);
        json_builder_set_member_name(c->b, "entries");
        json_builder_begin_array(c->b);
    } else if (c->o->recursive) {
        printf("%s%s:\n", c->listings > 0 ? "\n" : "", path);
    }
    c->listings++;
}

static void listing_end(struct ls_ctx *c)
{
    if (c->b != NULL) {
        json_builder_end_array(c->b);
        json_builder_end_object(c->b);
    }
}

static const struct {
    unsigned bit;     /* LANYFS_DIR_* */
    const char *name; /* how the summary line names it */
} dir_problem_names[] = {
    {LANYFS_DIR_CYCLE, N_("cycle")},          {LANYFS_DIR_BADPTR, N_("bad pointer")},
    {LANYFS_DIR_BADTYPE, N_("bad type")},     {LANYFS_DIR_ORDER, N_("order")},
    {LANYFS_DIR_DUP, N_("duplicate name")},   {LANYFS_DIR_READERR, N_("read error")},
    {LANYFS_DIR_BADNAME, N_("bad name")},
};

static void report_dir_problems(struct ls_ctx *c, const char *path,
                                const struct lanyfs_dirlist *l)
{
    if (l->problems == 0)
        return;
    out_report_add_shown(c->rep, path, l->first.code, l->first.block, l->first.msg);
    if ((l->problems & (l->problems - 1)) == 0)
        return; /* one kind only: the message above says it */
    /* The kinds in English for JSON, translated for stderr. */
    GString *s = g_string_new(NULL), *shown = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(dir_problem_names); i++) {
        if (l->problems & dir_problem_names[i].bit) {
            const char *sep = s->len > 0 ? ", " : "";
            g_string_append_printf(s, "%s%s", sep, dir_problem_names[i].name);
            g_string_append_printf(shown, "%s%s", sep, _(dir_problem_names[i].name));
        }
    }
    char *english = g_strconcat("problems found in this directory: ", s->str, NULL);
    char *text = g_strdup_printf(_("problems found in this directory: %s"), shown->str);
    out_report_add_l10n_shown(c->rep, path, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK, english, text);
    g_free(text);
    g_free(english);
    g_string_free(s, TRUE);
    g_string_free(shown, TRUE);
}

static void push_work(struct ls_ctx *c, char *path, uint64_t block, unsigned depth)
{
    struct work *w = g_new0(struct work, 1);
    w->path = path;
    w->block = block;
    w->depth = depth;
    g_ptr_array_add(c->stack, w);
}

/*
 * Claim directory block blk for path: true the first time; afterwards the
 * second path is reported (a directory reached twice) and false returned.
 */
static bool claim(struct ls_ctx *c, uint64_t blk, const char *path)
{
    const char *first = g_hash_table_lookup(c->claimed, &blk);
    if (first != NULL) {
        out_report_addf_shown(c->rep, path, LANYFS_E_CYCLE, blk,
                              N_("directory block %" PRIu64 " is reached again here; "
                                 "listed as %s, not entered twice"),
                              blk, first);
        return false;
    }
    gint64 *key = g_new(gint64, 1);
    *key = (gint64)blk;
    g_hash_table_insert(c->claimed, key, g_strdup(path));
    return true;
}

/*
 * List one directory from the stack; under -R queue its subdirectories,
 * each claimed when it is queued, so a directory reached twice is reported
 * at the later, deeper place and the first place keeps it.
 */
static void list_one(struct ls_ctx *c, struct work *w)
{
    struct lanyfs_dirlist l;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_dir_list(c->fs, w->block, &l, &err) != LANYFS_OK) {
        out_report_error_shown(c->rep, w->path, &err);
        return;
    }
    report_dir_problems(c, w->path, &l);
    listing_begin(c, w->path, true, w->block, true);
    size_t mark = c->stack->len;
    for (size_t i = 0; i < l.count; i++) {
        const struct lanyfs_dirent *d = &l.ents[i];
        if (!c->o->all && (d->e.attr & LANYFS_ATTR_HIDDEN))
            continue;
        print_entry(c, d->block, &d->e);
        if (!c->o->recursive || !lanyfs_entry_is_dir(&d->e))
            continue;
        char *name = out_name(&d->e);
        char *path = child_path(w->path, name);
        g_free(name);
        if (w->depth + 1 > DEPTH_MAX) {
            out_report_addf_shown(c->rep, path, LANYFS_E_CORRUPT, d->block,
                                  N_("nested deeper than %d directories; not entered"),
                                  DEPTH_MAX);
            g_free(path);
            continue;
        }
        if (claim(c, d->block, path))
            push_work(c, path, d->block, w->depth + 1);
        else
            g_free(path);
    }
    listing_end(c);
    lanyfs_dirlist_free(&l);
    /* The stack pops from its end: reverse the new items so they come out in name order. */
    for (size_t i = mark, j = c->stack->len; i + 1 < j; i++, j--) {
        gpointer t = c->stack->pdata[i];
        c->stack->pdata[i] = c->stack->pdata[j - 1];
        c->stack->pdata[j - 1] = t;
    }
}

static void list_path(struct ls_ctx *c, const char *path)
{
    uint64_t blk;
    struct lanyfs_entry e;
    if (!cli_resolve(c->rep, c->fs, path, &blk, &e))
        return;
    char *display = out_escape(path, strlen(path), 0);
    if (!lanyfs_entry_is_dir(&e)) {
        listing_begin(c, display, false, 0, false);
        print_entry(c, blk, &e);
        listing_end(c);
        g_free(display);
        return;
    }
    claim(c, blk, display);
    push_work(c, display, blk, 0);
    while (c->stack->len > 0) {
        struct work *w = g_ptr_array_steal_index(c->stack, c->stack->len - 1);
        list_one(c, w);
        work_free(w);
    }
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"long", no_argument, NULL, 'l'},
        {"recursive", no_argument, NULL, 'R'},
        {"all", no_argument, NULL, 'a'},
        {"force", no_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct ls_opts o = {0};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "lRafh", opts, NULL)) != -1) {
        switch (ch) {
        case 'l':
            o.longfmt = true;
            break;
        case 'R':
            o.recursive = true;
            break;
        case 'a':
            o.all = true;
            break;
        case 'f':
            o.force = true;
            break;
        case 'j':
            o.json = true;
            break;
        case 'h':
            return cli_help(self);
        default:
            return cli_bad_option(self, argv);
        }
    }
    int nargs = argc - optind;
    if (nargs < 1 || nargs > 2)
        return cli_usage_error(self, _("expects IMAGE and at most one PATH"));
    const char *image = argv[optind];
    const char *path = nargs == 2 ? argv[optind + 1] : "/";

    struct out_report rep;
    out_report_init(&rep);
    struct ls_ctx c = {
        .o = &o,
        .rep = &rep,
        .stack = g_ptr_array_new_with_free_func(work_free),
        .claimed = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free),
    };
    if (o.json) {
        c.b = out_json_begin(self->name, image);
        char *esc = out_escape(path, strlen(path), 0);
        out_json_str(c.b, "path", esc);
        g_free(esc);
        out_json_bool(c.b, "recursive", o.recursive);
        out_json_bool(c.b, "all", o.all);
        json_builder_set_member_name(c.b, "listings");
        json_builder_begin_array(c.b);
    }
    c.fs = cli_open(&rep, image, o.force);
    if (c.fs != NULL)
        list_path(&c, path);
    lanyfs_fs_close(c.fs);

    int rc;
    if (o.json) {
        json_builder_end_array(c.b);
        rc = out_json_end(c.b, &rep);
    } else {
        out_flush_stdout(&rep);
        rc = rep.exit_code;
    }
    g_hash_table_destroy(c.claimed);
    g_ptr_array_free(c.stack, TRUE);
    out_report_free(&rep);
    return rc;
}

const struct cli_command cmd_ls = {
    "ls",
    N_("[-l] [-R] [-a] [-f] [--json] IMAGE [PATH]"),
    N_("List a directory (the root by default), sorted by name."),
    N_("Options:\n"
       "  -l, --long       show type, attributes, size, modified time and block:\n"
       "                   TYPE ATTR SIZE MODIFIED BLOCK NAME, where TYPE is d or -,\n"
       "                   ATTR has w (no-write), x (no-exec), h (hidden), a (archive)\n"
       "                   or '-' for each, and '+' when undefined bits are set;\n"
       "                   SIZE is '-' for a directory, MODIFIED is ISO 8601 UTC\n"
       "                   to the second\n"
       "  -R, --recursive  list subdirectories too, each under a \"PATH:\" header\n"
       "  -a, --all        show entries with the hidden attribute\n"
       "  -f, --force      read an image whose superblock fails its checks\n"
       "                   (where block 0 fails, the geometry and root come from the blocks)\n"
       "      --json       write one JSON document (docs/json.md) instead of text\n"
       "  -h, --help       show this help\n\n"
       "Problems in a directory tree are reported on stderr as \"lanyfs: PATH: ...\";\n"
       "everything reachable is still listed.  A directory reached twice is entered\n"
       "once; -R follows at most 128 levels.\n"),
    run,
};
