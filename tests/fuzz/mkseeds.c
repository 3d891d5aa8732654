/*
 * mkseeds.c -- write the crafted seeds of seeds.c into a directory, as the
 * starting corpus of a libFuzzer run:
 *
 *   fuzz_mkseeds DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz.h"

static int failed;

static void write_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.img", (const char *)ctx, name);
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
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
        perror(argv[1]);
        return 1;
    }
    int n = fuzz_seeds(write_seed, argv[1]);
    printf("%d seeds in %s\n", n, argv[1]);
    return failed;
}
