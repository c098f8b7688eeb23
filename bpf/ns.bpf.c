// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sandbox's view of names: file, exec and unix socket rules name objects
 * by the path a governed process sees, so a process that could change how
 * its paths resolve could rename the world around its profile (a bind mount
 * of a secret over an allowed file, a chroot into a directory of its own, an
 * overlay over a denied directory). These programs refuse every such change
 * in a governed cgroup unless the profile allows it (bw_policy.ns):
 *
 *   mount   mount(2) in all its forms (sb_mount), umount (sb_umount),
 *           move_mount (move_mount), pivot_root (sb_pivotroot), and the new
 *           mount API's fsopen, fspick, fsmount, open_tree(OPEN_TREE_CLONE)
 *           and mount_setattr, which have no hook of their own: they are
 *           refused where the kernel asks for their privilege (capable,
 *           CAP_SYS_ADMIN while in one of these calls)
 *   chroot  chroot(2) (path_chroot), and entering another mount namespace
 *           with setns(2), which moves the root too (capable, CAP_SYS_CHROOT
 *           while in setns)
 *   userns  a new user namespace (userns_create), the way an unprivileged
 *           process gets the privilege for all of the above
 *
 * A new mount namespace needs no refusal: it starts as a copy with the same
 * names, and every change to it passes through the hooks above.
 *
 * Mount changes in the host's mount namespace (the one the kernel started
 * with) are refused whatever the profile allows (BW_RULE_HOST): they would
 * change every other process's view, unmount or cover the BPF file system
 * whose pins hold the enforcement, or put a program of the sandbox's choosing
 * over one the host runs. A profile's `allow mount` is for a namespace of the
 * sandbox's own (`run` gives its command one; containers have theirs).
 *
 * The capable hook also refuses the privileges that reach past any cgroup
 * (bpf/host.bpf.h): CAP_SYS_RAWIO (/dev/mem, /dev/port, /proc/kcore, iopl,
 * ioperm), CAP_SYS_MODULE (init_module, finit_module, delete_module) and
 * CAP_SYS_BOOT (reboot, kexec_load, kexec_file_load).
 *
 * Processes outside every governed cgroup cost one hash lookup (capable: not
 * even that, unless the capability asked for is one of the two above). For
 * governed ones every internal failure fails closed (-EPERM, the errno of
 * these calls' own privilege checks).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "event.bpf.h"
#include "kernel.bpf.h"
#include "path.bpf.h"
#include "host.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * The host's mount namespace: that of the first process, at the top of
 * every chain of parents. NULL when the chain is deeper than the walk: then
 * every namespace counts as the host's (a refusal: fails closed).
 */
static __always_inline struct mnt_namespace *bw_host_mntns(void)
{
	struct task_struct *first = bw_first_process();

	return first ? BPF_CORE_READ(first, nsproxy, mnt_ns) : NULL;
}

static __always_inline bool bw_in_host_mntns(void)
{
	struct mnt_namespace *host = bw_host_mntns();

	return !host || BPF_CORE_READ(bpf_get_current_task_btf(), nsproxy, mnt_ns) == host;
}

/*
 * A superblock's mounts: a list through mount.mnt_instance up to 6.16 or
 * so, a chain through mount.mnt_next_for_sb since; CO-RE picks the one
 * this kernel has.
 */
struct super_block___list {
	struct list_head s_mounts;
} __attribute__((preserve_access_index));

struct mount___list {
	struct list_head mnt_instance;
} __attribute__((preserve_access_index));

/*
 * Is superblock sb mounted in the host's mount namespace too? A remount of
 * the superblock (not of one mount: MS_BIND) changes it for every mount,
 * the host's included. Its mounts are listed oldest first, so the host's
 * come early; more than the walk counts as the host's, and so does no sb.
 */
#define BW_SB_MOUNTS_MAX 64

static __always_inline bool bw_sb_in_host(struct super_block *sb)
{
	struct mnt_namespace *host = bw_host_mntns();
	struct super_block___list *sbl = (void *)sb;
	struct list_head *head, *pos;
	struct mount *m;
	int i;

	if (!host || !sb)
		return true;
	if (bpf_core_field_exists(struct mount___list, mnt_instance)) {
		head = &sbl->s_mounts;
		pos = BPF_CORE_READ(sbl, s_mounts.next);
		for (i = 0; i < BW_SB_MOUNTS_MAX; i++) {
			if (pos == head)
				return false;
			m = (void *)pos - bpf_core_field_offset(struct mount___list, mnt_instance);
			if (BPF_CORE_READ(m, mnt_ns) == host)
				return true;
			pos = BPF_CORE_READ(pos, next);
		}
		return true;
	}
	m = BPF_CORE_READ(sb, s_mounts);
	for (i = 0; i < BW_SB_MOUNTS_MAX; i++) {
		if (!m)
			return false;
		if (BPF_CORE_READ(m, mnt_ns) == host)
			return true;
		m = BPF_CORE_READ(m, mnt_next_for_sb);
	}
	return true;
}

/*
 * Would a change under mount m propagate to a mount of another namespace?
 * m's peers (mount --make-shared; a copy of a namespace whose mounts are
 * shared is their peer) receive every mount and unmount made under m: an
 * unmount of /sys/fs/bpf in such a copy unmounts the host's. A group with
 * more peers than the walk counts as reaching out. Slaves of m are not
 * walked: only a copy of the sandbox's own namespace, made by the sandbox or
 * by root outside, can be one.
 */
#define BW_PEERS_MAX 32

static __always_inline bool bw_propagates_out(struct mount *m)
{
	struct mnt_namespace *mine = BPF_CORE_READ(bpf_get_current_task_btf(), nsproxy, mnt_ns);
	struct list_head *head = &m->mnt_share, *pos;
	struct mount *peer;
	int i;

	if (!m)
		return false;
	pos = BPF_CORE_READ(m, mnt_share.next);
	for (i = 0; i < BW_PEERS_MAX; i++) {
		if (pos == head)
			return false;
		peer = (void *)pos - bpf_core_field_offset(struct mount, mnt_share);
		if (BPF_CORE_READ(peer, mnt_ns) != mine)
			return true;
		pos = BPF_CORE_READ(pos, next);
	}
	return true;
}

/*
 * The superblock of the file system context behind descriptor fd of task
 * (fsconfig's first argument); NULL if there is none, which bw_sb_in_host
 * counts as the host's.
 */
static __always_inline struct super_block *bw_fs_context_sb(struct task_struct *task, long fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct fs_context *fc;
	struct file *file = NULL;
	struct file **fds;

	if (fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&file, sizeof(file), fds + fd);
	if (!file)
		return NULL;
	fc = BPF_CORE_READ(file, private_data);
	return BPF_CORE_READ(fc, root, d_sb);
}

/* How a mount change made outside the host's namespace may still reach it. */
enum bw_reach {
	BW_REACH_NONE,	  /* it cannot: a propagation change, a bind remount, chroot... */
	BW_REACH_PEERS,	  /* a mount or move under mnt: copies go to mnt's peers */
	BW_REACH_UMOUNT,  /* an unmount of mnt: its parent's peers lose their copies */
	BW_REACH_SB,	  /* a superblock remount of mnt's file system */
	BW_REACH_FSCONFIG /* fsconfig reconfiguring a picked file system (no mnt) */
};

static __always_inline bool bw_reaches_host(__u8 reach, struct vfsmount *mnt)
{
	struct task_struct *task;
	struct pt_regs *regs;

	switch (reach) {
	case BW_REACH_PEERS:
		return bw_propagates_out(bw_real_mount(mnt));
	case BW_REACH_UMOUNT:
		return bw_propagates_out(BPF_CORE_READ(bw_real_mount(mnt), mnt_parent));
	case BW_REACH_SB:
		return bw_sb_in_host(BPF_CORE_READ(mnt, mnt_sb));
	case BW_REACH_FSCONFIG:
		task = bpf_get_current_task_btf();
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		return bw_sb_in_host(bw_fs_context_sb(task, PT_REGS_PARM1_CORE_SYSCALL(regs)));
	}
	return false;
}

/*
 * May the current (governed) process do op, a change of its view? If not,
 * the outcome under its mode, and an event naming (mnt, dentry): the mount
 * point or new root as the process sees it (no dentry: no path). A mount
 * change the profile allows is still the host's (refused whatever the
 * profile says) in the host's mount namespace, or when it reaches the host's
 * mounts another way (reach, bw_reaches_host): found only for a governed
 * process whose profile allows it, so others pay one lookup as before.
 */
static __always_inline int bw_view_check(__u8 op, struct vfsmount *mnt, struct dentry *dentry,
					 __u8 reach)
{
	int what = bw_op_ns(op);
	struct bw_learn_key obj = {}; /* one object per operation: nothing to tell apart */
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	struct bw_scratch *s;
	struct bw_outcome o;
	__u32 zero = 0, flags = 0, len = 0, size, real, policy;
	__u64 cgid;
	__u16 rule;

	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	if (!pol || what < 0 || what >= BW_NS_COUNT)
		return -EPERM;
	if (pol->ns[what] != BW_V_ALLOW)
		rule = bw_ns_rule(pol, what);
	else if (what == BW_NS_MOUNT && (bw_in_host_mntns() || bw_reaches_host(reach, mnt)))
		rule = BW_RULE_HOST;
	else
		return 0;
	policy = cg->policy;
	o = bw_deny_outcome(cgid, cg, pol, rule, op, 0, 0, &obj);
	if (!o.type)
		return bw_lsm_ret(o, -EPERM);
	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (!s)
		return -EPERM;
	if (dentry) {
		len = bw_path_build(s, mnt, dentry, &flags);
		if (flags & BW_EVF_PATH_TOO_LONG)
			len = 0;
		bpf_probe_read_kernel(s->evpath, len & BW_BUF_MASK, s->key.path);
	}
	/* The path only names what was attempted: it decided nothing. */
	bw_event_head(&s->ev, cgid, policy, o, op, 0, rule, flags & BW_EVF_PATH_TOO_LONG);
	s->ev.path_len = len;
	size = len & BW_BUF_MASK;
	/* A mount point in a chroot or the sandbox's own namespace, as the agent sees it. */
	if (len) {
		real = bw_real_name_add(s, dentry, size);
		if (real)
			s->ev.flags |= BW_EVF_REAL;
		size += real;
	}
	bw_event_send(policy, &s->ev, sizeof(s->ev) + (size & (4 * BW_PATH_BUF - 1)));
	return bw_lsm_ret(o, -EPERM);
}

/* mount(2)'s flags that change only a mount's propagation, and never propagate. */
#define BW_MS_PROPAGATION (MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)

SEC("lsm/sb_mount")
int BPF_PROG(bw_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	__u8 reach = BW_REACH_PEERS;

	if (ret)
		return ret;
	if ((flags & MS_REMOUNT) && !(flags & MS_BIND))
		reach = BW_REACH_SB;
	else if (flags & (MS_REMOUNT | BW_MS_PROPAGATION))
		reach = BW_REACH_NONE; /* one mount's flags, or its propagation */
	return bw_view_check(BW_OP_MOUNT, path->mnt, path->dentry, reach);
}

/* The mount point of the mount being detached. */
SEC("lsm/sb_umount")
int BPF_PROG(bw_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_UMOUNT, mnt, BPF_CORE_READ(mnt, mnt_root), BW_REACH_UMOUNT);
}

SEC("lsm/move_mount")
int BPF_PROG(bw_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_MOVE_MOUNT, to_path->mnt, to_path->dentry, BW_REACH_PEERS);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(bw_sb_pivotroot, const struct path *old_path, const struct path *new_path, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_PIVOT_ROOT, new_path->mnt, new_path->dentry, BW_REACH_NONE);
}

SEC("lsm/path_chroot")
int BPF_PROG(bw_path_chroot, const struct path *path, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_CHROOT, path->mnt, path->dentry, BW_REACH_NONE);
}

SEC("lsm/userns_create")
int BPF_PROG(bw_userns_create, const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_USERNS, NULL, NULL, BW_REACH_NONE);
}

/*
 * Calls without a hook of their own, refused at their privilege check: the
 * operation it is for, from the call the task is in (0: none of ours), and
 * in *reach how it may reach the host's mounts.
 */
static __always_inline __u8 bw_capable_op(int cap, __u8 *reach)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	long nr = bw_syscall_nr(regs);

	if (cap == CAP_SYS_CHROOT)
		return nr == NR_setns || nr == NR_setns_compat ? BW_OP_SETNS : 0;
	switch (nr) {
	case NR_fsopen:
		return BW_OP_FSOPEN;
	case NR_fspick:
		return BW_OP_FSPICK;
	case NR_fsconfig:
		/* Creating the file system asks too: that is fsopen's. */
		if (PT_REGS_PARM2_CORE_SYSCALL(regs) != FSCONFIG_CMD_RECONFIGURE)
			return 0;
		*reach = BW_REACH_FSCONFIG;
		return BW_OP_FSPICK;
	case NR_fsmount:
		return BW_OP_FSMOUNT;
	case NR_open_tree: /* only OPEN_TREE_CLONE asks for the privilege */
		return BW_OP_OPEN_TREE;
	case NR_mount_setattr:
		return BW_OP_MOUNT_SETATTR;
	}
	return 0;
}

/*
 * A privilege over the whole host (bpf/host.bpf.h), asked for by a governed
 * process: refused. A check the kernel does not log (CAP_OPT_NOAUDIT: it
 * only asks) is refused alike in enforce mode, without an event.
 */
static __always_inline int bw_host_cap(int cap, unsigned int opts)
{
	static const char rawio[] = "CAP_SYS_RAWIO", module[] = "CAP_SYS_MODULE",
			  boot[] = "CAP_SYS_BOOT";
	union bw_cgroup_copy cg_copy;
	struct bw_cgroup *cg;
	__u64 cgid;

	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	if (opts & CAP_OPT_NOAUDIT)
		return cg->mode == BW_MODE_ENFORCE ? -EPERM : 0;
	return bw_host_deny(cgid, cg, BW_OP_CAPABLE,
			    cap == CAP_SYS_RAWIO    ? rawio
			    : cap == CAP_SYS_MODULE ? module
						    : boot,
			    -EPERM);
}

/*
 * CAP_NET_ADMIN of a process that holds the host's privileges (its
 * credentials are of the initial user namespace): routes, addresses,
 * interfaces, tc and netfilter of the host's network namespace (and, from
 * there, of every network namespace the host owns). A tc or nftables rule
 * rewrites an allowed destination into a denied one after the connect
 * programs decided, so it is refused unless `allow net admin`, whatever the
 * net default says. A process in a user namespace of its own (a rootless
 * container, unshare -Urn) holds the privilege only over network
 * namespaces of that user namespace: not decided. The credentials may be
 * another's (netlink asks with the socket opener's): a governed caller
 * using them is decided all the same.
 */
static __always_inline int bw_net_admin(const struct cred *cred, unsigned int opts)
{
	static const char netadmin[] = "CAP_NET_ADMIN";
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	struct bw_cgroup *cg;
	__u64 cgid;

	if (BPF_CORE_READ(cred, user_ns, level))
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	if (!pol)
		return -EPERM;
	if (pol->net_admin == BW_V_ALLOW)
		return 0;
	/*
	 * Only asked (CAP_OPT_NOAUDIT): refused silently where a refusal would
	 * be, in enforce mode and, by a deny rule, in learn mode.
	 */
	if (opts & CAP_OPT_NOAUDIT) {
		if (cg->mode == BW_MODE_LEARN && pol->net_admin == BW_V_DENY)
			return -EPERM;
		return cg->mode == BW_MODE_ENFORCE ? -EPERM : 0;
	}
	return bw_named_deny(cgid, cg, pol, pol->net_admin ? pol->net_admin_rule : 0, BW_OP_CAPABLE,
			     netadmin, -EPERM);
}

SEC("lsm/capable")
int BPF_PROG(bw_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts, int ret)
{
	struct task_struct *task;
	__u8 reach = BW_REACH_NONE;
	__u8 op;

	if (ret)
		return ret;
	if (cap != CAP_SYS_ADMIN && cap != CAP_SYS_CHROOT && cap != CAP_SYS_RAWIO &&
	    cap != CAP_SYS_MODULE && cap != CAP_SYS_BOOT && cap != CAP_NET_ADMIN)
		return 0;
	/*
	 * Netlink asks with the credentials the socket was opened with (a
	 * governed process may hold one from before a change of its own): the
	 * caller is the process sending the request, whose they are not.
	 */
	if (cap == CAP_NET_ADMIN)
		return bw_net_admin(cred, opts);
	/* Only the task's own privilege (has_capability() asks about others too). */
	task = bpf_get_current_task_btf();
	if (cred != task->cred)
		return 0;
	if (cap != CAP_SYS_ADMIN && cap != CAP_SYS_CHROOT)
		return bw_host_cap(cap, opts);
	op = bw_capable_op(cap, &reach);
	if (!op)
		return 0;
	return bw_view_check(op, NULL, NULL, reach);
}
