/*
 * utf8.h -- one UTF-8 sequence decoded, for the escaping of names and
 * text from the disk (the command-line tools, fsck, the store, salvage,
 * wear reports).
 *
 * A sequence is valid when it is the shortest form of a code point up to
 * U+10FFFF that is not a surrogate (RFC 3629); anything else, a truncated
 * sequence included, is invalid and the callers escape its first byte.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The length of the valid UTF-8 sequence at p (n >= 1 bytes left), 0 when
 * the bytes there are not one; *cp receives its code point.
 */
static inline size_t lanyfs_utf8_decode(const uint8_t *p, size_t n, uint32_t *cp)
{
    uint8_t c = p[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}
