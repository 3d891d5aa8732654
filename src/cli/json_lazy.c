/*
 * json_lazy.c -- loading json-glib on first use (json_lazy.h says why).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define JSON_LAZY_LOADER
#include "exit_codes.h"
#include "json_lazy.h"
#include "lazylib.h"

/* The library's name as installed (Debian: libjson-glib-1.0-0). */
#define JSON_SONAME "libjson-glib-1.0.so.0"

struct json_lazy_table json_lazy;
static pthread_once_t json_once = PTHREAD_ONCE_INIT;
static struct lazylib json_lib;

static void json_load(void)
{
    if (!lazylib_open(&json_lib, JSON_SONAME))
        return;
    /* g_object_unref comes from GObject, which json-glib loads. */
#define JSON_LAZY_LOOKUP(f)                                                                 \
    if (!lazylib_sym(&json_lib, JSON_SONAME, #f, (void **)&json_lazy.f))                   \
        return;
    JSON_LAZY_FUNCS(JSON_LAZY_LOOKUP)
#undef JSON_LAZY_LOOKUP
}

void json_lazy_need(void)
{
    pthread_once(&json_once, json_load);
    if (json_lib.why[0] != '\0') {
        fflush(stdout);
        fprintf(stderr, "lanyfs: JSON output needs json-glib: %s\n", json_lib.why);
        exit(LANYFS_EXIT_ERROR);
    }
}
