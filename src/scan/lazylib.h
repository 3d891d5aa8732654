/*
 * lazylib.h -- a shared library loaded on first use (dlopen).
 *
 * The programs link only what every command needs; a library that one
 * command needs (cairo for wear's PNG, libmagic for salvage's types,
 * json-glib for --json) is opened when that command first uses it, so
 * that no other command pays at start for loading and relocating it and
 * what it brings.  Each user keeps a table of the functions it calls and
 * fills it with lazylib_sym, once (pthread_once).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct lazylib {
    void *handle;  /* dlopen handle, kept until the program ends; NULL until opened */
    char why[320]; /* what failed; empty while nothing has */
};

/* Open soname (RTLD_NOW | RTLD_LOCAL); false with why set when it cannot be. */
bool lazylib_open(struct lazylib *l, const char *soname);
/*
 * Look name up in the library and what it loaded into *slot (a function
 * pointer's storage); false with why set ("SONAME has no NAME") when it
 * is missing.
 */
bool lazylib_sym(struct lazylib *l, const char *soname, const char *name, void **slot);
