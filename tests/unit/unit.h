/*
 * unit.h -- helpers shared by the libcheck unit tests of the core.
 *
 * A deterministic random source (splitmix64, fixed seeds, so a failure
 * repeats), temporary image files that are unlinked as soon as the core has
 * opened them, the corpus directory from LANYFS_CORPUS, and one main() per
 * test program that runs the suite it names.
 */
#pragma once

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "lanyfs.h"

/*
 * Cheap assertions for inner loops: libcheck's own ck_assert_* records a
 * checkpoint through a pipe on every success, which costs a system call.
 */
#define U_ASSERT(cond, ...)              \
    do {                                 \
        if (!(cond))                     \
            ck_abort_msg(__VA_ARGS__);   \
    } while (0)
#define U_EQ(a, b)                                                                  \
    do {                                                                            \
        uint64_t u_a_ = (uint64_t)(a), u_b_ = (uint64_t)(b);                        \
        if (u_a_ != u_b_)                                                           \
            ck_abort_msg("%s == %s failed: %llu != %llu", #a, #b,                   \
                         (unsigned long long)u_a_, (unsigned long long)u_b_);       \
    } while (0)
#define U_MEMEQ(a, b, n)                                                            \
    do {                                                                            \
        if (memcmp((a), (b), (n)) != 0)                                             \
            ck_abort_msg("%s and %s differ in their %zu bytes", #a, #b, (size_t)(n)); \
    } while (0)

/* Every geometry of the format, for loops. */
#define U_FOR_GEOMETRIES(bits, alen)                                                     \
    for (unsigned bits = LANYFS_BLOCKBITS_MIN; bits <= LANYFS_BLOCKBITS_MAX; bits++)    \
        for (unsigned alen = LANYFS_ADDRLEN_MIN; alen <= LANYFS_ADDRLEN_MAX; alen++)

/* splitmix64: fast, seedable, good enough for test values. */
struct u_rng {
    uint64_t s; /* state */
};

uint64_t u_rand(struct u_rng *r);
/* Uniform in [0, n), n > 0. */
uint64_t u_below(struct u_rng *r, uint64_t n);
void u_fill(struct u_rng *r, void *buf, size_t len);

/*
 * A fresh temporary file name under $TMPDIR (or /tmp); the file exists and
 * is empty.  The caller unlinks it.  Returns a malloc'd string.
 */
char *u_tmpname(void);

/*
 * Write the fixture (fx_save, so with its free list, or fx_write when raw is
 * set, or only `bytes` bytes when bytes is not UINT64_MAX) to a temporary
 * file, open it with lanyfs_fs_open and the given flags, and unlink the
 * file.  Returns what lanyfs_fs_open returned; *fs is NULL on failure.
 */
enum lanyfs_err u_open_fx(struct fx *fx, unsigned flags, struct lanyfs_fs **fs,
                          struct lanyfs_error *err);
enum lanyfs_err u_open_fx_raw(struct fx *fx, unsigned flags, struct lanyfs_fs **fs,
                              struct lanyfs_error *err);
enum lanyfs_err u_open_fx_bytes(struct fx *fx, uint64_t bytes, unsigned flags,
                                struct lanyfs_fs **fs, struct lanyfs_error *err);

/* Open a fixture that must open cleanly (asserts it). */
struct lanyfs_fs *u_open_ok(struct fx *fx);

/* The corpus directory (LANYFS_CORPUS), or NULL when unset. */
const char *u_corpus(void);

/* Whether haystack holds needle. */
int u_contains(const char *haystack, const char *needle);

/* Run one suite built by make(), return the process exit status. */
int u_run(Suite *(*make)(void));

#define U_MAIN(make)            \
    int main(void)              \
    {                           \
        return u_run(make);     \
    }
