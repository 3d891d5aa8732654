/*
 * magic_lazy.c -- loading libmagic on first use (magic_lazy.h says why).
 */
#include <pthread.h>
#include <stdio.h>

#define MAGIC_LAZY_LOADER
#include "magic_lazy.h"
#include "lazylib.h"

/* The library's name as installed (Debian: libmagic1). */
#define MAGIC_SONAME "libmagic.so.1"

struct magic_lazy_table magic_lazy;
static pthread_once_t magic_once = PTHREAD_ONCE_INIT;
static struct lazylib magic_lib;

static void magic_lazy_init(void)
{
    if (!lazylib_open(&magic_lib, MAGIC_SONAME))
        return;
#define MAGIC_LAZY_LOOKUP(f)                                                                \
    if (!lazylib_sym(&magic_lib, MAGIC_SONAME, #f, (void **)&magic_lazy.f))                \
        return;
    MAGIC_LAZY_FUNCS(MAGIC_LAZY_LOOKUP)
#undef MAGIC_LAZY_LOOKUP
}

bool magic_lazy_load(const char **why)
{
    pthread_once(&magic_once, magic_lazy_init);
    if (magic_lib.why[0] != '\0') {
        if (why != NULL)
            *why = magic_lib.why;
        return false;
    }
    return true;
}
