// SPDX-License-Identifier: GPL-2.0-only
/*
 * The governed cgroup tree, kept whole: a governed process moves no task
 * out of the cgroups of its policy slot, and makes no more cgroups below
 * governed ones than the governed-cgroup map has room for. Both whatever
 * the profile allows (docs/enforcement.md, "The governed cgroup tree").
 *
 * Migration. Whatever the route, the kernel asks inode_permission(MAY_WRITE)
 * of a cgroup.procs or cgroup.threads file on the way: of the destination's
 * when the file is opened for writing, of the destination's cgroup.procs for
 * clone3(CLONE_INTO_CGROUP) (cgroup_may_write), and of the common ancestor of
 * source and destination for every migration (cgroup_may_write again, so a
 * descriptor opened before the process was governed is caught too).
 * bw_cg_leave lets a governed process through only when that cgroup is
 * governed by its own slot: never to a cgroup outside its subtrees, nor to a
 * child left ungoverned, nor to a cgroup another profile governs.
 *
 * Limits. A cgroup made below a governed one takes an entry of bw_cgroups
 * (cgroup.bpf.c). bw_cg_mkdir_lim refuses the mkdir(2) of a governed process
 * over its slot's limit or the host's (EAGAIN, as the kernel's own
 * cgroup.max.descendants does); bw_cg_kn_init checks again where the kernel
 * creates the directory, under cgroup_mutex, like the insert that follows:
 * mkdirs racing past the first check, and those of ungoverned processes
 * below governed cgroups (the host's limit only), are refused there
 * (ENOMEM: the only error kernfs passes on).
 *
 * Processes outside every governed cgroup cost a test of the mask and of the
 * file system on inode_permission, and one hash lookup for a write on
 * cgroup2. For governed processes every internal failure fails closed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "path.bpf.h"
#include "event.bpf.h"
#include "cgcount.bpf.h"
#include "kernel.bpf.h"

char LICENSE[] SEC("license") = "GPL";

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

static __always_inline bool bw_name_is(const char *got, const char *want, int len)
{
	int i;

	for (i = 0; i < len; i++)
		if (got[i] != want[i])
			return false;
	return true;
}

/* A cgroup.procs or cgroup.threads file: the kernel's names, which no cgroup can take. */
static __always_inline bool bw_kn_moves_tasks(struct kernfs_node *kn)
{
	char name[16];

	if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(kn, name)) < 0)
		return false;
	return bw_name_is(name, "cgroup.procs", sizeof("cgroup.procs")) ||
	       bw_name_is(name, "cgroup.threads", sizeof("cgroup.threads"));
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
 * A deny verdict by one of bpfwarden's own rules (BW_RULE_*) on cgroup dir
 * (and name below it, for a mkdir): its outcome under cg's mode, and its
 * event naming the cgroup. err: the hook's errno.
 */
static __always_inline int bw_cg_refuse(__u64 cgid, struct bw_cgroup *cg, __u16 rule, __u8 op,
					struct kernfs_node *dir, const char *name, int err)
{
	struct bw_learn_key obj = {};
	__u32 zero = 0, flags = 0, len;
	struct bw_scratch *s;
	struct bw_policy *pol;
	struct bw_outcome o;

	pol = bw_policy_of(cg);
	if (!pol)
		return err;
	obj.a = BPF_CORE_READ(dir, id);
	o = bw_deny_outcome(cgid, cg, pol, rule, op, BW_ACC_W, 0, &obj);
	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (o.type && s) {
		len = bw_kn_path(s, dir, name, &flags);
		bw_event_head(&s->ev, cgid, cg->policy, o, op, BW_ACC_W, rule, flags);
		s->ev.path_len = len;
		bw_event_send(cg->policy, &s->ev, sizeof(s->ev) + (len & BW_BUF_MASK));
	}
	return bw_lsm_ret(o, err);
}

/* A write on cgroup2 by a governed process: allowed unless it moves a task out. */
static __noinline int bw_cg_write(struct inode *inode)
{
	struct kernfs_node *kn, *dir;
	struct bw_cgroup *cg, *dst;
	union bw_cgroup_copy cg_copy;
	__u64 cgid, id;

	if (!inode || BPF_CORE_READ(inode, i_sb, s_magic) != CGROUP2_SUPER_MAGIC)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFREG)
		return 0;
	kn = BPF_CORE_READ(inode, i_private);
	if (!bw_kn_moves_tasks(kn))
		return 0;
	dir = bw_kn_parent(kn);
	id = BPF_CORE_READ(dir, id);
	dst = bpf_map_lookup_elem(&bw_cgroups, &id);
	if (dst && dst->policy == cg->policy)
		return 0;
	return bw_cg_refuse(cgid, cg, BW_RULE_LEAVE_CGROUP, BW_OP_CGROUP_MIGRATE, dir, NULL,
			    -EACCES);
}

/*
 * Moving a task: only into a cgroup of the mover's own slot. Every path
 * component of every process comes here: the rest, in a function of its
 * own, is left out of this one's prologue.
 */
SEC("lsm/inode_permission")
int BPF_PROG(bw_cg_leave, struct inode *inode, int mask, int ret)
{
	if (ret)
		return ret;
	if (!(mask & MAY_WRITE))
		return 0;
	return bw_cg_write(inode);
}

/* mkdir(2) on cgroup2 by a governed process, below a governed cgroup: within the limits. */
SEC("lsm/path_mkdir")
int BPF_PROG(bw_cg_mkdir_lim, const struct path *dir, struct dentry *dentry, umode_t mode, int ret)
{
	struct bw_cgroup *cg, *parent;
	union bw_cgroup_copy cg_copy;
	struct kernfs_node *pkn;
	__u64 cgid, pid;
	__u16 rule;

	if (ret)
		return ret;
	if (dentry->d_sb->s_magic != CGROUP2_SUPER_MAGIC)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pkn = BPF_CORE_READ(dir, dentry, d_inode, i_private);
	pid = BPF_CORE_READ(pkn, id);
	parent = bpf_map_lookup_elem(&bw_cgroups, &pid);
	if (!parent)
		return 0;
	rule = bw_cg_over_limit(cg);
	if (!rule)
		return 0;
	return bw_cg_refuse(cgid, cg, rule, BW_OP_CGROUP_MKDIR, pkn,
			    (const char *)BPF_CORE_READ(dentry, d_name.name), -EAGAIN);
}

/*
 * Every kernfs node is made here; a cgroup2 directory below a governed one
 * under cgroup_mutex, as cgroup.bpf.c's insert of its entry is: the check
 * that cannot race. An ungoverned maker's refusal is told to the parent's slot.
 */
SEC("lsm/kernfs_init_security")
int BPF_PROG(bw_cg_kn_init, struct kernfs_node *kn_dir, struct kernfs_node *kn, int ret)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct bw_cgroup *cg, *parent;
	union bw_cgroup_copy cg_copy;
	__u64 cgid, pid;
	__u16 rule;

	if (ret)
		return ret;
	if ((kn->flags & KERNFS_TYPE_MASK) != KERNFS_DIR)
		return 0;
	/* cgroup2's kernfs root: every task's default-hierarchy cgroup is on it. */
	if (BPF_CORE_READ(kn_dir, dir.root) != BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, dir.root))
		return 0;
	pid = BPF_CORE_READ(kn_dir, id);
	parent = bpf_map_lookup_elem(&bw_cgroups, &pid);
	if (!parent)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	rule = bw_cg_over_limit(cg);
	if (!rule)
		return 0;
	/* Audited at path_mkdir already, where it refuses nothing. */
	if (cg && rule == BW_RULE_CGROUPS_SLOT && cg->mode != BW_MODE_ENFORCE)
		return 0;
	if (!cg) {
		cg = parent;
		cgid = pid;
	}
	return bw_cg_refuse(cgid, cg, rule, BW_OP_CGROUP_MKDIR, kn_dir, BPF_CORE_READ(kn, name),
			    -ENOMEM);
}
