// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which code may run, decided by exec rules on every route to it:
 *
 * - bprm_check_security, which the kernel calls for the file really being
 *   executed by every route: execve and execveat (including fexecve,
 *   execveat(fd, "", AT_EMPTY_PATH)), and again for a script's
 *   interpreter, so that script and interpreter must both be allowed to run.
 * - mmap_file and file_mprotect with PROT_EXEC: a file's code mapped
 *   executable, by the kernel at exec (the program and its loader), by the
 *   loader (libraries, LD_PRELOAD, dlopen, and the program it was asked to
 *   run when run directly: `ld.so /path/prog`), or by anything else.
 *   Mapping needs `allow exec` or `allow exec lib`, so the loader run
 *   directly runs only what the profile lets run or map anyway.
 *
 * A memfd or other file without a path runs or is mapped only under `allow
 * exec memfd`. Anonymous memory made executable (JITs) is not governed
 * (docs/enforcement.md, "Mapped code").
 *
 * Processes outside every governed cgroup cost one hash lookup (an exec
 * two: the second for a cgroup waiting for its first exec), and a mapping that is not executable or
 * has no file costs none; for governed processes every internal failure fails closed (-EACCES).
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
static __always_inline int bw_pending_starts(__u64 cgid, union bw_cgroup_copy *copy,
					     struct bw_cgroup **cg)
{
	struct bw_cgroup *p = bpf_map_lookup_elem(&bw_pending, &cgid), v;

	*cg = NULL;
	if (!p)
		return 0;
	v = *p;
	/* NOEXIST: another thread's exec may have moved it already. */
	bpf_map_update_elem(&bw_cgroups, &cgid, &v, BPF_NOEXIST);
	p = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (!p)
		return -EACCES;
	/* One read decides, as bw_governing's (bpf/decide.bpf.h). */
	copy->raw = *(volatile __u64 *)p;
	*cg = &copy->v;
	bpf_map_delete_elem(&bw_pending, &cgid);
	return 0;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(bw_bprm_check, struct linux_binprm *bprm, int ret)
{
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg) {
		ret = bw_pending_starts(cgid, &cg_copy, &cg);
		if (ret || !cg)
			return ret;
	}
	return bw_decide_file(cgid, cg, bprm->file, &bw_exec_rules, BW_CAT_PIN_EXEC, BW_OP_EXEC,
			      BW_ACC_X, NULL);
}

/*
 * The kernel mapping the program of the exec bprm_check just decided: the
 * task is inside execve (in_execve) and the new mm's exe_file is the program.
 * Deciding it again would give a program run in audit or learn mode a second
 * event. Only that file: the loader the program names (PT_INTERP), mapped in
 * the same exec, is decided as a library. On a kernel without in_execve the
 * program is decided again, which `allow exec` allows.
 */
static __always_inline bool bw_exec_maps_program(struct file *file)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!bpf_core_field_exists(task->in_execve) ||
	    !BPF_CORE_READ_BITFIELD_PROBED(task, in_execve))
		return false;
	return BPF_CORE_READ(task, mm, exe_file) == file;
}

/*
 * mmap(2) is frequent: what is not executable, or is anonymous, returns
 * before anything else. `prot` is what the mapping will get (READ_IMPLIES_EXEC
 * already applied), reqprot only what was asked.
 */
SEC("lsm/mmap_file")
int BPF_PROG(bw_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags, int ret)
{
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	__u64 cgid, raw = 0;

	if (ret)
		return ret;
	if (!(prot & PROT_EXEC))
		return 0;
	/*
	 * Anonymous memory comes with no file. These kernels' verifier takes a
	 * hook's pointer argument as never NULL and may drop a test of it as
	 * dead code, so the raw argument is tested.
	 */
	bpf_probe_read_kernel(&raw, sizeof(raw), &ctx[0]);
	if (!raw)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg || bw_exec_maps_program(file))
		return 0;
	return bw_decide_file(cgid, cg, file, &bw_exec_rules, BW_CAT_PIN_EXEC, BW_OP_MMAP, BW_ACC_M,
			      NULL);
}

/*
 * A file mapping made executable later (mapped readable, then mprotect). A
 * mapping that is executable already was decided when it became so. This
 * hook runs under the mmap lock and may not call bpf_d_path: the path is
 * walked (bpf/path.bpf.h).
 */
SEC("lsm/file_mprotect")
int BPF_PROG(bw_file_mprot, struct vm_area_struct *vma, unsigned long reqprot, unsigned long prot,
	     int ret)
{
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct file *file;
	__u64 cgid;

	if (ret)
		return ret;
	if (!(prot & PROT_EXEC) || (vma->vm_flags & VM_EXEC))
		return 0;
	file = vma->vm_file;
	if (!file)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	return bw_decide_walked(cgid, cg, &bw_exec_rules, BW_CAT_PIN_EXEC, file->f_path.mnt,
				file->f_path.dentry, BW_OP_MPROTECT, BW_ACC_M);
}
