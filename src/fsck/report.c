/*
 * report.c -- the JSON report of fsck-lanyfs (--json).
 *
 * With --json nothing but one JSON document goes to standard output, once
 * the run is over, in the envelope every lanyfs-tools document has
 * (docs/json.md: format, command, image, problems, exit_code): the mode,
 * every finding shown (code, name, severity, message, the repair proposed,
 * the answer) and the summary.  docs/fsck.md gives the shape.  Messages
 * come escaped (fsck_escape), so every string is valid UTF-8.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "repair.h"

bool fsck_report_add(struct fsck_report *rep, unsigned round, const struct scan_finding *f,
                     const char *message, const char *answer)
{
    if (rep->nrows == rep->cap) {
        size_t ncap = rep->cap ? rep->cap * 2 : 32;
        void *p = realloc(rep->rows, ncap * sizeof(*rep->rows));
        if (p == NULL)
            return false;
        rep->rows = p;
        rep->cap = ncap;
    }
    const struct scan_problem_info *pi = scan_problem_lookup(f->code);
    char *m = strdup(message);
    if (m == NULL)
        return false;
    rep->rows[rep->nrows++] = (struct fsck_row){
        .round = round,
        .code = f->code,
        .severity = pi ? pi->severity : SCAN_SEV_ERROR,
        .message = m,
        .repair = pi ? pi->repair : "none",
        .answer = answer,
    };
    return true;
}

void fsck_report_free(struct fsck_report *rep)
{
    for (size_t i = 0; i < rep->nrows; i++)
        free(rep->rows[i].message);
    free(rep->rows);
    memset(rep, 0, sizeof(*rep));
}

static const char *mode_name(enum fsck_mode m)
{
    switch (m) {
    case FSCK_MODE_NO:
        return "no";
    case FSCK_MODE_PREEN:
        return "preen";
    case FSCK_MODE_YES:
        return "yes";
    case FSCK_MODE_ASK:
    default:
        return "ask";
    }
}

void fsck_report_json(FILE *f, const struct fsck_opts *o, const struct fsck_report *rep,
                      const struct fsck_summary *s, int exit_code, const char *error)
{
    char *dev = fsck_escape(o->device, strlen(o->device));
    fputs("{\n  \"format\": \"lanyfs-tools/1\",\n  \"command\": \"fsck\",\n"
          "  \"version\": \"" PACKAGE_VERSION "\",\n",
          f);
    fputs("  \"image\": ", f);
    fsck_json_string(f, dev ? dev : "");
    fprintf(f, ",\n  \"mode\": \"%s\",\n  \"findings\": [", mode_name(o->mode));
    for (size_t i = 0; i < rep->nrows; i++) {
        const struct fsck_row *r = &rep->rows[i];
        const struct scan_problem_info *pi = scan_problem_lookup(r->code);
        fprintf(f, "%s\n    {\"round\": %u, \"code\": \"0x%06" PRIx32 "\", \"name\": ",
                i ? "," : "", r->round, r->code);
        fsck_json_string(f, pi ? pi->name : "UNKNOWN");
        fprintf(f, ", \"pass\": %u, \"severity\": \"%s\", \"message\": ", (unsigned)(r->code >> 16),
                scan_severity_name(r->severity));
        fsck_json_string(f, r->message);
        fputs(", \"repair\": ", f);
        fsck_json_string(f, r->repair);
        fputs(", \"answer\": ", f);
        fsck_json_string(f, r->answer);
        fputc('}', f);
    }
    fprintf(f, "%s],\n", rep->nrows ? "\n  " : "");
    fprintf(f,
            "  \"summary\": {\"files\": %" PRIu64 ", \"directories\": %" PRIu64
            ", \"blocks\": %" PRIu64 ", \"blocks_used\": %" PRIu64 ", \"blocks_free\": %" PRIu64
            ", \"blocks_reclaimed\": %" PRIu64 ", \"moved_to_lost_found\": %" PRIu64
            ", \"writes\": %" PRIu64 ", \"modified\": %s, \"clean\": %s, \"undo_file\": ",
            s->files, s->dirs, s->blocks, s->used, s->free, s->reclaimed, s->lost_found,
            s->writes, s->modified ? "true" : "false", s->clean ? "true" : "false");
    if (s->undo != NULL) {
        char *u = fsck_escape(s->undo, strlen(s->undo));
        fsck_json_string(f, u ? u : "");
        free(u);
    } else {
        fputs("null", f);
    }
    fputs("},\n  \"problems\": [", f);
    if (error != NULL) {
        char *e = fsck_escape(error, strlen(error));
        fputs("{\"where\": null, \"code\": \"error\", \"block\": null, \"message\": ", f);
        fsck_json_string(f, e ? e : "");
        fputc('}', f);
        free(e);
    }
    fprintf(f, "],\n  \"exit_code\": %d\n}\n", exit_code);
    free(dev);
}
