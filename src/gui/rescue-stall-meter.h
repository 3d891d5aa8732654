/*
 * rescue-stall-meter.h -- how long the main loop went without turning.
 *
 * A meter is a timeout of a few milliseconds on the main context that
 * notes, each time it runs, how late it is.  The longest lateness is the
 * longest time the window could not have answered the user: what the
 * smoke test reports while a scan runs and its results are shown.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _RescueStallMeter RescueStallMeter;

/* Start metering on the thread-default main context, ticking every interval_ms. */
RescueStallMeter *rescue_stall_meter_new(guint interval_ms);
void rescue_stall_meter_free(RescueStallMeter *meter);
/* Longest lateness so far, in microseconds. */
gint64 rescue_stall_meter_get_max(const RescueStallMeter *meter);
/* Ticks seen so far. */
guint64 rescue_stall_meter_get_ticks(const RescueStallMeter *meter);
/* Do not count the time since the last tick (work of the test itself, not of the window). */
void rescue_stall_meter_forgive(RescueStallMeter *meter);
/* Forget what was measured (the maximum starts again from now). */
void rescue_stall_meter_reset(RescueStallMeter *meter);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RescueStallMeter, rescue_stall_meter_free)

G_END_DECLS
