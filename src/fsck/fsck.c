/*
 * fsck.c -- the command line of fsck-lanyfs (and fsck.lanyfs).
 *
 *   fsck-lanyfs [-n | -p | -a | -y | --repair] [-f] [-v] [-C FD] [--db FILE]
 *               [--json] [-z UNDOFILE | --no-undo] [--undelete] DEVICE
 *
 * Parsing only: fsck_parse_args fills struct fsck_opts and judges the
 * combinations (one answer mode, -z or --no-undo, one device); fsck_run
 * (driver.c) does the work.  Usage errors exit 16 as fsck(8) wants, after
 * a message on stderr; --help and --version print to stdout and exit 0.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "../cli/i18n.h"
#include "fsck.h"

static void usage_line(FILE *f, const char *prog)
{
    fprintf(f,
            _("Usage: %s [-n | -p | -a | -y | --repair] [-f] [-v] [-C FD] [--db FILE]\n"
              "       %*s [--json] [-z UNDOFILE | --no-undo] [--undelete] DEVICE\n"),
            prog, (int)strlen(prog), "");
}

static void help(FILE *f, const char *prog)
{
    usage_line(f, prog);
    fputs(_("Check a LanyFS 1.4 filesystem and repair it.\n"
            "\n"
            "Answers:\n"
            "  -n                open read-only and answer no to every question\n"
            "  -p, -a            fix what is safe without asking (preen); exit 4 when more\n"
            "                    is needed\n"
            "  -y, --repair      answer yes: fix everything that can be fixed\n"
            "                    (without one of these, ask on the terminal: y, n, a = yes\n"
            "                    to all, q = quit)\n"
            "\n"
            "Options:\n"
            "  -f                force a full check (every check is full; accepted for fsck)\n"
            "  -v                verbose: show facts (info findings) and every repair planned\n"
            "  -C FD             progress: 0 draws a bar on the terminal, another descriptor\n"
            "                    gets \"pass done total device\" lines\n"
            "      --db FILE     store the scan in the SQLite database FILE\n"
            "      --json        print the report as JSON (docs/fsck.md)\n"
            "  -z UNDOFILE       save the old contents of every changed block in UNDOFILE\n"
            "                    (default: ./fsck-lanyfs-DEVICENAME.undo; see lanyfs-undo)\n"
            "      --no-undo     do not write an undo file\n"
            "      --undo-overwrite  replace an existing undo file\n"
            "      --undelete    relink deleted entries whose data is intact (to their\n"
            "                    directory, or /lost+found)\n"
            "  -h, --help        show this help\n"
            "  -V, --version     show the version\n"
            "\n"
            "Exit status (a sum, as fsck(8)):\n"
            "  0  no errors\n"
            "  1  errors corrected\n"
            "  4  errors left uncorrected\n"
            "  8  operational error\n"
            " 16  usage error\n"
            " 32  cancelled by the user\n"),
          f);
}

static int usage_error(FILE *err, const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int usage_error(FILE *err, const char *prog, const char *fmt, ...)
{
    fprintf(err, "%s: ", prog);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fputc('\n', err);
    fprintf(err, _("Try '%s --help' for more information.\n"), prog);
    return FSCK_EXIT_USAGE;
}

static const char *prog_name(const char *argv0)
{
    if (argv0 == NULL || *argv0 == '\0')
        return FSCK_PROGRAM;
    const char *slash = strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
}

enum {
    OPT_REPAIR = 256,
    OPT_DB,
    OPT_JSON,
    OPT_NO_UNDO,
    OPT_UNDO_OVERWRITE,
    OPT_UNDELETE,
};

int fsck_parse_args(int argc, char **argv, struct fsck_opts *o, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"repair", no_argument, NULL, OPT_REPAIR},
        {"db", required_argument, NULL, OPT_DB},
        {"json", no_argument, NULL, OPT_JSON},
        {"no-undo", no_argument, NULL, OPT_NO_UNDO},
        {"undo-overwrite", no_argument, NULL, OPT_UNDO_OVERWRITE},
        {"undelete", no_argument, NULL, OPT_UNDELETE},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *prog = prog_name(argc > 0 ? argv[0] : NULL);
    memset(o, 0, sizeof(*o));
    o->progress_fd = -1;
    int modes = 0;
    bool have_z = false;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":npayfvC:z:rhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            o->mode = FSCK_MODE_NO;
            modes++;
            break;
        case 'p':
        case 'a':
            o->mode = FSCK_MODE_PREEN;
            modes++;
            break;
        case 'y':
        case OPT_REPAIR:
            o->mode = FSCK_MODE_YES;
            modes++;
            break;
        case 'r':
            /* e2fsck's -r: interactive, kept for compatibility. */
            break;
        case 'f':
            o->force = true;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'C': {
            char *end;
            errno = 0;
            long fd = strtol(optarg, &end, 10);
            if (errno != 0 || *optarg == '\0' || *end != '\0' || fd < 0 || fd > 1023)
                return usage_error(err, prog, _("-C needs a file descriptor number, not '%s'"),
                                   optarg);
            o->progress_fd = (int)fd;
            break;
        }
        case OPT_DB:
            o->db = optarg;
            break;
        case OPT_JSON:
            o->json = true;
            break;
        case 'z':
            o->undo_path = optarg;
            have_z = true;
            break;
        case OPT_NO_UNDO:
            o->no_undo = true;
            break;
        case OPT_UNDO_OVERWRITE:
            o->undo_overwrite = true;
            break;
        case OPT_UNDELETE:
            o->undelete = true;
            break;
        case 'h':
            help(out, prog);
            return -1;
        case 'V':
            fprintf(out, "%s %s\n", prog, PACKAGE_VERSION);
            return -1;
        case ':':
            return usage_error(err, prog, _("option '%s' needs an argument"), argv[optind - 1]);
        default:
            return usage_error(err, prog, _("unknown option '%s'"), argv[optind - 1]);
        }
    }
    if (modes > 1)
        return usage_error(err, prog, "%s", _("only one of -n, -p/-a and -y/--repair may be given"));
    if (have_z && o->no_undo)
        return usage_error(err, prog, "%s", _("-z and --no-undo exclude each other"));
    if (optind >= argc)
        return usage_error(err, prog, "%s", _("no device given"));
    if (argc - optind > 1)
        return usage_error(err, prog, _("only one device may be given; '%s' is one too many"),
                           argv[optind + 1]);
    o->device = argv[optind];
    if (*o->device == '\0')
        return usage_error(err, prog, "%s", _("the device name is empty"));
    return 0;
}

int fsck_main(int argc, char **argv)
{
    struct fsck_opts o;
    int rc = fsck_parse_args(argc, argv, &o, stdout, stderr);
    if (rc < 0)
        return FSCK_EXIT_OK;
    if (rc != 0)
        return rc;
    return fsck_run(&o);
}
