/*
 * cmd_versions.c -- `lanyfs versions [OPTIONS] IMAGE PATH`: list the earlier versions of a path that freed blocks still hold.
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

const struct cli_command cmd_versions = {
    "versions",
    "[OPTIONS] IMAGE PATH",
    "List the earlier versions of a path that freed blocks still hold.",
    "",
    run,
};
