/*
 * fuzz_scan.c -- fuzz target: an image's bytes through the whole scanner.
 *
 * The input is written to an in-memory file (memfd) and scanned with
 * scan_image, which opens it with LANYFS_OPEN_FORCE, walks the free list,
 * the trees and every extender tree, sweeps every block and judges the
 * marks (for half the inputs with a geometry given: fuzz_given_geometry).
 * Besides the sanitizers, it checks what scan.h promises: a failed
 * scan returns no result and a terminated message; a damaged image is a
 * successful scan; every finding has a catalogue row and a message with
 * every field filled; every map cell has a class and an owner that exists;
 * entries are numbered 1.. in order, have a path, and list only blocks
 * inside the device; the summary's classes add up to the map.  Without a
 * given geometry, scan_locate (lanyfs ls -f) must find the scan's geometry.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "scan.h"

static void check_findings(const struct scan_result *r)
{
    const struct scan_finding *f;
    size_t n = scan_findings(r, &f);
    const struct scan_entry *e;
    size_t ne = scan_entries(r, &e);
    for (size_t i = 0; i < n; i++) {
        const struct scan_problem_info *p = scan_problem_lookup(f[i].code);
        FUZZ_CHECK(p != NULL, "finding %zu has code 0x%06x, which the catalogue lacks", i,
                   (unsigned)f[i].code);
        FUZZ_CHECK(!(p->flags & SCAN_PF_RETIRED), "finding %zu has retired code %s", i, p->name);
        FUZZ_CHECK(f[i].entry <= ne, "finding %zu names entry %u of %zu", i, f[i].entry, ne);
        char *m = scan_finding_message(&f[i]);
        FUZZ_CHECK(m != NULL, "finding %zu has no message", i);
        free(m);
    }
}

static void check_map(const struct scan_result *r)
{
    const struct scan_block *m = scan_blocks(r);
    uint64_t n = scan_block_count(r);
    const struct scan_entry *e;
    size_t ne = scan_entries(r, &e);
    for (uint64_t b = 0; b < n; b++) {
        FUZZ_CHECK(m[b].cls < SCAN_BLK_CLASSES, "block %llu has class %u",
                   (unsigned long long)b, m[b].cls);
        FUZZ_CHECK(m[b].owner <= ne, "block %llu owned by entry %u of %zu",
                   (unsigned long long)b, m[b].owner, ne);
        FUZZ_CHECK((m[b].flags & 0xf0) == 0, "block %llu keeps scratch flags 0x%02x",
                   (unsigned long long)b, m[b].flags);
    }
    if (n > 0)
        FUZZ_CHECK(m[0].cls == SCAN_BLK_SUPER, "block 0 is class %u", m[0].cls);
    struct scan_summary s;
    scan_summarize(r, &s);
    uint64_t sum = 0;
    for (int c = 0; c < SCAN_BLK_CLASSES; c++)
        sum += s.by_class[c];
    FUZZ_CHECK(sum == n, "summary classes add up to %llu, the map has %llu",
               (unsigned long long)sum, (unsigned long long)n);
}

static void check_entries(const struct scan_result *r)
{
    const struct scan_entry *e;
    size_t n = scan_entries(r, &e);
    uint64_t dev = scan_geom(r)->blocks;
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(e[i].id == i + 1, "entry %zu has id %u", i, e[i].id);
        FUZZ_CHECK(scan_entry_by_id(r, e[i].id) == &e[i], "entry %u not found by id", e[i].id);
        FUZZ_CHECK(e[i].path != NULL && e[i].path[0] == '/', "entry %u has path '%s'", e[i].id,
                   e[i].path ? e[i].path : "(null)");
        FUZZ_CHECK(e[i].parent <= n, "entry %u has parent %u", e[i].id, e[i].parent);
        FUZZ_CHECK(e[i].block != 0 && e[i].block < dev, "entry %u at block %llu", e[i].id,
                   (unsigned long long)e[i].block);
        FUZZ_CHECK(e[i].blocks_intact <= e[i].blocks_mapped, "entry %u: %llu of %llu intact",
                   e[i].id, (unsigned long long)e[i].blocks_intact,
                   (unsigned long long)e[i].blocks_mapped);
        FUZZ_CHECK(e[i].ndata == 0 || e[i].data != NULL, "entry %u: data missing", e[i].id);
        for (uint64_t k = 0; k < e[i].ndata; k++)
            FUZZ_CHECK(e[i].data[k] < dev, "entry %u maps block %llu past the device", e[i].id,
                       (unsigned long long)e[i].data[k]);
        (void)scan_entry_state_name(e[i].state);
    }
    FUZZ_CHECK(scan_entry_by_id(r, 0) == NULL && scan_entry_by_id(r, (uint32_t)n + 1) == NULL,
               "entries found by ids that do not exist");
}

/*
 * The light path of `lanyfs ls -f` (scan_locate, then reads through the
 * superblock it implies) over the image the scan just read: the geometry
 * must be the scan's, the root inside the device, and the root's listing
 * must not fail in any way but a clean error.
 */
static void check_locate(const char *path, const struct scan_result *r)
{
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error err;
    if (lanyfs_fs_open(path, LANYFS_OPEN_FORCE | LANYFS_OPEN_BAD0, &fs, &err) != LANYFS_OK)
        return;
    struct scan_location loc;
    if (scan_locate(fs, &loc, &err) != LANYFS_OK) {
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL, "unterminated message");
        lanyfs_fs_close(fs);
        return;
    }
    const struct lanyfs_geom *g = scan_geom(r);
    FUZZ_CHECK(loc.blockbits == g->blockbits && loc.addrlen == g->addrlen,
               "located %u:%u, scanned %u:%u", loc.blockbits, loc.addrlen, g->blockbits,
               g->addrlen);
    FUZZ_CHECK(loc.rootdir < loc.blocks || loc.rootdir == 0, "root %llu of %llu blocks",
               (unsigned long long)loc.rootdir, (unsigned long long)loc.blocks);
    FUZZ_CHECK(loc.how == NULL || strlen(loc.how) > 0, "empty account of the inference");
    if (loc.rootdir != 0) {
        struct lanyfs_super sb = *lanyfs_fs_super(fs);
        sb.blockbits = (uint8_t)loc.blockbits;
        sb.addrlen = (uint8_t)loc.addrlen;
        sb.blocks = loc.blocks;
        sb.rootdir = loc.rootdir;
        if (lanyfs_fs_assume_super(fs, &sb, &err) == LANYFS_OK) {
            uint64_t blk;
            struct lanyfs_entry e;
            if (lanyfs_path_resolve(fs, "/", &blk, &e, &err) == LANYFS_OK)
                FUZZ_CHECK(blk == loc.rootdir, "root resolved to %llu, located %llu",
                           (unsigned long long)blk, (unsigned long long)loc.rootdir);
            else
                FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL,
                           "unterminated message");
        }
    }
    scan_location_free(&loc);
    lanyfs_fs_close(fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct scan_result *r = NULL;
    struct lanyfs_error err;
    struct scan_opts so = {0};
    fuzz_given_geometry(data, size, &so.blocksize, &so.addrlen);
    enum lanyfs_err rc = scan_image(fuzz_memfd_image(data, size, NULL), &so, &r, &err);
    if (rc != LANYFS_OK) {
        FUZZ_CHECK(r == NULL, "failed scan returned a result");
        FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL, "unterminated message");
        FUZZ_CHECK(rc != LANYFS_E_INVAL, "a scan without a cancel flag was cancelled");
        return 0;
    }
    FUZZ_CHECK(r != NULL, "successful scan without a result");
    FUZZ_CHECK(scan_image_bytes(r) == size, "image of %zu bytes scanned as %llu", size,
               (unsigned long long)scan_image_bytes(r));
    FUZZ_CHECK(scan_geom_given(r) == (so.blocksize != 0), "a given geometry not taken");
    FUZZ_CHECK(scan_geom_addrlen_given(r) == (so.addrlen != 0), "a given address length not taken");
    if (so.blocksize != 0)
        FUZZ_CHECK(scan_geom(r)->blocksize == so.blocksize &&
                       (so.addrlen == 0 || scan_geom(r)->addrlen == so.addrlen),
                   "scanned with %u:%u, given %u:%u", scan_geom(r)->blocksize,
                   scan_geom(r)->addrlen, so.blocksize, so.addrlen);
    check_findings(r);
    check_map(r);
    check_entries(r);
    if (so.blocksize == 0)
        check_locate(fuzz_memfd_image(data, size, NULL), r);
    scan_result_free(r);
    return 0;
}
