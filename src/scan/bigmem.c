/*
 * bigmem.c -- advice to the kernel about the scan's large arrays.
 *
 * A scan of 100,000 small files keeps about 50 MiB of entries, their
 * private records and the block map, and touches them in no useful order.
 * In 4 KiB pages each touch of a new page is a TLB miss, and under a
 * hypervisor's nested paging a miss walks two page tables; the scan then
 * spent about a fifth of its time waiting on them.  Both calls here are
 * advice: where the kernel lacks them (or has transparent huge pages off)
 * they fail and the arrays work as before.
 *  - sc_mem_grow, sc_mem_release: an array in a mapping of its own, grown
 *    by mremap, which moves page tables where realloc would copy (and
 *    malloc, once a large block was freed, serves the next from its heap,
 *    copying on every doubling); new bytes read as zero;
 *  - sc_mem_huge: ask for 2 MiB pages over the array (MADV_HUGEPAGE);
 *  - sc_mem_populate, sc_mem_populate_ahead: fault in a buffer, or the next
 *    step of a growing array, in one call (MADV_POPULATE_WRITE, Linux
 *    5.14), rather than page by page.  prefault.c makes these calls on a
 *    helper thread, ahead of the scan, and falls back to them here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scan_priv.h"

#define HUGE_BYTES ((uintptr_t)2 << 20)
#define POPULATE_STEP ((size_t)2 << 20)

static uintptr_t page_bytes(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (uintptr_t)ps : 4096;
}

void sc_mem_huge(void *base, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (base == NULL || bytes < HUGE_BYTES)
        return;
    /* Whole pages only: the range may share its first and last page with
     * other allocations, which the advice then covers too, harmlessly. */
    uintptr_t ps = page_bytes();
    uintptr_t a = ((uintptr_t)base + ps - 1) & ~(ps - 1);
    uintptr_t e = ((uintptr_t)base + bytes) & ~(ps - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* advice; failure is harmless */
#else
    (void)base;
    (void)bytes;
#endif
}

void sc_mem_populate(void *base, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t ps = page_bytes();
    uintptr_t a = ((uintptr_t)base + ps - 1) & ~(ps - 1);
    uintptr_t e = ((uintptr_t)base + bytes) & ~(ps - 1);
    if (base != NULL && e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE); /* advice; failure is harmless */
#else
    (void)base;
    (void)bytes;
#endif
}

void sc_mem_populate_ahead(void *base, size_t need, size_t *populated, size_t cap)
{
    if (need <= *populated || *populated >= cap)
        return;
    size_t to = cap - *populated > POPULATE_STEP ? *populated + POPULATE_STEP : cap;
    if (to < need)
        to = need;
    sc_mem_populate((uint8_t *)base + *populated, to - *populated);
    *populated = to;
}

static size_t round_pages(size_t bytes)
{
    uintptr_t ps = page_bytes();
    if (bytes > SIZE_MAX - ps)
        return 0;
    return (bytes + ps - 1) & ~(size_t)(ps - 1);
}

void *sc_mem_grow(void *p, size_t old_bytes, size_t new_bytes)
{
    if (new_bytes == 0 || new_bytes < old_bytes)
        return NULL;
#if defined(__linux__) && defined(MREMAP_MAYMOVE)
    size_t o = round_pages(old_bytes), n = round_pages(new_bytes);
    if (n == 0)
        return NULL;
    void *q;
    if (p == NULL)
        q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
    else if (o == n)
        return p;
    else
        q = mremap(p, o, n, MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
        return NULL;
    sc_mem_huge(q, n);
    return q;
#else
    void *q = realloc(p, new_bytes);
    if (q != NULL)
        memset((uint8_t *)q + old_bytes, 0, new_bytes - old_bytes);
    return q;
#endif
}

bool sc_mem_lazy(void)
{
#if defined(__linux__) && defined(MREMAP_MAYMOVE)
    return true;
#else
    return false;
#endif
}

void sc_mem_release(void *p, size_t bytes)
{
    if (p == NULL)
        return;
#if defined(__linux__) && defined(MREMAP_MAYMOVE)
    munmap(p, round_pages(bytes));
#else
    (void)bytes;
    free(p);
#endif
}

/*
 * Pools: many small allocations that are freed together (the entries'
 * paths, the small files' data lists).  Each chunk is a mapping of
 * POOL_CHUNK bytes faulted in at once; a request is served from the newest
 * chunk, or from a new one when it does not fit.  100,000 small mallocs
 * touched their heap pages one by one and cost a malloc header each.
 * Once a chunk is half used, sc_pool_spare maps the next one, for the
 * caller to have faulted in on the helper thread (prefault.c) while the
 * scan fills the rest: faulting in 2 MiB in the scan's own thread costs
 * it about two milliseconds a chunk.
 */
#define POOL_CHUNK SC_POOL_CHUNK

struct sc_pool_chunk {
    struct sc_pool_chunk *next; /* the chunk filled before */
    size_t used;                /* bytes used, this header included */
};

void *sc_pool_alloc(struct sc_pool *pool, size_t bytes, size_t align)
{
    struct sc_pool_chunk *c = pool->head;
    size_t at = 0;
    if (align == 0 || (align & (align - 1)) != 0 || bytes > POOL_CHUNK / 4)
        return NULL;
    if (c != NULL)
        at = (c->used + align - 1) & ~(align - 1);
    if (c == NULL || at > POOL_CHUNK || POOL_CHUNK - at < bytes) {
        struct sc_pool_chunk *n = pool->spare;
        pool->spare = NULL;
        if (n == NULL) {
            n = sc_mem_grow(NULL, 0, POOL_CHUNK);
            if (n == NULL)
                return NULL;
            sc_mem_populate(n, POOL_CHUNK);
        }
        n->next = c;
        n->used = sizeof(*n);
        pool->head = c = n;
        at = (c->used + align - 1) & ~(align - 1);
    }
    c->used = at + bytes;
    return (uint8_t *)c + at; /* zero: a chunk is a fresh mapping, used once */
}

void *sc_pool_spare(struct sc_pool *pool)
{
    const struct sc_pool_chunk *c = pool->head;
    if (pool->spare != NULL || (c != NULL && c->used <= POOL_CHUNK / 2))
        return NULL;
    pool->spare = sc_mem_grow(NULL, 0, POOL_CHUNK);
    return pool->spare;
}

void sc_pool_free(struct sc_pool *pool)
{
    sc_mem_release(pool->spare, POOL_CHUNK);
    pool->spare = NULL;
    while (pool->head != NULL) {
        struct sc_pool_chunk *n = pool->head->next;
        sc_mem_release(pool->head, POOL_CHUNK);
        pool->head = n;
    }
}
