/*
 * main.c -- fsck-lanyfs (also installed as fsck.lanyfs): the command is
 * fsck_main in the lanyfs-fsck library, so tests drive the same code.
 */
#include "fsck.h"

int main(int argc, char **argv)
{
    return fsck_main(argc, argv);
}
