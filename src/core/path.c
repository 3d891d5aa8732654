/*
 * path.c -- resolve a slash-separated path from the root directory.
 */
#include <inttypes.h>
#include <string.h>

#include "lanyfs.h"

enum lanyfs_err lanyfs_path_resolve(struct lanyfs_fs *fs, const char *path, uint64_t *blk,
                                    struct lanyfs_entry *e, struct lanyfs_error *err)
{
    uint64_t cur = lanyfs_fs_super(fs)->rootdir;
    struct lanyfs_entry ent;
    enum lanyfs_err rc = lanyfs_fs_read_entry(fs, cur, &ent, err);
    if (rc != LANYFS_OK) {
        lanyfs_error_prefix(err, "root directory");
        return rc;
    }
    if (!lanyfs_entry_is_dir(&ent))
        return lanyfs_fail(err, LANYFS_E_NOTDIR, cur,
                           "root directory block %" PRIu64 " is a file", cur);
    const char *p = path;
    while (*p != '\0') {
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!lanyfs_entry_is_dir(&ent))
            return lanyfs_fail(err, LANYFS_E_NOTDIR, cur, "%.*s: a path component before it "
                               "is a file", (int)(p - path + len), path);
        uint64_t next;
        rc = lanyfs_dir_lookup(fs, cur, p, len, &next, &ent, err);
        if (rc == LANYFS_E_NOTFOUND)
            return lanyfs_fail(err, rc, cur, "%.*s: no such file or directory",
                               (int)(p - path + len), path);
        if (rc != LANYFS_OK)
            return rc;
        cur = next;
        p += len;
    }
    if (blk)
        *blk = cur;
    if (e)
        *e = ent;
    return LANYFS_OK;
}
