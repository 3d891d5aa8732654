/*
 * rescue-stall-meter.c -- main-loop lateness (rescue-stall-meter.h).
 */
#define G_LOG_DOMAIN "rescue-stall-meter"

#include "config.h"

#include "rescue-stall-meter.h"

struct _RescueStallMeter {
    GSource *source;   /* the ticking timeout (owned) */
    gint64 interval;   /* microseconds between ticks */
    gint64 last;       /* monotonic time of the last tick */
    gint64 max;        /* longest lateness */
    guint64 ticks;     /* ticks seen */
};

static gboolean tick(gpointer user_data)
{
    RescueStallMeter *m = user_data;
    gint64 now = g_get_monotonic_time();
    gint64 late = now - m->last - m->interval;

    if (late > m->max)
        m->max = late;
    m->last = now;
    m->ticks++;
    return G_SOURCE_CONTINUE;
}

RescueStallMeter *rescue_stall_meter_new(guint interval_ms)
{
    RescueStallMeter *m = g_new0(RescueStallMeter, 1);

    m->interval = (gint64)MAX(interval_ms, 1) * 1000;
    m->last = g_get_monotonic_time();
    m->source = g_timeout_source_new(MAX(interval_ms, 1));
    /* Above the GTK redraw priority, so a busy frame clock does not look like a stall. */
    g_source_set_priority(m->source, G_PRIORITY_HIGH);
    g_source_set_callback(m->source, tick, m, NULL);
    g_source_set_static_name(m->source, "[rescue] stall meter");
    g_source_attach(m->source, g_main_context_get_thread_default());
    return m;
}

void rescue_stall_meter_free(RescueStallMeter *meter)
{
    if (meter == NULL)
        return;
    g_source_destroy(meter->source);
    g_source_unref(meter->source);
    g_free(meter);
}

gint64 rescue_stall_meter_get_max(const RescueStallMeter *meter)
{
    g_return_val_if_fail(meter != NULL, 0);
    return MAX(meter->max, 0);
}

guint64 rescue_stall_meter_get_ticks(const RescueStallMeter *meter)
{
    g_return_val_if_fail(meter != NULL, 0);
    return meter->ticks;
}

void rescue_stall_meter_reset(RescueStallMeter *meter)
{
    g_return_if_fail(meter != NULL);

    meter->max = 0;
    meter->ticks = 0;
    meter->last = g_get_monotonic_time();
}

void rescue_stall_meter_forgive(RescueStallMeter *meter)
{
    g_return_if_fail(meter != NULL);

    meter->last = g_get_monotonic_time();
}
