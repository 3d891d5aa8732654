/*
 * text.c -- names and messages from the disk, made safe to print.
 *
 * Names may hold any byte but NUL (SPEC-§5).  fsck_escape keeps printable
 * UTF-8 as it is and writes every other byte as \xNN (a backslash as \\),
 * the same form `lanyfs` uses, so a terminal never receives control bytes
 * from a hostile disk.  fsck_json_string writes a JSON string of any bytes:
 * valid UTF-8 is kept (control characters as \u00NN), other bytes become
 * the text \xNN.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"
#include "utf8.h"

static bool is_control(unsigned long cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

char *fsck_escape(const void *src, size_t len)
{
    const unsigned char *s = src;
    char *out = malloc(len * 4 + 1);
    if (out == NULL)
        return NULL;
    static const char hex[] = "0123456789abcdef";
    size_t w = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = lanyfs_utf8_decode((const uint8_t *)s + i, len - i, &cp);
        if (n == 1 && s[i] == '\\') {
            out[w++] = '\\';
            out[w++] = '\\';
            i++;
        } else if (n == 0 || is_control(cp)) {
            size_t bytes = n == 0 ? 1 : n;
            for (size_t k = 0; k < bytes; k++) {
                out[w++] = '\\';
                out[w++] = 'x';
                out[w++] = hex[s[i + k] >> 4];
                out[w++] = hex[s[i + k] & 15];
            }
            i += bytes;
        } else {
            memcpy(out + w, s + i, n);
            w += n;
            i += n;
        }
    }
    out[w] = '\0';
    return out;
}

void fsck_json_string(FILE *f, const char *str)
{
    if (str == NULL) {
        fputs("null", f);
        return;
    }
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str);
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = lanyfs_utf8_decode((const uint8_t *)s + i, len - i, &cp);
        if (n == 0) {
            fprintf(f, "\\\\x%02x", s[i]);
            i++;
            continue;
        }
        if (cp == '"')
            fputs("\\\"", f);
        else if (cp == '\\')
            fputs("\\\\", f);
        else if (cp == '\n')
            fputs("\\n", f);
        else if (cp == '\t')
            fputs("\\t", f);
        else if (cp < 0x20 || cp == 0x7F)
            fprintf(f, "\\u%04" PRIx32, cp);
        else
            fwrite(s + i, 1, n, f);
        i += n;
    }
    fputc('"', f);
}
