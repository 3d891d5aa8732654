/*
 * fake_scan.h -- scan results built by hand, for the store's tests.
 *
 * fake_scan.c implements every accessor of scan.h over a result that a
 * test fills field by field, so that the store can be tried on values no
 * real image gives easily: names holding any byte, paths that are not
 * UTF-8, 64-bit values past INT64_MAX, duplicate entry ids (a failing
 * write), cross-linked blocks, lost trees.  A program links fake_scan.c instead of the
 * scan engine, never beside it.  scan_image and scan_fs are not provided.
 *
 * Every function aborts the test program when out of memory.
 */
#pragma once

#include "scan.h"

/* A result with a geometry of 2^blockbits-byte blocks, addrlen, `blocks` blocks
 * and a map of `blocks` cells (all SCAN_BLK_UNKNOWN), a superblock that says
 * the same and an image of blocks << blockbits bytes. */
struct scan_result *fake_new(unsigned blockbits, unsigned addrlen, uint64_t blocks);

/* Drop the superblock (scan_super gives NULL) or the geometry (scan_geom NULL). */
void fake_no_super(struct scan_result *r);
void fake_no_geom(struct scan_result *r);
void fake_set_inferred(struct scan_result *r, bool inferred);
/* The superblock the result carries, to change fields. */
struct lanyfs_super *fake_super(struct scan_result *r);

/*
 * Add an entry with the next id (returned; ids may be forced with
 * fake_set_id).  name_len bytes of name are its name (at most 256), path its
 * path (bytes up to a NUL), data its ndata data blocks (copied; may be NULL).
 */
uint32_t fake_entry(struct scan_result *r, uint64_t block, uint32_t parent,
                    enum scan_entry_state state, uint8_t type, const void *name,
                    size_t name_len, const char *path, uint64_t size, const uint64_t *data,
                    uint64_t ndata);
/* The entry last added, to change fields. */
struct scan_entry *fake_last_entry(struct scan_result *r);

/* Add a finding; path and text are copied (may be NULL). */
void fake_finding(struct scan_result *r, uint32_t code, uint32_t entry, uint64_t block,
                  uint64_t block2, uint64_t value, uint64_t value2, uint64_t count,
                  uint64_t count2, const char *path, const char *text);

/*
 * Add a lost tree with top extender `top` holding the data of entry (0: not
 * known): data its ndata data blocks in file order (0 a hole), exts its
 * nexts extenders (both copied; may be NULL).  mapped is counted from data.
 */
void fake_lost_tree(struct scan_result *r, uint64_t top, uint32_t entry, uint64_t size,
                    const uint64_t *data, uint64_t ndata, const uint64_t *exts, uint64_t nexts);

/* Set one map cell. */
void fake_block(struct scan_result *r, uint64_t blk, enum scan_class cls, uint8_t flags,
                uint16_t wrcnt, uint32_t owner, uint64_t index);
