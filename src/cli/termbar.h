/*
 * termbar.h -- the one-line progress bar `lanyfs scan`, `wear` and
 * `salvage` draw on stderr.
 *
 * A line is "PHASE    [#########.....................]  30%", redrawn in
 * place (carriage return) when the percentage changes, at most every tenth
 * of a second within one phase, and always when the phase changes.  With
 * bytes, " 12.3 of 27.0 MB" follows the percentage.  A bar that is not on
 * (stderr is no terminal, or the output is JSON or quiet) draws nothing,
 * so the commands call it without asking.  cli_bar_clear blanks the line
 * before anything else is printed.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "scan.h"

/*
 * Flags of cli_bar_init:
 * CLI_BAR_ERASE: end every line by erasing the rest of the terminal line,
 *   for bars whose lines differ in length (with bytes);
 * CLI_BAR_SHOW_END: always draw a count that has reached its total, so the
 *   last figures shown are the final ones.
 */
#define CLI_BAR_ERASE 0x1
#define CLI_BAR_SHOW_END 0x2

struct cli_bar {
    bool on;           /* stderr is a terminal and progress is wanted */
    unsigned flags;    /* CLI_BAR_* */
    const char *phase; /* the phase shown last, NULL when nothing is on the line */
    int pct;           /* the percentage shown last */
    gint64 shown_us;   /* when it was shown (monotonic) */
};

/* A bar that draws when on is true. */
void cli_bar_init(struct cli_bar *b, bool on, unsigned flags);
/* Show done of total for phase (a string that lives as long as the bar). */
void cli_bar_show(struct cli_bar *b, const char *phase, uint64_t done, uint64_t total);
/* The same, with done and total also given in megabytes. */
void cli_bar_show_bytes(struct cli_bar *b, const char *phase, uint64_t done, uint64_t total);
/* Blank the line when something is drawn on it. */
void cli_bar_clear(struct cli_bar *b);

/* The scan's phase as the bar names it: "super", "tree", ... */
const char *cli_bar_phase_name(enum scan_phase p);
/* Progress callbacks with a struct cli_bar * as ctx: scan_opts.progress
 * (the scan's phases) and store_scan_meta.progress ("store"). */
void cli_bar_on_scan(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total);
void cli_bar_on_store(void *ctx, uint64_t done, uint64_t total);
