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
