/*
 * scan.c -- the scanner's driver, result accessors and summary (scan.h).
 *
 * The passes run in a fixed order, each in its own file (scan_priv.h has
 * the list and the reason for the order):
 *
 *   SUPER    super.c (and infer.c)   block 0, the geometry, the map
 *   FREE     freelist.c              chain blocks and listed blocks
 *   TREE     tree.c, files.c         directory trees, extender trees
 *   SWEEP    sweep.c                 every block; deleted and orphaned entries
 *   ANALYSE  marks.c, files.c,       driver marks, leaks, sizes, counters,
 *            counters.c              times
 *
 * Each pass reports progress at its start and now and then; the cancel flag
 * is polled in every loop that the disk's size controls.  A pass returns
 * false only when the scan must stop (out of memory, cancelled): the
 * result is then freed and the reason returned.  Everything a damaged disk
 * does is a finding, never a failed scan.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scan_priv.h"

bool sc_stopped(struct scan_result *r)
{
    if (r->stop == LANYFS_OK && r->opts != NULL && r->opts->cancel != NULL && *r->opts->cancel)
        r->stop = LANYFS_E_INVAL;
    return r->stop != LANYFS_OK;
}

bool sc_oom(struct scan_result *r)
{
    if (r->stop == LANYFS_OK)
        r->stop = LANYFS_E_NOMEM;
    return false;
}

void sc_progress(struct scan_result *r, enum scan_phase phase, uint64_t done, uint64_t total)
{
    if (r->opts == NULL || r->opts->progress == NULL)
        return;
    if (total != 0 && done > total)
        done = total;
    r->opts->progress(r->opts->progress_ctx, phase, done, total);
}

static bool run(struct scan_result *r)
{
    sc_prefault_start(r);
    sc_progress(r, SCAN_PHASE_SUPER, 0, 1);
    if (!sc_super_pass(r) || sc_stopped(r) || !sc_map_init(r))
        return false;
    sc_progress(r, SCAN_PHASE_SUPER, 1, 1);
    sc_entries_ready(r);
    if (!sc_free_pass(r) || sc_stopped(r))
        return false;
    sc_freeread_start(r);
    if (!sc_tree_pass(r) || sc_stopped(r) || !sc_files_pass(r) || sc_stopped(r))
        return false;
    sc_freeread_wait(r);
    sc_super_settle(r);
    bool swept = sc_sweep_pass(r);
    sc_freeread_drop(r);
    if (!swept || sc_stopped(r))
        return false;
    sc_progress(r, SCAN_PHASE_ANALYSE, 0, 5);
    if (!sc_marks_leaks(r) || sc_stopped(r))
        return false;
    sc_progress(r, SCAN_PHASE_ANALYSE, 1, 5);
    if (!sc_marks_free(r) || !sc_files_judge(r) || sc_stopped(r))
        return false;
    sc_progress(r, SCAN_PHASE_ANALYSE, 3, 5);
    if (!sc_counters_pass(r) || !sc_marks_times(r) || !sc_marks_orphans(r) || sc_stopped(r))
        return false;
    sc_marks_settle(r);
    sc_map_clear_scratch(r);
    sc_prefault_stop(r);
    sc_read_done(r);
    sc_progress(r, SCAN_PHASE_ANALYSE, 5, 5);
    sc_progress(r, SCAN_PHASE_DONE, 1, 1);
    return true;
}

enum lanyfs_err scan_fs(struct lanyfs_fs *fs, const struct scan_opts *opts,
                        struct scan_result **out, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    *out = NULL;
    struct scan_result *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
    r->fs = fs;
    r->img = lanyfs_fs_image(fs);
    r->opts = opts;
    r->sb = *lanyfs_fs_super(fs);
    r->sb_lost = lanyfs_fs_super_lost(fs);
    if (opts != NULL && (opts->blocksize != 0 || opts->addrlen != 0)) {
        for (unsigned b = LANYFS_BLOCKBITS_MIN; b <= LANYFS_BLOCKBITS_MAX; b++)
            if (opts->blocksize == 1u << b)
                r->given_bits = b;
        if (r->given_bits == 0 ||
            (opts->addrlen != 0 &&
             (opts->addrlen < LANYFS_ADDRLEN_MIN || opts->addrlen > LANYFS_ADDRLEN_MAX))) {
            free(r);
            return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                               "a given geometry needs a block size of 512, 1024, 2048 or 4096 "
                               "bytes and an address length of 1 to 8 bytes (or none, to "
                               "infer it)");
        }
        r->geom_given = true;
        r->given_addrlen = opts->addrlen;
    }
    bool ran = run(r);
    sc_prefault_stop(r);
    if (!ran) {
        rc = r->stop != LANYFS_OK ? r->stop : LANYFS_E_NOMEM;
        if (rc == LANYFS_E_INVAL)
            lanyfs_fail(err, rc, LANYFS_NO_BLOCK, "%s: the scan was cancelled",
                        lanyfs_image_path(r->img));
        else
            lanyfs_fail(err, rc, LANYFS_NO_BLOCK, "%s: out of memory while scanning",
                        lanyfs_image_path(r->img));
        scan_result_free(r);
        goto out;
    }
    r->opts = NULL;
    *out = r;
out:
    return rc;
}

enum lanyfs_err scan_image(const char *path, const struct scan_opts *opts,
                           struct scan_result **out, struct lanyfs_error *err)
{
    struct lanyfs_fs *fs = NULL;
    *out = NULL;
    /* A block 0 with sectors that fail still opens: the sweep reports the
     * block unreadable, and an unreadable first sector (the superblock's)
     * is SB_UNREADABLE, with the geometry inferred. */
    enum lanyfs_err rc = lanyfs_fs_open(path, LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0, &fs, err);
    if (rc != LANYFS_OK)
        goto out;
    rc = scan_fs(fs, opts, out, err);
    if (rc != LANYFS_OK) {
        lanyfs_fs_close(fs);
        goto out;
    }
    (*out)->own_fs = true;
out:
    return rc;
}

void scan_result_free(struct scan_result *r)
{
    if (r == NULL)
        return;
    sc_prefault_stop(r);
    sc_freeread_drop(r);
    sc_subprobe_free(&r->sub);
    sc_findings_free(r);
    sc_entries_free(r);
    sc_lost_free(r);
    sc_read_done(r);
    sc_torn_free(r);
    free(r->excess);
    free(r->oexcess);
    sc_cellbits_free(&r->free_doubted);
    sc_cellbits_free(&r->cut_listed);
    sc_cellbits_free(&r->run_flipped);
    sc_cellbits_free(&r->listed_taken);
    sc_cellbits_free(&r->ext_named);
    free(r->map);
    if (r->own_fs)
        lanyfs_fs_close(r->fs);
    free(r);
}

const struct lanyfs_geom *scan_geom(const struct scan_result *r)
{
    return &r->g;
}

const struct lanyfs_super *scan_super(const struct scan_result *r)
{
    return r->sb_lost ? NULL : &r->sb;
}

bool scan_geom_inferred(const struct scan_result *r)
{
    return r->inferred;
}

bool scan_geom_given(const struct scan_result *r)
{
    return r->geom_given;
}

bool scan_geom_addrlen_given(const struct scan_result *r)
{
    return r->geom_given && r->given_addrlen != 0;
}

void scan_get_anchors(const struct scan_result *r, struct scan_anchors *out)
{
    out->rootdir = r->rootdir;
    out->freehead = r->freehead;
    out->freetail = r->freehead != 0 ? r->free_end : 0;
    out->free_listed = r->free_listed;
}

uint64_t scan_image_bytes(const struct scan_result *r)
{
    return r->image_bytes;
}

size_t scan_findings(const struct scan_result *r, const struct scan_finding **out)
{
    *out = r->findings;
    return r->nfindings;
}

size_t scan_entries(const struct scan_result *r, const struct scan_entry **out)
{
    *out = r->entries;
    return r->nentries;
}

const struct scan_entry *scan_entry_by_id(const struct scan_result *r, uint32_t id)
{
    if (id == 0 || id > r->nentries)
        return NULL;
    return &r->entries[id - 1];
}

uint64_t scan_bytes_read(const struct scan_result *r)
{
    return r->bytes_read;
}

uint64_t scan_block_count(const struct scan_result *r)
{
    return r->nblocks;
}

const struct scan_block *scan_blocks(const struct scan_result *r)
{
    return r->map;
}

void scan_summarize(const struct scan_result *r, struct scan_summary *s)
{
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < r->nentries; i++) {
        const struct scan_entry *x = &r->entries[i];
        switch (x->state) {
        case SCAN_ENTRY_LIVE:
            if (scan_entry_is_dir(x)) {
                s->dirs++;
            } else {
                s->files++;
                s->bytes += x->e.size;
            }
            break;
        case SCAN_ENTRY_DELETED:
            s->deleted++;
            break;
        case SCAN_ENTRY_ORPHAN:
            s->orphans++;
            break;
        }
    }
    for (uint64_t b = 0; b < r->nblocks; b++)
        if (r->map[b].cls < SCAN_BLK_CLASSES)
            s->by_class[r->map[b].cls]++;
    s->free_listed = r->free_listed;
    s->worst = SCAN_SEV_INFO;
    for (size_t i = 0; i < r->nfindings; i++) {
        const struct scan_problem_info *p = scan_problem_lookup(r->findings[i].code);
        enum scan_severity sev = p ? p->severity : SCAN_SEV_ERROR;
        if ((unsigned)sev < 4)
            s->findings_by_severity[sev]++;
        if (sev > s->worst)
            s->worst = sev;
    }
}

const char *scan_class_name(enum scan_class c)
{
    static const char *const names[SCAN_BLK_CLASSES] = {
        [SCAN_BLK_UNKNOWN] = "unknown",
        [SCAN_BLK_SUPER] = "super",
        [SCAN_BLK_DIR] = "dir",
        [SCAN_BLK_FILE] = "file",
        [SCAN_BLK_EXTENDER] = "extender",
        [SCAN_BLK_DATA] = "data",
        [SCAN_BLK_CHAIN] = "chain",
        [SCAN_BLK_FREE] = "free",
        [SCAN_BLK_LEAKED] = "leaked",
        [SCAN_BLK_ORPHAN] = "orphan",
        [SCAN_BLK_DELETED] = "deleted",
        [SCAN_BLK_UNREADABLE] = "unreadable",
        [SCAN_BLK_BEYOND] = "beyond",
        [SCAN_BLK_ORPHAN_EXT] = "orphan-extender",
    };
    if ((unsigned)c >= SCAN_BLK_CLASSES)
        return "invalid";
    return names[c];
}

const char *scan_entry_state_name(enum scan_entry_state s)
{
    switch (s) {
    case SCAN_ENTRY_LIVE:
        return "live";
    case SCAN_ENTRY_DELETED:
        return "deleted";
    case SCAN_ENTRY_ORPHAN:
        return "orphan";
    }
    return "invalid";
}
