/*
 * fixture.c -- small LanyFS images built in memory for tests (fixture.h).
 *
 * The image is one buffer of blocks * blocksize bytes and a byte per block
 * saying whether it has been handed out.  Every structure is written with
 * the core's encoders; the tree order, the extender layout and the free
 * list are computed here, by code of their own, so that they check the
 * core's readers instead of repeating them.
 */
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FX_MAX_BYTES ((uint64_t)1 << 30)
#define FX_LABEL "fixture"

struct fx {
    struct lanyfs_geom g; /* geometry of the image */
    uint8_t *img;         /* blocks * blocksize bytes */
    uint8_t *used;        /* one byte per block: handed out */
    uint64_t nused;       /* blocks handed out */
    uint64_t cursor;      /* where fx_alloc looks first */
};

void fx_time(struct lanyfs_ts *ts)
{
    memset(ts, 0, sizeof(*ts));
    ts->year = 2026;
    ts->month = 12;
    ts->day = 3;
    ts->hour = 1;
    ts->minute = 2;
    ts->second = 15;
}

uint8_t *fx_block(struct fx *fx, uint64_t blk)
{
    if (fx == NULL || blk >= fx->g.blocks)
        return NULL;
    return fx->img + (size_t)blk * fx->g.blocksize;
}

const struct lanyfs_geom *fx_geom(const struct fx *fx)
{
    return &fx->g;
}

uint64_t fx_blocks(const struct fx *fx)
{
    return fx->g.blocks;
}

uint32_t fx_blocksize(const struct fx *fx)
{
    return fx->g.blocksize;
}

uint8_t *fx_image(struct fx *fx)
{
    return fx->img;
}

size_t fx_image_size(const struct fx *fx)
{
    return (size_t)fx->g.blocks * fx->g.blocksize;
}

uint64_t fx_used_count(const struct fx *fx)
{
    return fx->nused;
}

int fx_is_used(const struct fx *fx, uint64_t blk)
{
    return blk < fx->g.blocks && fx->used[blk];
}

int fx_mark_used(struct fx *fx, uint64_t blk)
{
    if (blk >= fx->g.blocks)
        return -1;
    if (!fx->used[blk]) {
        fx->used[blk] = 1;
        fx->nused++;
    }
    return 0;
}

uint64_t fx_alloc(struct fx *fx)
{
    for (uint64_t b = fx->cursor; b < fx->g.blocks; b++) {
        if (!fx->used[b]) {
            fx->used[b] = 1;
            fx->nused++;
            fx->cursor = b + 1;
            memset(fx_block(fx, b), 0, fx->g.blocksize);
            return b;
        }
    }
    fx->cursor = fx->g.blocks;
    return 0;
}

void fx_super_get(struct fx *fx, struct lanyfs_super *sb)
{
    lanyfs_super_decode(sb, fx->img);
}

void fx_super_put(struct fx *fx, const struct lanyfs_super *sb)
{
    lanyfs_super_encode(sb, fx->img);
}

void fx_set_label(struct fx *fx, const char *label)
{
    uint8_t *p = fx->img + LANYFS_SB_LABEL;
    size_t n = strnlen(label, LANYFS_NAME_FIELD);
    memset(p, 0, LANYFS_NAME_FIELD);
    memcpy(p, label, n);
}

void fx_entry_get(struct fx *fx, uint64_t blk, struct lanyfs_entry *e)
{
    uint8_t *b = fx_block(fx, blk);
    if (b == NULL) {
        memset(e, 0, sizeof(*e));
        return;
    }
    lanyfs_entry_decode(e, b);
}

void fx_entry_put(struct fx *fx, uint64_t blk, const struct lanyfs_entry *e)
{
    uint8_t *b = fx_block(fx, blk);
    if (b != NULL)
        lanyfs_entry_encode(e, b);
}

/* An entry block as the fixture writes it: cleared, times fixed, wrcnt 1. */
static void entry_write(struct fx *fx, uint64_t blk, uint8_t type, const void *name,
                        size_t name_len)
{
    struct lanyfs_entry e;
    memset(&e, 0, sizeof(e));
    e.type = type;
    e.wrcnt = 1;
    fx_time(&e.created);
    fx_time(&e.modified);
    if (name_len > LANYFS_NAME_FIELD)
        name_len = LANYFS_NAME_FIELD;
    memcpy(e.name, name, name_len);
    e.name_len = name_len;
    uint8_t *b = fx_block(fx, blk);
    memset(b, 0, fx->g.blocksize);
    lanyfs_entry_encode(&e, b);
}

uint64_t fx_entry_new(struct fx *fx, uint8_t type, const void *name, size_t name_len)
{
    uint64_t blk = fx_alloc(fx);
    if (blk == 0)
        return 0;
    entry_write(fx, blk, type, name, name_len);
    return blk;
}

struct fx *fx_new(unsigned blockbits, unsigned addrlen, uint64_t blocks)
{
    if (blockbits < LANYFS_BLOCKBITS_MIN || blockbits > LANYFS_BLOCKBITS_MAX)
        return NULL;
    if (addrlen < LANYFS_ADDRLEN_MIN || addrlen > LANYFS_ADDRLEN_MAX || blocks < 3)
        return NULL;
    if (addrlen < 8 && blocks > ((uint64_t)1 << (8 * addrlen)))
        return NULL;
    if (blocks > (FX_MAX_BYTES >> blockbits))
        return NULL;
    struct fx *fx = calloc(1, sizeof(*fx));
    if (fx == NULL)
        return NULL;
    if (lanyfs_geom_init(&fx->g, blockbits, addrlen, blocks, NULL) != LANYFS_OK)
        goto out_free;
    fx->img = calloc((size_t)blocks, fx->g.blocksize);
    fx->used = calloc((size_t)blocks, 1);
    if (fx->img == NULL || fx->used == NULL)
        goto out_free;
    fx->used[0] = fx->used[1] = 1;
    fx->nused = 2;
    fx->cursor = 2;

    struct lanyfs_super sb;
    memset(&sb, 0, sizeof(sb));
    sb.type = LANYFS_TYPE_SUPER;
    sb.wrcnt = 2;
    sb.magic = LANYFS_MAGIC;
    sb.major = LANYFS_VERSION_MAJOR;
    sb.minor = LANYFS_VERSION_MINOR;
    sb.blockbits = (uint8_t)blockbits;
    sb.addrlen = (uint8_t)addrlen;
    sb.rootdir = 1;
    sb.blocks = blocks;
    fx_time(&sb.created);
    fx_time(&sb.updated);
    memcpy(sb.label, FX_LABEL, sizeof(FX_LABEL));
    lanyfs_super_encode(&sb, fx->img);

    entry_write(fx, 1, LANYFS_TYPE_DIR, LANYFS_ROOT_NAME, strlen(LANYFS_ROOT_NAME));
    return fx;

out_free:
    fx_free(fx);
    return NULL;
}

void fx_free(struct fx *fx)
{
    if (fx == NULL)
        return;
    free(fx->img);
    free(fx->used);
    free(fx);
}

uint64_t fx_root(struct fx *fx)
{
    (void)fx;
    return 1;
}

/* ---- entry fields ------------------------------------------------------- */

static void set64(struct fx *fx, uint64_t blk, size_t off, uint64_t v)
{
    uint8_t *b = fx_block(fx, blk);
    if (b != NULL)
        lanyfs_put64(b + off, v);
}

static uint64_t get64(struct fx *fx, uint64_t blk, size_t off)
{
    uint8_t *b = fx_block(fx, blk);
    return b != NULL ? lanyfs_get64(b + off) : 0;
}

void fx_set_left(struct fx *fx, uint64_t blk, uint64_t v)
{
    set64(fx, blk, LANYFS_EN_LEFT, v);
}

void fx_set_right(struct fx *fx, uint64_t blk, uint64_t v)
{
    set64(fx, blk, LANYFS_EN_RIGHT, v);
}

void fx_set_subtree(struct fx *fx, uint64_t blk, uint64_t v)
{
    set64(fx, blk, LANYFS_EN_SUBTREE, v);
}

void fx_set_size(struct fx *fx, uint64_t blk, uint64_t v)
{
    set64(fx, blk, LANYFS_EN_SIZE, v);
}

uint64_t fx_get_left(struct fx *fx, uint64_t blk)
{
    return get64(fx, blk, LANYFS_EN_LEFT);
}

uint64_t fx_get_right(struct fx *fx, uint64_t blk)
{
    return get64(fx, blk, LANYFS_EN_RIGHT);
}

uint64_t fx_get_subtree(struct fx *fx, uint64_t blk)
{
    return get64(fx, blk, LANYFS_EN_SUBTREE);
}

uint64_t fx_get_size(struct fx *fx, uint64_t blk)
{
    return get64(fx, blk, LANYFS_EN_SIZE);
}

void fx_set_type(struct fx *fx, uint64_t blk, uint8_t type)
{
    uint8_t *b = fx_block(fx, blk);
    if (b != NULL)
        b[LANYFS_HDR_TYPE] = type;
}

/* ---- directory tree ----------------------------------------------------- */

/*
 * strncmp(node, x, 256) over unsigned bytes, x being len bytes with an
 * implied NUL after them: written here independently of lanyfs_name_cmp.
 */
static int own_name_cmp(const uint8_t *node, const uint8_t *x, size_t len)
{
    for (size_t i = 0; i < LANYFS_NAME_FIELD; i++) {
        int a = node[i];
        int b = i < len ? x[i] : 0;
        if (a != b)
            return a - b;
        if (a == 0)
            break;
    }
    return 0;
}

int fx_link(struct fx *fx, uint64_t parent, uint64_t blk)
{
    uint8_t *pb = fx_block(fx, parent);
    uint8_t *nb = fx_block(fx, blk);
    if (pb == NULL || nb == NULL || pb[LANYFS_HDR_TYPE] != LANYFS_TYPE_DIR)
        return -1;
    const uint8_t *name = nb + LANYFS_EN_NAME;
    size_t len = strnlen((const char *)name, LANYFS_NAME_FIELD);
    uint64_t cur = lanyfs_get64(pb + LANYFS_EN_SUBTREE);
    if (cur == 0) {
        lanyfs_put64(pb + LANYFS_EN_SUBTREE, blk);
        return 0;
    }
    for (uint64_t steps = 0; steps <= fx->g.blocks; steps++) {
        uint8_t *cb = fx_block(fx, cur);
        if (cb == NULL)
            return -1;
        int c = own_name_cmp(cb + LANYFS_EN_NAME, name, len);
        if (c == 0)
            return -1; /* names are unique within a directory */
        /* SPEC-§5: node < x, that is x greater, goes LEFT. */
        size_t off = c < 0 ? LANYFS_EN_LEFT : LANYFS_EN_RIGHT;
        uint64_t next = lanyfs_get64(cb + off);
        if (next == 0) {
            lanyfs_put64(cb + off, blk);
            return 0;
        }
        cur = next;
    }
    return -1; /* a loop: the test corrupted the tree already */
}

static uint64_t add_entry(struct fx *fx, uint64_t parent, uint8_t type, const char *name)
{
    uint8_t *pb = fx_block(fx, parent);
    size_t len = name ? strlen(name) : 0;
    if (pb == NULL || pb[LANYFS_HDR_TYPE] != LANYFS_TYPE_DIR || len == 0 ||
        len > LANYFS_NAME_MAX)
        return 0;
    uint64_t blk = fx_entry_new(fx, type, name, len);
    if (blk == 0)
        return 0;
    if (fx_link(fx, parent, blk) != 0) {
        fx->used[blk] = 0;
        fx->nused--;
        if (blk < fx->cursor)
            fx->cursor = blk;
        memset(fx_block(fx, blk), 0, fx->g.blocksize);
        return 0;
    }
    return blk;
}

uint64_t fx_mkdir(struct fx *fx, uint64_t parent, const char *name)
{
    return add_entry(fx, parent, LANYFS_TYPE_DIR, name);
}

/* ---- extenders and files -------------------------------------------------- */

uint64_t fx_ext_new(struct fx *fx, unsigned level)
{
    uint64_t blk = fx_alloc(fx);
    if (blk == 0)
        return 0;
    struct lanyfs_ext_hdr h = {LANYFS_TYPE_EXT, 0, (uint8_t)level};
    lanyfs_ext_encode(&h, fx_block(fx, blk));
    return blk;
}

uint64_t fx_ext_get_slot(struct fx *fx, uint64_t blk, uint32_t i)
{
    uint8_t *b = fx_block(fx, blk);
    if (b == NULL || i >= fx->g.extmax)
        return 0;
    return lanyfs_get_addr(b + LANYFS_EXT_SLOTS + (size_t)i * fx->g.addrlen, fx->g.addrlen);
}

void fx_ext_set_slot(struct fx *fx, uint64_t blk, uint32_t i, uint64_t v)
{
    uint8_t *b = fx_block(fx, blk);
    if (b == NULL || i >= fx->g.extmax)
        return;
    lanyfs_put_addr(b + LANYFS_EXT_SLOTS + (size_t)i * fx->g.addrlen, fx->g.addrlen, v);
}

unsigned fx_ext_level(struct fx *fx, uint64_t blk)
{
    uint8_t *b = fx_block(fx, blk);
    return b != NULL ? b[LANYFS_EXT_LEVEL] : 0;
}

void fx_ext_set_level(struct fx *fx, uint64_t blk, unsigned level)
{
    uint8_t *b = fx_block(fx, blk);
    if (b != NULL)
        b[LANYFS_EXT_LEVEL] = (uint8_t)level;
}

/* extmax^n, saturated; computed here rather than with lanyfs_geom_pow. */
static uint64_t own_pow(uint64_t base, unsigned n)
{
    uint64_t r = 1;
    for (unsigned i = 0; i < n; i++) {
        if (r > UINT64_MAX / base)
            return UINT64_MAX;
        r *= base;
    }
    return r;
}

struct filebuild {
    const uint8_t *data; /* file contents, NULL for zeros */
    size_t len;          /* bytes */
    uint64_t nblocks;    /* data blocks */
};

/* Build the level-`level` extender mapping file blocks from base on. */
static uint64_t build_ext(struct fx *fx, const struct filebuild *fb, unsigned level, uint64_t base)
{
    uint64_t ext = fx_ext_new(fx, level);
    if (ext == 0)
        return 0;
    uint64_t span = own_pow(fx->g.extmax, level);
    for (uint32_t i = 0; i < fx->g.extmax; i++) {
        uint64_t first = base + (uint64_t)i * span;
        if (first >= fb->nblocks)
            break;
        uint64_t child;
        if (level == 0) {
            child = fx_alloc(fx);
            if (child == 0)
                return 0;
            size_t off = (size_t)first * fx->g.blocksize;
            size_t n = fb->len - off < fx->g.blocksize ? fb->len - off : fx->g.blocksize;
            if (fb->data != NULL)
                memcpy(fx_block(fx, child), fb->data + off, n);
        } else {
            child = build_ext(fx, fb, level - 1, first);
            if (child == 0)
                return 0;
        }
        fx_ext_set_slot(fx, ext, i, child);
    }
    return ext;
}

uint64_t fx_file(struct fx *fx, uint64_t parent, const char *name, const void *data, size_t len)
{
    uint64_t blk = add_entry(fx, parent, LANYFS_TYPE_FILE, name);
    if (blk == 0)
        return 0;
    fx_set_size(fx, blk, len);
    if (len == 0)
        return blk;
    struct filebuild fb = {data, len, (len + fx->g.blocksize - 1) / fx->g.blocksize};
    unsigned level = 0;
    while (own_pow(fx->g.extmax, level + 1) < fb.nblocks)
        level++;
    uint64_t top = build_ext(fx, &fb, level, 0);
    if (top == 0)
        return 0;
    fx_set_subtree(fx, blk, top);
    return blk;
}

uint64_t fx_file_dblk(struct fx *fx, uint64_t blk, uint64_t fblk, uint64_t *ext_blk,
                      uint32_t *ext_slot)
{
    if (ext_blk)
        *ext_blk = 0;
    if (ext_slot)
        *ext_slot = UINT32_MAX;
    uint64_t cur = fx_get_subtree(fx, blk);
    if (cur == 0 || fx_block(fx, cur) == NULL)
        return 0;
    unsigned level = fx_ext_level(fx, cur);
    if (fblk >= own_pow(fx->g.extmax, level + 1))
        return 0;
    for (;;) {
        uint64_t span = own_pow(fx->g.extmax, level);
        uint32_t i = (uint32_t)((fblk / span) % fx->g.extmax);
        uint64_t slot = fx_ext_get_slot(fx, cur, i);
        if (level == 0) {
            if (ext_blk)
                *ext_blk = cur;
            if (ext_slot)
                *ext_slot = i;
            return slot;
        }
        if (slot == 0 || fx_block(fx, slot) == NULL)
            return 0;
        cur = slot;
        level--;
    }
}

uint64_t fx_chain_get_slot(struct fx *fx, uint64_t blk, uint32_t i)
{
    uint8_t *b = fx_block(fx, blk);
    if (b == NULL || i >= fx->g.chainmax)
        return 0;
    return lanyfs_get_addr(b + LANYFS_CH_SLOTS + (size_t)i * fx->g.addrlen, fx->g.addrlen);
}

/* ---- free list and saving ------------------------------------------------ */

uint64_t fx_freelist(struct fx *fx)
{
    uint64_t head = 0, tail = 0, nfree = 0, nchain = 0;
    uint32_t k = 0;
    uint32_t per_chain = fx->g.chainmax - 1; /* the last slot stays empty */
    for (uint64_t b = 1; b < fx->g.blocks; b++) {
        if (fx->used[b])
            continue;
        nfree++;
        if (tail == 0 || k == per_chain) {
            uint8_t *cb = fx_block(fx, b);
            memset(cb, 0, fx->g.blocksize);
            struct lanyfs_chain_hdr h = {LANYFS_TYPE_CHAIN, 1, 0};
            lanyfs_chain_encode(&h, cb);
            if (tail != 0)
                lanyfs_put64(fx_block(fx, tail) + LANYFS_CH_NEXT, b);
            else
                head = b;
            tail = b;
            k = 0;
            nchain++;
            continue;
        }
        uint8_t *tb = fx_block(fx, tail);
        lanyfs_put_addr(tb + LANYFS_CH_SLOTS + (size_t)k * fx->g.addrlen, fx->g.addrlen, b);
        k++;
    }
    lanyfs_put64(fx->img + LANYFS_SB_FREEHEAD, head);
    lanyfs_put64(fx->img + LANYFS_SB_FREETAIL, tail);
    lanyfs_put64(fx->img + LANYFS_SB_FREEBLOCKS, nfree);
    return nchain;
}

int fx_write_truncated(struct fx *fx, const char *path, uint64_t bytes)
{
    if (bytes > fx_image_size(fx))
        bytes = fx_image_size(fx);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const uint8_t *p = fx->img;
    uint64_t done = 0;
    while (done < bytes) {
        ssize_t n = write(fd, p + done, (size_t)(bytes - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (uint64_t)n;
    }
    return close(fd) == 0 ? 0 : -1;
}

int fx_write(struct fx *fx, const char *path)
{
    return fx_write_truncated(fx, path, fx_image_size(fx));
}

int fx_save(struct fx *fx, const char *path)
{
    fx_freelist(fx);
    return fx_write(fx, path);
}

int fx_save_truncated(struct fx *fx, const char *path, uint64_t bytes)
{
    fx_freelist(fx);
    return fx_write_truncated(fx, path, bytes);
}

void fx_pattern(void *buf, size_t len, uint32_t seed)
{
    uint8_t *p = buf;
    uint32_t x = seed * 2654435761u ^ 0x9E3779B9u;
    for (size_t i = 0; i < len; i++) {
        /* xorshift32, never stuck at 0 because of the offset mixed in */
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if (x == 0)
            x = 0x6D2B79F5u + (uint32_t)i;
        p[i] = (uint8_t)(x >> 24);
    }
}
