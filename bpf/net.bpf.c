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
/* Cgroup programs: no task BTF (bw_current_cgroup in maps.bpf.h). */
#define BW_CGROUP_PROGS
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "event.bpf.h"
#include "kernel.bpf.h"
#include "netrules.bpf.h"
#include "netcache.bpf.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline int bw_net_check(struct bpf_sock_addr *ctx, __u8 op, bool v6)
{
	struct bw_nc_query q;
	__u8 proto, evop;
	__u16 port;

	proto = bw_net_proto(ctx->protocol);
	if (!proto)
		return 1; /* decided when the socket was made (bw_sock_create) */
	q.cgroup = bw_current_cgroup();
	if (!bw_may_govern(q.cgroup))
		return 1;

	port = bpf_ntohs((__u16)ctx->user_port);
	/* The address in IPv6 form, IPv4 mapped: little-endian words of the bytes. */
	if (v6) {
		q.addr[0] = ctx->user_ip6[0] | (__u64)ctx->user_ip6[1] << 32;
		q.addr[1] = ctx->user_ip6[2] | (__u64)ctx->user_ip6[3] << 32;
	} else {
		q.addr[0] = 0;
		q.addr[1] = bpf_htonl(0xffff) | (__u64)ctx->user_ip4 << 32;
	}
	evop = op == BW_NOP_BIND      ? BW_OP_BIND
	       : op == BW_NOP_SENDMSG ? BW_OP_SENDMSG
				      : BW_OP_CONNECT;
	q.tag = BW_NC_TAG(port, op == BW_NOP_BIND ? BW_NOP_BIND : BW_NOP_CONNECT, proto);
	if (op == BW_NOP_BIND)
		return bw_bind_query(&q, evop, proto, port, v6);
	return bw_net_query(&q, op, evop, proto, port, v6);
}

/* Thin entry points: one per hook and address family. */
#define BW_SOCK_ADDR_PROG(name, sec, op, v6)                                                       \
	SEC(sec)                                                                                   \
	int name(struct bpf_sock_addr *ctx)                                                        \
	{                                                                                          \
		return bw_net_check(ctx, op, v6);                                                  \
	}

BW_SOCK_ADDR_PROG(bw_connect4, "cgroup/connect4", BW_NOP_CONNECT, false)
BW_SOCK_ADDR_PROG(bw_connect6, "cgroup/connect6", BW_NOP_CONNECT, true)
BW_SOCK_ADDR_PROG(bw_sendmsg4, "cgroup/sendmsg4", BW_NOP_SENDMSG, false)
BW_SOCK_ADDR_PROG(bw_sendmsg6, "cgroup/sendmsg6", BW_NOP_SENDMSG, true)
BW_SOCK_ADDR_PROG(bw_bind4, "cgroup/bind4", BW_NOP_BIND, false)
BW_SOCK_ADDR_PROG(bw_bind6, "cgroup/bind6", BW_NOP_BIND, true)

/*
 * Raw IP sockets, and IP sockets of a protocol no address rule names (ICMP
 * echo "ping" sockets, SCTP, L2TP, ...): they reach peers that no connect or
 * sendmsg program decides (a ping socket's or an SCTP socket's sendto), so
 * they are decided here, whatever the peer, by `net raw` (any kernel:
 * inet_create runs this program, with the protocol resolved). Other families
 * are not inet sockets: the LSM program in sock.bpf.c decides those.
 */
SEC("cgroup/sock_create")
int bw_sock_create(struct bpf_sock *ctx)
{
	struct bw_net_obj obj = {};
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	__u8 verdict;
	__u64 cgid;

	if (ctx->type != SOCK_RAW && bw_net_proto(ctx->protocol))
		return 1;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 1;
	pol = bw_policy_of(cg);
	if (!pol)
		return 0;
	verdict = pol->net_raw ? pol->net_raw : pol->default_net;
	if (verdict != BW_V_DENY) {
		bw_opstat(cg->policy, BW_OP_SOCKET, cg->mode, 1);
		return 1;
	}
	obj.port = ctx->protocol;
	obj.family = ctx->family == AF_INET6 ? BW_FAM_IPV6 : BW_FAM_IPV4;
	obj.proto = ctx->type;
	return !bw_net_outcome(cgid, cg, pol, BW_OP_SOCKET, pol->net_raw ? pol->net_raw_rule : 0,
			       &obj)
		    .refuse;
}
