/*
 * infer.c -- geometry, root and free-list head from the blocks themselves.
 *
 * When block 0 is unusable (bad magic, block size or address length), the
 * scan reads the start of the image (at most INFER_BYTES; sectors that
 * fail read as zeros) and asks, for
 * every block size 512..4096, how well the blocks hold together:
 *  - entry headers that probe well (probe.c: type, a NUL-terminated name,
 *    valid timestamps, links in range, a zero tail) score, and score again
 *    for every link that lands on another entry (a directory's subtree and
 *    siblings) or, for a file's data pointer, on an extender;
 *  - chain headers score for a next pointer that lands on a chain header;
 *  - the formatter's layout (root "LANYFSROOT" at 1, chain block at 2)
 *    scores, and the superblock's own value breaks a tie.
 * A block size whose block 1 holds the formatter's root directory wins
 * over the scores, the root created last when several do: a stick
 * formatted again keeps the earlier format's tree beside the new one.
 * At the winning block size, every address length 1..8 is scored over the
 * chain blocks and over the extenders files point to: slots in range and
 * distinct score, ascending runs like the formatter's score double, slots
 * out of range, repeated values and zeros between filled slots (what a
 * wrong address length makes of the right one's bytes) cost.
 * Then the root directory (the lowest directory named LANYFSROOT, else a
 * directory no entry links to with the most descendants, sc_find_root; with
 * a superblock to go by, not a LANYFSROOT created before it) and
 * the free-list head (a chain block no chain block links to: the
 * formatter's untouched list at block 2, else one written since it was
 * made before one that was not, then the longest chain) are found, and
 * SB_GEOMETRY_INFERRED names which values were inferred.  The device is
 * taken to be the whole image.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

#define INFER_BYTES ((size_t)32 << 20) /* image bytes read for the inference */
#define INFER_ADDR_BLOCKS 2048          /* chain and extender blocks scored per length */
#define ROOT_WALK_MAX 100000            /* nodes counted per root candidate */
#define FORMATTER_CHAIN 2               /* the formatter's first chain block (SPEC-9.16) */

struct sample {
    const uint8_t *p; /* the image's first bytes */
    size_t len;       /* bytes in p */
};

static const uint8_t *blk_at(const struct sample *s, unsigned bits, uint64_t i)
{
    if (i > (s->len >> bits) || (i + 1) > (s->len >> bits))
        return NULL;
    return s->p + ((size_t)i << bits);
}

static bool chain_header(const uint8_t *b)
{
    return (b[0] == LANYFS_TYPE_CHAIN || b[0] == LANYFS_TYPE_EXT) &&
           sc_zero_from(b, LANYFS_CH_RES4, LANYFS_CH_NEXT);
}

/*
 * The formatter's root directory at block 1 of this block size, and when it
 * was created (seconds and nanoseconds; an invalid time counts as the
 * oldest).
 */
static bool formatter_root(const struct sample *s, unsigned bits, uint64_t n, int64_t *sec,
                           uint32_t *nsec)
{
    struct lanyfs_geom g;
    struct lanyfs_entry e;
    const uint8_t *b = blk_at(s, bits, 1);
    if (b == NULL || lanyfs_geom_init(&g, bits, 8, n, NULL) != LANYFS_OK ||
        !sc_probe_entry(&g, n, b, &e) || !lanyfs_entry_is_formatter_root(&e))
        return false;
    time_t t;
    if (lanyfs_ts_is_valid(&e.created) && !lanyfs_ts_is_unset(&e.created) &&
        lanyfs_ts_to_time(&e.created, &t)) {
        *sec = (int64_t)t;
        *nsec = e.created.nsec;
    } else {
        *sec = INT64_MIN;
        *nsec = 0;
    }
    return true;
}

static uint64_t score_bits(const struct sample *s, unsigned bits, uint64_t n)
{
    struct lanyfs_geom g;
    if (lanyfs_geom_init(&g, bits, 8, n, NULL) != LANYFS_OK)
        return 0;
    uint64_t k = s->len >> bits;
    if (k > n)
        k = n;
    uint64_t score = 0;
    struct lanyfs_entry e, t;
    for (uint64_t i = 1; i < k; i++) {
        const uint8_t *b = blk_at(s, bits, i);
        if (sc_probe_entry(&g, n, b, &e)) {
            score += 2;
            if (i == 1 && lanyfs_entry_is_formatter_root(&e))
                score += 5;
            uint64_t links[3] = {e.left, e.right, e.subtree};
            for (int j = 0; j < 3; j++) {
                const uint8_t *tb = links[j] ? blk_at(s, bits, links[j]) : NULL;
                if (tb == NULL)
                    continue;
                if (j == 2 && lanyfs_entry_is_file(&e))
                    score += tb[0] == LANYFS_TYPE_EXT ? 3 : 0;
                else
                    score += sc_probe_entry(&g, n, tb, &t) ? 3 : 0;
            }
        } else if (chain_header(b)) {
            uint64_t next = lanyfs_get64(b + LANYFS_CH_NEXT);
            const uint8_t *tb = next && next < n ? blk_at(s, bits, next) : NULL;
            if (tb != NULL && chain_header(tb))
                score += 3;
            if (i == FORMATTER_CHAIN)
                score += 1;
        }
    }
    return score;
}

int sc_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The slot array's evidence for an address length (see the header). */
static int64_t score_slots(const uint8_t *slots, size_t bytes, unsigned addrlen, uint64_t n,
                           uint64_t *tmp)
{
    size_t cnt = bytes / addrlen, nz = 0;
    int64_t score = 0;
    uint64_t prev = 0;
    bool seen_nonzero = false, zero_run = false;
    for (size_t i = 0; i < cnt; i++) {
        uint64_t v = lanyfs_get_addr(slots + i * addrlen, addrlen);
        if (v == 0) {
            if (seen_nonzero)
                zero_run = true;
            prev = 0;
            continue;
        }
        if (zero_run)
            score -= 1; /* zeros between filled slots */
        zero_run = false;
        seen_nonzero = true;
        if (v >= n) {
            score -= 4;
        } else {
            score += 1;
            tmp[nz++] = v;
        }
        if (prev != 0 && v == prev + 1)
            score += 2;
        prev = v;
    }
    if (nz > 1) {
        qsort(tmp, nz, sizeof(*tmp), sc_cmp_u64);
        for (size_t i = 1; i < nz; i++)
            if (tmp[i] == tmp[i - 1])
                score -= 3; /* block numbers in one list are distinct */
    }
    return score;
}

static unsigned infer_addrlen(const struct sample *s, unsigned bits, uint64_t n, bool *decided)
{
    uint32_t bs = 1u << bits;
    uint64_t k = s->len >> bits;
    if (k > n)
        k = n;
    int64_t best = INT64_MIN;
    unsigned best_a = 0;
    uint64_t *tmp = malloc((size_t)bs * sizeof(*tmp));
    *decided = false;
    if (tmp == NULL)
        return 0;
    for (unsigned a = 1; a <= 8; a++) {
        int64_t score = 0;
        unsigned used = 0;
        for (uint64_t i = 1; i < k && used < INFER_ADDR_BLOCKS; i++) {
            const uint8_t *b = blk_at(s, bits, i);
            if (!chain_header(b))
                continue;
            uint64_t next = lanyfs_get64(b + LANYFS_CH_NEXT);
            if (next >= n)
                continue;
            score += score_slots(b + LANYFS_CH_SLOTS, bs - LANYFS_CH_SLOTS, a, n, tmp);
            used++;
        }
        /* Extenders that file entries point to. */
        struct lanyfs_geom g;
        lanyfs_geom_init(&g, bits, a, n, NULL);
        struct lanyfs_entry e;
        for (uint64_t i = 1; i < k && used < INFER_ADDR_BLOCKS; i++) {
            const uint8_t *b = blk_at(s, bits, i);
            if (b[0] != LANYFS_TYPE_FILE || !sc_probe_entry(&g, n, b, &e) || e.subtree == 0)
                continue;
            const uint8_t *x = blk_at(s, bits, e.subtree);
            if (x == NULL || x[0] != LANYFS_TYPE_EXT || x[LANYFS_EXT_LEVEL] > SC_LEVEL_MAX)
                continue;
            score += score_slots(x + LANYFS_EXT_SLOTS, bs - LANYFS_EXT_SLOTS, a, n, tmp);
            used++;
        }
        if (score > best) {
            best = score;
            best_a = a;
        }
        if (score > 0)
            *decided = true;
    }
    free(tmp);
    return best_a;
}

/* The lowest block of the sample holding the formatter's root directory at
 * block size 1 << bits, below n and with its links below n; 0 when none
 * does. */
static uint64_t sample_root(const struct sample *s, unsigned bits, uint64_t n)
{
    struct lanyfs_geom g;
    struct lanyfs_entry e;
    uint64_t k = s->len >> bits;
    /* Entries read the same in any address length: their pointers are 8 bytes. */
    if (lanyfs_geom_init(&g, bits, LANYFS_ADDRLEN_MAX, n, NULL) != LANYFS_OK)
        return 0;
    for (uint64_t i = 1; i < k && i < n; i++)
        if (sc_probe_entry(&g, n, blk_at(s, bits, i), &e) && lanyfs_entry_is_formatter_root(&e))
            return i;
    return 0;
}

/*
 * The free-list head in the sample: a chain block no chain links to.
 * Every allocation rewrites the head, while the rest of a list that the
 * driver's relink of the head cut off (SPEC-9.3) keeps the formatter's
 * counter 1, however much longer it is.  So the formatter's own list, its
 * first chain block at block 2 (SPEC-9.16) never written since, comes
 * first: nothing was allocated since the format, and any head written
 * more is an earlier format's.  Then a head written since it was made,
 * then the longest chain.  The counters are not compared further: an
 * earlier format's head, read with this one's block size, may well have
 * been written more than the list in use.
 */
static int head_rank(const uint8_t *b, uint64_t blk)
{
    uint16_t wrcnt = lanyfs_get16(b + LANYFS_HDR_WRCNT);
    if (wrcnt > 1)
        return 1;
    return blk == FORMATTER_CHAIN ? 2 : 0;
}

static uint64_t infer_freehead(const struct sample *s, const struct lanyfs_geom *g, uint64_t n)
{
    uint64_t k = s->len >> g->blockbits;
    if (k > n)
        k = n;
    uint8_t *mark = calloc((size_t)k + 1, 1); /* 1: chain-like, 2: linked to */
    uint64_t best = 0, best_len = 0;
    int best_rank = 0;
    if (mark == NULL)
        return 0;
    for (uint64_t i = 1; i < k; i++)
        if (sc_probe_chain(g, n, blk_at(s, g->blockbits, i)))
            mark[i] |= 1;
    for (uint64_t i = 1; i < k; i++) {
        if (!(mark[i] & 1))
            continue;
        uint64_t next = lanyfs_get64(blk_at(s, g->blockbits, i) + LANYFS_CH_NEXT);
        if (next < k)
            mark[next] |= 2;
    }
    for (uint64_t i = 1; i < k; i++) {
        if (mark[i] != 1)
            continue;
        /* A head whose slots are all empty, with a chain block after it,
         * was used up and handed out (the writer takes the chain block
         * itself last and moves 'freehead' on); a data write that has not
         * landed leaves it reading as the old head.  The list starts after
         * it. */
        uint64_t head = i, hops = 0;
        bool spent;
        for (;;) {
            const uint8_t *hb = blk_at(s, g->blockbits, head);
            uint64_t next = lanyfs_get64(hb + LANYFS_CH_NEXT);
            spent = sc_zero_from(hb, LANYFS_CH_SLOTS, g->blocksize);
            if (!spent || next == 0 || next >= k || !(mark[next] & 1) || ++hops >= k)
                break;
            head = next;
        }
        uint64_t len = 0, cur = head;
        while (cur != 0 && cur < k && (mark[cur] & 1) && len < k) {
            len++;
            cur = lanyfs_get64(blk_at(s, g->blockbits, cur) + LANYFS_CH_NEXT);
        }
        /* A head that lists nothing and leads nowhere is a spent chain
         * block left behind: any list that lists blocks goes first. */
        int rank = spent ? -1 : head_rank(blk_at(s, g->blockbits, head), head);
        if (best == 0 || rank > best_rank || (rank == best_rank && len > best_len)) {
            best_len = len;
            best_rank = rank;
            best = head;
        }
    }
    free(mark);
    return best;
}

bool sc_infer_geometry(struct scan_result *r, const char *why)
{
    struct sample s = {NULL, 0};
    uint8_t *buf = NULL;
    bool ok = false;
    const struct lanyfs_super *sb = &r->sb;
    bool sb_bits_ok =
        sb->blockbits >= LANYFS_BLOCKBITS_MIN && sb->blockbits <= LANYFS_BLOCKBITS_MAX;
    bool sb_addr_ok = sb->addrlen >= LANYFS_ADDRLEN_MIN && sb->addrlen <= LANYFS_ADDRLEN_MAX;

    s.len = r->image_bytes < INFER_BYTES ? (size_t)r->image_bytes : INFER_BYTES;
    buf = malloc(s.len ? s.len : 1);
    if (buf == NULL) {
        sc_oom(r);
        goto out;
    }
    /* Sectors that fail read as zeros (the sweep reports them): a bad
     * sector, often the very one that lost the superblock, must not cost
     * the whole sample. */
    size_t lost = 0;
    if (lanyfs_image_pread_sectors(r->img, 0, buf, s.len, &lost, NULL) != LANYFS_OK)
        s.len = 0;
    s.p = buf;

    /*
     * A stick formatted again with another block size keeps the earlier
     * format's blocks wherever the new one has not written yet (the
     * formatter writes only block 0, the root at 1 and its chain blocks),
     * the earlier root among them, and the earlier tree may hold far more
     * entries than the new one.  So a block size whose block 1 holds the
     * formatter's root directory wins over one whose block 1 does not, and
     * among those the root created last, the newest format, wins, whatever
     * the entry counts say.
     */
    unsigned bits = 0, rooted = 0, outscored = 0;
    uint64_t best = 0, best_rooted = 0;
    int64_t root_sec = 0;
    uint32_t root_nsec = 0;
    if (r->geom_given)
        bits = r->given_bits;
    for (unsigned b = LANYFS_BLOCKBITS_MIN; b <= LANYFS_BLOCKBITS_MAX && !r->geom_given; b++) {
        uint64_t n = r->image_bytes >> b;
        if (n < 2)
            continue;
        uint64_t sc = score_bits(&s, b, n) * 2 + (sb_bits_ok && sb->blockbits == b);
        if (sc > best) {
            best = sc;
            bits = b;
        }
        int64_t sec;
        uint32_t nsec;
        if (formatter_root(&s, b, n, &sec, &nsec) &&
            (rooted == 0 || sec > root_sec || (sec == root_sec && nsec > root_nsec) ||
             (sec == root_sec && nsec == root_nsec && sc > best_rooted))) {
            rooted = b;
            best_rooted = sc;
            root_sec = sec;
            root_nsec = nsec;
        }
    }
    if (rooted != 0 && rooted != bits) {
        outscored = bits;
        bits = rooted;
    }
    bool bits_inferred = bits != 0;
    if (bits == 0)
        bits = sb_bits_ok ? sb->blockbits : 12;
    uint64_t n = r->image_bytes >> bits;
    bool addr_decided = r->geom_given && r->given_addrlen != 0;
    unsigned addrlen = r->given_addrlen;
    uint64_t map_files = 0; /* files whose data maps told the address length */
    if (r->geom_given && addrlen == 0) {
        /* A block size given alone: the data maps of the files under the
         * formatter's root tell the length best (earlier.c), the slot
         * values of the sample's chains and extenders next. */
        uint64_t root = sample_root(&s, bits, n);
        if (root != 0 && !sc_addrlen_from_maps(r, bits, root, &addrlen, &map_files, NULL))
            goto out;
        addr_decided = addrlen != 0;
        if (!addr_decided)
            map_files = 0;
    }
    if (!addr_decided)
        addrlen = infer_addrlen(&s, bits, n, &addr_decided);
    if (!addr_decided || addrlen == 0)
        addrlen = sb_addr_ok ? sb->addrlen : 4;
    char addr_how[96];
    if (r->geom_given && r->given_addrlen != 0)
        snprintf(addr_how, sizeof(addr_how), "given");
    else if (map_files != 0)
        snprintf(addr_how, sizeof(addr_how), "inferred from the data maps of %" PRIu64 " files",
                 map_files);
    else if (!addr_decided)
        snprintf(addr_how, sizeof(addr_how), "assumed");
    else if (sb_addr_ok && sb->addrlen == addrlen)
        snprintf(addr_how, sizeof(addr_how), "inferred, as the superblock says");
    else
        snprintf(addr_how, sizeof(addr_how), "inferred");

    if (lanyfs_geom_init(&r->g, bits, addrlen, n, NULL) != LANYFS_OK)
        goto out;
    r->inferred = true;
    r->sb_usable = false;
    r->image_blocks = n;
    uint64_t limit = addrlen >= 8 ? UINT64_MAX : (uint64_t)1 << (8 * addrlen);
    r->dev_blocks = n < limit ? n : limit;
    r->fs_blocks = r->dev_blocks;
    r->g.blocks = r->dev_blocks;
    r->nblocks = n;

    /* The root: the lowest LANYFSROOT in the sample; tree.c searches further. */
    r->rootdir = sample_root(&s, bits, r->dev_blocks);
    r->freehead = infer_freehead(&s, &r->g, r->dev_blocks);
    r->free_complete = r->freehead != 0;

    char text[640];
    int len = snprintf(text, sizeof(text),
                       "%s; block size %" PRIu32 " (%s), address length %u (%s)", why,
                       r->g.blocksize,
                       r->geom_given    ? "given"
                       : !bits_inferred ? "assumed"
                       : sb_bits_ok && sb->blockbits == bits ? "inferred, as the superblock says"
                                                             : "inferred",
                       addrlen, addr_how);
    if (len > 0 && (size_t)len < sizeof(text)) {
        size_t l = (size_t)len;
        l += (size_t)snprintf(text + l, sizeof(text) - l,
                              ", %" PRIu64 " blocks from the image size", r->dev_blocks);
        if (l < sizeof(text) && r->rootdir)
            l += (size_t)snprintf(text + l, sizeof(text) - l, ", root directory at block %" PRIu64,
                                  r->rootdir);
        if (l < sizeof(text) && r->freehead)
            l += (size_t)snprintf(text + l, sizeof(text) - l,
                                  ", free list from chain block %" PRIu64, r->freehead);
        /* EARLIER_FORMAT (earlier.c) names the address length too, when
         * the earlier files tell it. */
        if (l < sizeof(text) && outscored)
            snprintf(text + l, sizeof(text) - l,
                     "; the blocks hold more entries at %" PRIu32 " bytes, an earlier "
                     "format's: the root directory created last is block 1 at %" PRIu32
                     " bytes (--geometry %" PRIu32 " reads the earlier format)",
                     (uint32_t)1 << outscored, r->g.blocksize, (uint32_t)1 << outscored);
    }
    ok = sc_report(r, &(struct scan_finding){.code = SCAN_PR_SB_GEOMETRY_INFERRED}, NULL, "%s",
                   text);
out:
    free(buf);
    return ok;
}

bool sc_push_links(uint64_t **stack, size_t *n, size_t *cap, const struct lanyfs_entry *e,
                   bool top)
{
    return sc_push_link_set(stack, n, cap, top ? 0 : e->left, top ? 0 : e->right,
                            lanyfs_entry_is_dir(e) ? e->subtree : 0);
}

bool sc_push_link_set(uint64_t **stack, size_t *n, size_t *cap, uint64_t left, uint64_t right,
                      uint64_t subtree)
{
    uint64_t links[3] = {left, right, subtree};
    for (int j = 0; j < 3; j++) {
        if (links[j] == 0)
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            uint64_t *ns = realloc(*stack, nc * sizeof(*ns));
            if (ns == NULL)
                return false;
            *stack = ns;
            *cap = nc;
        }
        (*stack)[(*n)++] = links[j];
    }
    return true;
}

/* Count the nodes reachable from dir's tree, at most ROOT_WALK_MAX. */
static uint64_t count_tree(struct scan_result *r, uint64_t dir, uint8_t *b)
{
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    uint64_t *stack = NULL, count = 0;
    size_t n = 0, cap = 0;
    struct lanyfs_entry e;
    if (seen == NULL)
        return 0;
    uint64_t cur = dir;
    for (;;) {
        if (cur != 0 && cur < r->dev_blocks && lanyfs_blockset_add(seen, cur) == 1 &&
            sc_read(r, cur, b, NULL) == LANYFS_OK && sc_probe_entry(&r->g, r->dev_blocks, b, &e)) {
            count++;
            if (!sc_push_links(&stack, &n, &cap, &e, cur == dir))
                goto out;
        }
        if (n == 0 || count >= ROOT_WALK_MAX || sc_stopped(r))
            break;
        cur = stack[--n];
    }
out:
    free(stack);
    lanyfs_blockset_free(seen);
    return count;
}

/*
 * A formatter's root created before the superblock that is read, in an
 * earlier second, belongs to an earlier format of the stick (the formatter
 * writes one time into both, and neither changes after): it is no
 * candidate for this format's root.  Within one second nothing tells, as
 * for EARLIER_FORMAT (earlier.c).
 */
static bool earlier_root(const struct scan_result *r, const struct lanyfs_entry *e)
{
    time_t made, born;
    return r->sb_usable && lanyfs_entry_is_formatter_root(e) &&
           sc_ts_seconds(&r->sb.created, &made) && sc_ts_seconds(&e->created, &born) &&
           born < made;
}

uint64_t sc_find_root(struct scan_result *r, uint64_t exclude)
{
    uint8_t *b = malloc(r->g.blocksize);
    uint64_t found = 0, limit = r->dev_blocks < r->nblocks ? r->dev_blocks : r->nblocks;
    struct lanyfs_entry e;
    if (b == NULL) {
        sc_oom(r);
        return 0;
    }
    if (limit > r->image_blocks)
        limit = r->image_blocks;
    /* A directory named LANYFSROOT, the lowest one. */
    for (uint64_t i = 1; i < limit && !sc_stopped(r); i++) {
        if (i == exclude || sc_read(r, i, b, NULL) != LANYFS_OK)
            continue;
        if (sc_probe_entry(&r->g, r->dev_blocks, b, &e) && lanyfs_entry_is_formatter_root(&e) &&
            !earlier_root(r, &e)) {
            found = i;
            goto out;
        }
    }
    /* Otherwise the unlinked directory with the most descendants. */
    for (uint64_t i = 1; i < limit && !sc_stopped(r); i++) {
        if (sc_read(r, i, b, NULL) != LANYFS_OK || !sc_probe_entry(&r->g, r->dev_blocks, b, &e))
            continue;
        uint64_t links[3] = {e.left, e.right, lanyfs_entry_is_dir(&e) ? e.subtree : 0};
        for (int j = 0; j < 3; j++)
            if (links[j] != 0 && links[j] < r->nblocks)
                r->map[links[j]].flags |= SC_BF_LINKED;
    }
    uint64_t best = 0;
    for (uint64_t i = 1; i < limit && !sc_stopped(r); i++) {
        if (i == exclude || (r->map[i].flags & SC_BF_LINKED) || r->map[i].cls != SCAN_BLK_UNKNOWN)
            continue;
        if (sc_read(r, i, b, NULL) != LANYFS_OK || !sc_probe_entry(&r->g, r->dev_blocks, b, &e) ||
            !lanyfs_entry_is_dir(&e) || earlier_root(r, &e))
            continue;
        uint64_t c = count_tree(r, i, b);
        if (c > best) {
            best = c;
            found = i;
        }
    }
    for (uint64_t i = 0; i < r->nblocks; i++)
        r->map[i].flags &= (uint8_t)~SC_BF_LINKED;
out:
    free(b);
    return found;
}
