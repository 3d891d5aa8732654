/*
 * progress.c -- -C FD, as e2fsck does it.
 *
 * Passes are numbered 1..FSCK_PROGRESS_PASSES: 1 superblock, 2 trees and
 * files, 3 free list, 4 sweep of every block, 5 analysis, 6 repair, 7 the
 * check after the repair.  With FD 0 a bar is drawn on standard output when
 * it is a terminal ("DEVICE: |=======      |  45.0%"), redrawn in place at
 * most once per tenth of a percent and cleared before other output; with
 * another FD each change of a pass's per-mille writes one line
 * "PASS DONE TOTAL DEVICE" (fsck(8)'s protocol, read by front ends).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsck.h"

#define FSCK_PROGRESS_PASSES 7
#define BAR_WIDTH 40

struct fsck_progress {
    int fd;               /* 0: bar on stdout; others: lines */
    bool bar;             /* drawing a bar (fd 0 on a terminal) */
    bool drawn;           /* a bar is on the screen */
    char *device;         /* for the lines and the bar (owned) */
    int last_pass;        /* last pass reported */
    unsigned last_mille;  /* last per-mille reported */
};

struct fsck_progress *fsck_progress_new(int fd, const char *device)
{
    if (fd < 0)
        return NULL;
    struct fsck_progress *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->device = strdup(device);
    if (p->device == NULL) {
        free(p);
        return NULL;
    }
    p->fd = fd;
    p->bar = fd == 0 && isatty(STDOUT_FILENO);
    p->last_pass = -1;
    return p;
}

static void write_str(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

void fsck_progress_clear(struct fsck_progress *p)
{
    if (p == NULL || !p->drawn)
        return;
    fflush(stdout);
    char blank[BAR_WIDTH + 300];
    size_t n = strlen(p->device) + BAR_WIDTH + 14;
    if (n > sizeof(blank) - 2)
        n = sizeof(blank) - 2;
    blank[0] = '\r';
    memset(blank + 1, ' ', n);
    blank[n + 1] = '\r';
    write_str(STDOUT_FILENO, blank, n + 2);
    p->drawn = false;
}

void fsck_progress_free(struct fsck_progress *p)
{
    if (p == NULL)
        return;
    fsck_progress_clear(p);
    free(p->device);
    free(p);
}

void fsck_progress_update(struct fsck_progress *p, int pass, uint64_t done, uint64_t total)
{
    if (p == NULL)
        return;
    if (pass < 1)
        pass = 1;
    if (pass > FSCK_PROGRESS_PASSES)
        pass = FSCK_PROGRESS_PASSES;
    if (total == 0)
        total = 1;
    if (done > total)
        done = total;
    unsigned mille = (unsigned)((long double)done * 1000 / total);
    if (pass == p->last_pass && mille == p->last_mille)
        return;
    p->last_pass = pass;
    p->last_mille = mille;
    char line[512];
    if (!p->bar) {
        if (p->fd == 0)
            return;
        int n = snprintf(line, sizeof(line), "%d %" PRIu64 " %" PRIu64 " %s\n", pass, done,
                         total, p->device);
        if (n > 0)
            write_str(p->fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        return;
    }
    unsigned overall = (unsigned)(((pass - 1) * 1000u + mille) / FSCK_PROGRESS_PASSES);
    char bar[BAR_WIDTH + 1];
    unsigned fill = overall * BAR_WIDTH / 1000;
    for (unsigned i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < fill ? '=' : ' ';
    bar[BAR_WIDTH] = '\0';
    fflush(stdout);
    int n = snprintf(line, sizeof(line), "\r%.200s: |%s| %3u.%u%%", p->device, bar,
                     overall / 10, overall % 10);
    if (n > 0)
        write_str(STDOUT_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    p->drawn = true;
}
