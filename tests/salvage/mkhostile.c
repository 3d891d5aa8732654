/*
 * mkhostile.c -- an image whose names try to lead a salvage out of its folder.
 *
 *   mkhostile OUT
 *
 * Built with the test fixture (tests/fixture.h, 1024-byte blocks, 4-byte
 * addresses): in the root, files named ".", "..", "../../escape", "/",
 * "ctl\x01\x07\x1b[31m\n", "bad\xff\xfeutf8", "\xc0\xaf" (an overlong
 * '/'), "\xe2\x80\xaeevil" (U+202E, right-to-left override), "a\\x2fb"
 * (a backslash that must not read as an escape), 256 bytes of 'n' (no
 * NUL), an empty name, and "plain"; (the data of the 256-byte and the empty name comes
 * from files "donor-8" and "donor-9", left empty); a directory ".." holding "deep" and a
 * directory "sub" holding "x".  Every file holds "NAME-INDEX\n" repeated to
 * 3000 bytes, INDEX being its place in the list above (0..10, deep 11, x
 * 12), so a test can tell every copy by its content.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static void die(const char *what)
{
    fprintf(stderr, "mkhostile: %s\n", what);
    exit(1);
}

/* 3000 bytes of "file-INDEX\n". */
static void content(char *buf, size_t len, int index)
{
    char unit[32];
    int n = snprintf(unit, sizeof(unit), "file-%d\n", index);
    for (size_t i = 0; i < len; i++)
        buf[i] = unit[i % (size_t)n];
}

/* A file of any name bytes (also empty) with content, linked into parent. */
static void file(struct fx *fx, uint64_t parent, const void *name, size_t len, int index)
{
    char data[3000];
    content(data, sizeof(data), index);
    if (len > 0 && memchr(name, '\0', len) == NULL && len < 256) {
        char nm[256];
        memcpy(nm, name, len);
        nm[len] = '\0';
        if (fx_file(fx, parent, nm, data, sizeof(data)) == 0)
            die("fx_file failed");
        return;
    }
    /* An empty or a 256-byte name: a data-less entry linked by hand, then the data. */
    uint64_t e = fx_entry_new(fx, LANYFS_TYPE_FILE, name, len);
    if (e == 0 || fx_link(fx, parent, e) != 0)
        die("fx_entry_new failed");
    char donor[32];
    snprintf(donor, sizeof(donor), "donor-%d", index);
    uint64_t tmp = fx_file(fx, parent, donor, data, sizeof(data));
    if (tmp == 0)
        die("fx_file failed");
    /* Give the data to e; the donor stays, an empty file. */
    fx_set_subtree(fx, e, fx_get_subtree(fx, tmp));
    fx_set_size(fx, e, sizeof(data));
    fx_set_subtree(fx, tmp, 0);
    fx_set_size(fx, tmp, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkhostile OUT\n");
        return 2;
    }
    struct fx *fx = fx_new(10, 4, 1024);
    if (fx == NULL)
        die("fx_new failed");
    uint64_t root = fx_root(fx);
    static const char *const names[] = {
        ".", "../../escape", "/", "ctl\x01\x07\x1b[31m\n", "bad\xff\xfeutf8", "\xc0\xaf",
        "\xe2\x80\xae\x65vil", /* U+202E, then "evil" */ "a\\x2fb",
    };
    int index = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        file(fx, root, names[i], strlen(names[i]), index++);
    uint8_t longname[256];
    memset(longname, 'n', sizeof(longname));
    file(fx, root, longname, sizeof(longname), index++);
    file(fx, root, "", 0, index++);
    file(fx, root, "plain", 5, index++);
    uint64_t dotdot = fx_mkdir(fx, root, "..");
    uint64_t sub = fx_mkdir(fx, root, "sub");
    if (dotdot == 0 || sub == 0)
        die("fx_mkdir failed");
    file(fx, dotdot, "deep", 4, index++);
    file(fx, sub, "x", 1, index++);
    int rc = fx_save(fx, argv[1]);
    fx_free(fx);
    return rc == 0 ? 0 : 1;
}
