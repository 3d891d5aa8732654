/*
 * simulate.c -- the unplug simulator (contract in simulate.h).
 *
 * Three phases:
 *
 *  1. Run.  A model of the tree (paths, types, file bytes) drives a seeded
 *     generator: each operation picks its kind and targets among what the
 *     model holds, is described in the write log, and is done by the
 *     writer.  The model follows every operation the writer reports done;
 *     one it refuses is recorded and its paths leave the model (their state
 *     on disk is unknown), so later operations do not aim at them.  Names
 *     carry the operation's index, so they never collide by accident.
 *  2. Read.  The final image is walked with the core reader (explicit
 *     stack, each directory once): its paths, types and bytes are "final".
 *  3. Replay.  A scratch copy of the base image receives the log's writes
 *     one by one; after each, every final path whose search has begun is
 *     looked up in it, and the first write count K at which it shows the
 *     final type, size and bytes is its complete_after.  A path's search
 *     begins at the write count before the first write of the mount whose
 *     operation last touched it (0 when none did).
 *
 * The 2012 driver maps file holes to block 0 (SPEC-§9.8, §9.13), so in
 * driver mode the generator never leaves a hole: pwrite starts at or
 * before the end and truncate only shrinks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "output.h"
#include "simulate.h"
#include "writelog.h"
#include "writer.h"

#define SIM_DEPTH_MAX 6          /* deepest directory the generator makes */
#define SIM_WALK_MAX 100000      /* entries the final walk visits at most */
#define SIM_TRUTH_FORMAT "lanyfs-simulate/1"

/* ---- seeded numbers -------------------------------------------------------- */

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&x);
}

static uint64_t rotl(uint64_t v, int k)
{
    return (v << k) | (v >> (64 - k));
}

/* xoshiro256** */
static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* Uniform in 0..n-1 (n >= 1), by rejection. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do
        v = rng_next(r);
    while (v >= lim);
    return v % n;
}

/* Uniform in lo..hi inclusive. */
static uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + rng_below(r, hi - lo + 1);
}

/* ---- the model ----------------------------------------------------------- */

struct mnode {
    char *path;      /* "/a/b", owned */
    bool dir;        /* a directory */
    GByteArray *data; /* a file's bytes */
};

struct touch {
    uint64_t op;     /* log operation index */
    uint64_t mount;  /* mount it ran in */
};

enum op_result { OPR_OK, OPR_NOSPC, OPR_FAILED, OPR_SKIPPED };

struct oprec {
    uint64_t index;       /* log operation index */
    uint64_t mount;       /* its mount */
    const char *kind;     /* "mkdir", "put", ... (static) */
    char *path;           /* owned, or NULL */
    char *to;             /* rename target, owned, or NULL */
    int64_t size;         /* put/truncate size, -1 when none */
    int64_t off;          /* pwrite offset, -1 when none */
    int64_t len;          /* pwrite length, -1 when none */
    bool replaced;        /* put over an existing file, rename over one */
    enum op_result result;
    char *message;        /* the writer's error, owned, or NULL */
    uint64_t first_write; /* writes before it + 1 */
    uint64_t writes;      /* its writes */
};

struct mountrec {
    uint64_t first_write; /* writes before the mount + 1 */
    uint64_t last_write;  /* writes after it */
};

struct fpath {
    char *path;          /* owned */
    bool dir;
    uint64_t size;
    uint8_t *bytes;      /* a file's bytes, owned */
    bool readable;       /* the bytes could be read */
    bool lookup;         /* a lookup of the path finds it in the final image */
    char sha[65];        /* hex SHA-256 of bytes */
    uint64_t start;      /* search begins at this K */
    uint64_t mount;      /* the mount of the last operation that touched it, 0 = none */
    uint64_t touch_op;   /* that operation, 0 = none */
    uint64_t complete;   /* complete_after, UINT64_MAX while unknown */
};

struct lostrec {
    char *path;          /* owned */
    bool dir;
    uint64_t size;       /* as the operations left it */
    char sha[65];        /* of those bytes */
    const char *reason;  /* static */
    uint64_t mount;      /* the mount after which it was found lost */
};

struct sim {
    const struct sim_opts *o;
    struct rng rng;
    struct lanyfs_geom geom;
    GPtrArray *nodes;         /* struct mnode *, the model without the root */
    GHashTable *touched;      /* path -> struct touch * */
    GArray *ops;              /* struct oprec */
    GArray *mounts;           /* struct mountrec */
    GPtrArray *final;         /* struct fpath * */
    GArray *lost;             /* struct lostrec */
    struct lanyfs_fs *fs;     /* final.img, read-write */
    struct lanyfs_writer *w;  /* the current mount */
    struct lanyfs_wlog *log;
    uint64_t mount;           /* current mount, 1.. */
    time_t clock;             /* seconds of the writer's clock */
    uint32_t clock_ns;        /* nanoseconds of it */
    struct sim_summary sum;
    char *stopped;            /* why the run stopped early, or NULL */
    char *final_problem;      /* why final.img cannot be read, or NULL */
    char *dir_base, *dir_final, *dir_log, *dir_truth, *dir_scratch; /* output paths */
};

static void mnode_free(gpointer p)
{
    struct mnode *n = p;
    g_free(n->path);
    if (n->data != NULL)
        g_byte_array_unref(n->data);
    g_free(n);
}

static void fpath_free(gpointer p)
{
    struct fpath *f = p;
    g_free(f->path);
    g_free(f->bytes);
    g_free(f);
}

static void lostrec_clear(gpointer p)
{
    struct lostrec *l = p;
    g_free(l->path);
}

static void oprec_clear(gpointer p)
{
    struct oprec *r = p;
    g_free(r->path);
    g_free(r->to);
    g_free(r->message);
}

static struct mnode *model_find(struct sim *s, const char *path, guint *idx)
{
    for (guint i = 0; i < s->nodes->len; i++) {
        struct mnode *n = g_ptr_array_index(s->nodes, i);
        if (strcmp(n->path, path) == 0) {
            if (idx != NULL)
                *idx = i;
            return n;
        }
    }
    return NULL;
}

/* path is below dir (dir "/" holds everything). */
static bool below(const char *dir, const char *path)
{
    if (strcmp(dir, "/") == 0)
        return path[0] == '/' && path[1] != '\0';
    size_t n = strlen(dir);
    return strncmp(dir, path, n) == 0 && path[n] == '/';
}

static unsigned depth_of(const char *path)
{
    unsigned d = 0;
    for (const char *p = path; *p != '\0'; p++)
        d += *p == '/';
    return strcmp(path, "/") == 0 ? 0 : d;
}

static char *join(const char *dir, const char *name)
{
    return strcmp(dir, "/") == 0 ? g_strconcat("/", name, NULL)
                                 : g_strconcat(dir, "/", name, NULL);
}

static void touch(struct sim *s, const char *path, uint64_t op)
{
    struct touch *t = g_new(struct touch, 1);
    t->op = op;
    t->mount = s->mount;
    g_hash_table_insert(s->touched, g_strdup(path), t);
}

/* Touch path and every model path below it. */
static void touch_tree(struct sim *s, const char *path, uint64_t op)
{
    touch(s, path, op);
    for (guint i = 0; i < s->nodes->len; i++) {
        struct mnode *n = g_ptr_array_index(s->nodes, i);
        if (below(path, n->path))
            touch(s, n->path, op);
    }
}

/* Drop path and everything below it from the model. */
static void model_drop(struct sim *s, const char *path)
{
    for (guint i = s->nodes->len; i-- > 0;) {
        struct mnode *n = g_ptr_array_index(s->nodes, i);
        if (strcmp(n->path, path) == 0 || below(path, n->path))
            g_ptr_array_remove_index(s->nodes, i);
    }
}

/* Pick a directory (the root included) at most maxdepth deep; returns its path. */
static const char *pick_dir(struct sim *s, unsigned maxdepth)
{
    guint n = 0;
    for (guint i = 0; i < s->nodes->len; i++) {
        struct mnode *m = g_ptr_array_index(s->nodes, i);
        n += m->dir && depth_of(m->path) <= maxdepth;
    }
    uint64_t k = rng_below(&s->rng, (uint64_t)n + 1);
    if (k == 0)
        return "/";
    for (guint i = 0; i < s->nodes->len; i++) {
        struct mnode *m = g_ptr_array_index(s->nodes, i);
        if (m->dir && depth_of(m->path) <= maxdepth && --k == 0)
            return m->path;
    }
    return "/";
}

/* Pick a file (want_dir false), a directory (true, root excluded) or NULL. */
static struct mnode *pick_node(struct sim *s, int want_dir, bool empty_only)
{
    guint n = 0;
    for (guint i = 0; i < s->nodes->len; i++) {
        struct mnode *m = g_ptr_array_index(s->nodes, i);
        n += (want_dir < 0 || m->dir == (want_dir > 0));
    }
    if (n == 0)
        return NULL;
    uint64_t k = rng_below(&s->rng, n);
    for (guint i = 0; i < s->nodes->len; i++) {
        struct mnode *m = g_ptr_array_index(s->nodes, i);
        if (want_dir >= 0 && m->dir != (want_dir > 0))
            continue;
        if (k-- == 0) {
            if (!empty_only)
                return m;
            for (guint j = 0; j < s->nodes->len; j++) {
                struct mnode *c = g_ptr_array_index(s->nodes, j);
                if (below(m->path, c->path))
                    return NULL;
            }
            return m;
        }
    }
    return NULL;
}

static char *new_name(struct sim *s, bool dir, uint64_t op)
{
    static const char *const dirs[] = {"DCIM", "docs", "Backup", "src", "old", "m", "Zz",
                                       "photos 2012"};
    static const char *const files[] = {"IMG_", "notes-", "a", "report ", "zz", "Data.",
                                        "readme-", "x"};
    static const char *const exts[] = {".jpg", ".txt", "", ".bin", ".odt", ".tar.gz"};
    if (dir)
        return g_strdup_printf("%s%" PRIu64, dirs[rng_below(&s->rng, G_N_ELEMENTS(dirs))], op);
    return g_strdup_printf("%s%04" PRIu64 "%s", files[rng_below(&s->rng, G_N_ELEMENTS(files))],
                           op, exts[rng_below(&s->rng, G_N_ELEMENTS(exts))]);
}

/* Bytes for operation op: a readable first line, then seeded noise. */
static GByteArray *make_bytes(struct sim *s, uint64_t op, const char *path, uint64_t len)
{
    GByteArray *a = g_byte_array_sized_new((guint)len);
    g_byte_array_set_size(a, (guint)len);
    char head[160];
    int hl = snprintf(head, sizeof(head), "lanyfs-simulate seed %" PRIu64 " op %" PRIu64 " %s\n",
                      s->o->seed, op, path);
    size_t h = hl < 0 ? 0 : (size_t)hl;
    if (h > len)
        h = (size_t)len;
    if (h > 0)
        memcpy(a->data, head, h); /* a->data is NULL for an empty array */
    struct rng r;
    rng_seed(&r, s->o->seed, op + 0x100000000ull);
    for (uint64_t i = h; i < len; i += 8) {
        uint64_t v = rng_next(&r);
        for (unsigned j = 0; j < 8 && i + j < len; j++)
            a->data[i + j] = (uint8_t)(v >> (8 * j));
    }
    return a;
}

/*
 * A file size: a tenth empty, then under a block, a few blocks, up to 16
 * blocks, up to a full level-0 extender (extmax blocks), each capped at a
 * sixteenth of the device; big_pct percent of the time beyond extmax
 * blocks (a level-1 tree), not capped.
 */
static uint64_t pick_size(struct sim *s)
{
    uint64_t bs = s->geom.blocksize, em = s->geom.extmax;
    uint64_t cap = s->o->size / 16;
    if (rng_below(&s->rng, 100) < s->o->big_pct)
        return rng_range(&s->rng, em * bs + 1, (em + em / 4 + 2) * bs);
    uint64_t k = rng_below(&s->rng, 100), v;
    if (k < 10)
        v = 0;
    else if (k < 40)
        v = rng_range(&s->rng, 1, bs - 1);
    else if (k < 75)
        v = rng_range(&s->rng, bs, 4 * bs);
    else if (k < 92)
        v = rng_range(&s->rng, 4 * bs, 16 * bs);
    else
        v = rng_range(&s->rng, 16 * bs, em * bs);
    return v > cap ? cap : v;
}

/* ---- running one operation -------------------------------------------------- */

static void clock_tick(struct sim *s)
{
    s->clock += (time_t)rng_range(&s->rng, 1, 120);
    s->clock_ns = (uint32_t)rng_below(&s->rng, 1000000000u);
    struct lanyfs_ts ts;
    lanyfs_ts_from_time(&ts, s->clock, s->clock_ns, 0);
    if (s->w != NULL)
        lanyfs_writer_set_time(s->w, &ts);
}

/* Record the operation's start in the log and the op list; returns its entry. */
static enum lanyfs_err op_begin(struct sim *s, const char *kind, const char *path,
                                const char *to, const char *desc, struct oprec **out,
                                struct lanyfs_error *err)
{
    enum lanyfs_err rc = lanyfs_wlog_op(s->log, desc, err);
    if (rc != LANYFS_OK)
        return rc;
    struct oprec r = {
        .index = lanyfs_wlog_ops(s->log),
        .mount = s->mount,
        .kind = kind,
        .path = path != NULL ? g_strdup(path) : NULL,
        .to = to != NULL ? g_strdup(to) : NULL,
        .size = -1,
        .off = -1,
        .len = -1,
        .first_write = lanyfs_wlog_writes(s->log) + 1,
    };
    g_array_append_val(s->ops, r);
    *out = &g_array_index(s->ops, struct oprec, s->ops->len - 1);
    return LANYFS_OK;
}

/* Classify the writer's result; I/O and memory failures stop the run. */
static enum lanyfs_err op_end(struct sim *s, struct oprec *r, enum lanyfs_err wrc,
                              const struct lanyfs_error *werr, struct lanyfs_error *err)
{
    r->writes = lanyfs_wlog_writes(s->log) + 1 - r->first_write;
    if (wrc == LANYFS_OK) {
        r->result = OPR_OK;
        s->sum.ops_ok++;
        return LANYFS_OK;
    }
    r->message = g_strdup(werr->msg);
    if (wrc == LANYFS_E_IO || wrc == LANYFS_E_NOMEM) {
        if (err != NULL)
            *err = *werr;
        lanyfs_error_prefix(err, "operation %" PRIu64 " (%s)", r->index, r->kind);
        return wrc;
    }
    if (wrc == LANYFS_E_NOSPC) {
        r->result = OPR_NOSPC;
        s->sum.ops_nospc++;
    } else {
        r->result = OPR_FAILED;
        s->sum.ops_failed++;
    }
    return LANYFS_OK;
}

/*
 * Driver mode: does the free list hold need blocks?  The 2012 driver checks
 * only its drifting in-memory count (SPEC-§9.2); when allocation then fails
 * inside a write, the file block maps to a hole, that is onto block 0, and
 * the data overwrites the superblock (SPEC-§9.8).  The simulator skips an
 * operation that would get there: the smaller of the in-memory count and
 * the free list on disk must exceed need by a margin.  *have gets the count.
 */
static bool driver_room(struct sim *s, uint64_t need, uint64_t *have)
{
    *have = UINT64_MAX;
    if (!s->o->driver)
        return true;
    struct lanyfs_writer_state st;
    lanyfs_writer_state(s->w, &st);
    uint64_t chains = 0, slots = 0, tail = 0;
    uint64_t disk = 0;
    if (lanyfs_freelist_count(s->fs, &chains, &slots, &tail, NULL) == LANYFS_OK)
        disk = chains + slots;
    *have = st.freehead == 0 || st.freetail == 0 ? 0 : st.freeblocks < disk ? st.freeblocks : disk;
    return *have >= need + 8;
}

/* Record an operation skipped for want of room (driver_room); no writes. */
static void op_skip(struct sim *s, struct oprec *r, uint64_t need, uint64_t have)
{
    r->writes = 0;
    r->result = OPR_SKIPPED;
    r->message = g_strdup_printf("skipped: about %" PRIu64 " blocks needed, %" PRIu64
                                 " usable free; the 2012 driver would write past the end "
                                 "of its free list onto block 0", need, have);
    s->sum.ops_skipped++;
}

/* Blocks a write of len bytes may allocate in driver mode: data, extenders, entry. */
static uint64_t driver_need(const struct sim *s, uint64_t len)
{
    uint64_t n = lanyfs_geom_blocks_for_size(&s->geom, len);
    return n + n / s->geom.extmax + 3;
}

static enum lanyfs_err do_op(struct sim *s, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    struct lanyfs_error werr;
    lanyfs_error_clear(&werr);
    enum lanyfs_err wrc;
    struct oprec *r = NULL;
    char *path = NULL, *to = NULL, *desc = NULL;
    GByteArray *bytes = NULL;
    const bool drv = s->o->driver;
    uint64_t bs = s->geom.blocksize;
    clock_tick(s);

    uint64_t roll = rng_below(&s->rng, 100);
    struct mnode *f = pick_node(s, 0, false);
    /* kinds: 0-14 mkdir, 15-44 put new, 45-52 put over, 53-62 pwrite,
     * 63-70 truncate, 71-80 unlink, 81-86 rmdir, 87-99 rename */
    if (roll >= 45 && roll < 81 && f == NULL)
        roll = 15; /* no file yet: make one */
    if (roll >= 87 && s->nodes->len == 0)
        roll = 0; /* nothing to rename yet */
    uint64_t op = lanyfs_wlog_ops(s->log) + 1; /* the index this operation gets */

    if (roll < 15) {
        const char *parent = pick_dir(s, SIM_DEPTH_MAX - 1);
        char *name = new_name(s, true, op);
        path = join(parent, name);
        g_free(name);
        desc = g_strdup_printf("mkdir %s", path);
        if ((rc = op_begin(s, "mkdir", path, NULL, desc, &r, err)) != LANYFS_OK)
            goto out;
        uint64_t have;
        if (!driver_room(s, 1, &have)) {
            op_skip(s, r, 1, have);
            goto out;
        }
        wrc = lanyfs_writer_mkdir(s->w, path, &werr);
        touch(s, path, op);
        if (wrc == LANYFS_OK) {
            struct mnode *n = g_new0(struct mnode, 1);
            n->path = g_strdup(path);
            n->dir = true;
            g_ptr_array_add(s->nodes, n);
        }
    } else if (roll < 53) {
        bool over = roll >= 45;
        if (over) {
            path = g_strdup(f->path);
        } else {
            const char *parent = pick_dir(s, SIM_DEPTH_MAX);
            char *name = new_name(s, false, op);
            path = join(parent, name);
            g_free(name);
        }
        uint64_t len = pick_size(s);
        bytes = make_bytes(s, op, path, len);
        desc = g_strdup_printf("put %s (%" PRIu64 " bytes%s)", path, len,
                               over ? ", replacing" : "");
        if ((rc = op_begin(s, "put", path, NULL, desc, &r, err)) != LANYFS_OK)
            goto out;
        r->size = (int64_t)len;
        r->replaced = over;
        uint64_t have, need = driver_need(s, len);
        if (!driver_room(s, need, &have)) {
            op_skip(s, r, need, have);
            goto out;
        }
        wrc = lanyfs_writer_put(s->w, path, bytes->data, len, NULL, &werr);
        touch(s, path, op);
        if (wrc == LANYFS_OK) {
            struct mnode *n = over ? f : g_new0(struct mnode, 1);
            if (!over) {
                n->path = g_strdup(path);
                g_ptr_array_add(s->nodes, n);
            } else {
                g_byte_array_unref(n->data);
            }
            n->data = bytes;
            bytes = NULL;
        }
    } else if (roll < 63) {
        path = g_strdup(f->path);
        uint64_t size = f->data->len;
        uint64_t off = drv ? rng_range(&s->rng, 0, size)
                           : rng_range(&s->rng, 0, size + 2 * bs);
        uint64_t len = rng_range(&s->rng, 1, 3 * bs);
        if (off + len > s->o->size / 8 && off + len > size)
            len = 1;
        bytes = make_bytes(s, op, path, len);
        desc = g_strdup_printf("pwrite %s at %" PRIu64 " (%" PRIu64 " bytes)", path, off, len);
        if ((rc = op_begin(s, "pwrite", path, NULL, desc, &r, err)) != LANYFS_OK)
            goto out;
        r->off = (int64_t)off;
        r->len = (int64_t)len;
        uint64_t have, need = driver_need(s, len);
        if (!driver_room(s, need, &have)) {
            op_skip(s, r, need, have);
            goto out;
        }
        wrc = lanyfs_writer_pwrite(s->w, path, off, bytes->data, len, &werr);
        touch(s, path, op);
        if (wrc == LANYFS_OK) {
            if (off + len > f->data->len)
                g_byte_array_set_size(f->data, (guint)(off + len));
            if (off > size)
                memset(f->data->data + size, 0, (size_t)(off - size));
            memcpy(f->data->data + off, bytes->data, (size_t)len);
        }
    } else if (roll < 71) {
        path = g_strdup(f->path);
        uint64_t size = f->data->len;
        bool shrink = drv || rng_below(&s->rng, 2) == 0;
        uint64_t nsize = shrink ? rng_range(&s->rng, 0, size)
                                : rng_range(&s->rng, size, size + 3 * bs);
        if (nsize > s->o->size / 8 && nsize > size)
            nsize = size;
        desc = g_strdup_printf("truncate %s to %" PRIu64, path, nsize);
        if ((rc = op_begin(s, "truncate", path, NULL, desc, &r, err)) != LANYFS_OK)
            goto out;
        r->size = (int64_t)nsize;
        wrc = lanyfs_writer_truncate(s->w, path, nsize, &werr);
        touch(s, path, op);
        if (wrc == LANYFS_OK) {
            g_byte_array_set_size(f->data, (guint)nsize);
            if (nsize > size)
                memset(f->data->data + size, 0, (size_t)(nsize - size));
        }
    } else if (roll < 81) {
        path = g_strdup(f->path);
        desc = g_strdup_printf("unlink %s", path);
        if ((rc = op_begin(s, "unlink", path, NULL, desc, &r, err)) != LANYFS_OK)
            goto out;
        wrc = lanyfs_writer_unlink(s->w, path, &werr);
        touch(s, path, op);
        model_drop(s, path);
    } else if (roll < 87) {
        struct mnode *d = pick_node(s, 1, true);
        if (d == NULL) {
            /* nothing to remove: make a directory to remove later */
            const char *parent = pick_dir(s, SIM_DEPTH_MAX - 1);
            char *name = new_name(s, true, op);
            path = join(parent, name);
            g_free(name);
            desc = g_strdup_printf("mkdir %s", path);
            if ((rc = op_begin(s, "mkdir", path, NULL, desc, &r, err)) != LANYFS_OK)
                goto out;
            uint64_t have;
            if (!driver_room(s, 1, &have)) {
                op_skip(s, r, 1, have);
                goto out;
            }
            wrc = lanyfs_writer_mkdir(s->w, path, &werr);
            touch(s, path, op);
            if (wrc == LANYFS_OK) {
                struct mnode *n = g_new0(struct mnode, 1);
                n->path = g_strdup(path);
                n->dir = true;
                g_ptr_array_add(s->nodes, n);
            }
        } else {
            path = g_strdup(d->path);
            desc = g_strdup_printf("rmdir %s", path);
            if ((rc = op_begin(s, "rmdir", path, NULL, desc, &r, err)) != LANYFS_OK)
                goto out;
            wrc = lanyfs_writer_rmdir(s->w, path, &werr);
            touch(s, path, op);
            model_drop(s, path);
        }
    } else {
        struct mnode *src = pick_node(s, -1, false);
        path = g_strdup(src->path);
        struct mnode *over = NULL;
        if (!src->dir && rng_below(&s->rng, 4) == 0) {
            over = pick_node(s, 0, false);
            if (over == src)
                over = NULL;
        }
        if (over != NULL) {
            to = g_strdup(over->path);
        } else {
            const char *parent = pick_dir(s, SIM_DEPTH_MAX - 1);
            if (src->dir && (strcmp(parent, src->path) == 0 || below(src->path, parent)))
                parent = "/";
            char *name = new_name(s, src->dir, op);
            to = join(parent, name);
            g_free(name);
        }
        desc = g_strdup_printf("rename %s %s%s", path, to, over != NULL ? " (replacing)" : "");
        if ((rc = op_begin(s, "rename", path, to, desc, &r, err)) != LANYFS_OK)
            goto out;
        r->replaced = over != NULL;
        wrc = lanyfs_writer_rename(s->w, path, to, &werr);
        touch_tree(s, path, op);
        touch(s, to, op);
        if (wrc == LANYFS_OK) {
            if (over != NULL) {
                guint i;
                if (model_find(s, to, &i) != NULL)
                    g_ptr_array_remove_index(s->nodes, i);
            }
            size_t pl = strlen(path);
            for (guint i = 0; i < s->nodes->len; i++) {
                struct mnode *n = g_ptr_array_index(s->nodes, i);
                if (strcmp(n->path, path) == 0 || below(path, n->path)) {
                    char *np = g_strconcat(to, n->path + pl, NULL);
                    g_free(n->path);
                    n->path = np;
                }
            }
            touch_tree(s, to, op);
        } else {
            model_drop(s, path);
            model_drop(s, to);
        }
    }
    if (wrc != LANYFS_OK && r != NULL && r->path != NULL && strcmp(r->kind, "put") == 0)
        model_drop(s, r->path);
    if (wrc != LANYFS_OK && r != NULL && r->path != NULL &&
        (strcmp(r->kind, "pwrite") == 0 || strcmp(r->kind, "truncate") == 0 ||
         strcmp(r->kind, "mkdir") == 0))
        model_drop(s, r->path);
    rc = op_end(s, r, wrc, &werr, err);
out:
    if (bytes != NULL)
        g_byte_array_unref(bytes);
    g_free(path);
    g_free(to);
    g_free(desc);
    return rc;
}

/* ---- files ---------------------------------------------------------------- */

static enum lanyfs_err sys_fail(struct lanyfs_error *err, int e, const char *what,
                                const char *path)
{
    lanyfs_fail(err, LANYFS_E_IO, LANYFS_NO_BLOCK, "%s %s: %s", what, path, strerror(e));
    if (err != NULL)
        err->sys_errno = e;
    return LANYFS_E_IO;
}

static enum lanyfs_err copy_file(const char *from, const char *to, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = -1;
    uint8_t *buf = g_malloc(1u << 20);
    if (in < 0) {
        rc = sys_fail(err, errno, "cannot open", from);
        goto out;
    }
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        rc = sys_fail(err, errno, "cannot create", to);
        goto out;
    }
    for (;;) {
        ssize_t n = read(in, buf, 1u << 20);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = sys_fail(err, errno, "cannot read", from);
            goto out;
        }
        if (n == 0)
            break;
        for (ssize_t done = 0; done < n;) {
            ssize_t m = write(out, buf + done, (size_t)(n - done));
            if (m < 0 && errno == EINTR)
                continue;
            if (m <= 0) {
                rc = sys_fail(err, m < 0 ? errno : ENOSPC, "cannot write", to);
                goto out;
            }
            done += m;
        }
    }
    if (close(out) != 0) {
        out = -1;
        rc = sys_fail(err, errno, "cannot close", to);
        goto out;
    }
    out = -1;
out:
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    g_free(buf);
    return rc;
}

static enum lanyfs_err make_base(struct sim *s, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    struct lanyfs_image *img = NULL;
    int fd = open(s->dir_base, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = sys_fail(err, errno, "cannot create", s->dir_base);
        goto out;
    }
    if (ftruncate(fd, (off_t)s->o->size) != 0) {
        rc = sys_fail(err, errno, "cannot size", s->dir_base);
        goto out;
    }
    close(fd);
    fd = -1;
    if ((rc = lanyfs_image_open(s->dir_base, LANYFS_IMAGE_RDWR, &img, err)) != LANYFS_OK)
        goto out;
    struct lanyfs_ts now;
    lanyfs_ts_from_time(&now, s->clock, 0, 0);
    static const char label[] = "SIMULATED";
    struct lanyfs_format_opts fo = {
        .blockbits = s->o->blockbits,
        .addrlen = s->o->addrlen,
        .label = label,
        .label_len = sizeof(label) - 1,
        .compat2012 = s->o->mkfs2012,
        .now = &now,
    };
    rc = lanyfs_format(img, &fo, err);
out:
    if (fd >= 0)
        close(fd);
    lanyfs_image_close(img);
    return rc;
}

/* ---- phase 1: the operations ------------------------------------------------ */

static enum lanyfs_err resync(struct sim *s, uint64_t mi, struct lanyfs_error *err);

static enum lanyfs_err run_ops(struct sim *s, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    struct lanyfs_error werr;
    struct oprec *r;
    const uint64_t n = s->o->ops, m = s->o->mounts;
    rc = lanyfs_fs_open(s->dir_final, LANYFS_OPEN_RDWR, &s->fs, err);
    if (rc != LANYFS_OK)
        goto out;
    s->geom = *lanyfs_fs_geom(s->fs);
    if ((rc = lanyfs_wlog_open(s->dir_log, &s->geom, &s->log, err)) != LANYFS_OK)
        goto out;
    lanyfs_wlog_attach(s->log, s->fs);
    for (uint64_t mi = 1; mi <= m; mi++) {
        s->mount = mi;
        struct mountrec mr = {.first_write = lanyfs_wlog_writes(s->log) + 1};
        char *desc = g_strdup_printf("mount %" PRIu64 " (%s)", mi,
                                     s->o->driver ? "2012 driver" : "correct writer");
        rc = op_begin(s, "mount", NULL, NULL, desc, &r, err);
        g_free(desc);
        if (rc != LANYFS_OK)
            goto out;
        lanyfs_error_clear(&werr);
        enum lanyfs_err wrc = lanyfs_writer_mount(
            s->fs, s->o->driver ? LANYFS_WRITE_DRIVER2012 : LANYFS_WRITE_CORRECT, &s->w, &werr);
        if (wrc != LANYFS_OK) {
            if ((rc = op_end(s, r, wrc, &werr, err)) != LANYFS_OK)
                goto out;
            if (r->result == OPR_OK) /* op_end counts it; mounts are no operations */
                s->sum.ops_ok--;
            else if (r->result == OPR_NOSPC)
                s->sum.ops_nospc--;
            else
                s->sum.ops_failed--;
            /* The image no longer mounts (the driver wrote over its superblock):
             * the run ends here, with what the log holds. */
            s->stopped = g_strdup_printf("mount %" PRIu64 " refused: %s", mi, werr.msg);
            s->sum.stopped = true;
            mr.last_write = lanyfs_wlog_writes(s->log);
            g_array_append_val(s->mounts, mr);
            goto out;
        }
        op_end(s, r, LANYFS_OK, &werr, NULL);
        s->sum.ops_ok--; /* mounts are not counted as operations */
        lanyfs_wlog_attach_writer(s->log, s->w);
        clock_tick(s);
        uint64_t lo = (mi - 1) * n / m, hi = mi * n / m;
        for (uint64_t i = lo; i < hi; i++)
            if ((rc = do_op(s, err)) != LANYFS_OK)
                goto out;
        clock_tick(s);
        desc = g_strdup_printf("unmount %" PRIu64, mi);
        rc = op_begin(s, "unmount", NULL, NULL, desc, &r, err);
        g_free(desc);
        if (rc != LANYFS_OK)
            goto out;
        lanyfs_error_clear(&werr);
        wrc = lanyfs_writer_unmount(s->w, &werr);
        s->w = NULL;
        if (wrc != LANYFS_OK) {
            op_end(s, r, wrc, &werr, NULL);
            if (err != NULL)
                *err = werr;
            lanyfs_error_prefix(err, "unmount %" PRIu64, mi);
            rc = wrc;
            goto out;
        }
        op_end(s, r, LANYFS_OK, &werr, NULL);
        s->sum.ops_ok--;
        mr.last_write = lanyfs_wlog_writes(s->log);
        g_array_append_val(s->mounts, mr);
        if ((rc = resync(s, mi, err)) != LANYFS_OK)
            goto out;
    }
out:
    if (s->w != NULL) {
        lanyfs_writer_unmount(s->w, NULL);
        s->w = NULL;
    }
    if (s->fs != NULL) {
        lanyfs_fs_set_write_hook(s->fs, NULL, NULL);
        lanyfs_fs_close(s->fs);
        s->fs = NULL;
    }
    if (s->log != NULL) {
        s->sum.writes = lanyfs_wlog_writes(s->log);
        struct lanyfs_error cerr;
        enum lanyfs_err crc = lanyfs_wlog_close(s->log, &cerr);
        s->log = NULL;
        if (rc == LANYFS_OK && crc != LANYFS_OK) {
            if (err != NULL)
                *err = cerr;
            rc = crc;
        }
    }
    return rc;
}

/* ---- phase 2: what the final image holds -------------------------------------- */

/* Read the whole file e into a new buffer; false when it cannot be read. */
static bool read_all(struct lanyfs_fs *fs, const struct lanyfs_entry *e, uint8_t **out)
{
    const struct lanyfs_geom *g = lanyfs_fs_geom(fs);
    *out = NULL;
    uint64_t dev;
    if (__builtin_mul_overflow(g->blocks, (uint64_t)g->blocksize, &dev) || e->size > dev ||
        e->size > (uint64_t)G_MAXSIZE / 2)
        return false;
    uint8_t *buf = g_malloc(e->size > 0 ? (size_t)e->size : 1);
    for (uint64_t off = 0; off < e->size;) {
        size_t want = e->size - off > (1u << 20) ? (1u << 20) : (size_t)(e->size - off);
        size_t got = 0;
        if (lanyfs_file_pread(fs, e, off, buf + off, want, &got, NULL, NULL) != LANYFS_OK ||
            got != want) {
            g_free(buf);
            return false;
        }
        off += got;
    }
    *out = buf;
    return true;
}

static void sha_hex(const uint8_t *p, uint64_t len, char out[65])
{
    GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
    for (uint64_t off = 0; off < len;) {
        gssize n = len - off > (1u << 20) ? (1u << 20) : (gssize)(len - off);
        g_checksum_update(c, p + off, n);
        off += (uint64_t)n;
    }
    g_strlcpy(out, g_checksum_get_string(c), 65);
    g_checksum_free(c);
}

struct walkitem {
    uint64_t blk;
    char *path;
};

static gint fpath_cmp(gconstpointer a, gconstpointer b)
{
    const struct fpath *x = *(struct fpath *const *)a, *y = *(struct fpath *const *)b;
    return strcmp(x->path, y->path);
}

/*
 * Every path fs shows, sorted, into out (struct fpath *): directories once
 * each (a directory reached again is listed but not entered), names that
 * are no valid name skipped, a path met twice kept once.
 */
static enum lanyfs_err walk_tree(struct lanyfs_fs *fs, GPtrArray *out, struct lanyfs_error *err)
{
    struct lanyfs_blockset *seen = lanyfs_blockset_new();
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(struct walkitem));
    uint64_t visited = 0;
    enum lanyfs_err rc = LANYFS_OK;
    if (seen == NULL) {
        rc = lanyfs_fail(err, LANYFS_E_NOMEM, LANYFS_NO_BLOCK, "out of memory");
        goto out;
    }
    uint64_t root = lanyfs_fs_super(fs)->rootdir;
    lanyfs_blockset_add(seen, root);
    struct walkitem top = {root, g_strdup("/")};
    g_array_append_val(stack, top);
    while (stack->len > 0 && visited < SIM_WALK_MAX) {
        struct walkitem it = g_array_index(stack, struct walkitem, stack->len - 1);
        g_array_set_size(stack, stack->len - 1);
        struct lanyfs_dirlist l;
        if (lanyfs_dir_list(fs, it.blk, &l, NULL) != LANYFS_OK) {
            g_free(it.path);
            continue;
        }
        for (size_t i = 0; i < l.count && visited < SIM_WALK_MAX; i++) {
            const struct lanyfs_dirent *d = &l.ents[i];
            visited++;
            if (!lanyfs_entry_name_ok(&d->e))
                continue;
            char *name = g_strndup((const char *)d->e.name, d->e.name_len);
            char *path = join(it.path, name);
            g_free(name);
            if (g_hash_table_contains(names, path)) {
                g_free(path);
                continue;
            }
            struct fpath *f = g_new0(struct fpath, 1);
            f->path = path;
            g_hash_table_add(names, f->path);
            f->dir = lanyfs_entry_is_dir(&d->e);
            f->complete = UINT64_MAX;
            if (!f->dir) {
                f->size = d->e.size;
                f->readable = read_all(fs, &d->e, &f->bytes);
                if (f->readable)
                    sha_hex(f->bytes, f->size, f->sha);
            } else {
                f->readable = true;
                if (lanyfs_blockset_add(seen, d->block) == 1) {
                    struct walkitem c = {d->block, g_strdup(path)};
                    g_array_append_val(stack, c);
                }
            }
            g_ptr_array_add(out, f);
        }
        lanyfs_dirlist_free(&l);
        g_free(it.path);
    }
    g_ptr_array_sort(out, fpath_cmp);
out:
    for (guint i = 0; i < stack->len; i++)
        g_free(g_array_index(stack, struct walkitem, i).path);
    g_array_free(stack, TRUE);
    g_hash_table_destroy(names);
    lanyfs_blockset_free(seen);
    return rc;
}

static gint mnode_cmp(gconstpointer a, gconstpointer b)
{
    const struct mnode *x = *(struct mnode *const *)a, *y = *(struct mnode *const *)b;
    return strcmp(x->path, y->path);
}

/*
 * After unmount mi: record the model's paths the disk does not show as the
 * operations left them, then take the disk's tree as the model, so the
 * next mount's operations aim at what is really there (the 2012 driver
 * loses changes: SPEC-§9.9, §9.12).
 */
static enum lanyfs_err resync(struct sim *s, uint64_t mi, struct lanyfs_error *err)
{
    GPtrArray *disk = g_ptr_array_new_with_free_func(fpath_free);
    GHashTable *byname = g_hash_table_new(g_str_hash, g_str_equal);
    enum lanyfs_err rc = walk_tree(s->fs, disk, err);
    if (rc != LANYFS_OK)
        goto out;
    for (guint i = 0; i < disk->len; i++) {
        struct fpath *f = g_ptr_array_index(disk, i);
        g_hash_table_insert(byname, f->path, f);
    }
    g_ptr_array_sort(s->nodes, mnode_cmp);
    for (guint i = 0; i < s->nodes->len; i++) {
        const struct mnode *n = g_ptr_array_index(s->nodes, i);
        const struct fpath *f = g_hash_table_lookup(byname, n->path);
        const char *reason = NULL;
        if (f == NULL)
            reason = "missing";
        else if (f->dir != n->dir)
            reason = "type differs";
        else if (!n->dir && (!f->readable || f->size != n->data->len ||
                             (n->data->len > 0 &&
                              memcmp(f->bytes, n->data->data, n->data->len) != 0)))
            reason = "bytes differ";
        if (reason == NULL)
            continue;
        struct lostrec l = {.path = g_strdup(n->path), .dir = n->dir, .reason = reason,
                            .mount = mi};
        if (!n->dir) {
            l.size = n->data->len;
            sha_hex(n->data->data, n->data->len, l.sha);
        }
        g_array_append_val(s->lost, l);
        s->sum.lost++;
    }
    g_ptr_array_set_size(s->nodes, 0);
    for (guint i = 0; i < disk->len; i++) {
        struct fpath *f = g_ptr_array_index(disk, i);
        if (!f->readable || f->size > G_MAXUINT)
            continue;
        struct mnode *n = g_new0(struct mnode, 1);
        n->path = g_strdup(f->path);
        n->dir = f->dir;
        if (!f->dir) {
            n->data = g_byte_array_sized_new((guint)f->size);
            g_byte_array_append(n->data, f->bytes, (guint)f->size);
        }
        g_ptr_array_add(s->nodes, n);
    }
out:
    g_hash_table_destroy(byname);
    g_ptr_array_free(disk, TRUE);
    return rc;
}

static enum lanyfs_err read_final(struct sim *s, struct lanyfs_error *err)
{
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error oerr;
    lanyfs_error_clear(&oerr);
    enum lanyfs_err rc = lanyfs_fs_open(s->dir_final, 0, &fs, &oerr);
    if (rc == LANYFS_E_IO || rc == LANYFS_E_NOMEM) {
        if (err != NULL)
            *err = oerr;
        goto out;
    }
    if (rc != LANYFS_OK) {
        /* The final image does not open (its superblock was overwritten): no paths. */
        s->final_problem = g_strdup(oerr.msg);
        rc = LANYFS_OK;
        goto out;
    }
    if ((rc = walk_tree(fs, s->final, err)) != LANYFS_OK)
        goto out;
    for (guint i = 0; i < s->final->len; i++) {
        struct fpath *f = g_ptr_array_index(s->final, i);
        const struct touch *t = g_hash_table_lookup(s->touched, f->path);
        if (t != NULL && t->mount >= 1 && t->mount <= s->mounts->len) {
            f->mount = t->mount;
            f->touch_op = t->op;
            f->start = g_array_index(s->mounts, struct mountrec, t->mount - 1).first_write - 1;
        }
    }
    s->sum.paths = s->final->len;
out:
    lanyfs_fs_close(fs);
    return rc;
}

/* ---- phase 3: when each path became complete ------------------------------- */

/* Does fs show f with its final type, size and bytes? */
static bool shows(struct lanyfs_fs *fs, const struct fpath *f, uint8_t *buf, size_t bufsize)
{
    uint64_t blk;
    struct lanyfs_entry e;
    if (lanyfs_path_resolve(fs, f->path, &blk, &e, NULL) != LANYFS_OK)
        return false;
    if (f->dir)
        return lanyfs_entry_is_dir(&e);
    if (!lanyfs_entry_is_file(&e) || e.size != f->size)
        return false;
    for (uint64_t off = 0; off < f->size;) {
        size_t want = f->size - off > bufsize ? bufsize : (size_t)(f->size - off);
        size_t got = 0;
        if (lanyfs_file_pread(fs, &e, off, buf, want, &got, NULL, NULL) != LANYFS_OK ||
            got != want || memcmp(buf, f->bytes + off, want) != 0)
            return false;
        off += want;
    }
    return true;
}

/* Check every pending path whose search has begun against the scratch image. */
static enum lanyfs_err check_prefix(struct sim *s, uint64_t k, guint *pending, uint8_t *buf,
                                    size_t bufsize, struct lanyfs_error *err)
{
    bool any = false;
    for (guint i = 0; i < s->final->len && !any; i++) {
        const struct fpath *f = g_ptr_array_index(s->final, i);
        any = f->lookup && f->complete == UINT64_MAX && f->start <= k;
    }
    if (!any)
        return LANYFS_OK;
    struct lanyfs_fs *fs = NULL;
    struct lanyfs_error oerr;
    if (lanyfs_fs_open(s->dir_scratch, LANYFS_OPEN_FORCE, &fs, &oerr) != LANYFS_OK) {
        if (oerr.code == LANYFS_E_IO || oerr.code == LANYFS_E_NOMEM) {
            if (err != NULL)
                *err = oerr;
            return oerr.code;
        }
        return LANYFS_OK; /* this prefix shows nothing */
    }
    for (guint i = 0; i < s->final->len; i++) {
        struct fpath *f = g_ptr_array_index(s->final, i);
        if (!f->lookup || f->complete != UINT64_MAX || f->start > k)
            continue;
        if (shows(fs, f, buf, bufsize)) {
            f->complete = k;
            (*pending)--;
        }
    }
    lanyfs_fs_close(fs);
    return LANYFS_OK;
}

static enum lanyfs_err find_complete(struct sim *s, struct lanyfs_error *err)
{
    struct lanyfs_wlog_reader *r = NULL;
    int fd = -1;
    const size_t bufsize = 1u << 16;
    uint8_t *buf = g_malloc(bufsize);
    guint pending = 0;
    struct lanyfs_fs *ffs = NULL;
    enum lanyfs_err rc = LANYFS_OK;
    if (s->final->len == 0)
        goto out;
    rc = lanyfs_fs_open(s->dir_final, 0, &ffs, err);
    if (rc != LANYFS_OK)
        goto out;
    /* A listed path that a lookup does not find (a tree whose order the
     * driver broke) is never shown complete: it is not searched for. */
    for (guint i = 0; i < s->final->len; i++) {
        struct fpath *f = g_ptr_array_index(s->final, i);
        f->lookup = f->readable && shows(ffs, f, buf, bufsize);
        pending += f->lookup;
        s->sum.unfound += f->readable && !f->lookup;
    }
    lanyfs_fs_close(ffs);
    rc = copy_file(s->dir_base, s->dir_scratch, err);
    if (rc != LANYFS_OK)
        goto out;
    fd = open(s->dir_scratch, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = sys_fail(err, errno, "cannot open", s->dir_scratch);
        goto out;
    }
    if ((rc = lanyfs_wlog_reader_open(s->dir_log, &r, err)) != LANYFS_OK)
        goto out;
    if ((rc = check_prefix(s, 0, &pending, buf, bufsize, err)) != LANYFS_OK)
        goto out;
    struct lanyfs_wlog_rec rec;
    while (pending > 0) {
        if ((rc = lanyfs_wlog_next(r, &rec, err)) != LANYFS_OK)
            goto out;
        if (rec.kind == LANYFS_WLOG_END)
            break;
        if (rec.kind != LANYFS_WLOG_WRITE)
            continue;
        uint64_t off = rec.block << s->geom.blockbits;
        for (size_t done = 0; done < rec.len;) {
            ssize_t n = pwrite(fd, rec.data + done, rec.len - done, (off_t)(off + done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                rc = sys_fail(err, n < 0 ? errno : ENOSPC, "cannot write", s->dir_scratch);
                goto out;
            }
            done += (size_t)n;
        }
        if ((rc = check_prefix(s, rec.write, &pending, buf, bufsize, err)) != LANYFS_OK)
            goto out;
    }
    for (guint i = 0; i < s->final->len; i++) {
        const struct fpath *f = g_ptr_array_index(s->final, i);
        if (f->complete == UINT64_MAX || f->mount == 0)
            continue;
        if (f->complete > g_array_index(s->mounts, struct mountrec, f->mount - 1).last_write)
            s->sum.late++;
    }
out:
    if (fd >= 0)
        close(fd);
    lanyfs_wlog_reader_close(r);
    unlink(s->dir_scratch);
    g_free(buf);
    return rc;
}

/* ---- truth.json ----------------------------------------------------------------- */

static void json_str(JsonBuilder *b, const char *key, const char *raw)
{
    if (raw == NULL) {
        out_json_str(b, key, NULL);
        return;
    }
    char *esc = out_escape(raw, strlen(raw), 0);
    out_json_str(b, key, esc);
    g_free(esc);
}

static void json_null(JsonBuilder *b, const char *key)
{
    json_builder_set_member_name(b, key);
    json_builder_add_null_value(b);
}

static void json_opt_int(JsonBuilder *b, const char *key, int64_t v)
{
    if (v < 0)
        json_null(b, key);
    else
        out_json_int(b, key, v);
}

static const char *result_name(enum op_result r)
{
    return r == OPR_OK ? "ok" : r == OPR_NOSPC ? "nospc" : r == OPR_SKIPPED ? "skipped" : "failed";
}

static void truth_ops(struct sim *s, JsonBuilder *b)
{
    json_builder_set_member_name(b, "operations");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->ops->len; i++) {
        const struct oprec *r = &g_array_index(s->ops, struct oprec, i);
        json_builder_begin_object(b);
        out_json_u64(b, "op", r->index);
        out_json_u64(b, "mount", r->mount);
        out_json_str(b, "kind", r->kind);
        json_str(b, "path", r->path);
        if (r->to != NULL)
            json_str(b, "to", r->to);
        if (strcmp(r->kind, "put") == 0 || strcmp(r->kind, "truncate") == 0)
            json_opt_int(b, "size", r->size);
        if (strcmp(r->kind, "pwrite") == 0) {
            json_opt_int(b, "offset", r->off);
            json_opt_int(b, "length", r->len);
        }
        if (strcmp(r->kind, "put") == 0 || strcmp(r->kind, "rename") == 0)
            out_json_bool(b, "replacing", r->replaced);
        out_json_str(b, "result", result_name(r->result));
        json_str(b, "error", r->message);
        out_json_u64(b, "first_write", r->first_write);
        out_json_u64(b, "writes", r->writes);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

static void truth_paths(struct sim *s, JsonBuilder *b)
{
    json_builder_set_member_name(b, "paths");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->final->len; i++) {
        const struct fpath *f = g_ptr_array_index(s->final, i);
        json_builder_begin_object(b);
        json_str(b, "path", f->path);
        out_json_str(b, "type", f->dir ? "directory" : "file");
        if (f->dir) {
            json_null(b, "size");
            json_null(b, "sha256");
        } else {
            out_json_u64(b, "size", f->size);
            out_json_str(b, "sha256", f->readable ? f->sha : NULL);
        }
        out_json_bool(b, "readable", f->readable);
        out_json_bool(b, "lookup", f->lookup);
        if (f->touch_op != 0)
            out_json_u64(b, "last_op", f->touch_op);
        else
            json_null(b, "last_op");
        out_json_u64(b, "mount", f->mount);
        out_json_u64(b, "search_from", f->start);
        if (f->complete == UINT64_MAX) {
            json_null(b, "complete_after");
            out_json_bool(b, "within_mount", false);
        } else {
            out_json_u64(b, "complete_after", f->complete);
            bool within = f->mount == 0 ||
                f->complete <= g_array_index(s->mounts, struct mountrec, f->mount - 1).last_write;
            out_json_bool(b, "within_mount", within);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

/* The model's paths a mount's end did not show as its operations left them. */
static void truth_lost(struct sim *s, JsonBuilder *b)
{
    json_builder_set_member_name(b, "lost");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->lost->len; i++) {
        const struct lostrec *l = &g_array_index(s->lost, struct lostrec, i);
        json_builder_begin_object(b);
        json_str(b, "path", l->path);
        out_json_str(b, "type", l->dir ? "directory" : "file");
        if (l->dir) {
            json_null(b, "size");
            json_null(b, "sha256");
        } else {
            out_json_u64(b, "size", l->size);
            out_json_str(b, "sha256", l->sha);
        }
        out_json_u64(b, "mount", l->mount);
        out_json_str(b, "reason", l->reason);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

static enum lanyfs_err write_truth(struct sim *s, struct lanyfs_error *err)
{
    enum lanyfs_err rc = LANYFS_OK;
    const struct sim_opts *o = s->o;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    out_json_str(b, "format", SIM_TRUTH_FORMAT);
    json_builder_set_member_name(b, "options");
    json_builder_begin_object(b);
    out_json_u64(b, "seed", o->seed);
    out_json_u64(b, "ops", o->ops);
    out_json_u64(b, "blocksize", s->geom.blocksize);
    out_json_u64(b, "addrlen", s->geom.addrlen);
    out_json_u64(b, "size", o->size);
    out_json_str(b, "driver", o->driver ? "2012" : "correct");
    out_json_str(b, "mkfs", o->mkfs2012 ? "2012" : "correct");
    out_json_u64(b, "mounts", o->mounts);
    out_json_u64(b, "big_files_percent", o->big_pct);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "geometry");
    json_builder_begin_object(b);
    out_json_u64(b, "blocks", s->geom.blocks);
    out_json_u64(b, "extmax", s->geom.extmax);
    out_json_u64(b, "chainmax", s->geom.chainmax);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "files");
    json_builder_begin_object(b);
    out_json_str(b, "base", "base.img");
    out_json_str(b, "final", "final.img");
    out_json_str(b, "log", "writes.log");
    json_builder_end_object(b);
    out_json_u64(b, "writes", s->sum.writes);
    json_str(b, "stopped", s->stopped);
    json_str(b, "final_problem", s->final_problem);
    json_builder_set_member_name(b, "mounts");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->mounts->len; i++) {
        const struct mountrec *m = &g_array_index(s->mounts, struct mountrec, i);
        json_builder_begin_object(b);
        out_json_u64(b, "mount", i + 1);
        out_json_u64(b, "first_write", m->first_write);
        out_json_u64(b, "last_write", m->last_write);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    truth_ops(s, b);
    truth_paths(s, b);
    truth_lost(s, b);
    json_builder_set_member_name(b, "summary");
    json_builder_begin_object(b);
    out_json_u64(b, "ops_ok", s->sum.ops_ok);
    out_json_u64(b, "ops_nospc", s->sum.ops_nospc);
    out_json_u64(b, "ops_skipped", s->sum.ops_skipped);
    out_json_u64(b, "ops_failed", s->sum.ops_failed);
    out_json_u64(b, "paths", s->sum.paths);
    out_json_u64(b, "lost", s->sum.lost);
    out_json_u64(b, "late", s->sum.late);
    out_json_u64(b, "unfound", s->sum.unfound);
    json_builder_end_object(b);
    json_builder_end_object(b);

    JsonNode *root = json_builder_get_root(b);
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_root(gen, root);
    gsize len = 0;
    char *text = json_generator_to_data(gen, &len);
    FILE *f = fopen(s->dir_truth, "we");
    if (f == NULL) {
        rc = sys_fail(err, errno, "cannot create", s->dir_truth);
        goto out;
    }
    bool ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF;
    if (fclose(f) != 0 || !ok)
        rc = sys_fail(err, errno != 0 ? errno : EIO, "cannot write", s->dir_truth);
out:
    g_free(text);
    json_lazy_unref(gen);
    json_node_unref(root);
    json_lazy_unref(b);
    return rc;
}

/* ---- the run ------------------------------------------------------------------ */

void sim_opts_default(struct sim_opts *o, uint64_t seed, uint64_t ops, bool driver)
{
    memset(o, 0, sizeof(*o));
    o->seed = seed;
    o->ops = ops;
    o->blockbits = 9;
    o->addrlen = 4;
    o->size = 4u << 20;
    o->driver = driver;
    o->mounts = ops / 20 + 1;
    if (o->mounts > ops)
        o->mounts = ops > 0 ? ops : 1;
    o->big_pct = driver ? 0 : 10;
}

static enum lanyfs_err check_opts(const struct sim_opts *o, struct lanyfs_error *err)
{
    if (o->ops == 0 || o->ops > 1000000)
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "the number of operations must be 1..1000000");
    if (o->mounts == 0 || o->mounts > o->ops)
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "the number of mounts must be 1..%" PRIu64 " (the operations)",
                           o->ops);
    if (o->blockbits < LANYFS_BLOCKBITS_MIN || o->blockbits > LANYFS_BLOCKBITS_MAX ||
        o->addrlen < LANYFS_ADDRLEN_MIN || o->addrlen > LANYFS_ADDRLEN_MAX)
        return lanyfs_fail(err, LANYFS_E_GEOMETRY, LANYFS_NO_BLOCK,
                           "block size 2^%u and address length %u are no LanyFS geometry",
                           o->blockbits, o->addrlen);
    if (o->size > ((uint64_t)1 << 30))
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "a simulated device holds at most 1 GiB");
    if (o->big_pct > 100)
        return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                           "the share of big files is a percentage, 0..100");
    return LANYFS_OK;
}

/* Make outdir and refuse (or, with force, remove) the files of an earlier run. */
static enum lanyfs_err prepare_dir(struct sim *s, const char *outdir, struct lanyfs_error *err)
{
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST)
        return sys_fail(err, errno, "cannot create", outdir);
    struct stat st;
    if (stat(outdir, &st) != 0)
        return sys_fail(err, errno, "cannot stat", outdir);
    if (!S_ISDIR(st.st_mode))
        return lanyfs_fail(err, LANYFS_E_NOTDIR, LANYFS_NO_BLOCK, "%s is not a directory",
                           outdir);
    const char *files[] = {s->dir_base, s->dir_final, s->dir_log, s->dir_truth};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        if (lstat(files[i], &st) != 0)
            continue;
        if (!s->o->force)
            return lanyfs_fail(err, LANYFS_E_EXISTS, LANYFS_NO_BLOCK,
                               "%s exists (use --force to replace it)", files[i]);
        if (!S_ISREG(st.st_mode))
            return lanyfs_fail(err, LANYFS_E_INVAL, LANYFS_NO_BLOCK,
                               "%s is not a regular file", files[i]);
        if (unlink(files[i]) != 0)
            return sys_fail(err, errno, "cannot remove", files[i]);
    }
    return LANYFS_OK;
}

enum lanyfs_err sim_run(const struct sim_opts *o, const char *outdir, struct sim_summary *sum,
                        struct lanyfs_error *err)
{
    struct sim s;
    memset(&s, 0, sizeof(s));
    s.o = o;
    enum lanyfs_err rc = check_opts(o, err);
    if (rc != LANYFS_OK)
        return rc;
    rng_seed(&s.rng, o->seed, 0);
    uint64_t x = o->seed;
    /* 2013-01-01 plus up to a year: a plausible, seeded time for the stick */
    s.clock = (time_t)(1356998400 + splitmix(&x) % (365u * 86400u));
    s.nodes = g_ptr_array_new_with_free_func(mnode_free);
    s.touched = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    s.ops = g_array_new(FALSE, TRUE, sizeof(struct oprec));
    g_array_set_clear_func(s.ops, oprec_clear);
    s.mounts = g_array_new(FALSE, TRUE, sizeof(struct mountrec));
    s.final = g_ptr_array_new_with_free_func(fpath_free);
    s.lost = g_array_new(FALSE, TRUE, sizeof(struct lostrec));
    g_array_set_clear_func(s.lost, lostrec_clear);
    s.dir_base = g_build_filename(outdir, "base.img", NULL);
    s.dir_final = g_build_filename(outdir, "final.img", NULL);
    s.dir_log = g_build_filename(outdir, "writes.log", NULL);
    s.dir_truth = g_build_filename(outdir, "truth.json", NULL);
    s.dir_scratch = g_build_filename(outdir, ".simulate-replay.img", NULL);

    if ((rc = prepare_dir(&s, outdir, err)) != LANYFS_OK)
        goto out;
    if ((rc = make_base(&s, err)) != LANYFS_OK)
        goto out;
    if ((rc = copy_file(s.dir_base, s.dir_final, err)) != LANYFS_OK)
        goto out;
    if ((rc = run_ops(&s, err)) != LANYFS_OK)
        goto out;
    if ((rc = read_final(&s, err)) != LANYFS_OK)
        goto out;
    if ((rc = find_complete(&s, err)) != LANYFS_OK)
        goto out;
    if ((rc = write_truth(&s, err)) != LANYFS_OK)
        goto out;
out:
    if (sum != NULL)
        *sum = s.sum;
    g_ptr_array_free(s.nodes, TRUE);
    g_hash_table_destroy(s.touched);
    g_array_free(s.ops, TRUE);
    g_array_free(s.mounts, TRUE);
    g_ptr_array_free(s.final, TRUE);
    g_array_free(s.lost, TRUE);
    g_free(s.stopped);
    g_free(s.final_problem);
    g_free(s.dir_base);
    g_free(s.dir_final);
    g_free(s.dir_log);
    g_free(s.dir_truth);
    g_free(s.dir_scratch);
    return rc;
}
