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

char LICENSE[] SEC("license") = "GPL";

/*
 * May the current (governed) process do op, a change of its view? If not,
 * the outcome under its mode, and an event naming (mnt, dentry): the mount
 * point or new root as the process sees it (no dentry: no path).
 */
static __always_inline int bw_view_check(__u8 op, struct vfsmount *mnt, struct dentry *dentry)
{
	int what = bw_op_ns(op);
	struct bw_learn_key obj = {}; /* one object per operation: nothing to tell apart */
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	struct bw_scratch *s;
	struct bw_outcome o;
	__u32 zero = 0, flags = 0, len = 0, policy;
	__u64 cgid;
	__u16 rule;

	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	if (!pol || what < 0 || what >= BW_NS_COUNT)
		return -EPERM;
	if (pol->ns[what] == BW_V_ALLOW)
		return 0;
	rule = bw_ns_rule(pol, what);
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
	bw_event_send(policy, &s->ev, sizeof(s->ev) + (len & BW_BUF_MASK));
	return bw_lsm_ret(o, -EPERM);
}

SEC("lsm/sb_mount")
int BPF_PROG(bw_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_MOUNT, path->mnt, path->dentry);
}

/* The mount point of the mount being detached. */
SEC("lsm/sb_umount")
int BPF_PROG(bw_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_UMOUNT, mnt, BPF_CORE_READ(mnt, mnt_root));
}

SEC("lsm/move_mount")
int BPF_PROG(bw_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_MOVE_MOUNT, to_path->mnt, to_path->dentry);
}

SEC("lsm/sb_pivotroot")
int BPF_PROG(bw_sb_pivotroot, const struct path *old_path, const struct path *new_path, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_PIVOT_ROOT, new_path->mnt, new_path->dentry);
}

SEC("lsm/path_chroot")
int BPF_PROG(bw_path_chroot, const struct path *path, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_CHROOT, path->mnt, path->dentry);
}

SEC("lsm/userns_create")
int BPF_PROG(bw_userns_create, const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	return bw_view_check(BW_OP_USERNS, NULL, NULL);
}

/*
 * Calls without a hook of their own, refused at their privilege check: the
 * operation it is for, from the call the task is in (0: none of ours).
 */
static __always_inline __u8 bw_capable_op(int cap)
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
	case NR_fsmount:
		return BW_OP_FSMOUNT;
	case NR_open_tree: /* only OPEN_TREE_CLONE asks for the privilege */
		return BW_OP_OPEN_TREE;
	case NR_mount_setattr:
		return BW_OP_MOUNT_SETATTR;
	}
	return 0;
}

SEC("lsm/capable")
int BPF_PROG(bw_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts, int ret)
{
	struct task_struct *task;
	__u8 op;

	if (ret)
		return ret;
	if (cap != CAP_SYS_ADMIN && cap != CAP_SYS_CHROOT)
		return 0;
	/* Only the task's own privilege (has_capability() asks about others too). */
	task = bpf_get_current_task_btf();
	if (cred != task->cred)
		return 0;
	op = bw_capable_op(cap);
	if (!op)
		return 0;
	return bw_view_check(op, NULL, NULL);
}
