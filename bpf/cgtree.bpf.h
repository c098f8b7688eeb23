/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The governed cgroup tree as BPF sees it: cgroup directories and their
 * cgroup.procs and cgroup.threads files are kernfs nodes, named by walking
 * their parents (the path the agent writes as a cgroup's path); a refusal by
 * one of bpfwarden's cgroup rules is one event naming the cgroup.
 *
 * bw_cg_door() is where a governed process is stopped from moving tasks:
 * file_open (bpf/file.bpf.c) and file_receive (bpf/receive.bpf.c) call it
 * for every file they let through, so that no descriptor that moves tasks
 * reaches a sandbox, however it got there (docs/enforcement.md, "The
 * governed cgroup tree").
 */
#ifndef BW_CGTREE_BPF_H
#define BW_CGTREE_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "path.bpf.h"
#include "event.bpf.h"
#include "kernel.bpf.h"

#define KERNFS_TYPE_MASK 0x000f

/* kernfs_node.parent is __parent from 6.15: both flavours, whatever vmlinux.h has. */
struct kernfs_node___old {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

struct kernfs_node___new {
	struct kernfs_node *__parent;
} __attribute__((preserve_access_index));

static __always_inline struct kernfs_node *bw_kn_parent(struct kernfs_node *kn)
{
	struct kernfs_node___old *o = (void *)kn;
	struct kernfs_node___new *n = (void *)kn;

	if (bpf_core_field_exists(o->parent))
		return BPF_CORE_READ(o, parent);
	return BPF_CORE_READ(n, __parent);
}

/* A cgroup.procs or cgroup.threads file: the kernel's names, which no cgroup can take. */
static __always_inline bool bw_kn_moves_tasks(struct kernfs_node *kn)
{
	char name[16];

	if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(kn, name)) < 0)
		return false;
	return bw_bytes_eq(name, "cgroup.procs", sizeof("cgroup.procs")) ||
	       bw_bytes_eq(name, "cgroup.threads", sizeof("cgroup.threads"));
}

struct bw_kn_walk {
	struct kernfs_node *kn;
	struct bw_scratch *s;
	__u32 off; /* the path starts at s->buf[off] */
	__u32 flags;
};

/* Put "/name" in front of the path built so far; false when it does not fit. */
static __always_inline bool bw_kn_prepend(struct bw_kn_walk *w, const char *name)
{
	struct bw_scratch *s = w->s;
	long n = bpf_probe_read_kernel_str(s->key_tail, BW_NAME_MAX + 1, name);
	__u32 off;

	if (n <= 1 || w->off < (__u32)n + 1) {
		w->flags |= BW_EVF_PATH_TOO_LONG;
		return false;
	}
	n--; /* the NUL */
	off = w->off - n;
	bpf_probe_read_kernel(&s->buf[off & BW_BUF_MASK], n & BW_NAME_MAX, s->key_tail);
	off--;
	s->buf[off & BW_BUF_MASK] = '/';
	w->off = off;
	return true;
}

static long bw_kn_step(__u32 i, struct bw_kn_walk *w)
{
	struct kernfs_node *kn = w->kn, *parent = bw_kn_parent(kn);

	/* The hierarchy's root: its name is not part of cgroup paths. */
	if (!parent)
		return 1;
	if (!bw_kn_prepend(w, BPF_CORE_READ(kn, name)))
		return 1;
	w->kn = parent;
	return 0;
}

/*
 * The path of cgroup directory dir below the hierarchy's root ("/" for the
 * root itself), then "/name" if name is not NULL, in the event's path bytes:
 * what the agent writes as a cgroup's path. Returns its length.
 */
static __always_inline __u32 bw_kn_path(struct bw_scratch *s, struct kernfs_node *dir,
					const char *name, __u32 *flags)
{
	struct bw_kn_walk w = {.kn = dir, .s = s, .off = BW_PATH_BUF};
	__u32 len;

	if (!name || bw_kn_prepend(&w, name))
		bpf_loop(BW_PATH_DEPTH, bw_kn_step, &w, 0);
	if (w.off == BW_PATH_BUF) {
		w.off = BW_PATH_BUF - 1;
		s->buf[BW_PATH_BUF - 1] = '/';
	}
	*flags |= w.flags;
	len = (BW_PATH_BUF - w.off) & BW_BUF_MASK;
	bpf_probe_read_kernel(s->evpath, len, &s->buf[w.off & BW_BUF_MASK]);
	return len;
}

/*
 * A deny verdict on cgroup dir (and name below it, for a mkdir), by one of
 * bpfwarden's own rules (BW_RULE_*) or by the profile's `cgroup` rule: its
 * outcome under cg's mode, and its event naming the cgroup (no dir: no
 * path). err: the hook's errno.
 */
static __always_inline int bw_cg_refuse(__u64 cgid, const struct bw_cgroup *cg, __u16 rule,
					__u8 op, struct kernfs_node *dir, const char *name, int err)
{
	struct bw_learn_key obj = {};
	__u32 zero = 0, flags = 0, len;
	struct bw_scratch *s;
	struct bw_policy *pol;
	struct bw_outcome o;

	pol = bw_policy_of(cg);
	if (!pol)
		return err;
	obj.a = dir ? BPF_CORE_READ(dir, id) : 0;
	o = bw_deny_outcome(cgid, cg, pol, rule, op, BW_ACC_W, 0, &obj);
	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (o.type && s) {
		len = dir ? bw_kn_path(s, dir, name, &flags) : 0;
		bw_event_head(&s->ev, cgid, cg->policy, o, op, BW_ACC_W, rule, flags);
		s->ev.path_len = len;
		bw_event_send(cg->policy, &s->ev, sizeof(s->ev) + (len & BW_BUF_MASK));
	}
	return bw_lsm_ret(o, err);
}

/*
 * The cgroup a write to inode moves tasks into: its directory when inode is
 * a cgroup2 cgroup.procs or cgroup.threads, else NULL.
 */
static __always_inline struct kernfs_node *bw_kn_moves_into(struct inode *inode)
{
	struct kernfs_node *kn;

	if (!inode || BPF_CORE_READ(inode, i_sb, s_magic) != CGROUP2_SUPER_MAGIC)
		return NULL;
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFREG)
		return NULL;
	kn = BPF_CORE_READ(inode, i_private);
	return bw_kn_moves_tasks(kn) ? bw_kn_parent(kn) : NULL;
}

/* Is cgroup dir governed by cg's own policy slot? */
static __always_inline bool bw_cg_own(const struct bw_cgroup *cg, struct kernfs_node *dir)
{
	__u64 id = BPF_CORE_READ(dir, id);
	struct bw_cgroup *dst = bpf_map_lookup_elem(&bw_cgroups, &id);

	return dst && dst->policy == cg->policy;
}

/*
 * A file a governed process opens or receives: a cgroup.procs or
 * cgroup.threads open for writing moves tasks, which only `allow cgroup`
 * lets a sandbox do, and then only into cgroups of its own slot. What the
 * writes then move (and from where) is left to bw_cg_leave, attached while
 * a profile in force says `allow cgroup`: without it, no such descriptor is
 * ever in a sandbox's hands.
 */
static __always_inline int bw_cg_door(__u64 cgid, const struct bw_cgroup *cg, struct file *file)
{
	struct kernfs_node *dir;
	struct bw_policy *pol;

	if (!(BPF_CORE_READ(file, f_mode) & FMODE_WRITE))
		return 0;
	dir = bw_kn_moves_into(BPF_CORE_READ(file, f_inode));
	if (!dir)
		return 0;
	if (!bw_cg_own(cg, dir))
		return bw_cg_refuse(cgid, cg, BW_RULE_LEAVE_CGROUP, BW_OP_CGROUP_MIGRATE, dir, NULL,
				    -EACCES);
	pol = bw_policy_of(cg);
	if (!pol)
		return -EACCES;
	if (pol->ns[BW_NS_CGROUP] == BW_V_ALLOW)
		return 0;
	return bw_cg_refuse(cgid, cg, pol->cgroup_rule, BW_OP_CGROUP_MIGRATE, dir, NULL, -EACCES);
}

#endif /* BW_CGTREE_BPF_H */
