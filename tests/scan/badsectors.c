/*
 * badsectors.c -- the pread64 wrapper of badsectors.h.
 *
 * The sectors come from badsectors_set() or, until it is called, from the
 * environment: LANYFS_TEST_BAD_SECTORS holds sector numbers (512 bytes
 * each) separated by commas or spaces, as an image case's `bad-sectors`
 * file gives them to scancodes (run-case.sh).  A list that cannot be read
 * stops the program: a case must not pass by reading a healthy image.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "badsectors.h"

static uint64_t bad[BADSECTORS_MAX];
static size_t nbad;
static int loaded; /* 0: the environment not read yet */

void badsectors_set(const uint64_t *sectors, size_t n)
{
    if (n > BADSECTORS_MAX) {
        fprintf(stderr, "badsectors: %zu sectors, at most %d\n", n, BADSECTORS_MAX);
        exit(2);
    }
    for (size_t i = 0; i < n; i++)
        bad[i] = sectors[i];
    nbad = n;
    loaded = 1;
}

static void load_env(void)
{
    loaded = 1;
    const char *s = getenv("LANYFS_TEST_BAD_SECTORS");
    while (s != NULL && *s != '\0') {
        if (*s == ',' || *s == ' ' || *s == '\n' || *s == '\t') {
            s++;
            continue;
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || errno != 0 || nbad == BADSECTORS_MAX) {
            fprintf(stderr, "badsectors: LANYFS_TEST_BAD_SECTORS: cannot read \"%s\"\n", s);
            exit(2);
        }
        bad[nbad++] = v;
        s = end;
    }
}

ssize_t __real_pread64(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread64(int fd, void *buf, size_t n, off_t off);

ssize_t __wrap_pread64(int fd, void *buf, size_t n, off_t off)
{
    if (!loaded)
        load_env();
    for (size_t i = 0; i < nbad; i++) {
        uint64_t at = bad[i] * 512;
        if (off >= 0 && at < (uint64_t)off + n && at + 512 > (uint64_t)off) {
            errno = EIO;
            return -1;
        }
    }
    return __real_pread64(fd, buf, n, off);
}
