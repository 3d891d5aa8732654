/*
 * test_sim.c -- the write log, replay and the simulator (suite 'sim').
 *
 * - wlog: records read back equal what the fs write hook and the writer's
 *   sync hook recorded, across an append; a writer run's image equals its
 *   base plus the logged writes.
 * - hostile logs: bad magic, other version, truncation at every byte, huge
 *   and wrong lengths, bad kinds and numbers give the documented codes and
 *   name the record's offset; replay refuses them before creating OUT.
 * - replay: for a simulated scenario in each mode, every prefix K and every
 *   tear size gives exactly the image an independent apply of the log's
 *   records (parsed here from the bytes, not with the core's reader) gives,
 *   compared block by block.
 * - reorder: the landed subset follows the documented rule (reimplemented
 *   here), touches only the writes after the last sync point, and repeats.
 * - simulate: the same options give byte-identical files; final.img is the
 *   replay of every write.
 * - truth.json: replaying complete_after writes shows each path with its
 *   final type, size and SHA-256; one write fewer does not (unless that is
 *   before its search began).
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
#include <json-glib/json-glib.h>

#include "replay.h"
#include "simulate.h"
#include "unit.h"
#include "writelog.h"
#include "writer.h"

/* ---- helpers ------------------------------------------------------------------- */

static char *tmp_dir(void)
{
    const char *t = getenv("TMPDIR");
    char *tmpl = g_strdup_printf("%s/lanyfs-sim-XXXXXX", t != NULL && *t != '\0' ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    return tmpl;
}

static void rm_tree(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (d != NULL) {
        const char *n;
        while ((n = g_dir_read_name(d)) != NULL) {
            char *p = g_build_filename(dir, n, NULL);
            unlink(p);
            g_free(p);
        }
        g_dir_close(d);
    }
    rmdir(dir);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    gchar *buf = NULL;
    gsize n = 0;
    GError *ge = NULL;
    if (!g_file_get_contents(path, &buf, &n, &ge))
        ck_abort_msg("cannot read %s: %s", path, ge->message);
    *len = n;
    return (uint8_t *)buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
    GError *ge = NULL;
    if (!g_file_set_contents(path, buf, (gssize)len, &ge))
        ck_abort_msg("cannot write %s: %s", path, ge->message);
}

/* A freshly formatted image file of size bytes. */
static void make_image(const char *path, unsigned bits, unsigned alen, uint64_t size)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
    close(fd);
    struct lanyfs_image *img;
    struct lanyfs_error err;
    ck_assert_int_eq(lanyfs_image_open(path, LANYFS_IMAGE_RDWR, &img, &err), LANYFS_OK);
    struct lanyfs_ts now;
    lanyfs_ts_from_time(&now, 1400000000, 0, 0);
    struct lanyfs_format_opts fo = {.blockbits = bits, .addrlen = alen, .now = &now};
    ck_assert_msg(lanyfs_format(img, &fo, &err) == LANYFS_OK, "format: %s", err.msg);
    lanyfs_image_close(img);
}

/* ---- an independent reading of the log bytes ----------------------------------- */

struct irec {
    unsigned kind;       /* 1 write, 2 sync, 3 op, 4 session */
    uint64_t a, b, c;    /* the payload's first three le64 (as present) */
    const uint8_t *data; /* write: the block */
};

struct ilog {
    uint32_t bs;
    GArray *recs;        /* struct irec */
    uint64_t writes;
    const uint8_t **wdata; /* [1..writes]: the block bytes of write i */
    uint64_t *wblock;      /* [1..writes]: its block */
};

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void ilog_parse(struct ilog *l, const uint8_t *buf, size_t len)
{
    ck_assert_uint_ge(len, 32);
    ck_assert_int_eq(memcmp(buf, "LANYWLOG", 8), 0);
    ck_assert_uint_eq(le32(buf + 8), 1);
    l->bs = le32(buf + 12);
    l->recs = g_array_new(FALSE, TRUE, sizeof(struct irec));
    l->writes = 0;
    size_t pos = 32;
    while (pos < len) {
        U_ASSERT(pos + 8 <= len, "record header cut at %zu", pos);
        struct irec r = {.kind = buf[pos]};
        uint32_t n = le32(buf + pos + 4);
        U_ASSERT(pos + 8 + n <= len, "record cut at %zu", pos);
        const uint8_t *p = buf + pos + 8;
        if (n >= 8)
            r.a = le64(p);
        if (n >= 16)
            r.b = le64(p + 8);
        if (r.kind == 1) {
            U_EQ(n, 24 + l->bs);
            r.c = le64(p + 16);
            r.data = p + 24;
            l->writes++;
            U_EQ(r.a, l->writes);
        }
        g_array_append_val(l->recs, r);
        pos += 8 + n;
    }
    l->wdata = g_new0(const uint8_t *, l->writes + 1);
    l->wblock = g_new0(uint64_t, l->writes + 1);
    for (guint i = 0; i < l->recs->len; i++) {
        const struct irec *r = &g_array_index(l->recs, struct irec, i);
        if (r->kind == 1) {
            l->wdata[r->a] = r->data;
            l->wblock[r->a] = r->c;
        }
    }
}

static void ilog_free(struct ilog *l)
{
    g_array_free(l->recs, TRUE);
    g_free(l->wdata);
    g_free(l->wblock);
}

/* The write count of the last sync record at or before k. */
static uint64_t ilog_sync_before(const struct ilog *l, uint64_t k)
{
    uint64_t s = 0;
    for (guint i = 0; i < l->recs->len; i++) {
        const struct irec *r = &g_array_index(l->recs, struct irec, i);
        if (r->kind == 2 && r->a <= k)
            s = r->a;
    }
    return s;
}

static void apply_write(uint8_t *img, const struct ilog *l, uint64_t i, size_t bytes)
{
    memcpy(img + l->wblock[i] * l->bs, l->wdata[i], bytes);
}

/* The documented reorder rule, written out again. */
static uint64_t t_splitmix(uint64_t x)
{
    uint64_t z = x + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool t_pick(uint64_t seed, uint64_t i)
{
    return (t_splitmix(t_splitmix(seed) + i) & 1) != 0;
}

static void expect_same(const uint8_t *got, size_t glen, const uint8_t *want, size_t wlen,
                        uint32_t bs, const char *what)
{
    U_ASSERT(glen == wlen, "%s: %zu bytes, expected %zu", what, glen, wlen);
    if (memcmp(got, want, wlen) == 0)
        return;
    for (size_t b = 0; b * bs < wlen; b++)
        if (memcmp(got + b * bs, want + b * bs, bs) != 0)
            ck_abort_msg("%s: block %zu differs", what, b);
}

/* ---- scenarios -------------------------------------------------------------------- */

struct scenario {
    char *dir;
    char *base, *final, *log, *truth, *out;
    uint8_t *base_bytes;
    size_t base_len;
    uint8_t *log_bytes;
    size_t log_len;
    struct ilog il;
    struct sim_summary sum;
};

static void scenario_run(struct scenario *sc, const struct sim_opts *o)
{
    memset(sc, 0, sizeof(*sc));
    sc->dir = tmp_dir();
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    ck_assert_msg(sim_run(o, sc->dir, &sc->sum, &err) == LANYFS_OK, "simulate: %s", err.msg);
    sc->base = g_build_filename(sc->dir, "base.img", NULL);
    sc->final = g_build_filename(sc->dir, "final.img", NULL);
    sc->log = g_build_filename(sc->dir, "writes.log", NULL);
    sc->truth = g_build_filename(sc->dir, "truth.json", NULL);
    sc->out = g_build_filename(sc->dir, "out.img", NULL);
    sc->base_bytes = slurp(sc->base, &sc->base_len);
    sc->log_bytes = slurp(sc->log, &sc->log_len);
    ilog_parse(&sc->il, sc->log_bytes, sc->log_len);
    ck_assert_uint_eq(sc->il.writes, sc->sum.writes);
}

static void scenario_free(struct scenario *sc)
{
    ilog_free(&sc->il);
    g_free(sc->base_bytes);
    g_free(sc->log_bytes);
    rm_tree(sc->dir);
    g_free(sc->dir);
    g_free(sc->base);
    g_free(sc->final);
    g_free(sc->log);
    g_free(sc->truth);
    g_free(sc->out);
}

/*
 * Small scenarios for the exhaustive replays: correct mode on 1024-byte
 * blocks with 8-byte addresses (extmax 127, so a big file needs a level-1
 * tree and fits), the driver on 2048-byte blocks (four sectors to tear).
 */
static void opts_small(struct sim_opts *o, uint64_t seed, bool driver)
{
    sim_opts_default(o, seed, driver ? 48 : 24, driver);
    o->blockbits = driver ? 11 : 10;
    o->addrlen = driver ? 2 : 8;
    o->size = driver ? 384u << 10 : 512u << 10;
    o->mounts = 3;
    o->big_pct = driver ? 0 : 15;
}

static void replay_ok(const struct scenario *sc, const struct lanyfs_replay_opts *ro,
                      struct lanyfs_replay_result *res)
{
    struct lanyfs_error err;
    lanyfs_error_clear(&err);
    enum lanyfs_err rc = lanyfs_replay(sc->base, sc->log, sc->out, ro, res, &err);
    U_ASSERT(rc == LANYFS_OK, "replay K=%" PRIu64 " tear %u: %s", ro->upto, ro->tear, err.msg);
}

/* ---- wlog --------------------------------------------------------------------- */

struct expect {
    unsigned kind;
    uint64_t block;
    uint8_t fill;
};

START_TEST(test_wlog_roundtrip)
{
    char *dir = tmp_dir();
    char *img = g_build_filename(dir, "img", NULL);
    char *logp = g_build_filename(dir, "log", NULL);
    make_image(img, 10, 2, 128u << 10);
    struct lanyfs_error err;
    struct lanyfs_fs *fs;
    ck_assert_int_eq(lanyfs_fs_open(img, LANYFS_OPEN_RDWR, &fs, &err), LANYFS_OK);
    const struct lanyfs_geom geom = *lanyfs_fs_geom(fs), *g = &geom;
    uint8_t block[1024];
    GArray *want = g_array_new(FALSE, FALSE, sizeof(struct expect));
    struct u_rng rng = {42};
    for (int session = 0; session < 2; session++) {
        struct lanyfs_wlog *log;
        ck_assert_msg(lanyfs_wlog_open(logp, g, &log, &err) == LANYFS_OK, "%s", err.msg);
        struct expect e = {LANYFS_WLOG_SESSION, 0, 0};
        g_array_append_val(want, e);
        ck_assert_uint_eq(lanyfs_wlog_writes(log), session * 150);
        lanyfs_wlog_attach(log, fs);
        for (int i = 0; i < 150; i++) {
            if (i % 10 == 0) {
                char desc[32];
                snprintf(desc, sizeof(desc), "op %d.%d", session, i);
                ck_assert_int_eq(lanyfs_wlog_op(log, desc, &err), LANYFS_OK);
                struct expect o = {LANYFS_WLOG_OP, 0, 0};
                g_array_append_val(want, o);
            }
            uint64_t b = 2 + u_below(&rng, g->blocks - 2);
            uint8_t fill = (uint8_t)u_rand(&rng);
            memset(block, fill, sizeof(block));
            ck_assert_int_eq(lanyfs_fs_write_block(fs, b, block, &err), LANYFS_OK);
            struct expect w = {LANYFS_WLOG_WRITE, b, fill};
            g_array_append_val(want, w);
            if (i % 7 == 3) {
                ck_assert_int_eq(lanyfs_wlog_sync(log, &err), LANYFS_OK);
                struct expect s = {LANYFS_WLOG_SYNC, 0, 0};
                g_array_append_val(want, s);
            }
        }
        lanyfs_fs_set_write_hook(fs, NULL, NULL);
        ck_assert_int_eq(lanyfs_wlog_close(log, &err), LANYFS_OK);
    }
    lanyfs_fs_close(fs);

    struct lanyfs_wlog_reader *r;
    ck_assert_int_eq(lanyfs_wlog_reader_open(logp, &r, &err), LANYFS_OK);
    ck_assert_uint_eq(lanyfs_wlog_reader_blocksize(r), 1024);
    ck_assert_uint_eq(lanyfs_wlog_reader_addrlen(r), 2);
    uint64_t nw = 0, nop = 0;
    for (guint i = 0; i < want->len; i++) {
        const struct expect *e = &g_array_index(want, struct expect, i);
        struct lanyfs_wlog_rec rec;
        ck_assert_msg(lanyfs_wlog_next(r, &rec, &err) == LANYFS_OK, "%s", err.msg);
        U_EQ(rec.kind, e->kind);
        if (e->kind == LANYFS_WLOG_WRITE) {
            U_EQ(rec.write, ++nw);
            U_EQ(rec.op, nop);
            U_EQ(rec.block, e->block);
            U_EQ(rec.len, 1024);
            memset(block, e->fill, sizeof(block));
            U_MEMEQ(rec.data, block, 1024);
        } else if (e->kind == LANYFS_WLOG_OP) {
            U_EQ(rec.op, ++nop);
            U_EQ(rec.write, nw);
            char desc[32];
            snprintf(desc, sizeof(desc), "op %d.%d", nop <= 15 ? 0 : 1, (int)((nop - 1) % 15) * 10);
            U_EQ(rec.len, strlen(desc));
            U_MEMEQ(rec.data, desc, rec.len);
        } else {
            U_EQ(rec.write, nw);
            U_EQ(rec.op, nop);
        }
    }
    struct lanyfs_wlog_rec rec;
    ck_assert_int_eq(lanyfs_wlog_next(r, &rec, &err), LANYFS_OK);
    ck_assert_int_eq(rec.kind, LANYFS_WLOG_END);
    ck_assert_uint_eq(nw, 300);
    lanyfs_wlog_reader_close(r);

    /* a log that ends inside a record is refused for appending */
    size_t llen;
    uint8_t *lb = slurp(logp, &llen);
    char *cut = g_build_filename(dir, "cut", NULL);
    spit(cut, lb, llen - 3);
    struct lanyfs_wlog *cutlog;
    ck_assert_int_eq(lanyfs_wlog_open(cut, g, &cutlog, &err), LANYFS_E_TRUNCATED);
    ck_assert(u_contains(err.msg, "cannot append"));
    size_t clen;
    uint8_t *cb = slurp(cut, &clen);
    ck_assert_uint_eq(clen, llen - 3); /* left as it was */
    g_free(cb);
    g_free(lb);
    unlink(cut);
    g_free(cut);

    /* another block size is refused for appending */
    struct lanyfs_geom g2;
    ck_assert_int_eq(lanyfs_geom_init(&g2, 11, 2, 64, &err), LANYFS_OK);
    struct lanyfs_wlog *bad;
    ck_assert_int_eq(lanyfs_wlog_open(logp, &g2, &bad, &err), LANYFS_E_GEOMETRY);
    ck_assert_ptr_null(bad);

    g_array_free(want, TRUE);
    unlink(img);
    unlink(logp);
    rmdir(dir);
    g_free(img);
    g_free(logp);
    g_free(dir);
}
END_TEST

/* A writer run: sync points are logged and base + writes == the image. */
START_TEST(test_wlog_writer)
{
    char *dir = tmp_dir();
    char *img = g_build_filename(dir, "img", NULL);
    char *base = g_build_filename(dir, "base", NULL);
    char *logp = g_build_filename(dir, "log", NULL);
    make_image(img, 9, 4, 256u << 10);
    size_t blen;
    uint8_t *bbytes = slurp(img, &blen);
    spit(base, bbytes, blen);
    struct lanyfs_error err;
    struct lanyfs_fs *fs;
    ck_assert_int_eq(lanyfs_fs_open(img, LANYFS_OPEN_RDWR, &fs, &err), LANYFS_OK);
    struct lanyfs_wlog *log;
    ck_assert_int_eq(lanyfs_wlog_open(logp, lanyfs_fs_geom(fs), &log, &err), LANYFS_OK);
    lanyfs_wlog_attach(log, fs);
    for (int mode = 0; mode < 2; mode++) {
        struct lanyfs_writer *w;
        ck_assert_int_eq(lanyfs_writer_mount(fs, mode, &w, &err), LANYFS_OK);
        lanyfs_wlog_attach_writer(log, w);
        char path[32], data[3000];
        memset(data, 'a' + mode, sizeof(data));
        snprintf(path, sizeof(path), "/d%d", mode);
        ck_assert_int_eq(lanyfs_wlog_op(log, path, &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_mkdir(w, path, &err), LANYFS_OK);
        snprintf(path, sizeof(path), "/d%d/f", mode);
        ck_assert_int_eq(lanyfs_wlog_op(log, path, &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_put(w, path, data, sizeof(data), NULL, &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_wlog_op(log, "unmount", &err), LANYFS_OK);
        ck_assert_int_eq(lanyfs_writer_unmount(w, &err), LANYFS_OK);
    }
    lanyfs_fs_set_write_hook(fs, NULL, NULL);
    uint64_t writes = lanyfs_wlog_writes(log);
    ck_assert_int_eq(lanyfs_wlog_close(log, &err), LANYFS_OK);
    lanyfs_fs_close(fs);
    ck_assert_uint_gt(writes, 10);

    size_t llen, ilen;
    uint8_t *lbytes = slurp(logp, &llen);
    struct ilog il;
    ilog_parse(&il, lbytes, llen);
    ck_assert_uint_eq(il.writes, writes);
    uint64_t syncs = 0;
    for (guint i = 0; i < il.recs->len; i++)
        syncs += g_array_index(il.recs, struct irec, i).kind == 2;
    ck_assert_uint_gt(syncs, 2);
    for (uint64_t i = 1; i <= il.writes; i++)
        apply_write(bbytes, &il, i, il.bs);
    uint8_t *ibytes = slurp(img, &ilen);
    expect_same(ibytes, ilen, bbytes, blen, il.bs, "image against base + log");
    ilog_free(&il);
    g_free(lbytes);
    g_free(ibytes);
    g_free(bbytes);
    unlink(img);
    unlink(base);
    unlink(logp);
    rmdir(dir);
    g_free(img);
    g_free(base);
    g_free(logp);
    g_free(dir);
}
END_TEST

/* ---- hostile logs ------------------------------------------------------------- */

static enum lanyfs_err read_all_mem(const uint8_t *buf, size_t len, uint64_t *records,
                                    struct lanyfs_error *err)
{
    struct lanyfs_wlog_reader *r;
    *records = 0;
    enum lanyfs_err rc = lanyfs_wlog_reader_open_mem(buf, len, &r, err);
    if (rc != LANYFS_OK)
        return rc;
    struct lanyfs_wlog_rec rec;
    for (;;) {
        rc = lanyfs_wlog_next(r, &rec, err);
        if (rc != LANYFS_OK || rec.kind == LANYFS_WLOG_END)
            break;
        (*records)++;
    }
    lanyfs_wlog_reader_close(r);
    return rc;
}

START_TEST(test_hostile_logs)
{
    struct sim_opts o;
    sim_opts_default(&o, 3, 6, false);
    o.size = 128u << 10;
    o.mounts = 1;
    struct scenario sc;
    scenario_run(&sc, &o);
    const uint8_t *good = sc.log_bytes;
    size_t len = sc.log_len;
    struct lanyfs_error err;
    uint64_t n, total;
    ck_assert_int_eq(read_all_mem(good, len, &total, &err), LANYFS_OK);
    ck_assert_uint_gt(total, 5);
    uint8_t *b = g_memdup2(good, len);

    /* bad magic, other version, header cut, bad block size */
    b[0] = 'X';
    ck_assert_int_eq(read_all_mem(b, len, &n, &err), LANYFS_E_BADMAGIC);
    ck_assert(u_contains(err.msg, "magic"));
    memcpy(b, good, len);
    b[8] = 2;
    ck_assert_int_eq(read_all_mem(b, len, &n, &err), LANYFS_E_VERSION);
    ck_assert(u_contains(err.msg, "version 2"));
    memcpy(b, good, len);
    ck_assert_int_eq(read_all_mem(b, 20, &n, &err), LANYFS_E_TRUNCATED);
    ck_assert(u_contains(err.msg, "header"));
    lanyfs_put32(b + 12, 3000);
    ck_assert_int_eq(read_all_mem(b, len, &n, &err), LANYFS_E_GEOMETRY);
    memcpy(b, good, len);

    /* every cut: a clean end exactly at a record boundary, else a truncated record */
    uint64_t boundaries = 0;
    for (size_t cut = 32; cut < len; cut++) {
        enum lanyfs_err rc = read_all_mem(good, cut, &n, &err);
        U_ASSERT(rc == LANYFS_OK || rc == LANYFS_E_TRUNCATED, "cut %zu: code %d", cut, rc);
        if (rc == LANYFS_OK)
            boundaries++;
        else
            U_ASSERT(u_contains(err.msg, "ends inside"), "cut %zu: %s", cut, err.msg);
    }
    ck_assert_uint_eq(boundaries, total); /* one per record start after the first */

    /* the first record after the session: a huge length, a bad kind, reserved bytes */
    size_t first = 32 + 8 + 16; /* header, session record */
    lanyfs_put32(b + first + 4, 0xffffffffu);
    ck_assert_int_eq(read_all_mem(b, len, &n, &err), LANYFS_E_CORRUPT);
    ck_assert_msg(u_contains(err.msg, "claims 4294967295") && u_contains(err.msg, "byte 56"),
                  "%s", err.msg);
    ck_assert_uint_eq(n, 1);
    memcpy(b, good, len);
    b[first] = 9;
    ck_assert_int_eq(read_all_mem(b, len, &n, &err), LANYFS_E_CORRUPT);
    ck_assert(u_contains(err.msg, "unknown record kind 9"));
    memcpy(b, good, len);
    b[first + 2] = 1;
    ck_assert_int_eq(read_all_mem(b, len, &n, &err), LANYFS_E_CORRUPT);
    memcpy(b, good, len);

    /* a write index out of sequence, and a write far beyond the base image */
    size_t pos = 32;
    size_t wpos = 0;
    while (pos < len) {
        if (good[pos] == 1) {
            wpos = pos;
            break;
        }
        pos += 8 + le32(good + pos + 4);
    }
    ck_assert_uint_gt(wpos, 0);
    lanyfs_put64(b + wpos + 8, 7);
    ck_assert_int_eq(read_all_mem(b, len, &n, &err), LANYFS_E_CORRUPT);
    ck_assert(u_contains(err.msg, "expected write 1"));
    memcpy(b, good, len);
    lanyfs_put64(b + wpos + 8 + 16, UINT64_C(1) << 60);
    char *badlog = g_build_filename(sc.dir, "bad.log", NULL);
    spit(badlog, b, len);
    struct lanyfs_replay_opts ro = {.upto = LANYFS_REPLAY_ALL};
    ck_assert_int_eq(lanyfs_replay(sc.base, badlog, sc.out, &ro, NULL, &err), LANYFS_E_RANGE);
    ck_assert(u_contains(err.msg, "beyond the base image"));
    ck_assert_int_ne(access(sc.out, F_OK), 0); /* OUT was never created */

    /* a truncated log: replay refuses it before creating OUT */
    spit(badlog, good, len - 5);
    ck_assert_int_eq(lanyfs_replay(sc.base, badlog, sc.out, &ro, NULL, &err),
                     LANYFS_E_TRUNCATED);
    ck_assert_int_ne(access(sc.out, F_OK), 0);

    /* a log of another block size */
    memcpy(b, good, len);
    lanyfs_put32(b + 12, 1024);
    spit(badlog, b, len);
    ck_assert_int_eq(lanyfs_replay(sc.base, badlog, sc.out, &ro, NULL, &err),
                     LANYFS_E_GEOMETRY);
    ck_assert(u_contains(err.msg, "block"));

    /* K beyond the log, a tear past its end, a tear of a whole block */
    ro.upto = total + 1000000;
    ck_assert_int_eq(lanyfs_replay(sc.base, sc.log, sc.out, &ro, NULL, &err), LANYFS_E_INVAL);
    ro.upto = sc.il.writes;
    ro.tear = 1;
    ck_assert_int_eq(lanyfs_replay(sc.base, sc.log, sc.out, &ro, NULL, &err), LANYFS_E_INVAL);
    ck_assert(u_contains(err.msg, "single sector"));

    /* OUT exists: refused without force, and never the base itself */
    ro = (struct lanyfs_replay_opts){.upto = 1};
    spit(sc.out, "x", 1);
    ck_assert_int_eq(lanyfs_replay(sc.base, sc.log, sc.out, &ro, NULL, &err), LANYFS_E_EXISTS);
    ro.force = true;
    ck_assert_int_eq(lanyfs_replay(sc.base, sc.log, sc.base, &ro, NULL, &err), LANYFS_E_INVAL);
    ck_assert_int_eq(lanyfs_replay(sc.base, sc.log, sc.out, &ro, NULL, &err), LANYFS_OK);

    g_free(badlog);
    g_free(b);
    scenario_free(&sc);
}
END_TEST

/* ---- replay: every prefix and tear against an independent apply ------------------- */

static void check_all_prefixes(const struct sim_opts *o)
{
    struct scenario sc;
    scenario_run(&sc, o);
    const struct ilog *il = &sc.il;
    uint32_t sectors = il->bs / LANYFS_SECTOR_SIZE;
    uint8_t *want = g_memdup2(sc.base_bytes, sc.base_len);
    uint8_t *torn = g_malloc(sc.base_len);
    uint64_t verified = 0;
    char what[96];
    for (uint64_t k = 0; k <= il->writes; k++) {
        if (k > 0)
            apply_write(want, il, k, il->bs);
        struct lanyfs_replay_opts ro = {.upto = k, .force = true};
        struct lanyfs_replay_result res;
        replay_ok(&sc, &ro, &res);
        U_EQ(res.landed, k);
        size_t glen;
        uint8_t *got = slurp(sc.out, &glen);
        snprintf(what, sizeof(what), "prefix %" PRIu64, k);
        expect_same(got, glen, want, sc.base_len, il->bs, what);
        g_free(got);
        verified++;
        for (uint32_t t = 1; t < sectors && k < il->writes; t++) {
            memcpy(torn, want, sc.base_len);
            apply_write(torn, il, k + 1, (size_t)t * LANYFS_SECTOR_SIZE);
            ro.tear = t;
            replay_ok(&sc, &ro, &res);
            U_EQ(res.torn_write, k + 1);
            U_EQ(res.torn_block, il->wblock[k + 1]);
            got = slurp(sc.out, &glen);
            snprintf(what, sizeof(what), "prefix %" PRIu64 " torn after %u sectors", k, t);
            expect_same(got, glen, torn, sc.base_len, il->bs, what);
            g_free(got);
            verified++;
        }
    }
    /* the whole log is final.img */
    size_t flen;
    uint8_t *fin = slurp(sc.final, &flen);
    expect_same(fin, flen, want, sc.base_len, il->bs, "final.img against all writes");
    g_free(fin);
    printf("replay (%s, seed %" PRIu64 "): %" PRIu64 " writes, %" PRIu64 " images verified\n",
           o->driver ? "2012 driver" : "correct", o->seed, il->writes, verified);
    g_free(want);
    g_free(torn);
    scenario_free(&sc);
}

START_TEST(test_replay_prefixes_correct)
{
    struct sim_opts o;
    opts_small(&o, 11, false);
    check_all_prefixes(&o);
}
END_TEST

START_TEST(test_replay_prefixes_driver)
{
    struct sim_opts o;
    opts_small(&o, 12, true);
    check_all_prefixes(&o);
}
END_TEST

/* ---- reorder ---------------------------------------------------------------------- */

START_TEST(test_reorder)
{
    struct sim_opts o;
    opts_small(&o, 13, true);
    struct scenario sc;
    scenario_run(&sc, &o);
    const struct ilog *il = &sc.il;
    uint8_t *want = g_malloc(sc.base_len);
    uint64_t checked = 0, nontrivial = 0;
    char what[96];
    const uint64_t seeds[] = {1, 99};
    for (uint64_t k = 1; k <= il->writes; k += 3) {
        uint64_t s = ilog_sync_before(il, k);
        for (size_t si = 0; si < G_N_ELEMENTS(seeds); si++) {
            memcpy(want, sc.base_bytes, sc.base_len);
            uint64_t dropped = 0;
            for (uint64_t i = 1; i <= k; i++) {
                if (i > s && !t_pick(seeds[si], i)) {
                    dropped++;
                    continue;
                }
                apply_write(want, il, i, il->bs);
            }
            struct lanyfs_replay_opts ro = {.upto = k, .reorder = true, .seed = seeds[si],
                                            .force = true};
            struct lanyfs_replay_result res;
            replay_ok(&sc, &ro, &res);
            U_EQ(res.sync_point, s);
            U_EQ(res.dropped, dropped);
            size_t glen;
            uint8_t *got = slurp(sc.out, &glen);
            snprintf(what, sizeof(what), "reorder K %" PRIu64 " seed %" PRIu64, k, seeds[si]);
            expect_same(got, glen, want, sc.base_len, il->bs, what);
            /* again: the same bytes */
            replay_ok(&sc, &ro, &res);
            size_t glen2;
            uint8_t *again = slurp(sc.out, &glen2);
            expect_same(again, glen2, got, glen, il->bs, "reorder repeated");
            g_free(again);
            g_free(got);
            checked++;
            nontrivial += dropped > 0;
        }
    }
    ck_assert_uint_gt(nontrivial, 0);
    printf("reorder: %" PRIu64 " writes, %" PRIu64 " images verified, %" PRIu64
           " with writes dropped\n", il->writes, checked, nontrivial);
    g_free(want);
    scenario_free(&sc);
}
END_TEST

/* ---- simulate determinism ------------------------------------------------------------ */

static void same_files(const char *a, const char *b)
{
    static const char *const names[] = {"base.img", "final.img", "writes.log", "truth.json"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        char *pa = g_build_filename(a, names[i], NULL), *pb = g_build_filename(b, names[i], NULL);
        size_t la, lb;
        uint8_t *x = slurp(pa, &la), *y = slurp(pb, &lb);
        ck_assert_msg(la == lb && memcmp(x, y, la) == 0, "%s differs between two runs", names[i]);
        g_free(x);
        g_free(y);
        g_free(pa);
        g_free(pb);
    }
}

START_TEST(test_simulate_deterministic)
{
    for (int drv = 0; drv < 2; drv++) {
        struct sim_opts o;
        sim_opts_default(&o, 2024, 60, drv);
        o.size = 1u << 20;
        struct scenario a, b;
        scenario_run(&a, &o);
        scenario_run(&b, &o);
        same_files(a.dir, b.dir);
        /* --force replaces an earlier run with the same bytes */
        struct sim_opts of = o;
        of.force = true;
        struct lanyfs_error err;
        ck_assert_int_eq(sim_run(&o, a.dir, NULL, &err), LANYFS_E_EXISTS);
        ck_assert_int_eq(sim_run(&of, a.dir, NULL, &err), LANYFS_OK);
        same_files(a.dir, b.dir);
        /* another seed, other bytes */
        struct sim_opts o2 = o;
        o2.seed = 2025;
        struct scenario c;
        scenario_run(&c, &o2);
        size_t l1, l2;
        uint8_t *f1 = slurp(a.final, &l1), *f2 = slurp(c.final, &l2);
        ck_assert(l1 != l2 || memcmp(f1, f2, l1) != 0);
        g_free(f1);
        g_free(f2);
        scenario_free(&a);
        scenario_free(&b);
        scenario_free(&c);
    }
}
END_TEST

/* ---- truth.json ---------------------------------------------------------------------- */

/* Does the image show path with the type, size and SHA-256 given? */
static bool image_shows(const char *image, const char *path, bool dir, uint64_t size,
                        const char *sha)
{
    struct lanyfs_fs *fs;
    struct lanyfs_error err;
    if (lanyfs_fs_open(image, LANYFS_OPEN_FORCE, &fs, &err) != LANYFS_OK)
        return false;
    bool ok = false;
    struct lanyfs_entry e;
    uint64_t blk;
    if (lanyfs_path_resolve(fs, path, &blk, &e, &err) != LANYFS_OK)
        goto out;
    if (dir) {
        ok = lanyfs_entry_is_dir(&e);
        goto out;
    }
    if (!lanyfs_entry_is_file(&e) || e.size != size)
        goto out;
    GChecksum *c = g_checksum_new(G_CHECKSUM_SHA256);
    uint8_t buf[8192];
    bool readok = true;
    for (uint64_t off = 0; off < size;) {
        size_t want = size - off > sizeof(buf) ? sizeof(buf) : (size_t)(size - off), got = 0;
        if (lanyfs_file_pread(fs, &e, off, buf, want, &got, NULL, &err) != LANYFS_OK ||
            got != want) {
            readok = false;
            break;
        }
        g_checksum_update(c, buf, (gssize)got);
        off += got;
    }
    ok = readok && strcmp(g_checksum_get_string(c), sha) == 0;
    g_checksum_free(c);
out:
    lanyfs_fs_close(fs);
    return ok;
}

static void check_truth(const struct sim_opts *o)
{
    struct scenario sc;
    scenario_run(&sc, o);
    JsonParser *p = json_parser_new();
    GError *ge = NULL;
    ck_assert_msg(json_parser_load_from_file(p, sc.truth, &ge), "truth.json: %s",
                  ge != NULL ? ge->message : "?");
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    ck_assert_str_eq(json_object_get_string_member(root, "format"), "lanyfs-simulate/1");
    ck_assert_uint_eq((uint64_t)json_object_get_int_member(root, "writes"), sc.il.writes);
    JsonArray *ops = json_object_get_array_member(root, "operations");
    ck_assert_uint_eq(json_array_get_length(ops), o->ops + 2 * o->mounts);
    uint64_t writes_sum = 0;
    for (guint i = 0; i < json_array_get_length(ops); i++) {
        JsonObject *op = json_array_get_object_element(ops, i);
        ck_assert_uint_eq((uint64_t)json_object_get_int_member(op, "op"), i + 1);
        ck_assert_uint_eq((uint64_t)json_object_get_int_member(op, "first_write"), writes_sum + 1);
        writes_sum += (uint64_t)json_object_get_int_member(op, "writes");
    }
    ck_assert_uint_eq(writes_sum, sc.il.writes);
    JsonArray *paths = json_object_get_array_member(root, "paths");
    guint np = json_array_get_length(paths);
    ck_assert_uint_gt(np, 3);
    uint64_t checked = 0, before = 0;
    for (guint i = 0; i < np; i++) {
        JsonObject *f = json_array_get_object_element(paths, i);
        const char *path = json_object_get_string_member(f, "path");
        bool dir = strcmp(json_object_get_string_member(f, "type"), "directory") == 0;
        uint64_t size = dir ? 0 : (uint64_t)json_object_get_int_member(f, "size");
        const char *sha = dir ? NULL : json_object_get_string_member(f, "sha256");
        bool findable = json_object_get_boolean_member(f, "readable") &&
                        json_object_get_boolean_member(f, "lookup");
        ck_assert(findable == !json_object_get_null_member(f, "complete_after"));
        if (!findable) {
            ck_assert(!image_shows(sc.final, path, dir, size, sha));
            continue;
        }
        uint64_t k = (uint64_t)json_object_get_int_member(f, "complete_after");
        uint64_t from = (uint64_t)json_object_get_int_member(f, "search_from");
        ck_assert_uint_ge(k, from);
        ck_assert(image_shows(sc.final, path, dir, size, sha));
        struct lanyfs_replay_opts ro = {.upto = k, .force = true};
        replay_ok(&sc, &ro, NULL);
        ck_assert_msg(image_shows(sc.out, path, dir, size, sha),
                      "%s: not complete after %" PRIu64 " writes", path, k);
        if (k > from) {
            ro.upto = k - 1;
            replay_ok(&sc, &ro, NULL);
            ck_assert_msg(!image_shows(sc.out, path, dir, size, sha),
                          "%s: already complete after %" PRIu64 " writes", path, k - 1);
            before++;
        }
        checked++;
    }
    printf("truth (%s, seed %" PRIu64 "): %u paths, %" PRIu64 " checked at K, %" PRIu64
           " at K-1\n", o->driver ? "2012 driver" : "correct", o->seed, np, checked, before);
    g_object_unref(p);
    scenario_free(&sc);
}

START_TEST(test_truth_correct)
{
    struct sim_opts o;
    sim_opts_default(&o, 77, 80, false);
    o.size = 2u << 20;
    check_truth(&o);
}
END_TEST

START_TEST(test_truth_driver)
{
    struct sim_opts o;
    sim_opts_default(&o, 78, 80, true);
    o.blockbits = 10;
    o.addrlen = 2;
    o.size = 2u << 20;
    check_truth(&o);
}
END_TEST

static Suite *sim_suite(void)
{
    Suite *s = suite_create("sim");
    TCase *tc = tcase_create("sim");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_wlog_roundtrip);
    tcase_add_test(tc, test_wlog_writer);
    tcase_add_test(tc, test_hostile_logs);
    tcase_add_test(tc, test_replay_prefixes_correct);
    tcase_add_test(tc, test_replay_prefixes_driver);
    tcase_add_test(tc, test_reorder);
    tcase_add_test(tc, test_simulate_deterministic);
    tcase_add_test(tc, test_truth_correct);
    tcase_add_test(tc, test_truth_driver);
    suite_add_tcase(s, tc);
    return s;
}

U_MAIN(sim_suite)
