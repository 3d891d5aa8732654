/*
 * truth.c -- a simulated unplug scenario and its truth (truth.h).
 */
#include "truth.h"

#include <fcntl.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sha256.h"

/* Run argv (quiet); true when it exits 0. */
static bool run_prog(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, STDOUT_FILENO);
            dup2(nul, STDERR_FILENO);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return false;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool load_truth(struct truth_scenario *sc, const char *prog)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/truth.json", sc->dir);
    GError *gerr = NULL;
    JsonParser *p = json_parser_new();
    bool ok = false;
    if (!json_parser_load_from_file(p, path, &gerr)) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, gerr->message);
        g_error_free(gerr);
        goto out;
    }
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    sc->writes = (uint64_t)json_object_get_int_member(root, "writes");
    JsonObject *o = json_object_get_object_member(root, "options");
    sc->blocksize = (uint32_t)json_object_get_int_member(o, "blocksize");
    JsonArray *arr = json_object_get_array_member(root, "paths");
    guint n = json_array_get_length(arr);
    sc->paths = calloc(n ? n : 1, sizeof(*sc->paths));
    if (sc->paths == NULL)
        goto out;
    for (guint i = 0; i < n; i++) {
        JsonObject *x = json_array_get_object_element(arr, i);
        struct truth_path *t = &sc->paths[sc->npaths];
        const char *type = json_object_get_string_member(x, "type");
        JsonNode *ca = json_object_get_member(x, "complete_after");
        if (ca == NULL || JSON_NODE_HOLDS_NULL(ca))
            continue;
        t->dir = strcmp(type, "directory") == 0;
        t->complete = (uint64_t)json_node_get_int(ca);
        if (!t->dir) {
            JsonNode *sha = json_object_get_member(x, "sha256");
            if (sha == NULL || JSON_NODE_HOLDS_NULL(sha))
                continue;
            t->size = (uint64_t)json_object_get_int_member(x, "size");
            snprintf(t->sha, sizeof(t->sha), "%s", json_node_get_string(sha));
        }
        t->path = strdup(json_object_get_string_member(x, "path"));
        if (t->path == NULL)
            goto out;
        sc->npaths++;
    }
    ok = true;
out:
    g_object_unref(p);
    return ok;
}

bool truth_make(struct truth_scenario *sc, const char *prog, const char *lanyfs,
                const char *work, const char *spec)
{
    memset(sc, 0, sizeof(*sc));
    char mode[16], size[32];
    unsigned long long seed, ops, bs, al;
    if (sscanf(spec, "%15[^:]:%llu:%llu:%llu:%llu:%31s", mode, &seed, &ops, &bs, &al, size) != 6) {
        fprintf(stderr, "%s: bad scenario '%s'\n", prog, spec);
        return false;
    }
    sc->driver = strcmp(mode, "2012") == 0;
    snprintf(sc->dir, sizeof(sc->dir), "%s/%s-%llu-%llu-%llu", work, mode, seed, bs, al);
    char s_seed[32], s_ops[32], s_geo[64];
    snprintf(s_seed, sizeof(s_seed), "%llu", seed);
    snprintf(s_ops, sizeof(s_ops), "%llu", ops);
    snprintf(s_geo, sizeof(s_geo), "%llu:%llu", bs, al);
    char *argv[16];
    int a = 0;
    argv[a++] = (char *)lanyfs;
    argv[a++] = "simulate";
    argv[a++] = "--seed";
    argv[a++] = s_seed;
    argv[a++] = "--ops";
    argv[a++] = s_ops;
    argv[a++] = "--geometry";
    argv[a++] = s_geo;
    argv[a++] = "--size";
    argv[a++] = size;
    argv[a++] = "--force";
    if (sc->driver)
        argv[a++] = "--driver=2012";
    argv[a++] = sc->dir;
    argv[a] = NULL;
    if (!run_prog(argv) || !load_truth(sc, prog)) {
        fprintf(stderr, "%s: the simulator failed for %s\n", prog, spec);
        return false;
    }
    return true;
}

void truth_free(struct truth_scenario *sc)
{
    for (size_t i = 0; i < sc->npaths; i++)
        free(sc->paths[i].path);
    free(sc->paths);
    sc->paths = NULL;
    sc->npaths = 0;
}

bool truth_shows(struct lanyfs_fs *fs, const struct truth_path *t)
{
    struct lanyfs_entry e;
    if (lanyfs_path_resolve(fs, t->path, NULL, &e, NULL) != LANYFS_OK)
        return false;
    if (t->dir)
        return lanyfs_entry_is_dir(&e);
    if (!lanyfs_entry_is_file(&e) || e.size != t->size || e.size > ((uint64_t)1 << 30))
        return false;
    bool ok = false;
    uint8_t *buf = malloc(e.size ? e.size : 1);
    size_t got = 0;
    if (buf != NULL && lanyfs_file_pread(fs, &e, 0, buf, e.size, &got, NULL, NULL) == LANYFS_OK &&
        got == e.size) {
        uint8_t sum[LANYFS_SHA256_LEN];
        char hex[65];
        lanyfs_sha256(buf, got, sum);
        lanyfs_sha256_hex(sum, hex);
        ok = strcmp(hex, t->sha) == 0;
    }
    free(buf);
    return ok;
}
