/*
 * device.h -- is a device mounted?  Shared by fsck-lanyfs and lanyfs-undo,
 * which both refuse to write to a mounted filesystem.
 */
#pragma once

#include <stdbool.h>

/*
 * Is path mounted (by name, by its resolved path, by device number, or an
 * image backing a mounted loop device)?  *where receives the mount point
 * (static storage) when it is.  When /proc/self/mounts cannot be read the
 * answer is no; opening a block device with O_EXCL still refuses one the
 * kernel holds.
 */
bool fsck_device_mounted(const char *path, const char **where);
