/*
 * errors.h -- the core library's error codes and the error object.
 *
 * Codes and their strings come from one X-macro list, so they cannot drift.
 * Every fallible function returns a code (LANYFS_OK is 0) and, when given a
 * struct lanyfs_error, fills it at the origin with the code, the block it
 * concerns and a sentence that names it.  There is no global error state.
 */
#pragma once

#include <stdarg.h>
#include <stdint.h>

#define LANYFS_ERRORS(X)                                                          \
    X(LANYFS_OK, "success")                                                       \
    X(LANYFS_E_IO, "input/output error")                                          \
    X(LANYFS_E_TRUNCATED, "image is truncated")                                   \
    X(LANYFS_E_RANGE, "block number out of range")                                \
    X(LANYFS_E_BADMAGIC, "not a LanyFS image (bad magic)")                        \
    X(LANYFS_E_VERSION, "unsupported LanyFS version")                             \
    X(LANYFS_E_GEOMETRY, "unsupported or inconsistent geometry")                  \
    X(LANYFS_E_BADTYPE, "block has the wrong type")                               \
    X(LANYFS_E_CORRUPT, "corrupt structure")                                      \
    X(LANYFS_E_CYCLE, "cycle in an on-disk structure")                            \
    X(LANYFS_E_NOTFOUND, "no such file or directory")                             \
    X(LANYFS_E_NOTDIR, "not a directory")                                         \
    X(LANYFS_E_ISDIR, "is a directory")                                           \
    X(LANYFS_E_EXISTS, "file exists")                                             \
    X(LANYFS_E_NAME, "invalid name")                                              \
    X(LANYFS_E_NOTEMPTY, "directory not empty")                                   \
    X(LANYFS_E_NOSPC, "no space left on device")                                  \
    X(LANYFS_E_FBIG, "file too large")                                            \
    X(LANYFS_E_NOMEM, "out of memory")                                            \
    X(LANYFS_E_INVAL, "invalid argument")                                         \
    X(LANYFS_E_READONLY, "image is open read-only")

enum lanyfs_err {
#define LANYFS_X_ENUM(code, text) code,
    LANYFS_ERRORS(LANYFS_X_ENUM)
#undef LANYFS_X_ENUM
    LANYFS_E_COUNT
};

/* What went wrong, where.  block is LANYFS_NO_BLOCK when no block applies. */
struct lanyfs_error {
    enum lanyfs_err code; /* the error code, LANYFS_OK when none */
    uint64_t block;       /* the block concerned, or LANYFS_NO_BLOCK */
    int sys_errno;        /* errno of a failed system call, or 0 */
    char msg[320];        /* a sentence naming the block and the problem */
};

#define LANYFS_NO_BLOCK UINT64_MAX

/* The fixed text of a code; never NULL. */
const char *lanyfs_strerror(enum lanyfs_err code);

/*
 * Fill err (when not NULL) and return code, so an origin can write
 * "return lanyfs_fail(err, LANYFS_E_RANGE, blk, "...", ...)".
 */
enum lanyfs_err lanyfs_fail(struct lanyfs_error *err, enum lanyfs_err code, uint64_t block,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Reset err to "no error". */
void lanyfs_error_clear(struct lanyfs_error *err);

/* Put context in front of an existing message: "while reading /a/b: <msg>". */
void lanyfs_error_prefix(struct lanyfs_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
