/*
 * rescue-application.c -- the application object (rescue-application.h).
 */
#define G_LOG_DOMAIN "rescue-application"

#include "config.h"

#include <glib/gi18n.h>

#include "rescue-application.h"
#include "rescue-resources.h"
#include "rescue-smoke.h"
#include "rescue-window-private.h"

struct _RescueApplication {
    AdwApplication parent_instance;

    char *smoke_folder;   /* --smoke-test=FOLDER, NULL for a normal run (owned) */
    unsigned geom_bits;   /* --geometry BS:AL for the images named: log2 BS, 0 = none */
    unsigned geom_addrlen;/* its AL, 0 = inferred */
    int exit_status;      /* what main() returns */
};

G_DEFINE_FINAL_TYPE(RescueApplication, rescue_application, ADW_TYPE_APPLICATION)

static void action_about(GSimpleAction *action, GVariant *param, gpointer user_data)
{
    GtkApplication *app = GTK_APPLICATION(user_data);
    GtkWindow *parent = gtk_application_get_active_window(app);
    static const char *developers[] = {"The lanyfs-tools developers", NULL};
    GtkWidget *about;

    (void)action;
    (void)param;
    about = g_object_new(ADW_TYPE_ABOUT_WINDOW,
                         "transient-for", parent,
                         "application-name", _("LanyFS Rescue"),
                         "application-icon", RESCUE_APPLICATION_ID,
                         "version", PACKAGE_VERSION,
                         "developer-name", _("The lanyfs-tools developers"),
                         "developers", developers,
                         "comments", _("Check, repair and recover files from LanyFS sticks"),
                         "license-type", GTK_LICENSE_GPL_2_0,
                         /* TRANSLATORS: your name and address, one translator a line */
                         "translator-credits", _("translator-credits"),
                         NULL);
    gtk_window_present(GTK_WINDOW(about));
}

static void action_quit(GSimpleAction *action, GVariant *param, gpointer user_data)
{
    GtkApplication *app = GTK_APPLICATION(user_data);
    GList *windows;

    (void)action;
    (void)param;
    /* Close every window, so each saves its state. */
    while ((windows = gtk_application_get_windows(app)) != NULL)
        gtk_window_destroy(GTK_WINDOW(windows->data));
    g_application_quit(G_APPLICATION(app));
}

static const GActionEntry app_actions[] = {
    {.name = "about", .activate = action_about},
    {.name = "quit", .activate = action_quit},
};

static void rescue_application_startup(GApplication *application)
{
    GtkApplication *app = GTK_APPLICATION(application);
    static const struct {
        const char *action;
        const char *accels[3];
    } accels[] = {
        {"app.quit", {"<Control>q", NULL}},
        {"window.close", {"<Control>w", NULL}},
        {"win.open", {"<Control>o", NULL}},
        {"win.rescan", {"F5", "<Control>r", NULL}},
        {"win.search", {"<Control>f", NULL}},
        {"win.salvage", {"<Control>s", NULL}},
        {"win.salvage-all", {"<Control><Shift>s", NULL}},
        {"win.zoom-in", {"<Control>plus", "<Control>equal", NULL}},
        {"win.zoom-out", {"<Control>minus", NULL}},
        {"win.view::files", {"<Alt>1", NULL}},
        {"win.view::findings", {"<Alt>2", NULL}},
        {"win.view::map", {"<Alt>3", NULL}},
    };

    G_APPLICATION_CLASS(rescue_application_parent_class)->startup(application);
    g_action_map_add_action_entries(G_ACTION_MAP(application), app_actions,
                                    G_N_ELEMENTS(app_actions), application);
    for (guint i = 0; i < G_N_ELEMENTS(accels); i++)
        gtk_application_set_accels_for_action(app, accels[i].action, accels[i].accels);
}

static RescueWindow *new_window(RescueApplication *self)
{
    RescueWindow *window = rescue_window_new(ADW_APPLICATION(self));

    window->smoke = self->smoke_folder != NULL;
    return window;
}

static void rescue_application_activate(GApplication *application)
{
    RescueApplication *self = RESCUE_APPLICATION(application);
    GtkWindow *window = gtk_application_get_active_window(GTK_APPLICATION(application));

    if (self->smoke_folder != NULL) {
        g_printerr("lanyfs-rescue: --smoke-test needs an image to open\n");
        self->exit_status = 2;
        return;
    }
    if (window == NULL)
        window = GTK_WINDOW(new_window(self));
    gtk_window_present(window);
}

static void on_smoke_done(int status, gpointer user_data)
{
    RescueApplication *self = user_data;

    self->exit_status = status;
    action_quit(NULL, NULL, self);
}

static void rescue_application_open(GApplication *application, GFile **files, int n_files,
                                    const char *hint)
{
    RescueApplication *self = RESCUE_APPLICATION(application);

    (void)hint;
    for (int i = 0; i < n_files; i++) {
        g_autofree char *path = g_file_get_path(files[i]);
        RescueWindow *window;

        if (path == NULL) {
            g_autofree char *uri = g_file_get_uri(files[i]);
            g_printerr(_("lanyfs-rescue: only local files can be opened: %s\n"), uri);
            continue;
        }
        window = new_window(self);
        gtk_window_present(GTK_WINDOW(window));
        if (self->smoke_folder != NULL) {
            rescue_smoke_start(window, self->smoke_folder, path, on_smoke_done, self);
            return; /* one image per smoke test */
        }
        if (self->geom_bits != 0)
            rescue_window_open_path_with_geometry(window, path, self->geom_bits,
                                                  self->geom_addrlen);
        else
            rescue_window_open_path(window, path);
    }
}

static int rescue_application_handle_local_options(GApplication *application,
                                                   GVariantDict *options)
{
    RescueApplication *self = RESCUE_APPLICATION(application);

    if (g_variant_dict_contains(options, "version")) {
        g_print("lanyfs-rescue %s\n", PACKAGE_VERSION);
        return 0;
    }
    const char *geometry = NULL;
    if (g_variant_dict_lookup(options, "geometry", "&s", &geometry)) {
        if (!lanyfs_geom_parse_bs(geometry, &self->geom_bits, &self->geom_addrlen)) {
            g_printerr(_("lanyfs-rescue: --geometry expects BLOCKSIZE or BLOCKSIZE:ADDRLEN with a "
                         "block size 512..4096 and 1..8 address bytes, not '%s'\n"),
                       geometry);
            return 2;
        }
        /* The images are opened here, with the geometry, not handed to a
         * window already open. */
        g_application_set_flags(application,
                                g_application_get_flags(application) | G_APPLICATION_NON_UNIQUE);
    }
    if (g_variant_dict_lookup(options, "smoke-test", "^ay", &self->smoke_folder)) {
        /* A test runs on its own, whatever else is running. */
        g_application_set_flags(application,
                                g_application_get_flags(application) | G_APPLICATION_NON_UNIQUE);
    }
    return -1;
}

static void rescue_application_finalize(GObject *object)
{
    RescueApplication *self = RESCUE_APPLICATION(object);

    g_free(self->smoke_folder);
    G_OBJECT_CLASS(rescue_application_parent_class)->finalize(object);
}

static void rescue_application_class_init(RescueApplicationClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GApplicationClass *app_class = G_APPLICATION_CLASS(klass);

    object_class->finalize = rescue_application_finalize;
    app_class->startup = rescue_application_startup;
    app_class->activate = rescue_application_activate;
    app_class->open = rescue_application_open;
    app_class->handle_local_options = rescue_application_handle_local_options;
}

static void rescue_application_init(RescueApplication *self)
{
    static const GOptionEntry entries[] = {
        {"version", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Show the version and quit"), NULL},
        {"geometry", 0, 0, G_OPTION_ARG_STRING, NULL,
         N_("Read the images named with this block size and address length (inferred when left "
            "out), whatever block 0 says (an earlier format on a stick formatted again); no "
            "repair is offered"),
         N_("BS[:AL]")},
        {"smoke-test", 0, 0, G_OPTION_ARG_FILENAME, NULL,
         N_("Scan the image, save screenshots of every view into FOLDER, and quit"),
         N_("FOLDER")},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };

    g_application_add_main_option_entries(G_APPLICATION(self), entries);
    g_application_set_option_context_parameter_string(G_APPLICATION(self),
                                                      _("[IMAGE|DEVICE|SCAN.db…]"));
}

RescueApplication *rescue_application_new(void)
{
    static gsize registered;

    if (g_once_init_enter(&registered)) {
        rescue_register_resource();
        g_once_init_leave(&registered, 1);
    }
    return g_object_new(RESCUE_TYPE_APPLICATION,
                        "application-id", RESCUE_APPLICATION_ID,
                        "flags", G_APPLICATION_HANDLES_OPEN,
                        "resource-base-path", "/org/lanyfs/Rescue",
                        NULL);
}

int rescue_application_get_exit_status(RescueApplication *self)
{
    g_return_val_if_fail(RESCUE_IS_APPLICATION(self), 1);
    return self->exit_status;
}
