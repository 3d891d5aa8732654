/*
 * cmd_salvage.c -- `lanyfs salvage [OPTIONS] IMAGE OUTDIR [PATH...]`: copy files out of a damaged image into a folder.
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

const struct cli_command cmd_salvage = {
    "salvage",
    "[OPTIONS] IMAGE OUTDIR [PATH...]",
    "Copy files out of a damaged image into a folder.",
    "",
    run,
};
