/*
 * main.c -- lanyfs-rescue: set up gettext, run the application.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "rescue-application.h"

int main(int argc, char *argv[])
{
    g_autoptr(RescueApplication) app = NULL;
    int status;

    setlocale(LC_ALL, "");
    bindtextdomain(GETTEXT_PACKAGE, LOCALEDIR);
    bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
    textdomain(GETTEXT_PACKAGE);

    app = rescue_application_new();
    status = g_application_run(G_APPLICATION(app), argc, argv);
    return status != 0 ? status : rescue_application_get_exit_status(app);
}
