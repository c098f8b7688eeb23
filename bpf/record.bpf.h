/* SPDX-License-Identifier: GPL-2.0-only */
/* The head of every event record: who did it, when, and what was decided. */
#ifndef BW_RECORD_BPF_H
#define BW_RECORD_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"

static __always_inline void bw_event_head(struct bw_event *ev, __u64 cgid, __u32 policy, __u8 type,
					  __u8 op, __u8 decision, __u16 rule)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 uid_gid = bpf_get_current_uid_gid();
	struct bw_cgroup *cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);

	ev->ts_boot_ns = bpf_ktime_get_boot_ns();
	ev->cgroup_id = cgid;
	ev->pid = pid_tgid >> 32;
	ev->tid = (__u32)pid_tgid;
	ev->ppid = BPF_CORE_READ(task, real_parent, tgid);
	ev->uid = (__u32)uid_gid;
	ev->gid = uid_gid >> 32;
	ev->policy = policy;
	ev->rule = rule;
	ev->type = type;
	ev->op = op;
	ev->decision = decision;
	ev->access = 0;
	ev->flags = 0;
	/*
	 * The governed cgroup's mode, which the caller has just decided under.
	 * Interim: the outcome helper (bpf/event.bpf.h) passes the mode itself.
	 */
	ev->mode = cg ? cg->mode : BW_MODE_ENFORCE;
	ev->path_len = 0;
	ev->args_len = 0;
	ev->dev = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
}

#endif /* BW_RECORD_BPF_H */
