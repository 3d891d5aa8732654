/*
 * badsectors.h -- reads of the image that fail at chosen sectors, as a
 * failing stick's do.  A program linked with badsectors.c and
 * -Wl,--wrap=pread64 has every read that covers one of those 512-byte
 * sectors fail with EIO (a 64 KiB window read fails whole; the block reads
 * around the sector succeed).
 */
#ifndef LANYFS_TEST_BADSECTORS_H
#define LANYFS_TEST_BADSECTORS_H

#include <stddef.h>
#include <stdint.h>

#define BADSECTORS_MAX 16

/* Fail the sectors sectors[0..n) from now on (n = 0: none); at most BADSECTORS_MAX. */
void badsectors_set(const uint64_t *sectors, size_t n);

#endif
