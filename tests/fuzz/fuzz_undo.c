/*
 * fuzz_undo.c -- fuzz target: arbitrary bytes through the undo file reader,
 * the device check and the restore (src/core/undo.c, docs/undo.md).
 *
 * Every header and record of an undo file carries a SHA-256, so raw bytes
 * would almost never get past the first checksum.  The input is therefore
 * used twice:
 *
 *   1. as it is, an undo file of hostile bytes;
 *   2. as a recipe: a header whose fields come from the input (block size,
 *      device size, reserved bytes, version and header size usually right,
 *      sometimes not), then records whose kinds, reserved bytes, lengths,
 *      block numbers, indexes and payloads come from the input, each
 *      sealed with its correct SHA-256 unless the input asks for a bad one,
 *      and the file maybe cut anywhere.  So the parser's own rules (each
 *      block once, writes only for recorded blocks and in order, old
 *      contents matching their hash, the done record last and agreeing,
 *      a torn last record) are what decides.
 *
 * A file that opens is checked against a device made of input bytes (at
 * most 256 KiB, in memory) and restored onto it.  Besides the sanitizers,
 * the target checks what the reader promises: the counts it reports are
 * bounded by the file's size, a restore writes at most the recorded
 * blocks and leaves the device's size alone, a check after a restore finds
 * every recorded block at its old contents, and every error message is a
 * terminated, non-empty string.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "lanyfs.h"
#include "undo.h"

#define HEADER 128
#define REC_HEAD 8
#define REC_SUM 32
#define DEVICE_MAX ((size_t)256 << 10)

static void check_msg(const struct lanyfs_error *err)
{
    FUZZ_CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL, "unterminated message");
    FUZZ_CHECK(err->msg[0] != '\0', "empty error message for code %d", err->code);
}

/* A growing output buffer. */
struct out {
    uint8_t *p;
    size_t n, cap;
};

static void put(struct out *o, const void *d, size_t n)
{
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->n + n)
            cap *= 2;
        o->p = realloc(o->p, cap);
        FUZZ_CHECK(o->p != NULL, "out of memory");
        o->cap = cap;
    }
    memcpy(o->p + o->n, d, n);
    o->n += n;
}

static void le(uint8_t *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

/* Build an undo file from the recipe in s; returns its size in o. */
static void build(struct fuzz_in *s, struct out *o, uint32_t *bs_out, uint64_t *dev_out)
{
    uint8_t flags = fuzz_take(s);
    uint32_t bs = 512u << (fuzz_take(s) & 3);
    uint64_t dev_blocks = 1 + fuzz_take(s) % 64;
    uint64_t dev = dev_blocks * bs;
    if (flags & 0x01)
        dev += fuzz_take(s); /* a size that is no multiple of the block size */
    uint8_t h[HEADER];
    memset(h, 0, sizeof(h));
    memcpy(h, "LANYUNDO", 8);
    le(h + 8, (flags & 0x02) ? fuzz_take(s) : 1, 4);
    le(h + 12, (flags & 0x04) ? fuzz_take(s) : HEADER, 4);
    le(h + 16, (flags & 0x08) ? fuzz_take_le(s, 2) : bs, 4);
    if (flags & 0x10)
        h[20 + fuzz_take(s) % 4] = fuzz_take(s);
    le(h + 24, dev, 8);
    le(h + 32, fuzz_take_le(s, 2), 8);
    for (int i = 0; i < 32; i++)
        h[40 + i] = fuzz_take(s);
    le(h + 72, fuzz_take_le(s, 4), 8);
    if (flags & 0x20)
        h[80 + fuzz_take(s) % 16] = fuzz_take(s);
    lanyfs_sha256(h, 96, h + 96);
    if (flags & 0x40)
        h[96 + fuzz_take(s) % 32] ^= 1;
    put(o, h, sizeof(h));

    uint8_t *payload = malloc(48 + 4096);
    FUZZ_CHECK(payload != NULL, "out of memory");
    int records = fuzz_take(s) % 24;
    for (int r = 0; r < records && s->at < s->n; r++) {
        uint8_t rf = fuzz_take(s);
        uint8_t kind = (rf & 0x80) ? fuzz_take(s) : (uint8_t)(1 + rf % 3);
        size_t len;
        switch (kind) {
        case 1: len = 40 + bs; break;
        case 2: len = 48; break;
        case 3: len = 16; break;
        default: len = fuzz_take(s); break;
        }
        if (rf & 0x40)
            len = (len + fuzz_take(s)) & 0x1fff;
        if (len > 48 + 4096)
            len = 48 + 4096;
        memset(payload, 0, len);
        if (len >= 8)
            le(payload, fuzz_take(s) % (dev_blocks + 2), 8); /* block, or a count */
        if (kind == 1 && len >= 40) {
            for (size_t i = 40; i < len; i++)
                payload[i] = (rf & 0x20) ? fuzz_take(s) : (uint8_t)(i * 7);
            lanyfs_sha256(payload + 40, len - 40, payload + 8);
            if (rf & 0x10)
                payload[8] ^= 1;
        } else if (kind == 2 && len >= 48) {
            le(payload + 8, fuzz_take(s) % 8, 8);
            for (int i = 0; i < 32; i++)
                payload[16 + i] = fuzz_take(s);
        } else if (kind == 3 && len >= 16) {
            le(payload + 8, fuzz_take(s) % 8, 8);
        }
        uint8_t head[REC_HEAD] = {kind, 0, 0, 0};
        if (rf & 0x08)
            head[1 + fuzz_take(s) % 3] = 1;
        le(head + 4, len, 4);
        struct lanyfs_sha256 c;
        uint8_t sum[REC_SUM];
        lanyfs_sha256_init(&c);
        lanyfs_sha256_update(&c, head, sizeof(head));
        lanyfs_sha256_update(&c, payload, len);
        lanyfs_sha256_final(&c, sum);
        if (rf & 0x04)
            sum[0] ^= 0x80;
        put(o, head, sizeof(head));
        put(o, payload, len);
        put(o, sum, sizeof(sum));
    }
    free(payload);
    if ((flags & 0x80) && o->n > HEADER)
        o->n = HEADER + fuzz_take_le(s, 2) % (o->n - HEADER + 1); /* cut anywhere */
    *bs_out = bs;
    *dev_out = dev;
}

static int memfile(const char *name, const void *data, size_t len, char path[64])
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    FUZZ_CHECK(fd >= 0, "memfd_create failed");
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, (const uint8_t *)data + done, len - done);
        FUZZ_CHECK(w > 0, "memfd write failed");
        done += (size_t)w;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

static void run(const uint8_t *file, size_t flen, uint64_t dev_bytes, const uint8_t *fill,
                size_t fill_len)
{
    char upath[64], dpath[64];
    int ufd = memfile("undo", file, flen, upath);
    struct lanyfs_undo_file *uf = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_undo_file_open(upath, &uf, &err) != LANYFS_OK) {
        check_msg(&err);
        FUZZ_CHECK(uf == NULL, "failed open returned a file");
        close(ufd);
        return;
    }
    const struct lanyfs_undo_info *info = lanyfs_undo_file_info(uf);
    FUZZ_CHECK(info->blocksize >= 512 && info->blocksize <= 4096 &&
                   (info->blocksize & (info->blocksize - 1)) == 0,
               "block size %u accepted", info->blocksize);
    FUZZ_CHECK(flen >= HEADER, "file shorter than its header accepted");
    uint64_t body = flen - HEADER;
    FUZZ_CHECK(info->blocks <= body / (REC_HEAD + 40 + info->blocksize + REC_SUM),
               "%llu blocks in %zu bytes", (unsigned long long)info->blocks, flen);
    FUZZ_CHECK(info->writes <= body / (REC_HEAD + 48 + REC_SUM), "%llu writes in %zu bytes",
               (unsigned long long)info->writes, flen);

    /* A device of the recorded size when it is small, else a small one. */
    size_t dlen = info->device_bytes <= DEVICE_MAX ? (size_t)info->device_bytes
                                                  : (size_t)(dev_bytes % DEVICE_MAX);
    uint8_t *dev = calloc(1, dlen ? dlen : 1);
    FUZZ_CHECK(dev != NULL, "out of memory");
    for (size_t i = 0; fill_len > 0 && i < dlen; i++)
        dev[i] = fill[i % fill_len];
    int dfd = memfile("device", dev, dlen, dpath);
    free(dev);
    struct lanyfs_image *img = NULL;
    lanyfs_error_clear(&err);
    if (lanyfs_image_open(dpath, LANYFS_IMAGE_RDWR, &img, &err) != LANYFS_OK) {
        check_msg(&err);
        goto out;
    }
    struct lanyfs_undo_check chk;
    lanyfs_error_clear(&err);
    if (lanyfs_undo_file_check(uf, img, &chk, &err) != LANYFS_OK) {
        check_msg(&err);
    } else {
        FUZZ_CHECK(chk.at_old + chk.at_new + chk.mismatched <= info->blocks,
                   "check counts more blocks than recorded");
        FUZZ_CHECK(chk.device_bytes == dlen, "device size %llu, made %zu",
                   (unsigned long long)chk.device_bytes, dlen);
    }
    uint64_t restored = 0;
    lanyfs_error_clear(&err);
    if (lanyfs_undo_file_restore(uf, img, &restored, &err) != LANYFS_OK) {
        check_msg(&err);
    } else {
        FUZZ_CHECK(restored <= info->blocks, "restored %llu of %llu blocks",
                   (unsigned long long)restored, (unsigned long long)info->blocks);
        FUZZ_CHECK(lanyfs_image_size(img) == dlen, "restore changed the device size");
        lanyfs_error_clear(&err);
        if (lanyfs_undo_file_check(uf, img, &chk, &err) == LANYFS_OK)
            FUZZ_CHECK(chk.at_old == info->blocks && chk.mismatched == 0,
                       "after a restore %llu of %llu blocks at their old contents",
                       (unsigned long long)chk.at_old, (unsigned long long)info->blocks);
        else
            check_msg(&err);
    }
    lanyfs_image_close(img);
out:
    close(dfd);
    lanyfs_undo_file_close(uf);
    close(ufd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)1 << 20))
        return 0;
    run(data, size, size, data, size);
    struct fuzz_in s = {data, size, 0};
    struct out o = {NULL, 0, 0};
    uint32_t bs = 0;
    uint64_t dev = 0;
    build(&s, &o, &bs, &dev);
    run(o.p, o.n, dev, data + s.at, size - s.at);
    free(o.p);
    return 0;
}
