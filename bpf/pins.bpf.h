/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Deny rules follow their object, not just its path: the agent pins every
 * rule's file or directory by device and inode (bw_inodes), and here we
 * climb from the object through d_parent to the root of its file system.
 * d_parent is the file system's own tree, whatever mount, bind mount or
 * mount namespace the object was reached through, so a hard link, a bind
 * mount of a denied directory or of anything inside it, /proc/PID/root and
 * another namespace all meet the same pinned directory.
 *
 * Most directories are not pinned: a bitmap over inode numbers (bw_pinbits,
 * an array lookup the verifier inlines) answers "certainly not" before the
 * hash lookup is paid for.
 */
#ifndef BW_PINS_BPF_H
#define BW_PINS_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"

struct bw_pin_walk {
	struct dentry *dentry;
	__u16 policy;
	__u16 cat;
	__u8 any_mount;	 /* mount-root pins count (attribute changes) */
	__u8 have_self;	 /* self: the object's own pin */
	__u8 have_below; /* below: the nearest pinned ancestor's subtree values */
	__u8 pad[3];
	struct bw_path_rule self;
	struct bw_path_rule below;
};

static __always_inline bool bw_maybe_pinned(__u64 ino)
{
	__u32 word = bw_pinbits_word(ino);
	__u64 *bits = bpf_map_lookup_elem(&bw_pinbits, &word);

	return bits && (*bits & bw_pinbits_bit(ino));
}

/* The climb at one inode (ino): 1 ends it (the nearest pinned directory is found). */
static __always_inline long bw_pin_at(__u32 i, struct bw_pin_walk *pw, struct inode *inode,
				      __u64 ino)
{
	struct bw_inode_pin *pin;
	struct bw_inode_key k;

	if (!bw_maybe_pinned(ino))
		return 0;
	k.ino = ino;
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.policy = pw->policy;
	k.cat = pw->cat;
	pin = bpf_map_lookup_elem(&bw_inodes, &k);
	if (pin && i == 0 && (pw->any_mount || !(pin->self.flags & BW_PIN_MOUNT))) {
		pw->self = pin->self;
		pw->have_self = 1;
	} else if (pin && i > 0 && (pw->any_mount || !(pin->below.flags & BW_PIN_MOUNT)) &&
		   (pin->below.verdict_r || pin->below.verdict_w)) {
		pw->below = pin->below;
		pw->have_below = 1;
		return 1;
	}
	return 0;
}

/* A step from a dentry the kernel gave us: plain loads, the hot path. */
static long bw_pin_step(__u32 i, struct bw_pin_walk *pw)
{
	struct dentry *d = pw->dentry, *parent;
	struct inode *inode = d->d_inode;

	if (inode && bw_pin_at(i, pw, inode, inode->i_ino))
		return 1;
	parent = d->d_parent;
	if (parent == d)
		return 1;
	pw->dentry = parent;
	return 0;
}

/*
 * A step from a dentry we found ourselves (one of an inode's aliases), which
 * the verifier knows only as a number: read with probes.
 */
static long bw_pin_step_read(__u32 i, struct bw_pin_walk *pw)
{
	struct dentry *d = pw->dentry, *parent;
	struct inode *inode = BPF_CORE_READ(d, d_inode);

	if (inode && bw_pin_at(i, pw, inode, BPF_CORE_READ(inode, i_ino)))
		return 1;
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d)
		return 1;
	pw->dentry = parent;
	return 0;
}

/* Can a climb on the file system dev (its s_dev) meet one of the policy's rule pins at all? */
static __always_inline bool bw_fs_has_pins(const struct bw_policy *pol, __u32 dev)
{
	if (pol->npin_devs == BW_PIN_DEVS_MANY)
		return true;
	return (pol->npin_devs > 0 && pol->pin_devs[0] == dev) ||
	       (pol->npin_devs > 1 && pol->pin_devs[1] == dev) ||
	       (pol->npin_devs > 2 && pol->pin_devs[2] == dev) ||
	       (pol->npin_devs > 3 && pol->pin_devs[3] == dev);
}

/* The pinned values for access: the object's own pin, else the nearest above. */
static __always_inline void bw_pin_pick(const struct bw_pin_walk *pw, __u8 access, __u8 *verdict,
					__u16 *rule)
{
	*verdict = BW_V_NONE;
	*rule = 0;
	if (access == BW_ACC_R && pw->have_self && pw->self.verdict_r) {
		*verdict = pw->self.verdict_r;
		*rule = pw->self.rule_r;
	} else if (access == BW_ACC_W && pw->have_self && pw->self.verdict_w) {
		*verdict = pw->self.verdict_w;
		*rule = pw->self.rule_w;
	} else if (access == BW_ACC_R && pw->have_below) {
		*verdict = pw->below.verdict_r;
		*rule = pw->below.rule_r;
	} else if (access == BW_ACC_W && pw->have_below) {
		*verdict = pw->below.verdict_w;
		*rule = pw->below.rule_w;
	}
}

/*
 * Climb from dentry to the root of its file system. any_mount: mount-root
 * pins count (decisions without a path). read: the dentry is not the
 * kernel's own pointer (bw_pin_step_read).
 */
static __always_inline void bw_pins_walk(struct bw_pin_walk *pw, struct dentry *dentry,
					 __u32 policy, __u8 cat, bool any_mount, bool read)
{
	pw->dentry = dentry;
	pw->policy = policy;
	pw->cat = cat;
	pw->any_mount = any_mount;
	if (read)
		bpf_loop(BW_PATH_DEPTH, bw_pin_step_read, pw, 0);
	else
		bpf_loop(BW_PATH_DEPTH, bw_pin_step, pw, 0);
}

#endif /* BW_PINS_BPF_H */
