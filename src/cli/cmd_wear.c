/*
 * cmd_wear.c -- `lanyfs wear [OPTIONS] IMAGE`: report write counters and wear.
 */
#include <stdio.h>

#include "cli.h"

static int run(const struct cli_command *self, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "lanyfs %s: not available in this build\n", self->name);
    return LANYFS_EXIT_ERROR;
}

const struct cli_command cmd_wear = {
    "wear",
    "[OPTIONS] IMAGE",
    "Report write counters and wear.",
    "",
    run,
};
