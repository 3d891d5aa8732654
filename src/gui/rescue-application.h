/*
 * rescue-application.h -- LanyFS Rescue, the application object.
 *
 * org.lanyfs.Rescue opens a window per file given on the command line (or
 * one empty window), owns the application actions (about, quit) and the
 * keyboard accelerators, and runs the smoke test when asked to with
 * --smoke-test=FOLDER (see rescue-smoke.h).
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define RESCUE_APPLICATION_ID "org.lanyfs.Rescue"

#define RESCUE_TYPE_APPLICATION (rescue_application_get_type())
G_DECLARE_FINAL_TYPE(RescueApplication, rescue_application, RESCUE, APPLICATION, AdwApplication)

RescueApplication *rescue_application_new(void);
/* The status main() returns after g_application_run (the smoke test's verdict). */
int rescue_application_get_exit_status(RescueApplication *self);

G_END_DECLS
