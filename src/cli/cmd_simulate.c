/*
 * cmd_simulate.c -- `lanyfs simulate --seed S --ops N [options] OUTDIR`:
 * a seeded run of random operations on a fresh image, with its write log
 * and the truth about it.
 *
 * The work is done by sim_run (simulate.h); this file parses the options
 * and prints a summary (text, or JSON with --json).  OUTDIR receives
 * base.img, final.img, writes.log and truth.json; files of an earlier run
 * are only replaced with --force.  The same options always give the same
 * bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "simulate.h"

/* A size in bytes with an optional K, M or G (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return false;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift != 0)
        end++;
    if (*end != '\0' || (shift != 0 && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static int run(const struct cli_command *self, int argc, char **argv)
{
    static const struct option opts[] = {
        {"seed", required_argument, NULL, 's'},
        {"ops", required_argument, NULL, 'n'},
        {"geometry", required_argument, NULL, 'g'},
        {"size", required_argument, NULL, 'z'},
        {"driver", required_argument, NULL, 'd'},
        {"mkfs", required_argument, NULL, 'k'},
        {"mounts", required_argument, NULL, 'm'},
        {"big-files", required_argument, NULL, 'b'},
        {"force", no_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t seed = 0, ops = 0, mounts = 0, size = 0, big = 0;
    bool have_seed = false, have_ops = false, have_mounts = false, have_size = false;
    bool have_big = false, driver = false, mkfs2012 = false, force = false, json = false;
    unsigned bits = 0, addrlen = 0;
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        switch (ch) {
        case 's':
            if (!cli_parse_u64(optarg, &seed))
                return cli_usage_error(self, _("--seed expects a number, not '%s'"), optarg);
            have_seed = true;
            break;
        case 'n':
            if (!cli_parse_u64(optarg, &ops) || ops == 0 || ops > 1000000)
                return cli_usage_error(self, _("--ops expects 1..1000000, not '%s'"), optarg);
            have_ops = true;
            break;
        case 'g':
            if ((ch = cli_geometry_option(self, optarg, false, &bits, &addrlen)) != 0)
                return ch;
            break;
        case 'z':
            if (!parse_size(optarg, &size))
                return cli_usage_error(self, _("--size expects bytes (K, M, G allowed), not "
                                         "'%s'"), optarg);
            have_size = true;
            break;
        case 'd':
            if (strcmp(optarg, "2012") == 0)
                driver = true;
            else if (strcmp(optarg, "correct") == 0)
                driver = false;
            else
                return cli_usage_error(self, _("--driver expects 2012 or correct, not '%s'"),
                                       optarg);
            break;
        case 'k':
            if (strcmp(optarg, "2012") == 0)
                mkfs2012 = true;
            else if (strcmp(optarg, "correct") == 0)
                mkfs2012 = false;
            else
                return cli_usage_error(self, _("--mkfs expects 2012 or correct, not '%s'"),
                                       optarg);
            break;
        case 'm':
            if (!cli_parse_u64(optarg, &mounts) || mounts == 0)
                return cli_usage_error(self, _("--mounts expects a number >= 1, not '%s'"),
                                       optarg);
            have_mounts = true;
            break;
        case 'b':
            if (!cli_parse_u64(optarg, &big) || big > 100)
                return cli_usage_error(self, _("--big-files expects a percentage 0..100, not "
                                         "'%s'"), optarg);
            have_big = true;
            break;
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
    if (!have_seed || !have_ops)
        return cli_usage_error(self, _("--seed and --ops are required"));
    if (argc - optind != 1)
        return cli_usage_error(self, _("expects OUTDIR"));
    const char *outdir = argv[optind];

    struct sim_opts o;
    sim_opts_default(&o, seed, ops, driver);
    if (bits != 0) {
        o.blockbits = bits;
        o.addrlen = addrlen;
    }
    if (have_size)
        o.size = size;
    if (have_mounts) {
        if (mounts > ops)
            return cli_usage_error(self, _("--mounts %" PRIu64 " is more than the %" PRIu64
                                     " operations"), mounts, ops);
        o.mounts = mounts;
    }
    if (have_big)
        o.big_pct = (unsigned)big;
    o.mkfs2012 = mkfs2012;
    o.force = force;

    struct out_report rep;
    out_report_init(&rep);
    struct sim_summary sum;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    JsonBuilder *b = json ? out_json_begin(self->name, NULL) : NULL;
    enum lanyfs_err rc = sim_run(&o, outdir, &sum, &err);
    if (rc != LANYFS_OK) {
        out_report_error(&rep, NULL, &err);
    } else if (json) {
        char *esc = out_escape(outdir, strlen(outdir), 0);
        out_json_str(b, "outdir", esc);
        g_free(esc);
        out_json_u64(b, "writes", sum.writes);
        out_json_u64(b, "ops_ok", sum.ops_ok);
        out_json_u64(b, "ops_nospc", sum.ops_nospc);
        out_json_u64(b, "ops_failed", sum.ops_failed);
        out_json_u64(b, "ops_skipped", sum.ops_skipped);
        out_json_bool(b, "stopped", sum.stopped);
        out_json_u64(b, "paths", sum.paths);
        out_json_u64(b, "lost", sum.lost);
        out_json_u64(b, "late", sum.late);
        out_json_u64(b, "unfound", sum.unfound);
    } else {
        char *esc = out_escape(outdir, strlen(outdir), 0);
        printf(_("%s: %" PRIu64 " operations in %" PRIu64 " mounts (%s), %" PRIu64
                 " block writes\n"),
               esc, ops, o.mounts, driver ? _("2012 driver") : _("correct writer"), sum.writes);
        printf(_("done %" PRIu64 ", no space %" PRIu64 ", refused %" PRIu64 ", skipped %" PRIu64
                 "\n"), sum.ops_ok, sum.ops_nospc, sum.ops_failed, sum.ops_skipped);
        if (sum.stopped)
            fputs(_("the run stopped early: a mount was refused (truth.json says why)\n"), stdout);
        printf(_("final image: %" PRIu64 " paths (%" PRIu64 " listed but not found by lookup); %"
                 PRIu64 " made by the operations went missing or changed; %" PRIu64
                 " complete only after their mount\n"),
               sum.paths, sum.unfound, sum.lost, sum.late);
        g_free(esc);
        out_flush_stdout(&rep);
    }
    int status = json ? out_json_end(b, &rep) : rep.exit_code;
    out_report_free(&rep);
    return status;
}

const struct cli_command cmd_simulate = {
    "simulate",
    N_("--seed S --ops N [--geometry BLOCKSIZE:ADDRLEN] [--size BYTES] [--driver=2012] "
       "[--mounts M] [--big-files P] [--mkfs=2012] [--force] [--json] OUTDIR"),
    N_("Run seeded random operations on a new image, logging every block write."),
    N_("Options:\n"
       "  --seed S            seed of everything random (operations, bytes, clock)\n"
       "  --ops N             operations to run (mkdir, put, pwrite, truncate, unlink,\n"
       "                      rmdir, rename)\n"
       "  --geometry BS:AL    block size and address length (default 512:4)\n"
       "  --size BYTES        device size, K/M/G allowed (default 4M, at most 1G)\n"
       "  --driver=2012       write as the 2012 kernel driver does (default: correct)\n"
       "  --mounts M          spread the operations over M mounts (default N/20 + 1)\n"
       "  --big-files P       percent of new files larger than one extender maps\n"
       "                      (default 10, or 0 with --driver=2012: the driver's growth\n"
       "                      loop fills the device)\n"
       "  --mkfs=2012         format as the 2012 formatter does (default: correct)\n"
       "  -f, --force         replace the files of an earlier run in OUTDIR\n"
       "      --json          print the summary as JSON\n"
       "  -h, --help          show this help\n\n"
       "OUTDIR receives base.img (the fresh image), final.img (base plus every write),\n"
       "writes.log (the write log, docs/writelog.md) and truth.json: the operations,\n"
       "and for every path of the final image its type, size, SHA-256 and\n"
       "complete_after, the first write count K at which replaying K writes shows it\n"
       "as it ends (searched from the start of the mount that last touched it).\n"
       "Operations refused for lack of space, or by the driver's bugs, are recorded\n"
       "in truth.json and the run goes on.  With --driver=2012 a write that would run\n"
       "past the end of the driver's free list (and onto block 0) is skipped.\n"),
    run,
};
