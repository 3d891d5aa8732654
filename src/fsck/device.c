/*
 * device.c -- is a device (or image) mounted?
 *
 * A repair of a mounted filesystem races the kernel, so fsck-lanyfs and
 * lanyfs-undo refuse one.  /proc/self/mounts is read line by line (its
 * fields escape space, tab, newline and backslash as \ooo); a mount
 * matches when
 *  - its source names the same file (equal resolved paths), or
 *  - our path is a block device and the source is the same device number,
 *    or a mount point lies on that device (st_dev, for sources the table
 *    names otherwise, such as /dev/root), or
 *  - our path is a regular file backing a loop device that is mounted
 *    (/sys/block/loopN/loop/backing_file).
 * Opening with O_EXCL (driver.c) catches the rest on block devices: the
 * kernel refuses it while the device is mounted.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "device.h"

/* Undo the octal escapes of a mounts field in place. */
static void unescape_field(char *s)
{
    char *w = s;
    for (char *r = s; *r != '\0'; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* The device number of the loop device that file backs, 0 when none. */
static dev_t loop_of(const char *resolved)
{
    dev_t found = 0;
    DIR *d = opendir("/sys/block");
    if (d == NULL)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && found == 0) {
        if (strncmp(de->d_name, "loop", 4) != 0)
            continue;
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/sys/block/%.64s/loop/backing_file", de->d_name);
        FILE *f = fopen(p, "re");
        if (f == NULL)
            continue;
        char back[PATH_MAX];
        if (fgets(back, sizeof(back), f) != NULL) {
            back[strcspn(back, "\n")] = '\0';
            if (strcmp(back, resolved) == 0) {
                snprintf(p, sizeof(p), "/dev/%.64s", de->d_name);
                struct stat st;
                if (stat(p, &st) == 0 && S_ISBLK(st.st_mode))
                    found = st.st_rdev;
            }
        }
        fclose(f);
    }
    closedir(d);
    return found;
}

bool fsck_device_mounted(const char *path, const char **where)
{
    static char mountpoint[PATH_MAX];
    *where = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    char resolved[PATH_MAX];
    if (realpath(path, resolved) == NULL)
        return false;
    dev_t dev = 0;
    if (S_ISBLK(st.st_mode))
        dev = st.st_rdev;
    else if (S_ISREG(st.st_mode))
        dev = loop_of(resolved);

    FILE *m = fopen("/proc/self/mounts", "re");
    if (m == NULL)
        return false;
    bool hit = false;
    char *line = NULL;
    size_t cap = 0;
    while (!hit && getline(&line, &cap, m) > 0) {
        char *save = NULL;
        char *src = strtok_r(line, " \t\n", &save);
        char *mnt = strtok_r(NULL, " \t\n", &save);
        char *type = strtok_r(NULL, " \t\n", &save);
        if (src == NULL || mnt == NULL || type == NULL)
            continue;
        /* A mount point of a network filesystem may hang stat: skip those. */
        bool remote = strncmp(type, "nfs", 3) == 0 || strcmp(type, "cifs") == 0 ||
                      strcmp(type, "smb3") == 0 || strncmp(type, "fuse", 4) == 0 ||
                      strcmp(type, "9p") == 0;
        unescape_field(src);
        unescape_field(mnt);
        char rsrc[PATH_MAX];
        struct stat sst;
        if (realpath(src, rsrc) != NULL && strcmp(rsrc, resolved) == 0)
            hit = true;
        else if (dev != 0 && stat(src, &sst) == 0 && S_ISBLK(sst.st_mode))
            hit = sst.st_rdev == dev;
        else if (dev != 0 && !remote && stat(mnt, &sst) == 0 && sst.st_dev == dev)
            hit = true;
        if (hit)
            snprintf(mountpoint, sizeof(mountpoint), "%s", mnt);
    }
    free(line);
    fclose(m);
    if (hit)
        *where = mountpoint;
    return hit;
}
