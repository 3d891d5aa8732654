/*
 * fuzz_wlog_run.c -- runs the write log fuzz target (tests/fuzz/fuzz_wlog.c)
 * as an ordinary test, over inputs made here: a real log from a short
 * simulation, every prefix of it, and seeded mutations of it (bytes set,
 * bits flipped, length fields replaced by extremes, records spliced).
 *
 *   fuzz_wlog_run [N]   N mutations (default 3000)
 *
 * A broken promise aborts inside the target (fuzz_fail).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "fuzz.h"
#include "lanyfs.h"
#include "simulate.h"

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz target: broken promise: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    long mutations = argc > 1 ? atol(argv[1]) : 3000;
    const char *t = getenv("TMPDIR");
    char *dir = g_strdup_printf("%s/lanyfs-fuzzwlog-XXXXXX", t != NULL && *t ? t : "/tmp");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    struct sim_opts o;
    sim_opts_default(&o, 5, 8, true);
    o.size = 64u << 10;
    o.mounts = 2;
    struct lanyfs_error err;
    if (sim_run(&o, dir, NULL, &err) != LANYFS_OK) {
        fprintf(stderr, "simulate: %s\n", err.msg);
        return 1;
    }
    char *logp = g_build_filename(dir, "writes.log", NULL);
    gchar *log = NULL;
    gsize len = 0;
    if (!g_file_get_contents(logp, &log, &len, NULL)) {
        fprintf(stderr, "cannot read %s\n", logp);
        return 1;
    }
    const uint8_t *good = (const uint8_t *)log;
    long inputs = 0;
    LLVMFuzzerTestOneInput(good, len);
    inputs++;
    for (size_t cut = 0; cut < len; cut += (cut < 4096 ? 1 : 97)) {
        LLVMFuzzerTestOneInput(good, cut);
        inputs++;
    }
    uint8_t *b = g_malloc(len * 2 + 64);
    uint64_t seed = 1;
    for (long m = 0; m < mutations; m++) {
        size_t n = len;
        memcpy(b, good, len);
        unsigned edits = 1 + (unsigned)(rnd(&seed) % 4);
        for (unsigned e = 0; e < edits; e++) {
            size_t at = (size_t)(rnd(&seed) % n);
            switch (rnd(&seed) % 5) {
            case 0:
                b[at] = (uint8_t)rnd(&seed);
                break;
            case 1:
                b[at] ^= (uint8_t)(1u << (rnd(&seed) % 8));
                break;
            case 2: {
                static const uint32_t ext[] = {0, 1, 7, 8, 16, 24, 535, 536, 4112, 4113,
                                               0x7fffffffu, 0xffffffffu};
                if (at + 4 <= n)
                    lanyfs_put32(b + at, ext[rnd(&seed) % G_N_ELEMENTS(ext)]);
                break;
            }
            case 3:
                n = at; /* cut */
                break;
            default: {
                /* splice: copy a stretch of the log over another place */
                size_t from = (size_t)(rnd(&seed) % len), span = (size_t)(rnd(&seed) % 600);
                if (from + span > len)
                    span = len - from;
                if (at + span > n)
                    span = n - at;
                memmove(b + at, good + from, span);
                break;
            }
            }
            if (n == 0)
                break;
        }
        LLVMFuzzerTestOneInput(b, n);
        inputs++;
    }
    printf("fuzz_wlog: %ld inputs from a log of %zu bytes\n", inputs, (size_t)len);
    g_free(b);
    g_free(log);
    static const char *const names[] = {"base.img", "final.img", "writes.log", "truth.json"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        char *p = g_build_filename(dir, names[i], NULL);
        unlink(p);
        g_free(p);
    }
    rmdir(dir);
    g_free(logp);
    g_free(dir);
    return 0;
}
