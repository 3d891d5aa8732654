/*
 * rescue-magic.h -- what kind of content bytes hold, as libmagic says.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The content type of len bytes as libmagic describes it ("PNG image data,
 * 96 x 64, ...") and its MIME type ("image/png"); either out pointer may be
 * NULL, and either answer NULL when libmagic has none.  Thread-safe: each
 * call opens its own libmagic handle.
 */
void rescue_magic_describe(const guint8 *bytes, gsize len, char **description, char **mime);

G_END_DECLS
