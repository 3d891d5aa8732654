/*
 * lanyfs.c -- main of the `lanyfs` tool: global options and the table of
 * subcommands.
 *
 * `lanyfs [--help | --version]` and `lanyfs COMMAND [ARGS...]`.  A command
 * is found by its name in LANYFS_COMMANDS and run with argv[0] set to its
 * name; its return value is the exit status (exit_codes.h).  To add a
 * command, write cmd_NAME.c (see cli.h) and add X(NAME) to the list below,
 * in the order `lanyfs --help` should show it.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli.h"

#define LANYFS_COMMANDS(X) \
    X(info)                \
    X(ls)                  \
    X(cat)                 \
    X(stat)                \
    X(scan)                \
    X(salvage)             \
    X(versions)            \
    X(wear)                \
    X(mkdir)               \
    X(put)                 \
    X(rm)                  \
    X(rmdir)               \
    X(mv)                  \
    X(truncate)            \
    X(replay)              \
    X(simulate)

#define CLI_X_DECLARE(name) extern const struct cli_command cmd_##name;
LANYFS_COMMANDS(CLI_X_DECLARE)
#undef CLI_X_DECLARE

static const struct cli_command *const commands[] = {
#define CLI_X_ENTRY(name) &cmd_##name,
    LANYFS_COMMANDS(CLI_X_ENTRY)
#undef CLI_X_ENTRY
};

static int print_help(FILE *out)
{
    fputs(_("Usage: lanyfs COMMAND [OPTIONS] IMAGE [ARGS]\n"
            "       lanyfs --help | --version\n"
            "       lanyfs COMMAND --help\n"
            "Inspect a LanyFS 1.4 image read-only.\n\n"
            "Commands:\n"),
          out);
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(out, "  %-8s %s\n", commands[i]->name, _(commands[i]->summary));
    fputc('\n', out);
    fputs(_("Every command but cat takes --json (format: docs/json.md).\n"
            "Names from the disk are escaped: \\xNN for a byte that is not printable\n"
            "UTF-8 (and for '/' inside a name), \\\\ for a backslash.\n"),
          out);
    fputc('\n', out);
    cli_print_exit_codes(out);
    return fflush(out) == 0 ? LANYFS_EXIT_OK : LANYFS_EXIT_ERROR;
}

static const struct cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    cli_i18n_init();
    if (argc < 2) {
        print_help(stderr);
        return LANYFS_EXIT_USAGE;
    }
    const char *word = argv[1];
    if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0 || strcmp(word, "help") == 0) {
        if (argc > 2 && strcmp(word, "help") == 0) {
            const struct cli_command *cmd = find_command(argv[2]);
            if (cmd != NULL)
                return cli_help(cmd);
        }
        return print_help(stdout);
    }
    if (strcmp(word, "--version") == 0 || strcmp(word, "-V") == 0) {
        printf("lanyfs (lanyfs-tools) %s\n", PACKAGE_VERSION);
        printf(_("Reads LanyFS %d.%d.\n"), LANYFS_VERSION_MAJOR, LANYFS_VERSION_MINOR);
        return fflush(stdout) == 0 ? LANYFS_EXIT_OK : LANYFS_EXIT_ERROR;
    }
    const struct cli_command *cmd = find_command(word);
    if (cmd == NULL) {
        char *esc = out_escape(word, strlen(word), 0);
        fprintf(stderr, _("lanyfs: unknown command '%s'\nTry 'lanyfs --help'.\n"), esc);
        g_free(esc);
        return LANYFS_EXIT_USAGE;
    }
    return cmd->run(cmd, argc - 1, argv + 1);
}
