/*
 * rescue-window-private.h -- what rescue-window.c and rescue-window-actions.c share.
 */
#pragma once

#include "rescue-details-pane.h"
#include "rescue-files-view.h"
#include "rescue-findings-view.h"
#include "rescue-map-view.h"
#include "rescue-stall-meter.h"
#include "rescue-window.h"

G_BEGIN_DECLS

struct _RescueWindow {
    AdwApplicationWindow parent_instance;

    /* Template Widgets */
    AdwToastOverlay *toast_overlay;
    AdwHeaderBar *header_bar;
    AdwViewSwitcherTitle *switcher_title;
    GtkButton *repair_button;
    GtkToggleButton *search_button;
    GtkStack *main_stack;
    AdwStatusPage *welcome_page;
    GtkListBox *recent_list;
    GtkWidget *recent_group;
    AdwStatusPage *scan_page;
    GtkProgressBar *progress_bar;
    GtkLabel *phase_label;
    GtkPaned *results_paned;
    AdwViewStack *view_stack;
    RescueFilesView *files_view;
    RescueFindingsView *findings_view;
    RescueMapView *map_view;
    RescueDetailsPane *details_pane;
    GMenu *recent_section;

    /* Owned References */
    GSettings *settings;          /* org.lanyfs.Rescue */
    RescueData *data;             /* the scan shown, NULL before the first */
    char *path;                   /* what is open or being opened */
    GCancellable *scan;           /* the running scan, NULL when none */
    GCancellable *work;           /* a running salvage or export, NULL when none */
    RescueStallMeter *stall;      /* main-loop lateness while scanning */

    gint64 scan_started;          /* monotonic time the scan started */
    gint64 scan_seconds_us;       /* how long the last scan took */
    gint64 scan_stall_us;         /* longest main-loop stall during it and its display */
    gboolean scan_ok;             /* the last scan gave results */
    guint frames_after_scan;      /* frames drawn since it ended */
    gboolean smoke;               /* driven by the smoke test: no dialogs */
    char *geom_path;              /* the image a geometry was given for (--geometry), owned */
    unsigned geom_bits, geom_addrlen; /* that geometry; bits 0 = none, addrlen 0 = inferred */
    gboolean geom_used;           /* the scan shown was read with it: no repair */
};

/* rescue-window.c */
void _rescue_window_show_error(RescueWindow *self, const char *heading, const char *message);
void _rescue_window_toast(RescueWindow *self, const char *text);
void _rescue_window_update_actions(RescueWindow *self);
void _rescue_window_reveal_entry(RescueWindow *self, guint32 id);
void _rescue_window_reveal_block(RescueWindow *self, guint64 block);

/* rescue-window-actions.c */
void _rescue_window_class_actions_init(GtkWidgetClass *widget_class);
void _rescue_window_actions_init(RescueWindow *self);
/*
 * Repair what is open, saving to undo_path, as the confirmation's "repair"
 * does; FALSE when a scan or other work is running.  Rescans when done.
 */
gboolean _rescue_window_start_repair(RescueWindow *self, const char *undo_path);
/* Salvage ids (n == 0: everything) into dest without asking where (the smoke test). */
gboolean _rescue_window_start_salvage(RescueWindow *self, const guint32 *ids, guint n,
                                      const char *dest);
/* Export without asking where (the smoke test). */
gboolean _rescue_window_export_to(RescueWindow *self, const char *kind, const char *path,
                                  GError **error);

G_END_DECLS
