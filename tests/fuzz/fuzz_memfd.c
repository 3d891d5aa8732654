/*
 * fuzz_memfd.c -- the input as a file a target can open by name: one
 * in-memory file (memfd) per process, rewritten for every input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

static int memfd = -1;
static char memfd_path[64];

const char *fuzz_memfd_image(const uint8_t *data, size_t size, int *fd)
{
    if (memfd < 0) {
        memfd = memfd_create("lanyfs-fuzz", MFD_CLOEXEC);
        FUZZ_CHECK(memfd >= 0, "memfd_create failed");
        snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
    }
    FUZZ_CHECK(ftruncate(memfd, 0) == 0, "ftruncate of the memfd failed");
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(memfd, data + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0, "write to the memfd failed");
        done += (size_t)n;
    }
    if (fd != NULL)
        *fd = memfd;
    return memfd_path;
}
