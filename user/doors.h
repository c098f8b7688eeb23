/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Descriptors that move tasks between cgroups, held by a process before it
 * is governed. Without `allow cgroup` nothing in a sandbox can open or
 * receive a cgroup.procs or cgroup.threads file for writing (bpf/cgtree.bpf.h)
 * and the kernel's own check of each move (bw_cg_leave) is not attached, so
 * such a descriptor opened beforehand would be a way out: the agent looks
 * for them where a process comes under a profile, and refuses to govern it
 * while one is held (docs/enforcement.md, "The governed cgroup tree").
 */
#ifndef BW_DOORS_H
#define BW_DOORS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Does task tid hold a cgroup2 cgroup.procs or cgroup.threads open for
 * writing? With cloexec false, descriptors closed at its next exec do not
 * count. 1 and what ("descriptor N of PID: PATH") if so, 0 if not, -errno
 * when its descriptors cannot be read (a task that exited meanwhile: 0).
 */
int bw_door_in_task(pid_t tid, bool cloexec, char *what, size_t len);

/*
 * bw_door_in_task for every thread of every cgroup of cgdir's subtree, until
 * a round finds no thread it has not seen (a descriptor moves to a new task
 * only by fork: the cgroup is governed already, so none is opened or
 * received).
 */
int bw_door_in_cgroup(const char *cgdir, bool cloexec, char *what, size_t len);

#endif
