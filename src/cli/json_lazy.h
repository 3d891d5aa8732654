/*
 * json_lazy.h -- json-glib, loaded when the first JSON document is begun.
 *
 * Only --json output and the simulator's truth file need json-glib, but
 * the library brings GObject, GIO and through them libmount, libblkid,
 * libselinux and libffi: linked at start, they made every `lanyfs` command
 * start about 3 ms later (a tenth of a scan of 10,000 files).  So the
 * program links none of them and json_lazy_need() loads json-glib with
 * dlopen.  Include this header after json-glib.h: from here on each
 * json-glib function named below goes through the table that the loader
 * fills.  json_builder_new() and json_generator_new() load the library
 * first; every other call needs an object one of them made.
 *
 * A json-glib that cannot be loaded, or lacks one of the functions, ends
 * the program with a message that says so (exit status 1, an operational
 * error): a JSON document cannot be given without it.
 */
#pragma once

#include <json-glib/json-glib.h>

#define JSON_LAZY_FUNCS(X)                                                                  \
    X(json_builder_new) X(json_builder_begin_object) X(json_builder_end_object)            \
    X(json_builder_begin_array) X(json_builder_end_array) X(json_builder_set_member_name)  \
    X(json_builder_add_int_value) X(json_builder_add_boolean_value)                        \
    X(json_builder_add_string_value) X(json_builder_add_null_value)                        \
    X(json_builder_get_root) X(json_generator_new) X(json_generator_set_pretty)            \
    X(json_generator_set_indent) X(json_generator_set_root) X(json_generator_to_data)      \
    X(json_node_unref) X(g_object_unref)

struct json_lazy_table {
#define JSON_LAZY_MEMBER(f) __typeof__(f) *f;
    JSON_LAZY_FUNCS(JSON_LAZY_MEMBER)
#undef JSON_LAZY_MEMBER
};
extern struct json_lazy_table json_lazy;

/* Load json-glib once (thread-safe); on failure print why and exit(1). */
void json_lazy_need(void);

#ifndef JSON_LAZY_LOADER /* json_lazy.c names the functions themselves */
#define json_builder_new() (json_lazy_need(), (*json_lazy.json_builder_new)())
#define json_generator_new() (json_lazy_need(), (*json_lazy.json_generator_new)())
#define json_builder_begin_object (*json_lazy.json_builder_begin_object)
#define json_builder_end_object (*json_lazy.json_builder_end_object)
#define json_builder_begin_array (*json_lazy.json_builder_begin_array)
#define json_builder_end_array (*json_lazy.json_builder_end_array)
#define json_builder_set_member_name (*json_lazy.json_builder_set_member_name)
#define json_builder_add_int_value (*json_lazy.json_builder_add_int_value)
#define json_builder_add_boolean_value (*json_lazy.json_builder_add_boolean_value)
#define json_builder_add_string_value (*json_lazy.json_builder_add_string_value)
#define json_builder_add_null_value (*json_lazy.json_builder_add_null_value)
#define json_builder_get_root (*json_lazy.json_builder_get_root)
#define json_generator_set_pretty (*json_lazy.json_generator_set_pretty)
#define json_generator_set_indent (*json_lazy.json_generator_set_indent)
#define json_generator_set_root (*json_lazy.json_generator_set_root)
#define json_generator_to_data (*json_lazy.json_generator_to_data)
#define json_node_unref (*json_lazy.json_node_unref)
/* g_object_unref of a JsonBuilder or JsonGenerator (GObject comes with json-glib). */
#define json_lazy_unref(obj) ((*json_lazy.g_object_unref)(obj))
#endif
