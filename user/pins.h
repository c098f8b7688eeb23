/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inode pins, end to end. Every file or exec rule's object is pinned by
 * device and inode (bw_inodes) with the values the trie gives its path, so
 * that another name of the object (a hard link, a bind mount, another mount
 * namespace) meets the same decision; bpf/pins.bpf.h climbs to them.
 *
 *   planning   when a profile compiles (user/compile.c): which paths, and
 *              their values (pure)
 *   resolving  when it is installed: each path to device and inode in the
 *              installing agent's view, other names of files inside denied
 *              directories (a bounded hard-link scan), mount roots
 *   writing    bw_inodes, the bw_pinbits bits, and the policy's pin fields
 *              (user/slot.c calls both, with positions, at install)
 */
#ifndef BW_PINS_H
#define BW_PINS_H

#include <stddef.h>
#include <stdint.h>

#include "bpfwarden.h"
#include "compile.h"
#include "loader.h"
#include "profile.h"
#include "util.h"

/* Combine two pins of one inode: a rule's pin beats a mount's, then deny wins. */
void bw_pin_merge(struct bw_inode_pin *into, const struct bw_inode_pin *from);

/* Entries a hard-link scan looks at, over all denied directories of a profile. */
#define BW_SCAN_MAX 4096

/* Planned pins resolved to device and inode, one entry per key. */
struct bw_pin_set {
	struct bw_inode_key *keys;
	struct bw_inode_pin *pins;
	size_t n, cap;
	struct bw_index index; /* of keys, so that each add is one probe */
	size_t deny;	       /* resolved paths of deny rules */
	int scan_incomplete;   /* the hard-link scan stopped at BW_SCAN_MAX */
	/* Positions of deny rules (user/positions.c), pinned when their object appears. */
	size_t pos_deny;
	const __u32 *pos_devs; /* their file systems; more than npos_devs_max: many */
	size_t npos_devs, npos_devs_max;
};

/* Resolve c's plan for policy in this process's view of paths. 0 or -errno. */
int bw_pins_resolve(const struct bw_compiled *c, uint32_t policy, struct bw_pin_set *ps);

/*
 * Another process's view of paths, a container's: a profile path P is
 * reached from here as base + P ("/proc/PID/root/ROOT"), and the mounts of
 * its mount table (mountinfo, "/proc/PID/mountinfo") are named there as
 * mount_prefix + P (ROOT while its init has not pivoted into it, "" after).
 */
struct bw_pin_view {
	const char *base;
	const char *mountinfo;
	const char *mount_prefix;
};

/* Resolve c's plan in view v (NULL: ours), adding to ps (zeroed by the caller first). */
int bw_pins_resolve_view(const struct bw_compiled *c, uint32_t policy, const struct bw_pin_view *v,
			 struct bw_pin_set *ps);
void bw_pin_set_free(struct bw_pin_set *ps);

/* pol's has_pins, has_exec_pins, npin_devs and pin_devs for the resolved ps. */
void bw_pins_policy(const struct bw_compiled *c, const struct bw_pin_set *ps,
		    struct bw_policy *pol);

/* What installing found, for the agent's report. */
struct bw_pins_done {
	size_t resolved;
	int scan_incomplete;
	size_t positions; /* places of rule objects the kernel follows (user/positions.c) */
};

/* Write ps to bw_inodes and bw_pinbits (the bit first). 0 or -errno, said in words. */
int bw_pins_write(const struct bw_maps *m, const struct bw_pin_set *ps);
/*
 * The place of each unix path deny rule of c in view v (NULL: ours): its
 * directory by device and inode and its last name, in bw_unix_places.
 */
int bw_unix_places_write(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			 const struct bw_pin_view *v);
/* Remove these pins (a view that is gone: a container's pins, that no other view has). */
void bw_pins_drop(const struct bw_maps *m, const struct bw_inode_key *keys, size_t n);

#endif /* BW_PINS_H */
