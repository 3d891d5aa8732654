/*
 * wear.c -- the wear report: write counters summed up from a scan (wear.h).
 *
 * Everything comes from the scan's block map (one cell per block: class,
 * flags, counter, owner) and its findings; the image is not read again.
 * A cell counts when it carries a header (SCAN_BF_METADATA) and its class
 * has a kind (wear_kind_of).
 *
 * Distribution: counters are 16-bit, so each kind's distribution is a
 * 65536-bucket count, from which min, max, median (the mean of the two
 * middle values for an even count) and the nearest-rank percentiles
 * (rank ceil(p * n / 100)) are read exactly, without sorting.
 *
 * Flags (SPEC-§9.6, §10), each a bound the disk's own rules give:
 *  - WRAPPED_SUPER: every allocation rewrites the superblock (SPEC-§8, in
 *    the driver and in the correct writer), and the formatter wrote it at
 *    least once, so its counter has seen at least 1 + the blocks in use
 *    that came from the free list (live directories but the root, files,
 *    extenders, data).  A lower counter wrapped; the fewest wraps that
 *    explain it are ceil((bound - counter) / 65536).  Orphaned blocks are
 *    left out of the bound: an old format may have left them.
 *  - WRAPPED_CHAIN: the scan's TORN_CHAIN_COUNTER findings (counters.c):
 *    a chain block's counter below its slot changes is wrapped or torn.
 *  - RESTARTED_CHAIN: a chain block that is not at one of the formatter's
 *    chain places was made from a freed block, with counter 0 (SPEC-§8).
 *    The formatter's places are 2, 2 + s, 2 + 2s, ... with s = chainmax
 *    (this project's formatter leaves the last slot empty) or chainmax + 1
 *    when the scan saw the 2012 formatter's marks (type 0x80 chain blocks,
 *    filled last slots, their leaks).
 *  - RESTARTED_REUSED: a metadata block at one of those places that is no
 *    chain block any more: the formatter's chain block there was popped
 *    empty and handed out (SPEC-§8 Allocate), and its new owner's counter
 *    began at 0.  Its earlier life had at least 1 + its pops writes.
 *  - NEVER_WRITTEN: the scan's ENTRY_NEVER_WRITTEN findings.
 *
 * Spread: the device in WEAR_REGIONS equal parts; for each, the blocks in
 * use, free and other, and the counters in it.  spread_cv is the
 * coefficient of variation of the parts' shares in use: 0 when every part
 * is used alike, sqrt(n - 1) when one part holds everything.  The free
 * list hands blocks out in its order, from the head (SPEC-§8), so a
 * formatter's ascending list fills the device from the front.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "wear.h"

/* ---- names ------------------------------------------------------------------ */

bool wear_kind_of(enum scan_class cls, enum wear_kind *out)
{
    enum wear_kind k;
    switch (cls) {
    case SCAN_BLK_SUPER:
        k = WEAR_KIND_SUPER;
        break;
    case SCAN_BLK_DIR:
        k = WEAR_KIND_DIR;
        break;
    case SCAN_BLK_FILE:
        k = WEAR_KIND_FILE;
        break;
    case SCAN_BLK_EXTENDER:
        k = WEAR_KIND_EXTENDER;
        break;
    case SCAN_BLK_CHAIN:
        k = WEAR_KIND_CHAIN;
        break;
    case SCAN_BLK_DELETED:
    case SCAN_BLK_ORPHAN:
    case SCAN_BLK_ORPHAN_EXT:
    case SCAN_BLK_LEAKED:
        k = WEAR_KIND_FREED;
        break;
    case SCAN_BLK_UNKNOWN:
    case SCAN_BLK_DATA:
    case SCAN_BLK_FREE:
    case SCAN_BLK_UNREADABLE:
    case SCAN_BLK_BEYOND:
    case SCAN_BLK_CLASSES:
    default:
        return false;
    }
    if (out != NULL)
        *out = k;
    return true;
}

const char *wear_kind_name(enum wear_kind k)
{
    static const char *const names[WEAR_KINDS] = {
        "superblock", "directories", "files", "extenders", "chain blocks", "freed",
    };
    return (unsigned)k < WEAR_KINDS ? names[k] : "invalid";
}

const char *wear_kind_key(enum wear_kind k)
{
    static const char *const keys[WEAR_KINDS] = {
        "super", "dir", "file", "extender", "chain", "freed",
    };
    return (unsigned)k < WEAR_KINDS ? keys[k] : "invalid";
}

const char *wear_reason_key(enum wear_reason r)
{
    static const char *const keys[WEAR_REASONS] = {
        "wrapped-super", "wrapped-chain", "restarted-chain", "restarted-reused", "never-written",
    };
    return (unsigned)r < WEAR_REASONS ? keys[r] : "invalid";
}

const char *wear_reason_text(enum wear_reason r)
{
    static const char *const texts[WEAR_REASONS] = {
        "wrapped: below the allocations the superblock counted",
        "wrapped or torn: below the chain block's slot changes",
        "restarted: a chain block made from a freed block",
        "restarted: reuses a chain block of the formatter",
        "never written back since its creation",
    };
    return (unsigned)r < WEAR_REASONS ? texts[r] : "invalid";
}

uint32_t wear_hist_low(unsigned i)
{
    return i == 0 ? 0 : (uint32_t)1 << (i - 1);
}

static unsigned hist_bucket(uint16_t w)
{
    unsigned b = 0;
    while (w != 0) {
        b++;
        w >>= 1;
    }
    return b;
}

/* ---- escaping ---------------------------------------------------------------- */

/* Control, format and separator characters a terminal must not see raw. */
static bool hidden_char(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0xad ||
           (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

char *wear_escape(const char *s)
{
    if (s == NULL)
        s = "";
    size_t n = strlen(s);
    if (n > (SIZE_MAX - 1) / 4)
        return NULL;
    char *out = malloc(4 * n + 1);
    if (out == NULL)
        return NULL;
    const uint8_t *p = (const uint8_t *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = lanyfs_utf8_decode(p + i, n - i, &cp);
        if (len == 0 || hidden_char(cp)) {
            size_t bad = len == 0 ? 1 : len;
            for (size_t j = 0; j < bad; j++) {
                static const char hex[] = "0123456789abcdef";
                out[o++] = '\\';
                out[o++] = 'x';
                out[o++] = hex[p[i + j] >> 4];
                out[o++] = hex[p[i + j] & 15];
            }
            i += bad;
        } else if (cp == '\\') {
            out[o++] = '\\';
            out[o++] = '\\';
            i++;
        } else {
            memcpy(out + o, p + i, len);
            o += len;
            i += len;
        }
    }
    out[o] = '\0';
    return out;
}

char *wear_owner_text(const struct wear_report *w, enum scan_class cls, uint32_t owner)
{
    const struct scan_entry *e = owner != 0 ? scan_entry_by_id(w->scan, owner) : NULL;
    const char *fixed = NULL;
    switch (cls) {
    case SCAN_BLK_SUPER:
        fixed = "the superblock";
        break;
    case SCAN_BLK_CHAIN:
        fixed = "the free list";
        break;
    case SCAN_BLK_LEAKED:
        fixed = e == NULL ? "leaked" : NULL;
        break;
    case SCAN_BLK_ORPHAN_EXT:
        fixed = e == NULL ? "an orphan extender" : NULL;
        break;
    default:
        fixed = e == NULL ? "nobody" : NULL;
        break;
    }
    if (fixed != NULL)
        return strdup(fixed);
    char *p = wear_escape(e->path != NULL ? e->path : "?");
    if (p == NULL || e->state == SCAN_ENTRY_LIVE)
        return p;
    const char *note = e->state == SCAN_ENTRY_DELETED ? " (deleted)" : " (orphaned)";
    size_t len = strlen(p) + strlen(note) + 1;
    char *q = malloc(len);
    if (q != NULL)
        snprintf(q, len, "%s%s", p, note);
    free(p);
    return q;
}

/* ---- the distribution ---------------------------------------------------------- */

/* The counter at 1-based rank k of a 65536-bucket count. */
static uint16_t at_rank(const uint64_t *h, uint64_t k)
{
    uint64_t seen = 0;
    for (uint32_t v = 0; v < 65536; v++) {
        seen += h[v];
        if (seen >= k)
            return (uint16_t)v;
    }
    return UINT16_MAX;
}

static void stats_from(const uint64_t *h, struct wear_stats *s)
{
    memset(s, 0, sizeof(*s));
    bool any = false;
    for (uint32_t v = 0; v < 65536; v++) {
        if (h[v] == 0)
            continue;
        if (!any)
            s->min = (uint16_t)v;
        any = true;
        s->max = (uint16_t)v;
        s->blocks += h[v];
        s->total += h[v] * v;
    }
    if (s->blocks == 0)
        return;
    uint64_t n = s->blocks;
    s->mean = (double)s->total / (double)n;
    if (n % 2 == 1)
        s->median = at_rank(h, n / 2 + 1);
    else
        s->median = ((double)at_rank(h, n / 2) + (double)at_rank(h, n / 2 + 1)) / 2.0;
    s->p90 = at_rank(h, n / 10 * 9 + (n % 10 * 9 + 9) / 10);
    s->p99 = at_rank(h, n / 100 * 99 + (n % 100 * 99 + 99) / 100);
}

/* ---- the hottest blocks: a min-heap of the N hottest ------------------------------ */

static bool hotter(const struct wear_hot *a, const struct wear_hot *b)
{
    return a->wrcnt != b->wrcnt ? a->wrcnt > b->wrcnt : a->block < b->block;
}

static void heap_down(struct wear_hot *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && hotter(&h[m], &h[l]))
            m = l;
        if (r < n && hotter(&h[m], &h[r]))
            m = r;
        if (m == i)
            return;
        struct wear_hot t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_up(struct wear_hot *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!hotter(&h[p], &h[i]))
            return;
        struct wear_hot t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static void heap_offer(struct wear_report *w, size_t cap, const struct wear_hot *x)
{
    if (cap == 0)
        return;
    if (w->nhot < cap) {
        w->hot[w->nhot] = *x;
        heap_up(w->hot, w->nhot++);
    } else if (hotter(x, &w->hot[0])) {
        w->hot[0] = *x;
        heap_down(w->hot, w->nhot, 0);
    }
}

static int hot_cmp(const void *a, const void *b)
{
    const struct wear_hot *x = a, *y = b;
    return hotter(x, y) ? -1 : hotter(y, x) ? 1 : 0;
}

/* ---- flags ----------------------------------------------------------------------- */

static bool flag_add(struct wear_report *w, size_t *cap, const struct wear_flagged *f)
{
    if (w->nflagged == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        if (nc > SIZE_MAX / sizeof(*w->flagged))
            return false;
        struct wear_flagged *p = realloc(w->flagged, nc * sizeof(*p));
        if (p == NULL)
            return false;
        w->flagged = p;
        *cap = nc;
    }
    w->flagged[w->nflagged++] = *f;
    w->by_reason[f->reason]++;
    return true;
}

static int flag_cmp(const void *a, const void *b)
{
    const struct wear_flagged *x = a, *y = b;
    if (x->block != y->block)
        return x->block < y->block ? -1 : 1;
    return (int)x->reason - (int)y->reason;
}

/* The formatter's chain spacing this image shows (see the file header), 0 when unknown. */
static uint64_t chain_stride(const struct scan_result *r)
{
    const struct lanyfs_geom *g = scan_geom(r);
    if (g == NULL || g->chainmax < 2)
        return 0;
    const struct scan_finding *f;
    size_t nf = scan_findings(r, &f);
    for (size_t i = 0; i < nf; i++)
        if (f[i].code == SCAN_PR_MARK_FORMATTER_CHAIN_TYPE ||
            f[i].code == SCAN_PR_MARK_LAST_SLOT_FILLED || f[i].code == SCAN_PR_MARK_LAST_SLOT_LEAK)
            return (uint64_t)g->chainmax + 1;
    return g->chainmax;
}

static bool formatter_chain_place(uint64_t stride, uint64_t blk)
{
    return stride != 0 && blk >= 2 && (blk - 2) % stride == 0;
}

static struct wear_flagged flag_of(const struct scan_block *c, uint64_t blk, enum wear_reason why)
{
    enum wear_kind k = WEAR_KIND_FREED;
    wear_kind_of((enum scan_class)c->cls, &k);
    return (struct wear_flagged){.block = blk, .kind = k, .cls = (enum scan_class)c->cls,
                                 .wrcnt = c->wrcnt, .owner = c->owner, .reason = why};
}

/* The flags that come from the scan's findings. */
static bool flags_from_findings(struct wear_report *w, size_t *cap)
{
    const struct scan_finding *f;
    size_t nf = scan_findings(w->scan, &f);
    const struct scan_block *map = scan_blocks(w->scan);
    for (size_t i = 0; i < nf; i++) {
        enum wear_reason why;
        if (f[i].code == SCAN_PR_TORN_CHAIN_COUNTER)
            why = WEAR_WRAPPED_CHAIN;
        else if (f[i].code == SCAN_PR_ENTRY_NEVER_WRITTEN)
            why = WEAR_NEVER_WRITTEN;
        else
            continue;
        if (f[i].block >= w->blocks)
            continue;
        struct wear_flagged x = flag_of(&map[f[i].block], f[i].block, why);
        if (why == WEAR_WRAPPED_CHAIN) {
            x.bound = f[i].count;
            x.wraps = x.bound > x.wrcnt ? (x.bound - x.wrcnt + 65535) / 65536 : 0;
        }
        if (!flag_add(w, cap, &x))
            return false;
    }
    return true;
}

/* ---- building ---------------------------------------------------------------------- */

enum use { USE_USED, USE_FREE, USE_OTHER };

static enum use use_of(enum scan_class c)
{
    switch (c) {
    case SCAN_BLK_SUPER:
    case SCAN_BLK_DIR:
    case SCAN_BLK_FILE:
    case SCAN_BLK_EXTENDER:
    case SCAN_BLK_DATA:
        return USE_USED;
    case SCAN_BLK_CHAIN:
    case SCAN_BLK_FREE:
    case SCAN_BLK_DELETED:
        return USE_FREE;
    default:
        return USE_OTHER;
    }
}

static void regions_init(struct wear_report *w)
{
    uint64_t n = w->blocks;
    unsigned k = n < WEAR_REGIONS ? (unsigned)n : WEAR_REGIONS;
    w->nregions = k;
    if (k == 0)
        return;
    uint64_t q = n / k, rem = n % k;
    for (unsigned i = 0; i < k; i++) {
        uint64_t first = q * i + rem * i / k;
        uint64_t next = q * (i + 1) + rem * (i + 1) / k;
        w->region[i].first = first;
        w->region[i].count = next - first;
    }
}

static void spread(struct wear_report *w)
{
    if (w->nregions == 0 || w->used == 0)
        return;
    double share[WEAR_REGIONS], mean = 0, var = 0;
    for (unsigned i = 0; i < w->nregions; i++) {
        share[i] = w->region[i].count ? (double)w->region[i].used / (double)w->region[i].count : 0;
        mean += share[i];
    }
    mean /= w->nregions;
    for (unsigned i = 0; i < w->nregions; i++)
        var += (share[i] - mean) * (share[i] - mean);
    var /= w->nregions;
    w->spread_cv = mean > 0 ? sqrt(var) / mean : 0;
}

/* The superblock's wrap check; after the map pass (it needs the class counts). */
static bool super_wrap(struct wear_report *w, size_t *cap)
{
    const struct scan_block *map = scan_blocks(w->scan);
    if (w->blocks == 0 || scan_super(w->scan) == NULL || scan_geom_inferred(w->scan) ||
        !(map[0].flags & SCAN_BF_METADATA) || map[0].cls != SCAN_BLK_SUPER)
        return true;
    const uint64_t *bc = w->by_class;
    uint64_t allocated = bc[SCAN_BLK_DIR] - (bc[SCAN_BLK_DIR] > 0) + bc[SCAN_BLK_FILE] +
                         bc[SCAN_BLK_EXTENDER] + bc[SCAN_BLK_DATA];
    uint64_t bound = allocated + 1;
    if (bound <= map[0].wrcnt)
        return true;
    struct wear_flagged x = flag_of(&map[0], 0, WEAR_WRAPPED_SUPER);
    x.bound = bound;
    x.wraps = (bound - map[0].wrcnt + 65535) / 65536;
    return flag_add(w, cap, &x);
}

enum lanyfs_err wear_report_build(const struct scan_result *r, const struct wear_opts *opts,
                                  struct wear_report **out, struct lanyfs_error *err)
{
    *out = NULL;
    size_t top = opts != NULL && opts->top != 0 ? opts->top : WEAR_TOP_DEFAULT;
    if (top > WEAR_TOP_MAX)
        top = WEAR_TOP_MAX;
    struct wear_report *w = calloc(1, sizeof(*w));
    uint64_t *hist = calloc(65536, sizeof(*hist));
    uint64_t *khist = calloc(65536 * (size_t)WEAR_KINDS, sizeof(*khist));
    size_t fcap = 0;
    if (w == NULL || hist == NULL || khist == NULL)
        goto out_nomem;
    w->scan = r;
    w->blocks = scan_block_count(r);
    const struct lanyfs_geom *g = scan_geom(r);
    w->blocksize = g != NULL ? g->blocksize : 0;
    uint64_t ntop = top < w->blocks ? top : w->blocks;
    if (ntop != 0) {
        w->hot = malloc((size_t)ntop * sizeof(*w->hot));
        if (w->hot == NULL)
            goto out_nomem;
    }
    w->chain_stride = chain_stride(r);
    uint64_t stride = w->chain_stride;
    regions_init(w);

    const struct scan_block *map = scan_blocks(r);
    unsigned reg = 0;
    for (uint64_t b = 0; b < w->blocks; b++) {
        const struct scan_block *c = &map[b];
        enum scan_class cls = c->cls < SCAN_BLK_CLASSES ? (enum scan_class)c->cls
                                                        : SCAN_BLK_UNKNOWN;
        w->by_class[cls]++;
        while (reg + 1 < w->nregions && b >= w->region[reg + 1].first)
            reg++;
        struct wear_region *rg = &w->region[reg];
        switch (use_of(cls)) {
        case USE_USED:
            rg->used++;
            w->used++;
            if (b > 0 && w->used_lowest == 0)
                w->used_lowest = b;
            w->used_highest = b;
            break;
        case USE_FREE:
            rg->free++;
            break;
        case USE_OTHER:
            rg->other++;
            break;
        }
        enum wear_kind k;
        if (!(c->flags & SCAN_BF_METADATA) || !wear_kind_of(cls, &k))
            continue;
        rg->metadata++;
        rg->writes += c->wrcnt;
        if (c->wrcnt > rg->max)
            rg->max = c->wrcnt;
        hist[c->wrcnt]++;
        khist[(size_t)k * 65536 + c->wrcnt]++;
        w->hist[hist_bucket(c->wrcnt)]++;
        heap_offer(w, (size_t)ntop,
                   &(struct wear_hot){.block = b, .kind = k, .cls = cls, .wrcnt = c->wrcnt,
                                      .owner = c->owner});
        if (stride == 0)
            continue;
        bool place = formatter_chain_place(stride, b);
        if (k == WEAR_KIND_CHAIN && !place) {
            struct wear_flagged x = flag_of(c, b, WEAR_RESTARTED_CHAIN);
            if (!flag_add(w, &fcap, &x))
                goto out_nomem;
        } else if (k != WEAR_KIND_CHAIN && k != WEAR_KIND_SUPER && place && cls != SCAN_BLK_LEAKED) {
            struct wear_flagged x = flag_of(c, b, WEAR_RESTARTED_REUSED);
            uint64_t listed = b + 1 < w->blocks ? w->blocks - b - 1 : 0;
            uint64_t pops = g->chainmax - 1;
            x.bound = 1 + (listed < pops ? listed : pops);
            if (!flag_add(w, &fcap, &x))
                goto out_nomem;
        }
    }
    if (!super_wrap(w, &fcap) || !flags_from_findings(w, &fcap))
        goto out_nomem;
    if (w->nflagged > 1)
        qsort(w->flagged, w->nflagged, sizeof(*w->flagged), flag_cmp);
    if (w->nhot > 1)
        qsort(w->hot, w->nhot, sizeof(*w->hot), hot_cmp);

    for (unsigned k = 0; k < WEAR_KINDS; k++)
        stats_from(khist + (size_t)k * 65536, &w->kind[k]);
    stats_from(hist, &w->all);
    w->metadata_blocks = w->all.blocks;
    w->total_writes = w->all.total;
    w->data_blocks = w->by_class[SCAN_BLK_DATA];
    spread(w);
    free(hist);
    free(khist);
    *out = w;
    return LANYFS_OK;

out_nomem:
    free(hist);
    free(khist);
    wear_report_free(w);
    return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory for the wear report");
}

void wear_report_free(struct wear_report *w)
{
    if (w == NULL)
        return;
    free(w->hot);
    free(w->flagged);
    free(w);
}
