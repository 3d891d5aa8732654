/*
 * undo.c -- the undo file: SHA-256, the recorder behind the write hook, and
 * the reader that checks a device against the file and restores it.
 *
 * Contract (see undo.h and docs/undo.md for the bytes):
 *  - the recorder appends, for every block write it sees, first (only at
 *    the block's first write) a BLOCK record with the block's old contents,
 *    then a WRITE record with the SHA-256 of the new contents, and fsyncs
 *    the file before it lets the write go on to the previous hook and the
 *    device.  Any failure makes it refuse this and every later write;
 *  - the reader trusts nothing: the header has a checksum, every record has
 *    an exact length for its kind and a SHA-256 over its bytes, block
 *    numbers are bounded by the recorded device size, a block is recorded
 *    once, write indexes follow each other, a closing record comes last and
 *    agrees with the counts.  Only the last record may be cut short or fail
 *    its checksum: the recorder died while appending it, before the write
 *    it announced reached the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "undo.h"

/* ---- the on-disk layout ---------------------------------------------------- */

/* Header fields (docs/undo.md). */
#define UH_MAGIC 0         /* 8 bytes "LANYUNDO" */
#define UH_VERSION 8       /* le32 */
#define UH_HDRSIZE 12      /* le32, 128 */
#define UH_BLOCKSIZE 16    /* le32 */
#define UH_RES20 20        /* le32, 0 */
#define UH_DEVBYTES 24     /* le64 */
#define UH_FSBLOCKS 32     /* le64 */
#define UH_SBSHA 40        /* 32 bytes */
#define UH_CREATED 72      /* le64, signed seconds */
#define UH_RES80 80        /* 16 bytes, 0 */
#define UH_SUM 96          /* 32 bytes: SHA-256 of bytes 0..95 */

/* Records: kind, 3 reserved bytes, le32 payload length, payload, SHA-256. */
#define UR_HEAD 8
#define UR_SUM LANYFS_SHA256_LEN
#define UR_BLOCK 1         /* le64 block, 32-byte SHA-256 of old, old bytes */
#define UR_WRITE 2         /* le64 block, le64 write index, 32-byte SHA-256 of new */
#define UR_DONE 3          /* le64 blocks, le64 writes */
#define UR_WRITE_LEN (8 + 8 + LANYFS_SHA256_LEN)
#define UR_DONE_LEN 16

static uint32_t block_len(uint32_t blocksize)
{
    return 8 + LANYFS_SHA256_LEN + blocksize;
}

/* ---- a map from block number to index -------------------------------------- */

struct idxmap {
    uint64_t *keys;   /* block + 1, 0 = empty slot */
    size_t *vals;     /* index */
    size_t cap;       /* power of two */
    size_t count;     /* keys held */
};

static size_t idx_hash(uint64_t k, size_t cap)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static bool idx_grow(struct idxmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    uint64_t *nk = calloc(ncap, sizeof(*nk));
    size_t *nv = calloc(ncap, sizeof(*nv));
    if (nk == NULL || nv == NULL) {
        free(nk);
        free(nv);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == 0)
            continue;
        size_t j = idx_hash(m->keys[i], ncap);
        while (nk[j] != 0)
            j = (j + 1) & (ncap - 1);
        nk[j] = m->keys[i];
        nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
    return true;
}

/* The index of blk, or SIZE_MAX. */
static size_t idx_get(const struct idxmap *m, uint64_t blk)
{
    if (m->cap == 0)
        return SIZE_MAX;
    uint64_t k = blk + 1;
    for (size_t j = idx_hash(k, m->cap);; j = (j + 1) & (m->cap - 1)) {
        if (m->keys[j] == 0)
            return SIZE_MAX;
        if (m->keys[j] == k)
            return m->vals[j];
    }
}

static bool idx_put(struct idxmap *m, uint64_t blk, size_t val)
{
    if ((m->count + 1) * 2 > m->cap && !idx_grow(m))
        return false;
    uint64_t k = blk + 1;
    size_t j = idx_hash(k, m->cap);
    while (m->keys[j] != 0 && m->keys[j] != k)
        j = (j + 1) & (m->cap - 1);
    if (m->keys[j] == 0)
        m->count++;
    m->keys[j] = k;
    m->vals[j] = val;
    return true;
}

static void idx_free(struct idxmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* ---- small file helpers ---------------------------------------------------- */

static enum lanyfs_err write_all(int fd, const void *buf, size_t len, const char *path,
                                 struct lanyfs_error *err)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;
            lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot write the undo file %s: %s",
                        path, strerror(e));
            if (err)
                err->sys_errno = e;
            return LANYFS_E_IO;
        }
        p += n;
        len -= (size_t)n;
    }
    return LANYFS_OK;
}

static enum lanyfs_err read_at(int fd, uint64_t off, void *buf, size_t len, size_t *got,
                               const char *path, struct lanyfs_error *err)
{
    uint8_t *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, p + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot read the undo file %s: %s",
                        path, strerror(e));
            if (err)
                err->sys_errno = e;
            return LANYFS_E_IO;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    *got = done;
    return LANYFS_OK;
}

/* fsync the folder holding path, so that a new file's name is durable too. */
static int sync_parent(const char *path)
{
    char *copy = strdup(path);
    if (copy == NULL)
        return -1;
    int rc = 0;
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        if (fsync(dfd) != 0 && errno != EINVAL)
            rc = -1;
        close(dfd);
    }
    free(copy);
    return rc;
}

/* ---- recording ----------------------------------------------------------------- */

struct lanyfs_undo {
    char *path;                  /* the undo file (owned) */
    unsigned flags;              /* LANYFS_UNDO_* */
    int fd;                      /* open undo file, -1 before the first write */
    struct lanyfs_fs *fs;        /* borrowed: the filesystem being repaired */
    lanyfs_write_hook prev;      /* the hook installed before ours, may be NULL */
    void *prev_ctx;              /* its context */
    struct idxmap seen;          /* blocks already recorded */
    uint64_t nblocks;            /* BLOCK records written */
    uint64_t nwrites;            /* WRITE records written */
    uint32_t blocksize;          /* the filesystem's block size */
    uint64_t device_bytes;       /* the image size */
    uint8_t *rec;                /* one BLOCK record's bytes */
    enum lanyfs_err rc;          /* first error, LANYFS_OK while none */
    struct lanyfs_error err;     /* its message */
};

struct lanyfs_undo *lanyfs_undo_new(const char *path, unsigned flags)
{
    struct lanyfs_undo *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return NULL;
    u->path = strdup(path);
    if (u->path == NULL) {
        free(u);
        return NULL;
    }
    u->flags = flags;
    u->fd = -1;
    return u;
}

void lanyfs_undo_attach(struct lanyfs_undo *u, struct lanyfs_fs *fs, lanyfs_write_hook prev,
                        void *prev_ctx)
{
    u->fs = fs;
    u->prev = prev;
    u->prev_ctx = prev_ctx;
    lanyfs_fs_set_write_hook(fs, lanyfs_undo_hook, u);
}

static void put_record_head(uint8_t *p, uint8_t kind, uint32_t len)
{
    p[0] = kind;
    p[1] = p[2] = p[3] = 0;
    lanyfs_put32(p + 4, len);
}

/* Append one record (head and payload at p, len payload bytes) with its checksum. */
static enum lanyfs_err append_record(struct lanyfs_undo *u, uint8_t *p, uint32_t len)
{
    lanyfs_sha256(p, UR_HEAD + len, p + UR_HEAD + len);
    return write_all(u->fd, p, UR_HEAD + len + UR_SUM, u->path, &u->err);
}

/* Create the file and write its header; called at the first write. */
static enum lanyfs_err undo_start(struct lanyfs_undo *u)
{
    enum lanyfs_err rc;
    const struct lanyfs_geom *g = lanyfs_fs_geom(u->fs);
    struct lanyfs_image *img = lanyfs_fs_image(u->fs);
    u->blocksize = g->blocksize;
    u->device_bytes = lanyfs_image_size(img);
    uint8_t hdr[LANYFS_UNDO_HEADER_SIZE];
    memset(hdr, 0, sizeof(hdr));
    u->rec = malloc(UR_HEAD + block_len(u->blocksize) + UR_SUM);
    uint8_t *b0 = calloc(1, u->blocksize);
    if (u->rec == NULL || b0 == NULL) {
        rc = lanyfs_fail(&u->err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    size_t want = u->blocksize;
    if (want > u->device_bytes)
        want = (size_t)u->device_bytes;
    /* A sector that cannot be read is recorded as zeros: its bytes are lost
     * whatever the repair does, and the repair may still be undone. */
    size_t lost = 0;
    rc = lanyfs_image_pread_sectors(img, 0, b0, want, &lost, &u->err);
    if (rc != LANYFS_OK)
        goto out;

    memcpy(hdr + UH_MAGIC, LANYFS_UNDO_MAGIC, 8);
    lanyfs_put32(hdr + UH_VERSION, LANYFS_UNDO_VERSION);
    lanyfs_put32(hdr + UH_HDRSIZE, LANYFS_UNDO_HEADER_SIZE);
    lanyfs_put32(hdr + UH_BLOCKSIZE, u->blocksize);
    lanyfs_put64(hdr + UH_DEVBYTES, u->device_bytes);
    lanyfs_put64(hdr + UH_FSBLOCKS, lanyfs_fs_super(u->fs)->blocks);
    lanyfs_sha256(b0, u->blocksize, hdr + UH_SBSHA);
    time_t now = time(NULL);
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    if (sde != NULL && *sde != '\0')
        now = (time_t)strtoll(sde, NULL, 10);
    lanyfs_put64(hdr + UH_CREATED, (uint64_t)(int64_t)now);
    lanyfs_sha256(hdr, UH_SUM, hdr + UH_SUM);

    int oflags = O_WRONLY | O_CREAT | O_CLOEXEC;
    oflags |= (u->flags & LANYFS_UNDO_OVERWRITE) ? O_TRUNC : O_EXCL;
    u->fd = open(u->path, oflags, 0600);
    if (u->fd < 0) {
        int e = errno;
        rc = lanyfs_fail(&u->err, LANYFS_E_IO, LANYFS_NO_BLOCK,
                         e == EEXIST ? "the undo file %s exists already: %s"
                                     : "cannot create the undo file %s: %s",
                         u->path, strerror(e));
        u->err.sys_errno = e;
        goto out;
    }
    rc = write_all(u->fd, hdr, sizeof(hdr), u->path, &u->err);
    if (rc != LANYFS_OK)
        goto out;
    if (fsync(u->fd) != 0 || sync_parent(u->path) != 0) {
        int e = errno;
        rc = lanyfs_fail(&u->err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot sync the undo file %s: %s",
                         u->path, strerror(e));
        goto out;
    }
out:
    free(b0);
    return rc;
}

int lanyfs_undo_hook(void *ctx, uint64_t block, const uint8_t *data)
{
    struct lanyfs_undo *u = ctx;
    if (u->rc != LANYFS_OK)
        return -1;
    if (u->fd < 0) {
        u->rc = undo_start(u);
        if (u->rc != LANYFS_OK)
            return -1;
    }
    struct lanyfs_image *img = lanyfs_fs_image(u->fs);
    uint64_t img_blocks = u->device_bytes / u->blocksize;
    if (block >= img_blocks || lanyfs_fs_geom(u->fs)->blocksize != u->blocksize) {
        u->rc = lanyfs_fail(&u->err, LANYFS_E_RANGE, block,
                            "block %" PRIu64 " lies beyond the image (%" PRIu64 " blocks): the "
                            "undo file cannot record it",
                            block, img_blocks);
        return -1;
    }
    uint8_t *p = u->rec;
    if (idx_get(&u->seen, block) == SIZE_MAX) {
        uint32_t len = block_len(u->blocksize);
        put_record_head(p, UR_BLOCK, len);
        lanyfs_put64(p + UR_HEAD, block);
        uint8_t *old = p + UR_HEAD + 8 + LANYFS_SHA256_LEN;
        size_t lost = 0; /* sectors that fail are recorded as zeros, as in undo_start */
        u->rc = lanyfs_image_pread_sectors(img, block * u->blocksize, old, u->blocksize, &lost,
                                           &u->err);
        if (u->rc != LANYFS_OK)
            return -1;
        lanyfs_sha256(old, u->blocksize, p + UR_HEAD + 8);
        u->rc = append_record(u, p, len);
        if (u->rc != LANYFS_OK)
            return -1;
        if (!idx_put(&u->seen, block, (size_t)u->nblocks)) {
            u->rc = lanyfs_fail(&u->err, LANYFS_E_NOMEM, block, "out of memory");
            return -1;
        }
        u->nblocks++;
    }
    uint8_t w[UR_HEAD + UR_WRITE_LEN + UR_SUM];
    put_record_head(w, UR_WRITE, UR_WRITE_LEN);
    lanyfs_put64(w + UR_HEAD, block);
    lanyfs_put64(w + UR_HEAD + 8, u->nwrites + 1);
    lanyfs_sha256(data, u->blocksize, w + UR_HEAD + 16);
    u->rc = append_record(u, w, UR_WRITE_LEN);
    if (u->rc != LANYFS_OK)
        return -1;
    if (fdatasync(u->fd) != 0) {
        int e = errno;
        u->rc = lanyfs_fail(&u->err, LANYFS_E_IO, block, "cannot sync the undo file %s: %s",
                            u->path, strerror(e));
        return -1;
    }
    u->nwrites++;
    if (u->prev != NULL)
        return u->prev(u->prev_ctx, block, data);
    return 0;
}

bool lanyfs_undo_started(const struct lanyfs_undo *u)
{
    return u->fd >= 0;
}

uint64_t lanyfs_undo_blocks(const struct lanyfs_undo *u)
{
    return u->nblocks;
}

uint64_t lanyfs_undo_writes(const struct lanyfs_undo *u)
{
    return u->nwrites;
}

const char *lanyfs_undo_path(const struct lanyfs_undo *u)
{
    return u->path;
}

enum lanyfs_err lanyfs_undo_error(const struct lanyfs_undo *u, struct lanyfs_error *err)
{
    if (u->rc != LANYFS_OK && err != NULL)
        *err = u->err;
    return u->rc;
}

static void undo_free(struct lanyfs_undo *u)
{
    if (u->fd >= 0)
        close(u->fd);
    idx_free(&u->seen);
    free(u->rec);
    free(u->path);
    free(u);
}

enum lanyfs_err lanyfs_undo_finish(struct lanyfs_undo *u, struct lanyfs_error *err)
{
    if (u == NULL)
        return LANYFS_OK;
    enum lanyfs_err rc = u->rc;
    if (rc == LANYFS_OK && u->fd >= 0) {
        uint8_t d[UR_HEAD + UR_DONE_LEN + UR_SUM];
        put_record_head(d, UR_DONE, UR_DONE_LEN);
        lanyfs_put64(d + UR_HEAD, u->nblocks);
        lanyfs_put64(d + UR_HEAD + 8, u->nwrites);
        rc = append_record(u, d, UR_DONE_LEN);
        if (rc == LANYFS_OK && fsync(u->fd) != 0)
            rc = lanyfs_fail(&u->err, LANYFS_E_IO, LANYFS_NO_BLOCK,
                             "cannot sync the undo file %s: %s", u->path, strerror(errno));
        if (close(u->fd) != 0 && rc == LANYFS_OK)
            rc = lanyfs_fail(&u->err, LANYFS_E_IO, LANYFS_NO_BLOCK,
                             "cannot close the undo file %s: %s", u->path, strerror(errno));
        u->fd = -1;
    }
    if (rc != LANYFS_OK && err != NULL)
        *err = u->err;
    undo_free(u);
    return rc;
}

void lanyfs_undo_abandon(struct lanyfs_undo *u)
{
    if (u != NULL)
        undo_free(u);
}

/* ---- reading ---------------------------------------------------------------- */

struct urec {
    uint64_t block;                      /* the block */
    uint64_t off;                        /* offset of its old bytes in the undo file */
    uint8_t old[LANYFS_SHA256_LEN];      /* SHA-256 of the old bytes */
    uint8_t (*news)[LANYFS_SHA256_LEN];  /* SHA-256 of every write, in order */
    size_t nnew;                         /* entries in news */
    size_t capnew;                       /* allocated entries */
};

struct lanyfs_undo_file {
    char *path;                  /* as opened (owned) */
    int fd;                      /* open for reading */
    struct lanyfs_undo_info info;/* header and counts */
    struct urec *recs;           /* blocks in the order of first change */
    size_t nrecs;                /* entries in recs */
    size_t caprecs;              /* allocated */
    struct idxmap map;           /* block -> index into recs */
};

void lanyfs_undo_file_close(struct lanyfs_undo_file *f)
{
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    for (size_t i = 0; i < f->nrecs; i++)
        free(f->recs[i].news);
    free(f->recs);
    idx_free(&f->map);
    free(f->path);
    free(f);
}

const struct lanyfs_undo_info *lanyfs_undo_file_info(const struct lanyfs_undo_file *f)
{
    return &f->info;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

static enum lanyfs_err read_header(struct lanyfs_undo_file *f, uint64_t file_size,
                                   struct lanyfs_error *err)
{
    uint8_t hdr[LANYFS_UNDO_HEADER_SIZE];
    size_t got;
    enum lanyfs_err rc = read_at(f->fd, 0, hdr, sizeof(hdr), &got, f->path, err);
    if (rc != LANYFS_OK)
        return rc;
    if (got < 8 || memcmp(hdr + UH_MAGIC, LANYFS_UNDO_MAGIC, 8) != 0)
        return lanyfs_fail(err, LANYFS_E_BADMAGIC, LANYFS_NO_BLOCK,
                           "%s is not a LanyFS undo file (no \"LANYUNDO\" magic)", f->path);
    if (got < sizeof(hdr) || file_size < sizeof(hdr))
        return lanyfs_fail(err, LANYFS_E_TRUNCATED, LANYFS_NO_BLOCK,
                           "%s: the undo file ends inside its header (%zu bytes)", f->path, got);
    uint8_t sum[LANYFS_SHA256_LEN];
    lanyfs_sha256(hdr, UH_SUM, sum);
    if (memcmp(sum, hdr + UH_SUM, sizeof(sum)) != 0)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                           "%s: the undo file's header fails its checksum", f->path);
    uint32_t version = lanyfs_get32(hdr + UH_VERSION);
    if (version != LANYFS_UNDO_VERSION)
        return lanyfs_fail(err, LANYFS_E_VERSION, LANYFS_NO_BLOCK,
                           "%s: undo file version %" PRIu32 ", this tool reads version %d",
                           f->path, version, LANYFS_UNDO_VERSION);
    uint32_t hsize = lanyfs_get32(hdr + UH_HDRSIZE);
    uint32_t bs = lanyfs_get32(hdr + UH_BLOCKSIZE);
    bool bs_ok = false;
    for (unsigned b = LANYFS_BLOCKBITS_MIN; b <= LANYFS_BLOCKBITS_MAX; b++)
        bs_ok |= bs == (1u << b);
    uint64_t devbytes = lanyfs_get64(hdr + UH_DEVBYTES);
    if (hsize != LANYFS_UNDO_HEADER_SIZE || !bs_ok || lanyfs_get32(hdr + UH_RES20) != 0 ||
        !all_zero(hdr + UH_RES80, 16) || devbytes < bs)
        return lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                           "%s: the undo file's header holds impossible values (header size "
                           "%" PRIu32 ", block size %" PRIu32 ", device %" PRIu64 " bytes)",
                           f->path, hsize, bs, devbytes);
    f->info.version = version;
    f->info.blocksize = bs;
    f->info.device_bytes = devbytes;
    f->info.fs_blocks = lanyfs_get64(hdr + UH_FSBLOCKS);
    memcpy(f->info.sb_sha256, hdr + UH_SBSHA, LANYFS_SHA256_LEN);
    f->info.created = (int64_t)lanyfs_get64(hdr + UH_CREATED);
    return LANYFS_OK;
}

static enum lanyfs_err corrupt(struct lanyfs_undo_file *f, uint64_t off, const char *what,
                               struct lanyfs_error *err)
{
    return lanyfs_fail(err, LANYFS_E_CORRUPT, LANYFS_NO_BLOCK,
                       "%s: undo record at offset %" PRIu64 ": %s", f->path, off, what);
}

static enum lanyfs_err add_new(struct urec *r, const uint8_t *sum)
{
    if (r->nnew == r->capnew) {
        size_t ncap = r->capnew ? r->capnew * 2 : 2;
        void *p = realloc(r->news, ncap * sizeof(*r->news));
        if (p == NULL)
            return LANYFS_E_NOMEM;
        r->news = p;
        r->capnew = ncap;
    }
    memcpy(r->news[r->nnew++], sum, LANYFS_SHA256_LEN);
    return LANYFS_OK;
}

/* Parse one complete, checksummed record at off (head and payload in rec). */
static enum lanyfs_err parse_record(struct lanyfs_undo_file *f, uint64_t off, const uint8_t *rec,
                                    uint32_t len, struct lanyfs_error *err)
{
    const uint8_t *pl = rec + UR_HEAD;
    uint64_t dev_blocks = f->info.device_bytes / f->info.blocksize;
    if (f->info.complete)
        return corrupt(f, off, "a record follows the closing record", err);
    switch (rec[0]) {
    case UR_BLOCK: {
        uint64_t blk = lanyfs_get64(pl);
        if (blk >= dev_blocks)
            return corrupt(f, off, "block number beyond the recorded device size", err);
        if (idx_get(&f->map, blk) != SIZE_MAX)
            return corrupt(f, off, "block recorded twice", err);
        if (f->nrecs == f->caprecs) {
            size_t ncap = f->caprecs ? f->caprecs * 2 : 64;
            void *p = realloc(f->recs, ncap * sizeof(*f->recs));
            if (p == NULL)
                return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            f->recs = p;
            f->caprecs = ncap;
        }
        uint8_t sum[LANYFS_SHA256_LEN];
        lanyfs_sha256(pl + 8 + LANYFS_SHA256_LEN, f->info.blocksize, sum);
        if (memcmp(sum, pl + 8, sizeof(sum)) != 0)
            return corrupt(f, off, "old contents disagree with their SHA-256", err);
        struct urec *r = &f->recs[f->nrecs];
        memset(r, 0, sizeof(*r));
        r->block = blk;
        r->off = off + UR_HEAD + 8 + LANYFS_SHA256_LEN;
        memcpy(r->old, sum, sizeof(sum));
        if (!idx_put(&f->map, blk, f->nrecs))
            return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        f->nrecs++;
        f->info.blocks++;
        return LANYFS_OK;
    }
    case UR_WRITE: {
        uint64_t blk = lanyfs_get64(pl);
        uint64_t idx = lanyfs_get64(pl + 8);
        size_t i = idx_get(&f->map, blk);
        if (i == SIZE_MAX)
            return corrupt(f, off, "a write to a block whose old contents are not recorded",
                           err);
        if (idx != f->info.writes + 1)
            return corrupt(f, off, "write index out of sequence", err);
        if (add_new(&f->recs[i], pl + 16) != LANYFS_OK)
            return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        f->info.writes++;
        return LANYFS_OK;
    }
    case UR_DONE:
        if (lanyfs_get64(pl) != f->info.blocks || lanyfs_get64(pl + 8) != f->info.writes)
            return corrupt(f, off, "the closing record's counts disagree with the records",
                           err);
        f->info.complete = true;
        return LANYFS_OK;
    default:
        (void)len;
        return corrupt(f, off, "unknown record kind", err);
    }
}

enum lanyfs_err lanyfs_undo_file_open(const char *path, struct lanyfs_undo_file **out,
                                      struct lanyfs_error *err)
{
    *out = NULL;
    enum lanyfs_err rc;
    uint8_t *rec = NULL;
    struct lanyfs_undo_file *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    f->fd = -1;
    f->path = strdup(path);
    if (f->path == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out_fail;
    }
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) != 0) {
        int e = errno;
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "cannot open the undo file %s: %s",
                         path, strerror(e));
        if (err)
            err->sys_errno = e;
        goto out_fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK, "%s is not a regular file", path);
        goto out_fail;
    }
    uint64_t size = (uint64_t)st.st_size;
    rc = read_header(f, size, err);
    if (rc != LANYFS_OK)
        goto out_fail;
    size_t maxrec = UR_HEAD + block_len(f->info.blocksize) + UR_SUM;
    rec = malloc(maxrec);
    if (rec == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out_fail;
    }
    uint64_t off = LANYFS_UNDO_HEADER_SIZE;
    while (off < size) {
        size_t got;
        rc = read_at(f->fd, off, rec, UR_HEAD, &got, path, err);
        if (rc != LANYFS_OK)
            goto out_fail;
        if (got < UR_HEAD) {
            f->info.torn_tail = true;
            break;
        }
        uint32_t len = lanyfs_get32(rec + 4);
        uint32_t want;
        switch (rec[0]) {
        case UR_BLOCK:
            want = block_len(f->info.blocksize);
            break;
        case UR_WRITE:
            want = UR_WRITE_LEN;
            break;
        case UR_DONE:
            want = UR_DONE_LEN;
            break;
        default:
            want = 0;
            break;
        }
        if (want == 0 || len != want || rec[1] != 0 || rec[2] != 0 || rec[3] != 0) {
            rc = corrupt(f, off, "bad kind, length or reserved bytes", err);
            goto out_fail;
        }
        uint64_t total = (uint64_t)UR_HEAD + len + UR_SUM;
        rc = read_at(f->fd, off + UR_HEAD, rec + UR_HEAD, len + UR_SUM, &got, path, err);
        if (rc != LANYFS_OK)
            goto out_fail;
        if (got < len + UR_SUM) {
            f->info.torn_tail = true;
            break;
        }
        uint8_t sum[LANYFS_SHA256_LEN];
        lanyfs_sha256(rec, UR_HEAD + len, sum);
        if (memcmp(sum, rec + UR_HEAD + len, sizeof(sum)) != 0) {
            if (off + total == size) {
                f->info.torn_tail = true;
                break;
            }
            rc = corrupt(f, off, "checksum mismatch", err);
            goto out_fail;
        }
        rc = parse_record(f, off, rec, len, err);
        if (rc != LANYFS_OK)
            goto out_fail;
        off += total;
    }
    free(rec);
    *out = f;
    return LANYFS_OK;

out_fail:
    free(rec);
    lanyfs_undo_file_close(f);
    return rc;
}

enum lanyfs_err lanyfs_undo_file_check(struct lanyfs_undo_file *f, struct lanyfs_image *img,
                                       struct lanyfs_undo_check *chk, struct lanyfs_error *err)
{
    memset(chk, 0, sizeof(*chk));
    chk->first_mismatch = LANYFS_NO_BLOCK;
    chk->device_bytes = lanyfs_image_size(img);
    chk->size_ok = chk->device_bytes == f->info.device_bytes;
    chk->blocksize_ok = true;
    uint32_t bs = f->info.blocksize;
    uint8_t *buf = malloc(bs);
    if (buf == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    enum lanyfs_err rc = LANYFS_OK;
    if (chk->device_bytes >= LANYFS_BLOCKSIZE_MIN) {
        rc = lanyfs_image_pread(img, 0, buf, LANYFS_BLOCKSIZE_MIN, err);
        if (rc != LANYFS_OK)
            goto out;
        struct lanyfs_super sb;
        lanyfs_super_decode(&sb, buf);
        if (sb.magic == LANYFS_MAGIC && sb.blockbits >= LANYFS_BLOCKBITS_MIN &&
            sb.blockbits <= LANYFS_BLOCKBITS_MAX && (1u << sb.blockbits) != bs)
            chk->blocksize_ok = false;
    }
    for (size_t i = 0; i < f->nrecs; i++) {
        const struct urec *r = &f->recs[i];
        enum lanyfs_undo_state st = LANYFS_UNDO_MISMATCH;
        if ((r->block + 1) * (uint64_t)bs <= chk->device_bytes) {
            rc = lanyfs_image_pread(img, r->block * bs, buf, bs, err);
            if (rc != LANYFS_OK)
                goto out;
            uint8_t sum[LANYFS_SHA256_LEN];
            lanyfs_sha256(buf, bs, sum);
            if (memcmp(sum, r->old, sizeof(sum)) == 0) {
                st = LANYFS_UNDO_AT_OLD;
            } else if (f->info.complete) {
                if (r->nnew > 0 && memcmp(sum, r->news[r->nnew - 1], sizeof(sum)) == 0)
                    st = LANYFS_UNDO_AT_NEW;
            } else {
                for (size_t j = 0; j < r->nnew && st == LANYFS_UNDO_MISMATCH; j++)
                    if (memcmp(sum, r->news[j], sizeof(sum)) == 0)
                        st = LANYFS_UNDO_AT_NEW;
            }
        }
        if (st == LANYFS_UNDO_AT_OLD) {
            chk->at_old++;
        } else if (st == LANYFS_UNDO_AT_NEW) {
            chk->at_new++;
        } else {
            chk->mismatched++;
            if (chk->first_mismatch == LANYFS_NO_BLOCK)
                chk->first_mismatch = r->block;
        }
    }
out:
    free(buf);
    return rc;
}

enum lanyfs_err lanyfs_undo_file_restore(struct lanyfs_undo_file *f, struct lanyfs_image *img,
                                         uint64_t *restored, struct lanyfs_error *err)
{
    if (restored)
        *restored = 0;
    uint32_t bs = f->info.blocksize;
    uint8_t *buf = malloc(bs);
    if (buf == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    enum lanyfs_err rc = LANYFS_OK;
    for (size_t k = f->nrecs; k-- > 0;) {
        const struct urec *r = &f->recs[k];
        if ((r->block + 1) * (uint64_t)bs > lanyfs_image_size(img)) {
            rc = lanyfs_fail(err, LANYFS_E_RANGE, r->block,
                             "block %" PRIu64 " lies beyond the device", r->block);
            goto out;
        }
        size_t got;
        rc = read_at(f->fd, r->off, buf, bs, &got, f->path, err);
        if (rc != LANYFS_OK)
            goto out;
        uint8_t sum[LANYFS_SHA256_LEN];
        lanyfs_sha256(buf, got, sum);
        if (got != bs || memcmp(sum, r->old, sizeof(sum)) != 0) {
            rc = lanyfs_fail(err, LANYFS_E_CORRUPT, r->block,
                             "%s: the old contents of block %" PRIu64 " changed since they "
                             "were checked",
                             f->path, r->block);
            goto out;
        }
        rc = lanyfs_image_pwrite(img, r->block * bs, buf, bs, err);
        if (rc != LANYFS_OK)
            goto out;
        if (restored)
            (*restored)++;
    }
    rc = lanyfs_image_sync(img, err);
out:
    free(buf);
    return rc;
}
