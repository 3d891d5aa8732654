/*
 * rescue-index-list.c -- a GListModel over numbers, items made on demand.
 */
#define G_LOG_DOMAIN "rescue-index-list"

#include "config.h"

#include "rescue-index-list.h"

struct _RescueIndexList {
    GObject parent_instance;

    /* Owned References */
    RescueData *data;          /* the data the numbers belong to */
    guint32 *owned;            /* copied numbers, NULL when borrowed or a range */

    /* Borrowed References */
    const guint32 *numbers;    /* the numbers; NULL for a range */

    guint32 first;             /* a range: its first number */
    guint32 count;             /* numbers in the list */
    GType item_type;           /* what get_item returns */
    RescueIndexItemFunc make;  /* makes an item */
};

static GType rescue_index_list_get_item_type(GListModel *model)
{
    return RESCUE_INDEX_LIST(model)->item_type;
}

static guint rescue_index_list_get_n_items(GListModel *model)
{
    return RESCUE_INDEX_LIST(model)->count;
}

static gpointer rescue_index_list_get_item(GListModel *model, guint position)
{
    RescueIndexList *self = RESCUE_INDEX_LIST(model);

    if (position >= self->count)
        return NULL;
    return self->make(self->data, rescue_index_list_get_number(self, position));
}

static void rescue_index_list_model_init(GListModelInterface *iface)
{
    iface->get_item_type = rescue_index_list_get_item_type;
    iface->get_n_items = rescue_index_list_get_n_items;
    iface->get_item = rescue_index_list_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE(RescueIndexList, rescue_index_list, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL,
                                                    rescue_index_list_model_init))

static void rescue_index_list_finalize(GObject *object)
{
    RescueIndexList *self = RESCUE_INDEX_LIST(object);

    g_clear_pointer(&self->data, rescue_data_unref);
    g_clear_pointer(&self->owned, g_free);
    G_OBJECT_CLASS(rescue_index_list_parent_class)->finalize(object);
}

static void rescue_index_list_class_init(RescueIndexListClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = rescue_index_list_finalize;
}

static void rescue_index_list_init(RescueIndexList *self)
{
    (void)self;
}

RescueIndexList *rescue_index_list_new(RescueData *data, GType item_type, RescueIndexItemFunc make,
                                       const guint32 *numbers, guint32 count, gboolean borrow)
{
    RescueIndexList *self;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(make != NULL, NULL);
    g_return_val_if_fail(numbers != NULL || count == 0, NULL);

    self = g_object_new(RESCUE_TYPE_INDEX_LIST, NULL);
    self->data = rescue_data_ref(data);
    self->item_type = item_type;
    self->make = make;
    self->count = count;
    if (borrow || count == 0) {
        self->numbers = numbers;
    } else {
        self->owned = g_memdup2(numbers, (gsize)count * sizeof(guint32));
        self->numbers = self->owned;
    }
    if (self->numbers == NULL)
        self->count = 0;
    return self;
}

RescueIndexList *rescue_index_list_new_range(RescueData *data, GType item_type,
                                             RescueIndexItemFunc make, guint32 first,
                                             guint32 count)
{
    RescueIndexList *self;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(make != NULL, NULL);

    self = g_object_new(RESCUE_TYPE_INDEX_LIST, NULL);
    self->data = rescue_data_ref(data);
    self->item_type = item_type;
    self->make = make;
    self->first = first;
    self->count = count;
    return self;
}

guint32 rescue_index_list_get_number(RescueIndexList *self, guint position)
{
    g_return_val_if_fail(RESCUE_IS_INDEX_LIST(self), G_MAXUINT32);

    if (position >= self->count)
        return G_MAXUINT32;
    return self->numbers != NULL ? self->numbers[position] : self->first + position;
}
