/*
 * cmd_replay.c -- `lanyfs replay BASE LOG OUT [--upto K] [--tear SECTORS]
 * [--reorder SEED] [--force] [--json]`: the image an unplug would leave.
 *
 * OUT becomes a copy of BASE with the first K writes of LOG applied (all
 * by default), write K+1 torn after SECTORS 512-byte sectors, or the writes
 * after the last sync point landing as a seeded subset; the rules are those
 * of replay.h and docs/writelog.md.  The log is checked whole before OUT is
 * created.  OUT is never overwritten without --force, never the base.  The
 * summary says what landed, and which operation the cut fell into, with
 * every operation description escaped (it comes from the log).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay.h"

static void print_text(const char *out, const struct lanyfs_replay_result *res,
                       const struct lanyfs_replay_opts *o)
{
    char *eout = out_escape(out, strlen(out), 0);
    printf(_("%s: %" PRIu64 " of %" PRIu64 " writes landed whole (K = %" PRIu64 ")\n"), eout,
           res->landed, res->log_writes, res->upto);
    g_free(eout);
    if (o->reorder)
        printf(_("reorder seed %" PRIu64 ": writes 1..%" PRIu64 " before the last sync point "
                 "landed, %" PRIu64 " of the %" PRIu64 " after it did not\n"),
               o->seed, res->sync_point, res->dropped, res->upto - res->sync_point);
    else
        printf(_("last sync point at or before K: after write %" PRIu64 "\n"), res->sync_point);
    if (res->last_op != 0) {
        char *d = out_escape(res->last_op_desc, strlen(res->last_op_desc), 0);
        printf(_("write %" PRIu64 " belongs to operation %" PRIu64 ": %s\n"), res->upto,
               res->last_op, d);
        g_free(d);
    }
    if (res->torn_write != 0) {
        char *d = out_escape(res->torn_op_desc, strlen(res->torn_op_desc), 0);
        printf(_("write %" PRIu64 " torn: %" PRIu32 " of %" PRIu32 " sectors of block %" PRIu64
                 " landed (operation %" PRIu64 ": %s)\n"),
               res->torn_write, res->torn_sectors, res->block_sectors, res->torn_block,
               res->torn_op, d);
        g_free(d);
    }
}

static void print_json(JsonBuilder *b, const struct lanyfs_replay_result *res,
                       const struct lanyfs_replay_opts *o)
{
    out_json_u64(b, "log_writes", res->log_writes);
    out_json_u64(b, "log_ops", res->log_ops);
    out_json_u64(b, "upto", res->upto);
    out_json_u64(b, "sync_point", res->sync_point);
    out_json_u64(b, "landed", res->landed);
    out_json_bool(b, "reorder", o->reorder);
    if (o->reorder) {
        out_json_u64(b, "seed", o->seed);
        out_json_u64(b, "dropped", res->dropped);
    }
    out_json_u64(b, "last_op", res->last_op);
    out_json_bytes(b, "last_op_desc", res->last_op_desc, strlen(res->last_op_desc), 0);
    json_builder_set_member_name(b, "torn");
    if (res->torn_write == 0) {
        json_builder_add_null_value(b);
        return;
    }
    json_builder_begin_object(b);
    out_json_u64(b, "write", res->torn_write);
    out_json_u64(b, "block", res->torn_block);
    out_json_u64(b, "sectors", res->torn_sectors);
    out_json_u64(b, "block_sectors", res->block_sectors);
    out_json_u64(b, "op", res->torn_op);
    out_json_bytes(b, "op_desc", res->torn_op_desc, strlen(res->torn_op_desc), 0);
    json_builder_end_object(b);
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"upto", required_argument, NULL, 'k'},
        {"tear", required_argument, NULL, 't'},
        {"reorder", required_argument, NULL, 'r'},
        {"force", no_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct lanyfs_replay_opts o = {.upto = LANYFS_REPLAY_ALL};
    bool json = false;
    uint64_t v;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        switch (ch) {
        case 'k':
            if (!cli_parse_u64(optarg, &o.upto) || o.upto == LANYFS_REPLAY_ALL)
                return cli_usage_error(self, _("--upto expects a number of writes, not '%s'"),
                                       optarg);
            break;
        case 't':
            if (!cli_parse_u64(optarg, &v) || v == 0 || v > 7)
                return cli_usage_error(self, _("--tear expects 1..7 sectors, not '%s'"), optarg);
            o.tear = (uint32_t)v;
            break;
        case 'r':
            if (!cli_parse_u64(optarg, &o.seed))
                return cli_usage_error(self, _("--reorder expects a seed (a number), not '%s'"),
                                       optarg);
            o.reorder = true;
            break;
        case 'f':
            o.force = true;
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
    if (argc - optind != 3)
        return cli_usage_error(self, _("expects BASE, LOG and OUT"));
    const char *base = argv[optind], *log = argv[optind + 1], *out = argv[optind + 2];

    struct out_report rep;
    out_report_init(&rep);
    struct lanyfs_replay_result res;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    JsonBuilder *b = json ? out_json_begin(self->name, base) : NULL;
    enum lanyfs_err rc = lanyfs_replay(base, log, out, &o, &res, &err);
    if (rc != LANYFS_OK) {
        out_report_error(&rep, NULL, &err);
    } else if (json) {
        print_json(b, &res, &o);
    } else {
        print_text(out, &res, &o);
        out_flush_stdout(&rep);
    }
    int status = json ? out_json_end(b, &rep) : rep.exit_code;
    out_report_free(&rep);
    return status;
}

const struct cli_command cmd_replay = {
    "replay",
    N_("BASE LOG OUT [--upto K] [--tear SECTORS] [--reorder SEED] [--force] [--json]"),
    N_("Rebuild the image a write log leaves after K writes, torn or reordered."),
    N_("Options:\n"
       "  --upto K          apply writes 1..K of the log (default: all)\n"
       "  --tear SECTORS    write K+1 lands in its first SECTORS 512-byte sectors only\n"
       "                    (1 .. sectors per block - 1)\n"
       "  --reorder SEED    the writes after the last sync point at or before K land\n"
       "                    as a subset picked by SEED, not as a prefix\n"
       "  -f, --force       overwrite OUT when it exists\n"
       "      --json        print the summary as JSON\n"
       "  -h, --help        show this help\n\n"
       "OUT is a copy of BASE with the chosen writes applied.  The whole log is checked\n"
       "before OUT is created; a log whose block size is not BASE's is refused, and so\n"
       "is a write beyond BASE's end.  The reorder rule (docs/writelog.md): with S the\n"
       "write count of the last sync point at or before K, writes 1..S land, and each\n"
       "write i in S+1..K lands when the seeded hash of i is odd.\n"),
    run,
};
