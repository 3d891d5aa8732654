/*
 * scan_timings.h -- `lanyfs scan -t`: how long each pass of the scan took,
 * as e2fsck -t reports its passes.
 *
 * The scanner reports its phase with every progress call; the timings sit
 * between the scanner and the progress bar, pass every call on to the bar,
 * and note the wall-clock (CLOCK_MONOTONIC) and CPU time
 * (CLOCK_PROCESS_CPUTIME_ID) at each change of phase.  Storing the result
 * in a database is timed as a step of its own.  The table goes to stderr,
 * so that output and timings can be taken apart.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "scan.h"
#include "termbar.h"

enum cli_timing_step {
    CLI_TIMING_SUPER,   /* SCAN_PHASE_SUPER */
    CLI_TIMING_FREE,    /* SCAN_PHASE_FREE */
    CLI_TIMING_TREE,    /* SCAN_PHASE_TREE: directory and extender trees */
    CLI_TIMING_SWEEP,   /* SCAN_PHASE_SWEEP: every block */
    CLI_TIMING_ANALYSE, /* SCAN_PHASE_ANALYSE */
    CLI_TIMING_STORE,   /* writing the database (--db) */
    CLI_TIMING_STEPS,
};

struct cli_timings {
    bool on;                          /* -t given: note the times */
    struct cli_bar *bar;              /* every progress call goes on to it */
    int cur;                          /* the step running, -1 = none */
    double wall0, cpu0;               /* when it began (seconds) */
    double wall[CLI_TIMING_STEPS];    /* wall-clock seconds per step */
    double cpu[CLI_TIMING_STEPS];     /* CPU seconds per step */
    bool seen[CLI_TIMING_STEPS];      /* the step ran */
};

void cli_timings_init(struct cli_timings *t, bool on, struct cli_bar *bar);
/* A scan_opts progress callback; ctx is a struct cli_timings. */
void cli_timings_on_scan(void *ctx, enum scan_phase phase, uint64_t done, uint64_t total);
/* Begin a step that is not a scan phase (CLI_TIMING_STORE); ends the one running. */
void cli_timings_begin(struct cli_timings *t, enum cli_timing_step step);
/* End the step running. */
void cli_timings_end(struct cli_timings *t);
/* Print the table: one line per step that ran, then the total. */
void cli_timings_print(const struct cli_timings *t, FILE *f);
