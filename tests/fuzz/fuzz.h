/*
 * fuzz.h -- what the fuzz targets, their standalone driver and the seed
 * generator share.
 *
 * Each target defines LLVMFuzzerTestOneInput.  Built with -fsanitize=fuzzer
 * it is driven by libFuzzer; built plainly it is linked with fuzz_main.c,
 * which feeds it files, directories of files and the crafted seeds of
 * seeds.c, so the same code runs as an ordinary test (suite 'fuzz-smoke').
 *
 * A target stops on a broken promise of the core with fuzz_fail, which
 * prints what was broken and aborts, so that libFuzzer and the sanitizers
 * keep the input that did it.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Report a broken promise of the core and abort. */
__attribute__((noreturn, format(printf, 1, 2))) void fuzz_fail(const char *fmt, ...);

/* Input bytes, read one at a time; zeros once they run out. */
struct fuzz_in {
    const uint8_t *p;
    size_t n, at;
};

static inline uint8_t fuzz_take(struct fuzz_in *s)
{
    return s->at < s->n ? s->p[s->at++] : 0;
}

/* The next bytes (at most 8) as a little-endian number. */
static inline uint64_t fuzz_take_le(struct fuzz_in *s, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)fuzz_take(s) << (8 * i);
    return v;
}

#define FUZZ_CHECK(cond, ...)            \
    do {                                 \
        if (!(cond))                     \
            fuzz_fail(__VA_ARGS__);      \
    } while (0)

/*
 * Write the input to the process's in-memory file and return a path that
 * opens it (/proc/self/fd/N); *fd (may be NULL) receives its descriptor.
 */
const char *fuzz_memfd_image(const uint8_t *data, size_t size, int *fd);

/* Called once per crafted seed image. */
typedef void (*fuzz_seed_cb)(void *ctx, const char *name, const uint8_t *data, size_t len);

/*
 * Build the crafted seed images with the test fixture (healthy trees of
 * several geometries, deep extender trees, cycles, shared nodes, bad links,
 * truncation, superblock damage) and hand each to cb.  Returns how many.
 */
int fuzz_seeds(fuzz_seed_cb cb, void *ctx);

/* ---- fuzz_csv.c: CSV and folders the output targets check -------------------- */

/* A CSV text read into rows of fields (RFC 4180). */
struct fuzz_csv {
    char ***rows;  /* rows[i][j]: field j of row i, NUL-terminated */
    size_t nrows;  /* rows, the header included */
    size_t ncols;  /* fields in every row */
};

/*
 * Read n bytes of CSV: every record ends in a line feed, a quoted field
 * doubles its quotes, and every row has as many fields as the first.
 * Aborts through fuzz_fail naming what (a table name) when the text breaks
 * one of those rules.  Free with fuzz_csv_free.
 */
void fuzz_csv_read(const char *what, const char *text, size_t n, struct fuzz_csv *out);
void fuzz_csv_free(struct fuzz_csv *c);

/*
 * A geometry given to the scan (scan_opts.blocksize, addrlen), picked by the
 * input's last byte: none when its top bit is clear, else block size
 * 512 << (bits 0..1) and address length bits 2..5 when they say 1..8,
 * else 0 (the scan infers it, as for --geometry BS).
 */
void fuzz_given_geometry(const uint8_t *data, size_t size, uint32_t *blocksize,
                         unsigned *addrlen);

/* Text printed for people: valid UTF-8, no control character but a line feed. */
void fuzz_check_printable(const char *what, const char *text, size_t n);

/*
 * A folder for this process's output: under $TMPDIR, else /dev/shm when it
 * exists (a tmpfs), else /tmp; removed at exit() (libFuzzer ends with
 * _Exit, so run-fuzz.sh gives it a TMPDIR of its own).  Its path, static.
 */
const char *fuzz_tmp_root(const char *name);
/* Remove everything inside directory fd (not following links). */
void fuzz_rm_inside(int fd);

/* ---- fuzz_store: programs of edits to a scan database ------------------------ */

/*
 * fuzz_store reads its input as a program of edits, each an opcode byte
 * (taken modulo FZS_OPS) and its operands; a program ends with the input.
 * Operands: T a table (a byte, modulo the tables of fuzz_store_tables), R a
 * row (two bytes, little-endian, modulo the table's rows in key order), C a
 * column (a byte, modulo the table's columns), V a value (a kind byte,
 * modulo FZS_VALUES, and its bytes).
 */
enum fuzz_store_op {
    FZS_SET,     /* T R C V: UPDATE one row's column */
    FZS_SET_ALL, /* T C V: UPDATE the column of every row */
    FZS_ADD,     /* T R C V: one row's column += V (an integer) */
    FZS_DUP,     /* T R C V: INSERT a copy of a row with column C set to V */
    FZS_DEL,     /* T R: DELETE a row */
    FZS_PRAGMA,  /* which V: 0 user_version, 1 application_id, 2 journal_mode */
    FZS_DROP,    /* object: a table of fuzz_store_tables, then the indexes, the counters view */
    FZS_LOOSEN,  /* T: the table made again by CREATE TABLE AS: no key, no NOT NULL, no index */
    FZS_VIEW,    /* T how: the table renamed, a view in its place (how & 1: an endless one) */
    FZS_POKE,    /* offset (three bytes) byte: the file's byte at offset, once SQLite is done */
    FZS_OPS
};

enum fuzz_store_value {
    FZS_V_NULL,    /* no bytes */
    FZS_V_I8,      /* one byte, signed */
    FZS_V_SPECIAL, /* one byte: an index into a table of boundary integers */
    FZS_V_I64,     /* eight bytes, little-endian */
    FZS_V_TEXT,    /* a length byte (modulo 64) and the bytes, bound as TEXT as they are */
    FZS_V_BLOB,    /* a length byte (modulo 64) and the bytes */
    FZS_V_REAL,    /* one byte, signed, divided by 4 */
    FZS_V_REAL8,   /* eight bytes: a double's bits */
    FZS_VALUES
};

/* A table fuzz_store edits. */
struct fuzz_store_table {
    const char *name;        /* its name */
    const char *key;         /* the columns that name one row: "rowid" or its primary key */
    const char *const *cols; /* its columns, in order */
    unsigned ncols;          /* how many */
};

/* The tables of the scan database (and sqlite_stat1), in operand order. */
extern const struct fuzz_store_table fuzz_store_tables[];
extern const unsigned fuzz_store_ntables;
/* The indexes FZS_DROP may drop after the tables, then the counters view. */
extern const char *const fuzz_store_indexes[];
extern const unsigned fuzz_store_nindexes;

/* Hand each seed program of fuzz_store (and its regressions) to cb.  Returns how many. */
int fuzz_store_seeds(fuzz_seed_cb cb, void *ctx);
