/*
 * writelog.c -- recording block writes, sync points and operations, and
 * reading them back (writelog.h, docs/writelog.md).
 *
 * Layout, all integers little-endian:
 *
 *   header (32 bytes): "LANYWLOG", le32 version (1), le32 blocksize,
 *                      le32 addrlen, le32 reserved (0), le64 blocks
 *   record:            u8 kind, 3 reserved bytes (0), le32 payload length,
 *                      then the payload:
 *     WRITE   (1): le64 write index, le64 op index, le64 block, block bytes
 *     SYNC    (2): le64 writes before
 *     OP      (3): le64 op index, le64 writes before, description bytes
 *     SESSION (4): le64 writes before, le64 ops before
 *
 * The writer collects records in a buffer and writes them with pwrite at
 * its own offset, at the latest when a block write is recorded, so every
 * write record is in the log file before its block is in the image; the
 * reader reads through a FILE or a memory buffer, one record
 * at a time, into a buffer sized from the header's block size.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writelog.h"

#define REC_HDR 8
#define WRITE_FIXED 24
#define SYNC_LEN 8
#define OP_FIXED 16
#define SESSION_LEN 16
#define OUTBUF_SIZE (64u * 1024u)

/* ---- shared ---------------------------------------------------------------- */

static bool blocksize_ok(uint32_t bs)
{
    return bs >= LANYFS_BLOCKSIZE_MIN && bs <= LANYFS_BLOCKSIZE_MAX && (bs & (bs - 1)) == 0;
}

static unsigned bits_of(uint32_t bs)
{
    unsigned b = 0;
    while ((1u << b) < bs)
        b++;
    return b;
}

/* ---- reading --------------------------------------------------------------- */

struct lanyfs_wlog_reader {
    FILE *f;                /* owned, or NULL for memory */
    const uint8_t *mem;     /* borrowed, or NULL */
    size_t mem_len;         /* bytes at mem */
    size_t mem_pos;         /* read position in mem */
    uint64_t pos;           /* bytes consumed so far */
    uint32_t blocksize;     /* from the header */
    unsigned addrlen;       /* from the header */
    uint64_t blocks;        /* from the header */
    uint64_t writes;        /* writes read so far */
    uint64_t ops;           /* operations read so far */
    uint8_t *buf;           /* one payload: WRITE_FIXED + blocksize or OP_FIXED + DESC_MAX */
    size_t buf_size;        /* bytes at buf */
    struct lanyfs_error failed; /* sticky error, code LANYFS_OK while none */
    char name[64];          /* "log" or the path's last 60 bytes, for messages */
};

/* Read up to n bytes; *got receives how many (less only at the end). */
static enum lanyfs_err src_read(struct lanyfs_wlog_reader *r, void *dst, size_t n, size_t *got,
                                struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    *got = 0;
    if (r->mem != NULL || r->f == NULL) {
        size_t left = r->mem_len - r->mem_pos;
        size_t take = n < left ? n : left;
        if (take > 0)
            memcpy(dst, r->mem + r->mem_pos, take);
        r->mem_pos += take;
        *got = take;
        goto out;
    }
    *got = fread(dst, 1, n, r->f);
    if (*got < n && ferror(r->f)) {
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK,
                         "%s: read error at byte %" PRIu64 ": %s", r->name, r->pos + *got,
                         strerror(errno));
        goto out;
    }
out:
    r->pos += *got;
    return rc;
}

/* Read exactly n bytes of a record that started at start. */
static enum lanyfs_err src_need(struct lanyfs_wlog_reader *r, void *dst, size_t n,
                                uint64_t start, const char *what, struct lanyfs_error *err)
{
    size_t got;
    enum lanyfs_err rc = src_read(r, dst, n, &got, err);
    if (rc == LANYFS_OK && got < n)
        rc = lanyfs_fail(err, LANYFS_E_TRUNCATED, LANYFS_NO_BLOCK,
                         "%s: the log ends inside the %s at byte %" PRIu64 " (%zu of %zu bytes)",
                         r->name, what, start, got, n);
    return rc;
}

static enum lanyfs_err reader_header(struct lanyfs_wlog_reader *r, struct lanyfs_error *err)
{
    uint8_t h[LANYFS_WLOG_HEADER_SIZE];
    size_t got;
    enum lanyfs_err rc = src_read(r, h, sizeof(h), &got, err);
    if (rc != LANYFS_OK)
        goto out;
    if (got >= 8 && memcmp(h, LANYFS_WLOG_MAGIC, 8) != 0) {
        rc = lanyfs_fail(err, LANYFS_E_BADMAGIC, LANYFS_NO_BLOCK,
                         "%s: not a LanyFS write log (bad magic)", r->name);
        goto out;
    }
    if (got < sizeof(h)) {
        rc = lanyfs_fail(err, LANYFS_E_TRUNCATED, LANYFS_NO_BLOCK,
                         "%s: the log ends inside its header (%zu of %d bytes)", r->name, got,
                         LANYFS_WLOG_HEADER_SIZE);
        goto out;
    }
    uint32_t version = lanyfs_get32(h + 8);
    if (version != LANYFS_WLOG_VERSION) {
        rc = lanyfs_fail(err, LANYFS_E_VERSION, LANYFS_NO_BLOCK,
                         "%s: write log version %" PRIu32 " is not supported (only %d)", r->name,
                         version, LANYFS_WLOG_VERSION);
        goto out;
    }
    uint32_t bs = lanyfs_get32(h + 12);
    uint32_t al = lanyfs_get32(h + 16);
    if (!blocksize_ok(bs) || al < LANYFS_ADDRLEN_MIN || al > LANYFS_ADDRLEN_MAX) {
        rc = lanyfs_fail(err, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                         "%s: the header names block size %" PRIu32 " and address length %" PRIu32
                         ", which LanyFS does not have", r->name, bs, al);
        goto out;
    }
    if (lanyfs_get32(h + 20) != 0) {
        rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                         "%s: reserved header bytes 20..23 are not zero", r->name);
        goto out;
    }
    r->blocksize = bs;
    r->addrlen = al;
    r->blocks = lanyfs_get64(h + 24);
    size_t a = (size_t)WRITE_FIXED + bs, b = (size_t)OP_FIXED + LANYFS_WLOG_DESC_MAX;
    r->buf_size = a > b ? a : b;
    r->buf = malloc(r->buf_size);
    if (r->buf == NULL)
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
out:
    return rc;
}

/* path, or "..." and its last bytes, into name (64 bytes) for messages. */
static void log_name(char name[64], const char *path)
{
    size_t n = strlen(path), cap = 63;
    if (n > cap) {
        snprintf(name, 64, "...%s", path + n - (cap - 3));
        return;
    }
    memcpy(name, path, n + 1);
}

enum lanyfs_err lanyfs_wlog_reader_open(const char *path, struct lanyfs_wlog_reader **out,
                                        struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    *out = NULL;
    struct lanyfs_wlog_reader *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto fail;
    }
    log_name(r->name, path);
    r->f = fopen(path, "rbe");
    if (r->f == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot open %s: %s", r->name,
                         strerror(errno));
        if (err != NULL)
            err->sys_errno = errno;
        goto fail;
    }
    rc = reader_header(r, err);
    if (rc != LANYFS_OK)
        goto fail;
    lanyfs_error_clear(&r->failed);
    *out = r;
    return LANYFS_OK;
fail:
    lanyfs_wlog_reader_close(r);
    return rc;
}

enum lanyfs_err lanyfs_wlog_reader_open_mem(const void *buf, size_t len,
                                            struct lanyfs_wlog_reader **out,
                                            struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    *out = NULL;
    struct lanyfs_wlog_reader *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto fail;
    }
    log_name(r->name, "log");
    static const uint8_t empty[1];
    r->mem = buf != NULL ? buf : empty;
    r->mem_len = buf != NULL ? len : 0;
    rc = reader_header(r, err);
    if (rc != LANYFS_OK)
        goto fail;
    lanyfs_error_clear(&r->failed);
    *out = r;
    return LANYFS_OK;
fail:
    lanyfs_wlog_reader_close(r);
    return rc;
}

void lanyfs_wlog_reader_close(struct lanyfs_wlog_reader *r)
{
    if (r == NULL)
        return;
    if (r->f != NULL)
        fclose(r->f);
    free(r->buf);
    free(r);
}

uint32_t lanyfs_wlog_reader_blocksize(const struct lanyfs_wlog_reader *r)
{
    return r->blocksize;
}

unsigned lanyfs_wlog_reader_blockbits(const struct lanyfs_wlog_reader *r)
{
    return bits_of(r->blocksize);
}

unsigned lanyfs_wlog_reader_addrlen(const struct lanyfs_wlog_reader *r)
{
    return r->addrlen;
}

uint64_t lanyfs_wlog_reader_blocks(const struct lanyfs_wlog_reader *r)
{
    return r->blocks;
}

static const char *kind_name(unsigned kind)
{
    switch (kind) {
    case LANYFS_WLOG_WRITE:
        return "write record";
    case LANYFS_WLOG_SYNC:
        return "sync record";
    case LANYFS_WLOG_OP:
        return "operation record";
    case LANYFS_WLOG_SESSION:
        return "session record";
    default:
        return "record";
    }
}

enum lanyfs_err lanyfs_wlog_next(struct lanyfs_wlog_reader *r, struct lanyfs_wlog_rec *rec,
                                 struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    memset(rec, 0, sizeof(*rec));
    rec->kind = LANYFS_WLOG_END;
    if (r->failed.code != LANYFS_OK) {
        if (err != NULL)
            *err = r->failed;
        return r->failed.code;
    }
    uint64_t start = r->pos;
    uint8_t h[REC_HDR];
    size_t got;
    rc = src_read(r, h, 1, &got, err);
    if (rc != LANYFS_OK)
        goto out;
    if (got == 0) {
        rec->write = r->writes;
        rec->op = r->ops;
        rec->offset = start;
        goto out; /* a clean end between records */
    }
    rc = src_need(r, h + 1, REC_HDR - 1, start, "record header", err);
    if (rc != LANYFS_OK)
        goto out;
    unsigned kind = h[0];
    uint32_t len = lanyfs_get32(h + 4);
    if (kind < LANYFS_WLOG_WRITE || kind > LANYFS_WLOG_SESSION) {
        rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                         "%s: unknown record kind %u at byte %" PRIu64, r->name, kind, start);
        goto out;
    }
    if (h[1] != 0 || h[2] != 0 || h[3] != 0) {
        rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                         "%s: reserved bytes of the %s at byte %" PRIu64 " are not zero",
                         r->name, kind_name(kind), start);
        goto out;
    }
    /* The exact length each kind allows, checked before anything is read. */
    uint64_t lo, hi;
    switch (kind) {
    case LANYFS_WLOG_WRITE:
        lo = hi = (uint64_t)WRITE_FIXED + r->blocksize;
        break;
    case LANYFS_WLOG_SYNC:
        lo = hi = SYNC_LEN;
        break;
    case LANYFS_WLOG_OP:
        lo = OP_FIXED;
        hi = (uint64_t)OP_FIXED + LANYFS_WLOG_DESC_MAX;
        break;
    default:
        lo = hi = SESSION_LEN;
        break;
    }
    if (len < lo || len > hi || len > r->buf_size) {
        rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                         "%s: the %s at byte %" PRIu64 " claims %" PRIu32 " payload bytes "
                         "(%" PRIu64 "..%" PRIu64 " allowed)",
                         r->name, kind_name(kind), start, len, lo, hi);
        goto out;
    }
    rc = src_need(r, r->buf, len, start, kind_name(kind), err);
    if (rc != LANYFS_OK)
        goto out;
    const uint8_t *p = r->buf;
    rec->offset = start;
    switch (kind) {
    case LANYFS_WLOG_WRITE: {
        uint64_t idx = lanyfs_get64(p), op = lanyfs_get64(p + 8);
        if (r->writes == UINT64_MAX || idx != r->writes + 1 || op != r->ops) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                             "%s: the write record at byte %" PRIu64 " says write %" PRIu64
                             " of operation %" PRIu64 ", expected write %" PRIu64
                             " of operation %" PRIu64,
                             r->name, start, idx, op, r->writes + 1, r->ops);
            goto out;
        }
        r->writes = idx;
        rec->kind = LANYFS_WLOG_WRITE;
        rec->write = idx;
        rec->op = op;
        rec->block = lanyfs_get64(p + 16);
        rec->data = p + WRITE_FIXED;
        rec->len = r->blocksize;
        break;
    }
    case LANYFS_WLOG_SYNC: {
        uint64_t before = lanyfs_get64(p);
        if (before != r->writes) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                             "%s: the sync record at byte %" PRIu64 " follows write %" PRIu64
                             ", but %" PRIu64 " writes came before it",
                             r->name, start, before, r->writes);
            goto out;
        }
        rec->kind = LANYFS_WLOG_SYNC;
        rec->write = before;
        rec->op = r->ops;
        break;
    }
    case LANYFS_WLOG_OP: {
        uint64_t idx = lanyfs_get64(p), before = lanyfs_get64(p + 8);
        if (r->ops == UINT64_MAX || idx != r->ops + 1 || before != r->writes) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                             "%s: the operation record at byte %" PRIu64 " says operation %"
                             PRIu64 " after %" PRIu64 " writes, expected operation %" PRIu64
                             " after %" PRIu64,
                             r->name, start, idx, before, r->ops + 1, r->writes);
            goto out;
        }
        r->ops = idx;
        rec->kind = LANYFS_WLOG_OP;
        rec->op = idx;
        rec->write = before;
        rec->data = p + OP_FIXED;
        rec->len = len - OP_FIXED;
        break;
    }
    default: {
        uint64_t w = lanyfs_get64(p), o = lanyfs_get64(p + 8);
        if (w != r->writes || o != r->ops) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                             "%s: the session record at byte %" PRIu64 " counts %" PRIu64
                             " writes and %" PRIu64 " operations before it, but the log holds %"
                             PRIu64 " and %" PRIu64,
                             r->name, start, w, o, r->writes, r->ops);
            goto out;
        }
        rec->kind = LANYFS_WLOG_SESSION;
        rec->write = w;
        rec->op = o;
        break;
    }
    }
out:
    if (rc != LANYFS_OK) {
        memset(rec, 0, sizeof(*rec));
        rec->kind = LANYFS_WLOG_END;
        if (err != NULL)
            r->failed = *err;
        else
            lanyfs_fail(&r->failed, rc, LANYFS_NO_BLOCK, "%s: damaged record at byte %" PRIu64,
                        r->name, start);
    }
    return rc;
}

/* ---- writing --------------------------------------------------------------- */

struct lanyfs_wlog {
    int fd;                      /* the log file */
    char name[64];               /* for messages */
    uint32_t blocksize;          /* of the header */
    uint64_t off;                /* file offset where buf goes */
    uint8_t *buf;                /* OUTBUF_SIZE bytes of pending records */
    size_t used;                 /* bytes in buf */
    uint64_t writes;             /* writes recorded, all sessions */
    uint64_t ops;                /* operations recorded, all sessions */
    struct lanyfs_error failed;  /* first error met, code LANYFS_OK while none */
};

static enum lanyfs_err wl_flush(struct lanyfs_wlog *log, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    size_t done = 0;
    while (done < log->used) {
        ssize_t n = pwrite(log->fd, log->buf + done, log->used - done, (off_t)(log->off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;
            rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot write the log %s: %s",
                             log->name, strerror(e));
            if (err != NULL)
                err->sys_errno = e;
            goto out;
        }
        done += (size_t)n;
    }
out:
    log->off += done;
    if (done < log->used)
        memmove(log->buf, log->buf + done, log->used - done);
    log->used -= done;
    return rc;
}

/* Append a record: header, fixed part, then tail bytes. */
static enum lanyfs_err wl_record(struct lanyfs_wlog *log, unsigned kind, const uint8_t *fixed,
                                 size_t flen, const uint8_t *tail, size_t tlen,
                                 struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    if (log->failed.code != LANYFS_OK) {
        if (err != NULL)
            *err = log->failed;
        return log->failed.code;
    }
    uint8_t h[REC_HDR] = { (uint8_t)kind, 0, 0, 0, 0, 0, 0, 0 };
    lanyfs_put32(h + 4, (uint32_t)(flen + tlen));
    const uint8_t *parts[3] = { h, fixed, tail };
    size_t lens[3] = { REC_HDR, flen, tlen };
    for (int i = 0; i < 3; i++) {
        size_t done = 0;
        while (done < lens[i]) {
            if (log->used == OUTBUF_SIZE) {
                rc = wl_flush(log, err);
                if (rc != LANYFS_OK)
                    goto out;
            }
            size_t room = OUTBUF_SIZE - log->used, take = lens[i] - done;
            if (take > room)
                take = room;
            memcpy(log->buf + log->used, parts[i] + done, take);
            log->used += take;
            done += take;
        }
    }
out:
    if (rc != LANYFS_OK && err != NULL)
        log->failed = *err;
    else if (rc != LANYFS_OK)
        lanyfs_fail(&log->failed, rc, LANYFS_NO_BLOCK, "cannot write the log %s", log->name);
    return rc;
}

static void wlog_free(struct lanyfs_wlog *log)
{
    if (log == NULL)
        return;
    if (log->fd >= 0)
        close(log->fd);
    free(log->buf);
    free(log);
}

enum lanyfs_err lanyfs_wlog_open(const char *path, const struct lanyfs_geom *g,
                                 struct lanyfs_wlog **out, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    struct lanyfs_wlog_reader *r = NULL;
    *out = NULL;
    struct lanyfs_wlog *log = calloc(1, sizeof(*log));
    if (log == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto fail;
    }
    log->fd = -1;
    lanyfs_error_clear(&log->failed);
    log_name(log->name, path);
    if (!blocksize_ok(g->blocksize)) {
        rc = lanyfs_fail(err, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                         "%s: block size %" PRIu32 " is not a LanyFS block size", log->name,
                         g->blocksize);
        goto fail;
    }
    log->blocksize = g->blocksize;
    log->buf = malloc(OUTBUF_SIZE);
    if (log->buf == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto fail;
    }
    log->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    struct stat st;
    if (log->fd < 0 || fstat(log->fd, &st) != 0) {
        int e = errno;
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot open the log %s: %s",
                         log->name, strerror(e));
        if (err != NULL)
            err->sys_errno = e;
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                         "the log %s is not a regular file", log->name);
        goto fail;
    }
    if (st.st_size == 0) {
        uint8_t h[LANYFS_WLOG_HEADER_SIZE] = { 0 };
        memcpy(h, LANYFS_WLOG_MAGIC, 8);
        lanyfs_put32(h + 8, LANYFS_WLOG_VERSION);
        lanyfs_put32(h + 12, g->blocksize);
        lanyfs_put32(h + 16, g->addrlen);
        lanyfs_put64(h + 24, g->blocks);
        memcpy(log->buf, h, sizeof(h));
        log->used = sizeof(h);
    } else {
        rc = lanyfs_wlog_reader_open(path, &r, err);
        if (rc != LANYFS_OK)
            goto fail;
        if (r->blocksize != g->blocksize) {
            rc = lanyfs_fail(err, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                             "the log %s records %" PRIu32 "-byte blocks, the image has %" PRIu32
                             "-byte blocks", log->name, r->blocksize, g->blocksize);
            goto fail;
        }
        struct lanyfs_wlog_rec rec;
        do {
            rc = lanyfs_wlog_next(r, &rec, err);
            if (rc != LANYFS_OK) {
                lanyfs_error_prefix(err, "cannot append");
                goto fail;
            }
        } while (rec.kind != LANYFS_WLOG_END);
        log->writes = r->writes;
        log->ops = r->ops;
        log->off = r->pos;
        if ((uint64_t)st.st_size != r->pos) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                             "the log %s changed while it was read", log->name);
            goto fail;
        }
        lanyfs_wlog_reader_close(r);
        r = NULL;
    }
    uint8_t s[SESSION_LEN];
    lanyfs_put64(s, log->writes);
    lanyfs_put64(s + 8, log->ops);
    rc = wl_record(log, LANYFS_WLOG_SESSION, s, sizeof(s), NULL, 0, err);
    if (rc == LANYFS_OK)
        rc = wl_flush(log, err);
    if (rc != LANYFS_OK)
        goto fail;
    *out = log;
    return LANYFS_OK;
fail:
    lanyfs_wlog_reader_close(r);
    wlog_free(log);
    return rc;
}

static int wlog_write_hook(void *ctx, uint64_t block, const uint8_t *data)
{
    struct lanyfs_wlog *log = ctx;
    if (log->failed.code != LANYFS_OK)
        return -1;
    if (log->writes == UINT64_MAX) {
        lanyfs_fail(&log->failed, LANYFS_E_RANGE, block, "the log %s is full", log->name);
        return -1;
    }
    uint8_t f[WRITE_FIXED];
    lanyfs_put64(f, log->writes + 1);
    lanyfs_put64(f + 8, log->ops);
    lanyfs_put64(f + 16, block);
    struct lanyfs_error e;
    if (wl_record(log, LANYFS_WLOG_WRITE, f, sizeof(f), data, log->blocksize, &e) != LANYFS_OK)
        return -1;
    log->writes++;
    /* The record reaches the log file before the block reaches the image. */
    if (wl_flush(log, &e) != LANYFS_OK) {
        log->failed = e;
        return -1;
    }
    return 0;
}

/* The hook for a filesystem whose block size differs from the log's. */
static int wlog_refuse_hook(void *ctx, uint64_t block, const uint8_t *data)
{
    (void)block;
    (void)data;
    struct lanyfs_wlog *log = ctx;
    if (log->failed.code == LANYFS_OK)
        lanyfs_fail(&log->failed, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                    "the log %s records %" PRIu32 "-byte blocks, the filesystem has others",
                    log->name, log->blocksize);
    return -1;
}

void lanyfs_wlog_attach(struct lanyfs_wlog *log, struct lanyfs_fs *fs)
{
    if (lanyfs_fs_geom(fs)->blocksize == log->blocksize)
        lanyfs_fs_set_write_hook(fs, wlog_write_hook, log);
    else
        lanyfs_fs_set_write_hook(fs, wlog_refuse_hook, log);
}

enum lanyfs_err lanyfs_wlog_sync(struct lanyfs_wlog *log, struct lanyfs_error *err)
{
    uint8_t s[SYNC_LEN];
    lanyfs_put64(s, log->writes);
    return wl_record(log, LANYFS_WLOG_SYNC, s, sizeof(s), NULL, 0, err);
}

static void wlog_sync_hook(void *ctx)
{
    struct lanyfs_error e;
    (void)lanyfs_wlog_sync(ctx, &e); /* a failure is kept in the log and refuses the next write */
}

void lanyfs_wlog_attach_writer(struct lanyfs_wlog *log, struct lanyfs_writer *w)
{
    lanyfs_writer_set_sync_hook(w, wlog_sync_hook, log);
}

enum lanyfs_err lanyfs_wlog_op(struct lanyfs_wlog *log, const char *description,
                               struct lanyfs_error *err)
{
    if (log->ops == UINT64_MAX)
        return lanyfs_fail(err, LANYFS_E_RANGE, LANYFS_NO_BLOCK, "the log %s is full",
                           log->name);
    size_t dlen = description != NULL ? strnlen(description, LANYFS_WLOG_DESC_MAX) : 0;
    uint8_t f[OP_FIXED];
    lanyfs_put64(f, log->ops + 1);
    lanyfs_put64(f + 8, log->writes);
    enum lanyfs_err rc = wl_record(log, LANYFS_WLOG_OP, f, sizeof(f),
                                   (const uint8_t *)description, dlen, err);
    if (rc == LANYFS_OK)
        log->ops++;
    return rc;
}

uint64_t lanyfs_wlog_writes(const struct lanyfs_wlog *log)
{
    return log->writes;
}

uint64_t lanyfs_wlog_ops(const struct lanyfs_wlog *log)
{
    return log->ops;
}

enum lanyfs_err lanyfs_wlog_close(struct lanyfs_wlog *log, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    if (log == NULL)
        return LANYFS_OK;
    if (log->failed.code != LANYFS_OK) {
        if (err != NULL)
            *err = log->failed;
        rc = log->failed.code;
        goto out;
    }
    rc = wl_flush(log, err);
    if (rc != LANYFS_OK)
        goto out;
    if (fsync(log->fd) != 0 && errno != EINVAL && errno != EROFS) {
        int e = errno;
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot sync the log %s: %s",
                         log->name, strerror(e));
        goto out;
    }
    if (close(log->fd) != 0) {
        int e = errno;
        log->fd = -1;
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot close the log %s: %s",
                         log->name, strerror(e));
        goto out;
    }
    log->fd = -1;
out:
    wlog_free(log);
    return rc;
}
