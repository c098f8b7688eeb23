/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup v2 identity: where the hierarchy is mounted (not always
 * /sys/fs/cgroup), the 64-bit id the kernel hooks see for a cgroup
 * directory, and the walk over a subtree.
 */
#ifndef BW_CGROUP_H
#define BW_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* The cgroup2 mount point from /proc/self/mountinfo; -ENOENT if none. */
int bw_cgroup_root(char *buf, size_t len);
/* PATH absolute, or relative to the cgroup2 mount, to an absolute directory. */
int bw_cgroup_resolve(const char *path, char *out, size_t len);
/* bw_cgroup_resolve for --cgroup PATH: says why not on stderr. */
int bw_cgroup_arg(const char *path, char *out, size_t len);
/* The calling process's own cgroup v2 directory (absolute). */
int bw_cgroup_self(char *out, size_t len);
/* The path below the cgroup2 mount ("/" for the root) of an absolute path. */
const char *bw_cgroup_rel(const char *abs);
/* The id bpf_get_current_cgroup_id() returns for tasks in that directory. */
int bw_cgroup_id(const char *dir, uint64_t *id);
/*
 * Call fn for dir and every cgroup below it, parents first. fn returns 0 to
 * go on, BW_WALK_PRUNE to skip what is below path, anything else to stop
 * the walk, which then returns it. A cgroup removed during the walk is
 * passed over. Returns 0 after a whole walk, or -errno.
 */
#define BW_WALK_PRUNE 1
#define BW_WALK_STOP  2
typedef int (*bw_cgroup_fn)(const char *path, uint64_t id, void *arg);
int bw_cgroup_walk(const char *dir, bw_cgroup_fn fn, void *arg);
/* Find the directory of id below root; fills out, or returns -ENOENT. */
int bw_cgroup_find(const char *root, uint64_t id, char *out, size_t len);

/*
 * What the cgroup path says it is: "service NAME" (systemd .service),
 * "container ID" (docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope,
 * or a 64-hex-digit component under kubepods), "scope NAME", or "" when the
 * path says nothing. out gets at most len bytes.
 */
void bw_cgroup_unit(const char *path, char *out, size_t len);

#endif
