/*
 * prompt.c -- the questions of fsck-lanyfs on a terminal, answered from a
 * string: y, n, yes, no, an empty line (the default, yes), a (yes to all),
 * q (quit), end of input (quit), and an answer that is none of these (asked
 * again).  Then whole runs in ASK mode on a copy of b4096-a64.img: "n"
 * leaves it (4, untouched), "q" cancels (32, untouched), "a" repairs (1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"
#include "undo.h"

static int failures;

static void expect(int got, int want, const char *what)
{
    if (got != want) {
        printf("FAIL: %s: got %d, want %d\n", what, got, want);
        failures++;
    }
}

static enum fsck_answer ask_from(const char *input, int n, enum fsck_answer *out)
{
    FILE *in = fmemopen((void *)input, strlen(input), "r");
    FILE *q = fopen("/dev/null", "w");
    struct fsck_opts o;
    memset(&o, 0, sizeof(o));
    o.mode = FSCK_MODE_ASK;
    o.tty_in = in;
    o.tty_out = q;
    struct fsck_prompt *p = fsck_prompt_new(&o);
    enum fsck_answer last = FSCK_ANSWER_NO;
    for (int i = 0; i < n; i++)
        out[i] = last = fsck_prompt_ask(p, q, "Fix it", false);
    fsck_prompt_free(p);
    fclose(in);
    fclose(q);
    return last;
}

static void sha(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    static unsigned char buf[1 << 22];
    size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
    if (f)
        fclose(f);
    unsigned char s[32];
    lanyfs_sha256(buf, n, s);
    lanyfs_sha256_hex(s, hex);
}

static int run_ask(const char *img, const char *answers)
{
    FILE *in = fmemopen((void *)answers, strlen(answers), "r");
    FILE *nul = fopen("/dev/null", "w");
    struct fsck_opts o;
    memset(&o, 0, sizeof(o));
    o.mode = FSCK_MODE_ASK;
    o.no_undo = true;
    o.progress_fd = -1;
    o.device = img;
    o.out = nul;
    o.errout = nul;
    o.tty_in = in;
    o.tty_out = nul;
    o.no_mount_check = true;
    int rc = fsck_run(&o);
    fclose(in);
    fclose(nul);
    return rc;
}

static void copy(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    static char buf[1 << 16];
    size_t n;
    while (a && b && (n = fread(buf, 1, sizeof(buf), a)) > 0)
        fwrite(buf, 1, n, b);
    if (a)
        fclose(a);
    if (b)
        fclose(b);
}

int main(void)
{
    enum fsck_answer a[8];
    ask_from("y\nn\nyes\nno\n\n", 5, a);
    expect(a[0], FSCK_ANSWER_YES, "y");
    expect(a[1], FSCK_ANSWER_NO, "n");
    expect(a[2], FSCK_ANSWER_YES, "yes");
    expect(a[3], FSCK_ANSWER_NO, "no");
    expect(a[4], FSCK_ANSWER_YES, "an empty line");
    ask_from("what\nN\n", 1, a);
    expect(a[0], FSCK_ANSWER_NO, "asked again after a bad answer");
    ask_from("a\n", 3, a);
    expect(a[2], FSCK_ANSWER_YES, "a: yes to all");
    ask_from("q\n", 1, a);
    expect(a[0], FSCK_ANSWER_QUIT, "q");
    ask_from("", 1, a);
    expect(a[0], FSCK_ANSWER_QUIT, "end of input");

    const char *corpus = getenv("LANYFS_CORPUS");
    if (corpus == NULL) {
        printf("FAIL: LANYFS_CORPUS is not set\n");
        return 1;
    }
    char src[4096], before[65], after[65];
    snprintf(src, sizeof(src), "%s/b4096-a64.img", corpus);
    const char *img = "prompt-test.img";
    copy(src, img);
    sha(img, before);
    expect(run_ask(img, "n\n"), FSCK_EXIT_UNCORRECTED, "answering no");
    sha(img, after);
    expect(strcmp(before, after) == 0, 1, "no writes after no");
    expect(run_ask(img, "q\n"), FSCK_EXIT_CANCELLED, "quitting");
    sha(img, after);
    expect(strcmp(before, after) == 0, 1, "no writes after quit");
    expect(run_ask(img, "a\n"), FSCK_EXIT_CORRECTED, "yes to all");
    expect(run_ask(img, ""), FSCK_EXIT_OK, "clean after the repair");
    remove(img);
    printf("prompt: %d failures\n", failures);
    return failures ? 1 : 0;
}
