/*
 * i18n.h -- gettext for the command-line tools (lanyfs, mkfs.lanyfs,
 * lanyfs-undo), in the text domain and catalogue of the whole project
 * (po/, GETTEXT_PACKAGE and LOCALEDIR from config.h).
 *
 * _() translates a message where it is used; N_() marks a string in a
 * static initialiser, translated where it is printed.  Only what a person
 * reads is marked: JSON, CSV, log and file formats stay as they are, and
 * under LC_ALL=C (or with no catalogue installed) every message is the
 * English msgid, byte for byte.
 */
#pragma once

#include <libintl.h>
#include <locale.h>

#define _(s) gettext(s)
#ifndef N_
#define N_(String) (String)
#endif

/* Only the mains, which include config.h first, set up the catalogue (the
 * tests that build the command's files without config.h need only _()). */
#if defined(GETTEXT_PACKAGE) && defined(LOCALEDIR)

#include <stdlib.h>

/*
 * Set the locale from the environment and bind the project's catalogue,
 * from LOCALEDIR or, when LANYFS_LOCALEDIR is set, from there (a build
 * that is not installed, the tests).  Numbers keep the C form (a decimal
 * point, no grouping): JSON, CSV and the reports print them with printf,
 * and they must read the same everywhere.
 */
static inline void cli_i18n_init(void)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    const char *dir = secure_getenv("LANYFS_LOCALEDIR");
    bindtextdomain(GETTEXT_PACKAGE, dir != NULL && dir[0] != '\0' ? dir : LOCALEDIR);
    bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
    textdomain(GETTEXT_PACKAGE);
}
#endif
