/*
 * scancodes.c -- print what the scanner finds in an image.
 *
 * Usage: scancodes [-v] [-s] [-c clean|driver] IMAGE
 *
 * Prints the name of every finding's code, one a line, sorted, duplicates
 * kept (the form the image cases' `expect` files use).  With -v each line
 * also carries the severity and the filled-in message; with -s the summary
 * (entries, blocks by class) follows.  -c checks a promise instead and
 * prints only the findings that break it: "clean", nothing above info (a
 * correct writer's image); "driver", nothing above info that is not a mark
 * of the 2012 driver or formatter (SCAN_PF_DRIVER).  Exit status: 0 when
 * the scan ran (and the promise holds), 1 when it could not run (the image
 * cannot be opened, out of memory), 2 on a usage error, 3 when the promise
 * is broken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

static int by_name_nulls_last(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    if (x == NULL || y == NULL)
        return (x == NULL) - (y == NULL);
    return strcmp(x, y);
}

int main(int argc, char **argv)
{
    bool verbose = false, summary = false;
    const char *check = NULL;
    int i = 1, status = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = true;
        else if (strcmp(argv[i], "-s") == 0)
            summary = true;
        else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            check = argv[++i];
        else
            break;
    }
    if (i != argc - 1 ||
        (check != NULL && strcmp(check, "clean") != 0 && strcmp(check, "driver") != 0)) {
        fprintf(stderr, "usage: scancodes [-v] [-s] [-c clean|driver] IMAGE\n");
        return 2;
    }
    struct scan_result *r;
    struct lanyfs_error err;
    if (scan_image(argv[i], NULL, &r, &err) != LANYFS_OK) {
        fprintf(stderr, "scancodes: %s\n", err.msg);
        return 1;
    }
    const struct scan_finding *f;
    size_t n = scan_findings(r, &f);
    char **lines = calloc(n + 1, sizeof(*lines));
    for (size_t k = 0; lines != NULL && k < n; k++) {
        const struct scan_problem_info *p = scan_problem_lookup(f[k].code);
        const char *name = p ? p->name : "UNKNOWN";
        if (check != NULL) {
            bool ok = p != NULL && (p->severity == SCAN_SEV_INFO ||
                                    (strcmp(check, "driver") == 0 && (p->flags & SCAN_PF_DRIVER)));
            if (ok)
                continue;
            status = 3;
        }
        if (verbose || check != NULL) {
            char *msg = scan_finding_message(&f[k]);
            size_t len = strlen(name) + (msg ? strlen(msg) : 0) + 32;
            lines[k] = malloc(len);
            if (lines[k] != NULL)
                snprintf(lines[k], len, "%s %s: %s", name,
                         p ? scan_severity_name(p->severity) : "?", msg ? msg : "");
            free(msg);
        } else {
            lines[k] = strdup(name);
        }
    }
    if (lines != NULL) {
        qsort(lines, n, sizeof(*lines), by_name_nulls_last);
        for (size_t k = 0; k < n; k++)
            if (lines[k] != NULL)
                printf("%s\n", lines[k]);
        for (size_t k = 0; k < n; k++)
            free(lines[k]);
        free(lines);
    }
    if (summary) {
        struct scan_summary s;
        scan_summarize(r, &s);
        printf("# dirs %llu files %llu deleted %llu orphans %llu bytes %llu free %llu\n",
               (unsigned long long)s.dirs, (unsigned long long)s.files,
               (unsigned long long)s.deleted, (unsigned long long)s.orphans,
               (unsigned long long)s.bytes, (unsigned long long)s.free_listed);
        printf("#");
        for (int c = 0; c < SCAN_BLK_CLASSES; c++)
            if (s.by_class[c])
                printf(" %s %llu", scan_class_name((enum scan_class)c),
                       (unsigned long long)s.by_class[c]);
        printf("\n");
    }
    scan_result_free(r);
    return status;
}
