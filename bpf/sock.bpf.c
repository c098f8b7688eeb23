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
#include "event.bpf.h"
#include "kernel.bpf.h"
#include "path.bpf.h"
#include "unix.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/socket_create")
int BPF_PROG(bw_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct bw_net_obj obj = {};
	struct bw_cgroup *cg;
	struct bw_policy *pol;
	__u64 cgid;
	__u8 verdict;

	if (ret)
		return ret;
	if (family != AF_PACKET || kern)
		return 0;
	cg = bw_governing(&cgid);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	if (!pol)
		return -EPERM;
	verdict = pol->net_raw ? pol->net_raw : pol->default_net;
	if (verdict != BW_V_DENY)
		return 0;
	obj.family = BW_FAM_PACKET;
	obj.proto = type;
	obj.port = protocol;
	return bw_lsm_ret(
	    bw_net_outcome(cgid, cg, pol, BW_OP_SOCKET, pol->net_raw ? pol->net_raw_rule : 0, &obj),
	    -EPERM);
}

/* The name asked for in a bind(2) into u->name ("@" + abstract name, or the path). */
static __always_inline int bw_unix_bind_name(struct bw_unix_key *u, struct sockaddr *address,
					     int addrlen, __u32 *len)
{
	__u64 n;

	__builtin_memset(u->name, 0, sizeof(u->name));
	n = (__u64)addrlen - 2;
	if (n > BW_UNIX_NAME - 1)
		n = BW_UNIX_NAME - 1;
	barrier_var(n);
	bpf_probe_read_kernel(u->name, n, (char *)address + 2);
	if (u->name[0] == '\0') {
		/* abstract: "@" and the name after the leading NUL */
		u->name[0] = '@';
		*len = n;
	} else {
		n = bpf_probe_read_kernel_str(u->name, BW_UNIX_NAME, (char *)address + 2);
		*len = (long)n > 0 ? n - 1 : 0;
	}
	return 0;
}

/*
 * A unix socket operation by a governed process: on the peer really reached
 * (connect, send), or on the name asked for (bind: peer is NULL).
 */
static __always_inline int bw_unix_check(struct sock *peer, struct sockaddr *address, int addrlen,
					 __u8 evop)
{
	struct bw_unix_key *u;
	struct bw_cgroup *cg;
	__u32 zero = 0, len = 0;
	__u64 cgid;

	cg = bw_governing(&cgid);
	if (!cg)
		return 0;
	u = bpf_map_lookup_elem(&bw_unix_scratch, &zero);
	if (!u)
		return -EPERM;
	if (peer ? bw_unix_peer_name(u, peer, &len) : bw_unix_bind_name(u, address, addrlen, &len))
		return 0;
	return bw_unix_decide(u, cgid, cg, peer ? BW_NOP_CONNECT : BW_NOP_BIND, evop, len);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(bw_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
	if (ret)
		return ret;
	return bw_unix_check(other, NULL, 0, BW_OP_CONNECT);
}

SEC("lsm/unix_may_send")
int BPF_PROG(bw_unix_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret)
		return ret;
	return bw_unix_check(BPF_CORE_READ(other, sk), NULL, 0, BW_OP_SENDMSG);
}

SEC("lsm/socket_bind")
int BPF_PROG(bw_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	if (ret)
		return ret;
	if (BPF_CORE_READ(address, sa_family) != AF_UNIX || addrlen <= 2)
		return 0;
	return bw_unix_check(NULL, address, addrlen, BW_OP_BIND);
}
