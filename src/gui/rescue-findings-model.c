/*
 * rescue-findings-model.c -- the findings, filtered by severity (rescue-findings-model.h).
 */
#define G_LOG_DOMAIN "rescue-findings-model"

#include "config.h"

#include "rescue-finding.h"
#include "rescue-findings-model.h"
#include "rescue-index-list.h"

struct _RescueFindingsModel {
    GObject parent_instance;

    /* Owned References */
    RescueData *data;             /* the scan */
    GtkCustomFilter *filter;      /* by severity */
    GtkFilterListModel *filtered; /* what the view shows */

    guint8 min_severity;          /* lowest severity shown */
};

G_DEFINE_FINAL_TYPE(RescueFindingsModel, rescue_findings_model, G_TYPE_OBJECT)

static gboolean severity_match(gpointer item, gpointer user_data)
{
    RescueFindingsModel *self = user_data;
    const RescueFindingInfo *f = rescue_finding_get_info(RESCUE_FINDING(item));

    return f != NULL && f->severity >= self->min_severity;
}

static void rescue_findings_model_dispose(GObject *object)
{
    RescueFindingsModel *self = RESCUE_FINDINGS_MODEL(object);

    /* The filter calls back into self: cut it loose before self goes. */
    if (self->filter != NULL)
        gtk_custom_filter_set_filter_func(self->filter, NULL, NULL, NULL);
    g_clear_object(&self->filtered);
    g_clear_object(&self->filter);
    G_OBJECT_CLASS(rescue_findings_model_parent_class)->dispose(object);
}

static void rescue_findings_model_finalize(GObject *object)
{
    RescueFindingsModel *self = RESCUE_FINDINGS_MODEL(object);

    g_clear_pointer(&self->data, rescue_data_unref);
    G_OBJECT_CLASS(rescue_findings_model_parent_class)->finalize(object);
}

static void rescue_findings_model_class_init(RescueFindingsModelClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);

    object_class->dispose = rescue_findings_model_dispose;
    object_class->finalize = rescue_findings_model_finalize;
}

static void rescue_findings_model_init(RescueFindingsModel *self)
{
    (void)self;
}

RescueFindingsModel *rescue_findings_model_new(RescueData *data)
{
    RescueFindingsModel *self;
    RescueIndexList *all;

    g_return_val_if_fail(data != NULL, NULL);

    self = g_object_new(RESCUE_TYPE_FINDINGS_MODEL, NULL);
    self->data = rescue_data_ref(data);
    self->filter = gtk_custom_filter_new(severity_match, self, NULL);
    all = rescue_index_list_new_range(data, RESCUE_TYPE_FINDING, rescue_finding_make, 0,
                                      rescue_data_get_n_findings(data));
    self->filtered = gtk_filter_list_model_new(G_LIST_MODEL(all),
                                               g_object_ref(GTK_FILTER(self->filter)));
    return self;
}

GListModel *rescue_findings_model_get_model(RescueFindingsModel *self)
{
    g_return_val_if_fail(RESCUE_IS_FINDINGS_MODEL(self), NULL);
    return G_LIST_MODEL(self->filtered);
}

void rescue_findings_model_set_min_severity(RescueFindingsModel *self, guint8 severity)
{
    guint8 old;

    g_return_if_fail(RESCUE_IS_FINDINGS_MODEL(self));

    severity = MIN(severity, SCAN_SEV_CRITICAL);
    old = self->min_severity;
    if (severity == old)
        return;
    self->min_severity = severity;
    gtk_filter_changed(GTK_FILTER(self->filter), severity > old ? GTK_FILTER_CHANGE_MORE_STRICT
                                                                : GTK_FILTER_CHANGE_LESS_STRICT);
}

guint8 rescue_findings_model_get_min_severity(RescueFindingsModel *self)
{
    g_return_val_if_fail(RESCUE_IS_FINDINGS_MODEL(self), 0);
    return self->min_severity;
}
