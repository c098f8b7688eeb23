// SPDX-License-Identifier: GPL-2.0-only
/*
 * Exec enforcement on bprm_check_security, which the kernel calls for the
 * file really being executed by every route: execve and execveat (including
 * fexecve, execveat(fd, "", AT_EMPTY_PATH)), and again for a script's
 * interpreter, so that script and interpreter must both be allowed. The
 * dynamic loader run directly (`ld.so /path/prog`) is an exec of the loader:
 * refused unless the profile allows the loader's own path. A memfd or other
 * file without a path runs only under `allow exec memfd`.
 *
 * Processes outside every governed cgroup cost two hash lookups (the second
 * for a cgroup waiting for its first exec); for governed ones every internal
 * failure fails closed (-EACCES).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define BW_WITH_EXEC_ARGS
#include "bpfwarden.h"
#include "maps.bpf.h"
#include "path.bpf.h"
#include "decide.bpf.h"
#include "kernel.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * The first arguments, for the event. During bprm_check the caller's memory
 * is still mapped, so they are read from the argv it passed to the syscall
 * (its registers at entry), after the path at s->evpath[path_len].
 */
static __always_inline __u32 bw_exec_args(struct bw_scratch *s, __u32 path_len)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	const char *const *argv;
	__u32 off = path_len, i;
	long nr, n;

	if (path_len > BW_PATH_BUF - BW_EXEC_ARGS * BW_EXEC_ARG_LEN)
		return 0;
	nr = bw_syscall_nr(regs);
	if (nr == NR_execve)
		argv = (const char *const *)PT_REGS_PARM2_CORE_SYSCALL(regs);
	else if (nr == NR_execveat)
		argv = (const char *const *)PT_REGS_PARM3_CORE_SYSCALL(regs);
	else
		return 0;
	for (i = 0; i < BW_EXEC_ARGS; i++) {
		const char *arg = NULL;

		if (bpf_probe_read_user(&arg, sizeof(arg), &argv[i]) || !arg)
			break;
		n = bpf_probe_read_user_str(&s->evpath[off & BW_BUF_MASK], BW_EXEC_ARG_LEN, arg);
		if (n <= 0)
			break;
		off += n;
	}
	return off - path_len;
}

/*
 * A cgroup waiting for its first exec (bw_pending) is governed from this
 * exec on: its entry moves into bw_cgroups, where every hook finds it, and
 * this exec, the container's first instruction, is decided under it. What
 * ran in the cgroup before was its runtime setting it up (runc's init).
 * *cg is NULL when the cgroup is not waiting; -EACCES when its entry cannot
 * be moved (a full map fails closed, and the entry keeps waiting). No count
 * changes: a pending entry is counted as an agent's from when it is made.
 */
static __always_inline int bw_pending_starts(__u64 cgid, struct bw_cgroup **cg)
{
	struct bw_cgroup *p = bpf_map_lookup_elem(&bw_pending, &cgid), v;

	*cg = NULL;
	if (!p)
		return 0;
	v = *p;
	/* NOEXIST: another thread's exec may have moved it already. */
	bpf_map_update_elem(&bw_cgroups, &cgid, &v, BPF_NOEXIST);
	*cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (!*cg)
		return -EACCES;
	bpf_map_delete_elem(&bw_pending, &cgid);
	return 0;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(bw_bprm_check, struct linux_binprm *bprm, int ret)
{
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid);
	if (!cg) {
		ret = bw_pending_starts(cgid, &cg);
		if (ret || !cg)
			return ret;
	}
	return bw_decide_file(cgid, cg, bprm->file, &bw_exec_rules, BW_CAT_PIN_EXEC, BW_OP_EXEC,
			      BW_ACC_X);
}
