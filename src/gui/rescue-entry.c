/*
 * rescue-entry.c -- an entry as a list item (rescue-entry.h).
 */
#define G_LOG_DOMAIN "rescue-entry"

#include "config.h"

#include "rescue-entry.h"

struct _RescueEntry {
    GObject parent_instance;

    /* Owned References */
    RescueData *data; /* the scan */

    guint32 id;       /* the entry's id in data */
};

G_DEFINE_FINAL_TYPE(RescueEntry, rescue_entry, G_TYPE_OBJECT)

static void rescue_entry_finalize(GObject *object)
{
    RescueEntry *self = RESCUE_ENTRY(object);

    g_clear_pointer(&self->data, rescue_data_unref);
    G_OBJECT_CLASS(rescue_entry_parent_class)->finalize(object);
}

static void rescue_entry_class_init(RescueEntryClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = rescue_entry_finalize;
}

static void rescue_entry_init(RescueEntry *self)
{
    (void)self;
}

RescueEntry *rescue_entry_new(RescueData *data, guint32 id)
{
    RescueEntry *self;

    g_return_val_if_fail(data != NULL, NULL);

    self = g_object_new(RESCUE_TYPE_ENTRY, NULL);
    self->data = rescue_data_ref(data);
    self->id = id;
    return self;
}

gpointer rescue_entry_make(RescueData *data, guint32 id)
{
    return rescue_entry_new(data, id);
}

guint32 rescue_entry_get_id(RescueEntry *self)
{
    g_return_val_if_fail(RESCUE_IS_ENTRY(self), 0);
    return self->id;
}

RescueData *rescue_entry_get_data(RescueEntry *self)
{
    g_return_val_if_fail(RESCUE_IS_ENTRY(self), NULL);
    return self->data;
}

const RescueEntryInfo *rescue_entry_get_info(RescueEntry *self)
{
    g_return_val_if_fail(RESCUE_IS_ENTRY(self), NULL);
    return rescue_data_get_entry(self->data, self->id);
}
