/*
 * entry.c -- directory and file blocks (SPEC-§5), and the tree's name order.
 */
#include <string.h>

#include "lanyfs.h"

void lanyfs_entry_decode(struct lanyfs_entry *e, const uint8_t *b)
{
    memset(e, 0, sizeof(*e));
    e->type = b[LANYFS_HDR_TYPE];
    e->res1 = b[LANYFS_HDR_RES1];
    e->wrcnt = lanyfs_get16(b + LANYFS_HDR_WRCNT);
    e->left = lanyfs_get64(b + LANYFS_EN_LEFT);
    e->right = lanyfs_get64(b + LANYFS_EN_RIGHT);
    e->subtree = lanyfs_get64(b + LANYFS_EN_SUBTREE);
    e->size = lanyfs_get64(b + LANYFS_EN_SIZE);
    lanyfs_ts_decode(&e->created, b + LANYFS_EN_CREATED);
    lanyfs_ts_decode(&e->modified, b + LANYFS_EN_MODIFIED);
    e->attr = lanyfs_get16(b + LANYFS_EN_ATTR);
    memcpy(e->name, b + LANYFS_EN_NAME, LANYFS_NAME_FIELD);
    const void *nul = memchr(e->name, 0, LANYFS_NAME_FIELD);
    e->name_len = nul ? (size_t)((const uint8_t *)nul - e->name) : LANYFS_NAME_FIELD;
}

void lanyfs_entry_encode(const struct lanyfs_entry *e, uint8_t *b)
{
    b[LANYFS_HDR_TYPE] = e->type;
    b[LANYFS_HDR_RES1] = e->res1;
    lanyfs_put16(b + LANYFS_HDR_WRCNT, e->wrcnt);
    lanyfs_put64(b + LANYFS_EN_LEFT, e->left);
    lanyfs_put64(b + LANYFS_EN_RIGHT, e->right);
    lanyfs_put64(b + LANYFS_EN_SUBTREE, e->subtree);
    lanyfs_put64(b + LANYFS_EN_SIZE, e->size);
    lanyfs_ts_encode(&e->created, b + LANYFS_EN_CREATED);
    lanyfs_ts_encode(&e->modified, b + LANYFS_EN_MODIFIED);
    lanyfs_put16(b + LANYFS_EN_ATTR, e->attr);
    memcpy(b + LANYFS_EN_NAME, e->name, LANYFS_NAME_FIELD);
}

void lanyfs_entry_set_name(struct lanyfs_entry *e, const char *name, size_t len)
{
    if (len > LANYFS_NAME_MAX)
        len = LANYFS_NAME_MAX;
    memset(e->name, 0, sizeof(e->name));
    memcpy(e->name, name, len);
    e->name_len = strnlen((const char *)e->name, len);
}

bool lanyfs_entry_is_formatter_root(const struct lanyfs_entry *e)
{
    return e->type == LANYFS_TYPE_DIR && e->name_len == sizeof(LANYFS_ROOT_NAME) - 1 &&
           memcmp(e->name, LANYFS_ROOT_NAME, e->name_len) == 0;
}

bool lanyfs_entry_name_ok(const struct lanyfs_entry *e)
{
    return e->name_len > 0 && e->name_len <= LANYFS_NAME_MAX &&
           memchr(e->name, '/', e->name_len) == NULL;
}

int lanyfs_name_cmp(const uint8_t *node_name, const uint8_t *x, size_t xlen)
{
    /* strncmp(node, x, 256) over unsigned bytes; x ends at xlen (an implied NUL). */
    for (size_t i = 0; i < LANYFS_NAME_FIELD; i++) {
        unsigned a = node_name[i];
        unsigned b = i < xlen ? x[i] : 0;
        if (a != b)
            return a < b ? -1 : 1;
        if (a == 0)
            return 0;
    }
    return 0;
}
