/*
 * magic_lazy.h -- libmagic, loaded when salvage first needs it.
 *
 * Only salvage asks libmagic what a copy holds, but libmagic brings
 * liblzma, libbz2 and libz: linked at start they made every command start
 * later for nothing.  So the scan library links none of them, and
 * magic_lazy_load() loads libmagic with dlopen.  Include this header after
 * magic.h: from here on each libmagic function named below goes through
 * the table the loader fills, so call magic_lazy_load() (and see it
 * succeed) before the first of them.
 */
#pragma once

#include <stdbool.h>

#include <magic.h>

#define MAGIC_LAZY_FUNCS(X)                                                                 \
    X(magic_open) X(magic_load) X(magic_error) X(magic_setflags) X(magic_buffer)           \
    X(magic_close)

struct magic_lazy_table {
#define MAGIC_LAZY_MEMBER(f) __typeof__(f) *f;
    MAGIC_LAZY_FUNCS(MAGIC_LAZY_MEMBER)
#undef MAGIC_LAZY_MEMBER
};
extern struct magic_lazy_table magic_lazy;

/* Load libmagic once (thread-safe).  False when it cannot be loaded or
 * lacks a function; *why (when why is not NULL) then says which. */
bool magic_lazy_load(const char **why);

#ifndef MAGIC_LAZY_LOADER /* magic_lazy.c names the functions themselves */
#define magic_open (*magic_lazy.magic_open)
#define magic_load (*magic_lazy.magic_load)
#define magic_error (*magic_lazy.magic_error)
#define magic_setflags (*magic_lazy.magic_setflags)
#define magic_buffer (*magic_lazy.magic_buffer)
#define magic_close (*magic_lazy.magic_close)
#endif
