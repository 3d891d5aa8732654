/*
 * rescue-magic.c -- libmagic, one handle per call (rescue-magic.h).
 *
 * libmagic handles are not safe to share between threads, and the details
 * pane asks from a worker; opening one per question costs a few
 * milliseconds there, which nobody waits for.
 */
#define G_LOG_DOMAIN "rescue-magic"

#include "config.h"

#include <magic.h>

#include "rescue-magic.h"

void rescue_magic_describe(const guint8 *bytes, gsize len, char **description, char **mime)
{
    magic_t cookie;

    if (description != NULL)
        *description = NULL;
    if (mime != NULL)
        *mime = NULL;
    if (bytes == NULL || len == 0)
        return;
    cookie = magic_open(MAGIC_NONE | MAGIC_ERROR);
    if (cookie != NULL && magic_load(cookie, NULL) == 0) {
        const char *d;
        if (description != NULL && (d = magic_buffer(cookie, bytes, len)) != NULL)
            *description = g_utf8_make_valid(d, -1);
        if (mime != NULL && magic_setflags(cookie, MAGIC_MIME_TYPE | MAGIC_ERROR) == 0 &&
            (d = magic_buffer(cookie, bytes, len)) != NULL)
            *mime = g_strdup(d);
    }
    if (cookie != NULL)
        magic_close(cookie);
}
