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

/* Called once per crafted seed image. */
typedef void (*fuzz_seed_cb)(void *ctx, const char *name, const uint8_t *data, size_t len);

/*
 * Build the crafted seed images with the test fixture (healthy trees of
 * several geometries, deep extender trees, cycles, shared nodes, bad links,
 * truncation, superblock damage) and hand each to cb.  Returns how many.
 */
int fuzz_seeds(fuzz_seed_cb cb, void *ctx);
