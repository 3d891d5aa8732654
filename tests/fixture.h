/*
 * fixture.h -- small LanyFS images built in memory for tests.
 *
 * A fixture is a whole image held in memory: a superblock at block 0 and a
 * root directory "LANYFSROOT" at block 1, every timestamp fixed at
 * 2026-12-03T01:02:15Z.  Directories and files are added with the core
 * codec alone (lanyfs_*_encode), never through a writer of the project, so
 * a test of a writer or a reader can compare against an image built by
 * other means.  Tree insertion follows the reversed order of SPEC-§5
 * (greater names LEFT), compared here with its own bytewise code.
 *
 * Blocks are handed out in ascending order; every block not handed out is
 * free, and fx_save lists them all in a free list of chain blocks (type
 * 0x70, the last slot of each chain block left empty, freeblocks, freehead
 * and freetail exact) before writing the image.  Tests corrupt the image on
 * purpose through fx_block and the fx_set_* helpers; fx_write writes the
 * bytes as they are, without touching the free list.
 *
 * Functions that return a block return 0 on failure (no space, a duplicate
 * name, a bad argument); block 0 is the superblock and never an answer.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "lanyfs.h"

struct fx;

/* The fixed time of every timestamp a fixture writes: 2026-12-03T01:02:15Z. */
#define FX_TIME_EPOCH 1796259735

/*
 * A new image of `blocks` blocks of 2^blockbits bytes with addrlen-byte slot
 * addresses.  NULL when the geometry is outside the format (blockbits 9..12,
 * addrlen 1..8), blocks < 3, blocks beyond what addrlen bytes reach, or the
 * image would exceed 1 GiB.
 */
struct fx *fx_new(unsigned blockbits, unsigned addrlen, uint64_t blocks);
void fx_free(struct fx *fx);

/* The root directory's block (1). */
uint64_t fx_root(struct fx *fx);

/* A new empty directory `name` in the directory at block parent. */
uint64_t fx_mkdir(struct fx *fx, uint64_t parent, const char *name);

/*
 * A new file `name` in the directory parent holding len bytes of data: data
 * blocks and an extender tree of as many levels as len needs (no data
 * pointer when len is 0).  Blocks are allocated in the order: entry, top
 * extender, then depth first (each extender before the blocks it maps).
 */
uint64_t fx_file(struct fx *fx, uint64_t parent, const char *name, const void *data, size_t len);

/* Raw bytes of block blk (blocksize bytes), NULL beyond the image. */
uint8_t *fx_block(struct fx *fx, uint64_t blk);

/* The next unused block, zeroed and marked used; 0 when none is left. */
uint64_t fx_alloc(struct fx *fx);

/* Build the free list (fx_freelist) and write the image; 0 on success. */
int fx_save(struct fx *fx, const char *path);

/* Same, but write only the first `bytes` bytes of the image. */
int fx_save_truncated(struct fx *fx, const char *path, uint64_t bytes);

/* ---- further helpers ---------------------------------------------------- */

/* The fixture's geometry (blocks as created). */
const struct lanyfs_geom *fx_geom(const struct fx *fx);
uint64_t fx_blocks(const struct fx *fx);
uint32_t fx_blocksize(const struct fx *fx);
/* The whole image in memory, fx_blocks * fx_blocksize bytes. */
uint8_t *fx_image(struct fx *fx);
size_t fx_image_size(const struct fx *fx);

/* Blocks handed out so far (superblock and root included). */
uint64_t fx_used_count(const struct fx *fx);
/* Whether block blk has been handed out. */
int fx_is_used(const struct fx *fx, uint64_t blk);
/* Mark blk used (e.g. a block a test writes by hand); 0 on success. */
int fx_mark_used(struct fx *fx, uint64_t blk);

/*
 * Build the free list of every unused block into the image and set
 * freehead, freetail and freeblocks in block 0 (nothing else of block 0 is
 * changed).  The chain blocks are the lowest unused block and then, after
 * each chain block's chainmax - 1 slots, the next unused one.  Returns the
 * number of chain blocks.  Safe to call again: the same blocks are used.
 */
uint64_t fx_freelist(struct fx *fx);

/* Write the image as it is now (no free list is built); 0 on success. */
int fx_write(struct fx *fx, const char *path);
int fx_write_truncated(struct fx *fx, const char *path, uint64_t bytes);

/* Decode and re-encode the superblock; fx_super_put keeps bytes beyond 376. */
void fx_super_get(struct fx *fx, struct lanyfs_super *sb);
void fx_super_put(struct fx *fx, const struct lanyfs_super *sb);
/* Set the volume label (at most 256 bytes, NUL padded). */
void fx_set_label(struct fx *fx, const char *label);

/* Decode the entry at blk into *e; fx_entry_put encodes it back. */
void fx_entry_get(struct fx *fx, uint64_t blk, struct lanyfs_entry *e);
void fx_entry_put(struct fx *fx, uint64_t blk, const struct lanyfs_entry *e);

/*
 * A new entry block of the given type (LANYFS_TYPE_DIR or _FILE) and name,
 * linked into no tree, for hand-built trees.  name_len bytes of name are
 * stored (at most 256; 256 leaves no NUL); other fields as fx_mkdir sets them.
 */
uint64_t fx_entry_new(struct fx *fx, uint8_t type, const void *name, size_t name_len);

/* Insert the existing entry blk into the tree of directory parent; 0 on success. */
int fx_link(struct fx *fx, uint64_t parent, uint64_t blk);

/* Set one 8-byte field of an entry block (left, right, subtree/data, size). */
void fx_set_left(struct fx *fx, uint64_t blk, uint64_t v);
void fx_set_right(struct fx *fx, uint64_t blk, uint64_t v);
void fx_set_subtree(struct fx *fx, uint64_t blk, uint64_t v);
void fx_set_size(struct fx *fx, uint64_t blk, uint64_t v);
/* Read the same fields back. */
uint64_t fx_get_left(struct fx *fx, uint64_t blk);
uint64_t fx_get_right(struct fx *fx, uint64_t blk);
uint64_t fx_get_subtree(struct fx *fx, uint64_t blk);
uint64_t fx_get_size(struct fx *fx, uint64_t blk);
/* Set the type byte of any block. */
void fx_set_type(struct fx *fx, uint64_t blk, uint8_t type);

/* A new extender of the given level with every slot empty. */
uint64_t fx_ext_new(struct fx *fx, unsigned level);
/* Slot i of the extender at blk; fx_ext_level its level byte. */
uint64_t fx_ext_get_slot(struct fx *fx, uint64_t blk, uint32_t i);
void fx_ext_set_slot(struct fx *fx, uint64_t blk, uint32_t i, uint64_t v);
unsigned fx_ext_level(struct fx *fx, uint64_t blk);
void fx_ext_set_level(struct fx *fx, uint64_t blk, unsigned level);

/*
 * The disk block of file block fblk of the file at blk, walking the
 * fixture's own map (not the core's reader); 0 for a hole.  *ext_blk and
 * *ext_slot (either may be NULL) receive the level-0 extender and its slot,
 * or 0 and UINT32_MAX when the walk stops above level 0.
 */
uint64_t fx_file_dblk(struct fx *fx, uint64_t blk, uint64_t fblk, uint64_t *ext_blk,
                      uint32_t *ext_slot);

/* Slot i of the chain block at blk. */
uint64_t fx_chain_get_slot(struct fx *fx, uint64_t blk, uint32_t i);

/*
 * Fill buf with len bytes of a deterministic pattern that differs per seed
 * and per block, so a test can tell blocks apart.
 */
void fx_pattern(void *buf, size_t len, uint32_t seed);

/* The fixed timestamp, decoded. */
void fx_time(struct lanyfs_ts *ts);
