/*
 * output.c -- escaping, text values, problem reports and JSON helpers
 * shared by the `lanyfs` commands (contract in output.h).
 *
 * The escaper decodes UTF-8 itself, strictly (no overlong forms, no
 * surrogates, nothing above U+10FFFF), and lets a character through only
 * when GLib calls it printable and it is no line or paragraph separator;
 * everything else is shown byte by byte as \xNN.  So the escaped form is
 * always valid UTF-8 (json-glib needs that) and can never move a cursor,
 * clear a screen or turn text around.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "output.h"
#include "utf8.h"

/* ---- escaping ------------------------------------------------------------ */

static bool shows_as_is(gunichar cp)
{
    if (cp < 0x20 || cp == 0x7F)
        return false;
    if (cp < 0x7F)
        return true;
    GUnicodeType t = g_unichar_type(cp);
    if (t == G_UNICODE_LINE_SEPARATOR || t == G_UNICODE_PARAGRAPH_SEPARATOR)
        return false;
    return g_unichar_isprint(cp);
}

char *out_escape(const void *src, size_t len, unsigned flags)
{
    const uint8_t *p = src;
    GString *s = g_string_sized_new(len + 8);
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        size_t n = lanyfs_utf8_decode(p + i, len - i, &cp);
        if (n == 0 || !shows_as_is(cp) || (cp == '/' && (flags & OUT_ESC_SLASH))) {
            g_string_append_printf(s, "\\x%02x", p[i]);
            i++;
        } else if (cp == '\\' && !(flags & OUT_ESC_KEEP_BSL)) {
            g_string_append(s, "\\\\");
            i++;
        } else {
            g_string_append_len(s, (const char *)p + i, (gssize)n);
            i += n;
        }
    }
    return g_string_free(s, FALSE);
}

char *out_name(const struct lanyfs_entry *e)
{
    size_t len = e->name_len <= sizeof(e->name) ? e->name_len : sizeof(e->name);
    if (len == 0)
        return g_strdup("\\x00");
    return out_escape(e->name, len, OUT_ESC_SLASH);
}

char *out_hex(const void *src, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *p = src;
    char *s = g_malloc(len * 2 + 1);
    for (size_t i = 0; i < len; i++) {
        s[2 * i] = digits[p[i] >> 4];
        s[2 * i + 1] = digits[p[i] & 0xF];
    }
    s[len * 2] = '\0';
    return s;
}

/* ---- values shown in text -------------------------------------------- */

void out_ts_utc(const struct lanyfs_ts *ts, char *buf, size_t len)
{
    struct lanyfs_ts utc = *ts;
    if (lanyfs_ts_is_unset(ts)) {
        lanyfs_ts_format(ts, buf, len);
        return;
    }
    utc.offset = 0;
    lanyfs_ts_format(&utc, buf, len);
}

void out_ts_full(const struct lanyfs_ts *ts, char *buf, size_t len)
{
    lanyfs_ts_format(ts, buf, len);
    if (!lanyfs_ts_is_unset(ts) && !lanyfs_ts_is_valid(ts)) {
        size_t n = strlen(buf);
        if (n < len)
            snprintf(buf + n, len - n, "%s", _(", invalid"));
    }
}

static const struct {
    uint16_t bit;     /* LANYFS_ATTR_* */
    char flag;        /* its letter in the flag string */
    const char *word; /* its name */
} attr_table[] = {
    {LANYFS_ATTR_NOWRITE, 'w', "no-write"},
    {LANYFS_ATTR_NOEXEC, 'x', "no-exec"},
    {LANYFS_ATTR_HIDDEN, 'h', "hidden"},
    {LANYFS_ATTR_ARCHIVE, 'a', "archive"},
};
#define ATTR_KNOWN                                                                             \
    (LANYFS_ATTR_NOWRITE | LANYFS_ATTR_NOEXEC | LANYFS_ATTR_HIDDEN | LANYFS_ATTR_ARCHIVE)

void out_attr_flags(uint16_t attr, char *buf, size_t len)
{
    char s[OUT_ATTR_LEN];
    size_t n = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(attr_table); i++)
        s[n++] = (attr & attr_table[i].bit) ? attr_table[i].flag : '-';
    if (attr & ~ATTR_KNOWN)
        s[n++] = '+';
    s[n] = '\0';
    snprintf(buf, len, "%s", s);
}

void out_attr_words(uint16_t attr, char *buf, size_t len)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(attr_table); i++)
        if (attr & attr_table[i].bit)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", attr_table[i].word);
    if (attr & ~ATTR_KNOWN) {
        g_string_append(s, s->len ? ", " : "");
        g_string_append_printf(s, _("undefined 0x%04x"), (unsigned)(attr & ~ATTR_KNOWN));
    }
    snprintf(buf, len, "%s", s->len ? s->str : _("none"));
    g_string_free(s, TRUE);
}

void out_field(int width, const char *name, const char *fmt, ...)
{
    /* Padded by characters, not bytes, so that translated labels line up
     * too; a label as wide as the column still gets a space after it. */
    long shown = g_utf8_strlen(name, -1) + 1;
    printf("%s:%*s", name, shown < width ? (int)(width - shown) : 1, "");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

const char *out_type_name(uint8_t type)
{
    switch (type) {
    case LANYFS_TYPE_FREE:
        return N_("free");
    case LANYFS_TYPE_DIR:
        return N_("directory");
    case LANYFS_TYPE_FILE:
        return N_("file");
    case LANYFS_TYPE_CHAIN:
        return N_("chain");
    case LANYFS_TYPE_EXT:
        return N_("extender");
    case LANYFS_TYPE_DATA:
        return N_("data");
    case LANYFS_TYPE_SUPER:
        return N_("superblock");
    case LANYFS_TYPE_BAD:
        return N_("bad");
    default:
        return N_("unknown");
    }
}

/* ---- problems and exit status ---------------------------------------- */

enum lanyfs_exit out_exit_for_err(enum lanyfs_err code)
{
    /* One row per core code; -Wswitch names any code added without a row. */
    switch (code) {
    case LANYFS_OK:          return LANYFS_EXIT_OK;
    case LANYFS_E_IO:        return LANYFS_EXIT_ERROR;
    case LANYFS_E_TRUNCATED: return LANYFS_EXIT_TRUNCATED;
    case LANYFS_E_RANGE:     return LANYFS_EXIT_CORRUPT;
    case LANYFS_E_BADMAGIC:  return LANYFS_EXIT_NOTLANYFS;
    case LANYFS_E_VERSION:   return LANYFS_EXIT_UNSUPPORTED;
    case LANYFS_E_GEOMETRY:  return LANYFS_EXIT_UNSUPPORTED;
    case LANYFS_E_BADTYPE:   return LANYFS_EXIT_CORRUPT;
    case LANYFS_E_CORRUPT:   return LANYFS_EXIT_CORRUPT;
    case LANYFS_E_CYCLE:     return LANYFS_EXIT_CORRUPT;
    case LANYFS_E_NOTFOUND:  return LANYFS_EXIT_NOTFOUND;
    case LANYFS_E_NOTDIR:    return LANYFS_EXIT_NOTFOUND;
    case LANYFS_E_ISDIR:     return LANYFS_EXIT_ERROR;
    case LANYFS_E_EXISTS:    return LANYFS_EXIT_ERROR;
    case LANYFS_E_NAME:      return LANYFS_EXIT_USAGE;
    case LANYFS_E_NOTEMPTY:  return LANYFS_EXIT_ERROR;
    case LANYFS_E_NOSPC:     return LANYFS_EXIT_ERROR;
    case LANYFS_E_FBIG:      return LANYFS_EXIT_ERROR;
    case LANYFS_E_NOMEM:     return LANYFS_EXIT_ERROR;
    case LANYFS_E_INVAL:     return LANYFS_EXIT_USAGE;
    case LANYFS_E_READONLY:  return LANYFS_EXIT_ERROR;
    case LANYFS_E_COUNT:     break;
    }
    return LANYFS_EXIT_ERROR;
}

static const char *const err_ident[LANYFS_E_COUNT] = {
#define OUT_X_IDENT(code, text) [code] = #code,
    LANYFS_ERRORS(OUT_X_IDENT)
#undef OUT_X_IDENT
};

const char *out_err_name(enum lanyfs_err code)
{
    /* Lowercased identifiers without their prefix, built once from the X-macro list. */
    static char names[LANYFS_E_COUNT][32];
    if ((unsigned)code >= LANYFS_E_COUNT)
        return "unknown";
    if (names[code][0] == '\0') {
        const char *id = err_ident[code];
        if (g_str_has_prefix(id, "LANYFS_E_"))
            id += strlen("LANYFS_E_");
        else if (g_str_has_prefix(id, "LANYFS_"))
            id += strlen("LANYFS_");
        size_t i = 0;
        for (; id[i] != '\0' && i < sizeof(names[code]) - 1; i++)
            names[code][i] = g_ascii_tolower(id[i]);
        names[code][i] = '\0';
    }
    return names[code];
}

static void problem_free(gpointer p)
{
    struct out_problem *pr = p;
    g_free(pr->where);
    g_free(pr->message);
    g_free(pr);
}

void out_report_init(struct out_report *r)
{
    r->items = g_ptr_array_new_with_free_func(problem_free);
    r->exit_code = LANYFS_EXIT_OK;
}

void out_report_free(struct out_report *r)
{
    if (r->items != NULL)
        g_ptr_array_free(r->items, TRUE);
    r->items = NULL;
}

void out_report_status(struct out_report *r, int exit_code)
{
    if (r->exit_code == LANYFS_EXIT_OK)
        r->exit_code = exit_code;
}

/*
 * Record and print a problem; takes ownership of where (escaped, or NULL).
 * message is kept for JSON, shown (its translation, or message itself) is
 * what stderr gets.
 */
static void report(struct out_report *r, char *where, enum lanyfs_err code, uint64_t block,
                   const char *message, const char *shown)
{
    struct out_problem *pr = g_new0(struct out_problem, 1);
    pr->where = where;
    pr->code = code;
    pr->block = block;
    pr->message = out_escape(message, strlen(message), OUT_ESC_KEEP_BSL);
    char *text = shown == message ? NULL : out_escape(shown, strlen(shown), OUT_ESC_KEEP_BSL);
    const char *line = text != NULL ? text : pr->message;
    if (pr->where != NULL)
        fprintf(stderr, "lanyfs: %s: %s\n", pr->where, line);
    else
        fprintf(stderr, "lanyfs: %s\n", line);
    g_free(text);
    g_ptr_array_add(r->items, pr);
    out_report_status(r, out_exit_for_err(code));
}

/* report() with the message made from fmt in English and in the user's language. */
static void vreport(struct out_report *r, char *where, enum lanyfs_err code, uint64_t block,
                    const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void vreport(struct out_report *r, char *where, enum lanyfs_err code, uint64_t block,
                    const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char *english = g_strdup_vprintf(fmt, ap);
    char *shown = g_strdup_vprintf(_(fmt), ap2);
    va_end(ap2);
    report(r, where, code, block, english, shown);
    g_free(shown);
    g_free(english);
}

static const char *error_text(const struct lanyfs_error *err)
{
    return err->msg[0] != '\0' ? err->msg : lanyfs_strerror(err->code);
}

static char *escape_where(const char *where)
{
    return where ? out_escape(where, strlen(where), 0) : NULL;
}

void out_report_add(struct out_report *r, const char *where, enum lanyfs_err code,
                    uint64_t block, const char *message)
{
    report(r, escape_where(where), code, block, message, message);
}

void out_report_add_l10n(struct out_report *r, const char *where, enum lanyfs_err code,
                         uint64_t block, const char *message, const char *shown)
{
    report(r, escape_where(where), code, block, message, shown);
}

void out_report_addf(struct out_report *r, const char *where, enum lanyfs_err code,
                     uint64_t block, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(r, escape_where(where), code, block, fmt, ap);
    va_end(ap);
}

void out_report_vaddf(struct out_report *r, const char *where, enum lanyfs_err code,
                      uint64_t block, const char *fmt, va_list ap)
{
    vreport(r, escape_where(where), code, block, fmt, ap);
}

void out_report_add_l10n_shown(struct out_report *r, const char *shown, enum lanyfs_err code,
                               uint64_t block, const char *message, const char *text)
{
    report(r, g_strdup(shown), code, block, message, text);
}

void out_report_addf_shown(struct out_report *r, const char *shown, enum lanyfs_err code,
                           uint64_t block, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(r, g_strdup(shown), code, block, fmt, ap);
    va_end(ap);
}

void out_report_error(struct out_report *r, const char *where, const struct lanyfs_error *err)
{
    out_report_add(r, where, err->code, err->block, error_text(err));
}

void out_report_add_shown(struct out_report *r, const char *shown, enum lanyfs_err code,
                          uint64_t block, const char *message)
{
    report(r, g_strdup(shown), code, block, message, message);
}

void out_report_error_shown(struct out_report *r, const char *shown,
                            const struct lanyfs_error *err)
{
    out_report_add_shown(r, shown, err->code, err->block, error_text(err));
}

/* ---- JSON ---------------------------------------------------------------- */

JsonBuilder *out_json_begin(const char *command, const char *image)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    out_json_str(b, "format", OUT_JSON_FORMAT);
    out_json_str(b, "command", command);
    if (image != NULL) {
        char *esc = out_escape(image, strlen(image), 0);
        out_json_str(b, "image", esc);
        g_free(esc);
    }
    return b;
}

int out_json_end(JsonBuilder *b, struct out_report *r)
{
    json_builder_set_member_name(b, "problems");
    json_builder_begin_array(b);
    for (guint i = 0; i < r->items->len; i++) {
        const struct out_problem *pr = g_ptr_array_index(r->items, i);
        json_builder_begin_object(b);
        out_json_str(b, "where", pr->where);
        out_json_str(b, "code", out_err_name(pr->code));
        if (pr->block == LANYFS_NO_BLOCK) {
            json_builder_set_member_name(b, "block");
            json_builder_add_null_value(b);
        } else {
            out_json_u64(b, "block", pr->block);
        }
        out_json_str(b, "message", pr->message);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    out_json_int(b, "exit_code", r->exit_code);
    json_builder_end_object(b);

    JsonNode *root = json_builder_get_root(b);
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_indent(gen, 2);
    json_generator_set_root(gen, root);
    gsize len = 0;
    char *text = json_generator_to_data(gen, &len);
    fwrite(text, 1, len, stdout);
    fputc('\n', stdout);
    g_free(text);
    json_lazy_unref(gen);
    json_node_unref(root);
    json_lazy_unref(b);
    out_flush_stdout(r);
    return r->exit_code;
}

void out_json_u64(JsonBuilder *b, const char *key, uint64_t v)
{
    json_builder_set_member_name(b, key);
    out_json_u64_value(b, v);
}

void out_json_u64_value(JsonBuilder *b, uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX) {
        json_builder_add_int_value(b, (gint64)v);
    } else {
        char buf[24];
        snprintf(buf, sizeof(buf), "%" PRIu64, v);
        json_builder_add_string_value(b, buf);
    }
}

void out_json_int(JsonBuilder *b, const char *key, int64_t v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_int_value(b, v);
}

void out_json_bool(JsonBuilder *b, const char *key, bool v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_boolean_value(b, v);
}

void out_json_str(JsonBuilder *b, const char *key, const char *s)
{
    json_builder_set_member_name(b, key);
    if (s == NULL)
        json_builder_add_null_value(b);
    else
        json_builder_add_string_value(b, s);
}

void out_json_bytes(JsonBuilder *b, const char *key, const void *src, size_t len,
                    unsigned flags)
{
    char *esc = out_escape(src, len, flags);
    char *hex = out_hex(src, len);
    char *hexkey = g_strconcat(key, "_hex", NULL);
    out_json_str(b, key, esc);
    out_json_str(b, hexkey, hex);
    g_free(hexkey);
    g_free(hex);
    g_free(esc);
}

void out_json_ts(JsonBuilder *b, const char *key, const struct lanyfs_ts *ts)
{
    char iso[OUT_TS_LEN];
    bool unset = lanyfs_ts_is_unset(ts);
    json_builder_set_member_name(b, key);
    json_builder_begin_object(b);
    if (unset) {
        out_json_str(b, "iso", NULL);
    } else {
        out_ts_utc(ts, iso, sizeof(iso));
        out_json_str(b, "iso", iso);
    }
    out_json_bool(b, "unset", unset);
    out_json_bool(b, "valid", !unset && lanyfs_ts_is_valid(ts));
    out_json_int(b, "offset_minutes", ts->offset);
    json_builder_end_object(b);
}

void out_json_attr(JsonBuilder *b, uint16_t attr)
{
    char flags[OUT_ATTR_LEN];
    out_attr_flags(attr, flags, sizeof(flags));
    out_json_int(b, "attr", attr);
    out_json_str(b, "attr_flags", flags);
    json_builder_set_member_name(b, "attributes");
    json_builder_begin_array(b);
    for (size_t i = 0; i < G_N_ELEMENTS(attr_table); i++)
        if (attr & attr_table[i].bit)
            json_builder_add_string_value(b, attr_table[i].word);
    if (attr & ~ATTR_KNOWN)
        json_builder_add_string_value(b, "undefined");
    json_builder_end_array(b);
}

void out_json_entry_fields(JsonBuilder *b, uint64_t block, const struct lanyfs_entry *e)
{
    char *name = out_name(e);
    size_t len = e->name_len <= sizeof(e->name) ? e->name_len : sizeof(e->name);
    char *hex = out_hex(e->name, len);
    out_json_str(b, "name", name);
    out_json_str(b, "name_hex", hex);
    out_json_bool(b, "name_ok", lanyfs_entry_name_ok(e));
    out_json_str(b, "type", lanyfs_entry_is_dir(e) ? "directory" : lanyfs_entry_is_file(e)
                                                                     ? "file"
                                                                     : out_type_name(e->type));
    out_json_int(b, "type_byte", e->type);
    out_json_u64(b, "block", block);
    out_json_int(b, "wrcnt", e->wrcnt);
    if (lanyfs_entry_is_file(e)) {
        out_json_u64(b, "size", e->size);
    } else {
        json_builder_set_member_name(b, "size");
        json_builder_add_null_value(b);
    }
    out_json_attr(b, e->attr);
    out_json_ts(b, "created", &e->created);
    out_json_ts(b, "modified", &e->modified);
    g_free(hex);
    g_free(name);
}

/* ---- stdout --------------------------------------------------------------- */

bool out_flush_stdout(struct out_report *r)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        out_report_addf(r, NULL, LANYFS_E_IO, LANYFS_NO_BLOCK,
                        N_("writing to standard output failed"));
        return false;
    }
    return true;
}
