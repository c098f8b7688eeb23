/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TCP connections whose peer a governed process chose, and the TCP
 * listeners and UDP sockets it bound. No cgroup program sees a connection
 * once it is made, a connection a listener accepts or a datagram a bound
 * socket receives, so the verdict of a connect or a bind would hold for as
 * long as the socket lives: across `attach --replace` or a daemon update to
 * a profile that denies it. MPTCP counts as TCP, UDP-Lite as UDP.
 *
 * Connections connected by a governed process (socket_connect, or a TCP
 * Fast Open sendto) or received by it with the peer allowed (file_receive)
 * are marked in bw_tcp_conns, whose stamp says the cgroup and the
 * generation (bw_dc_gen) the peer was last allowed at; a send or receive
 * by a governed process whose cgroup or generation differs decides the
 * peer again (bpf/sock.bpf.c, bw_tcp_peer_check). Accepted connections
 * carry nothing: their peer is a client, which no connect rule names.
 *
 * A socket bound by a governed process (socket_bind) keeps in bw_binds the
 * endpoint it asked for, as the cgroup bind programs decided it (port 0 for
 * one the kernel picks), and so does a TCP socket listen(2) binds (the
 * wildcard address, port 0: bw_tcp_listen). An accept(2) on a listener, or
 * a receive on a UDP socket, by a governed process decides that bind again
 * unless its stamp holds (bpf/sock.bpf.c, bw_bound_check).
 *
 * The stamp names the peer it was decided for, so a socket disconnected
 * (connect to AF_UNSPEC) and connected to another is decided again whatever
 * happened between. Two CPUs may decide the same socket at once: the stamp
 * has a sequence, odd while written, taken by one writer with a
 * compare-and-swap (a writer that finds it taken writes nothing) and read
 * before and after the rest, so that a stamp read is one decision's, never
 * two halves (the network verdict cache's protocol, bpf/netcache.bpf.h).
 */
#ifndef BW_TCPCONN_BPF_H
#define BW_TCPCONN_BPF_H

#include "bpfwarden.h"

struct bw_tcp_stamp {
	__u64 seq;     /* odd while written */
	__u64 cgroup;  /* 0: not decided since it was marked */
	__u64 gen;     /* bw_dc_gen, read before the verdict */
	__u64 addr[2]; /* the peer, or the bound endpoint: IPv6 form, as struct bw_nc_query's */
	__u64 port;
};
_Static_assert(sizeof(struct bw_tcp_stamp) == 48, "bw_tcp_stamp size");

/* Pinned, so that `upgrade` keeps the marks of the connections made before it. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_tcp_stamp);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_tcp_conns SEC(".maps");

/* Bound sockets: the stamp's addr and port are the endpoint bind(2) asked for. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bw_tcp_stamp);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_binds SEC(".maps");

#define BW_TCP_ONCE(x) (*(volatile typeof(x) *)&(x))

static __always_inline bool bw_tcp_sock(__u16 protocol)
{
	return protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP;
}

static __always_inline bool bw_udp_sock(__u16 protocol)
{
	return protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE;
}

/* Stamp s: peer (addr, port) allowed for cgroup at gen, unless another CPU is writing it. */
static __always_inline void bw_tcp_stamp_set(struct bw_tcp_stamp *s, __u64 cgroup, __u64 gen,
					     const __u64 addr[2], __u16 port)
{
	__u64 seq = BW_TCP_ONCE(s->seq);

	if ((seq & 1) || __sync_val_compare_and_swap(&s->seq, seq, seq + 1) != seq)
		return;
	BW_TCP_ONCE(s->cgroup) = cgroup;
	BW_TCP_ONCE(s->gen) = gen;
	BW_TCP_ONCE(s->addr[0]) = addr[0];
	BW_TCP_ONCE(s->addr[1]) = addr[1];
	BW_TCP_ONCE(s->port) = port;
	BW_TCP_ONCE(s->seq) = seq + 2;
}

/* Does s say that peer (addr, port) was allowed for cgroup at gen? */
static __always_inline bool bw_tcp_stamp_holds(struct bw_tcp_stamp *s, __u64 cgroup, __u64 gen,
					       const __u64 addr[2], __u16 port)
{
	__u64 seq = BW_TCP_ONCE(s->seq);

	if ((seq & 1) || BW_TCP_ONCE(s->cgroup) != cgroup || BW_TCP_ONCE(s->gen) != gen ||
	    BW_TCP_ONCE(s->addr[1]) != addr[1] || BW_TCP_ONCE(s->addr[0]) != addr[0] ||
	    BW_TCP_ONCE(s->port) != port)
		return false;
	return BW_TCP_ONCE(s->seq) == seq;
}

/* Mark sk as a connection whose peer a governed process chose (a stamp that holds for none). */
static __always_inline void bw_tcp_mark(struct sock *sk)
{
	bpf_sk_storage_get(&bw_tcp_conns, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
}

#endif /* BW_TCPCONN_BPF_H */
