/*
 * rescue-salvage.c -- the folder-safe copier behind Salvage (rescue-salvage.h).
 *
 * This is a minimal copier of the application's own, over the core reader
 * (rescue-image.c).  When the shared salvage code of the command-line tools
 * exists, the application should call it instead and this file should go.
 *
 * Order: the entries to copy are collected breadth first from the
 * selection (a directory brings everything below it), so a directory is
 * made before what it holds and siblings come together; the descriptor of
 * the last directory written into is kept open for the next sibling.
 */
#define G_LOG_DOMAIN "rescue-salvage"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lanyfs.h"
#include "rescue-image.h"
#include "rescue-salvage.h"

#define COPY_CHUNK (1u << 20)
#define NAME_MAX_BYTES 255

void rescue_salvage_report_free(RescueSalvageReport *report)
{
    if (report == NULL)
        return;
    g_free(report->folder);
    g_ptr_array_unref(report->problems);
    g_free(report);
}

char *rescue_salvage_escape_name(const guint8 *name, gsize len)
{
    GString *s;
    char *escaped;

    if (len == 0)
        return g_strdup("\\x00");
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return g_strdup(len == 1 ? "\\x2e" : "\\x2e\\x2e");

    escaped = rescue_escape_bytes(name, len);
    s = g_string_new(NULL);
    for (const char *p = escaped; *p; p++) {
        if (*p == '/')
            g_string_append(s, "\\x2f");
        else
            g_string_append_c(s, *p);
    }
    g_free(escaped);

    if (s->len > NAME_MAX_BYTES) {
        /* Keep a prefix that ends on a character, then a hash of the whole name. */
        g_autofree char *hash = g_compute_checksum_for_data(G_CHECKSUM_SHA256, name, len);
        const char *cut = s->str + 200;
        while (cut > s->str && (*cut & 0xc0) == 0x80)
            cut--;
        g_string_truncate(s, (gsize)(cut - s->str));
        g_string_append_printf(s, "~%.16s", hash);
    }
    return g_string_free(s, FALSE);
}

/* A salvage in progress. */
typedef struct {
    RescueData *data;            /* borrowed */
    RescueImage *img;            /* owned */
    RescueProgress *progress;    /* borrowed, may be NULL */
    GCancellable *cancellable;   /* borrowed, may be NULL */
    RescueSalvageReport *report; /* being filled */
    int root_fd;                 /* the salvage folder */
    GString *manifest;           /* manifest.tsv */
    guint64 total_bytes;         /* bytes the files to copy hold */
    guint64 done_bytes;          /* bytes copied so far */
    char *last_dir;              /* relative path of cached_fd, NULL when none (owned) */
    int cached_fd;               /* descriptor of last_dir, -1 when none */
    guint8 *buf;                 /* copy buffer (owned) */
} Salvage;

static const char *state_folder(guint8 state)
{
    switch (state) {
    case SCAN_ENTRY_DELETED:
        return "deleted";
    case SCAN_ENTRY_ORPHAN:
        return "orphaned";
    default:
        return "files";
    }
}

static void problem(Salvage *sv, const char *path, const char *what)
{
    sv->report->failed++;
    g_ptr_array_add(sv->report->problems, g_strdup_printf("%s: %s", path, what));
}

/* Open (making as needed) the directory at components under the salvage folder. */
static int open_dir(Salvage *sv, char **components, guint n, const char *rel, GError **error)
{
    int fd;

    if (sv->last_dir != NULL && strcmp(sv->last_dir, rel) == 0)
        return sv->cached_fd;
    if (sv->cached_fd >= 0)
        close(sv->cached_fd);
    sv->cached_fd = -1;
    g_clear_pointer(&sv->last_dir, g_free);

    fd = dup(sv->root_fd);
    if (fd < 0)
        goto out_errno;
    for (guint i = 0; i < n; i++) {
        int next;
        if (mkdirat(fd, components[i], 0755) == 0)
            sv->report->dirs++;
        else if (errno != EEXIST)
            goto out_close;
        next = openat(fd, components[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0)
            goto out_close;
        close(fd);
        fd = next;
    }
    sv->cached_fd = fd;
    sv->last_dir = g_strdup(rel);
    return fd;

out_close:
    {
        int saved = errno;
        close(fd);
        errno = saved;
    }
out_errno:
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s", g_strerror(errno));
    return -1;
}

/* The escaped path components of an entry: its state's folder, then top level down. */
static char **entry_components(Salvage *sv, guint32 id, guint *n_out)
{
    g_autofree guint32 *chain = NULL;
    guint n = 0;
    const RescueEntryInfo *e = rescue_data_get_entry(sv->data, id);
    char **parts;

    chain = rescue_data_get_ancestry(sv->data, id, &n);
    parts = g_new0(char *, n + 2);
    parts[0] = g_strdup(state_folder(e->state));
    for (guint i = 0; i < n; i++) {
        const RescueEntryInfo *a = rescue_data_get_entry(sv->data, chain[i]);
        parts[i + 1] = rescue_salvage_escape_name(a->raw_name, a->raw_name_len);
    }
    if (n == 0) {
        /* The root itself, or an entry the tree does not place: keep it by name. */
        parts[1] = rescue_salvage_escape_name(e->raw_name, e->raw_name_len);
        n = 1;
    }
    *n_out = n + 1;
    return parts;
}

static void manifest_line(Salvage *sv, const RescueEntryInfo *e, const char *saved_as,
                          guint64 written, guint64 lost, const char *result)
{
    g_string_append_printf(sv->manifest,
                           "%s\t%s\t%s\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT
                           "\t%" G_GUINT64_FORMAT "\t%s\n",
                           scan_entry_state_name(e->state), saved_as, e->path, e->size, written,
                           lost, result);
}

static gboolean write_all(int fd, const guint8 *p, gsize n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return FALSE;
        }
        p += w;
        n -= (gsize)w;
    }
    return TRUE;
}

static void copy_file(Salvage *sv, const RescueEntryInfo *e, int dir_fd, const char *rel_dir,
                      const char *name)
{
    g_autofree char *chosen = NULL;
    g_autofree char *saved_as = NULL;
    int fd = -1;
    guint64 off = 0;
    guint64 lost = 0;

    for (guint k = 1; k <= 100 && fd < 0; k++) {
        g_free(chosen);
        chosen = k == 1 ? g_strdup(name) : g_strdup_printf("%s~%u", name, k);
        fd = openat(dir_fd, chosen, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    saved_as = g_build_filename(rel_dir, chosen, NULL);
    if (fd < 0) {
        problem(sv, e->path, g_strerror(errno));
        manifest_line(sv, e, saved_as, 0, 0, "failed");
        return;
    }
    while (off < e->size) {
        g_autoptr(GError) local = NULL;
        gsize want = (gsize)MIN((guint64)COPY_CHUNK, e->size - off);
        gssize got;

        if (g_cancellable_is_cancelled(sv->cancellable))
            break;
        got = rescue_image_read_entry(sv->img, e->id, off, sv->buf, want, &lost, &local);
        if (got <= 0) {
            problem(sv, e->path, local != NULL ? local->message : _("the image ended early"));
            break;
        }
        if (!write_all(fd, sv->buf, (gsize)got)) {
            problem(sv, e->path, g_strerror(errno));
            break;
        }
        off += (guint64)got;
        sv->done_bytes += (guint64)got;
        if (sv->progress != NULL && sv->total_bytes > 0)
            rescue_progress_post(sv->progress, (double)sv->done_bytes / (double)sv->total_bytes,
                                 e->path);
    }
    if (e->modified != RESCUE_TIME_UNSET) {
        struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = (time_t)e->modified}};
        futimens(fd, times);
    }
    close(fd);
    sv->report->bytes += off;
    sv->report->lost_blocks += lost;
    if (off == e->size)
        sv->report->files++;
    manifest_line(sv, e, saved_as, off, lost,
                  off < e->size ? "incomplete" : (lost > 0 ? "partial" : "complete"));
}

static void salvage_entry(Salvage *sv, guint32 id)
{
    const RescueEntryInfo *e = rescue_data_get_entry(sv->data, id);
    g_autoptr(GError) error = NULL;
    char **parts;
    guint n = 0;
    g_autofree char *rel_dir = NULL;
    int fd;

    parts = entry_components(sv, id, &n);
    if (e->type == LANYFS_TYPE_DIR) {
        /* A directory is the folder itself: make it, and what it holds follows. */
        g_autofree char *rel = g_build_filenamev(parts);
        if (open_dir(sv, parts, n, rel, &error) < 0)
            problem(sv, e->path, error->message);
        else
            manifest_line(sv, e, rel, 0, 0, "directory");
        g_strfreev(parts);
        return;
    }
    {
        char *name = parts[n - 1];
        parts[n - 1] = NULL;
        rel_dir = g_build_filenamev(parts);
        fd = open_dir(sv, parts, n - 1, rel_dir, &error);
        if (fd < 0)
            problem(sv, e->path, error->message);
        else
            copy_file(sv, e, fd, rel_dir, name);
        g_free(name);
    }
    g_strfreev(parts);
}

/* Entries to copy, breadth first from the selection, each once. */
static GArray *collect(RescueData *data, const guint32 *ids, guint n)
{
    guint32 count = rescue_data_get_n_entries(data);
    g_autofree guint8 *seen = g_new0(guint8, (gsize)count + 1);
    GArray *order = g_array_new(FALSE, FALSE, sizeof(guint32));
    guint32 ntop = 0;
    const guint32 *top;

    if (n == 0) {
        top = rescue_data_get_top_level(data, &ntop);
        ids = top;
        n = ntop;
    }
    for (guint i = 0; i < n; i++) {
        if (ids[i] >= 1 && ids[i] <= count && !seen[ids[i]]) {
            seen[ids[i]] = 1;
            g_array_append_val(order, ids[i]);
        }
    }
    for (guint q = 0; q < order->len; q++) {
        guint32 nc = 0;
        const guint32 *kids = rescue_data_get_children(data, g_array_index(order, guint32, q), &nc);
        for (guint32 c = 0; c < nc; c++) {
            if (!seen[kids[c]]) {
                seen[kids[c]] = 1;
                g_array_append_val(order, kids[c]);
            }
        }
    }
    return order;
}

static int make_folder(const char *dest, RescueData *data, char **made, GError **error)
{
    g_autofree char *base = g_path_get_basename(rescue_data_get_image_path(data));
    int dest_fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = -1;

    if (dest_fd < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    _("Cannot open the folder “%s”: %s"), dest, g_strerror(errno));
        return -1;
    }
    for (guint k = 1; k < 1000; k++) {
        g_autofree char *name = k == 1 ? g_strdup_printf("%s-salvage", base)
                                       : g_strdup_printf("%s-salvage-%u", base, k);
        if (mkdirat(dest_fd, name, 0755) == 0) {
            fd = openat(dest_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0)
                *made = g_build_filename(dest, name, NULL);
            break;
        }
        if (errno != EEXIST)
            break;
    }
    if (fd < 0)
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    _("Cannot make a folder in “%s”: %s"), dest, g_strerror(errno));
    close(dest_fd);
    return fd;
}

RescueSalvageReport *rescue_salvage_run(RescueData *data, const guint32 *ids, guint n,
                                        const char *dest, RescueProgress *progress,
                                        GCancellable *cancellable, GError **error)
{
    Salvage sv = {0};
    g_autoptr(GArray) order = NULL;
    RescueSalvageReport *report;

    g_return_val_if_fail(data != NULL, NULL);
    g_return_val_if_fail(ids != NULL || n == 0, NULL);
    g_return_val_if_fail(dest != NULL, NULL);
    g_return_val_if_fail(error == NULL || *error == NULL, NULL);

    sv.img = rescue_image_open(data, error);
    if (sv.img == NULL)
        return NULL;
    report = g_new0(RescueSalvageReport, 1);
    report->problems = g_ptr_array_new_with_free_func(g_free);
    sv.root_fd = make_folder(dest, data, &report->folder, error);
    if (sv.root_fd < 0) {
        rescue_image_close(sv.img);
        rescue_salvage_report_free(report);
        return NULL;
    }
    sv.data = data;
    sv.progress = progress;
    sv.cancellable = cancellable;
    sv.report = report;
    sv.cached_fd = -1;
    sv.buf = g_malloc(COPY_CHUNK);
    sv.manifest = g_string_new("state\tsaved_as\toriginal_path\tsize\twritten\tlost_blocks\tresult\n");

    order = collect(data, ids, n);
    for (guint i = 0; i < order->len; i++) {
        const RescueEntryInfo *e = rescue_data_get_entry(data, g_array_index(order, guint32, i));
        if (e->type != LANYFS_TYPE_DIR)
            sv.total_bytes += e->size;
    }
    for (guint i = 0; i < order->len; i++) {
        if (g_cancellable_is_cancelled(cancellable))
            break;
        salvage_entry(&sv, g_array_index(order, guint32, i));
    }

    {
        int mfd = openat(sv.root_fd, "manifest.tsv",
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (mfd < 0 || !write_all(mfd, (const guint8 *)sv.manifest->str, sv.manifest->len))
            problem(&sv, "manifest.tsv", g_strerror(errno));
        if (mfd >= 0)
            close(mfd);
    }
    if (sv.cached_fd >= 0)
        close(sv.cached_fd);
    close(sv.root_fd);
    g_free(sv.last_dir);
    g_free(sv.buf);
    g_string_free(sv.manifest, TRUE);
    rescue_image_close(sv.img);

    if (g_cancellable_set_error_if_cancelled(cancellable, error)) {
        rescue_salvage_report_free(report);
        return NULL;
    }
    return report;
}

typedef struct {
    RescueData *data;          /* owned reference */
    guint32 *ids;              /* owned */
    guint n;
    char *dest;                /* owned */
    RescueProgress *progress;  /* owned reference, may be NULL */
} Job;

static void job_free(gpointer p)
{
    Job *job = p;

    rescue_data_unref(job->data);
    g_free(job->ids);
    g_free(job->dest);
    if (job->progress != NULL)
        rescue_progress_unref(job->progress);
    g_free(job);
}

static void salvage_thread(GTask *task, gpointer source_object, gpointer task_data,
                           GCancellable *cancellable)
{
    Job *job = task_data;
    GError *error = NULL;
    RescueSalvageReport *report;

    (void)source_object;
    report = rescue_salvage_run(job->data, job->ids, job->n, job->dest, job->progress,
                                cancellable, &error);
    if (report == NULL)
        g_task_return_error(task, error);
    else
        g_task_return_pointer(task, report, (GDestroyNotify)rescue_salvage_report_free);
}

void rescue_salvage_async(RescueData *data, const guint32 *ids, guint n, const char *dest,
                          RescueProgress *progress, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
    g_autoptr(GTask) task = NULL;
    Job *job;

    g_return_if_fail(data != NULL);
    g_return_if_fail(dest != NULL);

    job = g_new0(Job, 1);
    job->data = rescue_data_ref(data);
    job->ids = n > 0 ? g_memdup2(ids, (gsize)n * sizeof(guint32)) : NULL;
    job->n = n;
    job->dest = g_strdup(dest);
    job->progress = progress != NULL ? rescue_progress_ref(progress) : NULL;
    task = g_task_new(NULL, cancellable, callback, user_data);
    g_task_set_source_tag(task, rescue_salvage_async);
    g_task_set_name(task, "[rescue] salvage");
    g_task_set_task_data(task, job, job_free);
    g_task_run_in_thread(task, salvage_thread);
}

RescueSalvageReport *rescue_salvage_finish(GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
    return g_task_propagate_pointer(G_TASK(result), error);
}
