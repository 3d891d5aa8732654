/*
 * query.c -- what the scanner's unit tests ask of a scan result (query.h).
 */
#include <string.h>

#include "query.h"
#include "unit.h"

struct scan_result *scan_path(const char *path)
{
    struct scan_result *r = NULL;
    struct lanyfs_error err;
    enum lanyfs_err rc = scan_image(path, NULL, &r, &err);
    ck_assert_msg(rc == LANYFS_OK, "scan of %s failed: %s", path, err.msg);
    return r;
}

size_t count_code(const struct scan_result *r, uint32_t code)
{
    const struct scan_finding *f;
    size_t n = scan_findings(r, &f), c = 0;
    for (size_t i = 0; i < n; i++)
        c += f[i].code == code;
    return c;
}

const struct scan_entry *by_path(const struct scan_result *r, const char *path)
{
    const struct scan_entry *e;
    size_t n = scan_entries(r, &e);
    for (size_t i = 0; i < n; i++)
        if (e[i].path != NULL && strcmp(e[i].path, path) == 0)
            return &e[i];
    return NULL;
}
