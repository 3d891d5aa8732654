/*
 * salvage.c -- the salvage engine behind salvage.h.
 *
 * A run has three steps:
 *  1. plan: the output directories and files, with their names chosen.
 *     Names are escaped (salvage_escape_name) and made unique within each
 *     output directory ("~2", "~3", ...), so two entries never aim at one
 *     file; the live tree comes first (depth first, siblings by name), then
 *     the versions, the deleted files and the orphans;
 *  2. copy: every planned file, block run by block run, each block from
 *     the place its kind allows (below), zeros for what cannot be had
 *     (left as holes of the copy where they are whole blocks), the
 *     SHA-256 of what is written, libmagic's verdict on the first 64 KiB;
 *     then the carve over the blocks no file owns; then the directories'
 *     times;
 *  3. the manifests, also after a cancel.
 *
 * Where a file block comes from:
 *  - live and orphaned files: the scan's data map; where it has nothing,
 *    the core's reading of the file's extender tree (the scan leaves out
 *    blocks its map gives to metadata, which a crash can leave holding the
 *    file's data; such blocks are copied and listed as shared).  Holes
 *    count as known bytes when the scan found them legal (FILE_HOLES), as
 *    in a file grown by truncation;
 *  - deleted files: the scan's candidates (SPEC-§11); a candidate still
 *    free or leaked, held by nobody else, not shared and no metadata is
 *    copied, any other is zero-filled as reused.  A name whose extension
 *    names a type with a signature (png, pdf, gz, ...) must match
 *    libmagic's type of the copy, or the copy is partial.
 *
 * The directory a deleted entry was in is known when one of its tree links
 * still leads to a live entry in the order of SPEC-§5 (its former
 * sibling); otherwise only its name is known.  A deleted file is an
 * earlier version of a live file of the same name in that directory, or,
 * its directory unknown, of the only live file of that name.
 *
 * Carving looks at the blocks whose cell is free, leaked or unknown, that
 * carry no header, that no live or orphaned file owns and that this run
 * did not copy.  Consecutive such blocks with content form a run; a run is
 * cut where a block starts with a known signature, where a text file ends
 * in a zero-padded block, and at SV_SEG_MAX.  A piece whose format tells
 * its length (PNG to IEND, PDF to the last %%EOF, gzip by inflating to its
 * trailer and checking CRC-32 and length, ZIP to the end of its central
 * directory, JPEG to EOI, GIF to its trailer, RIFF and SQLite by their
 * headers) ends there, and what follows is carved on its own; any other
 * piece loses its trailing zeros.
 *
 * Every byte read from the image is hostile: lengths are checked against
 * the buffer before use, the inflater bounds its output, and names are
 * escaped before they reach the output folder or a manifest.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "magic_lazy.h"
#include "salvage.h"
#include "undo.h"
#include "utf8.h"

#define SV_RUN_BYTES ((size_t)1 << 20)      /* bytes read at once */
#define SV_HEAD_BYTES ((size_t)64 << 10)    /* bytes kept of a carved piece for libmagic */
#define SV_MAGIC_BYTES ((size_t)16 << 10)   /* bytes libmagic judges of a copied file */
#define SV_SEG_MAX ((size_t)64 << 20)       /* longest piece carved as one file */
#define SV_DEPTH_MAX 4096                   /* deepest output path followed */
#define SV_FD_KEEP 32                       /* descriptors kept open along the output path */
#define SV_NO_DIR UINT32_MAX
#define SV_PENDING (UINT32_MAX - 1)      /* dir_of: on the walk up (dir_for) */
#define SV_TOP 0                            /* dirs[0]: the output folder itself */

/* ---- small buffers ------------------------------------------------------------- */

struct sbuf {
    char *p;
    size_t n;
    size_t cap;
    bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (q == NULL) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = true;
        return;
    }
    if ((size_t)n < sizeof(tmp)) {
        sb_add(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

/* The buffer's string, handed over (NULL when out of memory). */
static char *sb_take(struct sbuf *b)
{
    if (b->oom) {
        free(b->p);
        return NULL;
    }
    if (b->p == NULL)
        return strdup("");
    return b->p;
}

static bool ranges_add(struct salvage_ranges *r, uint64_t first, uint64_t count)
{
    if (count == 0)
        return true;
    if (r->n > 0 && r->r[r->n - 1].first + r->r[r->n - 1].count == first) {
        r->r[r->n - 1].count += count;
        return true;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        struct salvage_range *q = realloc(r->r, cap * sizeof(*q));
        if (q == NULL)
            return false;
        r->r = q;
        r->cap = cap;
    }
    r->r[r->n++] = (struct salvage_range){first, count};
    return true;
}

char *salvage_ranges_text(const struct salvage_ranges *r)
{
    struct sbuf b = {0};
    for (size_t i = 0; i < r->n; i++) {
        if (i > 0)
            sb_str(&b, " ");
        if (r->r[i].count == 1)
            sb_printf(&b, "%" PRIu64, r->r[i].first);
        else
            sb_printf(&b, "%" PRIu64 "-%" PRIu64, r->r[i].first,
                      r->r[i].first + r->r[i].count - 1);
    }
    return sb_take(&b);
}

/* ---- a set of strings (open addressing) --------------------------------------- */

struct strset {
    char **slot;
    size_t cap; /* a power of two, or 0 */
    size_t n;
};

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

/* 1 when added, 0 when present, -1 when out of memory. */
static int strset_add(struct strset *s, const char *key)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **ns = calloc(cap, sizeof(*ns));
        if (ns == NULL)
            return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (s->slot[i] == NULL)
                continue;
            size_t h = (size_t)str_hash(s->slot[i], strlen(s->slot[i])) & (cap - 1);
            while (ns[h] != NULL)
                h = (h + 1) & (cap - 1);
            ns[h] = s->slot[i];
        }
        free(s->slot);
        s->slot = ns;
        s->cap = cap;
    }
    size_t h = (size_t)str_hash(key, strlen(key)) & (s->cap - 1);
    while (s->slot[h] != NULL) {
        if (strcmp(s->slot[h], key) == 0)
            return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->slot[h] = strdup(key);
    if (s->slot[h] == NULL)
        return -1;
    s->n++;
    return 1;
}

static bool strset_has(const struct strset *s, const char *key)
{
    if (s->cap == 0)
        return false;
    size_t h = (size_t)str_hash(key, strlen(key)) & (s->cap - 1);
    while (s->slot[h] != NULL) {
        if (strcmp(s->slot[h], key) == 0)
            return true;
        h = (h + 1) & (s->cap - 1);
    }
    return false;
}

static void strset_free(struct strset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slot[i]);
    free(s->slot);
    s->slot = NULL;
    s->cap = s->n = 0;
}

/* A map from strings to a counter (open addressing): take_name's next number per base. */
struct ctrmap {
    char **key;
    uint32_t *val;
    size_t cap; /* a power of two, or 0 */
    size_t n;
};

/* The counter of key, made 1 when new; NULL when out of memory. */
static uint32_t *ctrmap_get(struct ctrmap *m, const char *key)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        char **nk = calloc(cap, sizeof(*nk));
        uint32_t *nv = calloc(cap, sizeof(*nv));
        if (nk == NULL || nv == NULL) {
            free(nk);
            free(nv);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->key[i] == NULL)
                continue;
            size_t h = (size_t)str_hash(m->key[i], strlen(m->key[i])) & (cap - 1);
            while (nk[h] != NULL)
                h = (h + 1) & (cap - 1);
            nk[h] = m->key[i];
            nv[h] = m->val[i];
        }
        free(m->key);
        free(m->val);
        m->key = nk;
        m->val = nv;
        m->cap = cap;
    }
    size_t h = (size_t)str_hash(key, strlen(key)) & (m->cap - 1);
    while (m->key[h] != NULL) {
        if (strcmp(m->key[h], key) == 0)
            return &m->val[h];
        h = (h + 1) & (m->cap - 1);
    }
    m->key[h] = strdup(key);
    if (m->key[h] == NULL)
        return NULL;
    m->val[h] = 1;
    m->n++;
    return &m->val[h];
}

static void ctrmap_free(struct ctrmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->key[i]);
    free(m->key);
    free(m->val);
    *m = (struct ctrmap){0};
}

/* ---- SHA-256 (the core's) and CRC-32 ------------------------------------------- */

static void sha_final(struct lanyfs_sha256 *c, char hex[65])
{
    uint8_t sum[LANYFS_SHA256_LEN];
    lanyfs_sha256_final(c, sum);
    lanyfs_sha256_hex(sum, hex);
}

static void crc_table(uint32_t t[256])
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
    }
}

/* ---- escaping ---------------------------------------------------------------------- */

/* Shown as it is: no control, format, separator or noncharacter code point. */
static bool printable(uint32_t c)
{
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0xad)
        return false;
    if ((c >= 0x600 && c <= 0x605) || c == 0x61c || c == 0x6dd || c == 0x70f ||
        (c >= 0x890 && c <= 0x891) || c == 0x8e2 || c == 0x180e)
        return false;
    if ((c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
        (c >= 0x2060 && c <= 0x206f))
        return false;
    if (c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) || (c >= 0xfdd0 && c <= 0xfdef) ||
        (c & 0xfffe) == 0xfffe)
        return false;
    if (c == 0x110bd || c == 0x110cd || (c >= 0x13430 && c <= 0x1343f) ||
        (c >= 0x1bca0 && c <= 0x1bca3) || (c >= 0x1d173 && c <= 0x1d17a) ||
        (c >= 0xe0000 && c <= 0xe0fff))
        return false;
    return true;
}

/*
 * Escape len bytes into b.  slash: '/' becomes \x2f.  limit (0: none):
 * stop before the unit that would take b past limit bytes; *cut tells
 * whether it stopped.
 */
static void esc_into(struct sbuf *b, const uint8_t *p, size_t len, bool slash, size_t limit,
                     bool *cut)
{
    size_t start = b->n;
    if (cut != NULL)
        *cut = false;
    for (size_t i = 0; i < len;) {
        char unit[8];
        size_t un;
        uint32_t cp = 0;
        size_t n = lanyfs_utf8_decode(p + i, len - i, &cp);
        if (n == 0 || !printable(cp) || (slash && cp == '/')) {
            snprintf(unit, sizeof(unit), "\\x%02x", p[i]);
            un = 4;
            n = 1;
        } else if (cp == '\\') {
            memcpy(unit, "\\\\", 2);
            un = 2;
        } else {
            memcpy(unit, p + i, n);
            un = n;
        }
        if (limit != 0 && b->n - start + un > limit) {
            if (cut != NULL)
                *cut = true;
            return;
        }
        sb_add(b, unit, un);
        i += n;
    }
}

char *salvage_escape_shown(const uint8_t *s, size_t len)
{
    struct sbuf b = {0};
    esc_into(&b, s, len, false, 0, NULL);
    return sb_take(&b);
}

char *salvage_escape_name(const uint8_t *name, size_t len)
{
    struct sbuf b = {0};
    if (len == 0) {
        sb_str(&b, "\\x00");
        return sb_take(&b);
    }
    if (len == 1 && name[0] == '.') {
        sb_str(&b, "\\x2e");
        return sb_take(&b);
    }
    if (len == 2 && name[0] == '.' && name[1] == '.') {
        sb_str(&b, "\\x2e\\x2e");
        return sb_take(&b);
    }
    bool cut;
    esc_into(&b, name, len, true, SALVAGE_NAME_MAX, &cut);
    if (cut) {
        /* Keep what fits beside "~" and 16 hex digits of the whole name's hash. */
        struct lanyfs_sha256 c;
        char hex[65];
        lanyfs_sha256_init(&c);
        lanyfs_sha256_update(&c, name, len);
        sha_final(&c, hex);
        free(b.p);
        b = (struct sbuf){0};
        esc_into(&b, name, len, true, SALVAGE_NAME_MAX - 17, &cut);
        sb_printf(&b, "~%.16s", hex);
    }
    return sb_take(&b);
}

/* A shown path (from the command line) back to bytes: \xNN and \\ undone (malloc). */
static char *unescape(const char *s)
{
    size_t n = strlen(s);
    char *o = malloc(n + 1), *q = o;
    if (o == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && s[i + 1] == '\\') {
            *q++ = '\\';
            i++;
        } else if (s[i] == '\\' && s[i + 1] == 'x' && s[i + 2] != '\0' && s[i + 3] != '\0') {
            char hx[3] = {s[i + 2], s[i + 3], '\0'};
            char *end;
            unsigned long v = strtoul(hx, &end, 16);
            if (*end == '\0' && v != 0) {
                *q++ = (char)v;
                i += 3;
            } else {
                *q++ = s[i];
            }
        } else {
            *q++ = s[i];
        }
    }
    *q = '\0';
    return o;
}

/* ---- what a name's extension says of its content --------------------------------- */

static const struct {
    const char *ext;  /* lowercase */
    const char *mime; /* what libmagic says of such content */
    const char *alt;  /* another answer that fits, or NULL */
} ext_types[] = {
    {"png", "image/png", NULL},
    {"jpg", "image/jpeg", NULL},
    {"jpeg", "image/jpeg", NULL},
    {"gif", "image/gif", NULL},
    {"pdf", "application/pdf", NULL},
    {"gz", "application/gzip", "application/x-gzip"},
    {"tgz", "application/gzip", "application/x-gzip"},
    {"zip", "application/zip", NULL},
    {"bz2", "application/x-bzip2", NULL},
    {"xz", "application/x-xz", NULL},
    {"7z", "application/x-7z-compressed", NULL},
    {"bmp", "image/bmp", "image/x-ms-bmp"},
    {"tif", "image/tiff", NULL},
    {"tiff", "image/tiff", NULL},
    {"webp", "image/webp", NULL},
    {"wav", "audio/x-wav", "audio/wav"},
    {"ogg", "audio/ogg", "application/ogg"},
    {"flac", "audio/flac", "audio/x-flac"},
    {"sqlite", "application/vnd.sqlite3", "application/x-sqlite3"},
    {"db", "application/vnd.sqlite3", "application/x-sqlite3"},
};

/* The row of ext_types the name's extension names, SIZE_MAX when none. */
static size_t ext_expect(const uint8_t *name, size_t len)
{
    size_t dot = len;
    for (size_t i = len; i-- > 0;)
        if (name[i] == '.') {
            dot = i;
            break;
        }
    if (dot == len || len - dot - 1 > 8 || len - dot - 1 == 0)
        return SIZE_MAX;
    char ext[10];
    size_t n = len - dot - 1;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = name[dot + 1 + i];
        ext[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    ext[n] = '\0';
    for (size_t i = 0; i < sizeof(ext_types) / sizeof(ext_types[0]); i++)
        if (strcmp(ext_types[i].ext, ext) == 0)
            return i;
    return SIZE_MAX;
}

/* An extension for a MIME type libmagic names no extension for. */
static const char *ext_for_mime(const char *mime)
{
    static const struct {
        const char *mime, *ext;
    } t[] = {
        {"text/plain", "txt"},        {"text/html", "html"},       {"text/xml", "xml"},
        {"application/json", "json"}, {"text/x-shellscript", "sh"}, {"text/csv", "csv"},
        {"application/x-sqlite3", "sqlite"}, {"application/vnd.sqlite3", "sqlite"},
        {"text/x-c", "c"},            {"application/octet-stream", "bin"},
    };
    if (mime == NULL)
        return "bin";
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(t[i].mime, mime) == 0)
            return t[i].ext;
    if (strncmp(mime, "text/", 5) == 0)
        return "txt";
    return "bin";
}

/*
 * The extension for a MIME type when libmagic names none (it names none for
 * gzip data in a buffer): the first name of ext_types of that type, else
 * ext_for_mime.
 */
static const char *ext_of_type(const char *mime)
{
    for (size_t i = 0; mime != NULL && i < sizeof(ext_types) / sizeof(ext_types[0]); i++)
        if (strcmp(ext_types[i].mime, mime) == 0 ||
            (ext_types[i].alt != NULL && strcmp(ext_types[i].alt, mime) == 0))
            return ext_types[i].ext;
    return ext_for_mime(mime);
}

/* ---- inflate, to find where a gzip member ends ------------------------------------ */

/*
 * A bounded inflater after RFC 1951 (stored, fixed and dynamic blocks)
 * that keeps only a 32 KiB window, the CRC-32 and the length of what it
 * produces: enough to tell where a gzip member's deflate data ends and to
 * check its trailer.  Every read is checked against the input; output past
 * limit is an error, so a small input cannot make it run long.
 */
struct inflate {
    const uint8_t *in;
    size_t len, pos;
    uint32_t bitbuf;
    unsigned bitcnt;
    bool bad;
    uint8_t win[32768];
    size_t wpos;
    uint64_t out, limit;
    uint32_t crc;
    uint32_t crct[256];
};

struct huff {
    uint16_t count[16];
    uint16_t symbol[320];
};

static unsigned inf_bits(struct inflate *s, unsigned need)
{
    uint32_t v = s->bitbuf;
    while (s->bitcnt < need) {
        if (s->pos >= s->len) {
            s->bad = true;
            return 0;
        }
        v |= (uint32_t)s->in[s->pos++] << s->bitcnt;
        s->bitcnt += 8;
    }
    s->bitbuf = v >> need;
    s->bitcnt -= need;
    return need == 32 ? v : v & ((1u << need) - 1);
}

static void inf_put(struct inflate *s, uint8_t c)
{
    s->win[s->wpos] = c;
    s->wpos = (s->wpos + 1) & 32767;
    s->crc = s->crct[(s->crc ^ c) & 0xff] ^ (s->crc >> 8);
    if (++s->out > s->limit)
        s->bad = true;
}

/* Build a canonical code from lengths; false for an over-subscribed set. */
static bool huff_build(struct huff *h, const uint8_t *lengths, unsigned n)
{
    uint16_t offs[16];
    memset(h->count, 0, sizeof(h->count));
    for (unsigned i = 0; i < n; i++)
        h->count[lengths[i]]++;
    if (h->count[0] == n)
        return true; /* no codes: decoding fails if it is used */
    int left = 1;
    for (int len = 1; len < 16; len++) {
        left <<= 1;
        left -= h->count[len];
        if (left < 0)
            return false;
    }
    offs[1] = 0;
    for (int len = 1; len < 15; len++)
        offs[len + 1] = (uint16_t)(offs[len] + h->count[len]);
    for (unsigned i = 0; i < n; i++)
        if (lengths[i] != 0)
            h->symbol[offs[lengths[i]]++] = (uint16_t)i;
    return true;
}

static int huff_decode(struct inflate *s, const struct huff *h)
{
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; len++) {
        code |= (int)inf_bits(s, 1);
        if (s->bad)
            return -1;
        int count = h->count[len];
        if (code - count < first)
            return h->symbol[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    s->bad = true;
    return -1;
}

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,     9,     13,    17,  25,
                                       33,   49,   65,   97,   129,  193,   257,   385,   513, 769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static bool inf_codes(struct inflate *s, const struct huff *lc, const struct huff *dc)
{
    for (;;) {
        int sym = huff_decode(s, lc);
        if (sym < 0 || s->bad)
            return false;
        if (sym < 256) {
            inf_put(s, (uint8_t)sym);
        } else if (sym == 256) {
            return true;
        } else {
            sym -= 257;
            if (sym >= 29)
                return false;
            unsigned len = len_base[sym] + inf_bits(s, len_extra[sym]);
            int ds = huff_decode(s, dc);
            if (ds < 0 || ds >= 30 || s->bad)
                return false;
            uint64_t dist = dist_base[ds] + inf_bits(s, dist_extra[ds]);
            if (s->bad || dist > s->out)
                return false;
            for (unsigned k = 0; k < len; k++)
                inf_put(s, s->win[(s->wpos - dist) & 32767]);
        }
        if (s->bad)
            return false;
    }
}

static bool inf_stored(struct inflate *s)
{
    s->bitbuf = 0;
    s->bitcnt = 0;
    if (s->pos + 4 > s->len)
        return false;
    unsigned len = s->in[s->pos] | (unsigned)s->in[s->pos + 1] << 8;
    unsigned nlen = s->in[s->pos + 2] | (unsigned)s->in[s->pos + 3] << 8;
    s->pos += 4;
    if (len != (~nlen & 0xffff) || s->pos + len > s->len)
        return false;
    for (unsigned i = 0; i < len && !s->bad; i++)
        inf_put(s, s->in[s->pos + i]);
    s->pos += len;
    return !s->bad;
}

static bool inf_fixed(struct inflate *s)
{
    uint8_t l[320];
    struct huff lc, dc;
    for (int i = 0; i < 144; i++)
        l[i] = 8;
    for (int i = 144; i < 256; i++)
        l[i] = 9;
    for (int i = 256; i < 280; i++)
        l[i] = 7;
    for (int i = 280; i < 288; i++)
        l[i] = 8;
    huff_build(&lc, l, 288);
    for (int i = 0; i < 30; i++)
        l[i] = 5;
    huff_build(&dc, l, 30);
    return inf_codes(s, &lc, &dc);
}

static bool inf_dynamic(struct inflate *s)
{
    static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                      11, 4,  12, 3, 13, 2, 14, 1, 15};
    uint8_t l[320];
    struct huff lc, dc;
    unsigned nlen = inf_bits(s, 5) + 257, ndist = inf_bits(s, 5) + 1, ncode = inf_bits(s, 4) + 4;
    if (s->bad || nlen > 286 || ndist > 30)
        return false;
    unsigned i;
    for (i = 0; i < ncode; i++)
        l[order[i]] = (uint8_t)inf_bits(s, 3);
    for (; i < 19; i++)
        l[order[i]] = 0;
    if (s->bad || !huff_build(&lc, l, 19))
        return false;
    for (i = 0; i < nlen + ndist;) {
        int sym = huff_decode(s, &lc);
        if (sym < 0 || s->bad)
            return false;
        if (sym < 16) {
            l[i++] = (uint8_t)sym;
            continue;
        }
        uint8_t v = 0;
        unsigned rep;
        if (sym == 16) {
            if (i == 0)
                return false;
            v = l[i - 1];
            rep = 3 + inf_bits(s, 2);
        } else if (sym == 17) {
            rep = 3 + inf_bits(s, 3);
        } else {
            rep = 11 + inf_bits(s, 7);
        }
        if (s->bad || i + rep > nlen + ndist)
            return false;
        while (rep--)
            l[i++] = v;
    }
    if (l[256] == 0)
        return false;
    if (!huff_build(&lc, l, nlen) || !huff_build(&dc, l + nlen, ndist))
        return false;
    return inf_codes(s, &lc, &dc);
}

/* Inflate from in[0..len); true with *used the deflate data's length in bytes. */
static bool inflate_span(struct inflate *s, const uint8_t *in, size_t len, size_t *used)
{
    s->in = in;
    s->len = len;
    s->pos = 0;
    s->bitbuf = 0;
    s->bitcnt = 0;
    s->bad = false;
    s->wpos = 0;
    s->out = 0;
    s->crc = 0xffffffffu;
    crc_table(s->crct);
    unsigned last;
    do {
        last = inf_bits(s, 1);
        unsigned type = inf_bits(s, 2);
        if (s->bad)
            return false;
        bool ok = type == 0 ? inf_stored(s) : type == 1 ? inf_fixed(s)
                  : type == 2 ? inf_dynamic(s) : false;
        if (!ok || s->bad)
            return false;
    } while (!last);
    s->crc ^= 0xffffffffu;
    *used = s->pos; /* the bits left in the last byte are padding */
    return true;
}

/* ---- where a carved piece ends ------------------------------------------------------ */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

enum sig {
    SIG_NONE,
    SIG_PNG,
    SIG_JPEG,
    SIG_GIF,
    SIG_PDF,
    SIG_GZIP,
    SIG_ZIP,
    SIG_BZIP2,
    SIG_XZ,
    SIG_7Z,
    SIG_RIFF,
    SIG_SQLITE,
    SIG_ELF,
};

/* The signature a block starts with (a file begins at a block's start). */
static enum sig sig_at(const uint8_t *b, size_t n)
{
    if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
        return SIG_PNG;
    if (n >= 4 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff && b[3] >= 0xc0)
        return SIG_JPEG;
    if (n >= 6 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0))
        return SIG_GIF;
    if (n >= 5 && memcmp(b, "%PDF-", 5) == 0)
        return SIG_PDF;
    if (n >= 10 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8 && (b[3] & 0xe0) == 0)
        return SIG_GZIP;
    if (n >= 4 && memcmp(b, "PK\x03\x04", 4) == 0)
        return SIG_ZIP;
    if (n >= 10 && memcmp(b, "BZh", 3) == 0 && b[3] >= '1' && b[3] <= '9' &&
        memcmp(b + 4, "1AY&SY", 6) == 0)
        return SIG_BZIP2;
    if (n >= 6 && memcmp(b, "\xfd" "7zXZ\0", 6) == 0)
        return SIG_XZ;
    if (n >= 6 && memcmp(b, "7z\xbc\xaf\x27\x1c", 6) == 0)
        return SIG_7Z;
    if (n >= 12 && memcmp(b, "RIFF", 4) == 0)
        return SIG_RIFF;
    if (n >= 100 && memcmp(b, "SQLite format 3", 16) == 0)
        return SIG_SQLITE;
    if (n >= 16 && memcmp(b, "\x7f" "ELF", 4) == 0)
        return SIG_ELF;
    return SIG_NONE;
}

static size_t end_png(const uint8_t *b, size_t n)
{
    size_t p = 8;
    while (p + 12 <= n) {
        uint32_t len = be32(b + p);
        if (len > 0x7fffffffu || n - p - 12 < len)
            return 0;
        for (int i = 4; i < 8; i++) {
            uint8_t c = b[p + (size_t)i];
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
                return 0;
        }
        bool iend = memcmp(b + p + 4, "IEND", 4) == 0;
        p += 12 + (size_t)len;
        if (iend)
            return p;
    }
    return 0;
}

static size_t end_pdf(const uint8_t *b, size_t n)
{
    size_t end = 0;
    for (size_t p = 5; p + 5 <= n; p++)
        if (b[p] == '%' && memcmp(b + p, "%%EOF", 5) == 0) {
            end = p + 5;
            if (end < n && b[end] == '\r')
                end++;
            if (end < n && b[end] == '\n')
                end++;
        }
    return end;
}

static size_t end_gzip(const uint8_t *b, size_t n)
{
    uint8_t flg = b[3];
    size_t p = 10;
    if (flg & 4) {
        if (p + 2 > n)
            return 0;
        p += 2 + (size_t)le16(b + p);
    }
    for (int f = 8; f <= 16; f <<= 1) {
        if (!(flg & f))
            continue;
        while (p < n && b[p] != 0)
            p++;
        p++;
    }
    if (flg & 2)
        p += 2;
    if (p >= n)
        return 0;
    struct inflate *s = malloc(sizeof(*s));
    if (s == NULL)
        return 0;
    size_t used, end = 0;
    /* Deflate expands by 1032 at most; anything beyond is no gzip of these bytes. */
    s->limit = (uint64_t)(n - p) * 1032 + 1024;
    if (inflate_span(s, b + p, n - p, &used) && p + used + 8 <= n) {
        const uint8_t *t = b + p + used;
        if (le32(t) == s->crc && le32(t + 4) == (uint32_t)s->out)
            end = p + used + 8;
    }
    free(s);
    return end;
}

static size_t end_zip(const uint8_t *b, size_t n)
{
    size_t end = 0;
    for (size_t p = 4; p + 22 <= n; p++)
        if (b[p] == 'P' && memcmp(b + p, "PK\x05\x06", 4) == 0) {
            size_t e = p + 22 + le16(b + p + 20);
            if (e <= n)
                end = e;
        }
    return end;
}

static size_t end_jpeg(const uint8_t *b, size_t n)
{
    size_t p = 2;
    while (p + 4 <= n) {
        if (b[p] != 0xff)
            return 0;
        uint8_t m = b[p + 1];
        if (m == 0xff) {
            p++;
            continue;
        }
        if (m == 0xd9)
            return p + 2;
        if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) {
            p += 2;
            continue;
        }
        size_t len = ((size_t)b[p + 2] << 8) | b[p + 3];
        if (len < 2 || p + 2 + len > n)
            return 0;
        p += 2 + len;
        if (m != 0xda)
            continue;
        /* Entropy-coded data: up to the next marker that is no stuffing or restart. */
        while (p + 1 < n && !(b[p] == 0xff && b[p + 1] != 0 && (b[p + 1] < 0xd0 || b[p + 1] > 0xd7)))
            p++;
    }
    return 0;
}

static size_t end_gif(const uint8_t *b, size_t n)
{
    if (n < 13)
        return 0;
    size_t p = 13;
    if (b[10] & 0x80)
        p += (size_t)3 << ((b[10] & 7) + 1);
    while (p < n) {
        uint8_t t = b[p++];
        if (t == 0x3b)
            return p;
        if (t == 0x21) {
            p++; /* label */
        } else if (t == 0x2c) {
            if (p + 9 > n)
                return 0;
            uint8_t f = b[p + 8];
            p += 9;
            if (f & 0x80)
                p += (size_t)3 << ((f & 7) + 1);
            p++; /* LZW minimum code size */
        } else {
            return 0;
        }
        while (p < n && b[p] != 0)
            p += (size_t)b[p] + 1;
        p++;
    }
    return 0;
}

static size_t end_riff(const uint8_t *b, size_t n)
{
    uint64_t e = (uint64_t)le32(b + 4) + 8;
    return e <= n && e > 12 ? (size_t)e : 0;
}

static size_t end_sqlite(const uint8_t *b, size_t n)
{
    uint32_t ps = (uint32_t)b[16] << 8 | b[17];
    if (ps == 1)
        ps = 65536;
    uint64_t pages = be32(b + 28);
    if (ps < 512 || (ps & (ps - 1)) != 0 || pages == 0)
        return 0;
    uint64_t e = pages * ps;
    return e <= n ? (size_t)e : 0;
}

/* The piece's length when its format tells it, else 0. */
static size_t format_end(enum sig k, const uint8_t *b, size_t n)
{
    switch (k) {
    case SIG_PNG:
        return end_png(b, n);
    case SIG_PDF:
        return end_pdf(b, n);
    case SIG_GZIP:
        return end_gzip(b, n);
    case SIG_ZIP:
        return end_zip(b, n);
    case SIG_JPEG:
        return end_jpeg(b, n);
    case SIG_GIF:
        return end_gif(b, n);
    case SIG_RIFF:
        return end_riff(b, n);
    case SIG_SQLITE:
        return end_sqlite(b, n);
    default:
        return 0;
    }
}

/* Text: printable UTF-8, tabs and line ends, up to where only zeros follow. */
static bool text_block(const uint8_t *b, size_t n, bool *zero_tail)
{
    size_t end = n;
    while (end > 0 && b[end - 1] == 0)
        end--;
    *zero_tail = end < n;
    for (size_t i = 0; i < end;) {
        uint32_t cp;
        size_t k = lanyfs_utf8_decode(b + i, end - i, &cp);
        if (k == 0) /* a character cut at the block's end may go on in the next */
            return end - i < 4 && n == end;
        if (!(cp == '\t' || cp == '\n' || cp == '\r' || cp == '\f' || printable(cp)))
            return false;
        i += k;
    }
    return end > 0;
}

static bool all_zero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0)
            return false;
    return true;
}

/* A header-carrying block (entry, chain, extender, superblock): no file content to carve. */
static bool looks_metadata(const uint8_t *b, uint32_t bs, uint64_t blocks, unsigned addrlen)
{
    uint8_t t = b[0];
    if (b[1] != 0)
        return false;
    if (t == LANYFS_TYPE_DIR || t == LANYFS_TYPE_FILE)
        return all_zero(b + 4, 4) && b[LANYFS_EN_USED - 1] == 0 &&
               all_zero(b + LANYFS_EN_USED, bs - LANYFS_EN_USED);
    if (t == LANYFS_TYPE_SUPER)
        return le32(b + 4) == LANYFS_MAGIC;
    if (t != LANYFS_TYPE_CHAIN && t != LANYFS_TYPE_EXT)
        return false;
    /* Slots in range, of either layout: chain (from 16) or extender (from 5). */
    size_t from = t == LANYFS_TYPE_CHAIN || all_zero(b + 4, 4) ? 16 : 5;
    if (t == LANYFS_TYPE_EXT && b[LANYFS_EXT_LEVEL] > 11 && from == 5)
        return false;
    for (size_t p = from; p + addrlen <= bs; p += addrlen)
        if (lanyfs_get_addr(b + p, addrlen) >= blocks)
            return false;
    return true;
}

/* ---- the run ------------------------------------------------------------------------ */

/* An output directory. */
struct sv_dir {
    uint32_t parent; /* index in dirs, SV_NO_DIR for the top */
    char *name;      /* its name in the parent (NULL for the top) */
    uint32_t entry;  /* the entry whose times it takes, 0 for none */
    bool made;       /* made or found in this run */
    bool bad;        /* cannot be had: what goes into it fails */
};

enum sv_job_kind {
    SV_JOB_DIR,  /* make a directory (an empty one too) */
    SV_JOB_FILE, /* copy an entry's data */
};

struct sv_job {
    enum sv_job_kind what;
    enum salvage_kind kind; /* for files */
    uint32_t entry;         /* the entry copied, or the directory's entry */
    uint32_t dir;           /* the output directory (for SV_JOB_DIR: the one to make) */
    char *name;             /* for files: the name in dir */
    unsigned version;       /* N of NAME.~N~ */
};

struct salvage_result {
    struct salvage_item *items;
    size_t nitems, icap;
    char **problems;
    size_t nproblems, pcap;
    struct salvage_totals t;
};

struct sv {
    const struct scan_result *scan;
    struct lanyfs_fs *fs;
    struct lanyfs_image *img;
    const struct salvage_opts *o;
    uint32_t bs;
    unsigned addrlen;
    uint64_t nblocks;      /* cells of the block map */
    uint64_t image_blocks; /* whole blocks the image holds */
    const struct scan_block *map;
    const struct scan_entry *ents;
    size_t nents;
    bool core_map;         /* the core reads with the scan's geometry */
    int top;               /* the output folder */

    struct sv_dir *dirs;
    size_t ndirs, dcap;
    uint32_t *dir_of;      /* dir_of[id]: the output directory of a directory entry */
    uint32_t d_files, d_deleted, d_orphans, d_carved, d_lost; /* SV_NO_DIR until needed */
    struct sv_job *jobs;
    size_t njobs, jcap;
    struct strset names;   /* "<dir>/<name>" taken */
    struct ctrmap next_name; /* take_name: the next number to try per base */
    struct strset inodes;  /* "<dev>:<ino>" of the files this run made */

    uint8_t *planned;      /* per entry id: 1 when a job copies it */
    uint64_t *tops;        /* the lost trees asked for by their top, sorted, once each */
    size_t ntops;
    uint32_t *ddir;        /* per deleted entry id: its directory entry, 0 = unknown */
    uint8_t *legal_holes;  /* per entry id: FILE_HOLES without a broken map */
    uint8_t *earlier;      /* per entry id: DELETED_BEFORE_FORMAT, an earlier format's */
    bool root_named;       /* the root is a directory the scan's search took, not LANYFSROOT */
    bool given;            /* the geometry was given: look for a later format's headers */
    uint64_t image_bytes;  /* the image's size */
    uint8_t *used;         /* bitmap: blocks this run copied as file data */

    uint32_t *path_dir;    /* the output path open now, top first (SV_DEPTH_MAX cells) */
    int *path_fd;          /* its descriptors: only the deepest SV_FD_KEEP are open, others -1 */
    size_t path_n;         /* levels in it */
    uint32_t *chain;       /* scratch for open_dir (SV_DEPTH_MAX cells) */
    magic_t magic;
    uint8_t *buf;          /* SV_RUN_BYTES */
    uint8_t *head;         /* SV_HEAD_BYTES: the start of the file being written */
    uint64_t done, total;
    struct salvage_result *res;
    bool oom;
};

static bool sv_cancelled(const struct sv *s)
{
    return s->o->cancel != NULL && *s->o->cancel != 0;
}

static void sv_progress(struct sv *s, uint64_t add)
{
    s->done += add;
    if (s->o->progress != NULL)
        s->o->progress(s->o->progress_ctx, s->done < s->total ? s->done : s->total, s->total);
}

static void problem(struct sv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct sv *s, const char *fmt, ...)
{
    struct salvage_result *r = s->res;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (r->nproblems == r->pcap) {
        size_t cap = r->pcap ? r->pcap * 2 : 8;
        char **q = realloc(r->problems, cap * sizeof(*q));
        if (q == NULL) {
            s->oom = true;
            return;
        }
        r->problems = q;
        r->pcap = cap;
    }
    char *m = strdup(msg);
    if (m == NULL) {
        s->oom = true;
        return;
    }
    r->problems[r->nproblems++] = m;
}

static const struct scan_entry *ent(const struct sv *s, uint32_t id)
{
    return id >= 1 && id <= s->nents ? &s->ents[id - 1] : NULL;
}

static size_t name_len(const struct scan_entry_fields *e)
{
    return e->name_len < LANYFS_NAME_FIELD ? e->name_len : LANYFS_NAME_FIELD;
}

/* Used-block bitmap. */
static void mark_used(struct sv *s, uint64_t blk)
{
    if (blk < s->nblocks)
        s->used[blk / 8] |= (uint8_t)(1u << (blk % 8));
}

static bool is_used(const struct sv *s, uint64_t blk)
{
    return blk < s->nblocks && (s->used[blk / 8] >> (blk % 8) & 1);
}

/* ---- planning: directories and names --------------------------------------------- */

static uint32_t dir_add(struct sv *s, uint32_t parent, char *name, uint32_t entry)
{
    if (s->ndirs == s->dcap) {
        size_t cap = s->dcap ? s->dcap * 2 : 64;
        struct sv_dir *q = realloc(s->dirs, cap * sizeof(*q));
        if (q == NULL) {
            free(name);
            s->oom = true;
            return SV_NO_DIR;
        }
        s->dirs = q;
        s->dcap = cap;
    }
    s->dirs[s->ndirs] = (struct sv_dir){.parent = parent, .name = name, .entry = entry};
    return (uint32_t)s->ndirs++;
}

/*
 * Take a name in dir: base, or base~2, base~3, ... (before suffix, which
 * is kept at the end).  The number to try first for each base and suffix
 * is remembered, so many equal names cost one try each.  Returns the name
 * (malloc) or NULL on no memory.
 */
static char *take_name(struct sv *s, uint32_t dir, const char *base, const char *suffix)
{
    struct sbuf key = {0}, nm = {0};
    sb_printf(&key, "%" PRIu32 "/", dir);
    sb_str(&key, base);
    sb_str(&key, "\x01"); /* never in an escaped name */
    sb_str(&key, suffix);
    uint32_t *next = key.oom ? NULL : ctrmap_get(&s->next_name, key.p);
    if (next == NULL)
        goto fail;
    for (uint32_t k = *next; k != 0; k++) {
        nm.n = 0;
        sb_str(&nm, base);
        if (k > 1)
            sb_printf(&nm, "~%" PRIu32, k);
        sb_str(&nm, suffix);
        key.n = 0;
        sb_printf(&key, "%" PRIu32 "/", dir);
        sb_str(&key, nm.p != NULL ? nm.p : "");
        if (key.oom || nm.oom)
            break;
        int added = strset_add(&s->names, key.p);
        if (added < 0)
            break;
        if (added == 1) {
            *next = k + 1;
            free(key.p);
            return nm.p;
        }
    }
fail:
    free(key.p);
    free(nm.p);
    s->oom = true;
    return NULL;
}

/* The top-level folder of a kind ("files", ...), made on demand. */
static uint32_t top_dir(struct sv *s, uint32_t *slot, const char *name, uint32_t entry)
{
    if (*slot != SV_NO_DIR)
        return *slot;
    char *n = take_name(s, SV_TOP, name, "");
    if (n == NULL)
        return SV_NO_DIR;
    *slot = dir_add(s, SV_TOP, n, entry);
    return *slot;
}

static bool job_add(struct sv *s, struct sv_job j)
{
    if (s->njobs == s->jcap) {
        size_t cap = s->jcap ? s->jcap * 2 : 256;
        struct sv_job *q = realloc(s->jobs, cap * sizeof(*q));
        if (q == NULL) {
            free(j.name);
            s->oom = true;
            return false;
        }
        s->jobs = q;
        s->jcap = cap;
    }
    s->jobs[s->njobs++] = j;
    return true;
}

static uint32_t root_id(const struct sv *s)
{
    for (size_t i = 0; i < s->nents; i++)
        if (s->ents[i].state == SCAN_ENTRY_LIVE && s->ents[i].parent == 0 &&
            scan_entry_is_dir(&s->ents[i]))
            return s->ents[i].id;
    return 0;
}

/* An output directory in parent for directory entry id, named after it. */
static uint32_t entry_dir_add(struct sv *s, uint32_t parent, uint32_t id)
{
    const struct scan_entry *c = ent(s, id);
    char *esc = c != NULL ? salvage_escape_name(c->e.name, name_len(&c->e)) : NULL;
    char *n = esc != NULL ? take_name(s, parent, esc, "") : NULL;
    free(esc);
    if (n == NULL) {
        s->oom = true;
        return SV_NO_DIR;
    }
    return dir_add(s, parent, n, id);
}

/*
 * The output directory of directory entry id (live or orphaned): made in
 * the plan with its ancestors.  The root is files/; an orphan with no
 * orphaned directory above it sits in orphans/.  The walk up is a loop
 * over a list of its own (no recursion), and a cycle of parents, which
 * only orphans can have, ends it as if the top were reached.
 */
static uint32_t dir_for(struct sv *s, uint32_t id)
{
    uint32_t *chain = NULL;
    size_t depth = 0, cap = 0;
    uint32_t cur = id, base = SV_NO_DIR, result = SV_NO_DIR;
    const struct scan_entry *x = ent(s, id);
    if (x == NULL)
        return SV_NO_DIR;
    enum scan_entry_state st = x->state;
    /* Walk up to a directory already planned (or the top); SV_PENDING marks the walk. */
    for (;;) {
        const struct scan_entry *c = ent(s, cur);
        if (c == NULL || c->state != st || !scan_entry_is_dir(c))
            break;
        if (s->dir_of[cur] == SV_PENDING)
            break; /* a cycle */
        if (s->dir_of[cur] != SV_NO_DIR) {
            base = s->dir_of[cur];
            break;
        }
        if (st == SCAN_ENTRY_LIVE && c->parent == 0) {
            uint32_t f = top_dir(s, &s->d_files, "files", s->root_named ? 0 : cur);
            if (f == SV_NO_DIR)
                goto out;
            /* A root the search took that is no LANYFSROOT is most likely a
             * former subdirectory: it keeps its name, files/NAME/. */
            if (s->root_named && (f = entry_dir_add(s, f, cur)) == SV_NO_DIR)
                goto out;
            s->dir_of[cur] = f;
            base = f;
            break;
        }
        if (depth == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            uint32_t *q = realloc(chain, ncap * sizeof(*q));
            if (q == NULL) {
                s->oom = true;
                goto out;
            }
            chain = q;
            cap = ncap;
        }
        chain[depth++] = cur;
        s->dir_of[cur] = SV_PENDING;
        cur = c->parent;
    }
    if (base == SV_NO_DIR) {
        if (st == SCAN_ENTRY_LIVE)
            goto out; /* a live directory the root does not reach */
        base = top_dir(s, &s->d_orphans, "orphans", 0);
        if (base == SV_NO_DIR)
            goto out;
    }
    while (depth > 0) {
        uint32_t d = chain[--depth];
        uint32_t nd = entry_dir_add(s, base, d);
        if (nd == SV_NO_DIR)
            goto out;
        s->dir_of[d] = nd;
        base = nd;
    }
    result = base;
out:
    /* Marks left by a failure go back to unplanned. */
    for (size_t i = 0; i < depth; i++)
        if (s->dir_of[chain[i]] == SV_PENDING)
            s->dir_of[chain[i]] = SV_NO_DIR;
    free(chain);
    return result;
}

/* A file job for entry id in dir, named after it (with suffix). */
static bool plan_file(struct sv *s, enum salvage_kind kind, uint32_t id, uint32_t dir,
                      unsigned version)
{
    const struct scan_entry *x = ent(s, id);
    if (dir == SV_NO_DIR || x == NULL)
        return !s->oom;
    char *esc = salvage_escape_name(x->e.name, name_len(&x->e));
    char suffix[24] = "";
    if (version > 0)
        snprintf(suffix, sizeof(suffix), ".~%u~", version);
    char *n = esc != NULL ? take_name(s, dir, esc, suffix) : NULL;
    free(esc);
    if (n == NULL) {
        s->oom = true;
        return false;
    }
    s->planned[id] = 1;
    return job_add(s, (struct sv_job){.what = SV_JOB_FILE, .kind = kind, .entry = id,
                                      .dir = dir, .name = n, .version = version});
}

/* ---- planning: the live tree, depth first, siblings by name ------------------------ */

struct kids {
    uint32_t *ids;    /* entry ids sorted by (parent, name) */
    size_t n;
    size_t *start;    /* start[id]: first index of id's children, n when none */
};

static _Thread_local const struct sv *sort_sv; /* qsort has no context argument */

static int by_parent_name(const void *a, const void *b)
{
    const struct scan_entry *x = &sort_sv->ents[*(const uint32_t *)a - 1];
    const struct scan_entry *y = &sort_sv->ents[*(const uint32_t *)b - 1];
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    size_t lx = name_len(&x->e), ly = name_len(&y->e);
    int c = memcmp(x->e.name, y->e.name, lx < ly ? lx : ly);
    if (c != 0)
        return c;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The children of every entry of one state, by name. */
static bool kids_build(struct sv *s, enum scan_entry_state st, struct kids *k)
{
    k->ids = malloc((s->nents + 1) * sizeof(*k->ids));
    k->start = malloc((s->nents + 2) * sizeof(*k->start));
    k->n = 0;
    if (k->ids == NULL || k->start == NULL)
        return false;
    for (size_t i = 0; i < s->nents; i++)
        if (s->ents[i].state == st && s->ents[i].parent != 0)
            k->ids[k->n++] = s->ents[i].id;
    sort_sv = s;
    qsort(k->ids, k->n, sizeof(*k->ids), by_parent_name);
    for (size_t i = 0; i <= s->nents + 1; i++)
        k->start[i] = k->n;
    for (size_t i = k->n; i-- > 0;)
        k->start[s->ents[k->ids[i] - 1].parent] = i;
    return true;
}

static void kids_free(struct kids *k)
{
    free(k->ids);
    free(k->start);
}

/* Plan entry id and, for a directory, everything below it. */
static bool plan_tree(struct sv *s, const struct kids *k, uint32_t id, enum salvage_kind kind)
{
    uint32_t *stack = malloc((s->nents + 1) * sizeof(*stack));
    size_t sp = 0;
    bool ok = false;
    if (stack == NULL) {
        s->oom = true;
        goto out;
    }
    stack[sp++] = id;
    while (sp > 0) {
        uint32_t cur = stack[--sp];
        const struct scan_entry *x = ent(s, cur);
        if (x == NULL || s->planned[cur])
            continue;
        if (scan_entry_is_file(x)) {
            /* In its directory when that is of its own state, else at the top of its kind. */
            const struct scan_entry *p = ent(s, x->parent);
            uint32_t d = p != NULL && p->state == x->state && scan_entry_is_dir(p)
                             ? dir_for(s, x->parent)
                             : top_dir(s, kind == SALVAGE_KIND_ORPHAN ? &s->d_orphans
                                                                     : &s->d_files,
                                       kind == SALVAGE_KIND_ORPHAN ? "orphans" : "files", 0);
            if (!plan_file(s, kind, cur, d, 0))
                goto out;
            continue;
        }
        if (!scan_entry_is_dir(x))
            continue;
        s->planned[cur] = 1;
        uint32_t d = dir_for(s, cur);
        if (d == SV_NO_DIR) {
            if (s->oom)
                goto out;
            continue;
        }
        if (!job_add(s, (struct sv_job){.what = SV_JOB_DIR, .entry = cur, .dir = d}))
            goto out;
        /* Children pushed in reverse, so they come out by name. */
        size_t from = k->start[cur];
        size_t to = from;
        while (to < k->n && s->ents[k->ids[to] - 1].parent == cur)
            to++;
        for (size_t i = to; i-- > from;)
            if (!s->planned[k->ids[i]])
                stack[sp++] = k->ids[i];
    }
    ok = !s->oom;
out:
    free(stack);
    return ok;
}

/* The live entry a path names (raw or shown form), 0 when none. */
static uint32_t live_by_path(const struct sv *s, const char *path)
{
    char *alt = unescape(path);
    uint32_t found = 0;
    for (int round = 0; round < 2 && found == 0; round++) {
        const char *p = round == 0 ? path : alt;
        if (p == NULL)
            break;
        /* "a/b", "/a/b/" and "/a/b" name the same entry. */
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '/')
            n--;
        const char *q = p;
        while (n > 1 && q[0] == '/' && q[1] == '/')
            q++, n--;
        for (size_t i = 0; i < s->nents && found == 0; i++) {
            const struct scan_entry *x = &s->ents[i];
            if (x->state != SCAN_ENTRY_LIVE || x->path == NULL)
                continue;
            size_t pl = strlen(x->path);
            if (q[0] == '/' ? (pl == n && memcmp(x->path, q, n) == 0)
                            : (pl == n + 1 && memcmp(x->path + 1, q, n) == 0))
                found = x->id;
        }
    }
    free(alt);
    return found;
}

/* ---- versions: where a deleted entry was, and which is newer ---------------------- */

struct view {
    const struct scan_entry *ents;
    size_t nents;
    const struct scan_block *map;
    uint64_t nblocks;
};

static struct view view_of(const struct scan_result *r)
{
    struct view v;
    v.nents = scan_entries(r, &v.ents);
    v.map = scan_blocks(r);
    v.nblocks = scan_block_count(r);
    return v;
}

static int name_cmp(const struct scan_entry_fields *a, const struct scan_entry_fields *b)
{
    size_t la = name_len(a), lb = name_len(b);
    int c = memcmp(a->name, b->name, la < lb ? la : lb);
    return c != 0 ? c : (la > lb) - (la < lb);
}

/*
 * The directory (entry id) a deleted entry was in, 0 when unknown.  When
 * the scan reached it through a live directory's tree (a link the driver
 * kept to it after freeing it, SPEC-9.12: a rename that replaced it, a
 * frozen parent), that directory.  Otherwise a tree link of its block that
 * still leads to a live entry on the side the order puts it (left: a
 * greater name) names a former sibling, whose directory it shared.  Links
 * that disagree tell nothing.
 */
static uint32_t deleted_dir(const struct view *v, const struct scan_entry *x)
{
    if (x->parent != 0 && x->parent <= v->nents) {
        const struct scan_entry *p = &v->ents[x->parent - 1];
        if (p->id == x->parent && p->state == SCAN_ENTRY_LIVE && scan_entry_is_dir(p))
            return p->id;
    }
    uint32_t dir = 0;
    uint64_t links[2] = {x->e.left, x->e.right};
    for (int j = 0; j < 2; j++) {
        uint64_t l = links[j];
        if (l == 0 || l >= v->nblocks)
            continue;
        const struct scan_block *c = &v->map[l];
        if ((c->cls != SCAN_BLK_DIR && c->cls != SCAN_BLK_FILE) || c->owner == 0 ||
            c->owner > v->nents)
            continue;
        const struct scan_entry *y = &v->ents[c->owner - 1];
        if (y->state != SCAN_ENTRY_LIVE || y->block != l || y->parent == 0)
            continue;
        int cmp = name_cmp(&y->e, &x->e);
        if ((j == 0 && cmp <= 0) || (j == 1 && cmp >= 0))
            continue;
        if (dir != 0 && dir != y->parent)
            return 0;
        dir = y->parent;
    }
    return dir;
}

static bool ts_key(const struct lanyfs_ts *t, int64_t *sec, uint32_t *nsec)
{
    time_t tt;
    if (lanyfs_ts_is_unset(t) || !lanyfs_ts_to_time(t, &tt))
        return false;
    *sec = (int64_t)tt;
    *nsec = t->nsec;
    return true;
}

/* < 0 when a is newer than b. */
static int ts_newer(const struct lanyfs_ts *a, const struct lanyfs_ts *b)
{
    int64_t sa = 0, sb = 0;
    uint32_t na = 0, nb = 0;
    bool va = ts_key(a, &sa, &na), vb = ts_key(b, &sb, &nb);
    if (va != vb)
        return va ? -1 : 1;
    if (!va)
        return 0;
    if (sa != sb)
        return sa > sb ? -1 : 1;
    return na > nb ? -1 : na < nb;
}

static int entry_newer(const struct scan_entry *a, const struct scan_entry *b)
{
    int c = ts_newer(&a->e.modified, &b->e.modified);
    if (c == 0)
        c = ts_newer(&a->e.created, &b->e.created);
    if (c == 0 && a->e.wrcnt != b->e.wrcnt)
        c = a->e.wrcnt > b->e.wrcnt ? -1 : 1;
    if (c == 0 && a->block != b->block)
        c = a->block > b->block ? -1 : 1;
    return c;
}

static _Thread_local const struct view *sort_view; /* the same */

static int by_newest(const void *a, const void *b)
{
    return entry_newer(&sort_view->ents[*(const uint32_t *)a - 1],
                       &sort_view->ents[*(const uint32_t *)b - 1]);
}

static void sort_newest(const struct view *v, uint32_t *ids, size_t n)
{
    sort_view = v;
    qsort(ids, n, sizeof(*ids), by_newest);
}

/*
 * The files of a scan sorted for version lookups without a search of all
 * entries per file: the deleted files by (name, directory, newest first),
 * the directory being ddir's (0, unknown, first), and the live files by
 * name.  A lookup is then two binary searches per run.
 */
struct vindex {
    const struct view *v;
    const uint32_t *ddir; /* ddir[id]: a deleted entry's directory, 0 = unknown */
    uint32_t *del;        /* deleted file ids */
    size_t ndel;
    uint32_t *live;       /* live file ids */
    size_t nlive;
};

static _Thread_local const struct vindex *sort_ix; /* the same */

static int by_name_dir_newest(const void *a, const void *b)
{
    uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
    const struct scan_entry *x = &sort_ix->v->ents[ia - 1], *y = &sort_ix->v->ents[ib - 1];
    int c = name_cmp(&x->e, &y->e);
    if (c == 0 && sort_ix->ddir[ia] != sort_ix->ddir[ib])
        c = sort_ix->ddir[ia] < sort_ix->ddir[ib] ? -1 : 1;
    return c != 0 ? c : entry_newer(x, y);
}

static bool vindex_build(const struct view *v, const uint32_t *ddir, struct vindex *ix)
{
    *ix = (struct vindex){.v = v, .ddir = ddir};
    ix->del = malloc((v->nents + 1) * sizeof(*ix->del));
    ix->live = malloc((v->nents + 1) * sizeof(*ix->live));
    if (ix->del == NULL || ix->live == NULL)
        return false;
    for (size_t i = 0; i < v->nents; i++) {
        const struct scan_entry *y = &v->ents[i];
        if (!scan_entry_is_file(y))
            continue;
        if (y->state == SCAN_ENTRY_DELETED)
            ix->del[ix->ndel++] = y->id;
        else if (y->state == SCAN_ENTRY_LIVE)
            ix->live[ix->nlive++] = y->id;
    }
    /* The live files have no ddir (0): by name, then newest. */
    sort_ix = ix;
    qsort(ix->del, ix->ndel, sizeof(*ix->del), by_name_dir_newest);
    qsort(ix->live, ix->nlive, sizeof(*ix->live), by_name_dir_newest);
    return true;
}

static void vindex_free(struct vindex *ix)
{
    free(ix->del);
    free(ix->live);
}

/* < 0, 0, > 0: entry id against (name of e, directory dir) in the index's order. */
static int key_cmp(const struct vindex *ix, uint32_t id, const struct scan_entry_fields *e,
                   uint32_t dir)
{
    int c = name_cmp(&ix->v->ents[id - 1].e, e);
    if (c == 0 && ix->ddir[id] != dir)
        c = ix->ddir[id] < dir ? -1 : 1;
    return c;
}

/* The run [*from, *to) of ids whose (name, directory) is (e's name, dir). */
static void key_run(const struct vindex *ix, const uint32_t *ids, size_t n,
                    const struct scan_entry_fields *e, uint32_t dir, size_t *from, size_t *to)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(ix, ids[mid], e, dir) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *from = lo;
    hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(ix, ids[mid], e, dir) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *to = lo;
}

/*
 * The deleted files that are earlier versions of live file id, newest
 * first, into ids (room for nents): those whose directory is id's, and
 * those whose directory is unknown -- with strict only when id is the only
 * live file of the name (they then belong to it alone).
 */
static size_t versions_of(const struct vindex *ix, uint32_t id, bool strict, uint32_t *ids)
{
    const struct scan_entry *x = &ix->v->ents[id - 1];
    size_t kf, kt, uf = 0, ut = 0, lf, lt, n = 0;
    key_run(ix, ix->del, ix->ndel, &x->e, x->parent, &kf, &kt);
    if (x->parent == 0)
        kf = kt; /* no directory known: only the unknown run below */
    key_run(ix, ix->live, ix->nlive, &x->e, 0, &lf, &lt);
    if (!strict || lt - lf == 1)
        key_run(ix, ix->del, ix->ndel, &x->e, 0, &uf, &ut);
    /* Merge the two runs, each newest first. */
    while (kf < kt || uf < ut) {
        bool take_known = uf == ut || (kf < kt && entry_newer(&ix->v->ents[ix->del[kf] - 1],
                                                              &ix->v->ents[ix->del[uf] - 1]) <= 0);
        ids[n++] = take_known ? ix->del[kf++] : ix->del[uf++];
    }
    return n;
}

/* ddir[id] for every deleted entry (malloc, nents + 1 cells). */
static uint32_t *deleted_dirs(const struct view *v)
{
    uint32_t *d = calloc(v->nents + 1, sizeof(*d));
    if (d == NULL)
        return NULL;
    for (size_t i = 0; i < v->nents; i++)
        if (v->ents[i].state == SCAN_ENTRY_DELETED)
            d[v->ents[i].id] = deleted_dir(v, &v->ents[i]);
    return d;
}

/* ---- planning: versions, deleted files, orphans ------------------------------------ */

static bool plan_versions(struct sv *s, const struct view *v, size_t live_jobs)
{
    uint32_t *ids = malloc((s->nents + 1) * sizeof(*ids));
    struct vindex ix = {0};
    bool ok = false;
    if (ids == NULL || !vindex_build(v, s->ddir, &ix)) {
        s->oom = true;
        free(ids);
        vindex_free(&ix);
        return false;
    }
    for (size_t j = 0; j < live_jobs; j++) {
        if (s->jobs[j].what != SV_JOB_FILE)
            continue;
        uint32_t dir = s->jobs[j].dir;
        size_t n = versions_of(&ix, s->jobs[j].entry, true, ids);
        unsigned number = 0;
        for (size_t k = 0; k < n; k++) {
            if (s->planned[ids[k]])
                continue;
            /* Beside the copy, after its name as chosen. */
            char suffix[24];
            snprintf(suffix, sizeof(suffix), ".~%u~", ++number);
            char *nm = take_name(s, dir, s->jobs[j].name, suffix);
            if (nm == NULL)
                goto out;
            s->planned[ids[k]] = 1;
            if (!job_add(s, (struct sv_job){.what = SV_JOB_FILE, .kind = SALVAGE_KIND_VERSION,
                                            .entry = ids[k], .dir = dir, .name = nm,
                                            .version = number}))
                goto out;
        }
    }
    /*
     * Paths no longer live: deleted files of one name and directory (or
     * both unknown) written more than once, each run of the index newest first.
     */
    for (size_t i = 0; i < ix.ndel;) {
        const struct scan_entry *a = ent(s, ix.del[i]);
        size_t from = i, to = i + 1;
        while (to < ix.ndel && key_cmp(&ix, ix.del[to], &a->e, s->ddir[a->id]) == 0)
            to++;
        i = to;
        size_t members = 0;
        for (size_t k = from; k < to; k++)
            members += !s->planned[ix.del[k]];
        if (members < 2)
            continue; /* one deleted file is no versions: --deleted takes it */
        unsigned count = 0;
        for (size_t k = from; k < to; k++) {
            if (s->planned[ix.del[k]])
                continue;
            uint32_t d = top_dir(s, &s->d_deleted, "deleted", 0);
            if (d == SV_NO_DIR || !plan_file(s, SALVAGE_KIND_VERSION, ix.del[k], d, ++count))
                goto out;
        }
    }
    ok = true;
out:
    vindex_free(&ix);
    free(ids);
    return ok;
}

static bool plan_deleted(struct sv *s)
{
    uint32_t *ids = malloc((s->nents + 1) * sizeof(*ids));
    size_t n = 0;
    if (ids == NULL) {
        s->oom = true;
        return false;
    }
    for (size_t i = 0; i < s->nents; i++) {
        const struct scan_entry *y = &s->ents[i];
        if (y->state == SCAN_ENTRY_DELETED && scan_entry_is_file(y) && !s->planned[y->id])
            ids[n++] = y->id;
    }
    struct view v = {s->ents, s->nents, s->map, s->nblocks};
    sort_newest(&v, ids, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t d = top_dir(s, &s->d_deleted, "deleted", 0);
        if (d == SV_NO_DIR || !plan_file(s, SALVAGE_KIND_DELETED, ids[i], d, 0)) {
            free(ids);
            return false;
        }
    }
    free(ids);
    return true;
}

static bool plan_orphans(struct sv *s)
{
    struct kids k;
    bool ok = kids_build(s, SCAN_ENTRY_ORPHAN, &k);
    if (!ok)
        s->oom = true;
    for (size_t i = 0; ok && i < s->nents; i++) {
        const struct scan_entry *x = &s->ents[i];
        /* Roots first: an orphan whose parent is no orphaned directory. */
        const struct scan_entry *p = ent(s, x->parent);
        if (x->state != SCAN_ENTRY_ORPHAN ||
            (p != NULL && p->state == SCAN_ENTRY_ORPHAN && scan_entry_is_dir(p)))
            continue;
        ok = plan_tree(s, &k, x->id, SALVAGE_KIND_ORPHAN);
    }
    /* Whatever a cycle of parents left over. */
    for (size_t i = 0; ok && i < s->nents; i++)
        if (s->ents[i].state == SCAN_ENTRY_ORPHAN && !s->planned[s->ents[i].id])
            ok = plan_tree(s, &k, s->ents[i].id, SALVAGE_KIND_ORPHAN);
    kids_free(&k);
    return ok;
}

/* ---- the output folder --------------------------------------------------------------- */

/* The path of directory d relative to the top ("files/a/b"), into b. */
static void dir_path(const struct sv *s, uint32_t d, struct sbuf *b)
{
    uint32_t chain[SV_DEPTH_MAX];
    size_t n = 0;
    for (uint32_t c = d; c != SV_TOP && c != SV_NO_DIR && n < SV_DEPTH_MAX; c = s->dirs[c].parent)
        chain[n++] = c;
    while (n > 0) {
        sb_str(b, s->dirs[chain[--n]].name);
        if (n > 0)
            sb_str(b, "/");
    }
}

/* Make (or find) directory x inside pfd; its descriptor, -1 when it cannot be had. */
static int sub_dir(struct sv *s, int pfd, uint32_t d)
{
    struct sv_dir *x = &s->dirs[d];
    bool force = s->o->flags & SALVAGE_FORCE;
    const char *why = NULL;
    int fd = -1;
    for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
        if (mkdirat(pfd, x->name, 0777) == 0)
            s->res->t.dirs++;
        else if (errno != EEXIST) {
            why = strerror(errno);
            break;
        }
        fd = openat(pfd, x->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
            break;
        struct stat st;
        if (fstatat(pfd, x->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            why = strerror(errno);
            break;
        }
        if (!S_ISLNK(st.st_mode)) {
            why = "something that is no directory is in the way";
            break;
        }
        why = "it is a symbolic link, which is never followed (--force replaces it)";
        if (!force || unlinkat(pfd, x->name, 0) != 0)
            break;
    }
    if (fd < 0) {
        struct sbuf p = {0};
        dir_path(s, d, &p);
        problem(s, "%s: cannot make the directory: %s", p.p != NULL ? p.p : "?",
                why != NULL ? why : strerror(errno));
        free(p.p);
        x->bad = true;
    }
    x->made = fd >= 0;
    return fd;
}

/* Keep the first n levels of the open output path, closing the rest. */
static void path_cut(struct sv *s, size_t n)
{
    while (s->path_n > n) {
        s->path_n--;
        if (s->path_fd[s->path_n] >= 0)
            close(s->path_fd[s->path_n]);
        s->path_fd[s->path_n] = -1;
    }
}

/*
 * The descriptor of output directory d (made as needed), -1 when it cannot
 * be had.  The path to the directory opened last stays open (its deepest
 * SV_FD_KEEP levels), so the next directory is reached from the nearest
 * open ancestor: a step in a depth-first walk costs one open, however deep.
 */
static int open_dir(struct sv *s, uint32_t d)
{
    if (d == SV_TOP)
        return s->top;
    size_t n = 0;
    for (uint32_t c = d; c != SV_TOP && c != SV_NO_DIR; c = s->dirs[c].parent) {
        if (n == SV_DEPTH_MAX || s->dirs[c].bad)
            return -1;
        s->chain[n++] = c;
    }
    for (size_t i = 0; i < n / 2; i++) {
        uint32_t t = s->chain[i];
        s->chain[i] = s->chain[n - 1 - i];
        s->chain[n - 1 - i] = t;
    }
    size_t p = 0;
    while (p < n && p < s->path_n && s->path_dir[p] == s->chain[p])
        p++;
    if (p == n && s->path_fd[n - 1] >= 0) {
        path_cut(s, n);
        return s->path_fd[n - 1];
    }
    /* From the deepest open level the two paths share. */
    size_t j = p;
    while (j > 0 && s->path_fd[j - 1] < 0)
        j--;
    path_cut(s, j);
    int fd = j == 0 ? s->top : s->path_fd[j - 1];
    for (size_t i = j; i < n; i++) {
        int nfd = sub_dir(s, fd, s->chain[i]);
        if (nfd < 0)
            return -1;
        s->path_dir[i] = s->chain[i];
        s->path_fd[i] = nfd;
        s->path_n = i + 1;
        if (i >= SV_FD_KEEP && s->path_fd[i - SV_FD_KEEP] >= 0) {
            close(s->path_fd[i - SV_FD_KEEP]);
            s->path_fd[i - SV_FD_KEEP] = -1;
        }
        fd = nfd;
    }
    return fd;
}

static void inode_key(char *key, size_t len, const struct stat *st)
{
    snprintf(key, len, "%ju:%ju", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
}

/*
 * Create file *name in directory d (descriptor dfd), never through a link
 * and never over an existing file without --force.  A file this run made
 * under that name already (a host folder that folds case) gives *name a
 * suffix.  Returns the descriptor, or -1 with *st_out SKIPPED or FAILED
 * and why.
 */
static int create_file(struct sv *s, int dfd, uint32_t d, char **name,
                       enum salvage_status *st_out, const char **why)
{
    bool force = s->o->flags & SALVAGE_FORCE;
    *why = NULL;
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = openat(dfd, *name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            struct stat st;
            char key[64];
            if (fstat(fd, &st) == 0) {
                inode_key(key, sizeof(key), &st);
                if (strset_add(&s->inodes, key) < 0)
                    s->oom = true;
            }
            return fd;
        }
        if (errno != EEXIST) {
            *st_out = SALVAGE_FAILED;
            *why = strerror(errno);
            return -1;
        }
        struct stat st;
        char key[64];
        if (fstatat(dfd, *name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            *st_out = SALVAGE_FAILED;
            *why = strerror(errno);
            return -1;
        }
        inode_key(key, sizeof(key), &st);
        if (strset_has(&s->inodes, key)) {
            char *alt = take_name(s, d, *name, "");
            if (alt == NULL) {
                *st_out = SALVAGE_FAILED;
                *why = "out of memory";
                return -1;
            }
            free(*name);
            *name = alt;
            continue;
        }
        if (!force) {
            *st_out = SALVAGE_SKIPPED;
            *why = S_ISLNK(st.st_mode) ? "a symbolic link is in the way; it is never followed "
                                         "(--force replaces it)"
                                       : "the file exists (--force replaces it)";
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            *st_out = SALVAGE_FAILED;
            *why = "a directory is in the way";
            return -1;
        }
        if (unlinkat(dfd, *name, 0) != 0) {
            *st_out = SALVAGE_FAILED;
            *why = strerror(errno);
            return -1;
        }
    }
    *st_out = SALVAGE_FAILED;
    *why = "the name keeps being taken";
    return -1;
}

static bool write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* An entry's modification time as two timespecs (atime too); false when it has none. */
static bool entry_times(const struct lanyfs_ts *t, struct timespec ts[2])
{
    time_t tt;
    if (lanyfs_ts_is_unset(t) || !lanyfs_ts_to_time(t, &tt))
        return false;
    ts[0].tv_sec = tt;
    ts[0].tv_nsec = t->nsec;
    ts[1] = ts[0];
    return true;
}

/* ---- reading the image ----------------------------------------------------------------- */

static bool read_blocks(struct sv *s, uint64_t first, uint64_t count, uint8_t *buf)
{
    if (first >= s->image_blocks || count > s->image_blocks - first)
        return false;
    return lanyfs_image_pread(s->img, first * s->bs, buf, (size_t)(count * s->bs), NULL) ==
           LANYFS_OK;
}

/* libmagic's answers for the bytes (either out may be NULL). */
static void judge(struct sv *s, const uint8_t *b, size_t n, char **mime, char **desc, char **ext)
{
    if (s->magic == NULL)
        return;
    const char *a;
    if (mime != NULL && magic_setflags(s->magic, MAGIC_MIME_TYPE) == 0 &&
        (a = magic_buffer(s->magic, b, n)) != NULL)
        *mime = salvage_escape_shown((const uint8_t *)a, strlen(a));
    if (desc != NULL && magic_setflags(s->magic, MAGIC_NONE) == 0 &&
        (a = magic_buffer(s->magic, b, n)) != NULL)
        *desc = salvage_escape_shown((const uint8_t *)a, strlen(a));
    if (ext != NULL && magic_setflags(s->magic, MAGIC_EXTENSION) == 0 &&
        (a = magic_buffer(s->magic, b, n)) != NULL && strcmp(a, "???") != 0) {
        size_t k = 0;
        while (a[k] != '\0' && a[k] != '/' && k < 16 &&
               ((a[k] >= 'a' && a[k] <= 'z') || (a[k] >= '0' && a[k] <= '9')))
            k++;
        if (k > 0 && (a[k] == '\0' || a[k] == '/'))
            *ext = strndup(a, k);
    }
}

/* ---- items -------------------------------------------------------------------------------- */

static void item_clear(struct salvage_item *it)
{
    free(it->source);
    free(it->output);
    free(it->mime);
    free(it->magic);
    free(it->ext);
    free(it->note);
    free(it->blocks.r);
    free(it->holes.r);
    free(it->unreadable.r);
    free(it->reused.r);
    free(it->shared.r);
    memset(it, 0, sizeof(*it));
}

/* File the item in the result (taking its contents) and tell the caller. */
static void item_done(struct sv *s, struct salvage_item *it)
{
    struct salvage_result *r = s->res;
    if (r->nitems == r->icap) {
        size_t cap = r->icap ? r->icap * 2 : 64;
        struct salvage_item *q = realloc(r->items, cap * sizeof(*q));
        if (q == NULL) {
            s->oom = true;
            item_clear(it);
            return;
        }
        r->items = q;
        r->icap = cap;
    }
    switch (it->status) {
    case SALVAGE_EXACT:
        r->t.exact++;
        break;
    case SALVAGE_PARTIAL:
        r->t.partial++;
        break;
    case SALVAGE_UNRECOVERABLE:
        r->t.unrecoverable++;
        break;
    case SALVAGE_SKIPPED:
        r->t.skipped++;
        break;
    case SALVAGE_FAILED:
        r->t.failed++;
        break;
    }
    if (it->status <= SALVAGE_UNRECOVERABLE) {
        r->t.bytes += it->size;
        r->t.recovered += it->recovered;
    }
    r->items[r->nitems] = *it;
    memset(it, 0, sizeof(*it));
    if (s->o->on_item != NULL)
        s->o->on_item(s->o->item_ctx, &r->items[r->nitems]);
    r->nitems++;
}

/* The shown path of an entry: "/a/b" from its directories' names. */
static char *shown_path(const struct sv *s, const struct scan_entry *x)
{
    uint32_t chain[SV_DEPTH_MAX];
    size_t n = 0;
    struct sbuf b = {0};
    const struct scan_entry *c = x;
    if (x->state == SCAN_ENTRY_DELETED) {
        const struct scan_entry *d = ent(s, s->ddir[x->id]);
        if (d != NULL) {
            char *dp = shown_path(s, d);
            if (dp != NULL && strcmp(dp, "/") != 0)
                sb_str(&b, dp);
            free(dp);
        }
        sb_str(&b, "/");
        if (name_len(&x->e) == 0)
            sb_str(&b, "\\x00");
        esc_into(&b, x->e.name, name_len(&x->e), true, 0, NULL);
        return sb_take(&b);
    }
    while (c != NULL && n < SV_DEPTH_MAX && !(c->state == SCAN_ENTRY_LIVE && c->parent == 0)) {
        chain[n++] = c->id;
        const struct scan_entry *p = ent(s, c->parent);
        if (p == NULL || p->state != x->state)
            break;
        c = p;
    }
    if (n == 0)
        sb_str(&b, "/");
    while (n > 0) {
        const struct scan_entry *y = ent(s, chain[--n]);
        sb_str(&b, "/");
        if (name_len(&y->e) == 0)
            sb_str(&b, "\\x00");
        esc_into(&b, y->e.name, name_len(&y->e), true, 0, NULL);
    }
    return sb_take(&b);
}

/* ---- copying an entry ------------------------------------------------------------------ */

enum blk_kind {
    BK_OK,     /* read it */
    BK_HOLE,   /* nothing known: zeros */
    BK_REUSED, /* handed out again: zeros */
};

struct core_ctx {
    uint64_t *map;
    uint64_t n;
};

static int core_extent(void *ctx, uint64_t fblk, uint64_t dblk, uint64_t count)
{
    struct core_ctx *c = ctx;
    if (dblk == 0)
        return 0;
    for (uint64_t i = 0; i < count && fblk + i < c->n; i++)
        c->map[fblk + i] = dblk + i;
    return fblk + count >= c->n;
}

/* The tree that holds x's data when x's data pointer never landed
 * (UNLINKED_FILE_DATA), NULL when x links its own (or none). */
static const struct scan_lost_tree *lost_tree(const struct sv *s, const struct scan_entry *x)
{
    if (x->e.subtree != 0 || x->state == SCAN_ENTRY_DELETED)
        return NULL;
    return scan_lost_tree_of(s->scan, x->id);
}

/* A deleted file's candidate is its own: still free or leaked, nobody else's, no header. */
static bool still_free(const struct sv *s, uint64_t d, uint32_t id)
{
    if (d == 0 || d >= s->nblocks || is_used(s, d))
        return false;
    const struct scan_block *c = &s->map[d];
    if (c->flags & (SCAN_BF_SHARED | SCAN_BF_METADATA))
        return false;
    if (c->cls != SCAN_BLK_FREE && c->cls != SCAN_BLK_LEAKED && c->cls != SCAN_BLK_UNKNOWN)
        return false;
    return c->owner == 0 || c->owner == id;
}

/*
 * Where each of the nb file blocks of x comes from, into dblk and kind
 * (see the file's header); shared[i] when another owner claims the block.
 */
static bool block_sources(struct sv *s, const struct scan_entry *x, enum salvage_kind kind,
                          uint64_t nb, uint64_t *dblk, uint8_t *kinds, uint8_t *shared)
{
    bool deleted = kind == SALVAGE_KIND_DELETED || kind == SALVAGE_KIND_VERSION;
    bool gaps = false;
    const struct scan_lost_tree *lt = lost_tree(s, x);
    for (uint64_t i = 0; i < nb; i++) {
        if (lt != NULL)
            dblk[i] = i < lt->ndata ? lt->data[i] : 0;
        else
            dblk[i] = i < x->ndata && x->data != NULL ? x->data[i] : 0;
        gaps |= dblk[i] == 0;
    }
    if (gaps && !deleted && s->core_map && x->e.subtree != 0) {
        uint64_t *cm = calloc((size_t)nb, sizeof(*cm));
        if (cm == NULL)
            return false;
        struct core_ctx cc = {cm, nb};
        struct lanyfs_entry fe;
        scan_entry_fields(x, &fe);
        lanyfs_file_walk(s->fs, &fe, core_extent, NULL, &cc, NULL);
        for (uint64_t i = 0; i < nb; i++)
            if (dblk[i] == 0 && cm[i] < s->nblocks)
                dblk[i] = cm[i];
        free(cm);
    }
    for (uint64_t i = 0; i < nb; i++) {
        uint64_t d = dblk[i];
        shared[i] = 0;
        if (d == 0) {
            kinds[i] = BK_HOLE;
        } else if (deleted) {
            kinds[i] = still_free(s, d, x->id) ? BK_OK : BK_REUSED;
        } else {
            kinds[i] = BK_OK;
            const struct scan_block *c = d < s->nblocks ? &s->map[d] : NULL;
            uint32_t own = lt != NULL ? 0 : x->id;
            shared[i] = c != NULL && (c->owner != own || (c->flags & SCAN_BF_SHARED));
        }
    }
    return true;
}

static void note_add(struct sbuf *note, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_add(struct sbuf *note, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (note->n > 0)
        sb_str(note, "; ");
    sb_str(note, tmp);
}

static uint64_t range_total(const struct salvage_ranges *r)
{
    uint64_t t = 0;
    for (size_t i = 0; i < r->n; i++)
        t += r->r[i].count;
    return t;
}

/* The bytes of file block i of a file of length bytes. */
static size_t block_bytes(const struct sv *s, uint64_t i, uint64_t length)
{
    uint64_t off = i * s->bs;
    return length - off < s->bs ? (size_t)(length - off) : s->bs;
}

/* The bytes a file job writes: its size (the data's, for a lost tree's
 * file), no more than the device holds. */
static uint64_t job_length(const struct sv *s, const struct scan_entry *x, bool *capped)
{
    uint64_t cap = s->nblocks * (uint64_t)s->bs;
    const struct scan_lost_tree *lt = lost_tree(s, x);
    uint64_t size = lt != NULL ? lt->size : x->e.size;
    *capped = size > cap;
    return *capped ? cap : size;
}

static void copy_entry(struct sv *s, struct sv_job *j)
{
    const struct scan_entry *x = ent(s, j->entry);
    struct salvage_item it = {.kind = j->kind, .entry = x->id, .entry_block = x->block,
                              .version = j->version, .wrcnt = x->e.wrcnt,
                              .created = x->e.created, .modified = x->e.modified};
    struct sbuf out = {0}, note = {0};
    struct lanyfs_sha256 sha;
    uint64_t *dblk = NULL;
    uint8_t *kinds = NULL, *shared = NULL;
    size_t headn = 0;
    int fd = -1;
    bool capped, write_failed = false;
    uint64_t length = job_length(s, x, &capped);
    uint64_t nb = length == 0 ? 0 : (length - 1) / s->bs + 1;
    uint64_t legal = 0;

    it.source = shown_path(s, x);
    it.size = length;
    dir_path(s, j->dir, &out);
    if (j->dir != SV_TOP)
        sb_str(&out, "/");
    sb_str(&out, j->name);
    if (it.source == NULL || out.oom) {
        s->oom = true;
        goto out;
    }
    dblk = malloc((size_t)(nb ? nb : 1) * sizeof(*dblk));
    kinds = malloc((size_t)(nb ? nb : 1));
    shared = malloc((size_t)(nb ? nb : 1));
    if (dblk == NULL || kinds == NULL || shared == NULL ||
        !block_sources(s, x, j->kind, nb, dblk, kinds, shared)) {
        s->oom = true;
        goto out;
    }
    int dfd = open_dir(s, j->dir);
    const char *why = NULL;
    if (dfd < 0) {
        it.status = SALVAGE_FAILED;
        note_add(&note, "its directory could not be made");
        sv_progress(s, length);
        goto out;
    }
    fd = create_file(s, dfd, j->dir, &j->name, &it.status, &why);
    if (fd < 0) {
        note_add(&note, "%s", why);
        sv_progress(s, length);
        goto out;
    }
    /* The name may have changed on a clash. */
    out.n = 0;
    dir_path(s, j->dir, &out);
    if (j->dir != SV_TOP)
        sb_str(&out, "/");
    sb_str(&out, j->name);

    lanyfs_sha256_init(&sha);
    uint64_t run_max = SV_RUN_BYTES / s->bs, foreign = 0;
    for (uint64_t i = 0; i < nb && !write_failed;) {
        /* A run: consecutive disk blocks, or zero-filled blocks of one kind. */
        uint64_t k = 1;
        while (i + k < nb && k < run_max && kinds[i + k] == kinds[i] &&
               (kinds[i] != BK_OK || dblk[i + k] == dblk[i] + k))
            k++;
        uint8_t *b = s->buf;
        size_t bytes = 0;
        for (uint64_t m = 0; m < k; m++)
            bytes += block_bytes(s, i + m, length);
        bool zeros = kinds[i] != BK_OK;
        if (zeros) {
            memset(b, 0, bytes);
            if (kinds[i] == BK_HOLE) {
                if (!ranges_add(&it.holes, i, k))
                    s->oom = true;
                if (s->legal_holes[x->id])
                    legal += bytes;
            } else if (!ranges_add(&it.reused, i, k)) {
                s->oom = true;
            }
        } else if (read_blocks(s, dblk[i], k, b)) {
            for (uint64_t m = 0; m < k; m++) {
                if (!ranges_add(&it.blocks, dblk[i + m], 1) ||
                    (shared[i + m] && !ranges_add(&it.shared, i + m, 1)))
                    s->oom = true;
                mark_used(s, dblk[i + m]);
                if (s->given && scan_foreign_metadata(b + m * s->bs, s->bs,
                                                      block_bytes(s, i + m, length),
                                                      s->image_bytes))
                    foreign++;
            }
            it.recovered += bytes;
        } else {
            /* Block by block, to lose only what cannot be read. */
            for (uint64_t m = 0; m < k; m++) {
                uint8_t *p = b + m * s->bs;
                size_t bb = block_bytes(s, i + m, length);
                if (read_blocks(s, dblk[i + m], 1, p)) {
                    if (!ranges_add(&it.blocks, dblk[i + m], 1))
                        s->oom = true;
                    mark_used(s, dblk[i + m]);
                    if (s->given && scan_foreign_metadata(p, s->bs, bb, s->image_bytes))
                        foreign++;
                    it.recovered += bb;
                } else {
                    memset(p, 0, s->bs);
                    if (!ranges_add(&it.unreadable, i + m, 1))
                        s->oom = true;
                }
            }
        }
        if (headn < SV_HEAD_BYTES) {
            size_t h = bytes < SV_HEAD_BYTES - headn ? bytes : SV_HEAD_BYTES - headn;
            memcpy(s->head + headn, b, h);
            headn += h;
        }
        lanyfs_sha256_update(&sha, b, bytes);
        /* Zeros of a hole or a reused block are left as a hole of the copy. */
        if (zeros ? lseek(fd, (off_t)bytes, SEEK_CUR) < 0 : !write_all(fd, b, bytes)) {
            write_failed = true;
            why = strerror(errno);
        }
        sv_progress(s, bytes);
        i += k;
    }
    if (!write_failed && ftruncate(fd, (off_t)length) != 0) {
        write_failed = true;
        why = strerror(errno);
    }
    struct timespec ts[2];
    if (!write_failed && entry_times(&x->e.modified, ts) && futimens(fd, ts) != 0) {
        write_failed = true;
        why = strerror(errno);
    }
    if (close(fd) != 0 && !write_failed) {
        write_failed = true;
        why = strerror(errno);
    }
    fd = -1;
    if (write_failed) {
        it.status = SALVAGE_FAILED;
        note_add(&note, "writing failed: %s; the incomplete copy was removed", why);
        unlinkat(dfd, j->name, 0);
        goto out;
    }
    sha_final(&sha, it.sha256);
    judge(s, s->head, headn < SV_MAGIC_BYTES ? headn : SV_MAGIC_BYTES, &it.mime, &it.magic, NULL);

    /* Judge it. */
    uint64_t holes = range_total(&it.holes), unread = range_total(&it.unreadable);
    uint64_t reused = range_total(&it.reused);
    it.recovered += legal;
    it.status = SALVAGE_EXACT;
    if ((holes > 0 && legal == 0) || unread > 0 || reused > 0 || capped)
        it.status = SALVAGE_PARTIAL;
    if (holes > 0)
        note_add(&note, "%" PRIu64 " %s no block (%s)", holes,
                 holes == 1 ? "file block has" : "file blocks have",
                 legal ? "a sparse file's holes, zeros" : "zero-filled");
    if (unread > 0)
        note_add(&note, "%" PRIu64 " unreadable %s zero-filled", unread,
                 unread == 1 ? "block" : "blocks");
    if (reused > 0)
        note_add(&note, "%" PRIu64 " %s handed out again, zero-filled", reused,
                 reused == 1 ? "block was" : "blocks were");
    if (capped)
        note_add(&note, "size %" PRIu64 " is more than the device holds; cut at %" PRIu64,
                 x->e.size, length);
    /* Read with a given geometry (an earlier format's), a block with some
     * format's header inside was most likely written over by a later
     * format: the bytes are kept, the copy is not vouched for. */
    if (foreign > 0) {
        note_add(&note, "%" PRIu64 " %s another format's metadata (written over by a later "
                        "format, or the file holds a LanyFS image)",
                 foreign, foreign == 1 ? "block holds" : "blocks hold");
        it.status = SALVAGE_PARTIAL;
    }
    /* An earlier format's map may be read in the wrong block size: no copy
     * of it is vouched for as exact. */
    if (s->earlier[x->id]) {
        note_add(&note, "created before this filesystem: an earlier format's file, its data "
                        "map perhaps written for another block size");
        it.status = SALVAGE_PARTIAL;
    }
    const struct scan_lost_tree *lt = lost_tree(s, x);
    if (lt != NULL) {
        note_add(&note,
                 "its data pointer and size never landed: the data of the extender tree at "
                 "block %" PRIu64 ", the size (on the image %" PRIu64 ") taken from the data's end",
                 lt->top, x->e.size);
        it.status = SALVAGE_PARTIAL;
    }
    uint64_t nshared = range_total(&it.shared);
    if (nshared > 0)
        note_add(&note, "%" PRIu64 " %s also claimed by another owner", nshared,
                 nshared == 1 ? "block is" : "blocks are");
    size_t want = ext_expect(x->e.name, name_len(&x->e));
    if (want != SIZE_MAX && it.mime != NULL && length > 0 && it.recovered > 0 &&
        strcmp(it.mime, ext_types[want].mime) != 0 &&
        (ext_types[want].alt == NULL || strcmp(it.mime, ext_types[want].alt) != 0)) {
        note_add(&note, "content is %s, the name says %s", it.mime, ext_types[want].mime);
        if (j->kind == SALVAGE_KIND_DELETED || j->kind == SALVAGE_KIND_VERSION)
            it.status = SALVAGE_PARTIAL;
    }
    if (length > 0 && it.recovered == 0)
        it.status = SALVAGE_UNRECOVERABLE;
out:
    if (fd >= 0)
        close(fd);
    free(dblk);
    free(kinds);
    free(shared);
    it.output = sb_take(&out);
    it.note = note.n > 0 ? sb_take(&note) : (free(note.p), NULL);
    if (it.output == NULL || note.oom)
        s->oom = true;
    item_done(s, &it);
}

/* ---- carving --------------------------------------------------------------------------- */

static bool carve_candidate(const struct sv *s, uint64_t b)
{
    if (b == 0 || b >= s->nblocks || b >= s->image_blocks || is_used(s, b))
        return false;
    const struct scan_block *c = &s->map[b];
    if (c->flags & SCAN_BF_METADATA)
        return false;
    if (c->cls != SCAN_BLK_FREE && c->cls != SCAN_BLK_LEAKED && c->cls != SCAN_BLK_UNKNOWN)
        return false;
    /* A deleted file's candidates are nobody's unless this run copied them. */
    const struct scan_entry *x = ent(s, c->owner);
    return c->owner == 0 || (x != NULL && x->state == SCAN_ENTRY_DELETED);
}

struct seg {
    uint8_t *p;      /* the piece's blocks */
    size_t cap;      /* bytes allocated */
    uint64_t first;  /* its first block */
    uint64_t blocks; /* blocks in it */
    bool text;       /* every block so far is text */
};

/*
 * Write bytes [0, n) as one file no entry names: carved/ the blocks from
 * first on; or, with tree, the data blocks of that lost tree in its file
 * order, to carved/ named after its first data block (kind CARVED), or to
 * lost/ named after its top extender (kind LOST).
 */
static void carve_write(struct sv *s, const uint8_t *p, size_t n, uint64_t first,
                        const struct scan_lost_tree *tree, enum salvage_kind kind)
{
    bool lost = tree != NULL && kind == SALVAGE_KIND_LOST;
    struct salvage_item it = {.kind = lost ? SALVAGE_KIND_LOST : SALVAGE_KIND_CARVED,
                              .entry = lost ? tree->entry : 0,
                              .entry_block = lost ? tree->top : first, .size = n,
                              .recovered = n, .status = SALVAGE_EXACT};
    struct sbuf src = {0}, out = {0}, base = {0};
    uint64_t nb = (n - 1) / s->bs + 1;
    int fd = -1;
    bool ranges_ok = true;
    judge(s, p, n < SV_HEAD_BYTES ? n : SV_HEAD_BYTES, &it.mime, &it.magic, &it.ext);
    if (it.ext == NULL)
        it.ext = strdup(ext_of_type(it.mime));
    const struct scan_entry *owner = lost ? ent(s, tree->entry) : NULL;
    if (tree != NULL)
        sb_printf(&src, "extender tree at block %" PRIu64, tree->top);
    else if (nb == 1)
        sb_printf(&src, "block %" PRIu64, first);
    else
        sb_printf(&src, "blocks %" PRIu64 "-%" PRIu64, first, first + nb - 1);
    if (owner != NULL && owner->path != NULL) {
        char *shown = salvage_escape_shown((const uint8_t *)owner->path, strlen(owner->path));
        if (shown == NULL)
            src.oom = true;
        else
            sb_printf(&src, " (the data of %s)", shown);
        free(shown);
    }
    sb_printf(&base, "%08" PRIu64 ".%s", lost ? tree->top : first, it.ext != NULL ? it.ext : "bin");
    if (tree != NULL) {
        for (uint64_t i = 0; i < nb && i < tree->ndata; i++)
            if (tree->data[i] != 0)
                ranges_ok &= ranges_add(&it.blocks, tree->data[i], 1);
            else
                ranges_ok &= ranges_add(&it.holes, i, 1);
    } else {
        ranges_ok = ranges_add(&it.blocks, first, nb);
    }
    uint32_t d = lost ? top_dir(s, &s->d_lost, "lost", 0) : top_dir(s, &s->d_carved, "carved", 0);
    char *name = d != SV_NO_DIR && !base.oom ? take_name(s, d, base.p, "") : NULL;
    if (name == NULL || src.oom || it.ext == NULL || !ranges_ok) {
        s->oom = true;
        goto out;
    }
    int dfd = open_dir(s, d);
    const char *why = "its directory could not be made";
    if (dfd >= 0)
        fd = create_file(s, dfd, d, &name, &it.status, &why);
    else
        it.status = SALVAGE_FAILED;
    dir_path(s, d, &out);
    sb_str(&out, "/");
    sb_str(&out, name);
    if (fd < 0) {
        it.note = strdup(why);
        goto out;
    }
    struct lanyfs_sha256 sha;
    lanyfs_sha256_init(&sha);
    lanyfs_sha256_update(&sha, p, n);
    if (!write_all(fd, p, n) || close(fd) != 0) {
        it.status = SALVAGE_FAILED;
        char msg[300];
        snprintf(msg, sizeof(msg), "writing failed: %s; the incomplete copy was removed",
                 strerror(errno));
        it.note = strdup(msg);
        unlinkat(dfd, name, 0);
        fd = -1;
        goto out;
    }
    fd = -1;
    sha_final(&sha, it.sha256);
    for (uint64_t b = 0; b < nb; b++)
        if (tree == NULL)
            mark_used(s, first + b);
        else if (b < tree->ndata && tree->data[b] != 0)
            mark_used(s, tree->data[b]);
    if (tree != NULL) {
        it.note = strdup("the data of an extender tree no file links, in its order; the size "
                         "taken from the data's end");
        it.status = SALVAGE_PARTIAL;
    }
out:
    if (fd >= 0)
        close(fd);
    free(name);
    free(base.p);
    it.source = sb_take(&src);
    it.output = sb_take(&out);
    item_done(s, &it);
}

/* Carve the piece held: to its format's end, then what follows, on its own. */
static void carve_flush(struct sv *s, struct seg *g)
{
    uint64_t off = 0;
    while (off < g->blocks && !s->oom) {
        const uint8_t *p = g->p + off * s->bs;
        size_t n = (size_t)((g->blocks - off) * s->bs);
        enum sig k = sig_at(p, n);
        size_t end = k != SIG_NONE ? format_end(k, p, n) : 0;
        if (end == 0) {
            end = n;
            while (end > 0 && p[end - 1] == 0)
                end--;
            if (end > 0)
                carve_write(s, p, end, g->first + off, NULL, SALVAGE_KIND_CARVED);
            break;
        }
        carve_write(s, p, end, g->first + off, NULL, SALVAGE_KIND_CARVED);
        off += (end - 1) / s->bs + 1;
        /* Blocks of zeros after a format's end are no file. */
        while (off < g->blocks && all_zero(g->p + off * s->bs, s->bs))
            off++;
    }
    g->blocks = 0;
    g->text = false;
}

static bool carve_add(struct sv *s, struct seg *g, uint64_t blk, const uint8_t *b)
{
    size_t need = (size_t)(g->blocks + 1) * s->bs;
    if (need > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : SV_RUN_BYTES;
        while (cap < need)
            cap *= 2;
        uint8_t *q = realloc(g->p, cap);
        if (q == NULL)
            return false;
        g->p = q;
        g->cap = cap;
    }
    if (g->blocks == 0)
        g->first = blk;
    memcpy(g->p + g->blocks * s->bs, b, s->bs);
    g->blocks++;
    return true;
}

/* One candidate block with content, in block order. */
static bool carve_block(struct sv *s, struct seg *g, uint64_t blk, const uint8_t *b)
{
    bool zero_tail = false;
    bool text = sig_at(b, s->bs) == SIG_NONE && text_block(b, s->bs, &zero_tail);
    if (g->blocks > 0 &&
        (g->first + g->blocks != blk || sig_at(b, s->bs) != SIG_NONE ||
         (g->blocks + 1) * s->bs > SV_SEG_MAX || (g->text && !text)))
        carve_flush(s, g);
    if (g->blocks == 0)
        g->text = text;
    if (!carve_add(s, g, blk, b))
        return false;
    /* A text file ends in its zero-padded last block. */
    if (g->text && zero_tail)
        carve_flush(s, g);
    return true;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Whether the run was asked for the lost tree at top by its top extender. */
static bool lost_asked(const struct sv *s, uint64_t top)
{
    return s->ntops > 0 && bsearch(&top, s->tops, s->ntops, sizeof(*s->tops), cmp_u64) != NULL;
}

/* Whether the lost tree t goes to lost/: asked for, or SALVAGE_LOST and
 * its file is not one this run copies (from that tree). */
static bool lost_wanted(const struct sv *s, const struct scan_lost_tree *t)
{
    bool copied = t->entry != 0 && t->entry <= s->nents && s->planned[t->entry];
    return lost_asked(s, t->top) || ((s->o->flags & SALVAGE_LOST) && !copied);
}

/*
 * The lost trees (LOST_DATA_TREE, UNLINKED_FILE_DATA), each tree's data
 * blocks in its order as one file, holes and unreadable blocks as zeros, at
 * most SV_SEG_MAX bytes:
 *  - kind LOST: to lost/, named after the top extender, the trees asked for
 *    by their top, and with SALVAGE_LOST every tree but those whose file
 *    this run copied from it;
 *  - kind CARVED: to carved/, named after the first data block, every tree
 *    whose file this run did not copy, before the runs of single blocks are
 *    carved (which then skip them); blocks this run already wrote (a tree
 *    written to lost/) are left out.
 */
static void lost_trees_write(struct sv *s, enum salvage_kind kind)
{
    const struct scan_lost_tree *lt;
    size_t n = scan_lost_trees(s->scan, &lt);
    bool to_lost = kind == SALVAGE_KIND_LOST;
    for (size_t i = 0; i < n && !s->oom && !sv_cancelled(s); i++) {
        const struct scan_lost_tree *t = &lt[i];
        bool copied = t->entry != 0 && t->entry <= s->nents && s->planned[t->entry];
        if (!(to_lost ? lost_wanted(s, t) : !copied) || t->size == 0)
            continue;
        size_t len = t->size < SV_SEG_MAX ? (size_t)t->size : SV_SEG_MAX;
        uint64_t nb = (len - 1) / s->bs + 1, first = 0;
        uint8_t *p = calloc(1, (size_t)nb * s->bs);
        if (p == NULL) {
            s->oom = true;
            return;
        }
        for (uint64_t k = 0; k < nb && k < t->ndata; k++) {
            uint64_t d = t->data[k];
            if (d == 0 || d >= s->nblocks || (!to_lost && is_used(s, d)))
                continue;
            if (first == 0)
                first = d;
            if (!read_blocks(s, d, 1, p + k * s->bs))
                memset(p + k * s->bs, 0, s->bs);
        }
        if (first != 0)
            carve_write(s, p, len, first, t, kind);
        free(p);
        sv_progress(s, to_lost ? len : 0);
    }
}

/*
 * Before the copy: the tops asked for, sorted (each tree looks itself up
 * there), each that names no lost tree as a problem, and the bytes lost/
 * will take, for the progress.
 */
static void lost_trees_plan(struct sv *s)
{
    const struct scan_lost_tree *lt;
    size_t n = scan_lost_trees(s->scan, &lt), m = s->o->nlost_tops;
    uint8_t *found = NULL;
    if (m > 0) {
        s->tops = malloc(m * sizeof(*s->tops));
        found = calloc(m, 1);
        if (s->tops == NULL || found == NULL) {
            free(found);
            s->oom = true;
            return;
        }
        memcpy(s->tops, s->o->lost_tops, m * sizeof(*s->tops));
        qsort(s->tops, m, sizeof(*s->tops), cmp_u64);
        for (size_t i = 0; i < m; i++)
            if (s->ntops == 0 || s->tops[s->ntops - 1] != s->tops[i])
                s->tops[s->ntops++] = s->tops[i];
    }
    for (size_t i = 0; i < n; i++) {
        const uint64_t *hit = s->ntops > 0 ? bsearch(&lt[i].top, s->tops, s->ntops,
                                                     sizeof(*s->tops), cmp_u64)
                                           : NULL;
        if (hit != NULL)
            found[hit - s->tops] = 1;
        if (lost_wanted(s, &lt[i]))
            s->total += lt[i].size < SV_SEG_MAX ? lt[i].size : SV_SEG_MAX;
    }
    for (size_t i = 0; i < s->ntops; i++) {
        if (!found[i]) {
            problem(s, "block %" PRIu64 ": no lost extender tree starts there", s->tops[i]);
            s->res->t.missing++;
        }
    }
    free(found);
}

static void carve(struct sv *s)
{
    lost_trees_write(s, SALVAGE_KIND_CARVED);
    struct seg g = {0};
    uint64_t run_max = SV_RUN_BYTES / s->bs;
    for (uint64_t blk = 1; blk < s->nblocks && !s->oom && !sv_cancelled(s);) {
        if (!carve_candidate(s, blk)) {
            if (g.blocks > 0)
                carve_flush(s, &g);
            blk++;
            continue;
        }
        uint64_t k = 1;
        while (blk + k < s->nblocks && k < run_max && carve_candidate(s, blk + k))
            k++;
        bool whole = read_blocks(s, blk, k, s->buf);
        for (uint64_t m = 0; m < k && !s->oom; m++) {
            uint8_t *b = s->buf + m * s->bs;
            bool ok = whole || read_blocks(s, blk + m, 1, b);
            if (!ok || all_zero(b, s->bs) ||
                looks_metadata(b, s->bs, s->nblocks, s->addrlen)) {
                if (g.blocks > 0)
                    carve_flush(s, &g);
                continue;
            }
            if (!carve_block(s, &g, blk + m, b))
                s->oom = true;
        }
        sv_progress(s, k * s->bs);
        blk += k;
    }
    if (g.blocks > 0 && !s->oom)
        carve_flush(s, &g);
    free(g.p);
}

/* ---- manifests ---------------------------------------------------------------------------- */

const char *salvage_kind_name(enum salvage_kind k)
{
    switch (k) {
    case SALVAGE_KIND_LIVE:
        return "live";
    case SALVAGE_KIND_DELETED:
        return "deleted";
    case SALVAGE_KIND_ORPHAN:
        return "orphan";
    case SALVAGE_KIND_VERSION:
        return "version";
    case SALVAGE_KIND_CARVED:
        return "carved";
    case SALVAGE_KIND_LOST:
        return "lost";
    }
    return "unknown";
}

const char *salvage_status_name(enum salvage_status st)
{
    switch (st) {
    case SALVAGE_EXACT:
        return "exact";
    case SALVAGE_PARTIAL:
        return "partial";
    case SALVAGE_UNRECOVERABLE:
        return "unrecoverable";
    case SALVAGE_SKIPPED:
        return "skipped";
    case SALVAGE_FAILED:
        return "failed";
    }
    return "unknown";
}

/* ISO 8601 UTC, or "" when unset or invalid. */
static void ts_text(const struct lanyfs_ts *t, char *buf, size_t len)
{
    struct lanyfs_ts u = *t;
    buf[0] = '\0';
    if (lanyfs_ts_is_unset(t) || !lanyfs_ts_is_valid(t))
        return;
    u.offset = 0;
    lanyfs_ts_format(&u, buf, len);
}

/* A CSV field: quoted when it holds a comma, quote or line end (RFC 4180). */
static void csv_field(struct sbuf *b, const char *v, bool last)
{
    if (v == NULL)
        v = "";
    if (strpbrk(v, ",\"\r\n") != NULL) {
        sb_str(b, "\"");
        for (const char *p = v; *p; p++)
            sb_add(b, *p == '"' ? "\"\"" : p, *p == '"' ? 2 : 1);
        sb_str(b, "\"");
    } else {
        sb_str(b, v);
    }
    sb_str(b, last ? "\n" : ",");
}

static void csv_u64(struct sbuf *b, uint64_t v)
{
    sb_printf(b, "%" PRIu64 ",", v);
}

/* A JSON string of text that is already valid UTF-8 without control characters. */
static void json_str(struct sbuf *b, const char *v)
{
    if (v == NULL) {
        sb_str(b, "null");
        return;
    }
    sb_str(b, "\"");
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', *p};
            sb_add(b, e, 2);
        } else if ((uint8_t)*p < 0x20) {
            sb_printf(b, "\\u%04x", (unsigned)(uint8_t)*p);
        } else {
            sb_add(b, p, 1);
        }
    }
    sb_str(b, "\"");
}

static void json_ranges(struct sbuf *b, const char *key, const struct salvage_ranges *r)
{
    sb_printf(b, ", \"%s\": [", key);
    for (size_t i = 0; i < r->n; i++)
        sb_printf(b, "%s[%" PRIu64 ", %" PRIu64 "]", i ? ", " : "", r->r[i].first, r->r[i].count);
    sb_str(b, "]");
}

static char *manifest_csv(const struct salvage_result *r)
{
    struct sbuf b = {0};
    sb_str(&b, "kind,source_path,output_path,status,size,bytes_recovered,sha256,mime,magic,"
               "source_blocks,holes,unreadable,reused,shared,entry_block,version,wrcnt,"
               "modified,note\n");
    for (size_t i = 0; i < r->nitems; i++) {
        const struct salvage_item *it = &r->items[i];
        char ts[96];
        char *t[5] = {salvage_ranges_text(&it->blocks), salvage_ranges_text(&it->holes),
                      salvage_ranges_text(&it->unreadable), salvage_ranges_text(&it->reused),
                      salvage_ranges_text(&it->shared)};
        csv_field(&b, salvage_kind_name(it->kind), false);
        csv_field(&b, it->source, false);
        csv_field(&b, it->output, false);
        csv_field(&b, salvage_status_name(it->status), false);
        csv_u64(&b, it->size);
        csv_u64(&b, it->recovered);
        csv_field(&b, it->sha256, false);
        csv_field(&b, it->mime, false);
        csv_field(&b, it->magic, false);
        for (int k = 0; k < 5; k++) {
            csv_field(&b, t[k], false);
            free(t[k]);
        }
        csv_u64(&b, it->entry_block);
        if (it->version > 0)
            sb_printf(&b, "%u,", it->version);
        else
            sb_str(&b, ",");
        if (it->kind == SALVAGE_KIND_CARVED || it->kind == SALVAGE_KIND_LOST)
            sb_str(&b, ",");
        else
            sb_printf(&b, "%u,", it->wrcnt);
        ts_text(&it->modified, ts, sizeof(ts));
        csv_field(&b, ts, false);
        csv_field(&b, it->note, true);
    }
    return sb_take(&b);
}

static char *manifest_json(const struct sv *s)
{
    const struct salvage_result *r = s->res;
    const struct salvage_totals *t = &r->t;
    struct sbuf b = {0};
    unsigned f = s->o->flags;
    sb_str(&b, "{\n  \"format\": \"lanyfs-salvage/1\",\n  \"image\": ");
    if (s->o->image_name != NULL) {
        char *im = salvage_escape_shown((const uint8_t *)s->o->image_name,
                                        strlen(s->o->image_name));
        json_str(&b, im);
        free(im);
    } else {
        json_str(&b, NULL);
    }
    sb_printf(&b,
              ",\n  \"options\": {\"deleted\": %s, \"orphans\": %s, \"carve\": %s, "
              "\"versions\": %s, \"force\": %s},\n",
              f & SALVAGE_DELETED ? "true" : "false", f & SALVAGE_ORPHANS ? "true" : "false",
              f & SALVAGE_CARVE ? "true" : "false", f & SALVAGE_VERSIONS ? "true" : "false",
              f & SALVAGE_FORCE ? "true" : "false");
    sb_printf(&b,
              "  \"summary\": {\"exact\": %" PRIu64 ", \"partial\": %" PRIu64
              ", \"unrecoverable\": %" PRIu64 ", \"skipped\": %" PRIu64 ", \"failed\": %" PRIu64
              ", \"directories\": %" PRIu64 ", \"bytes\": %" PRIu64
              ", \"bytes_recovered\": %" PRIu64 ", \"cancelled\": %s},\n",
              t->exact, t->partial, t->unrecoverable, t->skipped, t->failed, t->dirs, t->bytes,
              t->recovered, sv_cancelled(s) ? "true" : "false");
    sb_str(&b, "  \"problems\": [");
    /* Problems are built of shown (escaped) names and ASCII: valid UTF-8 already. */
    for (size_t i = 0; i < r->nproblems; i++) {
        sb_str(&b, i ? ", " : "");
        json_str(&b, r->problems[i]);
    }
    sb_str(&b, "],\n  \"files\": [");
    for (size_t i = 0; i < r->nitems; i++) {
        const struct salvage_item *it = &r->items[i];
        char ts[96];
        sb_str(&b, i ? ",\n    {" : "\n    {");
        sb_str(&b, "\"kind\": ");
        json_str(&b, salvage_kind_name(it->kind));
        sb_str(&b, ", \"source_path\": ");
        json_str(&b, it->source);
        sb_str(&b, ", \"output_path\": ");
        json_str(&b, it->output);
        sb_str(&b, ", \"status\": ");
        json_str(&b, salvage_status_name(it->status));
        sb_printf(&b, ", \"size\": %" PRIu64 ", \"bytes_recovered\": %" PRIu64, it->size,
                  it->recovered);
        sb_str(&b, ", \"sha256\": ");
        json_str(&b, it->sha256[0] ? it->sha256 : NULL);
        sb_str(&b, ", \"mime\": ");
        json_str(&b, it->mime);
        sb_str(&b, ", \"magic\": ");
        json_str(&b, it->magic);
        sb_str(&b, ", \"extension\": ");
        json_str(&b, it->ext);
        sb_printf(&b, ", \"entry_block\": %" PRIu64, it->entry_block);
        if (it->version > 0)
            sb_printf(&b, ", \"version\": %u", it->version);
        else
            sb_str(&b, ", \"version\": null");
        if (it->kind == SALVAGE_KIND_CARVED || it->kind == SALVAGE_KIND_LOST) {
            sb_str(&b, ", \"wrcnt\": null, \"created\": null, \"modified\": null");
        } else {
            sb_printf(&b, ", \"wrcnt\": %u, \"created\": ", it->wrcnt);
            ts_text(&it->created, ts, sizeof(ts));
            json_str(&b, ts[0] ? ts : NULL);
            sb_str(&b, ", \"modified\": ");
            ts_text(&it->modified, ts, sizeof(ts));
            json_str(&b, ts[0] ? ts : NULL);
        }
        json_ranges(&b, "source_blocks", &it->blocks);
        json_ranges(&b, "holes", &it->holes);
        json_ranges(&b, "unreadable", &it->unreadable);
        json_ranges(&b, "reused", &it->reused);
        json_ranges(&b, "shared", &it->shared);
        sb_str(&b, ", \"note\": ");
        json_str(&b, it->note);
        sb_str(&b, "}");
    }
    sb_str(&b, r->nitems ? "\n  ]\n}\n" : "]\n}\n");
    return sb_take(&b);
}

static enum lanyfs_err write_manifest(struct sv *s, const char *name, const char *text,
                                      struct lanyfs_error *err)
{
    char *nm = strdup(name);
    enum salvage_status st;
    const char *why = "out of memory";
    int fd = nm != NULL ? create_file(s, s->top, SV_TOP, &nm, &st, &why) : -1;
    enum lanyfs_err rc = LANYFS_OK;
    if (fd < 0)
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s: %s", name, why);
    else if (!write_all(fd, text, strlen(text)) || fsync(fd) != 0)
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s: %s", name, strerror(errno));
    if (fd >= 0 && close(fd) != 0 && rc == LANYFS_OK)
        rc = lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s: %s", name, strerror(errno));
    free(nm);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------ */

static void sv_free(struct sv *s)
{
    free(s->tops);
    if (s->path_fd != NULL)
        path_cut(s, 0);
    free(s->path_dir);
    free(s->path_fd);
    free(s->chain);
    for (size_t i = 0; i < s->ndirs; i++)
        free(s->dirs[i].name);
    free(s->dirs);
    for (size_t i = 0; i < s->njobs; i++)
        free(s->jobs[i].name);
    free(s->jobs);
    free(s->dir_of);
    strset_free(&s->names);
    ctrmap_free(&s->next_name);
    strset_free(&s->inodes);
    free(s->planned);
    free(s->ddir);
    free(s->legal_holes);
    free(s->earlier);
    free(s->used);
    free(s->buf);
    free(s->head);
    if (s->magic != NULL)
        magic_close(s->magic);
}

/*
 * Entries whose holes are a sparse file's: FILE_HOLES, and no finding that
 * the map is broken (FILE_SIZE_UNMAPPED, or an error of the file pass).
 * The format cannot tell a slot a truncation left empty from one a crash
 * emptied; both read as zeros, and the copy lists them as holes.  Also
 * the deleted entries of an earlier format (DELETED_BEFORE_FORMAT), whose
 * copies say so, and a root the scan's search took that is no LANYFSROOT
 * (SB_ROOT_SEARCHED), which keeps its name under files/.
 */
static void find_legal_holes(struct sv *s)
{
    const struct scan_finding *f;
    size_t n = scan_findings(s->scan, &f);
    for (size_t i = 0; i < n; i++)
        if (f[i].code == SCAN_PR_FILE_HOLES && f[i].entry >= 1 && f[i].entry <= s->nents)
            s->legal_holes[f[i].entry] = 1;
    /* A map the scan found broken (a bad slot or pointer, blocks lost): its holes are damage. */
    for (size_t i = 0; i < n; i++) {
        const struct scan_problem_info *p = scan_problem_lookup(f[i].code);
        bool broken = f[i].code == SCAN_PR_FILE_SIZE_UNMAPPED ||
                      ((f[i].code >> 16) == 2 && p != NULL && p->severity >= SCAN_SEV_ERROR);
        if (broken && f[i].entry >= 1 && f[i].entry <= s->nents)
            s->legal_holes[f[i].entry] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (f[i].code == SCAN_PR_DELETED_BEFORE_FORMAT && f[i].entry >= 1 && f[i].entry <= s->nents)
            s->earlier[f[i].entry] = 1;
        if (f[i].code == SCAN_PR_SB_ROOT_SEARCHED) {
            const struct scan_entry *root = ent(s, root_id(s));
            s->root_named = root != NULL && !scan_entry_is_formatter_root(root);
        }
    }
}

/*
 * The entries asked for by id (salvage_opts.entries): a live one as a live
 * path would be, a deleted file into deleted/, an orphan (and what of its
 * state lies below it) into orphans/.  live holds the live tree's children.
 */
static bool plan_entries(struct sv *s, const struct kids *live)
{
    struct kids orphans;
    bool have_orphans = false;
    bool ok = true;
    for (size_t i = 0; ok && i < s->o->nentries; i++) {
        uint32_t id = s->o->entries[i];
        const struct scan_entry *x = ent(s, id);
        if (x == NULL) {
            problem(s, "entry %" PRIu32 ": the scan has no such entry", id);
            s->res->t.missing++;
            continue;
        }
        if (s->planned[id])
            continue;
        switch (x->state) {
        case SCAN_ENTRY_LIVE:
            ok = plan_tree(s, live, id, SALVAGE_KIND_LIVE);
            break;
        case SCAN_ENTRY_DELETED:
            if (!scan_entry_is_file(x)) {
                problem(s, "entry %" PRIu32 ": a deleted directory keeps no entries to copy", id);
                break;
            }
            {
                uint32_t d = top_dir(s, &s->d_deleted, "deleted", 0);
                ok = d != SV_NO_DIR && plan_file(s, SALVAGE_KIND_DELETED, id, d, 0);
            }
            break;
        case SCAN_ENTRY_ORPHAN:
            if (!have_orphans) {
                if (!kids_build(s, SCAN_ENTRY_ORPHAN, &orphans)) {
                    kids_free(&orphans);
                    s->oom = true;
                    return false;
                }
                have_orphans = true;
            }
            ok = plan_tree(s, &orphans, id, SALVAGE_KIND_ORPHAN);
            break;
        }
    }
    if (have_orphans)
        kids_free(&orphans);
    return ok && !s->oom;
}

static bool plan(struct sv *s)
{
    struct view v = {s->ents, s->nents, s->map, s->nblocks};
    struct kids k;
    if (!kids_build(s, SCAN_ENTRY_LIVE, &k)) {
        kids_free(&k);
        s->oom = true;
        return false;
    }
    bool ok = true;
    if (s->o->npaths == 0 && s->o->nentries == 0 && s->o->nlost_tops == 0) {
        uint32_t root = root_id(s);
        if (root == 0)
            problem(s, "the scan found no root directory: no live tree to copy");
        else
            ok = plan_tree(s, &k, root, SALVAGE_KIND_LIVE);
    }
    for (size_t i = 0; ok && i < s->o->npaths; i++) {
        uint32_t id = live_by_path(s, s->o->paths[i]);
        if (id == 0) {
            /* Shown in its canonical form, whether it was given raw or shown. */
            char *raw = unescape(s->o->paths[i]);
            char *p = raw != NULL ? salvage_escape_shown((const uint8_t *)raw, strlen(raw)) : NULL;
            free(raw);
            problem(s, "%s: no live entry of that path", p != NULL ? p : "?");
            free(p);
            s->res->t.missing++;
            continue;
        }
        ok = plan_tree(s, &k, id, SALVAGE_KIND_LIVE);
    }
    if (ok && s->o->nentries > 0)
        ok = plan_entries(s, &k);
    kids_free(&k);
    size_t live_jobs = s->njobs;
    if (ok && (s->o->flags & SALVAGE_VERSIONS))
        ok = plan_versions(s, &v, live_jobs);
    if (ok && (s->o->flags & SALVAGE_DELETED))
        ok = plan_deleted(s);
    if (ok && (s->o->flags & SALVAGE_ORPHANS))
        ok = plan_orphans(s);
    return ok && !s->oom;
}

/* Set every directory's time from its entry, once nothing more is written into it. */
static void dir_times(struct sv *s)
{
    for (size_t d = 1; d < s->ndirs; d++) {
        const struct scan_entry *x = ent(s, s->dirs[d].entry);
        struct timespec ts[2];
        if (x == NULL || !s->dirs[d].made || !entry_times(&x->e.modified, ts))
            continue;
        int fd = open_dir(s, (uint32_t)d);
        if (fd >= 0 && futimens(fd, ts) != 0) {
            struct sbuf p = {0};
            dir_path(s, (uint32_t)d, &p);
            problem(s, "%s: cannot set its time: %s", p.p != NULL ? p.p : "?", strerror(errno));
            free(p.p);
        }
    }
}

enum lanyfs_err salvage_run(const struct scan_result *scan, struct lanyfs_fs *fs, int outdir_fd,
                            const struct salvage_opts *opts, struct salvage_result **out,
                            struct lanyfs_error *err)
{
    struct sv s = {.scan = scan, .fs = fs, .o = opts, .top = outdir_fd, .d_files = SV_NO_DIR, .d_deleted = SV_NO_DIR,
                   .d_orphans = SV_NO_DIR, .d_carved = SV_NO_DIR,
                   .d_lost = SV_NO_DIR};
    enum lanyfs_err rc = LANYFS_OK;
    char *csv = NULL, *json = NULL;
    *out = NULL;
    const struct lanyfs_geom *g = scan_geom(scan);
    if (g == NULL)
        return lanyfs_fail(err, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                           "the scan found no usable geometry: nothing can be salvaged");
    s.res = calloc(1, sizeof(*s.res));
    if (s.res == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    *out = s.res;
    s.img = lanyfs_fs_image(fs);
    s.bs = g->blocksize;
    s.addrlen = g->addrlen;
    s.nblocks = scan_block_count(scan);
    s.map = scan_blocks(scan);
    s.nents = scan_entries(scan, &s.ents);
    s.image_blocks = scan_image_bytes(scan) / s.bs;
    s.image_bytes = scan_image_bytes(scan);
    s.given = scan_geom_given(scan);
    const struct lanyfs_geom *fg = lanyfs_fs_geom(fs);
    s.core_map = !scan_geom_inferred(scan) && fg->blocksize == g->blocksize &&
                 fg->addrlen == g->addrlen;

    /* An earlier run's manifest: nothing is touched without --force. */
    struct stat st;
    if (!(opts->flags & SALVAGE_FORCE) &&
        (fstatat(outdir_fd, "manifest.csv", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
         fstatat(outdir_fd, "manifest.json", &st, AT_SYMLINK_NOFOLLOW) == 0)) {
        rc = lanyfs_fail(err, LANYFS_E_EXISTS, LANYFS_NO_BLOCK,
                         "the folder holds the manifest of an earlier salvage; use --force "
                         "to write over it, or another folder");
        goto out;
    }
    s.dirs = calloc(1, sizeof(*s.dirs));
    s.dcap = s.ndirs = 1;
    s.dir_of = malloc((s.nents + 1) * sizeof(*s.dir_of));
    s.planned = calloc(s.nents + 1, 1);
    s.legal_holes = calloc(s.nents + 1, 1);
    s.earlier = calloc(s.nents + 1, 1);
    s.used = calloc((size_t)(s.nblocks / 8 + 1), 1);
    s.buf = malloc(SV_RUN_BYTES);
    s.head = malloc(SV_HEAD_BYTES);
    s.path_dir = malloc(SV_DEPTH_MAX * sizeof(*s.path_dir));
    s.path_fd = malloc(SV_DEPTH_MAX * sizeof(*s.path_fd));
    s.chain = malloc(SV_DEPTH_MAX * sizeof(*s.chain));
    struct view v = view_of(scan);
    s.ddir = deleted_dirs(&v);
    if (s.dirs == NULL || s.dir_of == NULL || s.planned == NULL || s.legal_holes == NULL || s.earlier == NULL ||
        s.used == NULL || s.buf == NULL || s.head == NULL || s.ddir == NULL ||
        s.path_dir == NULL || s.path_fd == NULL || s.chain == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    s.dirs[0] = (struct sv_dir){.parent = SV_NO_DIR, .made = true};
    for (size_t i = 0; i <= s.nents; i++)
        s.dir_of[i] = SV_NO_DIR;
    find_legal_holes(&s);
    const char *why = NULL;
    if (!magic_lazy_load(&why))
        problem(&s, "libmagic cannot be loaded (%s): no types are given", why);
    else
        s.magic = magic_open(MAGIC_NONE);
    if (s.magic != NULL && magic_load(s.magic, NULL) != 0) {
        problem(&s, "libmagic cannot load its database (%s): no types are given",
                magic_error(s.magic) != NULL ? magic_error(s.magic) : "unknown error");
        magic_close(s.magic);
        s.magic = NULL;
    }

    if (!plan(&s)) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s.njobs; i++) {
        bool capped;
        if (s.jobs[i].what == SV_JOB_FILE)
            s.total += job_length(&s, ent(&s, s.jobs[i].entry), &capped);
    }
    if (opts->flags & SALVAGE_CARVE)
        for (uint64_t b = 1; b < s.nblocks; b++)
            s.total += carve_candidate(&s, b) ? s.bs : 0;
    lost_trees_plan(&s);
    sv_progress(&s, 0);

    for (size_t i = 0; i < s.njobs && !s.oom && !sv_cancelled(&s); i++) {
        if (s.jobs[i].what == SV_JOB_DIR)
            open_dir(&s, s.jobs[i].dir);
        else
            copy_entry(&s, &s.jobs[i]);
    }
    if (!s.oom && !sv_cancelled(&s))
        lost_trees_write(&s, SALVAGE_KIND_LOST);
    if ((opts->flags & SALVAGE_CARVE) && !s.oom && !sv_cancelled(&s))
        carve(&s);
    dir_times(&s);
    if (s.oom) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    csv = manifest_csv(s.res);
    json = manifest_json(&s);
    if (csv == NULL || json == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    rc = write_manifest(&s, "manifest.csv", csv, err);
    if (rc == LANYFS_OK)
        rc = write_manifest(&s, "manifest.json", json, err);
    if (rc == LANYFS_OK && sv_cancelled(&s))
        rc = lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                         "interrupted; the manifests list what was copied");
out:
    free(csv);
    free(json);
    sv_free(&s);
    return rc;
}

void salvage_result_free(struct salvage_result *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nitems; i++)
        item_clear(&r->items[i]);
    free(r->items);
    for (size_t i = 0; i < r->nproblems; i++)
        free(r->problems[i]);
    free(r->problems);
    free(r);
}

size_t salvage_items(const struct salvage_result *r, const struct salvage_item **out)
{
    *out = r->items;
    return r->nitems;
}

void salvage_get_totals(const struct salvage_result *r, struct salvage_totals *out)
{
    *out = r->t;
}

size_t salvage_problems(const struct salvage_result *r, const char *const **out)
{
    *out = (const char *const *)r->problems;
    return r->nproblems;
}

/* ---- versions ------------------------------------------------------------------------------ */

enum lanyfs_err salvage_versions(const struct scan_result *scan, const char *path,
                                 struct salvage_version **out, size_t *n,
                                 struct lanyfs_error *err)
{
    struct view v = view_of(scan);
    struct sv s = {.ents = v.ents, .nents = v.nents, .map = v.map, .nblocks = v.nblocks};
    uint32_t *ddir = deleted_dirs(&v);
    uint32_t *ids = malloc((v.nents + 1) * sizeof(*ids));
    enum lanyfs_err rc = LANYFS_OK;
    size_t cnt = 0;
    *out = NULL;
    *n = 0;
    struct salvage_version *res = malloc((v.nents + 1) * sizeof(*res));
    if (ddir == NULL || ids == NULL || res == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    uint32_t live = live_by_path(&s, path);
    const struct scan_entry *x = ent(&s, live);
    size_t nv = 0;
    uint32_t dir = 0;
    if (x != NULL && scan_entry_is_file(x)) {
        struct vindex ix;
        if (!vindex_build(&v, ddir, &ix)) {
            vindex_free(&ix);
            rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            goto out;
        }
        nv = versions_of(&ix, live, false, ids);
        vindex_free(&ix);
    } else if (x == NULL) {
        /* No live file: the deleted files of its name, in its directory where known. */
        const char *slash = strrchr(path, '/');
        const char *base = slash != NULL ? slash + 1 : path;
        if (slash != NULL && slash != path) {
            char *dp = strndup(path, (size_t)(slash - path));
            if (dp == NULL) {
                rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
                goto out;
            }
            dir = live_by_path(&s, dp);
            free(dp);
        } else {
            dir = root_id(&s);
        }
        char *ubase = unescape(base);
        if (ubase == NULL) {
            rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
            goto out;
        }
        size_t bl = strlen(base), ul = strlen(ubase);
        for (size_t i = 0; i < v.nents; i++) {
            const struct scan_entry *y = &v.ents[i];
            size_t yl = name_len(&y->e);
            if (y->state == SCAN_ENTRY_DELETED && scan_entry_is_file(y) &&
                ((yl == bl && memcmp(y->e.name, base, bl) == 0) ||
                 (yl == ul && memcmp(y->e.name, ubase, ul) == 0)) &&
                (ddir[y->id] == 0 || ddir[y->id] == dir))
                ids[nv++] = y->id;
        }
        free(ubase);
        sort_newest(&v, ids, nv);
    }
    if (x != NULL && scan_entry_is_file(x))
        res[cnt++] = (struct salvage_version){
            .number = 0, .entry = x->id, .state = x->state, .block = x->block,
            .wrcnt = x->e.wrcnt, .created = x->e.created, .modified = x->e.modified,
            .size = x->e.size, .blocks_needed = x->blocks_needed,
            .blocks_intact = x->blocks_intact, .dir_known = true};
    for (size_t i = 0; i < nv; i++) {
        const struct scan_entry *y = ent(&s, ids[i]);
        res[cnt++] = (struct salvage_version){
            .number = (unsigned)(i + 1), .entry = y->id, .state = y->state, .block = y->block,
            .wrcnt = y->e.wrcnt, .created = y->e.created, .modified = y->e.modified,
            .size = y->e.size, .blocks_needed = y->blocks_needed,
            .blocks_intact = y->blocks_intact, .dir_known = ddir[y->id] != 0};
    }
    *out = res;
    *n = cnt;
    res = NULL;
out:
    free(res);
    free(ddir);
    free(ids);
    return rc;
}
