// SPDX-License-Identifier: GPL-2.0-only
/*
 * Network enforcement with cgroup sock_addr programs: connect4/6 (connect(2),
 * TCP Fast Open's sendto and io_uring connects all pass there), sendmsg4/6
 * (the destination of each unconnected UDP datagram) and bind4/6. They are
 * attached once at the cgroup2 root and find the governing policy of the
 * calling task like the LSM programs do, so they work, and are the network
 * enforcement, on kernels without BPF LSM too.
 *
 * Returning 0 refuses the call with EPERM. Processes outside every governed
 * cgroup cost one hash lookup; for governed ones every internal failure
 * refuses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "record.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_INET	    2
#define AF_INET6    10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

struct bw_net_scratch {
	struct bw_event ev;
	struct bw_net_obj obj; /* the event's "path" bytes */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_net_scratch);
} bw_net_scratch SEC(".maps");

/*
 * 0.0.0.0 and :: reach the local host: a destination is decided as the
 * loopback address it really reaches (bind keeps them: "every address").
 */
static __always_inline void bw_local_dest(struct bw_net_key *k)
{
	__u32 *a = (__u32 *)k->addr;

	if (a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff) && a[3] == 0)
		a[3] = bpf_htonl(0x7f000001);
	else if (a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0)
		a[3] = bpf_htonl(1);
}

/*
 * A refusal (or, in audit mode, what would have been one): counted, sent as
 * an event. Returns the program's verdict: 0 refuses, 1 lets it pass.
 */
static __always_inline int bw_net_refuse(__u64 cgid, struct bw_cgroup *cg,
					 const struct bw_policy *pol, __u8 op, __u16 rule,
					 const __u8 *addr, __u16 port, __u8 family, __u8 proto)
{
	struct bw_net_scratch *s;
	struct bw_counters *c;
	__u32 zero = 0, policy = cg->policy;
	__u8 type;
	void *rb;

	type = cg->mode == BW_MODE_AUDIT ? BW_EV_AUDIT : BW_EV_DENY;
	if (cg->mode == BW_MODE_LEARN && rule == 0) {
		struct bw_learn_key lk = {};

		type = BW_EV_LEARN;
		lk.gen = pol->learn_gen;
		lk.cgroup = cgid;
		__builtin_memcpy(&lk.a, addr, 8);
		__builtin_memcpy(&lk.b, addr + 8, 8);
		lk.c = ((__u32)proto << 16) | port;
		lk.op = op;
		lk.access = family;
		if (!bw_learn_first(&lk))
			return 1;
	}
	c = bw_counters_of(policy);
	if (c && type != BW_EV_LEARN)
		__sync_fetch_and_add(&c->denied, 1);
	if (type != BW_EV_LEARN && !bw_event_allowed(cgid, policy, pol->event_rate))
		return type == BW_EV_DENY ? 0 : 1;
	s = bpf_map_lookup_elem(&bw_net_scratch, &zero);
	if (!s)
		return type == BW_EV_DENY ? 0 : 1;
	bw_event_head(&s->ev, cgid, policy, type, op, type == BW_EV_DENY ? BW_V_DENY : BW_V_ALLOW,
		      rule);
	s->ev.path_len = sizeof(s->obj);
	__builtin_memcpy(s->obj.addr, addr, sizeof(s->obj.addr));
	s->obj.port = port;
	s->obj.family = family;
	s->obj.proto = proto;
	rb = bpf_map_lookup_elem(&bw_rbufs, &policy);
	if (!rb || bpf_ringbuf_output(rb, s, sizeof(*s), 0)) {
		c = bw_counters_of(policy);
		if (c)
			__sync_fetch_and_add(&c->lost, 1);
	}
	return type == BW_EV_DENY ? 0 : 1;
}

static __always_inline int bw_net_check(struct bpf_sock_addr *ctx, __u8 op, bool v6)
{
	struct bw_net_key k = {};
	struct bw_net_value *r;
	struct bw_cgroup *cg;
	struct bw_policy *pol;
	__u32 policy, *a = (__u32 *)k.addr, i, n;
	__u16 port, rule = 0;
	__u8 verdict = BW_V_NONE, proto;
	__u64 cgid;

	cgid = bpf_get_current_cgroup_id();
	cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (!cg)
		return 1;
	policy = cg->policy;
	pol = bpf_map_lookup_elem(&bw_policies, &policy);
	if (!pol)
		return 0;

	proto = ctx->protocol == IPPROTO_UDP ? IPPROTO_UDP : IPPROTO_TCP;
	port = bpf_ntohs((__u16)ctx->user_port);
	if (v6) {
		a[0] = ctx->user_ip6[0];
		a[1] = ctx->user_ip6[1];
		a[2] = ctx->user_ip6[2];
		a[3] = ctx->user_ip6[3];
	} else {
		a[2] = bpf_htonl(0xffff);
		a[3] = ctx->user_ip4;
	}
	if (op != BW_NOP_BIND)
		bw_local_dest(&k);
	k.policy = policy;
	k.op = op == BW_NOP_BIND ? BW_NOP_BIND : BW_NOP_CONNECT;
	k.proto = proto;
	k.prefixlen = 64 + 128;
	r = bpf_map_lookup_elem(&bw_net_rules, &k);
	if (r) {
		n = r->n;
		for (i = 0; i < BW_NET_RANGES; i++) {
			if (i >= n)
				break;
			if (port >= r->r[i].lo && port <= r->r[i].hi) {
				verdict = r->r[i].verdict;
				rule = r->r[i].rule;
				break;
			}
		}
	}
	if (verdict == BW_V_NONE) {
		verdict = pol->default_net;
		rule = 0;
	}
	if (verdict != BW_V_DENY)
		return 1;

	return bw_net_refuse(cgid, cg, pol,
			     op == BW_NOP_BIND	    ? BW_OP_BIND
			     : op == BW_NOP_SENDMSG ? BW_OP_SENDMSG
						    : BW_OP_CONNECT,
			     rule, k.addr, port, v6 ? 6 : 4, proto);
}

SEC("cgroup/connect4")
int bw_connect4(struct bpf_sock_addr *ctx)
{
	return bw_net_check(ctx, BW_NOP_CONNECT, false);
}

SEC("cgroup/connect6")
int bw_connect6(struct bpf_sock_addr *ctx)
{
	return bw_net_check(ctx, BW_NOP_CONNECT, true);
}

SEC("cgroup/sendmsg4")
int bw_sendmsg4(struct bpf_sock_addr *ctx)
{
	return bw_net_check(ctx, BW_NOP_SENDMSG, false);
}

SEC("cgroup/sendmsg6")
int bw_sendmsg6(struct bpf_sock_addr *ctx)
{
	return bw_net_check(ctx, BW_NOP_SENDMSG, true);
}

SEC("cgroup/bind4")
int bw_bind4(struct bpf_sock_addr *ctx)
{
	return bw_net_check(ctx, BW_NOP_BIND, false);
}

SEC("cgroup/bind6")
int bw_bind6(struct bpf_sock_addr *ctx)
{
	return bw_net_check(ctx, BW_NOP_BIND, true);
}

#define SOCK_RAW 3

/*
 * Raw IP sockets (any kernel: inet_create runs this program). Packet sockets
 * are not inet sockets: the LSM program in sock.bpf.c refuses those.
 */
SEC("cgroup/sock_create")
int bw_sock_create(struct bpf_sock *ctx)
{
	static const __u8 none[16];
	struct bw_cgroup *cg;
	struct bw_policy *pol;
	__u32 policy;
	__u8 verdict;
	__u64 cgid;

	if (ctx->type != SOCK_RAW)
		return 1;
	cgid = bpf_get_current_cgroup_id();
	cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (!cg)
		return 1;
	policy = cg->policy;
	pol = bpf_map_lookup_elem(&bw_policies, &policy);
	if (!pol)
		return 0;
	verdict = pol->net_raw ? pol->net_raw : pol->default_net;
	if (verdict != BW_V_DENY)
		return 1;
	return bw_net_refuse(cgid, cg, pol, BW_OP_SOCKET, pol->net_raw ? pol->net_raw_rule : 0,
			     none, ctx->protocol, ctx->family == AF_INET6 ? 6 : 4, ctx->type);
}
