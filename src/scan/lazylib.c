/*
 * lazylib.c -- opening a shared library and its functions on first use.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "lazylib.h"

bool lazylib_open(struct lazylib *l, const char *soname)
{
    l->handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (l->handle != NULL)
        return true;
    const char *e = dlerror();
    snprintf(l->why, sizeof(l->why), "%s", e != NULL ? e : "cannot be loaded");
    return false;
}

bool lazylib_sym(struct lazylib *l, const char *soname, const char *name, void **slot)
{
    *slot = l->handle != NULL ? dlsym(l->handle, name) : NULL;
    if (*slot != NULL)
        return true;
    snprintf(l->why, sizeof(l->why), "%s has no %s", soname, name);
    return false;
}
