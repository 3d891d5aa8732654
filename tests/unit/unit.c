/*
 * unit.c -- helpers shared by the unit tests (unit.h).
 */
#include "unit.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t u_rand(struct u_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t u_below(struct u_rng *r, uint64_t n)
{
    return u_rand(r) % n;
}

void u_fill(struct u_rng *r, void *buf, size_t len)
{
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)u_rand(r);
}

char *u_tmpname(void)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    ck_assert_ptr_nonnull(path);
    snprintf(path, n, "%s/lanyfs-unit-XXXXXX", dir);
    int fd = mkstemp(path);
    ck_assert_msg(fd >= 0, "mkstemp %s failed", path);
    close(fd);
    return path;
}

static enum lanyfs_err open_written(struct fx *fx, int raw, uint64_t bytes, unsigned flags,
                                    struct lanyfs_fs **fs, struct lanyfs_error *err)
{
    char *path = u_tmpname();
    int w;
    if (bytes != UINT64_MAX)
        w = raw ? fx_write_truncated(fx, path, bytes) : fx_save_truncated(fx, path, bytes);
    else
        w = raw ? fx_write(fx, path) : fx_save(fx, path);
    ck_assert_msg(w == 0, "cannot write the fixture to %s", path);
    *fs = NULL;
    lanyfs_error_clear(err);
    enum lanyfs_err rc = lanyfs_fs_open(path, flags, fs, err);
    unlink(path);
    free(path);
    return rc;
}

enum lanyfs_err u_open_fx(struct fx *fx, unsigned flags, struct lanyfs_fs **fs,
                          struct lanyfs_error *err)
{
    return open_written(fx, 0, UINT64_MAX, flags, fs, err);
}

enum lanyfs_err u_open_fx_raw(struct fx *fx, unsigned flags, struct lanyfs_fs **fs,
                              struct lanyfs_error *err)
{
    return open_written(fx, 1, UINT64_MAX, flags, fs, err);
}

enum lanyfs_err u_open_fx_bytes(struct fx *fx, uint64_t bytes, unsigned flags,
                                struct lanyfs_fs **fs, struct lanyfs_error *err)
{
    return open_written(fx, 0, bytes, flags, fs, err);
}

struct lanyfs_fs *u_open_ok(struct fx *fx)
{
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    enum lanyfs_err rc = u_open_fx(fx, 0, &fs, &err);
    ck_assert_msg(rc == LANYFS_OK, "fixture does not open: %s (%s)", lanyfs_strerror(rc),
                  err.msg);
    return fs;
}

const char *u_corpus(void)
{
    const char *c = getenv("LANYFS_CORPUS");
    return c != NULL && *c != '\0' ? c : NULL;
}

int u_contains(const char *haystack, const char *needle)
{
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

int u_run(Suite *(*make)(void))
{
    SRunner *sr = srunner_create(make());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
