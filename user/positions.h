/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Positions of rule objects, the agent's side (the kernel's is
 * bpf/ident.bpf.c; include/bpfwarden.h has the map layout).
 *
 * A pin is taken at load from whatever is at the rule's path then; what is
 * created there later, or renamed over it, is another inode. So the place
 * itself is stored: the chain of names from the root of the mount that
 * holds the path down to the rule's object, each link keyed by its
 * directory's position and its name. The kernel follows the chain as
 * directories and files appear and pins what lands at the end. Every
 * position's id is a hash of the file system and its path from that file
 * system's root (mountinfo's root field for a bind mount), so two rules,
 * policies or agents naming one place agree without coordination.
 *
 * Which pins get a position: those that can deny, and allow pins below a
 * denied directory (without their own pin, an object created there later
 * would be denied by the directory above it).
 */
#ifndef BW_POSITIONS_H
#define BW_POSITIONS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfwarden.h"
#include "compile.h"
#include "loader.h"

/* The id of the position at rel (its path from the file system's root, "" for the root). */
__u64 bw_pos_id(__u32 dev, const char *rel, size_t len);

/* One link of a chain: the directory's position, the name below it, the position reached. */
struct bw_pos_edge {
	__u64 dir;
	__u64 pos;
	const char *name;
	size_t namelen;
	size_t end; /* rel[0..end) is the path of pos */
	int last;   /* the rule's object: the chain ends here */
};

/*
 * Call fn for each link of the chain to rel below its first root_len bytes
 * (the path of the mount's root, from which the agent can see the chain),
 * top down. Returns fn's first non-zero return, -ENAMETOOLONG for a name the
 * kernel cannot compare (BW_POS_NAME), else 0. Pure: unit-tested.
 */
int bw_pos_chain(__u32 dev, const char *rel, size_t root_len,
		 int (*fn)(const struct bw_pos_edge *e, void *arg), void *arg);

/*
 * Where path is in its file system, in view v (NULL: this process's): the
 * kernel dev of the mount that holds it, the path from the file system's
 * root (rel, "" for the root), how much of rel the mount's root is, and the
 * mount's target as this process reaches it (to stat the chain's
 * directories). Symlinks of the part that exists are resolved inside the
 * view (an absolute one from the view's root); components that do not exist
 * yet are kept as written. 0, or -errno.
 */
struct bw_pos_place {
	__u32 dev;
	char rel[PATH_MAX];
	size_t root_len;
	char target[2 * PATH_MAX];
};
struct bw_pin_view;
int bw_pos_place(const struct bw_pin_view *v, const char *path, struct bw_pos_place *pl);

/*
 * path resolved with base as its root, as the process whose root that is
 * would (an absolute symlink and ".." stay inside): real gets the deepest
 * part that exists, without symlinks ("/" at least), rest what follows it
 * as written ("" when all exists). Pure but for lstat and readlink:
 * unit-tested. 0 or -errno.
 */
int bw_resolve_in(const char *base, const char *path, char *real, size_t len, char *rest,
		  size_t rlen);

/* What installing found, for the policy's pin fields (pins.c); callers zero it, calls add. */
struct bw_pos_done {
	size_t n;    /* positions stored */
	size_t deny; /* of which rules that can deny */
	__u32 devs[8];
	size_t ndevs; /* file systems of the positions that can deny; > 8: many */
};

/*
 * What one view's positions are, to take back when the view goes (a
 * container's): the chain links it needs, the pin values, the file systems.
 */
struct bw_pos_set {
	struct bw_pos_key *links;
	size_t nlinks, clinks;
	struct bw_pos_pin_key *pins;
	size_t npins, cpins;
	__u32 *devs;
	size_t ndevs, cdevs;
};
void bw_pos_set_free(struct bw_pos_set *s);
/* Add dev to s's file systems unless there: 0 or -ENOMEM. */
int bw_pos_set_add_dev(struct bw_pos_set *s, __u32 dev);

/*
 * Store c's positions placed in view v (NULL: ours) under policy
 * (bw_positions, bw_pos_pins, bw_pos_dirs, bw_posbits); with m NULL, store
 * nothing. rec (if not NULL) gets what they are. Called with bw_lock held,
 * before the pins are resolved: an object that appears meanwhile is either
 * pinned by the kernel or seen by the resolver. 0, or -errno said in words.
 */
int bw_positions_install(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			 const struct bw_pin_view *v, struct bw_pos_done *done,
			 struct bw_pos_set *rec);

/* Remove policy's positions, and the directories no position needs any more. */
void bw_positions_release(const struct bw_maps *m, uint32_t policy);

/*
 * Take back these of policy's positions (a gone view's, less what the
 * policy's other views share), the directories no position needs any more,
 * and every pin of policy on the file systems in devs: on a file system of
 * the gone view only, what the kernel pinned there (an object that came to
 * a position, a hard link out of a denied directory) belongs to it alone,
 * and a device number is used again by a later mount.
 */
void bw_positions_drop(const struct bw_maps *m, uint32_t policy, const struct bw_pos_key *links,
		       size_t nlinks, const struct bw_pos_pin_key *pins, size_t npins,
		       const __u32 *devs, size_t ndevs);

#endif /* BW_POSITIONS_H */
