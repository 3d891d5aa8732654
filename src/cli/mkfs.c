/*
 * mkfs.lanyfs -- write a new LanyFS 1.4 filesystem onto an image file or a
 * block device.
 *
 * Contract.  One DEVICE operand, the options of usage() below.  Without
 * --compat=2012 the filesystem is the correct one (lanyfs_format's default
 * mode) and the output is a short summary; with --compat=2012 the image is
 * byte for byte what the 2012 mkfs.lanyfs v1.4 wrote, and the output is the
 * lines that formatter printed, in order, on stdout, except for the banner,
 * which names this tool instead of claiming to be the 2012 release.
 *
 * --size SIZE makes DEVICE a regular file of SIZE bytes, creating it or
 * extending it with a hole; it never shrinks a file and never creates or
 * resizes anything but a regular file.  A file this run created is removed
 * again when the format fails.  A DEVICE that is mounted (itself, or the
 * file behind a mounted loop device) is refused, and block devices are
 * opened with O_EXCL.
 *
 * Exit status: 0 success, 1 operational error (I/O, a device too small or
 * in use, a refused resize), 2 usage error (bad options or operands).
 * Diagnostics go to stderr, prefixed "mkfs.lanyfs: ".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "i18n.h"
#include "lanyfs.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define CONTINUE (-1) /* parse_args: go on and format */

#define DEFAULT_ADDR_BITS 32
#define DEFAULT_BLOCK_SIZE 4096

static const char prog[] = "mkfs.lanyfs";

struct mkfs_args {
    unsigned addr_bits;   /* -a */
    unsigned block_size;  /* -b */
    const char *label;    /* -l, or the default */
    size_t label_len;     /* strlen(label) */
    bool verbose;         /* -v */
    bool have_size;       /* --size given */
    uint64_t size;        /* --size in bytes */
    bool compat2012;      /* --compat=2012 */
    const char *device;   /* the operand */
};

__attribute__((format(printf, 1, 2))) static void say_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void usage(FILE *f)
{
    fprintf(f,
            _("Usage: %s [-a BITS] [-b BYTES] [-l LABEL] [-v] [--size SIZE] [--compat=2012] "
              "DEVICE\n"
              "Write a new LanyFS 1.4 filesystem onto DEVICE (an image file or a block device).\n"
              "\n"
              "  -a, --address-bits BITS  slot address length in bits: 8..64, a multiple of 8\n"
              "                           (default %d: up to 2^32 blocks)\n"
              "  -b, --block-size BYTES   block size: 512, 1024, 2048 or 4096 (default %d;\n"
              "                           large blocks let one extender map larger files)\n"
              "  -l, --label LABEL        volume label, at most 255 bytes\n"
              "                           (default \"%s\");\n"
              "                           with --compat=2012 a label of 256 or more bytes is\n"
              "                           cut to 256 and stored without a NUL, as in 2012\n"
              "  -v, --verbose            also report each step of the format (with\n"
              "                           --compat=2012 the 2012 messages are the output)\n"
              "      --size SIZE          make DEVICE a file of SIZE bytes first: create it or\n"
              "                           extend it (never shrink; regular files only).  SIZE\n"
              "                           takes K, M, G, T (or KiB, MiB, ...: powers of 1024)\n"
              "                           or KB, MB, GB, TB (powers of 1000)\n"
              "      --compat=2012        write exactly what the 2012 mkfs.lanyfs v1.4 wrote,\n"
              "                           quirks included: chain blocks of type 0x80, every\n"
              "                           chain slot filled, and with -a 64 its 'blocks = 1'\n"
              "                           bug; print its messages (the first line names this\n"
              "                           tool, not the 2012 release)\n"
              "  -h, --help               show this help\n"
              "  -V, --version            show the version\n"
              "\n"
              "Without --compat the free list is the correct one: chain blocks of type 0x70\n"
              "with their last slot left empty, and no cap for 64-bit addresses.  A device\n"
              "larger than the address length reaches is used up to that limit; a partial\n"
              "block at its end is not used.  A mounted DEVICE is refused.\n"
              "\n"
              "Exit status: 0 success, 1 operational error, 2 usage error.\n"),
            prog, DEFAULT_ADDR_BITS, DEFAULT_BLOCK_SIZE, LANYFS_FORMAT_DEFAULT_LABEL);
}

static int usage_error(void)
{
    fprintf(stderr, _("Try '%s --help' for more information.\n"), prog);
    return EXIT_USAGE;
}

/* A plain unsigned decimal number: digits only, no sign, no blanks. */
static bool parse_u64(const char *s, const char **end, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        uint64_t digit = (uint64_t)(*p - '0');
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, digit, &v))
            return false;
    }
    *end = p;
    *out = v;
    return true;
}

static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
    const char *end;
    uint64_t v;
    if (!parse_u64(s, &end, &v) || *end != '\0' || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

/* SIZE: a number, then nothing, B, K/KiB (1024), KB (1000), and so on up to T. */
static bool parse_size(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = {
        {"", 1},
        {"B", 1},
        {"K", 1ull << 10},
        {"KiB", 1ull << 10},
        {"KB", 1000ull},
        {"M", 1ull << 20},
        {"MiB", 1ull << 20},
        {"MB", 1000ull * 1000},
        {"G", 1ull << 30},
        {"GiB", 1ull << 30},
        {"GB", 1000ull * 1000 * 1000},
        {"T", 1ull << 40},
        {"TiB", 1ull << 40},
        {"TB", 1000ull * 1000 * 1000 * 1000},
    };
    const char *end;
    uint64_t v;
    if (!parse_u64(s, &end, &v))
        return false;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(end, units[i].suffix) != 0)
            continue;
        uint64_t r;
        if (__builtin_mul_overflow(v, units[i].mult, &r) || r > (uint64_t)INT64_MAX)
            return false;
        *out = r;
        return true;
    }
    return false;
}

static int parse_args(int argc, char **argv, struct mkfs_args *a)
{
    enum { OPT_SIZE = 256, OPT_COMPAT };
    static const struct option longopts[] = {
        {"address-bits", required_argument, NULL, 'a'},
        {"block-size", required_argument, NULL, 'b'},
        {"label", required_argument, NULL, 'l'},
        {"verbose", no_argument, NULL, 'v'},
        {"size", required_argument, NULL, OPT_SIZE},
        {"compat", required_argument, NULL, OPT_COMPAT},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    a->addr_bits = DEFAULT_ADDR_BITS;
    a->block_size = DEFAULT_BLOCK_SIZE;
    a->label = LANYFS_FORMAT_DEFAULT_LABEL;

    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":a:b:l:vhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (!parse_uint(optarg, 64, &a->addr_bits) || a->addr_bits < 8 ||
                a->addr_bits % 8 != 0) {
                say_error(_("address length '%s' is not 8..64 bits in steps of 8"), optarg);
                return EXIT_USAGE;
            }
            break;
        case 'b':
            if (!parse_uint(optarg, LANYFS_BLOCKSIZE_MAX, &a->block_size) ||
                a->block_size < LANYFS_BLOCKSIZE_MIN ||
                (a->block_size & (a->block_size - 1)) != 0) {
                say_error(_("block size '%s' is not 512, 1024, 2048 or 4096 bytes"), optarg);
                return EXIT_USAGE;
            }
            break;
        case 'l':
            a->label = optarg;
            break;
        case 'v':
            a->verbose = true;
            break;
        case OPT_SIZE:
            if (!parse_size(optarg, &a->size)) {
                say_error(_("size '%s' is not a byte count (digits, then K, M, G, T, KiB, ..., "
                            "KB, ...)"),
                          optarg);
                return EXIT_USAGE;
            }
            a->have_size = true;
            break;
        case OPT_COMPAT:
            if (strcmp(optarg, "2012") != 0) {
                say_error(_("--compat knows only 2012 (the mkfs.lanyfs v1.4 release), not '%s'"),
                          optarg);
                return EXIT_USAGE;
            }
            a->compat2012 = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        case 'V':
            printf("%s (lanyfs-tools %s)\n", prog, PACKAGE_VERSION);
            return EXIT_OK;
        case ':':
            say_error(_("option '%s' needs an argument"), argv[optind - 1]);
            return usage_error();
        default:
            if (optopt != 0)
                say_error(_("unknown option '-%c'"), optopt);
            else
                say_error(_("unknown option '%s'"), argv[optind - 1]);
            return usage_error();
        }
    }
    if (optind >= argc) {
        say_error(_("no DEVICE given"));
        return usage_error();
    }
    if (optind + 1 < argc) {
        say_error(_("only one DEVICE, but '%s' follows '%s'"), argv[optind + 1], argv[optind]);
        return EXIT_USAGE;
    }
    a->device = argv[optind];
    a->label_len = strlen(a->label);
    if (!a->compat2012 && a->label_len > LANYFS_NAME_MAX) {
        say_error(_("the label is %zu bytes; at most %d fit (a 256-byte label without a NUL "
                    "is written only with --compat=2012)"),
                  a->label_len, LANYFS_NAME_MAX);
        return EXIT_USAGE;
    }
    return CONTINUE;
}

/* Undo the octal escapes (\040 and so on) of /proc/self/mounts in place. */
static void unescape_mount_field(char *s)
{
    char *w = s;
    for (const char *r = s; *r != '\0'; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* Whether the loop device dev has the file described by file behind it. */
static bool loop_backs(dev_t dev, const struct stat *file)
{
    char path[96];
    char buf[PATH_MAX + 16];
    bool found = false;
    snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/loop/backing_file", major(dev),
             minor(dev));
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    if (fgets(buf, sizeof(buf), f) != NULL) {
        buf[strcspn(buf, "\n")] = '\0';
        struct stat bs;
        found = stat(buf, &bs) == 0 && bs.st_dev == file->st_dev && bs.st_ino == file->st_ino;
    }
    fclose(f);
    return found;
}

/*
 * Whether path is mounted: a block device by its device number, an image
 * file through a loop device.  The mount point goes to where.  Anything
 * that cannot be read counts as "not mounted"; O_EXCL still guards devices.
 */
static bool is_mounted(const char *path, char *where, size_t wlen)
{
    struct stat st;
    if (stat(path, &st) != 0 || !(S_ISBLK(st.st_mode) || S_ISREG(st.st_mode)))
        return false;
    FILE *f = fopen("/proc/self/mounts", "re");
    if (f == NULL)
        return false;
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    while (!found && getline(&line, &cap, f) > 0) {
        char *save = NULL;
        char *src = strtok_r(line, " ", &save);
        char *dir = strtok_r(NULL, " ", &save);
        if (src == NULL || dir == NULL || src[0] != '/')
            continue;
        unescape_mount_field(src);
        unescape_mount_field(dir);
        struct stat ss;
        if (stat(src, &ss) != 0 || !S_ISBLK(ss.st_mode))
            continue;
        if (S_ISBLK(st.st_mode))
            found = ss.st_rdev == st.st_rdev;
        else
            found = loop_backs(ss.st_rdev, &st);
        if (found)
            snprintf(where, wlen, "%s", dir);
    }
    free(line);
    fclose(f);
    return found;
}

/*
 * --size: make path a regular file of size bytes.  *created tells whether
 * this call made the file.  Returns an exit status.
 */
static int prepare_file(const char *path, uint64_t size, bool *created)
{
    struct stat st;
    int rc = EXIT_FAIL;
    bool existed = lstat(path, &st) == 0;
    *created = false;
    /* O_NONBLOCK: a FIFO must not hang the open; it is refused below. */
    int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0) {
        say_error(_("cannot open %s: %s"), path, strerror(errno));
        return EXIT_FAIL;
    }
    *created = !existed;
    if (fstat(fd, &st) != 0) {
        say_error(_("cannot stat %s: %s"), path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        say_error(_("--size makes or extends an image file, but %s is no regular file"), path);
        goto out;
    }
    if ((uint64_t)st.st_size > size) {
        say_error(_("%s holds %jd bytes; --size %" PRIu64 " would shrink it, which is refused"),
                  path, (intmax_t)st.st_size, size);
        goto out;
    }
    if ((uint64_t)st.st_size < size && ftruncate(fd, (off_t)size) != 0) {
        say_error(_("cannot extend %s to %" PRIu64 " bytes: %s"), path, size, strerror(errno));
        goto out;
    }
    rc = EXIT_OK;
out:
    close(fd);
    return rc;
}

struct progress_ctx {
    bool compat2012;
    bool verbose;
    bool tty;
};

/* The 2012 formatter's messages, in its order and spelling. */
static void progress_2012(enum lanyfs_format_stage stage, uint64_t pos, uint64_t blocks)
{
    switch (stage) {
    case LANYFS_FORMAT_SUPER_FIRST:
        fputs("writing superblock\n", stdout);
        break;
    case LANYFS_FORMAT_ROOT:
        fputs("creating root directory\n", stdout);
        break;
    case LANYFS_FORMAT_FREE_START:
        fputs("mapping free space\n", stdout);
        break;
    case LANYFS_FORMAT_FREE_CHAIN:
        printf("\r\t%" PRIu64 "/%" PRIu64, pos, blocks);
        break;
    case LANYFS_FORMAT_FREE_DONE:
        printf("\r\t%" PRIu64 "/%" PRIu64 "\n", pos, blocks);
        break;
    case LANYFS_FORMAT_SUPER_FINAL:
        fputs("updating superblock\n", stdout);
        break;
    case LANYFS_FORMAT_DONE:
        fputs("all done\n", stdout);
        break;
    }
}

static void progress_verbose(const struct progress_ctx *p, enum lanyfs_format_stage stage,
                             uint64_t pos, uint64_t blocks)
{
    switch (stage) {
    case LANYFS_FORMAT_SUPER_FIRST:
        puts(_("Writing the provisional superblock"));
        break;
    case LANYFS_FORMAT_ROOT:
        printf(_("Writing the root directory at block %" PRIu64 "\n"), pos);
        break;
    case LANYFS_FORMAT_FREE_START:
        puts(_("Writing the free list"));
        break;
    case LANYFS_FORMAT_FREE_CHAIN:
        if (p->tty)
            printf("\r  %" PRIu64 "/%" PRIu64, pos, blocks);
        break;
    case LANYFS_FORMAT_FREE_DONE:
        if (p->tty)
            printf("\r  %" PRIu64 "/%" PRIu64 "\n", pos, blocks);
        break;
    case LANYFS_FORMAT_SUPER_FINAL:
        puts(_("Writing the final superblock"));
        break;
    case LANYFS_FORMAT_DONE:
        break;
    }
}

static void on_progress(void *ctx, enum lanyfs_format_stage stage, uint64_t pos,
                        uint64_t blocks)
{
    const struct progress_ctx *p = ctx;
    if (p->compat2012)
        progress_2012(stage, pos, blocks);
    else if (p->verbose)
        progress_verbose(p, stage, pos, blocks);
    fflush(stdout);
}

static void print_label(const struct lanyfs_format_opts *o)
{
    size_t n = o->label_len < LANYFS_NAME_FIELD ? o->label_len : LANYFS_NAME_FIELD;
    fwrite(o->label, 1, n, stdout);
    fputc('\n', stdout);
}

static void header_2012(const struct lanyfs_format_opts *o, const struct lanyfs_format_layout *l)
{
    printf("%s (lanyfs-tools %s) in 2012 compatibility mode\n", prog, PACKAGE_VERSION);
    printf("address length: %u bit\n", 8 * l->geom.addrlen);
    printf("blocksize: %" PRIu32 " bytes\n", l->geom.blocksize);
    fputs("volume label: ", stdout);
    print_label(o);
    if (l->overhead != 0)
        printf("info: device has %" PRIu64 " bytes overhead\n", l->overhead);
    if (l->capped)
        puts("warning: address length not sufficient!");
    fflush(stdout);
    if (o->label_len > LANYFS_NAME_FIELD)
        say_error(_("note: the label was cut to %d bytes, stored without a NUL"),
                  LANYFS_NAME_FIELD);
    else if (o->label_len == LANYFS_NAME_FIELD)
        say_error(_("note: the 256-byte label is stored without a NUL"));
    if (l->capped && l->geom.addrlen == LANYFS_ADDRLEN_MAX)
        say_error(_("warning: as the 2012 formatter did, this writes 'blocks = 1', an image no "
                    "driver can use; leave out --compat=2012 for a usable one"));
}

static void warnings_default(const struct lanyfs_format_layout *l)
{
    if (l->overhead != 0)
        say_error(_("note: the last %" PRIu64 " bytes of the device make no whole block of %" PRIu32
                    " bytes and are not used"),
                  l->overhead, l->geom.blocksize);
    if (l->capped)
        say_error(_("warning: %u-bit addresses reach %" PRIu64 " blocks: only %" PRIu64
                    " of the device's %" PRIu64 " blocks are used (a larger -a uses them all)"),
                  8 * l->geom.addrlen, l->cap, l->blocks, l->device_blocks);
}

static void header_default(const char *device)
{
    printf("%s (lanyfs-tools %s)\n", prog, PACKAGE_VERSION);
    printf(_("Creating a LanyFS %d.%d filesystem on %s\n"), LANYFS_VERSION_MAJOR,
           LANYFS_VERSION_MINOR, device);
    fflush(stdout);
}

/* "  LABEL:" padded to the column of the values, counting characters. */
static void summary_label(const char *label)
{
    int chars = 0;
    for (const char *p = label; *p != '\0'; p++)
        chars += ((unsigned char)*p & 0xC0) != 0x80;
    printf("  %s:%*s", label, chars + 1 < 17 ? 17 - (chars + 1) : 1, "");
}

static void summary_default(const struct lanyfs_format_opts *o,
                            const struct lanyfs_format_layout *l, const struct lanyfs_ts *now)
{
    char when[64];
    lanyfs_ts_format(now, when, sizeof(when));
    summary_label(_("block size"));
    printf(_("%" PRIu32 " bytes\n"), l->geom.blocksize);
    summary_label(_("address length"));
    printf(_("%u bit\n"), 8 * l->geom.addrlen);
    summary_label(_("blocks"));
    printf(_("%" PRIu64 " (%" PRIu64 " bytes)\n"), l->blocks, l->blocks << l->geom.blockbits);
    summary_label(_("free blocks"));
    printf(ngettext("%" PRIu64 ", in %" PRIu64 " chain block\n",
                    "%" PRIu64 ", in %" PRIu64 " chain blocks\n", l->chain_blocks),
           l->freeblocks, l->chain_blocks);
    summary_label(_("root directory"));
    printf(_("block %" PRIu64 "\n"), l->rootdir);
    summary_label(_("volume label"));
    print_label(o);
    summary_label(_("created"));
    printf("%s\n", when);
    puts(_("Done."));
}

int main(int argc, char **argv)
{
    struct mkfs_args a;
    struct lanyfs_error err;
    struct lanyfs_image *img = NULL;
    struct lanyfs_format_layout l;
    struct lanyfs_ts now;
    bool created = false;
    char where[PATH_MAX];
    cli_i18n_init();
    int rc = parse_args(argc, argv, &a);
    if (rc != CONTINUE)
        return rc;
    rc = EXIT_FAIL;
    lanyfs_error_clear(&err);

    lanyfs_ts_now(&now);
    if (a.compat2012)
        now.nsec = 0;
    struct progress_ctx pctx = {
        .compat2012 = a.compat2012,
        .verbose = a.verbose,
        .tty = isatty(STDOUT_FILENO) == 1,
    };
    struct lanyfs_format_opts o = {
        .blockbits = (unsigned)__builtin_ctz(a.block_size),
        .addrlen = a.addr_bits / 8,
        .label = a.label,
        .label_len = a.label_len,
        .compat2012 = a.compat2012,
        .now = &now,
        .progress = on_progress,
        .progress_ctx = &pctx,
    };

    if (is_mounted(a.device, where, sizeof(where))) {
        say_error(_("%s is mounted on %s; unmount it first"), a.device, where);
        goto out;
    }
    if (a.have_size) {
        /* Refuse a size too small before making any file. */
        if (lanyfs_format_plan(&o, a.size, &l, &err) != LANYFS_OK) {
            say_error(_("--size %" PRIu64 ": %s"), a.size, err.msg);
            goto out;
        }
        if (prepare_file(a.device, a.size, &created) != EXIT_OK)
            goto out;
    }
    if (lanyfs_image_open(a.device, LANYFS_IMAGE_RDWR | LANYFS_IMAGE_EXCL, &img, &err) !=
        LANYFS_OK) {
        say_error("%s", err.msg);
        goto out;
    }
    if (lanyfs_format_plan(&o, lanyfs_image_size(img), &l, &err) != LANYFS_OK) {
        say_error("%s: %s", a.device, err.msg);
        goto out;
    }
    if (a.compat2012) {
        header_2012(&o, &l);
    } else {
        warnings_default(&l);
        header_default(a.device);
    }
    if (lanyfs_format(img, &o, &err) != LANYFS_OK) {
        fflush(stdout);
        say_error("%s: %s", a.device, err.msg);
        goto out;
    }
    if (!a.compat2012)
        summary_default(&o, &l, &now);
    rc = EXIT_OK;

out:
    lanyfs_image_close(img);
    if (fflush(stdout) != 0 && rc == EXIT_OK) {
        say_error(_("cannot write the output: %s"), strerror(errno));
        rc = EXIT_FAIL;
    }
    if (rc != EXIT_OK && created)
        unlink(a.device);
    return rc;
}
