/*
 * errors.c -- error strings and the error object (errors.h).
 */
#include <stdio.h>
#include <string.h>

#include "errors.h"

static const char *const error_text[LANYFS_E_COUNT] = {
#define LANYFS_X_TEXT(code, text) [code] = text,
    LANYFS_ERRORS(LANYFS_X_TEXT)
#undef LANYFS_X_TEXT
};

const char *lanyfs_strerror(enum lanyfs_err code)
{
    if ((unsigned)code >= LANYFS_E_COUNT)
        return "unknown error";
    return error_text[code];
}

enum lanyfs_err lanyfs_fail(struct lanyfs_error *err, enum lanyfs_err code, uint64_t block,
                            const char *fmt, ...)
{
    if (err == NULL)
        return code;
    err->code = code;
    err->block = block;
    err->sys_errno = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

void lanyfs_error_clear(struct lanyfs_error *err)
{
    if (err == NULL)
        return;
    err->code = LANYFS_OK;
    err->block = LANYFS_NO_BLOCK;
    err->sys_errno = 0;
    err->msg[0] = '\0';
}

void lanyfs_error_prefix(struct lanyfs_error *err, const char *fmt, ...)
{
    if (err == NULL)
        return;
    char head[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof(head), fmt, ap);
    va_end(ap);
    char old[sizeof(err->msg)];
    memcpy(old, err->msg, sizeof(old));
    old[sizeof(old) - 1] = '\0';
    size_t hl = strlen(head), ol = strlen(old), cap = sizeof(err->msg) - 1;
    size_t pos = 0;
    for (size_t i = 0; i < hl && pos < cap; i++)
        err->msg[pos++] = head[i];
    for (size_t i = 0; i < 2 && pos < cap; i++)
        err->msg[pos++] = ": "[i];
    for (size_t i = 0; i < ol && pos < cap; i++)
        err->msg[pos++] = old[i];
    err->msg[pos] = '\0';
}
