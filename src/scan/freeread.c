/*
 * freeread.c -- the free space read on the helper thread, while the walks
 * run.
 *
 * The sweep must read every block the walks did not, and on a stick of
 * small files that is mostly the free space: blocks it reads only to learn
 * that they can be read and whether one holds a deleted entry
 * (sc_probe_entry_tolerant).  Which blocks are free is known once the free
 * list is walked, before the tree walk; so the blocks the free list lists,
 * as runs taken from the map at that moment, are handed to the helper
 * thread (prefault.c), which reads them run by run and keeps two bits a
 * block: read whole, and looks like an entry.  The sweep, after
 * sc_freeread_wait, reads a block again only when its bits say it holds an
 * entry, or when it was not read: the deleted entries are still found by
 * the sweep, in block order, so their ids do not change.
 *
 * The job shares nothing with the scan while it runs: the runs, the
 * geometry and the device's end are copied to it, it reads the image
 * through its own calls (pread), and the bits are read by the scan only
 * after the wait.  Without a helper the sweep reads the free space itself.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

#define FREEREAD_CHUNK ((size_t)1 << 17)

struct sc_freeread {
    /* Handed over */
    struct lanyfs_image *img;
    struct lanyfs_geom g;
    uint64_t dev_blocks;
    uint64_t *runs;       /* first, count pairs of free blocks, all below the image's end */
    size_t nruns;
    /* The helper's place and results */
    size_t run;           /* the run being read */
    uint64_t at;          /* its next block, from its first */
    uint8_t *buf;         /* FREEREAD_CHUNK bytes */
    uint64_t *read_ok;    /* a bit a block: read whole */
    uint64_t *is_entry;   /* a bit a block: sc_probe_entry_tolerant holds */
    uint64_t bytes_read;
    struct sc_subprobe sub; /* entries of a smaller block size (subentries.c) */
    bool complete;        /* every run was read */
};

static void set_bit(uint64_t *bits, uint64_t blk)
{
    bits[blk / 64] |= (uint64_t)1 << (blk % 64);
}

static bool get_bit(const uint64_t *bits, uint64_t blk)
{
    return (bits[blk / 64] >> (blk % 64)) & 1;
}

/* One chunk of the current run; false when every run is read. */
static bool step(void *ctx)
{
    struct sc_freeread *f = ctx;
    if (f->run >= f->nruns) {
        f->complete = true;
        return false;
    }
    uint64_t first = f->runs[2 * f->run], count = f->runs[2 * f->run + 1];
    uint64_t per = FREEREAD_CHUNK >> f->g.blockbits, n = count - f->at;
    if (n > per)
        n = per;
    uint64_t blk = first + f->at;
    if (lanyfs_image_pread(f->img, blk << f->g.blockbits, f->buf, (size_t)n << f->g.blockbits,
                           NULL) == LANYFS_OK) {
        f->bytes_read += n << f->g.blockbits;
        struct lanyfs_entry e;
        uint64_t wild;
        for (uint64_t k = 0; k < n; k++) {
            const uint8_t *b = f->buf + ((size_t)k << f->g.blockbits);
            /* Only a directory or file type can begin an entry. */
            bool entry = (b[0] == LANYFS_TYPE_DIR || b[0] == LANYFS_TYPE_FILE) &&
                         sc_probe_entry_tolerant(&f->g, f->dev_blocks, b, &e, &wild);
            if (entry)
                set_bit(f->is_entry, blk + k);
            sc_subprobe_block(&f->sub, blk + k, b, entry);
            set_bit(f->read_ok, blk + k);
        }
    } /* else: not marked; the sweep reads these blocks and reports them */
    f->at += n;
    if (f->at >= count) {
        f->run++;
        f->at = 0;
    }
    return true;
}

static void freeread_free(struct sc_freeread *f)
{
    if (f == NULL)
        return;
    free(f->runs);
    free(f->buf);
    free(f->read_ok);
    free(f->is_entry);
    sc_subprobe_free(&f->sub);
    free(f);
}

void sc_freeread_start(struct scan_result *r)
{
    if (r->pf == NULL || r->g.blocksize == 0 || r->g.blocksize > FREEREAD_CHUNK ||
        r->nblocks == 0)
        return;
    uint64_t end = r->nblocks < r->image_blocks ? r->nblocks : r->image_blocks;
    size_t nruns = 0, cap = 0;
    uint64_t *runs = NULL;
    for (uint64_t b = 1; b < end;) {
        if (r->map[b].cls != SCAN_BLK_FREE) {
            b++;
            continue;
        }
        uint64_t first = b;
        while (b < end && r->map[b].cls == SCAN_BLK_FREE)
            b++;
        if (nruns == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            uint64_t *n = realloc(runs, ncap * 2 * sizeof(*n));
            if (n == NULL) {
                free(runs);
                return; /* the sweep reads the free space itself */
            }
            runs = n;
            cap = ncap;
        }
        runs[2 * nruns] = first;
        runs[2 * nruns + 1] = b - first;
        nruns++;
    }
    if (nruns == 0) {
        free(runs);
        return;
    }
    size_t words = (size_t)(r->nblocks / 64 + 1);
    struct sc_freeread *f = calloc(1, sizeof(*f));
    if (f == NULL) {
        free(runs);
        return;
    }
    f->img = r->img;
    f->g = r->g;
    f->dev_blocks = r->dev_blocks;
    f->runs = runs;
    f->nruns = nruns;
    sc_subprobe_init(&f->sub, r);
    f->buf = malloc(FREEREAD_CHUNK);
    f->read_ok = calloc(words, sizeof(uint64_t));
    f->is_entry = calloc(words, sizeof(uint64_t));
    if (f->buf == NULL || f->read_ok == NULL || f->is_entry == NULL ||
        !sc_helper_job(r, step, f)) {
        freeread_free(f);
        return;
    }
    r->fr = f;
}

void sc_freeread_wait(struct scan_result *r)
{
    struct sc_freeread *f = r->fr;
    if (f == NULL)
        return;
    sc_helper_wait(r);
    if (!f->complete) { /* abandoned: its bits may be half made */
        sc_freeread_drop(r);
        return;
    }
    r->bytes_read += f->bytes_read;
}

bool sc_freeread_known(const struct scan_result *r, uint64_t blk, bool *entry)
{
    const struct sc_freeread *f = r->fr;
    if (f == NULL || !f->complete || blk >= r->nblocks || !get_bit(f->read_ok, blk))
        return false;
    *entry = get_bit(f->is_entry, blk);
    return true;
}

const struct sc_subprobe *sc_freeread_subprobe(const struct scan_result *r)
{
    const struct sc_freeread *f = r->fr;
    return f != NULL && f->complete ? &f->sub : NULL;
}

void sc_freeread_drop(struct scan_result *r)
{
    if (r->fr == NULL)
        return;
    sc_helper_wait(r); /* the helper may still hold it */
    freeread_free(r->fr);
    r->fr = NULL;
}
