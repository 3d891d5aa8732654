/*
 * fuzz_fail.c -- how a fuzz target reports a broken promise of the core:
 * a line on stderr, then abort(), so libFuzzer and the sanitizers keep the
 * input and the stack.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz target: broken promise: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
