/*
 * scan_timings.c -- `lanyfs scan -t`: the time each pass of the scan took
 * (contract in scan_timings.h).
 */
#include <string.h>
#include <time.h>

#include <glib.h>

#include "i18n.h"
#include "scan_timings.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_timings_init(struct cli_timings *t, bool on, struct cli_bar *bar)
{
    *t = (struct cli_timings){.on = on, .bar = bar, .cur = -1};
}

void cli_timings_end(struct cli_timings *t)
{
    if (!t->on || t->cur < 0)
        return;
    t->wall[t->cur] += clock_s(CLOCK_MONOTONIC) - t->wall0;
    t->cpu[t->cur] += clock_s(CLOCK_PROCESS_CPUTIME_ID) - t->cpu0;
    t->seen[t->cur] = true;
    t->cur = -1;
}

void cli_timings_begin(struct cli_timings *t, enum cli_timing_step step)
{
    if (!t->on || (int)step == t->cur)
        return;
    cli_timings_end(t);
    t->cur = (int)step;
    t->wall0 = clock_s(CLOCK_MONOTONIC);
    t->cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static int step_of(enum scan_phase phase)
{
    switch (phase) {
    case SCAN_PHASE_SUPER:
        return CLI_TIMING_SUPER;
    case SCAN_PHASE_FREE:
        return CLI_TIMING_FREE;
    case SCAN_PHASE_TREE:
        return CLI_TIMING_TREE;
    case SCAN_PHASE_SWEEP:
        return CLI_TIMING_SWEEP;
    case SCAN_PHASE_ANALYSE:
        return CLI_TIMING_ANALYSE;
    case SCAN_PHASE_DONE:
        break;
    }
    return -1;
}

void cli_timings_on_scan(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total)
{
    struct cli_timings *t = ctx;
    int step = step_of(phase);
    if (step < 0)
        cli_timings_end(t);
    else
        cli_timings_begin(t, (enum cli_timing_step)step);
    cli_bar_on_scan(t->bar, phase, done, total);
}

static const char *step_name(int step)
{
    switch ((enum cli_timing_step)step) {
    case CLI_TIMING_SUPER:
        return _("superblock and geometry");
    case CLI_TIMING_FREE:
        return _("free list");
    case CLI_TIMING_TREE:
        return _("directory and extender trees");
    case CLI_TIMING_SWEEP:
        return _("sweep of every block");
    case CLI_TIMING_ANALYSE:
        return _("analysis");
    case CLI_TIMING_STORE:
        return _("database");
    case CLI_TIMING_STEPS:
        break;
    }
    return "?";
}

/* s left-aligned in width columns, counting characters, not bytes. */
static void put_left(FILE *f, const char *s, long width)
{
    long n = g_utf8_validate(s, -1, NULL) ? g_utf8_strlen(s, -1) : (long)strlen(s);
    fputs(s, f);
    for (; n < width; n++)
        fputc(' ', f);
}

/* s right-aligned in width columns, after a space. */
static void put_right(FILE *f, const char *s, long width)
{
    long n = g_utf8_validate(s, -1, NULL) ? g_utf8_strlen(s, -1) : (long)strlen(s);
    fputc(' ', f);
    for (; n < width; n++)
        fputc(' ', f);
    fputs(s, f);
}

static void put_row(FILE *f, const char *name, double wall, double cpu)
{
    char w[32], c[32];
    snprintf(w, sizeof(w), "%.3f", wall);
    snprintf(c, sizeof(c), "%.3f", cpu);
    put_left(f, name, 30);
    put_right(f, w, 12);
    put_right(f, c, 12);
    fputc('\n', f);
}

void cli_timings_print(const struct cli_timings *t, FILE *f)
{
    if (!t->on)
        return;
    double wall = 0, cpu = 0;
    put_left(f, _("Pass"), 30);
    put_right(f, _("wall (s)"), 12);
    put_right(f, _("CPU (s)"), 12);
    fputc('\n', f);
    for (int i = 0; i < CLI_TIMING_STEPS; i++) {
        if (!t->seen[i])
            continue;
        put_row(f, step_name(i), t->wall[i], t->cpu[i]);
        wall += t->wall[i];
        cpu += t->cpu[i];
    }
    put_row(f, _("total"), wall, cpu);
}
