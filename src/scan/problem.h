/*
 * problem.h -- the findings catalogue: one stable code per problem.
 *
 * Every problem the scanner can report has one row here: a stable code,
 * its severity, a message template, the repair fsck proposes, and whether
 * preen (-p) may apply that repair unattended.  Code and tests refer to the
 * codes (SCAN_PR_*), never to message text; the database stores the code.
 *
 * Codes are 0xPPNNNN: PP is the pass that finds the problem, NNNN its number
 * within the pass.  Codes are never renumbered or reused; a retired code
 * keeps its row with SCAN_PF_RETIRED.  scan_problem_table_verify() checks
 * that the table is sorted and free of duplicates (run by the unit tests),
 * as e2fsck's verify_problem_table does.
 *
 * Message templates use named fields in braces, filled from the finding:
 * {block} {block2} {count} {count2} {path} {value} {value2} {text}.
 *
 * Templates and repairs are marked N_() for the project's catalogue
 * (po/, text domain SCAN_TEXT_DOMAIN) and stored in English: JSON, the
 * database and the codes' documentation keep that text.  What a person
 * reads goes through scan_problem_message_text and scan_problem_repair_text
 * (the template translated before its fields are filled, in
 * scan_finding_message_translated).
 */
#pragma once

#include <libintl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The text domain of the catalogue (GETTEXT_PACKAGE of the build). */
#define SCAN_TEXT_DOMAIN "lanyfs-tools"

/* As glib and src/cli/i18n.h spell it, so any of them may come first. */
#ifndef N_
#define N_(String) (String)
#endif

enum scan_severity {
    SCAN_SEV_INFO = 0,     /* a fact worth knowing, nothing is wrong */
    SCAN_SEV_WARNING = 1,  /* wasteful or suspicious; data is safe */
    SCAN_SEV_ERROR = 2,    /* the filesystem is inconsistent */
    SCAN_SEV_CRITICAL = 3, /* the filesystem cannot be read as it stands */
};

/* Flags of a catalogue row. */
#define SCAN_PF_PREEN_OK 0x01   /* preen may apply the repair unattended */
#define SCAN_PF_NO_REPAIR 0x02  /* nothing to repair: a report only */
#define SCAN_PF_DRIVER 0x04     /* a mark the 2012 driver or formatter leaves (SPEC-§9) */
#define SCAN_PF_RETIRED 0x08    /* no longer reported; the code stays reserved */

/* Passes: the high byte of a code. */
#define SCAN_PASS_SUPER 0x00    /* superblock and geometry */
#define SCAN_PASS_TREE 0x01     /* directory trees */
#define SCAN_PASS_FILE 0x02     /* files and extender trees */
#define SCAN_PASS_FREE 0x03     /* the free list */
#define SCAN_PASS_BLOCKS 0x04   /* block ownership and the sweep */
#define SCAN_PASS_COUNTER 0x05  /* write counters and torn writes */
#define SCAN_PASS_DRIVER 0x06   /* marks of the 2012 driver and formatter */

/*
 * X(NAME, code, severity, flags, message template, proposed repair).
 * Keep sorted by code.
 */
#define SCAN_PROBLEMS(X)                                                                        \
    /* ---- pass 0: superblock ---- */                                                          \
    X(SB_BAD_MAGIC, 0x000001, SCAN_SEV_CRITICAL, 0,                                             \
      /* TRANSLATORS: a finding's message.  The names in braces ({block},  */                   \
      /* {path}, {value}, ...) are filled in by the program: keep each one  */                  \
      /* exactly as it is (not translated), but move it where the sentence */                   \
      /* needs it.  Field names in quotes ('blocks', 'freehead') and SPEC-  */                  \
      /* references stay as they are. */                                                        \
      N_("superblock magic is {value}, not \"LANY\""),                                          \
      /* TRANSLATORS: the repair fsck-lanyfs proposes; it asks "...?" after  */                 \
      /* it with the first letter capitalised.  Braces as in the messages. */                   \
      N_("infer the geometry from the blocks and write a new superblock"))                      \
    X(SB_BAD_TYPE, 0x000002, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                                \
      N_("superblock type byte is {value}, not 0xd0"), N_("set the type byte to 0xd0"))         \
    X(SB_VERSION, 0x000003, SCAN_SEV_CRITICAL, SCAN_PF_NO_REPAIR,                               \
      N_("superblock version {text} is newer than this tool reads"),                            \
      N_("none: use a newer tool"))                                                             \
    X(SB_BAD_BLOCKSIZE, 0x000004, SCAN_SEV_CRITICAL, 0,                                         \
      N_("superblock block size exponent {value} is outside 9..12"),                            \
      N_("infer the block size from the blocks"))                                               \
    X(SB_BAD_ADDRLEN, 0x000005, SCAN_SEV_CRITICAL, 0,                                           \
      N_("superblock address length {value} is outside 1..8 bytes"),                            \
      N_("infer the address length from the chain and extender blocks"))                        \
    X(SB_BLOCKS_SMALL, 0x000006, SCAN_SEV_ERROR, 0,                                             \
      N_("superblock field 'blocks' is {value}, but the image holds {count} blocks"),           \
      N_("set 'blocks' from the image size and rebuild the free list over the new blocks"))     \
    X(SB_TRUNCATED, 0x000007, SCAN_SEV_CRITICAL, SCAN_PF_NO_REPAIR,                             \
      N_("superblock field 'blocks' is {value}, but the image holds only {count} blocks"),      \
      N_("none: the image is truncated; copy the whole device"))                                \
    X(SB_BLOCKS_OVER_ADDR, 0x000008, SCAN_SEV_ERROR, 0,                                         \
      N_("superblock field 'blocks' is {value}, more than {count}, which its addresses reach"), \
      N_("cap 'blocks' at what the addresses reach"))                                           \
    X(SB_ROOTDIR_RANGE, 0x000009, SCAN_SEV_CRITICAL, 0,                                         \
      N_("superblock field 'rootdir' is {value}, outside the device"),                          \
      N_("search the blocks for the root directory, or make a new empty one"))                  \
    X(SB_FREEHEAD_RANGE, 0x00000a, SCAN_SEV_ERROR, 0,                                           \
      N_("superblock field 'freehead' is {value}, outside the device"),                         \
      N_("rebuild the free list"))                                                              \
    X(SB_FREETAIL_RANGE, 0x00000b, SCAN_SEV_ERROR, 0,                                           \
      N_("superblock field 'freetail' is {value}, outside the device"),                         \
      N_("rebuild the free list"))                                                              \
    X(SB_BADBLOCKS_RANGE, 0x00000c, SCAN_SEV_WARNING, 0,                                        \
      N_("superblock field 'badblocks' is {value}, outside the device"),                        \
      N_("clear 'badblocks'"))                                                                  \
    X(SB_FREEBLOCKS_WRONG, 0x00000d, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                        \
      N_("superblock says {value} free blocks, the free list holds {count}"),                   \
      N_("set 'freeblocks' to the free list's count"))                                          \
    X(SB_TIME_INVALID, 0x00000e, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                            \
      N_("superblock timestamp '{text}' is not a valid time"), N_("set it to the check time"))  \
    X(SB_LABEL_NO_NUL, 0x00000f, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR | SCAN_PF_DRIVER,             \
      N_("volume label fills all 256 bytes without a NUL (2012 formatter, SPEC-9.16)"),         \
      N_("none"))                                                                               \
    X(SB_GEOMETRY_INFERRED, 0x000010, SCAN_SEV_WARNING, 0,                                      \
      N_("geometry inferred from the blocks: {text}"),                                          \
      N_("write a superblock with the inferred geometry"))                                      \
    X(SB_FORMAT_INTERRUPTED, 0x000011, SCAN_SEV_ERROR, 0,                                       \
      N_("superblock has rootdir = freehead = 0: the format was interrupted (SPEC-9.16)"),      \
      N_("take the root directory the scan finds (or make a new empty one) and rebuild the "    \
         "free list"))                                                                          \
    X(SB_ROOT_NOT_DIR, 0x000012, SCAN_SEV_CRITICAL, 0,                                          \
      N_("root directory block {block} has type {value}, not a directory"),                     \
      N_("search the blocks for the root directory, or make a new empty one"))                  \
    X(SB_IMAGE_TAIL, 0x000013, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR,                                \
      N_("the image holds {count} blocks past the filesystem's end"), N_("none"))               \
    X(SB_UNREADABLE, 0x000014, SCAN_SEV_CRITICAL, 0,                                            \
      N_("the superblock cannot be read: block 0's first sector fails"),                        \
      N_("infer the geometry from the blocks and write a new superblock"))                      \
    X(SB_ROOT_SEARCHED, 0x000015, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR,                             \
      N_("the root directory is taken to be block {block} ('{path}'), found by searching "     \
         "the blocks: {text}"),                                                                 \
      N_("none (the superblock's finding says what is repaired)"))                             \
    X(SB_BLOCKS_LARGE, 0x000016, SCAN_SEV_ERROR, 0,                                             \
      N_("superblock field 'blocks' is {value}, but the image holds {count} blocks and "       \
         "nothing refers to a block past them"),                                                \
      N_("set 'blocks' from the image size"))                                                  \
    X(SB_BLOCKSIZE_WRONG, 0x000017, SCAN_SEV_CRITICAL, 0,                                       \
      N_("superblock block size is {value} bytes, but the root directory at block {block} "    \
         "reads only with {count}-byte blocks, with which 'blocks' fits the image"),           \
      N_("read with the root directory's block size and write a superblock that says so"))    \
    X(SB_VERSION_FLIPPED, 0x000018, SCAN_SEV_CRITICAL, 0,                                       \
      N_("superblock major version is {value}: 1, the format's only major, with one bit "       \
         "flipped (the 2012 driver refuses to mount it)"),                                      \
      N_("set the major version to 1"))                                                         \
    X(SB_ADDRLEN_WRONG, 0x000019, SCAN_SEV_CRITICAL, 0,                                         \
      N_("superblock address length is {value} bytes, but with it the free list from block "    \
         "{block} lists blocks past the device end; it reads only with {count}-byte "           \
         "addresses, which 'freeblocks' or the files' data maps bear out"),                     \
      N_("read with the free list's address length and write a superblock that says so"))      \
    X(SB_FREEHEAD_FLIPPED, 0x00001a, SCAN_SEV_ERROR, 0,                                         \
      N_("superblock field 'freehead' is {value}, a block that is no chain block; block "       \
         "{value2}, one bit away, heads a free list of the {count} blocks 'freeblocks' counts"), \
      N_("rebuild the free list"))                                                              \
    /* ---- pass 1: directory trees ---- */                                                     \
    X(TREE_PTR_RANGE, 0x010001, SCAN_SEV_ERROR, 0,                                              \
      N_("{path}: block {block} links to block {block2}, beyond the device end"),               \
      N_("clear the link"))                                                                     \
    X(TREE_PTR_TYPE, 0x010002, SCAN_SEV_ERROR, 0,                                               \
      N_("{path}: block {block} links to block {block2}, which holds no entry (type byte "      \
         "{value})"),                                                                           \
      N_("clear the link"))                                                                     \
    X(TREE_CYCLE, 0x010003, SCAN_SEV_ERROR, 0,                                                  \
      N_("{path}: block {block} links back to block {block2}: a cycle in the tree"),            \
      N_("cut the link that closes the cycle"))                                                 \
    X(TREE_ORDER, 0x010004, SCAN_SEV_ERROR, 0,                                                  \
      N_("{path}: entry block {block} breaks the tree's order (greater names left)"),           \
      N_("rebuild the directory's tree, balanced"))                                             \
    X(TREE_DUP_NAME, 0x010005, SCAN_SEV_ERROR, 0,                                               \
      N_("{path}: entry blocks {block} and {block2} share one name"),                           \
      N_("rename the second entry with a unique suffix"))                                       \
    X(TREE_NAME_EMPTY, 0x010006, SCAN_SEV_ERROR, 0,                                             \
      N_("{path}: entry block {block} has an empty name"),                                      \
      N_("name it after its block: 'block-' and the number"))                                  \
    X(TREE_NAME_NO_NUL, 0x010007, SCAN_SEV_ERROR, 0,                                            \
      N_("{path}: entry block {block} has a name without NUL in 256 bytes"),                    \
      N_("cut the name at 255 bytes"))                                                          \
    X(TREE_NAME_SLASH, 0x010008, SCAN_SEV_WARNING, 0,                                           \
      N_("{path}: entry block {block} has a name with '/'"), N_("replace '/' with '_'"))        \
    X(TREE_REACHED_TWICE, 0x010009, SCAN_SEV_ERROR, 0,                                          \
      N_("entry block {block} is reached from two places: {path} and {text}"),                  \
      N_("keep the first link, cut the second"))                                                \
    X(TREE_TOO_DEEP, 0x01000a, SCAN_SEV_WARNING, SCAN_PF_NO_REPAIR,                             \
      N_("{path}: directories nest deeper than {count} levels; the walk stops there"),          \
      N_("none"))                                                                               \
    X(TREE_TIME_INVALID, 0x01000b, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                          \
      N_("{path}: timestamp '{text}' is not a valid time"), N_("set it to the check time"))     \
    X(TREE_UNREADABLE, 0x01000c, SCAN_SEV_ERROR, 0,                                             \
      N_("{path}: block {block} cannot be read: {text}"), N_("clear the link to it"))           \
    X(TREE_RENAME_HALFWAY, 0x01000d, SCAN_SEV_ERROR, 0,                                         \
      N_("{path}: entry block {block} sits in two directory trees: a rename was cut off "       \
         "between its writes"),                                                                 \
      N_("keep the entry in the tree the rename left it in"))                                   \
    /* ---- pass 2: files and extenders ---- */                                                 \
    X(FILE_DATA_RANGE, 0x020001, SCAN_SEV_ERROR, 0,                                             \
      N_("{path}: data pointer {block2} lies beyond the device end"),                           \
      N_("clear the data pointer"))                                                             \
    X(FILE_DATA_TYPE, 0x020002, SCAN_SEV_ERROR, 0,                                              \
      N_("{path}: data pointer {block2} names a block of type {value}, not an extender"),       \
      N_("clear the data pointer"))                                                             \
    X(EXT_LEVEL_WRONG, 0x020003, SCAN_SEV_ERROR, 0,                                             \
      N_("{path}: extender {block2} has level {value} below a level-{value2} extender {block}"), \
      N_("clear the slot"))                                                                     \
    X(EXT_SLOT_RANGE, 0x020004, SCAN_SEV_ERROR, 0,                                              \
      N_("{path}: extender {block} slot {count} holds {block2}, beyond the device end"),        \
      N_("clear the slot"))                                                                     \
    X(EXT_SLOT_METADATA, 0x020005, SCAN_SEV_ERROR, 0,                                           \
      N_("{path}: extender {block} slot {count} maps block {block2}, which is {text}"),         \
      N_("clear the slot"))                                                                     \
    X(FILE_SIZE_UNMAPPED, 0x020006, SCAN_SEV_WARNING, 0,                                        \
      N_("{path}: size {value} needs {count} blocks, the tree maps {count2}"),                  \
      N_("set the size to what the mapped blocks hold"))                                        \
    X(FILE_SIZE_EXCESS, 0x020007, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                           \
      N_("{path}: the tree maps {count2} blocks past its size of {value} bytes"),               \
      N_("free the blocks past the size"))                                                      \
    X(FILE_HOLES, 0x020008, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR,                                   \
      N_("{path}: {count} of its blocks are holes"), N_("none"))                                \
    X(EXT_TYPE, 0x020009, SCAN_SEV_ERROR, 0,                                                    \
      N_("{path}: extender {block} slot maps block {block2} of type {value}, not an extender"), \
      N_("clear the slot"))                                                                     \
    X(EXT_SLOT_FLIPPED, 0x02000a, SCAN_SEV_ERROR, 0,                                            \
      N_("{path}: extender {block} slot {count} maps block {block2}, which {text} names; "      \
         "block {value}, one bit away and held by nothing, completes the file's run or is "     \
         "the only such block"),                                                                \
      N_("set the slot to that block"))                                                         \
    X(EXT_HOLE_FLIPPED, 0x02000b, SCAN_SEV_ERROR, 0,                                            \
      N_("{path}: extender {block} slot {count} maps block {block2}, which {text} names; "      \
         "the slot, one bit set next to holes, was a hole"),                                    \
      N_("clear the slot"))                                                                     \
    X(FILE_DATA_FLIPPED, 0x02000c, SCAN_SEV_ERROR, 0,                                           \
      N_("{path}: data pointer {block2} names the tree of the file created in block {count}; "  \
         "block {value}, one bit away and just after the file's own block, is an extender "     \
         "nothing holds"),                                                                      \
      N_("set the data pointer to that extender"))                                              \
    X(FILE_DATA_UNWRITTEN, 0x02000d, SCAN_SEV_ERROR, 0,                                         \
      N_("{path}: an entry created but never written back (counter 0, size 0) holds no "        \
         "data pointer, but reads {block2}, a single set bit: a flipped bit"),                  \
      N_("clear the data pointer"))                                                             \
    X(FILE_DATA_TYPE_FLIPPED, 0x02000e, SCAN_SEV_ERROR, 0,                                      \
      N_("{path}: data pointer {block2} names a block of type {value}, not an extender; block " \
         "{value2}, one bit away and just after the file's own block, is an extender that "     \
         "maps data and nothing holds"),                                                        \
      N_("set the data pointer to that extender"))                                              \
    /* ---- pass 3: the free list ---- */                                                       \
    X(FREE_CYCLE, 0x030001, SCAN_SEV_ERROR, 0,                                                  \
      N_("free list: chain block {block} links back to block {block2}: a cycle"),               \
      N_("rebuild the free list"))                                                              \
    X(FREE_PTR_RANGE, 0x030002, SCAN_SEV_ERROR, 0,                                              \
      N_("free list: chain block {block} links to {block2}, beyond the device end"),            \
      N_("rebuild the free list"))                                                              \
    X(FREE_END_WRONG, 0x030003, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                             \
      N_("free list: 'freetail' is {block2}, but the list ends at chain block {block}"),        \
      N_("set 'freetail' to the last chain block"))                                             \
    X(FREE_SLOT_RANGE, 0x030004, SCAN_SEV_ERROR, 0,                                             \
      N_("free list: chain block {block} slot {count} lists {block2}, beyond the device end"),  \
      N_("rebuild the free list"))                                                              \
    X(FREE_SLOT_IN_USE, 0x030005, SCAN_SEV_ERROR, 0,                                            \
      N_("free list: chain block {block} lists block {block2}, which {text} uses"),             \
      N_("remove the block from the free list"))                                                \
    X(FREE_LISTED_TWICE, 0x030006, SCAN_SEV_ERROR, 0,                                           \
      N_("free list: block {block2} is listed twice (chain blocks {block} and {value})"),       \
      N_("rebuild the free list"))                                                              \
    X(FREE_CHAIN_TYPE, 0x030007, SCAN_SEV_WARNING, 0,                                           \
      N_("free list: chain block {block} has type {value}, not 0x70"),                          \
      N_("rewrite it as a chain block"))                                                        \
    X(FREE_SLOT_METADATA, 0x030008, SCAN_SEV_ERROR, 0,                                          \
      N_("free list: chain block {block} lists block {block2}, which is {text}"),               \
      N_("remove the block from the free list"))                                                \
    X(FREE_PTR_ENTRY, 0x030009, SCAN_SEV_ERROR, 0,                                              \
      N_("free list: chain block {block} links to block {block2}, which reads as an entry "     \
         "(type {value}), not a chain block"),                                                  \
      N_("rebuild the free list"))                                                              \
    X(FREE_NEXT_FLIPPED, 0x03000a, SCAN_SEV_ERROR, 0,                                           \
      N_("free list: chain block {block} links to block {block2}, which is no chain block; "    \
         "block {value}, one bit away, continues a free list of the {count} blocks "            \
         "'freeblocks' counts"),                                                                \
      N_("rebuild the free list"))                                                              \
    /* ---- pass 4: block ownership ---- */                                                     \
    X(BLOCK_SHARED, 0x040001, SCAN_SEV_ERROR, 0,                                                \
      N_("block {block} is owned by {path} and by {text}"),                                     \
      N_("give the second owner a copy in a fresh block"))                                      \
    X(BLOCKS_LEAKED, 0x040002, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                              \
      N_("{count} blocks are neither used nor free (first: {block})"),                          \
      N_("add them to the free list"))                                                          \
    X(ORPHAN_ENTRY, 0x040003, SCAN_SEV_WARNING, 0,                                              \
      N_("orphaned {text} '{path}' at block {block}: no directory reaches it"),                 \
      N_("move it to /lost+found"))                                                             \
    X(DELETED_ENTRY, 0x040004, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR,                                \
      N_("deleted {text} '{path}' at block {block}: {count} of {count2} data blocks intact"),   \
      N_("none (undelete on request)"))                                                         \
    X(BLOCK_UNREADABLE, 0x040005, SCAN_SEV_ERROR, SCAN_PF_NO_REPAIR,                            \
      N_("block {block} cannot be read: {text}"), N_("none: copy the device and retry"))        \
    X(DELETED_BEFORE_FORMAT, 0x040006, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR,                        \
      N_("deleted {text} '{path}' at block {block} was created before this filesystem: "       \
         "a leftover of an earlier format, its data map perhaps in another block size"),        \
      N_("none (undelete with care)"))                                                          \
    X(EARLIER_FORMAT, 0x040007, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR,                               \
      N_("block {block} holds the root directory of an earlier format of {value}-byte "        \
         "blocks: {text}"),                                                                     \
      N_("none: copy that format's files out as the message says"))                             \
    X(EARLIER_FORMAT_ENTRIES, 0x040008, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR,                       \
      N_("{count} entries of an earlier format of {value}-byte blocks lie in blocks this "     \
         "format does not use, the first in block {block}, {count2} of their links landing "   \
         "right: {text}"),                                                                      \
      N_("none: copy that format's files out as the message says"))                             \
    X(ORPHAN_LINK_FLIPPED, 0x040009, SCAN_SEV_WARNING, 0,                                       \
      N_("orphaned '{path}' at block {block} reads a link of {block2}, past the device end, "   \
         "and passes every other check of an entry: one flipped bit; with it cleared the link " \
         "is {value}"),                                                                         \
      N_("set the link to that block when the entry is relinked"))                              \
    /* ---- pass 5: write counters and torn writes ---- */                                      \
    X(TORN_CHAIN_COUNTER, 0x050001, SCAN_SEV_WARNING, 0,                                        \
      N_("chain block {block}: counter {value} is lower than its {count} slot changes allow"),  \
      N_("rewrite the block when the free list is rebuilt"))                                    \
    X(TORN_SECTORS, 0x050002, SCAN_SEV_WARNING, 0,                                              \
      N_("block {block}: its first sector and sector {count} tell different stories ({text})"), \
      N_("treat the block as damaged"))                                                         \
    X(ENTRY_NEVER_WRITTEN, 0x050003, SCAN_SEV_WARNING, 0,                                       \
      N_("{path}: entry block {block} was created but never written back (counter 0)"),         \
      N_("check its size against its mapped blocks"))                                           \
    X(SB_STALE_FREEHEAD, 0x050004, SCAN_SEV_WARNING, SCAN_PF_PREEN_OK,                          \
      N_("superblock's freehead {block} was handed out: its rewrite did not land"),             \
      N_("rebuild the free list"))                                                              \
    X(UNLINKED_FILE_DATA, 0x050005, SCAN_SEV_ERROR, 0,                                          \
      N_("{path}: the extender tree at block {block} holds {count} data blocks ({value} "       \
         "bytes) of this file, but its data pointer and size never landed"),                    \
      N_("link the tree to the file and set its size from the data"))                           \
    X(LOST_DATA_TREE, 0x050006, SCAN_SEV_WARNING, 0,                                            \
      N_("the extender tree at block {block} maps {count} data blocks ({value} bytes), but no " \
         "file links it"),                                                                      \
      N_("make it a new file of /lost+found named after its block (with no block for the "     \
         "file left, free its blocks: copy the data out first with lanyfs salvage --lost)"))   \
    /* ---- pass 6: marks of the 2012 driver and formatter ---- */                              \
    X(MARK_FORMATTER_CHAIN_TYPE, 0x060001, SCAN_SEV_INFO, SCAN_PF_NO_REPAIR | SCAN_PF_DRIVER,   \
      N_("{count} chain blocks carry type 0x80, as the 2012 formatter writes them (SPEC-9.10)"), \
      N_("none"))                                                                               \
    X(MARK_LAST_SLOT_FILLED, 0x060002, SCAN_SEV_INFO, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,        \
      N_("{count} chain blocks have their last slot filled, which the driver never pops "       \
         "(SPEC-9.1)"),                                                                         \
      N_("move those blocks to slots the driver uses"))                                         \
    X(MARK_LAST_SLOT_LEAK, 0x060003, SCAN_SEV_WARNING, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,       \
      N_("{count} blocks leaked through the last slot of consumed chain blocks (SPEC-9.1)"),    \
      N_("add them to the free list"))                                                          \
    X(MARK_UNCOUNTED_PUSH, 0x060004, SCAN_SEV_INFO, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,          \
      N_("'freeblocks' is {count} lower than the free list: pushes the driver did not count "   \
         "(SPEC-9.2)"),                                                                         \
      N_("set 'freeblocks' to the free list's count"))                                          \
    X(MARK_FREETAIL_STALE, 0x060005, SCAN_SEV_INFO, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,          \
      N_("'freetail' names the head chain block {block}, as the driver leaves it (SPEC-9.3)"),  \
      N_("set 'freetail' to the last chain block"))                                             \
    X(MARK_FREELIST_CUT, 0x060006, SCAN_SEV_WARNING, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,         \
      N_("{count} blocks were cut off the free list when chain block {block} was relinked "     \
         "(SPEC-9.3)"),                                                                         \
      N_("add them to the free list"))                                                          \
    X(MARK_EXTENDER_LEAK, 0x060007, SCAN_SEV_WARNING, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,        \
      N_("{count} extender blocks of deleted or truncated files were never freed (SPEC-9.4)"),  \
      N_("add them to the free list"))                                                          \
    X(MARK_EXTENDER_FLOOD, 0x060008, SCAN_SEV_ERROR, SCAN_PF_DRIVER,                            \
      N_("{path}: {count} empty level-0 extenders from the driver's growth loop (SPEC-9.7)"),   \
      N_("free the orphaned extenders"))                                                        \
    X(MARK_FIRST_BLOCK_OVERWRITTEN, 0x060009, SCAN_SEV_ERROR, SCAN_PF_DRIVER,                   \
      N_("{path}: grew past {count} blocks; the driver wrote those blocks over its first ones " \
         "(SPEC-9.7)"),                                                                         \
      N_("cut the file to the blocks it wrote first"))                                         \
    X(MARK_HOLE_TO_BLOCK0, 0x06000a, SCAN_SEV_WARNING, SCAN_PF_DRIVER,                          \
      N_("{path}: {count} holes map to block 0 under the driver, whose writes land on the "     \
         "superblock (SPEC-9.8)"),                                                              \
      N_("none"))                                                                               \
    X(MARK_FAILED_DELETE, 0x06000b, SCAN_SEV_WARNING, SCAN_PF_DRIVER,                           \
      N_("{path}: a delete failed in the tree after its data was freed; the entry maps only "   \
         "holes (SPEC-9.9)"),                                                                   \
      N_("remove the entry"))                                                                   \
    X(MARK_RENAME_TWO_TREES, 0x06000c, SCAN_SEV_ERROR, SCAN_PF_DRIVER,                          \
      N_("{path}: entry block {block} sits in two directory trees after a failed rename "       \
         "(SPEC-9.9)"),                                                                         \
      N_("keep the entry in the newer tree only"))                                              \
    X(MARK_FROZEN_PARENT, 0x06000d, SCAN_SEV_WARNING, SCAN_PF_DRIVER,                           \
      N_("{path}: its tree root still names freed block {block2} (rmdir froze its writeback, "  \
         "SPEC-9.12)"),                                                                         \
      N_("rebuild the directory's tree"))                                                       \
    X(MARK_EXTRA_MAPPED, 0x06000e, SCAN_SEV_INFO, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,            \
      N_("{path}: maps {count} blocks past its size after rewrites (SPEC-9.13)"),               \
      N_("free the blocks past the size"))                                                      \
    X(MARK_ENTRY_BECAME_CHAIN, 0x06000f, SCAN_SEV_ERROR, SCAN_PF_DRIVER,                        \
      N_("{path}: block {block} was freed and became a chain block while still linked "         \
         "(SPEC-9.14)"),                                                                        \
      N_("cut the link to it"))                                                                 \
    X(MARK_TIME_DRIFT, 0x060010, SCAN_SEV_INFO, SCAN_PF_DRIVER | SCAN_PF_NO_REPAIR,             \
      N_("{path}: modified time lies {text} after its creation-era neighbours: the driver's "   \
         "offset decoding (SPEC-9.15)"),                                                        \
      N_("none"))                                                                               \
    X(MARK_ZERO_SIZE_EXTENDER, 0x060011, SCAN_SEV_INFO, SCAN_PF_DRIVER | SCAN_PF_PREEN_OK,      \
      N_("{path}: size 0 but still points at extender {block2} (SPEC-9.14)"),                   \
      N_("clear the data pointer and free the extender"))                                       \
    X(MARK_DRIVER_ORPHAN, 0x060012, SCAN_SEV_WARNING, SCAN_PF_DRIVER,                           \
      N_("orphaned {text} '{path}' at block {block}: the driver's tree updates dropped it "     \
         "(SPEC-9.9, 9.12, 9.14)"),                                                             \
      N_("move it to /lost+found"))                                                             \
    X(MARK_STALE_TREE, 0x060013, SCAN_SEV_ERROR, SCAN_PF_DRIVER,                                \
      N_("{path}: block {block} links to block {block2} against the format: the driver went on " \
         "using a tree or map whose blocks it had freed (SPEC-9.12)"),                          \
      N_("clear the link and rebuild the directory's tree"))                                    \

enum scan_problem_code {
#define SCAN_X_ENUM(name, code, sev, flags, msg, fix) SCAN_PR_##name = code,
    SCAN_PROBLEMS(SCAN_X_ENUM)
#undef SCAN_X_ENUM
};

struct scan_problem_info {
    uint32_t code;              /* SCAN_PR_* */
    const char *name;           /* "TREE_CYCLE", stable, for JSON and the database */
    enum scan_severity severity;
    unsigned flags;             /* SCAN_PF_* */
    const char *message;        /* template with {fields} */
    const char *repair;         /* what fsck proposes */
};

/* The row's template and repair in the user's language (the catalogue). */
static inline const char *scan_problem_message_text(const struct scan_problem_info *pi)
{
    return dgettext(SCAN_TEXT_DOMAIN, pi->message);
}
static inline const char *scan_problem_repair_text(const struct scan_problem_info *pi)
{
    return dgettext(SCAN_TEXT_DOMAIN, pi->repair);
}

/*
 * A finding's message in the user's language, for the screen: as
 * scan_finding_message (scan.h, the English text for JSON and the
 * database), from the translated template.  Free with free(); NULL when
 * out of memory.
 */
struct scan_finding;
char *scan_finding_message_translated(const struct scan_finding *f);

/* The row of a code, or NULL for an unknown one. */
const struct scan_problem_info *scan_problem_lookup(uint32_t code);
/* Every row, sorted by code. */
const struct scan_problem_info *scan_problem_table(size_t *count);
/* "info", "warning", "error", "critical". */
const char *scan_severity_name(enum scan_severity s);
/* 0 when sorted and unique; otherwise the first offending code. */
uint32_t scan_problem_table_verify(void);
