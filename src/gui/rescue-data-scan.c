/*
 * rescue-data-scan.c -- a RescueData over a scanner's result (scan.h).
 *
 * The result is taken over: the RescueData keeps it alive and borrows its
 * block map and the entries' data maps instead of copying them (16 bytes a
 * block stay 16 bytes a block).  Entries keep the scanner's ids, so an id
 * in a finding is an id here; the lost extender trees of no known file
 * follow them as entries of their own (rescue_data_append_lost).  Names
 * and paths are escaped for display; the messages come from
 * scan_finding_message_translated(), in the user's language (a scan read
 * back from a database keeps the English text it stores).
 */
#define G_LOG_DOMAIN "rescue-data"

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "rescue-data-scan.h"

static void free_result(gpointer p)
{
    scan_result_free(p);
}

RescueData *rescue_data_new_from_scan(struct scan_result *result, RescueSourceKind kind,
                                      const char *source_path)
{
    RescueData *data;
    const struct scan_entry *entries;
    const struct scan_finding *findings;
    const struct lanyfs_geom *g;
    const struct lanyfs_super *sb;
    struct scan_summary summary;
    RescueGeometry *geom;
    size_t n;

    g_return_val_if_fail(result != NULL, NULL);

    data = rescue_data_new(kind, source_path);
    rescue_data_keep(data, result, free_result);
    rescue_data_set_scan_result(data, result);

    geom = rescue_data_geometry_mut(data);
    g = scan_geom(result);
    if (g != NULL) {
        geom->have_geometry = TRUE;
        geom->blocksize = g->blocksize;
        geom->addrlen = g->addrlen;
        geom->fs_blocks = g->blocks;
    }
    geom->inferred = scan_geom_inferred(result);
    geom->image_bytes = scan_image_bytes(result);
    sb = scan_super(result);
    if (sb != NULL) {
        char label[LANYFS_NAME_FIELD + 1];
        lanyfs_super_label(sb, label, sizeof(label));
        geom->label = rescue_escape_bytes(label, strlen(label));
        if (g == NULL || sb->blocks < g->blocks)
            geom->fs_blocks = sb->blocks;
    }

    n = scan_entries(result, &entries);
    for (size_t i = 0; i < n; i++) {
        const struct scan_entry *se = &entries[i];
        RescueEntryInfo *e;

        /* Ids are 1..n in order; a result that says otherwise is taken by position. */
        e = rescue_data_append_entry(data, se->e.name, MIN(se->e.name_len, LANYFS_NAME_FIELD),
                                     se->path);
        e->parent = se->parent <= n ? se->parent : 0;
        e->block = se->block;
        e->state = se->state <= SCAN_ENTRY_ORPHAN ? se->state : SCAN_ENTRY_ORPHAN;
        e->type = se->e.type;
        e->attr = se->e.attr;
        e->wrcnt = se->e.wrcnt;
        e->size = se->e.size;
        e->created = rescue_time_from_ts(&se->e.created);
        e->modified = rescue_time_from_ts(&se->e.modified);
        e->blocks_needed = se->blocks_needed;
        e->blocks_mapped = se->blocks_mapped;
        e->blocks_intact = se->blocks_intact;
        rescue_data_set_entry_data(data, e->id, se->data, se->data != NULL ? se->ndata : 0, TRUE);
    }

    /* Lost trees after the entries: a tree of no known file is a new entry. */
    {
        const struct scan_lost_tree *lost;
        size_t nentries = n;
        size_t nlost = scan_lost_trees(result, &lost);
        for (size_t i = 0; i < nlost; i++)
            rescue_data_append_lost(data, lost[i].top,
                                    lost[i].entry <= nentries ? lost[i].entry : 0, lost[i].size,
                                    lost[i].mapped, lost[i].data, lost[i].ndata, TRUE);
    }

    n = scan_findings(result, &findings);
    for (size_t i = 0; i < n; i++) {
        const struct scan_finding *sf = &findings[i];
        const struct scan_problem_info *row = scan_problem_lookup(sf->code);
        char *msg = scan_finding_message_translated(sf);

        RescueFindingInfo *fi =
            rescue_data_append_finding(data, sf->code, row != NULL ? row->severity : SCAN_SEV_ERROR,
                                       sf->entry, sf->block, sf->block2, msg, sf->path);
        if (fi != NULL) {
            fi->value = sf->value;
            fi->value2 = sf->value2;
        }
        free(msg);
    }

    rescue_data_set_blocks(data, scan_blocks(result), scan_block_count(result), result, NULL);
    scan_summarize(result, &summary);
    rescue_data_set_summary(data, &summary);
    rescue_data_finish(data);
    return data;
}
