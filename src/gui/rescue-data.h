/*
 * rescue-data.h -- one scan as LanyFS Rescue holds it: entries, findings, block map.
 *
 * A RescueData is what every view of the application reads.  It is filled
 * once, by one thread, from a scan result (rescue-data-scan.c), a scan
 * database (rescue-data-store.c) or by hand in the tests, then sealed with
 * rescue_data_finish(), which builds the tree index (children sorted with
 * directories first, then by name), the top level and the wear maximum.
 * A sealed RescueData is immutable and may be read from any thread; the one
 * exception is an entry's data map, which may be loaded lazily from the
 * database, under a lock, by whichever thread asks first.
 *
 * Text kept here is always valid UTF-8 for display: names and paths from
 * the disk are escaped (rescue_escape_bytes: \xNN for bytes that are not
 * printable UTF-8, \\ for a backslash); the exact name bytes are kept beside
 * them for salvage.  Nothing here uses GTK.
 */
#pragma once

#include <glib.h>

#include "scan.h"

G_BEGIN_DECLS

/* Where a RescueData came from. */
typedef enum {
    RESCUE_SOURCE_NONE = 0, /* built by hand */
    RESCUE_SOURCE_IMAGE,    /* a scan of an image file */
    RESCUE_SOURCE_DEVICE,   /* a scan of a block device */
    RESCUE_SOURCE_DATABASE, /* a scan read back from a scan database */
} RescueSourceKind;

/* How complete the scan behind the data is. */
typedef enum {
    RESCUE_SCAN_FULL = 0,  /* the scanner's full result */
    RESCUE_SCAN_QUICK = 1, /* the stand-in walk of rescue-quickscan.c */
} RescueScanDepth;

/* A timestamp the disk does not give (unset or invalid). */
#define RESCUE_TIME_UNSET G_MININT64

/* State bits, for filters: 1 << enum scan_entry_state. */
#define RESCUE_STATE_BIT(s) (1u << (s))
#define RESCUE_STATE_ALL 0x7u

/* One entry; entries live in one array and are numbered 1.. by id. */
typedef struct {
    guint32 id;              /* 1-based, entries[id - 1] */
    guint32 parent;          /* the directory holding it, 0 for the root or unknown */
    guint64 block;           /* its own block */
    guint8 state;            /* enum scan_entry_state */
    guint8 type;             /* the type byte: LANYFS_TYPE_DIR, LANYFS_TYPE_FILE, ... */
    guint16 attr;            /* LANYFS_ATTR_* */
    guint16 wrcnt;           /* its write counter */
    guint8 subtree_states;   /* RESCUE_STATE_BIT of every entry below it (not itself) */
    guint64 size;            /* the size field */
    gint64 created;          /* seconds since the epoch (UTC), RESCUE_TIME_UNSET */
    gint64 modified;         /* seconds since the epoch (UTC), RESCUE_TIME_UNSET */
    guint64 blocks_needed;   /* ceil(size / blocksize) for files */
    guint64 blocks_mapped;   /* data blocks the scan found for it */
    guint64 blocks_intact;   /* of those, not owned by anyone else now */
    char *name;              /* display form, escaped (owned) */
    char *path;              /* display form, escaped (owned) */
    guint8 *raw_name;        /* the exact name bytes (owned) */
    gsize raw_name_len;      /* bytes in raw_name */
    guint32 child_first;     /* first of its children in the children index */
    guint32 nchildren;       /* children in the index */
    const guint64 *data;     /* data blocks in file order, 0 = hole; NULL until known */
    guint64 ndata;           /* entries in data */
    gboolean data_known;     /* data and ndata are final */
    /*
     * A lost extender tree (scan_lost_tree): the tree holding this file's
     * data that its entry never linked (UNLINKED_FILE_DATA), or, with
     * lost_only, the tree this entry stands for.  data is then the tree's
     * data, and the content is lost_size bytes (rescue_entry_content_size).
     */
    guint64 lost_top;        /* the tree's top extender, 0 = none */
    guint64 lost_size;       /* bytes its data shows */
    gboolean lost_only;      /* no entry: a tree no file links (LOST_DATA_TREE), shown as
                              * an orphaned file "#TOP" of the top level */
} RescueEntryInfo;

/* The bytes of an entry's content: its size field, or what its lost tree's data shows. */
static inline guint64 rescue_entry_content_size(const RescueEntryInfo *e)
{
    return e->lost_top != 0 ? e->lost_size : e->size;
}

/* One finding. */
typedef struct {
    guint32 code;            /* SCAN_PR_* */
    guint8 severity;         /* enum scan_severity */
    gboolean has_block;      /* the message names {block}: block is meaningful */
    guint32 entry;           /* the entry concerned, 0 = none */
    guint64 block;           /* {block} */
    guint64 block2;          /* {block2} */
    guint64 value, value2;   /* {value}, {value2} (set by the loaders after appending) */
    char *message;           /* the finished message, display form (owned) */
    char *path;              /* {path} in display form, NULL when none (owned) */
} RescueFindingInfo;

/* The geometry and identity of the scanned filesystem. */
typedef struct {
    gboolean have_geometry;  /* the fields below the label are meaningful */
    gboolean inferred;       /* block 0 was unusable: the geometry was inferred */
    guint32 blocksize;       /* bytes per block */
    guint addrlen;           /* bytes per slot address */
    guint64 fs_blocks;       /* blocks of the filesystem */
    guint64 image_bytes;     /* bytes in the image */
    char *label;             /* volume label, display form, NULL when unknown (owned) */
} RescueGeometry;

typedef struct _RescueData RescueData;

/* Loads one entry's data map; called with the data lock held, returns FALSE on failure. */
typedef gboolean (*RescueDataLoader)(RescueData *data, guint32 id, gpointer user_data);

RescueData *rescue_data_new(RescueSourceKind kind, const char *source_path);
RescueData *rescue_data_ref(RescueData *data);
void rescue_data_unref(RescueData *data);

/* ---- filling (one thread, before rescue_data_finish) ------------------- */

/*
 * A new entry with the next id and the given name bytes; every other field
 * zero but the times (unset).  The pointer is valid until the next append.
 */
RescueEntryInfo *rescue_data_append_entry(RescueData *data, const guint8 *name, gsize name_len,
                                          const char *path);
/*
 * A lost extender tree with its top, the file it belongs to (0 = none
 * known), the bytes its data shows, the data blocks it maps and its
 * nblocks file blocks in file order (copied unless borrowed; or NULL, for
 * the loader to give later): the file's entry then reads its content from
 * the tree, and a tree of no known file (or whose entry is no file, or has
 * a tree already) becomes a new entry (lost_only).  Returns the entry that
 * holds it.
 */
RescueEntryInfo *rescue_data_append_lost(RescueData *data, guint64 top, guint32 entry,
                                         guint64 size, guint64 mapped, const guint64 *blocks,
                                         guint64 nblocks, gboolean borrowed);
/* A new finding; message and path (may be NULL) are raw bytes, escaped here. */
RescueFindingInfo *rescue_data_append_finding(RescueData *data, guint32 code, guint8 severity,
                                              guint32 entry, guint64 block, guint64 block2,
                                              const char *message, const char *path);
/* The block map: n cells, owned by owner (freed with owner_free) or copied when owner is NULL. */
void rescue_data_set_blocks(RescueData *data, const struct scan_block *blocks, guint64 n,
                            gpointer owner, GDestroyNotify owner_free);
/* Cells to fill in place (allocated zero, owned by data). */
struct scan_block *rescue_data_alloc_blocks(RescueData *data, guint64 n);
/* Set an entry's data map; the blocks are copied unless borrowed (then they must outlive data). */
void rescue_data_set_entry_data(RescueData *data, guint32 id, const guint64 *blocks, guint64 n,
                                gboolean borrowed);
RescueGeometry *rescue_data_geometry_mut(RescueData *data);
void rescue_data_set_summary(RescueData *data, const struct scan_summary *summary);
void rescue_data_set_depth(RescueData *data, RescueScanDepth depth);
void rescue_data_set_loader(RescueData *data, RescueDataLoader loader, gpointer user_data,
                            GDestroyNotify user_data_free);
/* Keep something alive as long as data (a scan result, a database handle). */
void rescue_data_keep(RescueData *data, gpointer owned, GDestroyNotify owned_free);
/* The scanner's result the data was made from (kept alive by the caller, rescue_data_keep). */
void rescue_data_set_scan_result(RescueData *data, const struct scan_result *result);
/* The image the scan read, when it differs from the source (a database names its image). */
void rescue_data_set_image_path(RescueData *data, const char *image_path);

/* Seal: build the tree index and the derived figures.  Call once. */
void rescue_data_finish(RescueData *data);

/* ---- reading (any thread, after rescue_data_finish) --------------------- */

RescueSourceKind rescue_data_get_kind(const RescueData *data);
RescueScanDepth rescue_data_get_depth(const RescueData *data);
/* The file opened: the image, the device, or the database. */
const char *rescue_data_get_source_path(const RescueData *data);
/* The image or device the blocks live on (for a database: the path it names). */
const char *rescue_data_get_image_path(const RescueData *data);
const RescueGeometry *rescue_data_get_geometry(const RescueData *data);
const struct scan_summary *rescue_data_get_summary(const RescueData *data);
/* The scanner's result behind data; NULL when it came from a database or was built by hand. */
const struct scan_result *rescue_data_get_scan_result(const RescueData *data);

guint32 rescue_data_get_n_entries(const RescueData *data);
/* The entry of an id, or NULL. */
const RescueEntryInfo *rescue_data_get_entry(const RescueData *data, guint32 id);
/* The live root directory's id, 0 when none was found. */
guint32 rescue_data_get_root(const RescueData *data);
/* Ids of the top of the tree: the root's children, then entries with no known parent. */
const guint32 *rescue_data_get_top_level(const RescueData *data, guint32 *n);
/* Ids of an entry's children, sorted. */
const guint32 *rescue_data_get_children(const RescueData *data, guint32 id, guint32 *n);
/* Ids from the top level down to id (inclusive); *n receives the count; g_free the array. */
guint32 *rescue_data_get_ancestry(const RescueData *data, guint32 id, guint *n);
/* The entry's data map, loading it when needed; FALSE when it cannot be known. */
gboolean rescue_data_get_entry_data(RescueData *data, guint32 id, const guint64 **blocks,
                                    guint64 *n);
/* The name folded for case-insensitive search (built on first use; thread-safe). */
const char *rescue_data_get_folded_name(RescueData *data, guint32 id);

guint rescue_data_get_n_findings(const RescueData *data);
const RescueFindingInfo *rescue_data_get_finding(const RescueData *data, guint i);
/* Findings per severity (4 counters). */
const guint *rescue_data_get_findings_by_severity(const RescueData *data);
/*
 * The geometry of an earlier format whose root directory the scan found
 * (EARLIER_FORMAT) or whose entries it found in unused blocks
 * (EARLIER_FORMAT_ENTRIES): log2 of its block size and its address
 * length, 0 when its files did not tell it (a scan with that geometry then
 * infers it).  A root comes first, and among roots one whose address
 * length was told.  FALSE when there is no such finding.
 */
gboolean rescue_data_get_earlier_geometry(const RescueData *data, unsigned *blockbits,
                                          unsigned *addrlen);

guint64 rescue_data_get_n_blocks(const RescueData *data);
const struct scan_block *rescue_data_get_blocks(const RescueData *data);
/* The cell of a block, or NULL past the map. */
const struct scan_block *rescue_data_get_block(const RescueData *data, guint64 blk);
/* Highest write counter among metadata blocks (at least 1). */
guint16 rescue_data_get_wear_max(const RescueData *data);

/* ---- text --------------------------------------------------------------- */

/* Escape len bytes for display: \xNN for non-printable or invalid UTF-8, \\ for '\'. */
char *rescue_escape_bytes(const void *bytes, gsize len);
/* Seconds since the epoch of a LanyFS timestamp, RESCUE_TIME_UNSET when unset or invalid. */
gint64 rescue_time_from_ts(const struct lanyfs_ts *ts);
/* Seconds since the epoch of an ISO 8601 text, RESCUE_TIME_UNSET for NULL or unparsable. */
gint64 rescue_time_from_iso8601(const char *text);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RescueData, rescue_data_unref)

G_END_DECLS
