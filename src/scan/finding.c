/*
 * finding.c -- recording findings and filling their message templates.
 *
 * Every problem goes through sc_report, which copies the numbers, the path
 * and a formatted text into the result; nothing else writes findings.
 * sc_report_alt records a driver mark that stands only if the image shows
 * elsewhere that the 2012 driver wrote it: sc_settle turns it into its
 * alternative (the damage it resembles) otherwise, and drops findings whose
 * code a later pass set to 0 (a finding a mark found later explains).
 * scan_finding_message fills the {fields} of the catalogue's template
 * (problem.h): numbers in decimal, except type bytes and the magic, which
 * are shown in hexadecimal as the format reference writes them; a missing
 * path reads "(unknown)", a missing text reads "".  An unknown {field} or a
 * lone brace is copied as it is.  scan_finding_message_translated fills the
 * template the catalogue translates (po/), the same way: the fields and
 * numbers are not translated, only the words around them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

/* A code whose {block2} a live link names as an entry or extender it does not read as. */
static bool names_bad(const struct scan_finding *f)
{
    return f != NULL && (f->code == SCAN_PR_TREE_PTR_TYPE || f->code == SCAN_PR_FILE_DATA_TYPE ||
                         f->code == SCAN_PR_EXT_TYPE);
}

/*
 * Mark f's {block2}, and for a file's top that reads as no extender the
 * blocks after it, as many as its size needs and one extender maps: a
 * write lays a file's data out after its top, so the damage that made the
 * top unreadable left them unowned, and they are no leftovers a flipped
 * slot elsewhere came from (flipped.c; correct:593 state 1244, block 102
 * zeroed: /src27/Data.0102.jpg's slot moved onto 104, the data of
 * readme-0088.tar.gz, whose top 102 was).  A file of more blocks than one
 * extender maps grew a level-1 top when its write reached that block: its
 * first extender and blocks lie before that top, and only the new child
 * and the blocks past the first extender's after it (correct:830 state
 * 9937, the level-1 top 1927 of /photos 201285/DCIM118/zz0208, 188
 * blocks, zeroed: the 169 blocks after it took in the cut-off write of
 * /Data.0210.bin, which then named only held blocks and was lost).  The
 * run ends at a live entry: the write's blocks lie before it (correct:954
 * state 14651, the level-1 top 960 of .../zz0098.odt zeroed: its 41
 * blocks reached past the directory at 981 into the orphaned
 * /readme-0014's, whose blank ones then read as held, and the orphan as
 * a deleted file).
 */
static bool mark_named_bad(struct scan_result *r, const struct scan_finding *f)
{
    if (!names_bad(f))
        return true;
    if (f->code != SCAN_PR_TREE_PTR_TYPE)
        r->map_lost = true;
    if (!sc_cellbits_set(r, &r->named_bad, f->block2))
        return false;
    const struct scan_entry *x = f->code == SCAN_PR_FILE_DATA_TYPE ? sc_entry(r, f->entry) : NULL;
    uint64_t n = x != NULL ? x->blocks_needed : 0;
    if (n > r->g.extmax)
        n = n - r->g.extmax + 1; /* a grown file's first blocks lie before its top */
    if (n > r->g.extmax)
        n = r->g.extmax;
    for (uint64_t i = 1; i <= n && f->block2 < r->nblocks && i < r->nblocks - f->block2; i++) {
        uint8_t cls = r->map[f->block2 + i].cls;
        if (x != NULL && (cls == SCAN_BLK_DIR || cls == SCAN_BLK_FILE))
            break;
        if (!sc_cellbits_set(r, &r->named_bad, f->block2 + i))
            return false;
    }
    return true;
}

bool sc_named_bad(const struct scan_result *r, uint64_t blk)
{
    return sc_cellbits_get(&r->named_bad, blk);
}

bool sc_named_blank(struct scan_result *r, uint64_t blk)
{
    if (!sc_named_bad(r, blk))
        return false;
    const uint8_t *w = sc_window(r, blk);
    if (w == NULL)
        return false;
    for (uint32_t i = 0; i < r->g.blocksize; i++)
        if (w[i] != 0)
            return false;
    return true;
}

/* Append a finding; path and text are taken over (freed on failure). */
static bool append(struct scan_result *r, const struct scan_finding *f, char *path, char *text,
                   const struct scan_finding *alt)
{
    if (r->nfindings == r->findings_cap) {
        size_t ncap = r->findings_cap ? r->findings_cap * 2 : 32;
        struct scan_finding *nf = realloc(r->findings, ncap * sizeof(*nf));
        if (nf == NULL)
            goto out_oom;
        r->findings = nf;
        struct scan_finding *na = realloc(r->alt, ncap * sizeof(*na));
        if (na == NULL)
            goto out_oom;
        r->alt = na;
        r->findings_cap = ncap;
    }
    if (!mark_named_bad(r, f) || !mark_named_bad(r, alt))
        goto out_oom;
    if (alt != NULL)
        r->alt[r->nfindings] = *alt;
    else
        memset(&r->alt[r->nfindings], 0, sizeof(r->alt[0]));
    struct scan_finding *x = &r->findings[r->nfindings++];
    *x = *f;
    x->path = path;
    x->text = text;
    return true;

out_oom:
    free(path);
    free(text);
    if (alt != NULL) {
        free(alt->path);
        free(alt->text);
    }
    return sc_oom(r);
}

static bool dup_str(struct scan_result *r, const char *s, char **out)
{
    *out = NULL;
    if (s != NULL && (*out = strdup(s)) == NULL)
        return sc_oom(r);
    return true;
}

bool sc_report(struct scan_result *r, const struct scan_finding *f, const char *path,
               const char *fmt, ...)
{
    char *p = NULL, *t = NULL;
    if (!dup_str(r, path, &p))
        return false;
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&t, fmt, ap);
        va_end(ap);
        if (n < 0) {
            free(p);
            return sc_oom(r);
        }
    }
    return append(r, f, p, t, NULL);
}

bool sc_report_alt(struct scan_result *r, const struct scan_finding *f, const char *path,
                   const char *text, const struct scan_finding *alt, const char *alt_path,
                   const char *alt_text)
{
    char *p = NULL, *t = NULL, *ap = NULL, *at = NULL;
    if (!dup_str(r, path, &p))
        return false;
    if (!dup_str(r, text, &t) || !dup_str(r, alt_path, &ap) || !dup_str(r, alt_text, &at)) {
        free(p);
        free(t);
        free(ap);
        return false;
    }
    struct scan_finding a = *alt;
    a.path = ap;
    a.text = at;
    return append(r, f, p, t, &a);
}

void sc_settle(struct scan_result *r, bool driver)
{
    size_t out = 0;
    for (size_t i = 0; i < r->nfindings; i++) {
        struct scan_finding *x = &r->findings[i];
        struct scan_finding *a = &r->alt[i];
        if (a->code != 0 && !driver) {
            free(x->path);
            free(x->text);
            *x = *a;
            if (a->code == SC_ALT_DROP)
                x->code = 0;
        } else {
            free(a->path);
            free(a->text);
        }
        if (x->code == 0) {
            free(x->path);
            free(x->text);
            continue;
        }
        r->findings[out++] = *x;
    }
    r->nfindings = out;
    if (r->alt != NULL)
        memset(r->alt, 0, r->findings_cap * sizeof(*r->alt));
}

size_t sc_count_code(const struct scan_result *r, uint32_t code)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nfindings; i++)
        n += r->findings[i].code == code;
    return n;
}

void sc_findings_free(struct scan_result *r)
{
    for (size_t i = 0; i < r->nfindings; i++) {
        free(r->findings[i].path);
        free(r->findings[i].text);
        if (r->alt != NULL) {
            free(r->alt[i].path);
            free(r->alt[i].text);
        }
    }
    free(r->findings);
    free(r->alt);
    sc_cellbits_free(&r->named_bad);
    r->findings = NULL;
    r->alt = NULL;
    r->nfindings = r->findings_cap = 0;
}

/* Codes whose {value} is a type byte (or the magic), shown in hexadecimal. */
static bool value_is_hex(uint32_t code)
{
    switch (code) {
    case SCAN_PR_SB_BAD_MAGIC:
    case SCAN_PR_SB_BAD_TYPE:
    case SCAN_PR_SB_ROOT_NOT_DIR:
    case SCAN_PR_TREE_PTR_TYPE:
    case SCAN_PR_FILE_DATA_TYPE:
    case SCAN_PR_FILE_DATA_TYPE_FLIPPED:
    case SCAN_PR_EXT_TYPE:
    case SCAN_PR_FREE_CHAIN_TYPE:
    case SCAN_PR_FREE_PTR_ENTRY:
        return true;
    default:
        return false;
    }
}

struct sbuf {
    char *p;    /* text so far, NUL-terminated */
    size_t n;   /* bytes used */
    size_t cap; /* allocated */
    bool oom;   /* an allocation failed */
};

static void sb_add(struct sbuf *s, const char *x, size_t len)
{
    if (s->oom)
        return;
    if (s->n + len + 1 > s->cap) {
        size_t ncap = s->cap ? s->cap : 128;
        while (s->n + len + 1 > ncap)
            ncap *= 2;
        char *np = realloc(s->p, ncap);
        if (np == NULL) {
            s->oom = true;
            return;
        }
        s->p = np;
        s->cap = ncap;
    }
    memcpy(s->p + s->n, x, len);
    s->n += len;
    s->p[s->n] = '\0';
}

static void sb_num(struct sbuf *s, uint64_t v, bool hex, uint32_t code)
{
    char tmp[32];
    if (hex && code == SCAN_PR_SB_BAD_MAGIC)
        snprintf(tmp, sizeof(tmp), "0x%08" PRIx64, v);
    else if (hex)
        snprintf(tmp, sizeof(tmp), "0x%02" PRIx64, v);
    else
        snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
    sb_add(s, tmp, strlen(tmp));
}

static char *fill(const struct scan_finding *f, bool translated)
{
    struct sbuf s = {0};
    const struct scan_problem_info *info = scan_problem_lookup(f->code);
    if (info == NULL) {
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "unknown finding 0x%06" PRIx32, f->code);
        sb_add(&s, tmp, strlen(tmp));
        goto out;
    }
    const char *m = translated ? scan_problem_message_text(info) : info->message;
    while (*m != '\0') {
        const char *open = strchr(m, '{');
        const char *close = open ? strchr(open, '}') : NULL;
        if (open == NULL || close == NULL) {
            sb_add(&s, m, strlen(m));
            break;
        }
        sb_add(&s, m, (size_t)(open - m));
        size_t klen = (size_t)(close - open - 1);
        const char *k = open + 1;
#define KEY(name) (klen == sizeof(name) - 1 && memcmp(k, name, klen) == 0)
        if (KEY("block"))
            sb_num(&s, f->block, false, f->code);
        else if (KEY("block2"))
            sb_num(&s, f->block2, false, f->code);
        else if (KEY("value"))
            sb_num(&s, f->value, value_is_hex(f->code), f->code);
        else if (KEY("value2"))
            sb_num(&s, f->value2, false, f->code);
        else if (KEY("count"))
            sb_num(&s, f->count, false, f->code);
        else if (KEY("count2"))
            sb_num(&s, f->count2, false, f->code);
        else if (KEY("path"))
            sb_add(&s, f->path ? f->path : "(unknown)", strlen(f->path ? f->path : "(unknown)"));
        else if (KEY("text"))
            sb_add(&s, f->text ? f->text : "", strlen(f->text ? f->text : ""));
        else
            sb_add(&s, open, klen + 2);
#undef KEY
        m = close + 1;
    }
out:
    if (s.oom) {
        free(s.p);
        return NULL;
    }
    if (s.p == NULL)
        return strdup("");
    return s.p;
}

char *scan_finding_message(const struct scan_finding *f)
{
    return fill(f, false);
}

char *scan_finding_message_translated(const struct scan_finding *f)
{
    return fill(f, true);
}
