/*
 * fuzz_csv.c -- what the scanner's targets share (fuzz.h): a strict CSV
 * reader, a check of text printed for people, a temporary folder, and the
 * geometry an input gives the scan.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* ---- CSV ------------------------------------------------------------------ */

struct field_buf {
    char *p;
    size_t n, cap;
};

static void fb_add(struct field_buf *b, char c)
{
    if (b->n + 2 > b->cap) {
        b->cap = b->cap ? 2 * b->cap : 32;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL)
            abort();
    }
    b->p[b->n++] = c;
    b->p[b->n] = '\0';
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    *cap = *cap ? 2 * *cap : 16;
    if (*cap < need)
        *cap = need;
    p = realloc(p, *cap * size);
    if (p == NULL)
        abort();
    return p;
}

void fuzz_csv_read(const char *what, const char *t, size_t n, struct fuzz_csv *out)
{
    memset(out, 0, sizeof(*out));
    size_t rcap = 0, i = 0;
    while (i < n) {
        char **row = NULL;
        size_t nf = 0, fcap = 0;
        for (;;) {
            struct field_buf f = {0};
            fb_add(&f, 'x');
            f.n = 0;
            f.p[0] = '\0';
            if (i < n && t[i] == '"') {
                i++;
                for (;;) {
                    FUZZ_CHECK(i < n, "%s: row %zu: a quoted field does not end", what,
                               out->nrows + 1);
                    if (t[i] == '"') {
                        if (i + 1 < n && t[i + 1] == '"') {
                            fb_add(&f, '"');
                            i += 2;
                            continue;
                        }
                        i++;
                        break;
                    }
                    fb_add(&f, t[i++]);
                }
                FUZZ_CHECK(i < n && (t[i] == ',' || t[i] == '\n'),
                           "%s: row %zu: text after a quoted field", what, out->nrows + 1);
            } else {
                while (i < n && t[i] != ',' && t[i] != '\n') {
                    FUZZ_CHECK(t[i] != '"' && t[i] != '\r',
                               "%s: row %zu: a quote or CR in an unquoted field", what,
                               out->nrows + 1);
                    fb_add(&f, t[i++]);
                }
                FUZZ_CHECK(i < n, "%s: row %zu does not end in a line feed", what,
                           out->nrows + 1);
            }
            row = grow(row, &fcap, nf + 1, sizeof(*row));
            row[nf++] = f.p;
            if (t[i++] == '\n')
                break;
        }
        if (out->nrows == 0)
            out->ncols = nf;
        FUZZ_CHECK(nf == out->ncols, "%s: row %zu has %zu fields, the header %zu", what,
                   out->nrows + 1, nf, out->ncols);
        out->rows = grow(out->rows, &rcap, out->nrows + 1, sizeof(*out->rows));
        out->rows[out->nrows++] = row;
    }
}

void fuzz_csv_free(struct fuzz_csv *c)
{
    for (size_t i = 0; i < c->nrows; i++) {
        for (size_t j = 0; j < c->ncols; j++)
            free(c->rows[i][j]);
        free(c->rows[i]);
    }
    free(c->rows);
    memset(c, 0, sizeof(*c));
}

/* ---- text ----------------------------------------------------------------- */

void fuzz_check_printable(const char *what, const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                                 : (c & 0xf8) == 0xf0 ? 4 : 0;
        FUZZ_CHECK(len != 0 && i + len <= n, "%s: byte %zu (0x%02x) starts no UTF-8 character",
                   what, i, c);
        uint32_t cp = len == 1 ? c : c & (0x7f >> len);
        for (size_t k = 1; k < len; k++) {
            FUZZ_CHECK((p[i + k] & 0xc0) == 0x80, "%s: byte %zu: a broken UTF-8 sequence", what,
                       i + k);
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        FUZZ_CHECK(cp >= least[len] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff),
                   "%s: byte %zu: an overlong or invalid character U+%04x", what, i, cp);
        FUZZ_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7f && (cp < 0x80 || cp > 0x9f)) ,
                   "%s: byte %zu: control character U+%04x", what, i, cp);
        FUZZ_CHECK(!(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069),
                   "%s: byte %zu: bidi control U+%04x", what, i, cp);
        i += len;
    }
}

/* ---- folders -------------------------------------------------------------- */

static char root[256];

void fuzz_rm_inside(int fd)
{
    int d = dup(fd);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    if (dir == NULL)
        fuzz_fail("cannot list a folder to remove it");
    rewinddir(dir); /* the descriptor's offset is shared with fd's */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        names = grow(names, &cap, n + 1, sizeof(*names));
        names[n++] = strdup(de->d_name);
    }
    closedir(dir);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
            int sub = openat(fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                fuzz_rm_inside(sub);
                close(sub);
            }
            unlinkat(fd, names[i], AT_REMOVEDIR);
        } else {
            unlinkat(fd, names[i], 0);
        }
        free(names[i]);
    }
    free(names);
}

static void rm_root(void)
{
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fuzz_rm_inside(fd);
        close(fd);
    }
    rmdir(root);
}

const char *fuzz_tmp_root(const char *name)
{
    if (root[0] != '\0')
        return root;
    struct stat st;
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
                   ? "/dev/shm"
                   : "/tmp";
    snprintf(root, sizeof(root), "%s/%s.XXXXXX", base, name);
    if (mkdtemp(root) == NULL) {
        perror(root);
        abort();
    }
    atexit(rm_root);
    return root;
}

/* ---- the geometry given to the scan ---------------------------------------- */

void fuzz_given_geometry(const uint8_t *data, size_t size, uint32_t *blocksize,
                         unsigned *addrlen)
{
    *blocksize = 0;
    *addrlen = 0;
    if (size == 0 || !(data[size - 1] & 0x80))
        return;
    unsigned al = (data[size - 1] >> 2) & 15;
    *blocksize = 512u << (data[size - 1] & 3);
    *addrlen = al <= 8 ? al : 0;
}
