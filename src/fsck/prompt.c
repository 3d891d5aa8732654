/*
 * prompt.c -- the answer to each question, as e2fsck gives it.
 *
 *  -n      every answer is no;
 *  -y      every answer is yes;
 *  -p/-a   yes where the catalogue marks the repair preen-safe, no elsewhere
 *          (the driver then reports what was left and exits 4);
 *  none    ask on the terminal: "Rebuild the free list<y>? " takes y/yes,
 *          n/no, a/all (yes to this and every later question), q/quit
 *          (cancel: nothing is written, exit 32); an empty line is the
 *          default, yes; end of input cancels.
 *
 * The question and its answer are printed to the report in every mode
 * ("Rebuild the free list? yes"), so a log of a run shows each decision.
 * The printed answers and notes are translated, as e2fsck's are; the keys
 * y/n/a/q and the English words are accepted in every language, and the
 * translated "yes" and "no" too.
 * On a terminal the question and the answer typed are not printed twice.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../cli/i18n.h"
#include "fsck.h"

struct fsck_prompt {
    enum fsck_mode mode;  /* how answers are found */
    bool yes_all;         /* 'a' was answered */
    FILE *in;             /* answers, ASK mode */
    FILE *qout;           /* questions, ASK mode */
    bool own_in;          /* in was opened here (/dev/tty) */
    bool own_qout;        /* qout was opened here */
    bool usable;          /* questions can be asked */
};

struct fsck_prompt *fsck_prompt_new(const struct fsck_opts *o)
{
    struct fsck_prompt *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->mode = o->mode;
    p->usable = true;
    if (p->mode != FSCK_MODE_ASK)
        return p;
    p->in = o->tty_in;
    p->qout = o->tty_out;
    if (p->in == NULL && isatty(STDIN_FILENO)) {
        p->in = fopen("/dev/tty", "re");
        p->own_in = p->in != NULL;
    }
    if (p->qout == NULL && p->in != NULL) {
        p->qout = fopen("/dev/tty", "we");
        p->own_qout = p->qout != NULL;
    }
    p->usable = p->in != NULL && p->qout != NULL;
    return p;
}

void fsck_prompt_free(struct fsck_prompt *p)
{
    if (p == NULL)
        return;
    if (p->own_in)
        fclose(p->in);
    if (p->own_qout)
        fclose(p->qout);
    free(p);
}

bool fsck_prompt_usable(const struct fsck_prompt *p)
{
    return p->usable;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    size_t i = 0;
    while (isspace((unsigned char)s[i]))
        i++;
    memmove(s, s + i, n - i + 1);
}

/* One answer from the terminal. */
static enum fsck_answer ask_tty(struct fsck_prompt *p, const char *question)
{
    for (;;) {
        fprintf(p->qout, "%s<y>? ", question);
        fflush(p->qout);
        char line[64];
        if (fgets(line, sizeof(line), p->in) == NULL) {
            fputs("\n", p->qout);
            return FSCK_ANSWER_QUIT;
        }
        if (strchr(line, '\n') == NULL) {
            int ch;
            while ((ch = fgetc(p->in)) != EOF && ch != '\n')
                ;
        }
        trim(line);
        if (line[0] == '\0' || strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0 ||
            strcasecmp(line, _("yes")) == 0)
            return FSCK_ANSWER_YES;
        if (strcasecmp(line, "n") == 0 || strcasecmp(line, "no") == 0 ||
            strcasecmp(line, _("no")) == 0)
            return FSCK_ANSWER_NO;
        if (strcasecmp(line, "a") == 0 || strcasecmp(line, "all") == 0) {
            p->yes_all = true;
            return FSCK_ANSWER_YES;
        }
        if (strcasecmp(line, "q") == 0 || strcasecmp(line, "quit") == 0)
            return FSCK_ANSWER_QUIT;
        fputs(_("Please answer y (yes), n (no), a (yes to all) or q (quit).\n"), p->qout);
    }
}

enum fsck_answer fsck_prompt_ask(struct fsck_prompt *p, FILE *out, const char *question,
                                 bool preen_ok)
{
    enum fsck_answer a;
    const char *note = "";
    switch (p->mode) {
    case FSCK_MODE_NO:
        a = FSCK_ANSWER_NO;
        break;
    case FSCK_MODE_YES:
        a = FSCK_ANSWER_YES;
        break;
    case FSCK_MODE_PREEN:
        a = preen_ok ? FSCK_ANSWER_YES : FSCK_ANSWER_NO;
        if (!preen_ok)
            note = _(" (not safe to fix unattended)");
        break;
    case FSCK_MODE_ASK:
    default:
        if (p->yes_all) {
            a = FSCK_ANSWER_YES;
            break;
        }
        if (!p->usable)
            return FSCK_ANSWER_QUIT;
        a = ask_tty(p, question);
        bool same = out != NULL && isatty(fileno(out));
        if (same)
            return a;
        break;
    }
    if (out != NULL)
        fprintf(out, "%s? %s%s\n", question,
                a == FSCK_ANSWER_YES  ? _("yes")
                : a == FSCK_ANSWER_NO ? _("no")
                                      : _("quit"),
                note);
    return a;
}
