/*
 * cmd_versions.c -- `lanyfs versions [--json] IMAGE PATH`: every version of
 * a path that the image still holds, newest first.
 *
 * The image is opened read-only and scanned; salvage_versions (salvage.h)
 * gives the live entry at PATH (number 0) and the deleted files of the
 * same name whose directory is PATH's or cannot be told (1, 2, ...: the
 * newest earlier one first, by modification time, then creation time, then
 * write counter).  Each line shows the number, state, entry block, write
 * counter, modification and creation times (UTC), size, and the intact
 * share: of the data blocks the size needs, those still found and still
 * the version's own.  `lanyfs salvage --versions` writes them out as
 * NAME.~N~.
 *
 * Exit status: 0 when at least one version is found, LANYFS_EXIT_NOTFOUND
 * (6) when none, 1 when the image cannot be read.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "salvage.h"
#include "scan.h"
#include "i18n.h"

/* "3/4 (75%)", "-" for an empty file. */
static void intact_text(const struct salvage_version *v, char *buf, size_t len)
{
    if (v->blocks_needed == 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%" PRIu64 "/%" PRIu64 " (%" PRIu64 "%%)", v->blocks_intact,
                 v->blocks_needed, v->blocks_intact * 100 / v->blocks_needed);
}

static void print_text(const struct salvage_version *v, size_t n)
{
    printf("%-3s %-8s %10s %6s  %-30s  %-30s %12s  %s\n", "N", "STATE", "BLOCK", "WRCNT",
           "MODIFIED", "CREATED", "SIZE", "INTACT");
    for (size_t i = 0; i < n; i++) {
        char mod[OUT_TS_LEN], cre[OUT_TS_LEN], intact[64];
        out_ts_utc(&v[i].modified, mod, sizeof(mod));
        out_ts_utc(&v[i].created, cre, sizeof(cre));
        intact_text(&v[i], intact, sizeof(intact));
        printf("%-3u %-8s %10" PRIu64 " %6u  %-30s  %-30s %12" PRIu64 "  %s%s\n", v[i].number,
               scan_entry_state_name(v[i].state), v[i].block, v[i].wrcnt, mod, cre, v[i].size,
               intact, v[i].dir_known ? "" : "  (directory unknown)");
    }
}

static void print_json(JsonBuilder *b, const char *path, const struct salvage_version *v,
                       size_t n)
{
    char *p = out_escape(path, strlen(path), 0);
    out_json_str(b, "path", p);
    g_free(p);
    json_builder_set_member_name(b, "versions");
    json_builder_begin_array(b);
    for (size_t i = 0; i < n; i++) {
        json_builder_begin_object(b);
        out_json_u64(b, "number", v[i].number);
        out_json_str(b, "state", scan_entry_state_name(v[i].state));
        out_json_u64(b, "block", v[i].block);
        out_json_u64(b, "wrcnt", v[i].wrcnt);
        out_json_ts(b, "modified", &v[i].modified);
        out_json_ts(b, "created", &v[i].created);
        out_json_u64(b, "size", v[i].size);
        out_json_u64(b, "blocks_needed", v[i].blocks_needed);
        out_json_u64(b, "blocks_intact", v[i].blocks_intact);
        out_json_bool(b, "directory_known", v[i].dir_known);
        json_builder_end_object(b);
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
    if (argc - optind != 2)
        return cli_usage_error(self, "expects IMAGE and PATH");
    const char *image = argv[optind];
    const char *path = argv[optind + 1];

    struct out_report rep;
    out_report_init(&rep);
    JsonBuilder *b = json ? out_json_begin(self->name, image) : NULL;
    struct scan_result *scan = NULL;
    struct salvage_version *v = NULL;
    size_t n = 0;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);

    if (scan_image(image, NULL, &scan, &err) != LANYFS_OK) {
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    if (salvage_versions(scan, path, &v, &n, &err) != LANYFS_OK) {
        out_report_status(&rep, LANYFS_EXIT_ERROR);
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    if (json)
        print_json(b, path, v, n);
    else if (n > 0)
        print_text(v, n);
    if (n == 0)
        out_report_add(&rep, path, LANYFS_E_NOTFOUND, LANYFS_NO_BLOCK,
                       "no version of this path is found, live or deleted");
    if (!json)
        out_flush_stdout(&rep);

out:
    free(v);
    scan_result_free(scan);
    int status = json ? out_json_end(b, &rep) : rep.exit_code;
    out_report_free(&rep);
    return status;
}

const struct cli_command cmd_versions = {
    "versions",
    N_("[--json] IMAGE PATH"),
    N_("List every version of a path the image still holds, newest first."),
    "Options:\n"
    "  --json      write one JSON document instead of text\n"
    "  -h, --help  show this help\n\n"
    "Number 0 is the live entry at PATH; 1, 2, ... are deleted files of the same\n"
    "name in the same directory (or in one that cannot be told), newest first.\n"
    "INTACT is the share of the data blocks the size needs that are still found\n"
    "and still the version's own. `lanyfs salvage --versions` writes them out\n"
    "as NAME.~N~.\n\n"
    "Exit status of versions: 0 when a version is found, 6 when none is, 1 when\n"
    "the image cannot be read.\n",
    run,
};
