/*
 * mkseeds.c -- write the crafted seeds of seeds.c into a directory, as the
 * starting corpus of a libFuzzer run:
 *
 *   fuzz_mkseeds [--store] DIR
 *
 * With --store, the edit programs of store_seeds.c (fuzz_store's seeds)
 * instead of the images, each in a file NAME.edits.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int failed;

static const char *suffix = ".img";

static void write_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s%s", (const char *)ctx, name, suffix);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len) {
        perror(path);
        failed = 1;
    }
    if (f != NULL && fclose(f) != 0)
        failed = 1;
}

int main(int argc, char **argv)
{
    bool store = argc == 3 && strcmp(argv[1], "--store") == 0;
    if (argc != 2 && !store) {
        fprintf(stderr, "usage: %s [--store] DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[argc - 1];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        perror(dir);
        return 1;
    }
    int n;
    if (store) {
        suffix = ".edits";
        n = fuzz_store_seeds(write_seed, (void *)dir);
    } else {
        n = fuzz_seeds(write_seed, (void *)dir);
    }
    printf("%d seeds in %s\n", n, dir);
    return failed;
}
