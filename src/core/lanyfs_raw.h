/*
 * lanyfs_raw.h -- the LanyFS 1.4 on-disk format as byte offsets.
 *
 * Nothing here is a struct laid over disk bytes: every field is named by its
 * offset and size inside its block, and read or written with the explicit
 * little-endian helpers of endian.h.  The native, decoded forms live in
 * lanyfs.h.  Section numbers (SPEC-§n) point into the format reference,
 * lanyfs-format.md.
 */
#pragma once

#include <assert.h>
#include <stdint.h>

/* SPEC-§1: block sizes 2^9 .. 2^12, addresses 1 .. 8 bytes. */
#define LANYFS_BLOCKBITS_MIN 9
#define LANYFS_BLOCKBITS_MAX 12
#define LANYFS_BLOCKSIZE_MIN (1u << LANYFS_BLOCKBITS_MIN)
#define LANYFS_BLOCKSIZE_MAX (1u << LANYFS_BLOCKBITS_MAX)
#define LANYFS_ADDRLEN_MIN 1
#define LANYFS_ADDRLEN_MAX 8
#define LANYFS_SECTOR_SIZE 512 /* what a stick writes atomically, SPEC-§8 */

/* SPEC-§2: block types. */
#define LANYFS_TYPE_FREE 0x00  /* optional, never written by the driver */
#define LANYFS_TYPE_DIR 0x10   /* directory */
#define LANYFS_TYPE_FILE 0x20  /* file */
#define LANYFS_TYPE_CHAIN 0x70 /* free-list chain block */
#define LANYFS_TYPE_EXT 0x80   /* extender (also the 2012 formatter's chain type) */
#define LANYFS_TYPE_DATA 0xA0  /* internal only, never on disk */
#define LANYFS_TYPE_SUPER 0xD0 /* superblock */
#define LANYFS_TYPE_BAD 0xE0   /* optional */

/* SPEC-§2: common header. */
#define LANYFS_HDR_TYPE 0  /* u8 */
#define LANYFS_HDR_RES1 1  /* u8 reserved */
#define LANYFS_HDR_WRCNT 2 /* le16 write counter */

/* SPEC-§3: superblock, block 0, 376 bytes used. */
#define LANYFS_SB_MAGIC 4       /* le32 */
#define LANYFS_SB_MAJOR 8       /* u8 */
#define LANYFS_SB_RES9 9        /* u8 */
#define LANYFS_SB_MINOR 10      /* u8 */
#define LANYFS_SB_RES11 11      /* u8 */
#define LANYFS_SB_BLOCKBITS 12  /* u8, exponent */
#define LANYFS_SB_RES13 13      /* u8 */
#define LANYFS_SB_ADDRLEN 14    /* u8, bytes */
#define LANYFS_SB_RES15 15      /* u8 */
#define LANYFS_SB_ROOTDIR 16    /* le64 */
#define LANYFS_SB_BLOCKS 24     /* le64 */
#define LANYFS_SB_FREEHEAD 32   /* le64 */
#define LANYFS_SB_FREETAIL 40   /* le64 */
#define LANYFS_SB_FREEBLOCKS 48 /* le64 */
#define LANYFS_SB_CREATED 56    /* timestamp */
#define LANYFS_SB_UPDATED 72    /* timestamp */
#define LANYFS_SB_CHECKED 88    /* timestamp */
#define LANYFS_SB_BADBLOCKS 104 /* le64 */
#define LANYFS_SB_RES112 112    /* 8 bytes reserved */
#define LANYFS_SB_LABEL 120     /* 256 bytes */
#define LANYFS_SB_USED 376

#define LANYFS_MAGIC 0x594E414Cu /* "LANY" */
#define LANYFS_VERSION_MAJOR 1
#define LANYFS_VERSION_MINOR 4

/* SPEC-§4: timestamp, 16 bytes. */
#define LANYFS_TS_SIZE 16
#define LANYFS_TS_YEAR 0    /* le16 */
#define LANYFS_TS_MONTH 2   /* u8 */
#define LANYFS_TS_DAY 3     /* u8 */
#define LANYFS_TS_HOUR 4    /* u8 */
#define LANYFS_TS_MINUTE 5  /* u8 */
#define LANYFS_TS_SECOND 6  /* u8 */
#define LANYFS_TS_RES7 7    /* u8 */
#define LANYFS_TS_NSEC 8    /* le32 */
#define LANYFS_TS_OFFSET 12 /* le16, signed minutes east of UTC */
#define LANYFS_TS_RES14 14  /* le16 */

/* SPEC-§5: directory and file blocks, 360 bytes used. */
#define LANYFS_EN_RES4 4       /* 4 bytes reserved */
#define LANYFS_EN_LEFT 8       /* le64 */
#define LANYFS_EN_RIGHT 16     /* le64 */
#define LANYFS_EN_SUBTREE 24   /* le64: directory subtree, file data */
#define LANYFS_EN_SIZE 32      /* le64: file size in bytes, reserved in a directory */
#define LANYFS_EN_RES40 40     /* 16 bytes reserved */
#define LANYFS_EN_CREATED 56   /* timestamp */
#define LANYFS_EN_MODIFIED 72  /* timestamp */
#define LANYFS_EN_RES88 88     /* 14 bytes reserved */
#define LANYFS_EN_ATTR 102     /* le16 */
#define LANYFS_EN_NAME 104     /* 256 bytes */
#define LANYFS_EN_USED 360
#define LANYFS_NAME_FIELD 256
#define LANYFS_NAME_MAX 255

#define LANYFS_ATTR_NOWRITE 0x0001
#define LANYFS_ATTR_NOEXEC 0x0002
#define LANYFS_ATTR_HIDDEN 0x0004
#define LANYFS_ATTR_ARCHIVE 0x0008

#define LANYFS_ROOT_NAME "LANYFSROOT"

/* SPEC-§6: chain blocks. */
#define LANYFS_CH_RES4 4   /* 4 bytes reserved */
#define LANYFS_CH_NEXT 8   /* le64 */
#define LANYFS_CH_SLOTS 16 /* addrlen-byte slots to the end of the block */

/* SPEC-§7: extender blocks. */
#define LANYFS_EXT_LEVEL 4 /* u8 */
#define LANYFS_EXT_SLOTS 5 /* addrlen-byte slots to the end of the block */
#define LANYFS_EXT_LEVEL_MAX 63 /* deepest level a reader follows: 2^(8*8) blocks need no more */

static_assert(LANYFS_SB_LABEL + LANYFS_NAME_FIELD == LANYFS_SB_USED, "superblock size");
static_assert(LANYFS_EN_NAME + LANYFS_NAME_FIELD == LANYFS_EN_USED, "entry block size");
static_assert(LANYFS_SB_USED <= LANYFS_BLOCKSIZE_MIN, "superblock fits the smallest block");
static_assert(LANYFS_SB_CHECKED + LANYFS_TS_SIZE == LANYFS_SB_BADBLOCKS, "superblock layout");
static_assert(LANYFS_EN_MODIFIED + LANYFS_TS_SIZE == LANYFS_EN_RES88, "entry layout");
