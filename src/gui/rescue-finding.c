/*
 * rescue-finding.c -- a finding as a list item (rescue-finding.h).
 */
#define G_LOG_DOMAIN "rescue-finding"

#include "config.h"

#include "rescue-finding.h"

struct _RescueFinding {
    GObject parent_instance;

    /* Owned References */
    RescueData *data; /* the scan */

    guint32 index;    /* the finding's place in data */
};

G_DEFINE_FINAL_TYPE(RescueFinding, rescue_finding, G_TYPE_OBJECT)

static void rescue_finding_finalize(GObject *object)
{
    RescueFinding *self = RESCUE_FINDING(object);

    g_clear_pointer(&self->data, rescue_data_unref);
    G_OBJECT_CLASS(rescue_finding_parent_class)->finalize(object);
}

static void rescue_finding_class_init(RescueFindingClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = rescue_finding_finalize;
}

static void rescue_finding_init(RescueFinding *self)
{
    (void)self;
}

RescueFinding *rescue_finding_new(RescueData *data, guint32 index)
{
    RescueFinding *self;

    g_return_val_if_fail(data != NULL, NULL);

    self = g_object_new(RESCUE_TYPE_FINDING, NULL);
    self->data = rescue_data_ref(data);
    self->index = index;
    return self;
}

gpointer rescue_finding_make(RescueData *data, guint32 index)
{
    return rescue_finding_new(data, index);
}

guint32 rescue_finding_get_index(RescueFinding *self)
{
    g_return_val_if_fail(RESCUE_IS_FINDING(self), 0);
    return self->index;
}

RescueData *rescue_finding_get_data(RescueFinding *self)
{
    g_return_val_if_fail(RESCUE_IS_FINDING(self), NULL);
    return self->data;
}

const RescueFindingInfo *rescue_finding_get_info(RescueFinding *self)
{
    g_return_val_if_fail(RESCUE_IS_FINDING(self), NULL);
    return rescue_data_get_finding(self->data, self->index);
}
