/*
 * replay.c -- a base image plus a prefix of a write log (replay.h).
 *
 * Pass 1 reads the whole log through the checked reader: it counts writes
 * and operations, finds the last sync point at or before K, notes the
 * operations of write K and K+1, and checks that every write's block lies
 * inside the base image.  Nothing is created before that pass succeeds.
 * Pass 2 copies the base and writes the chosen records with pwrite.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"

#define COPY_BUF (1u << 20)

static uint64_t splitmix64(uint64_t x)
{
    uint64_t z = x + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

bool lanyfs_replay_pick(uint64_t seed, uint64_t write_index)
{
    return (splitmix64(splitmix64(seed) + write_index) & 1u) != 0;
}

static enum lanyfs_err sys_fail(struct lanyfs_error *err, int e, const char *what,
                                const char *path)
{
    lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s %s: %s", what, path, strerror(e));
    if (err != NULL)
        err->sys_errno = e;
    return LANYFS_E_IO;
}

enum lanyfs_err lanyfs_replay_base_geometry(const char *path, uint32_t *blocksize,
                                            uint64_t *bytes, struct lanyfs_error *err)
{
    struct lanyfs_image *img = NULL;
    uint8_t sb[LANYFS_SECTOR_SIZE];
    enum lanyfs_err rc = lanyfs_image_open(path, 0, &img, err);
    if (rc != LANYFS_OK)
        goto out;
    *bytes = lanyfs_image_size(img);
    rc = lanyfs_image_pread(img, 0, sb, sizeof(sb), err);
    if (rc != LANYFS_OK) {
        lanyfs_error_prefix(err, "base image %s", path);
        goto out;
    }
    if (lanyfs_get32(sb + LANYFS_SB_MAGIC) != LANYFS_MAGIC) {
        rc = lanyfs_fail(err, LANYFS_E_BADMAGIC, 0, "base image %s: not a LanyFS image "
                         "(bad magic)", path);
        goto out;
    }
    unsigned bits = sb[LANYFS_SB_BLOCKBITS];
    if (bits < LANYFS_BLOCKBITS_MIN || bits > LANYFS_BLOCKBITS_MAX) {
        rc = lanyfs_fail(err, LANYFS_E_GEOMETRY, 0, "base image %s: block size exponent %u "
                         "is not 9..12", path, bits);
        goto out;
    }
    *blocksize = 1u << bits;
out:
    lanyfs_image_close(img);
    return rc;
}

static void keep_desc(char *dst, const struct lanyfs_wlog_rec *rec)
{
    size_t n = rec->len < LANYFS_REPLAY_DESC_MAX ? rec->len : LANYFS_REPLAY_DESC_MAX;
    memcpy(dst, rec->data, n);
    dst[n] = '\0';
}

/* Pass 1: check the log and fill res for K = opts->upto. */
static enum lanyfs_err scan(const char *log, uint32_t bs, uint64_t image_blocks,
                            const struct lanyfs_replay_opts *opts,
                            struct lanyfs_replay_result *res, struct lanyfs_error *err)
{
    struct lanyfs_wlog_reader *r = NULL;
    uint64_t k = opts->upto;
    enum lanyfs_err rc = lanyfs_wlog_reader_open(log, &r, err);
    if (rc != LANYFS_OK)
        goto out;
    if (lanyfs_wlog_reader_blocksize(r) != bs) {
        rc = lanyfs_fail(err, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                         "the log records %" PRIu32 "-byte blocks, the base image has %" PRIu32
                         "-byte blocks", lanyfs_wlog_reader_blocksize(r), bs);
        goto out;
    }
    char cur_desc[LANYFS_REPLAY_DESC_MAX + 1] = "";
    struct lanyfs_wlog_rec rec;
    for (;;) {
        rc = lanyfs_wlog_next(r, &rec, err);
        if (rc != LANYFS_OK)
            goto out;
        if (rec.kind == LANYFS_WLOG_END)
            break;
        if (rec.kind == LANYFS_WLOG_OP) {
            keep_desc(cur_desc, &rec);
            res->log_ops = rec.op;
        } else if (rec.kind == LANYFS_WLOG_SYNC) {
            if (k == LANYFS_REPLAY_ALL || rec.write <= k)
                res->sync_point = rec.write;
        } else if (rec.kind == LANYFS_WLOG_WRITE) {
            res->log_writes = rec.write;
            if (rec.block >= image_blocks) {
                rc = lanyfs_fail(err, LANYFS_E_RANGE, rec.block,
                                 "write %" PRIu64 " (log byte %" PRIu64 ") targets block %"
                                 PRIu64 ", beyond the base image's %" PRIu64 " blocks",
                                 rec.write, rec.offset, rec.block, image_blocks);
                goto out;
            }
            if (k == LANYFS_REPLAY_ALL || rec.write == k) {
                res->last_op = rec.op;
                memcpy(res->last_op_desc, cur_desc, sizeof(cur_desc));
            }
            if (k != LANYFS_REPLAY_ALL && rec.write == k + 1) {
                res->torn_block = rec.block;
                res->torn_op = rec.op;
                memcpy(res->torn_op_desc, cur_desc, sizeof(cur_desc));
            }
        }
    }
    if (k == LANYFS_REPLAY_ALL)
        k = res->log_writes;
out:
    if (rc == LANYFS_OK)
        res->upto = k;
    lanyfs_wlog_reader_close(r);
    return rc;
}

static enum lanyfs_err copy_base(int in, const char *base, int out, const char *outpath,
                                 struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    uint8_t *buf = malloc(COPY_BUF);
    if (buf == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    for (;;) {
        ssize_t n = read(in, buf, COPY_BUF);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = sys_fail(err, errno, "cannot read", base);
            goto out;
        }
        if (n == 0)
            break;
        ssize_t done = 0;
        while (done < n) {
            ssize_t m = write(out, buf + done, (size_t)(n - done));
            if (m < 0 && errno == EINTR)
                continue;
            if (m <= 0) {
                rc = sys_fail(err, m < 0 ? errno : ENOSPC, "cannot write", outpath);
                goto out;
            }
            done += m;
        }
    }
out:
    free(buf);
    return rc;
}

static enum lanyfs_err put_bytes(int fd, const char *path, uint64_t off, const uint8_t *p,
                                 size_t len, struct lanyfs_error *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fd, p + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return sys_fail(err, n < 0 ? errno : ENOSPC, "cannot write", path);
        done += (size_t)n;
    }
    return LANYFS_OK;
}

/* Pass 2: apply the chosen writes to fd. */
static enum lanyfs_err apply(const char *log, int fd, const char *outpath, unsigned bits,
                             const struct lanyfs_replay_opts *opts,
                             struct lanyfs_replay_result *res, struct lanyfs_error *err)
{
    struct lanyfs_wlog_reader *r = NULL;
    enum lanyfs_err rc = lanyfs_wlog_reader_open(log, &r, err);
    struct lanyfs_wlog_rec rec;
    while (rc == LANYFS_OK) {
        rc = lanyfs_wlog_next(r, &rec, err);
        if (rc != LANYFS_OK || rec.kind == LANYFS_WLOG_END)
            break;
        if (rec.kind != LANYFS_WLOG_WRITE)
            continue;
        size_t len = rec.len;
        if (rec.write > res->upto) {
            if (opts->tear == 0 || rec.write != res->upto + 1)
                break;
            len = (size_t)opts->tear * LANYFS_SECTOR_SIZE;
            res->torn_write = rec.write;
            res->torn_sectors = opts->tear;
        } else if (opts->reorder && rec.write > res->sync_point &&
                   !lanyfs_replay_pick(opts->seed, rec.write)) {
            res->dropped++;
            continue;
        } else {
            res->landed++;
        }
        rc = put_bytes(fd, outpath, rec.block << bits, rec.data, len, err);
        if (rc == LANYFS_OK && res->torn_write != 0)
            break;
    }
    lanyfs_wlog_reader_close(r);
    return rc;
}

enum lanyfs_err lanyfs_replay(const char *base, const char *log, const char *out,
                              const struct lanyfs_replay_opts *opts,
                              struct lanyfs_replay_result *result, struct lanyfs_error *err)
{
    struct lanyfs_replay_result local;
    struct lanyfs_replay_result *res = result != NULL ? result : &local;
    memset(res, 0, sizeof(*res));
    int in = -1, fd = -1;
    bool created = false;
    uint32_t bs = 0;
    uint64_t bytes = 0;
    enum lanyfs_err rc = lanyfs_replay_base_geometry(base, &bs, &bytes, err);
    if (rc != LANYFS_OK)
        goto out;
    unsigned bits = 0;
    while ((1u << bits) < bs)
        bits++;
    res->block_sectors = bs / LANYFS_SECTOR_SIZE;
    if (opts->tear != 0 && res->block_sectors == 1) {
        rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                         "a %" PRIu32 "-byte block is a single sector and cannot be torn", bs);
        goto out;
    }
    if (opts->tear != 0 && opts->tear >= res->block_sectors) {
        rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                         "a torn write lands in 1..%" PRIu32 " of its %" PRIu32 " sectors, not %"
                         PRIu32, res->block_sectors - 1, res->block_sectors, opts->tear);
        goto out;
    }
    rc = scan(log, bs, bytes >> bits, opts, res, err);
    if (rc != LANYFS_OK)
        goto out;
    if (opts->upto != LANYFS_REPLAY_ALL && opts->upto > res->log_writes) {
        rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                         "the log holds %" PRIu64 " writes, fewer than the %" PRIu64 " asked for",
                         res->log_writes, opts->upto);
        goto out;
    }
    if (opts->tear != 0 && res->upto >= res->log_writes) {
        rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                         "no write %" PRIu64 " to tear: the log holds %" PRIu64 " writes",
                         res->upto + 1, res->log_writes);
        goto out;
    }

    in = open(base, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        rc = sys_fail(err, errno, "cannot open", base);
        goto out;
    }
    struct stat sin, sout;
    if (fstat(in, &sin) != 0) {
        rc = sys_fail(err, errno, "cannot stat", base);
        goto out;
    }
    if (stat(out, &sout) == 0) {
        if (sout.st_dev == sin.st_dev && sout.st_ino == sin.st_ino) {
            rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                             "%s is the base image itself", out);
            goto out;
        }
        if (!opts->force) {
            rc = lanyfs_fail(err, LANYFS_E_EXISTS, LANYFS_NO_BLOCK,
                             "%s exists (use --force to overwrite it)", out);
            goto out;
        }
        if (!S_ISREG(sout.st_mode)) {
            rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                             "%s is not a regular file", out);
            goto out;
        }
    }
    int oflags = O_WRONLY | O_CREAT | O_CLOEXEC | (opts->force ? O_TRUNC : O_EXCL);
    fd = open(out, oflags, 0644);
    if (fd < 0) {
        rc = errno == EEXIST ? lanyfs_fail(err, LANYFS_E_EXISTS, LANYFS_NO_BLOCK,
                                           "%s exists (use --force to overwrite it)", out)
                             : sys_fail(err, errno, "cannot create", out);
        goto out;
    }
    created = true;
    if ((rc = copy_base(in, base, fd, out, err)) != LANYFS_OK)
        goto out;
    if ((rc = apply(log, fd, out, bits, opts, res, err)) != LANYFS_OK)
        goto out;
    if (close(fd) != 0) {
        fd = -1;
        rc = sys_fail(err, errno, "cannot close", out);
        goto out;
    }
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    if (in >= 0)
        close(in);
    if (rc != LANYFS_OK && created)
        unlink(out);
    return rc;
}
