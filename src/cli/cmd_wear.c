/*
 * cmd_wear.c -- `lanyfs wear [--format text|csv|json] [--csv-table T] [--png FILE]
 * [--db FILE] [--top N] IMAGE`: how worn a stick is, from its write counters.
 *
 * The image is scanned as `lanyfs scan` scans it (read-only, a progress
 * bar on stderr when it is a terminal and the report goes as text), and
 * the wear report (src/scan/wear.h) is built from the result: the counters
 * per kind of block, their histogram, the hottest blocks and their owners,
 * counters that look wrapped or restarted, and how the blocks in use spread
 * over the device.  --format picks text (default), csv (one table, the one
 * --csv-table names: blocks, kinds or regions) or json (docs/wear.md);
 * --png also renders the block map as a heat image.  --db stores the scan
 * in an SQLite database (docs/scan-db.md), which keeps every metadata
 * block's counter, so a wear report can be made again from it.
 *
 * Exit status: 0 when the report was written, whatever it says; the status
 * of the scan's error when the image cannot be scanned (1, or 5 when too
 * short); 1 when the database or the PNG cannot be written; 2 for usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "cli.h"
#include "scan.h"
#include "scan_run.h"
#include "store.h"
#include "termbar.h"
#include "wear.h"
#include "i18n.h"

/* ---- the command ------------------------------------------------------------------ */

enum format { FMT_TEXT, FMT_CSV, FMT_JSON };

static bool parse_top(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v == 0 || v > WEAR_TOP_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"csv-table", required_argument, NULL, 'c'},
        {"png", required_argument, NULL, 'p'},
        {"db", required_argument, NULL, 'd'},
        {"top", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    enum format fmt = FMT_TEXT;
    enum wear_csv_table table = WEAR_CSV_BLOCKS;
    bool table_given = false;
    const char *png = NULL, *dbpath = NULL;
    size_t top = WEAR_TOP_DEFAULT;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "text") == 0)
                fmt = FMT_TEXT;
            else if (strcmp(optarg, "csv") == 0)
                fmt = FMT_CSV;
            else if (strcmp(optarg, "json") == 0)
                fmt = FMT_JSON;
            else
                return cli_usage_error(self, "--format takes text, csv or json");
            break;
        case 'c':
            table_given = true;
            if (strcmp(optarg, "blocks") == 0)
                table = WEAR_CSV_BLOCKS;
            else if (strcmp(optarg, "kinds") == 0)
                table = WEAR_CSV_KINDS;
            else if (strcmp(optarg, "regions") == 0)
                table = WEAR_CSV_REGIONS;
            else
                return cli_usage_error(self, "--csv-table takes blocks, kinds or regions");
            break;
        case 'p':
            png = optarg;
            break;
        case 'd':
            dbpath = optarg;
            break;
        case 't':
            if (!parse_top(optarg, &top))
                return cli_usage_error(self, "--top takes a number from 1 to %d", WEAR_TOP_MAX);
            break;
        case 'h':
            return cli_help(self);
        default:
            return cli_bad_option(self, argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(self, "expects one IMAGE");
    if (table_given && fmt != FMT_CSV)
        return cli_usage_error(self, "--csv-table goes with --format csv");
    const char *image = argv[optind];

    struct out_report rep;
    out_report_init(&rep);
    struct cli_bar bar;
    cli_bar_init(&bar, fmt == FMT_TEXT && isatty(STDERR_FILENO), 0);
    struct store_db *db = NULL;
    struct scan_result *res = NULL;
    struct wear_report *wr = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);

    /* The database first: one that cannot be used fails before the scan. */
    if (!cli_db_open(&rep, dbpath, &db))
        goto out;

    struct cli_scan_clock clk;
    cli_scan_clock_start(&clk);
    struct scan_opts so = {.progress = cli_bar_on_scan, .progress_ctx = &bar};
    enum lanyfs_err rc = scan_image(image, &so, &res, &err);
    cli_scan_clock_stop(&clk);
    if (rc != LANYFS_OK) {
        cli_bar_clear(&bar);
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    if (db != NULL && !cli_db_add_scan(&rep, db, res, image, &clk, NULL, NULL, &bar, NULL))
        goto out;
    cli_bar_clear(&bar);

    if (wear_report_build(res, &(struct wear_opts){.top = top}, &wr, &err) != LANYFS_OK) {
        out_report_status(&rep, LANYFS_EXIT_ERROR);
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    if (png != NULL && wear_write_png(png, wr, image, &err) != LANYFS_OK) {
        out_report_status(&rep, LANYFS_EXIT_ERROR);
        out_report_error(&rep, NULL, &err);
        goto out;
    }
    int w;
    switch (fmt) {
    case FMT_CSV:
        w = wear_write_csv(stdout, wr, table);
        break;
    case FMT_JSON:
        w = wear_write_json(stdout, wr, image);
        break;
    case FMT_TEXT:
    default:
        w = wear_write_text(stdout, wr, image);
        break;
    }
    if (w != 0) {
        out_report_status(&rep, LANYFS_EXIT_ERROR);
        out_report_add(&rep, "stdout", LANYFS_E_IO, LANYFS_NO_BLOCK, strerror(errno));
        goto out;
    }
    out_report_status(&rep, LANYFS_EXIT_OK);

out:
    cli_bar_clear(&bar);
    wear_report_free(wr);
    scan_result_free(res);
    cli_db_close(&rep, db);
    if (png != NULL)
        wear_png_release();
    int status = rep.exit_code;
    out_report_free(&rep);
    return status;
}

const struct cli_command cmd_wear = {
    "wear",
    N_("[--format text|csv|json] [--csv-table T] [--png FILE] [--db FILE] [--top N] IMAGE"),
    N_("Report write counters and wear."),
    "Options:\n"
    "  --format F     text (default), csv or json (docs/wear.md)\n"
    "  --csv-table T  with --format csv: blocks (one row per metadata block, the\n"
    "                 default), kinds (the distribution per kind) or regions\n"
    "  --png FILE     also draw the block map as a heat image: one cell per block\n"
    "                 (or per group of blocks on a large device), coloured by kind,\n"
    "                 brighter for higher counters, with a legend\n"
    "  --db FILE      also store the scan in the SQLite database FILE\n"
    "                 (docs/scan-db.md); it keeps every metadata block's counter\n"
    "  --top N        list the N hottest blocks (default 10)\n"
    "  -h, --help     show this help\n\n"
    "Every metadata block carries a write counter (mod 65536) that restarts\n"
    "when the block is created again. The report gives the counters per kind\n"
    "(superblock, directories, files, extenders, chain blocks, freed metadata),\n"
    "the hottest blocks and their owners, counters that look wrapped or\n"
    "restarted, and how the blocks in use spread over the device.\n\n"
    "Exit status of wear: 0 when the report was written; 1 when the image cannot\n"
    "be read or the database or PNG cannot be written, 5 for an image too short\n"
    "to hold a superblock.\n",
    run,
};
