/*
 * rescue-progress.c -- coalesced progress reports (rescue-progress.h).
 */
#define G_LOG_DOMAIN "rescue-progress"

#include "config.h"

#include "rescue-progress.h"

struct _RescueProgress {
    gatomicrefcount ref;       /* the worker, the main context and a queued report */
    GMutex lock;               /* guards everything below */
    double fraction;           /* latest */
    char *text;                /* latest (owned) */
    gboolean pending;          /* a report is queued */
    gboolean closed;           /* report nothing more */
    guint reports;             /* reports delivered */
    guint64 posts;             /* posts made */
    GMainContext *context;     /* where reports go (owned reference) */
    RescueProgressFunc func;   /* the receiver */
    gpointer func_data;        /* its data (borrowed) */
};

RescueProgress *rescue_progress_new(RescueProgressFunc func, gpointer user_data)
{
    RescueProgress *p = g_new0(RescueProgress, 1);

    g_atomic_ref_count_init(&p->ref);
    g_mutex_init(&p->lock);
    p->context = g_main_context_ref_thread_default();
    p->func = func;
    p->func_data = user_data;
    return p;
}

RescueProgress *rescue_progress_ref(RescueProgress *p)
{
    g_return_val_if_fail(p != NULL, NULL);

    g_atomic_ref_count_inc(&p->ref);
    return p;
}

void rescue_progress_unref(RescueProgress *p)
{
    g_return_if_fail(p != NULL);

    if (!g_atomic_ref_count_dec(&p->ref))
        return;
    g_mutex_clear(&p->lock);
    g_main_context_unref(p->context);
    g_free(p->text);
    g_free(p);
}

static gboolean report_idle(gpointer user_data)
{
    RescueProgress *p = user_data;
    double fraction;
    char *text;
    gboolean closed;

    g_mutex_lock(&p->lock);
    p->pending = FALSE;
    fraction = p->fraction;
    text = g_strdup(p->text);
    closed = p->closed;
    if (!closed)
        p->reports++;
    g_mutex_unlock(&p->lock);
    if (!closed && p->func != NULL)
        p->func(fraction, text, p->func_data);
    g_free(text);
    return G_SOURCE_REMOVE;
}

void rescue_progress_post(RescueProgress *p, double fraction, const char *text)
{
    gboolean queue = FALSE;

    g_return_if_fail(p != NULL);

    g_mutex_lock(&p->lock);
    p->posts++;
    if (fraction > p->fraction)
        p->fraction = MIN(fraction, 1.0);
    if (text != NULL && g_strcmp0(text, p->text) != 0) {
        g_free(p->text);
        p->text = g_strdup(text);
    }
    if (!p->pending && !p->closed) {
        p->pending = TRUE;
        queue = TRUE;
    }
    g_mutex_unlock(&p->lock);
    if (queue) {
        GSource *source = g_idle_source_new();
        g_source_set_priority(source, G_PRIORITY_DEFAULT_IDLE);
        g_source_set_callback(source, report_idle, rescue_progress_ref(p),
                              (GDestroyNotify)rescue_progress_unref);
        g_source_set_static_name(source, "[rescue] progress");
        g_source_attach(source, p->context);
        g_source_unref(source);
    }
}

void rescue_progress_close(RescueProgress *p)
{
    g_return_if_fail(p != NULL);

    g_mutex_lock(&p->lock);
    p->closed = TRUE;
    g_mutex_unlock(&p->lock);
}

void rescue_progress_finish(RescueProgress *p)
{
    gboolean pending;

    g_return_if_fail(p != NULL);

    g_mutex_lock(&p->lock);
    pending = p->pending && !p->closed;
    g_mutex_unlock(&p->lock);
    /* The queued idle finds the record closed and does nothing. */
    if (pending)
        report_idle(p);
    rescue_progress_close(p);
}

guint rescue_progress_get_reports(RescueProgress *p)
{
    guint n;

    g_return_val_if_fail(p != NULL, 0);
    g_mutex_lock(&p->lock);
    n = p->reports;
    g_mutex_unlock(&p->lock);
    return n;
}

guint64 rescue_progress_get_posts(RescueProgress *p)
{
    guint64 n;

    g_return_val_if_fail(p != NULL, 0);
    g_mutex_lock(&p->lock);
    n = p->posts;
    g_mutex_unlock(&p->lock);
    return n;
}
