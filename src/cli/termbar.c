/*
 * termbar.c -- the one-line progress bar on stderr (termbar.h).
 */
#include "termbar.h"

#include <stdio.h>
#include <string.h>

#define BAR_WIDTH 30
#define BAR_EVERY_US 100000 /* the least time between two lines of one phase */

void cli_bar_init(struct cli_bar *b, bool on, unsigned flags)
{
    memset(b, 0, sizeof(*b));
    b->on = on;
    b->flags = flags;
    b->pct = -1;
}

static void draw(struct cli_bar *b, const char *phase, uint64_t done, uint64_t total, bool bytes)
{
    if (!b->on)
        return;
    int pct = total ? (int)(done >= total ? 100 : done * 100 / total) : 0;
    gint64 now = g_get_monotonic_time();
    bool end = (b->flags & CLI_BAR_SHOW_END) && done >= total;
    if (phase == b->phase && (pct == b->pct || now - b->shown_us < BAR_EVERY_US) && !end)
        return;
    char fill[BAR_WIDTH + 1];
    int n = pct * BAR_WIDTH / 100;
    memset(fill, '#', (size_t)n);
    memset(fill + n, '.', (size_t)(BAR_WIDTH - n));
    fill[BAR_WIDTH] = '\0';
    const char *erase = (b->flags & CLI_BAR_ERASE) ? "\033[K" : "";
    if (bytes)
        fprintf(stderr, "\r%-8s [%s] %3d%% %.1f of %.1f MB%s", phase, fill, pct,
                (double)done / 1e6, (double)total / 1e6, erase);
    else
        fprintf(stderr, "\r%-8s [%s] %3d%%%s", phase, fill, pct, erase);
    fflush(stderr);
    b->phase = phase;
    b->pct = pct;
    b->shown_us = now;
}

void cli_bar_show(struct cli_bar *b, const char *phase, uint64_t done, uint64_t total)
{
    draw(b, phase, done, total, false);
}

void cli_bar_show_bytes(struct cli_bar *b, const char *phase, uint64_t done, uint64_t total)
{
    draw(b, phase, done, total, true);
}

void cli_bar_clear(struct cli_bar *b)
{
    if (b->on && b->phase != NULL) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        b->phase = NULL;
    }
}

const char *cli_bar_phase_name(enum scan_phase p)
{
    switch (p) {
    case SCAN_PHASE_SUPER:
        return "super";
    case SCAN_PHASE_TREE:
        return "tree";
    case SCAN_PHASE_FREE:
        return "free";
    case SCAN_PHASE_SWEEP:
        return "sweep";
    case SCAN_PHASE_ANALYSE:
        return "analyse";
    case SCAN_PHASE_DONE:
        return "done";
    }
    return "scan";
}

void cli_bar_on_scan(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total)
{
    cli_bar_show(ctx, cli_bar_phase_name(phase), done, total);
}

void cli_bar_on_store(void *ctx, uint64_t done, uint64_t total)
{
    cli_bar_show(ctx, "store", done, total);
}
