// SPDX-License-Identifier: GPL-2.0-only
/*
 * Other processes and the agent itself: what a governed process may never
 * do, whatever its profile allows (the contract's self-protection).
 *
 * - Another process's memory, environment and descriptors: ptrace and
 *   everything the kernel checks as it does (ptrace_may_access: /proc/PID/
 *   mem, environ, fd, root, cwd, process_vm_readv, pidfd_getfd, kcmp) are
 *   refused across the sandbox's boundary, onto a process whose cgroup is
 *   not governed by the same policy slot, and onto an agent. Inside the
 *   sandbox the kernel's own rules stay. PTRACE_TRACEME, which makes the
 *   parent the tracer, is refused when a governed parent would trace a
 *   process outside its sandbox.
 * - The agent: signals (kill, tgkill, pidfd_send_signal, a SIGIO or SIGURG
 *   pointed at it with F_SETOWN), and prlimit, setpriority,
 *   sched_setscheduler/affinity and ioprio_set aimed at an agent process.
 *   Agents record their thread group leader in bw_agents, a task storage
 *   map: an entry lives and dies with its task, so an agent that died
 *   leaves nothing behind that a reused pid could inherit.
 * - BPF: bpf(2) as a whole. Opening one of bpfwarden's maps or programs
 *   (BPF_OBJ_GET of a pin) needs CAP_BPF or CAP_SYS_ADMIN from anyone:
 *   the kernel checks only the pin's file mode, which root passes without
 *   either.
 *
 * - The host's kernel (bpf/host.bpf.h): a module request (socket(AF_ALG),
 *   an unknown file system or binary format...), which runs the modprobe
 *   helper outside every cgroup, and perf events that see more than the
 *   caller: every process on a CPU, or tracepoints' raw data.
 *
 * The pin directory (open, unlink, rename...) is refused in the file hooks'
 * decision (bpf/decide.bpf.h), a BPF object received in bpf/receive.bpf.c.
 *
 * A process outside every governed cgroup costs one hash lookup on each
 * hook (the bpf_map and bpf_prog hooks also read a name and, for
 * bpfwarden's own objects, its capabilities). For governed processes every
 * internal failure fails closed (-EPERM).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "event.bpf.h"
#include "guard.bpf.h"
#include "kernel.bpf.h"
#include "host.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The agents: their thread group leaders (user/guard.c writes them, with a pidfd). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_agent);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_agents SEC(".maps");

/* PTRACE_MODE_* of include/linux/ptrace.h that the events keep, and the quiet one. */
#define PTRACE_MODE_READ    0x01
#define PTRACE_MODE_ATTACH  0x02
#define PTRACE_MODE_NOAUDIT 0x04

#define SIGIO 29

static __always_inline bool bw_is_agent(struct task_struct *t)
{
	return bpf_task_storage_get(&bw_agents, t->group_leader, 0, 0) != NULL;
}

/* A process, as guard events name it. */
static __always_inline void bw_task_obj(struct bw_guard_obj *o, struct task_struct *t, __u32 arg,
					bool agent)
{
	o->kind = BW_GOBJ_TASK;
	o->cgroup_id = bw_task_cgroup(t);
	o->pid = BPF_CORE_READ(t, tgid);
	o->tid = BPF_CORE_READ(t, pid);
	o->arg = arg;
	o->agent = agent;
	BPF_CORE_READ_STR_INTO(&o->name, t, comm);
}

/*
 * A governed process (cg) reaching process t as ptrace would: let through
 * when t is in a cgroup of the same policy slot (the kernel's own checks
 * decide there) and not an agent; else refused by BW_RULE_PROCESSES, or
 * BW_RULE_SELF for an agent. quiet: the kernel asked for a check it does
 * not log (PTRACE_MODE_NOAUDIT: /proc/PID/stat's wchan and stack fields, for
 * instance), refused alike in enforce mode, without an event.
 */
static __always_inline int bw_reach(__u64 cgid, const struct bw_cgroup *cg, struct task_struct *t,
				    __u8 op, __u32 arg, bool quiet)
{
	struct bw_guard_obj obj = {};
	struct bw_cgroup *tcg;
	bool agent = bw_is_agent(t);
	__u64 tcgid;

	if (!agent) {
		tcgid = bw_task_cgroup(t);
		tcg = bpf_map_lookup_elem(&bw_cgroups, &tcgid);
		if (tcg && tcg->policy == cg->policy)
			return 0;
	}
	if (quiet)
		return cg->mode == BW_MODE_ENFORCE ? -EPERM : 0;
	bw_task_obj(&obj, t, arg, agent);
	return bw_guard_deny(cgid, cg, agent ? BW_RULE_SELF : BW_RULE_PROCESSES, op, &obj, NULL,
			     -EPERM);
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(bw_ptrace_check, struct task_struct *child, unsigned int mode, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	return bw_reach(cgid, cg, child, BW_OP_PTRACE,
			mode & (PTRACE_MODE_READ | PTRACE_MODE_ATTACH), mode & PTRACE_MODE_NOAUDIT);
}

/*
 * PTRACE_TRACEME: the caller (the tracee) makes its parent its tracer. The
 * direction that matters is a governed parent gaining a process outside its
 * sandbox, so the parent's cgroup is looked up first (one lookup when it is
 * not governed), and the event names the parent as the process and the
 * caller as the target.
 */
SEC("lsm/ptrace_traceme")
int BPF_PROG(bw_traceme, struct task_struct *parent, int ret)
{
	struct task_struct *me = bpf_get_current_task_btf();
	struct bw_guard_obj obj = {};
	union bw_cgroup_copy pcopy;
	struct bw_cgroup *pcg, *cg;
	__u64 pcgid, cgid;

	if (ret)
		return ret;
	pcgid = bw_task_cgroup(parent);
	pcg = bpf_map_lookup_elem(&bw_cgroups, &pcgid);
	if (!pcg)
		return 0;
	/* One read of the parent's entry, as bw_governing reads the caller's. */
	pcopy.raw = *(volatile __u64 *)pcg;
	pcg = &pcopy.v;
	cgid = bpf_get_current_cgroup_id();
	cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (cg && cg->policy == pcg->policy)
		return 0;
	bw_task_obj(&obj, me, BW_PTRACE_TRACEME, bw_is_agent(me));
	return bw_guard_deny(pcgid, pcg, obj.agent ? BW_RULE_SELF : BW_RULE_PROCESSES, BW_OP_PTRACE,
			     &obj, parent, -EPERM);
}

/* An operation aimed at process t (a signal, a limit): refused when t is an agent. */
static __always_inline int bw_at_agent(struct task_struct *t, __u8 op, __u32 arg)
{
	union bw_cgroup_copy cg_copy;
	struct bw_guard_obj obj = {};
	struct bw_cgroup *cg;
	__u64 cgid;

	cg = bw_governing(&cgid, &cg_copy);
	if (!cg || !bw_is_agent(t))
		return 0;
	bw_task_obj(&obj, t, arg, true);
	return bw_guard_deny(cgid, cg, BW_RULE_SELF, op, &obj, NULL, -EPERM);
}

/*
 * kill, tgkill, rt_sigqueueinfo, pidfd_send_signal, and each member of a
 * process group or of kill(-1). Signal 0 delivers nothing (it asks whether
 * the process exists) and passes. Signals the kernel sends itself (a child's
 * exit, the terminal's ^C) do not come here.
 */
SEC("lsm/task_kill")
int BPF_PROG(bw_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	if (!sig)
		return 0;
	return bw_at_agent(p, BW_OP_SIGNAL, sig);
}

/*
 * SIGIO and SIGURG to the owner set with F_SETOWN (any signal with
 * F_SETSIG): sent by whoever makes the descriptor ready, often from the
 * network's softirq, so the sender cannot be told. No agent asks for them:
 * one aimed at an agent is refused whoever sends it, with an event when a
 * governed process does.
 */
SEC("lsm/file_send_sigiotask")
int BPF_PROG(bw_sigio, struct task_struct *tsk, struct fown_struct *fown, int sig, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_guard_obj obj = {};
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	if (!bw_is_agent(tsk))
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return -EPERM;
	bw_task_obj(&obj, tsk, sig ? sig : SIGIO, true);
	return bw_guard_deny(cgid, cg, BW_RULE_SELF, BW_OP_SIGNAL, &obj, NULL, -EPERM);
}

/* prlimit(2) can set RLIMIT_CPU on the agent and have the kernel kill it. */
SEC("lsm/task_setrlimit")
int BPF_PROG(bw_setrlimit, struct task_struct *p, unsigned int resource, struct rlimit *new_rlim,
	     int ret)
{
	if (ret)
		return ret;
	return bw_at_agent(p, BW_OP_CONTROL, BW_CTL_RLIMIT);
}

SEC("lsm/task_setnice")
int BPF_PROG(bw_setnice, struct task_struct *p, int nice, int ret)
{
	if (ret)
		return ret;
	return bw_at_agent(p, BW_OP_CONTROL, BW_CTL_NICE);
}

/* sched_setscheduler, sched_setattr, sched_setaffinity. */
SEC("lsm/task_setscheduler")
int BPF_PROG(bw_setsched, struct task_struct *p, int ret)
{
	if (ret)
		return ret;
	return bw_at_agent(p, BW_OP_CONTROL, BW_CTL_SCHED);
}

SEC("lsm/task_setioprio")
int BPF_PROG(bw_setioprio, struct task_struct *p, int ioprio, int ret)
{
	if (ret)
		return ret;
	return bw_at_agent(p, BW_OP_CONTROL, BW_CTL_IOPRIO);
}

/* Every bpf(2) command, before the kernel looks at it. */
SEC("lsm/bpf")
int BPF_PROG(bw_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_guard_obj obj = {};
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	obj.kind = BW_GOBJ_BPF_CMD;
	obj.arg = cmd;
	return bw_guard_deny(cgid, cg, BW_RULE_SELF, BW_OP_BPF, &obj, NULL, -EPERM);
}

/*
 * A map descriptor being made (BPF_MAP_CREATE, BPF_OBJ_GET of a pin,
 * BPF_MAP_GET_FD_BY_ID). bpf(2) itself is refused to governed processes
 * above; this refuses bpfwarden's own maps to anyone without CAP_BPF or
 * CAP_SYS_ADMIN, who could otherwise rewrite the policy through a pin
 * (its file mode is all the kernel checks).
 */
SEC("lsm/bpf_map")
int BPF_PROG(bw_bpf_map, struct bpf_map *map, fmode_t fmode, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_guard_obj obj = {};
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	bw_bpf_map_obj(&obj, map);
	if (cg)
		return bw_guard_deny(cgid, cg, BW_RULE_SELF, BW_OP_BPF, &obj, NULL, -EPERM);
	return bw_ours(obj.name) && !bw_bpf_capable() ? -EPERM : 0;
}

SEC("lsm/bpf_prog")
int BPF_PROG(bw_bpf_prog, struct bpf_prog *prog, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_guard_obj obj = {};
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	bw_bpf_prog_obj(&obj, prog);
	if (cg)
		return bw_guard_deny(cgid, cg, BW_RULE_SELF, BW_OP_BPF, &obj, NULL, -EPERM);
	return bw_ours(obj.name) && !bw_bpf_capable() ? -EPERM : 0;
}

/*
 * A module the kernel is asked to load on the caller's behalf: the modprobe
 * helper would run as root in the root cgroup. Modules a workload needs are
 * the host's to load before it starts.
 */
SEC("lsm/kernel_module_request")
int BPF_PROG(bw_modrequest, char *kmod_name, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	return bw_host_deny(cgid, cg, BW_OP_MODULE, kmod_name, -EPERM);
}

/* include/linux/security.h: what a perf event asks for beyond the caller's own threads. */
#define PERF_SECURITY_CPU	 1
#define PERF_SECURITY_TRACEPOINT 3

/*
 * A perf event on a whole CPU sees every process there (a uprobe on a
 * shared library copies their arguments); tracepoints' raw samples show
 * kernel data of any process. An event on the caller's own threads
 * (PERF_SECURITY_OPEN, and its kernel-side samples, PERF_SECURITY_KERNEL)
 * passes; one on another process is the ptrace check's (bw_ptrace_check).
 */
SEC("lsm/perf_event_open")
int BPF_PROG(bw_perf_open, struct perf_event_attr *attr, int type, int ret)
{
	static const char cpu[] = "cpu", tracepoint[] = "tracepoint";
	union bw_cgroup_copy cg_copy;
	struct bw_cgroup *cg;
	__u64 cgid;

	if (ret)
		return ret;
	if (type != PERF_SECURITY_CPU && type != PERF_SECURITY_TRACEPOINT)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	return bw_host_deny(cgid, cg, BW_OP_PERF, type == PERF_SECURITY_CPU ? cpu : tracepoint,
			    -EACCES);
}
