/*
 * fuzz_main.c -- a standalone driver for the fuzz targets, without libFuzzer.
 *
 *   fuzz_X_smoke [--fixtures] [--store-seeds] [FILE | DIR]...
 *
 * Feeds each FILE, and each regular file directly inside each DIR (sorted
 * by name), to LLVMFuzzerTestOneInput; --fixtures also feeds the crafted
 * seeds of seeds.c, --store-seeds the edit programs of store_seeds.c
 * (fuzz_store's).  Exits 0 when every input ran, 1 when an input could
 * not be read; a broken promise aborts inside the target.  This is how the
 * fuzz targets run as ordinary tests (suite 'fuzz-smoke') and how a crash
 * file from libFuzzer is replayed under a debugger.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int inputs;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (nb == NULL)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    inputs++;
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            names = realloc(names, cap * sizeof(*names));
            if (names == NULL)
                abort();
        }
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), name_cmp);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char full[4096];
        struct stat st;
        snprintf(full, sizeof(full), "%s/%s", path, names[i]);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
            rc |= run_file(full);
        free(names[i]);
    }
    free(names);
    return rc;
}

static void run_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    (void)ctx;
    (void)name;
    LLVMFuzzerTestOneInput(data, len);
    inputs++;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "--fixtures") == 0)
            fuzz_seeds(run_seed, NULL);
        else if (strcmp(argv[i], "--store-seeds") == 0)
            fuzz_store_seeds(run_seed, NULL);
        else if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc |= run_dir(argv[i]);
        else
            rc |= run_file(argv[i]);
    }
    printf("%d inputs\n", inputs);
    return rc != 0 || inputs == 0;
}
