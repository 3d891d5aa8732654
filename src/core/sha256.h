/*
 * sha256.h -- SHA-256 (FIPS 180-4): undo files, scan databases, salvage
 * manifests and the tests all hash with this one implementation.
 *
 * On x86 processors with the SHA extensions (checked once, at run time)
 * the compression rounds use them; everywhere else, and when asked for
 * with lanyfs_sha256_init_portable, the portable rounds.  Both give the
 * same digests (tested against FIPS 180-4's vectors and each other).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LANYFS_SHA256_LEN 32

struct lanyfs_sha256 {
    uint32_t h[8];     /* chaining state */
    uint64_t len;      /* bytes hashed so far */
    uint8_t buf[64];   /* pending partial block */
    size_t fill;       /* bytes in buf */
    void (*rounds)(uint32_t st[8], const uint8_t *p, size_t nblocks); /* the rounds in use */
};

void lanyfs_sha256_init(struct lanyfs_sha256 *c);
/* The same, always with the portable rounds (for tests and comparisons). */
void lanyfs_sha256_init_portable(struct lanyfs_sha256 *c);
void lanyfs_sha256_update(struct lanyfs_sha256 *c, const void *data, size_t len);
void lanyfs_sha256_final(struct lanyfs_sha256 *c, uint8_t out[LANYFS_SHA256_LEN]);
/* One call: out = SHA-256(data). */
void lanyfs_sha256(const void *data, size_t len, uint8_t out[LANYFS_SHA256_LEN]);
/* 64 lowercase hex digits and a NUL into hex. */
void lanyfs_sha256_hex(const uint8_t sum[LANYFS_SHA256_LEN], char hex[65]);
/* Whether lanyfs_sha256_init picks the SHA extensions on this processor. */
bool lanyfs_sha256_accelerated(void);
