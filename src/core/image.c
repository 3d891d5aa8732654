/*
 * image.c -- byte access to an image file or a block device.
 *
 * Read-only unless asked.  Sizes come from fstat for regular files and from
 * the BLKGETSIZE64 ioctl for block devices.  Every access is a pread/pwrite
 * at a 64-bit offset, retried on EINTR and on short transfers; reaching the
 * end of the image early is LANYFS_E_TRUNCATED, an I/O failure LANYFS_E_IO,
 * both with the offset in the message.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lanyfs.h"

struct lanyfs_image {
    int fd;          /* the open file */
    uint64_t size;   /* bytes */
    bool device;     /* a block device */
    bool writable;   /* opened read-write */
    char *path;      /* as given */
};

static enum lanyfs_err sys_fail(struct lanyfs_error *err, enum lanyfs_err code, int e,
                                const char *what, const char *path)
{
    lanyfs_fail(err, code, LANYFS_NO_BLOCK, "%s %s: %s", what, path, strerror(e));
    if (err)
        err->sys_errno = e;
    return code;
}

enum lanyfs_err lanyfs_image_open(const char *path, unsigned flags, struct lanyfs_image **out,
                                  struct lanyfs_error *err)
{
    *out = NULL;
    int oflags = (flags & LANYFS_IMAGE_RDWR) ? O_RDWR : O_RDONLY;
    oflags |= O_CLOEXEC;
    struct stat st;
    if (stat(path, &st) != 0)
        return sys_fail(err, LANYFS_E_IO, errno, "cannot open", path);
    if (S_ISBLK(st.st_mode) && (flags & LANYFS_IMAGE_EXCL))
        oflags |= O_EXCL;
    int fd = open(path, oflags);
    if (fd < 0)
        return sys_fail(err, LANYFS_E_IO, errno, "cannot open", path);
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sys_fail(err, LANYFS_E_IO, e, "cannot stat", path);
    }
    uint64_t size = 0;
    bool device = false;
    if (S_ISBLK(st.st_mode)) {
        device = true;
        if (ioctl(fd, BLKGETSIZE64, &size) != 0) {
            int e = errno;
            close(fd);
            return sys_fail(err, LANYFS_E_IO, e, "cannot read the size of", path);
        }
    } else if (S_ISREG(st.st_mode)) {
        size = (uint64_t)st.st_size;
    } else {
        close(fd);
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "%s is neither a regular file nor a block device", path);
    }
    struct lanyfs_image *img = calloc(1, sizeof(*img));
    char *p = strdup(path);
    if (img == NULL || p == NULL) {
        free(img);
        free(p);
        close(fd);
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    }
    img->fd = fd;
    img->size = size;
    img->device = device;
    img->writable = (flags & LANYFS_IMAGE_RDWR) != 0;
    img->path = p;
    *out = img;
    return LANYFS_OK;
}

void lanyfs_image_close(struct lanyfs_image *img)
{
    if (img == NULL)
        return;
    close(img->fd);
    free(img->path);
    free(img);
}

uint64_t lanyfs_image_size(const struct lanyfs_image *img)
{
    return img->size;
}

const char *lanyfs_image_path(const struct lanyfs_image *img)
{
    return img->path;
}

bool lanyfs_image_is_device(const struct lanyfs_image *img)
{
    return img->device;
}

bool lanyfs_image_writable(const struct lanyfs_image *img)
{
    return img->writable;
}

enum lanyfs_err lanyfs_image_pread(struct lanyfs_image *img, uint64_t off, void *buf, size_t len,
                                   struct lanyfs_error *err)
{
    uint8_t *p = buf;
    size_t done = 0;
    if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
        return lanyfs_fail(err, LANYFS_E_RANGE, LANYFS_NO_BLOCK,
                           "offset %" PRIu64 " is beyond any image", off);
    while (done < len) {
        ssize_t n = pread(img->fd, p + done, len - done, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "read of %zu bytes at offset %" PRIu64
                        " failed: %s", len, off, strerror(e));
            if (err)
                err->sys_errno = e;
            return LANYFS_E_IO;
        }
        if (n == 0)
            return lanyfs_fail(err, LANYFS_E_TRUNCATED, LANYFS_NO_BLOCK,
                               "image ends at byte %" PRIu64 ", before the %zu bytes at offset "
                               "%" PRIu64,
                               off + done, len, off);
        done += (size_t)n;
    }
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_image_pread_sectors(struct lanyfs_image *img, uint64_t off, void *buf,
                                           size_t len, size_t *lost, struct lanyfs_error *err)
{
    uint8_t *p = buf;
    *lost = 0;
    enum lanyfs_err rc = lanyfs_image_pread(img, off, p, len, err);
    if (rc != LANYFS_E_IO)
        return rc;
    /* A 64 KiB piece at a time, and a piece that fails sector by sector:
     * a stick with a few bad sectors costs a few thousand reads, not one a
     * sector over the whole range. */
    const size_t piece = (size_t)64 << 10, sector = LANYFS_BLOCKSIZE_MIN;
    for (size_t o = 0; o < len; o += piece) {
        size_t n = len - o < piece ? len - o : piece;
        rc = lanyfs_image_pread(img, off + o, p + o, n, err);
        if (rc == LANYFS_OK)
            continue;
        if (rc != LANYFS_E_IO)
            return rc;
        for (size_t so = 0; so < n; so += sector) {
            size_t sn = n - so < sector ? n - so : sector;
            rc = lanyfs_image_pread(img, off + o + so, p + o + so, sn, NULL);
            if (rc == LANYFS_E_IO) {
                memset(p + o + so, 0, sn);
                (*lost)++;
            } else if (rc != LANYFS_OK) {
                return lanyfs_image_pread(img, off + o + so, p + o + so, sn, err);
            }
        }
    }
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_image_pwrite(struct lanyfs_image *img, uint64_t off, const void *buf,
                                    size_t len, struct lanyfs_error *err)
{
    const uint8_t *p = buf;
    size_t done = 0;
    if (!img->writable)
        return lanyfs_fail(err, LANYFS_E_READONLY, LANYFS_NO_BLOCK, "%s is open read-only",
                           img->path);
    if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
        return lanyfs_fail(err, LANYFS_E_RANGE, LANYFS_NO_BLOCK,
                           "offset %" PRIu64 " is beyond any image", off);
    while (done < len) {
        ssize_t n = pwrite(img->fd, p + done, len - done, (off_t)(off + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            lanyfs_fail(err, e == ENOSPC ? LANYFS_E_NOSPC : LANYFS_E_IO, LANYFS_NO_BLOCK,
                        "write of %zu bytes at offset %" PRIu64 " failed: %s", len, off,
                        strerror(e));
            if (err)
                err->sys_errno = e;
            return err ? err->code : LANYFS_E_IO;
        }
        done += (size_t)n;
    }
    if (!img->device && off + len > img->size)
        img->size = off + len;
    return LANYFS_OK;
}

enum lanyfs_err lanyfs_image_sync(struct lanyfs_image *img, struct lanyfs_error *err)
{
    if (fsync(img->fd) != 0) {
        int e = errno;
        lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "sync of %s failed: %s", img->path,
                    strerror(e));
        if (err)
            err->sys_errno = e;
        return LANYFS_E_IO;
    }
    return LANYFS_OK;
}
