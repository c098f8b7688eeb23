/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inode pins, end to end. Every file or exec rule's object is pinned by
 * device and inode (bw_inodes) with the values the trie gives its path, so
 * that another name of the object (a hard link, a bind mount, another mount
 * namespace) meets the same decision; bpf/pins.bpf.h climbs to them.
 *
 *   planning   when a profile compiles: which paths, and their values (pure)
 *   resolving  when it is installed: each path to device and inode in the
 *              installing agent's view, other names of files inside denied
 *              directories (a bounded hard-link scan), mount roots
 *   writing    bw_inodes, the bw_pinbits bits, and the policy's pin fields
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

/* A path to pin by device and inode once resolved in the governed namespace. */
struct bw_pin_req {
	const char *path; /* points into the profile */
	struct bw_inode_pin pin;
	int deny;    /* named by a deny rule */
	int subtree; /* a subtree deny: scan it for files with other names */
	int dir;     /* some rule on this path is a subtree rule */
	int cat;     /* BW_CAT_PIN_FILE or BW_CAT_PIN_EXEC */
};

/*
 * Plan the pins of p's file and exec rules into c->pins (c's trie keys are
 * built already) and set c->policy.has_pins / has_exec_pins. 0 or -ENOMEM.
 */
int bw_pins_plan(const struct bw_profile *p, struct bw_compiled *c);

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

/*
 * bw_pinbits and bw_posbits are set by the kernel too, so the agent sets
 * bits with atomic ORs on the map's memory: map, set, unmap. NULL (errno)
 * when the map cannot be mapped.
 */
#define BW_BITS_SIZE (BW_PINBITS_WORDS * sizeof(__u64))
__u64 *bw_bits_map(int map_fd);
void bw_bits_set(__u64 *bits, __u64 ino);
void bw_bits_unmap(__u64 *bits);

/*
 * Resolve c's pins and store them under policy: bw_inodes and bw_pinbits, and
 * in *pol (written by the caller afterwards) has_pins, has_exec_pins and the
 * file systems of the deny pins. 0 or -errno, said in words.
 */
int bw_pins_install(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
		    struct bw_policy *pol, struct bw_pins_done *done);
/* The same over the union of several views (a profile governing several containers). */
int bw_pins_install_views(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			  const struct bw_pin_view *views, size_t nviews, struct bw_policy *pol,
			  struct bw_pins_done *done);

/*
 * Place c's positions and resolve its pins in one more view v, and add them
 * to a slot already in use; *pol (written by the caller afterwards) gains
 * their file systems. out and pos_out (if not NULL) get the pins written
 * and the positions placed, for bw_pins_drop and bw_positions_drop.
 */
struct bw_pos_set;
int bw_pins_add_view(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
		     const struct bw_pin_view *v, struct bw_policy *pol, struct bw_pins_done *done,
		     struct bw_pin_set *out, struct bw_pos_set *pos_out);
/* Remove these pins (a view that is gone: a container's pins, that no other view has). */
void bw_pins_drop(const struct bw_maps *m, const struct bw_inode_key *keys, size_t n);

#endif /* BW_PINS_H */
