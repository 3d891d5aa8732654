/*
 * prefault.c -- faulting in the scan's large arrays on a second thread.
 *
 * Memory the scan touches for the first time must be cleared by the
 * kernel, and on a machine under a hypervisor that costs about a
 * millisecond per megabyte: on an image of 100,000 small files a fifth
 * of the scan went into faulting in its entries.  So a helper thread
 * faults in (MADV_POPULATE_WRITE, bigmem.c) the next stretch of each
 * array before the scan reaches it, while the scan goes on with its walk
 * on the first core.  The helper only ever asks the kernel to back pages
 * that already belong to the array; it never reads or writes the array's
 * bytes, so the scan needs no lock to use them, and a page the helper
 * has not reached yet is simply faulted in by the scan itself, as without
 * the helper.  A track whose mapping moves (sc_mem_grow) is registered
 * again; a populate of the old range that races with the move finds it
 * gone or belonging to a new mapping, which it faults in harmlessly.
 *
 * Without the helper (threads unavailable, or pthread_create failing)
 * every call falls back to populating in the scan's own thread, as
 * bigmem.c's sc_mem_populate_ahead did before.
 *
 * The helper also takes one job at a time (sc_helper_job): a function it
 * calls step by step while no array needs faulting in, such as the read
 * of the free space (freeread.c).  A job shares nothing with the scan
 * but what it was handed; sc_helper_wait returns once it has finished
 * (or was abandoned because the helper stopped), after which the scan may
 * read what it left.
 */
#include <pthread.h>
#include <stdlib.h>

#include "scan_priv.h"

/* How far ahead of the scan the helper keeps each growing array. */
#define PF_AHEAD ((size_t)4 << 20)
/* The most one populate call takes, so that a stop waits for little. */
#define PF_STEP ((size_t)2 << 20)

struct pf_track {
    uint8_t *base; /* the mapping */
    size_t cap;    /* its bytes */
    size_t want;   /* fault in up to here */
    size_t done;   /* faulted in (or handed to the helper) up to here */
};

struct sc_prefault {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;                          /* the helper is to end */
    struct pf_track track[SC_PF_TRACKS];
    bool (*job)(void *ctx);             /* a step of the job; false when it is done */
    void *job_ctx;
    bool job_busy;                      /* a job is handed over and not finished */
};

static void *helper(void *arg)
{
    struct sc_prefault *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct pf_track *t = NULL;
        for (int i = 0; i < SC_PF_TRACKS && t == NULL; i++)
            if (p->track[i].done < p->track[i].want)
                t = &p->track[i];
        if (t == NULL && p->job_busy && !p->stop) {
            bool (*job)(void *) = p->job;
            void *ctx = p->job_ctx;
            pthread_mutex_unlock(&p->mu);
            bool more = job(ctx);
            pthread_mutex_lock(&p->mu);
            if (!more) {
                p->job_busy = false;
                pthread_cond_broadcast(&p->cv);
            }
            continue;
        }
        if (t == NULL) {
            if (p->stop)
                break;
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        uint8_t *from = t->base + t->done;
        size_t n = t->want - t->done < PF_STEP ? t->want - t->done : PF_STEP;
        t->done += n;
        pthread_mutex_unlock(&p->mu);
        sc_mem_populate(from, n);
        pthread_mutex_lock(&p->mu);
    }
    p->job_busy = false; /* abandoned, if it was not done */
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void sc_prefault_start(struct scan_result *r)
{
    struct sc_prefault *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return; /* populated in the scan's thread */
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return;
    }
    if (pthread_cond_init(&p->cv, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return;
    }
    if (pthread_create(&p->thread, NULL, helper, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return;
    }
    r->pf = p;
}

void sc_prefault_stop(struct scan_result *r)
{
    struct sc_prefault *p = r->pf;
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    for (int i = 0; i < SC_PF_TRACKS; i++)
        p->track[i].want = p->track[i].done; /* nothing more */
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    r->pf = NULL;
}

void sc_prefault_all(struct scan_result *r, enum sc_pf_track which, void *base, size_t bytes)
{
    struct sc_prefault *p = r->pf;
    if (p == NULL || (unsigned)which >= SC_PF_TRACKS) {
        sc_mem_populate(base, bytes);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->track[which] = (struct pf_track){(uint8_t *)base, bytes, bytes, 0};
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void sc_prefault_need(struct scan_result *r, enum sc_pf_track which, void *base, size_t need,
                      size_t *asked, size_t cap)
{
    struct sc_prefault *p = r->pf;
    if (p == NULL || (unsigned)which >= SC_PF_TRACKS) {
        sc_mem_populate_ahead(base, need, asked, cap);
        return;
    }
    /* *asked: how far the helper was asked to go; ask again at half way. */
    if (need + PF_AHEAD / 2 <= *asked || *asked >= cap)
        return;
    size_t want = cap - need > PF_AHEAD ? need + PF_AHEAD : cap;
    pthread_mutex_lock(&p->mu);
    struct pf_track *t = &p->track[which];
    if (t->base != base || t->cap != cap)
        *t = (struct pf_track){(uint8_t *)base, cap, *asked, *asked};
    if (want > t->want)
        t->want = want;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    *asked = want;
}

bool sc_helper_job(struct scan_result *r, bool (*step)(void *ctx), void *ctx)
{
    struct sc_prefault *p = r->pf;
    if (p == NULL)
        return false;
    pthread_mutex_lock(&p->mu);
    bool taken = !p->job_busy && !p->stop;
    if (taken) {
        p->job = step;
        p->job_ctx = ctx;
        p->job_busy = true;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return taken;
}

void sc_helper_wait(struct scan_result *r)
{
    struct sc_prefault *p = r->pf;
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    while (p->job_busy)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
