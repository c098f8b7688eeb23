/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Builds the path of a (mount, dentry) pair as the current task sees it:
 * from the dentry up through d_parent, across mount points, to the task's
 * root. We walk by hand because bpf_d_path is refused on the non-sleepable
 * path_* hooks, and one builder for every hook keeps the paths that rules
 * are matched against identical whichever operation produced them.
 *
 * The path is built backwards from the end of a per-CPU buffer; a name that
 * does not fit, or a walk deeper than BW_PATH_DEPTH, flags the result as
 * too long and the caller denies it in enforce mode.
 */
#ifndef BW_PATH_BPF_H
#define BW_PATH_BPF_H

#include "bpfwarden.h"

#define BW_BUF_MASK (BW_PATH_BUF - 1)
#define BW_NAME_MAX 255

struct bw_scratch {
	struct bw_event ev;	     /* event head ... */
	char evpath[BW_PATH_BUF];    /* ... immediately followed by its path */
	char buf[2 * BW_PATH_BUF]; /* path under construction, ends at BW_PATH_BUF */
	struct bw_path_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_scratch);
} bw_scratch SEC(".maps");

struct bw_walk {
	struct dentry *object;
	struct dentry *dentry;
	struct mount *mnt;
	struct dentry *mnt_root;
	struct dentry *root_dentry; /* the task's root */
	struct vfsmount *root_mnt;
	struct dentry *resume;	    /* pin phase: mount point to go on from */
	__u32 off;		    /* path starts at buf[off] */
	__u32 flags;		    /* BW_EVF_* */
	__u32 policy;
	__u8 check_pins; /* the policy has pins: look each ancestor up */
	__u8 pin_phase;	 /* climbing above a bind mount's root, pins only */
	__u8 pinned;	 /* below holds the nearest pinned ancestor's values */
	__u8 any_pins;	 /* no mount known: mount-root pins count too */
	struct bw_path_rule below;
};

static __always_inline struct mount *bw_real_mount(struct vfsmount *vfsmnt)
{
	return container_of(vfsmnt, struct mount, mnt);
}

/* The nearest pinned ancestor decides for its subtree. */
static __always_inline void bw_walk_pin(struct bw_walk *w, struct dentry *d)
{
	struct bw_inode_key k = {};
	struct bw_inode_pin *pin;
	struct inode *inode;

	if (w->pinned || d == w->object)
		return;
	inode = BPF_CORE_READ(d, d_inode);
	if (!inode)
		return;
	k.ino = BPF_CORE_READ(inode, i_ino);
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.policy = w->policy;
	pin = bpf_map_lookup_elem(&bw_inodes, &k);
	if (pin && (w->any_pins || !(pin->below.flags & BW_PIN_MOUNT)) &&
	    (pin->below.verdict_r || pin->below.verdict_w)) {
		w->below = pin->below;
		w->pinned = 1;
	}
}

/* Leave a mount's root for the mount point it hides, in the parent mount. */
static __always_inline void bw_walk_cross(struct bw_walk *w, struct dentry *mountpoint)
{
	struct mount *cur = w->mnt;
	struct mount *up = BPF_CORE_READ(cur, mnt_parent);

	w->dentry = mountpoint;
	w->mnt = up;
	w->mnt_root = BPF_CORE_READ(up, mnt.mnt_root);
}

static long bw_walk_step(__u32 i, struct bw_walk *w)
{
	struct dentry *d = w->dentry, *parent;
	struct bw_scratch *s;
	const unsigned char *name;
	__u32 zero = 0, len, off;

	parent = BPF_CORE_READ(d, d_parent);
	if (!w->mnt) {
		/* Without a mount the walk ends at the file system's root. */
		if (d == parent) {
			w->flags |= BW_EVF_FS_RELATIVE;
			bw_walk_pin(w, d);
			return 1;
		}
		bw_walk_pin(w, d);
		goto prepend;
	}
	if (w->pin_phase) {
		/*
		 * A bind mount of a subdirectory hides the directories above its
		 * source; their pins still apply to everything reached through it.
		 */
		bw_walk_pin(w, d);
		if (d == parent || w->pinned) {
			w->pin_phase = 0;
			bw_walk_cross(w, w->resume);
		} else {
			w->dentry = parent;
		}
		return 0;
	}
	if (d == w->root_dentry && &w->mnt->mnt == w->root_mnt)
		return 1;
	if (d == w->mnt_root) {
		struct mount *cur = w->mnt;
		struct dentry *mountpoint = BPF_CORE_READ(cur, mnt_mountpoint);

		if (w->check_pins)
			bw_walk_pin(w, d);
		/* The global root: the object is outside the task's chroot. */
		if (BPF_CORE_READ(cur, mnt_parent) == cur)
			return 1;
		if (w->check_pins && !w->pinned && d != parent) {
			w->pin_phase = 1;
			w->resume = mountpoint;
			w->dentry = parent;
			return 0;
		}
		bw_walk_cross(w, mountpoint);
		return 0;
	}
	if (d == parent) {
		/*
		 * A root that no mount reaches: pipes, sockets, memfds and other
		 * pseudo files have no path for a rule to name.
		 */
		w->flags |= BW_EVF_UNREACHABLE;
		return 1;
	}
	if (w->check_pins)
		bw_walk_pin(w, d);
prepend:
	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (!s)
		return 1;
	name = BPF_CORE_READ(d, d_name.name);
	len = BPF_CORE_READ(d, d_name.len);
	if (len > BW_NAME_MAX || w->off < len + 2) {
		w->flags |= BW_EVF_PATH_TOO_LONG;
		return 1;
	}
	off = w->off - len;
	bpf_probe_read_kernel(&s->buf[off & BW_BUF_MASK], len & BW_NAME_MAX, name);
	off--;
	s->buf[off & BW_BUF_MASK] = '/';
	w->off = off;
	w->dentry = parent;
	return 0;
}

/*
 * Walk from (vfsmnt, dentry) to the task's root; with no vfsmnt (a hook that
 * gets only a dentry), to the root of the dentry's file system. Returns the path's offset in
 * s->buf (the path runs to BW_PATH_BUF, no NUL); w->flags says how it went.
 */
static __always_inline __u32 bw_path_build(struct bw_scratch *s, struct bw_walk *w,
					   struct vfsmount *vfsmnt, struct dentry *dentry)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	long n;

	w->object = dentry;
	w->dentry = dentry;
	if (vfsmnt) {
		w->mnt = bw_real_mount(vfsmnt);
		w->mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
	} else {
		w->mnt = NULL;
		w->any_pins = 1;
	}
	w->root_dentry = BPF_CORE_READ(task, fs, root.dentry);
	w->root_mnt = BPF_CORE_READ(task, fs, root.mnt);
	w->off = BW_PATH_BUF;

	n = bpf_loop(BW_PATH_DEPTH, bw_walk_step, w, 0);
	if (n >= BW_PATH_DEPTH)
		w->flags |= BW_EVF_PATH_TOO_LONG;
	if (w->off == BW_PATH_BUF) {
		w->off = BW_PATH_BUF - 1;
		s->buf[BW_PATH_BUF - 1] = '/';
	}
	return w->off;
}

#endif /* BW_PATH_BPF_H */
