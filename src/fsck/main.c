/*
 * main.c -- fsck-lanyfs (also installed as fsck.lanyfs): the command is
 * fsck_main in the lanyfs-fsck library, so tests drive the same code.
 * Here the locale is set and the project's catalogue bound (LANYFS_LOCALEDIR
 * names another folder for it), as in the other tools' mains.
 */
#include "config.h"
#include "../cli/i18n.h"
#include "fsck.h"

int main(int argc, char **argv)
{
    cli_i18n_init();
    return fsck_main(argc, argv);
}
