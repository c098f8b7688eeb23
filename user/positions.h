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
 * Where path is in its file system, in this process's view: the kernel dev
 * of the mount that holds it, the path from the file system's root (rel,
 * "" for the root), how much of rel the mount's root is, and the mount's
 * target (to stat the chain's directories). Components that do not exist
 * yet are kept as written. 0, or -errno.
 */
struct bw_pos_place {
	__u32 dev;
	char rel[PATH_MAX];
	size_t root_len;
	char target[PATH_MAX];
};
int bw_pos_place(const char *path, struct bw_pos_place *pl);

/* What installing found, for the policy's pin fields (pins.c). */
struct bw_pos_done {
	size_t n;    /* positions stored */
	size_t deny; /* of which rules that can deny */
	__u32 devs[8];
	size_t ndevs; /* file systems of the positions that can deny; > 8: many */
};

/*
 * Store c's positions under policy (bw_positions, bw_pos_pins, bw_pos_dirs,
 * bw_posbits). Called with bw_lock held, before the pins are resolved: an
 * object that appears meanwhile is either pinned by the kernel or seen by
 * the resolver. 0, or -errno said in words.
 */
int bw_positions_install(const struct bw_maps *m, const struct bw_compiled *c, uint32_t policy,
			 struct bw_pos_done *done);

/* Remove policy's positions, and the directories no position needs any more. */
void bw_positions_release(const struct bw_maps *m, uint32_t policy);

#endif /* BW_POSITIONS_H */
