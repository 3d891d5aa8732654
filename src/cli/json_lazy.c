/*
 * json_lazy.c -- loading json-glib on first use (json_lazy.h says why).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define JSON_LAZY_LOADER
#include "exit_codes.h"
#include "json_lazy.h"

/* The library's name as installed (Debian: libjson-glib-1.0-0). */
#define JSON_SONAME "libjson-glib-1.0.so.0"

struct json_lazy_table json_lazy;
static pthread_once_t json_once = PTHREAD_ONCE_INIT;
static char json_why[320]; /* what failed; empty when loaded */

static void json_load(void)
{
    void *lib = dlopen(JSON_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(json_why, sizeof(json_why), "%s", e != NULL ? e : JSON_SONAME ": cannot be loaded");
        return;
    }
    /* dlsym searches the library and what it loaded: g_object_unref comes from GObject. */
#define JSON_LAZY_LOOKUP(f)                                                                 \
    if ((*(void **)&json_lazy.f = dlsym(lib, #f)) == NULL) {                                \
        snprintf(json_why, sizeof(json_why), "%s has no %s", JSON_SONAME, #f);              \
        return;                                                                             \
    }
    JSON_LAZY_FUNCS(JSON_LAZY_LOOKUP)
#undef JSON_LAZY_LOOKUP
    /* kept until the program ends */
}

void json_lazy_need(void)
{
    pthread_once(&json_once, json_load);
    if (json_why[0] != '\0') {
        fflush(stdout);
        fprintf(stderr, "lanyfs: JSON output needs json-glib: %s\n", json_why);
        exit(LANYFS_EXIT_ERROR);
    }
}
