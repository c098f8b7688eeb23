/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A name for an object the kernel could only identify by device and inode:
 * a disconnected dentry (a file handle's), which has no parent to build a
 * path from. For its event the agent looks where the profile's rules point
 * on that file system first (a denied directory is the likely place), then
 * through the whole file system where this agent sees it mounted, within
 * BW_NAME_SCAN_MAX entries.
 */
#ifndef BW_INODE_NAME_H
#define BW_INODE_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define BW_NAME_SCAN_MAX 65536

/* 0 and the path in out, -ENOENT when not found within the bound, or -errno. */
int bw_inode_name(const struct bw_profile *p, uint32_t dev, uint64_t ino, char *out, size_t len);

#endif /* BW_INODE_NAME_H */
