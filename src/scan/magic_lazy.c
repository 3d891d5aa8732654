/*
 * magic_lazy.c -- loading libmagic on first use (magic_lazy.h says why).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define MAGIC_LAZY_LOADER
#include "magic_lazy.h"

/* The library's name as installed (Debian: libmagic1). */
#define MAGIC_SONAME "libmagic.so.1"

struct magic_lazy_table magic_lazy;
static pthread_once_t magic_once = PTHREAD_ONCE_INIT;
static char magic_why[320]; /* what failed; empty when loaded */

static void magic_lazy_init(void)
{
    void *lib = dlopen(MAGIC_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(magic_why, sizeof(magic_why), "%s", e != NULL ? e : MAGIC_SONAME ": cannot be loaded");
        return;
    }
#define MAGIC_LAZY_LOOKUP(f)                                                                \
    if ((*(void **)&magic_lazy.f = dlsym(lib, #f)) == NULL) {                               \
        snprintf(magic_why, sizeof(magic_why), "%s has no %s", MAGIC_SONAME, #f);           \
        return;                                                                             \
    }
    MAGIC_LAZY_FUNCS(MAGIC_LAZY_LOOKUP)
#undef MAGIC_LAZY_LOOKUP
    /* kept until the program ends */
}

bool magic_lazy_load(const char **why)
{
    pthread_once(&magic_once, magic_lazy_init);
    if (magic_why[0] != '\0') {
        if (why != NULL)
            *why = magic_why;
        return false;
    }
    return true;
}
