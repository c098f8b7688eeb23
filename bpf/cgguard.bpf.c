// SPDX-License-Identifier: GPL-2.0-only
/*
 * The governed cgroup tree, kept whole: a governed process moves no task
 * out of the cgroups of its policy slot, and makes no more cgroups below
 * governed ones than the governed-cgroup map has room for. Both whatever
 * the profile allows (docs/enforcement.md, "The governed cgroup tree").
 *
 * Migration. Moving a task is writing its ID to a cgroup.procs or
 * cgroup.threads file, or clone3(CLONE_INTO_CGROUP). Without `allow cgroup`
 * a sandbox does neither: no such file reaches it open for writing (opened,
 * received: bw_cg_door in cgtree.bpf.h, called by file.bpf.c and
 * receive.bpf.c; held from before: the agent refuses to govern, see
 * user/doors.c) and bw_cg_clone refuses the clone. That costs processes
 * outside every governed cgroup nothing on the hot paths.
 *
 * With `allow cgroup` a sandbox may move tasks between the cgroups of its
 * own slot, and the kernel's own check decides what a write moves: it asks
 * inode_permission(MAY_WRITE) of the destination's cgroup.procs for
 * clone3(CLONE_INTO_CGROUP), and of the common ancestor of source and
 * destination for every migration (cgroup_may_write), so a task pulled in
 * from outside is refused as one pushed out. bw_cg_leave lets a governed
 * process through only when that cgroup is governed by its own slot. It
 * runs on every path component of every process, so the agent attaches it
 * only while a profile in force says `allow cgroup` (user/loader.c,
 * bw_cg_moves_sync).
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
 * Processes outside every governed cgroup cost a test of the clone flags on
 * task_alloc, of the mask and of the file system on inode_permission (while
 * attached), and one hash lookup for a write on cgroup2. For governed
 * processes every internal failure fails closed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "cgtree.bpf.h"
#include "cgcount.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* A write on cgroup2 by a governed process: allowed unless it moves a task out. */
static __noinline int bw_cg_write(struct inode *inode)
{
	struct kernfs_node *dir = bw_kn_moves_into(inode);
	union bw_cgroup_copy cg_copy;
	struct bw_cgroup *cg;
	__u64 cgid;

	if (!dir)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg || bw_cg_own(cg, dir))
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

/*
 * clone3(CLONE_INTO_CGROUP) by a governed process: the destination is a
 * descriptor the kernel resolves after this hook, which another thread can
 * swap meanwhile, so without bw_cg_leave attached the clone is refused
 * whatever the destination; with `allow cgroup`, bw_cg_leave decides it.
 */
SEC("lsm/task_alloc")
int BPF_PROG(bw_cg_clone, struct task_struct *task, unsigned long clone_flags, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_cgroup *cg;
	struct bw_policy *pol;
	__u64 cgid;

	if (ret)
		return ret;
	if (!(clone_flags & CLONE_INTO_CGROUP))
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	if (!pol)
		return -EACCES;
	if (pol->ns[BW_NS_CGROUP] == BW_V_ALLOW)
		return 0;
	return bw_cg_refuse(cgid, cg, pol->cgroup_rule, BW_OP_CGROUP_MIGRATE, NULL, NULL,
			    -EACCES);
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
