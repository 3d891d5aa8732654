/*
 * fuzz_wlog.c -- fuzz target: arbitrary bytes through the write log reader.
 *
 * The input is read twice with lanyfs_wlog_reader_open_mem: as it is (so
 * the header checks see hostile magic, versions and block sizes), and with
 * a valid header put in front (block size chosen by the input's first
 * byte), so that the record parser sees the input's bytes as records.
 *
 * Besides the sanitizers, it checks what the reader promises: records come
 * at increasing offsets inside the input; a write's index is the previous
 * one plus one, its length is the header's block size and its data lies
 * inside the input; an operation's index follows the last one and its
 * description lies inside the input and is at most LANYFS_WLOG_DESC_MAX
 * bytes; sync and session records repeat the counts so far; the number of
 * records is bounded by the input size; after an error every further call
 * fails with the same code, and every message is a terminated string.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lanyfs.h"
#include "writelog.h"

#define REC_MIN 8 /* the smallest record: its header */

static void check_msg(const struct lanyfs_error *err)
{
    FUZZ_CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL, "unterminated message");
    FUZZ_CHECK(err->msg[0] != '\0', "empty error message for code %d", err->code);
}

static void run(const uint8_t *buf, size_t len, size_t body_at)
{
    struct lanyfs_wlog_reader *r = NULL;
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    if (lanyfs_wlog_reader_open_mem(buf, len, &r, &err) != LANYFS_OK) {
        check_msg(&err);
        FUZZ_CHECK(r == NULL, "failed open returned a reader");
        return;
    }
    uint32_t bs = lanyfs_wlog_reader_blocksize(r);
    FUZZ_CHECK(bs >= LANYFS_BLOCKSIZE_MIN && bs <= LANYFS_BLOCKSIZE_MAX && (bs & (bs - 1)) == 0,
               "header block size %u accepted", bs);
    FUZZ_CHECK((1u << lanyfs_wlog_reader_blockbits(r)) == bs, "block bits disagree");
    uint64_t writes = 0, ops = 0, records = 0, last_off = 0;
    bool first = true;
    const uint8_t *end = buf + len;
    for (;;) {
        struct lanyfs_wlog_rec rec;
        lanyfs_error_clear(&err);
        enum lanyfs_err rc = lanyfs_wlog_next(r, &rec, &err);
        if (rc != LANYFS_OK) {
            check_msg(&err);
            FUZZ_CHECK(rec.kind == LANYFS_WLOG_END, "error with a record");
            struct lanyfs_error again;
            lanyfs_error_clear(&again);
            FUZZ_CHECK(lanyfs_wlog_next(r, &rec, &again) == rc, "error not sticky");
            break;
        }
        if (rec.kind == LANYFS_WLOG_END)
            break;
        records++;
        FUZZ_CHECK(records <= (len - LANYFS_WLOG_HEADER_SIZE) / REC_MIN, "too many records");
        FUZZ_CHECK(rec.offset >= LANYFS_WLOG_HEADER_SIZE && rec.offset < len,
                   "record offset %llu outside the input", (unsigned long long)rec.offset);
        FUZZ_CHECK(first || rec.offset > last_off, "offsets do not increase");
        FUZZ_CHECK(rec.offset >= body_at, "record inside the synthesized header");
        first = false;
        last_off = rec.offset;
        switch (rec.kind) {
        case LANYFS_WLOG_WRITE:
            FUZZ_CHECK(rec.write == writes + 1, "write index skips");
            FUZZ_CHECK(rec.op == ops, "write of another operation");
            FUZZ_CHECK(rec.len == bs, "write length %zu", rec.len);
            FUZZ_CHECK(rec.data != NULL, "write without data");
            writes = rec.write;
            break;
        case LANYFS_WLOG_OP:
            FUZZ_CHECK(rec.op == ops + 1, "operation index skips");
            FUZZ_CHECK(rec.write == writes, "operation count of writes");
            FUZZ_CHECK(rec.len <= LANYFS_WLOG_DESC_MAX, "description too long");
            FUZZ_CHECK(rec.data != NULL || rec.len == 0, "description without data");
            ops = rec.op;
            break;
        case LANYFS_WLOG_SYNC:
        case LANYFS_WLOG_SESSION:
            FUZZ_CHECK(rec.write == writes && rec.op == ops, "counts disagree");
            FUZZ_CHECK(rec.len == 0, "payload reported");
            break;
        default:
            fuzz_fail("unknown kind %d returned", (int)rec.kind);
        }
        if (rec.len > 0) {
            /* the reader copies into its own buffer: the bytes must equal the input's */
            FUZZ_CHECK(rec.offset + 8 <= len, "payload outside the input");
            size_t skip = rec.kind == LANYFS_WLOG_WRITE ? 24 : 16;
            const uint8_t *src = buf + rec.offset + 8 + skip;
            FUZZ_CHECK(src + rec.len <= end, "payload beyond the input");
            FUZZ_CHECK(memcmp(src, rec.data, rec.len) == 0, "payload bytes differ");
        }
    }
    lanyfs_wlog_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size, LANYFS_WLOG_HEADER_SIZE);
    if (size > (1u << 24))
        return 0;
    uint8_t *buf = malloc(LANYFS_WLOG_HEADER_SIZE + size + 1);
    if (buf == NULL)
        return 0;
    memset(buf, 0, LANYFS_WLOG_HEADER_SIZE);
    memcpy(buf, LANYFS_WLOG_MAGIC, 8);
    lanyfs_put32(buf + 8, LANYFS_WLOG_VERSION);
    unsigned bits = LANYFS_BLOCKBITS_MIN + (size > 0 ? data[0] % 4 : 0);
    lanyfs_put32(buf + 12, 1u << bits);
    lanyfs_put32(buf + 16, 4);
    if (size > 0)
        memcpy(buf + LANYFS_WLOG_HEADER_SIZE, data, size);
    run(buf, LANYFS_WLOG_HEADER_SIZE + size, LANYFS_WLOG_HEADER_SIZE);
    free(buf);
    return 0;
}
