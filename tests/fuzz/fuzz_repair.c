/*
 * fuzz_repair.c -- fuzz target: an image's bytes through fsck-lanyfs -y,
 * then -n on the result.
 *
 * The repair is the most dangerous parser of all: it acts on what it read.
 * The input is written to an in-memory file (memfd) and repaired with
 * fsck_run as `fsck-lanyfs -y --no-undo` would, reports going to
 * /dev/null.  Besides the sanitizers (no crash, leak or undefined
 * behaviour, however hostile the image), it checks fsck's promises:
 *
 *   - the exit status is a sum of fsck(8)'s codes, never a usage error or
 *     a cancellation (nobody was asked anything);
 *   - the repair leaves the device's size alone (it never writes past
 *     the end);
 *   - a repair that says it left the device clean (status 0 or 1) did:
 *     a second run with -n exits 0;
 *   - a run with -n never writes a byte.
 *
 * Inputs are capped at 1 MiB: images are made of blocks, and bigger ones
 * only slow the search.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsck.h"
#include "fuzz.h"

#define INPUT_MAX ((size_t)1 << 20)

static int memfd = -1;
static const char *memfd_path;
static FILE *devnull;

static uint8_t *read_all(int fd, size_t size)
{
    uint8_t *b = malloc(size ? size : 1);
    FUZZ_CHECK(b != NULL, "out of memory");
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, b + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0, "memfd read failed");
        done += (size_t)n;
    }
    return b;
}

static off_t file_size(int fd)
{
    struct stat st;
    FUZZ_CHECK(fstat(fd, &st) == 0, "fstat failed");
    return st.st_size;
}

static int run(enum fsck_mode mode)
{
    struct fsck_opts o;
    memset(&o, 0, sizeof(o));
    o.mode = mode;
    o.force = true;
    o.progress_fd = -1;
    o.no_undo = mode != FSCK_MODE_NO;
    o.device = memfd_path;
    o.out = devnull;
    o.errout = devnull;
    o.tty_in = NULL;
    o.tty_out = devnull;
    o.no_mount_check = true;
    return fsck_run(&o);
}

static bool valid_status(int st)
{
    return st >= 0 &&
           (st & ~(FSCK_EXIT_CORRECTED | FSCK_EXIT_REBOOT | FSCK_EXIT_UNCORRECTED |
                   FSCK_EXIT_ERROR)) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > INPUT_MAX)
        return 0;
    if (devnull == NULL) {
        devnull = fopen("/dev/null", "w");
        FUZZ_CHECK(devnull != NULL, "cannot open /dev/null");
    }
    memfd_path = fuzz_memfd_image(data, size, &memfd);

    /* -n first: it must not change a byte. */
    int st = run(FSCK_MODE_NO);
    FUZZ_CHECK(valid_status(st), "fsck -n exit status %d", st);
    FUZZ_CHECK(file_size(memfd) == (off_t)size, "fsck -n changed the size");
    uint8_t *after = read_all(memfd, size);
    FUZZ_CHECK(memcmp(after, data, size) == 0, "fsck -n wrote to the device");
    free(after);

    st = run(FSCK_MODE_YES);
    FUZZ_CHECK(valid_status(st), "fsck -y exit status %d", st);
    FUZZ_CHECK(file_size(memfd) == (off_t)size, "fsck -y changed the device size from %zu",
               size);
    if (st == FSCK_EXIT_OK || st == FSCK_EXIT_CORRECTED) {
        int again = run(FSCK_MODE_NO);
        FUZZ_CHECK(again == FSCK_EXIT_OK,
                   "fsck -y exited %d (clean), but fsck -n after it exited %d", st, again);
    }
    return 0;
}
