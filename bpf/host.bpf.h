/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host's kernel (BW_RULE_HOST): what no profile can allow a governed
 * process, because it reaches past its cgroup whatever the profile says.
 *
 * - Knobs that make the kernel run a program of the writer's choosing,
 *   later, as root, in the root cgroup: /proc/sys/kernel/core_pattern (a
 *   pipe), modprobe, hotplug, poweroff_cmd and the files of usermodehelper, sysfs's
 *   kernel/uevent_helper, any write on a binfmt_misc file system (a
 *   handler for the host's next matching exec), a cgroup v1 release_agent;
 *   and knobs that change the kernel for everyone: module parameters
 *   (/sys/module/X/parameters), securityfs (AppArmor and IMA policy),
 *   /proc/sysrq-trigger.
 * - Raw views of memory and of the kernel: /proc/kcore, the mem, kmem and
 *   port devices (by device number, under any name), tracefs and debugfs
 *   (uprobes that copy other processes' buffers, kprobes, trace_pipe).
 * - Raw views of storage: a block device that holds a mounted file system
 *   or active swap, directly, as the disk of such a partition, or under a
 *   device-mapper or md device (bw_rawdevs, kept by the agents from their
 *   mount table and sysfs: user/rawdevs.c); and device-mapper's control
 *   device, which would map a new device over one of those.
 *
 * Objects are told by their file system and the names of their dentries up
 * to its root, never by the path the process used: a bind mount, a second
 * procfs or sysfs mount, or a hard link reaches the same dentries. Other
 * routes to the same ends are refused in bpf/ns.bpf.c (CAP_SYS_RAWIO,
 * CAP_SYS_MODULE, CAP_SYS_BOOT; mount changes in the host's mount namespace)
 * and bpf/guard.bpf.c (module requests, system-wide perf events).
 */
#ifndef BW_HOST_BPF_H
#define BW_HOST_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "event.bpf.h"
#include "kernel.bpf.h"

#define BW_PROC_MAGIC	    0x9fa0
#define BW_SYSFS_MAGIC	    0x62656572
#define BW_TRACEFS_MAGIC    0x74726163
#define BW_DEBUGFS_MAGIC    0x64626720
#define BW_BINFMTFS_MAGIC   0x42494e4d
#define BW_SECURITYFS_MAGIC 0x73636673
#define BW_CGROUP1_MAGIC    0x27e0eb

#define BW_S_IFCHR 0020000
#define BW_S_IFBLK 0060000
/*
 * The kernel's dev_t (major << 20 | minor) of /dev/mem, /dev/kmem, /dev/port
 * and /dev/mapper/control.
 */
#define BW_DEV_MEM	 ((1 << 20) | 1)
#define BW_DEV_KMEM	 ((1 << 20) | 2)
#define BW_DEV_PORT	 ((1 << 20) | 4)
#define BW_DEV_DMCONTROL ((10 << 20) | 236)

#define BW_HOST_NAME 16

/*
 * What every decision needs of its object before any rule (the pin
 * directory, the host's objects, other processes' cmdline, whether a pin can
 * be met), read once: for all but a few objects, this is all they read.
 */
struct bw_objtype {
	__u64 fs_magic; /* of the object's file system */
	__u32 dev;	/* that file system's s_dev */
	__u32 ifmt;	/* its inode's S_IFMT bits; 0 for a name not yet created */
};

/* t for the object at dentry, which the verifier may know only as a number. */
static __always_inline void bw_objtype_read(struct bw_objtype *t, struct dentry *dentry)
{
	t->fs_magic = BPF_CORE_READ(dentry, d_sb, s_magic);
	t->dev = BPF_CORE_READ(dentry, d_sb, s_dev);
	t->ifmt = BPF_CORE_READ(dentry, d_inode, i_mode) & S_IFMT;
}

/* Is d's name the n bytes of lit (n < BW_HOST_NAME, no NUL)? */
static __always_inline bool bw_dname_is(struct dentry *d, const char *lit, __u32 n)
{
	char name[BW_HOST_NAME];
	__u32 i;

	if (!d || BPF_CORE_READ(d, d_name.len) != n)
		return false;
	if (bpf_probe_read_kernel(name, sizeof(name), BPF_CORE_READ(d, d_name.name)))
		return false;
	for (i = 0; i < BW_HOST_NAME; i++) {
		if (i >= n)
			break;
		if (name[i] != lit[i])
			return false;
	}
	return true;
}
#define BW_DNAME_IS(d, lit) bw_dname_is(d, lit, sizeof(lit) - 1)

/* d's parent, or NULL at its file system's root. */
static __always_inline struct dentry *bw_dparent(struct dentry *d)
{
	struct dentry *p;

	if (!d)
		return NULL;
	p = BPF_CORE_READ(d, d_parent);
	return p == d ? NULL : p;
}

/* Is d a directory at its file system's root? */
static __always_inline bool bw_at_root(struct dentry *d)
{
	struct dentry *p = bw_dparent(d);

	return p && !bw_dparent(p);
}

/* /proc/sys/kernel/NAME whose writer picks a program the kernel runs. */
static __always_inline bool bw_helper_sysctl(struct dentry *leaf, struct dentry *dir)
{
	struct dentry *up = bw_dparent(dir);

	if (BW_DNAME_IS(dir, "usermodehelper") && BW_DNAME_IS(up, "kernel")) {
		dir = up;
	} else if (!BW_DNAME_IS(dir, "kernel") ||
		   !(BW_DNAME_IS(leaf, "core_pattern") || BW_DNAME_IS(leaf, "modprobe") ||
		     BW_DNAME_IS(leaf, "hotplug") || BW_DNAME_IS(leaf, "poweroff_cmd"))) {
		return false;
	}
	up = bw_dparent(dir);
	return BW_DNAME_IS(up, "sys") && bw_at_root(up);
}

/* The process (struct pid) a procfs inode belongs to, NULL for one of no process. */
static __always_inline struct pid *bw_proc_pid(struct inode *inode)
{
	return BPF_CORE_READ(
	    (struct proc_inode *)((void *)inode -
				  bpf_core_field_offset(struct proc_inode, vfs_inode)),
	    pid);
}

/*
 * /proc/PID/cmdline (and task/TID/cmdline) reads a process's argument area,
 * its memory, without the ptrace check that guards mem, environ and auxv:
 * is dentry that file of a process outside slot policy (BW_RULE_PROCESSES)?
 * A process that is gone has nothing to read.
 */
static __always_inline bool bw_cmdline_outside(struct dentry *dentry, const struct bw_objtype *t,
					       __u32 policy)
{
	struct inode *inode;
	struct hlist_node *first;
	struct task_struct *task;
	struct bw_cgroup *tc;
	struct pid *pid;
	__u64 tcg;

	if (t->fs_magic != BW_PROC_MAGIC || !BW_DNAME_IS(dentry, "cmdline"))
		return false;
	inode = BPF_CORE_READ(dentry, d_inode);
	if (!inode)
		return false;
	pid = bw_proc_pid(inode);
	first = pid ? BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first) : NULL;
	if (!first)
		return false;
	task = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
	tcg = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	tc = bpf_map_lookup_elem(&bw_cgroups, &tcg);
	return !tc || tc->policy != policy;
}

/*
 * Is the object at dentry one of the host's that no profile reaches with
 * access (BW_ACC_*)? See the top of this file for what and why. Only a
 * device or a file on one of the file systems named here reads more than t.
 */
static __always_inline bool bw_host_object(struct dentry *dentry, const struct bw_objtype *t,
					   __u8 access)
{
	struct dentry *dir;
	bool w = access & BW_ACC_W;

	if (t->ifmt == BW_S_IFCHR) {
		__u32 rdev = BPF_CORE_READ(dentry, d_inode, i_rdev);

		return rdev == BW_DEV_MEM || rdev == BW_DEV_KMEM || rdev == BW_DEV_PORT ||
		       rdev == BW_DEV_DMCONTROL;
	}
	if (t->ifmt == BW_S_IFBLK) {
		__u32 rdev = BPF_CORE_READ(dentry, d_inode, i_rdev), all = BW_RAWDEVS_ALL;

		return bpf_map_lookup_elem(&bw_rawdevs, &rdev) ||
		       bpf_map_lookup_elem(&bw_rawdevs, &all);
	}
	switch (t->fs_magic) {
	case BW_TRACEFS_MAGIC:
	case BW_DEBUGFS_MAGIC:
		return true;
	case BW_BINFMTFS_MAGIC:
	case BW_SECURITYFS_MAGIC:
		return w;
	case BW_CGROUP1_MAGIC:
		return w && BW_DNAME_IS(dentry, "release_agent");
	case BW_PROC_MAGIC:
		dir = bw_dparent(dentry);
		if (dir && !bw_dparent(dir))
			return BW_DNAME_IS(dentry, "kcore") ||
			       (w && BW_DNAME_IS(dentry, "sysrq-trigger"));
		return w && bw_helper_sysctl(dentry, dir);
	case BW_SYSFS_MAGIC:
		if (!w)
			return false;
		dir = bw_dparent(dentry);
		if (BW_DNAME_IS(dentry, "uevent_helper"))
			return BW_DNAME_IS(dir, "kernel") && bw_at_root(dir);
		/* /sys/module/MODULE/parameters/NAME */
		dir = bw_dparent(dir);
		return BW_DNAME_IS(bw_dparent(dentry), "parameters") &&
		       BW_DNAME_IS(bw_dparent(dir), "module") && bw_at_root(bw_dparent(dir));
	}
	return false;
}

/* An event of the host rule: its head, then what was asked for, by name. */
struct bw_host_event {
	struct bw_event ev;
	char name[32];
};

/*
 * A deny verdict by rule on op, asked for by name (a kernel string: a
 * capability's, a module's, a perf event's scope): refused with err in
 * enforce mode; in audit mode, and in learn mode for the host's rule,
 * audited; learned when no profile rule decided (bw_deny_outcome). One event.
 */
static __always_inline int bw_named_deny(__u64 cgid, const struct bw_cgroup *cg,
					 const struct bw_policy *pol, __u16 rule, __u8 op,
					 const char *name, int err)
{
	struct bw_learn_key id = {};
	struct bw_host_event *e;
	struct bw_outcome o;
	long len;

	o = bw_deny_outcome(cgid, cg, pol, rule, op, 0, 0, &id);
	if (!o.type)
		return bw_lsm_ret(o, err);
	e = bw_event_reserve(cg->policy, sizeof(*e));
	if (!e)
		return bw_lsm_ret(o, err);
	bw_event_head(&e->ev, cgid, cg->policy, o, op, 0, rule, 0);
	len = bpf_probe_read_kernel_str(e->name, sizeof(e->name), name);
	e->ev.path_len = len > 0 ? len - 1 : 0;
	bpf_ringbuf_submit(e, 0);
	return bw_lsm_ret(o, err);
}

/* The host rule's verdict on op, asked for by name. A slot that is gone refuses. */
static __always_inline int bw_host_deny(__u64 cgid, const struct bw_cgroup *cg, __u8 op,
					const char *name, int err)
{
	struct bw_policy *pol = bw_policy_of(cg);

	if (!pol)
		return err;
	return bw_named_deny(cgid, cg, pol, BW_RULE_HOST, op, name, err);
}

#endif /* BW_HOST_BPF_H */
