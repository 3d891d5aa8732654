/*
 * output.h -- what every `lanyfs` command shares for printing.
 *
 * Everything printed comes from a disk that may be hostile, so nothing from
 * it reaches a terminal or a JSON document unescaped:
 *
 * - out_escape turns bytes into a string that is valid UTF-8 and holds no
 *   control, format (bidi) or line-separator character.  A byte that is not
 *   part of a printable, valid UTF-8 character becomes \xNN, a backslash
 *   becomes \\, and with OUT_ESC_SLASH a '/' inside a name becomes \x2f, so
 *   that a listed name never looks like a path.  An empty name is shown as
 *   \x00, the byte the disk holds where the name should start.
 * - struct out_report gathers the problems a command meets: each one is
 *   printed at once to stderr as "lanyfs: WHERE: MESSAGE" and kept for the
 *   "problems" array of the JSON output; the first one sets the exit status.
 * - The JSON helpers write through a JsonBuilder; 64-bit values that do not
 *   fit a signed 64-bit JSON integer (only hostile disks hold them) are
 *   written as decimal strings, as docs/json.md says.
 * - out_exit_for_err is the one table from enum lanyfs_err to exit status.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include "json_lazy.h"

#include "exit_codes.h"
#include "lanyfs.h"

/* The version key of every JSON document; bump it when the shape changes. */
#define OUT_JSON_FORMAT "lanyfs-tools/1"

/* ---- escaping ------------------------------------------------------------ */

#define OUT_ESC_SLASH 0x1     /* escape '/' too (names) */
#define OUT_ESC_KEEP_BSL 0x2  /* leave '\\' as it is (messages that hold shown names) */

/* The escaped form of len bytes at src, newly allocated (g_free). */
char *out_escape(const void *src, size_t len, unsigned flags);
/* An entry's name field, escaped as a name (OUT_ESC_SLASH). */
char *out_name(const struct lanyfs_entry *e);
/* Lowercase hex of len bytes, newly allocated (g_free). */
char *out_hex(const void *src, size_t len);

/* ---- values shown in text -------------------------------------------- */

/* ISO 8601 in UTC into buf (OUT_TS_LEN bytes), without the offset note; "unset" when unset. */
#define OUT_TS_LEN 80
void out_ts_utc(const struct lanyfs_ts *ts, char *buf, size_t len);
/* The core's full form (with the offset note) plus ", invalid" for a field out of range. */
void out_ts_full(const struct lanyfs_ts *ts, char *buf, size_t len);
/* Four flags w x h a ('-' when clear) and '+' when undefined bits are set: OUT_ATTR_LEN bytes. */
#define OUT_ATTR_LEN 8
void out_attr_flags(uint16_t attr, char *buf, size_t len);
/* "no-write, no-exec" (or "none"), and "undefined 0x...." for other bits: OUT_ATTR_WORDS_LEN
 * (the attribute names as they are, "none" and "undefined" translated; text only). */
#define OUT_ATTR_WORDS_LEN 80
void out_attr_words(uint16_t attr, char *buf, size_t len);
/* One "Name:   value" line to stdout, the value starting at column width
 * (name already translated, counted in characters). */
void out_field(int width, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A block type's name: "directory", "file", ... or "unknown". */
const char *out_type_name(uint8_t type);

/* ---- problems and exit status ---------------------------------------- */

/* The exit status for a core error code: the one mapping table. */
enum lanyfs_exit out_exit_for_err(enum lanyfs_err code);
/* The code's name for JSON: "badmagic", "corrupt", ... */
const char *out_err_name(enum lanyfs_err code);

struct out_report {
    GPtrArray *items; /* struct out_problem *, owned */
    int exit_code;    /* the status the problems so far call for */
};

struct out_problem {
    char *where;          /* escaped: a path, the image, a field (owned) */
    enum lanyfs_err code; /* what kind of problem */
    uint64_t block;       /* the block concerned, or LANYFS_NO_BLOCK */
    char *message;        /* escaped sentence (owned) */
};

void out_report_init(struct out_report *r);
void out_report_free(struct out_report *r);
/*
 * Print "lanyfs: WHERE: MESSAGE" to stderr (both escaped here; where may be
 * NULL) and record it.  The exit status becomes the code's status unless an
 * earlier problem already set one.  A message may hold names in shown form:
 * its backslashes are kept (OUT_ESC_KEEP_BSL), everything else is escaped.
 */
void out_report_add(struct out_report *r, const char *where, enum lanyfs_err code,
                    uint64_t block, const char *message);
/*
 * The same with a message the command makes itself: fmt is an English
 * printf format marked N_() (i18n.h); JSON keeps the English message, the
 * line on stderr is in the user's language.
 */
void out_report_addf(struct out_report *r, const char *where, enum lanyfs_err code,
                     uint64_t block, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void out_report_vaddf(struct out_report *r, const char *where, enum lanyfs_err code,
                      uint64_t block, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
/* The same with both texts given: message for JSON, shown for stderr. */
void out_report_add_l10n(struct out_report *r, const char *where, enum lanyfs_err code,
                         uint64_t block, const char *message, const char *shown);
/* The same for an error object from the core. */
void out_report_error(struct out_report *r, const char *where, const struct lanyfs_error *err);
/*
 * The same two with a where that is already in escaped, shown form (a path
 * built from out_name parts), which is used as it is.
 */
void out_report_add_shown(struct out_report *r, const char *shown, enum lanyfs_err code,
                          uint64_t block, const char *message);
void out_report_error_shown(struct out_report *r, const char *shown,
                            const struct lanyfs_error *err);
/* out_report_add_l10n and out_report_addf with a where in shown form. */
void out_report_add_l10n_shown(struct out_report *r, const char *shown, enum lanyfs_err code,
                               uint64_t block, const char *message, const char *text);
void out_report_addf_shown(struct out_report *r, const char *shown, enum lanyfs_err code,
                           uint64_t block, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Set the status without a message (usage errors, output failures). */
void out_report_status(struct out_report *r, int exit_code);

/* ---- JSON ---------------------------------------------------------------- */

/* A builder with the object opened and "format", "command" and "image" set. */
JsonBuilder *out_json_begin(const char *command, const char *image);
/*
 * Add "problems" and "exit_code" from the report, close the object, print
 * the document to stdout and free the builder.  Returns the exit status
 * (LANYFS_EXIT_ERROR when stdout fails).
 */
int out_json_end(JsonBuilder *b, struct out_report *r);

void out_json_u64(JsonBuilder *b, const char *key, uint64_t v);
/* The same value without a key, as an element of an array. */
void out_json_u64_value(JsonBuilder *b, uint64_t v);
void out_json_int(JsonBuilder *b, const char *key, int64_t v);
void out_json_bool(JsonBuilder *b, const char *key, bool v);
/* A string that is already escaped (valid UTF-8), or null when s is NULL. */
void out_json_str(JsonBuilder *b, const char *key, const char *s);
/* "KEY": escaped bytes and "KEY_hex": their hex. */
void out_json_bytes(JsonBuilder *b, const char *key, const void *src, size_t len,
                    unsigned flags);
/* A timestamp object: iso, unset, valid, offset_minutes. */
void out_json_ts(JsonBuilder *b, const char *key, const struct lanyfs_ts *ts);
/* The attribute value, its flag string and the words as an array. */
void out_json_attr(JsonBuilder *b, uint16_t attr);
/* The fields every entry object has (ls entries, stat): name, type, block, times, ... */
void out_json_entry_fields(JsonBuilder *b, uint64_t block, const struct lanyfs_entry *e);

/* ---- stdout --------------------------------------------------------------- */

/* Flush stdout; on failure report it and return false. */
bool out_flush_stdout(struct out_report *r);
