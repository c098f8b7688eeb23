// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packet sockets (AF_PACKET) on socket_create: they see and forge every frame
 * of an interface, and they are not inet sockets, so no cgroup program runs
 * for them. Raw IP sockets are refused by the cgroup sock_create program in
 * net.bpf.c on every kernel; this program needs BPF LSM.
 *
 * Processes outside every governed cgroup cost one hash lookup; for governed
 * ones every internal failure fails closed (-EPERM).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EPERM 1
#define AF_PACKET 17

struct bw_sock_event {
	struct bw_event ev;
	struct bw_net_obj obj;
};

SEC("lsm/socket_create")
int BPF_PROG(bw_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct bw_sock_event *e;
	struct bw_counters *c;
	struct bw_cgroup *cg;
	struct bw_policy *pol;
	__u32 policy;
	__u64 cgid, id;
	__u8 verdict, evtype;
	void *rb;

	if (ret)
		return ret;
	if (family != AF_PACKET || kern)
		return 0;
	cgid = bpf_get_current_cgroup_id();
	cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (!cg)
		return 0;
	policy = cg->policy;
	pol = bpf_map_lookup_elem(&bw_policies, &policy);
	if (!pol)
		return -EPERM;
	verdict = pol->net_raw ? pol->net_raw : pol->default_net;
	if (verdict != BW_V_DENY)
		return 0;
	c = bw_counters_of(policy);
	if (c)
		__sync_fetch_and_add(&c->denied, 1);
	evtype = cg->mode == BW_MODE_AUDIT ? BW_EV_AUDIT : BW_EV_DENY;
	if (cg->mode == BW_MODE_LEARN && !pol->net_raw)
		evtype = BW_EV_LEARN;
	rb = bpf_map_lookup_elem(&bw_rbufs, &policy);
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		if (c)
			__sync_fetch_and_add(&c->lost, 1);
		return evtype == BW_EV_DENY ? -EPERM : 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ev.ts_boot_ns = bpf_ktime_get_boot_ns();
	e->ev.cgroup_id = cgid;
	id = bpf_get_current_pid_tgid();
	e->ev.pid = id >> 32;
	e->ev.tid = (__u32)id;
	e->ev.ppid = BPF_CORE_READ(task, real_parent, tgid);
	id = bpf_get_current_uid_gid();
	e->ev.uid = (__u32)id;
	e->ev.gid = id >> 32;
	e->ev.policy = policy;
	e->ev.rule = pol->net_raw ? pol->net_raw_rule : 0;
	e->ev.type = evtype;
	e->ev.op = BW_OP_SOCKET;
	e->ev.decision = evtype == BW_EV_DENY ? BW_V_DENY : BW_V_ALLOW;
	e->ev.path_len = sizeof(e->obj);
	bpf_get_current_comm(e->ev.comm, sizeof(e->ev.comm));
	e->obj.family = AF_PACKET;
	e->obj.proto = type;
	e->obj.port = protocol;
	bpf_ringbuf_submit(e, 0);
	return evtype == BW_EV_DENY ? -EPERM : 0;
}
