// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sockets no address rule decides, on socket_create: packet sockets
 * (AF_PACKET) see and forge every frame of an interface, and vsock, TIPC,
 * RDS, SMC, XDP, CAN, Bluetooth and the other families carry data to peers
 * no rule can name. None of them is an inet socket, so no cgroup program
 * runs for them. Raw IP sockets and IP protocols without rules are decided
 * by the cgroup sock_create program in net.bpf.c on every kernel; this
 * program needs BPF LSM.
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
#include "netrules.bpf.h"
#include "netcache.bpf.h"
#include "tcpconn.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_KEY	   15
#define AF_NETLINK 16
#define AF_ALG	   38

/*
 * Families decided elsewhere (unix and IP by their rules) or that only talk
 * to the kernel (netlink, PF_KEY, the crypto API).
 */
static __always_inline bool bw_family_ruled(int family)
{
	/* One test of a mask: every socket() of any process comes here. */
	const __u64 ruled = 1ULL << AF_UNIX | 1ULL << AF_INET | 1ULL << AF_INET6 |
			    1ULL << AF_NETLINK | 1ULL << AF_KEY | 1ULL << AF_ALG;

	return (unsigned int)family < 64 && (ruled >> family & 1);
}

SEC("lsm/socket_create")
int BPF_PROG(bw_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct bw_net_obj obj = {};
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	__u64 cgid;
	__u8 verdict;

	if (ret)
		return ret;
	if (bw_family_ruled(family) || kern)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	if (!pol)
		return -EPERM;
	verdict = pol->net_raw ? pol->net_raw : pol->default_net;
	if (verdict != BW_V_DENY) {
		bw_opstat(cg->policy, BW_OP_SOCKET, cg->mode, 1);
		return 0;
	}
	if (family == AF_PACKET) {
		obj.family = BW_FAM_PACKET;
	} else {
		obj.family = BW_FAM_OTHER;
		obj.addr[0] = family;
	}
	obj.proto = type;
	obj.port = protocol;
	return bw_lsm_ret(
	    bw_net_outcome(cgid, cg, pol, BW_OP_SOCKET, pol->net_raw ? pol->net_raw_rule : 0, &obj),
	    -EPERM);
}

/*
 * The abstract name asked for in a bind(2) into u->name ("@" + the name);
 * -1 for a path, decided when its file is made (bw_unix_mknod).
 */
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
	if (u->name[0] != '\0')
		return -1;
	u->name[0] = '@';
	*len = n;
	return 0;
}

/* A connect or a datagram by a governed process, decided on the peer really reached. */
static __always_inline int bw_unix_check_peer(struct sock *peer, __u8 evop)
{
	struct bw_unix_key *u;
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	__u32 zero = 0;
	__u64 cgid;

	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	u = bpf_map_lookup_elem(&bw_unix_scratch, &zero);
	if (!u)
		return -EPERM;
	return bw_unix_decide_peer(u, cgid, cg, peer, evop);
}

/*
 * A bind by a governed process: of the socket file being made (a path:
 * dentry, decided by its name and by its place) or of the abstract name
 * asked for (address).
 */
static __always_inline int bw_unix_check_bind(struct vfsmount *mnt, struct dentry *dentry,
					      struct sockaddr *address, int addrlen)
{
	struct bw_unix_denial d = {};
	struct bw_unix_key *u;
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	__u32 zero = 0, len = 0;
	__u64 cgid;
	int err;

	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	u = bpf_map_lookup_elem(&bw_unix_scratch, &zero);
	pol = bw_policy_of(cg);
	if (!u || !pol)
		return -EPERM;
	if (dentry) {
		__builtin_memset(u->name, 0, sizeof(u->name));
		err = bw_unix_path_name(u, mnt, dentry, &len);
	} else {
		err = bw_unix_bind_name(u, address, addrlen, &len);
	}
	if (err)
		return 0;
	if (!bw_unix_denied(u, cg, pol, BW_NOP_BIND, len, false, &d) &&
	    !(dentry && bw_unix_place_denied(cg, dentry, &d))) {
		bw_opstat(cg->policy, BW_OP_BIND, cg->mode, 1);
		return 0;
	}
	return bw_unix_refuse(u, cgid, cg, pol, BW_OP_BIND, len, dentry, d.rule, d.by_inode);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(bw_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
	if (ret)
		return ret;
	return bw_unix_check_peer(other, BW_OP_CONNECT);
}

SEC("lsm/unix_may_send")
int BPF_PROG(bw_unix_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret)
		return ret;
	return bw_unix_check_peer(BPF_CORE_READ(other, sk), BW_OP_SENDMSG);
}

/*
 * The IPv4 or IPv6 endpoint of a bind or connect into a (IPv6 form, an
 * IPv4 address mapped, network order) and *port (host order); false for
 * any other family or a short address, which the kernel refuses (or, for
 * a connect to AF_UNSPEC, takes as a disconnect).
 */
static __always_inline bool bw_sockaddr_endpoint(struct sockaddr *address, int addrlen, __u32 a[4],
						 __u16 *port)
{
	__u16 family = BPF_CORE_READ(address, sa_family);

	if (family == AF_INET && addrlen >= (int)sizeof(struct sockaddr_in)) {
		struct sockaddr_in *sin = (void *)address;

		a[0] = a[1] = 0;
		a[2] = bpf_htonl(0xffff);
		a[3] = BPF_CORE_READ(sin, sin_addr.s_addr);
		*port = bpf_ntohs(BPF_CORE_READ(sin, sin_port));
		return true;
	}
	if (family == AF_INET6 && addrlen >= (int)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 *sin6 = (void *)address;

		bpf_probe_read_kernel(a, 16, &sin6->sin6_addr);
		*port = bpf_ntohs(BPF_CORE_READ(sin6, sin6_port));
		return true;
	}
	return false;
}

/*
 * The endpoint a governed process binds a TCP or UDP socket to, kept for
 * accept and receive (bpf/tcpconn.bpf.h): in IPv6 form, an IPv4 one mapped,
 * as the cgroup bind programs decide it.
 */
static __always_inline void bw_sock_bound(struct sock *sk, struct sockaddr *address, int addrlen)
{
	struct bw_tcp_stamp *s;
	__u64 addr[2];
	__u16 port;

	if (!bw_sockaddr_endpoint(address, addrlen, (__u32 *)addr, &port))
		return;
	if (!bw_may_govern(bw_current_cgroup()))
		return;
	s = bpf_sk_storage_get(&bw_binds, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (s)
		bw_tcp_stamp_set(s, 0, 0, addr, port);
}

SEC("lsm/socket_bind")
int BPF_PROG(bw_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	struct sock *sk;

	if (ret)
		return ret;
	sk = sock->sk;
	if (sk && (bw_tcp_sock(sk->sk_protocol) || bw_udp_sock(sk->sk_protocol))) {
		bw_sock_bound(sk, address, addrlen);
		return 0;
	}
	if (BPF_CORE_READ(address, sa_family) != AF_UNIX || addrlen <= 2)
		return 0;
	return bw_unix_check_bind(NULL, NULL, address, addrlen);
}

/*
 * A socket a governed process bound (or listened on unbound): its bind is
 * decided again once the policy state changed, as the bind programs
 * decided it (bw_bind_query: a bind to [::] also as 0.0.0.0), by proto's
 * rules. Refused: EPERM, an event of op evop naming the endpoint.
 */
static __always_inline int bw_bound_check(struct sock *sk, __u8 evop, __u8 proto)
{
	struct bw_tcp_stamp *s;
	struct bw_nc_query q;
	__u64 addr[2];
	__u16 port;
	bool v6;

	/*
	 * A socket with no storage at all was bound by no governed process:
	 * one load, before the cgroup's helper call, on every receive.
	 */
	if (!sk->sk_bpf_storage)
		return 0;
	q.cgroup = bw_current_cgroup();
	if (!bw_may_govern(q.cgroup))
		return 0;
	s = bpf_sk_storage_get(&bw_binds, sk, 0, 0);
	if (!s)
		return 0;
	/* Written once, at bind: a stamp's write writes the same endpoint. */
	addr[0] = BW_TCP_ONCE(s->addr[0]);
	addr[1] = BW_TCP_ONCE(s->addr[1]);
	port = BW_TCP_ONCE(s->port);
	if (bw_tcp_stamp_holds(s, q.cgroup, bw_dc_gen_now(), addr, port))
		return 0;
	q.addr[0] = addr[0];
	q.addr[1] = addr[1];
	v6 = sk->__sk_common.skc_family == AF_INET6;
	q.tag = BW_NC_TAG(port, BW_NOP_BIND, proto);
	if (!bw_bind_query(&q, evop, proto, port, v6))
		return -EPERM;
	bw_tcp_stamp_set(s, q.cgroup, q.gen, addr, port);
	return 0;
}

/*
 * accept(2), accept4(2) and io_uring's accept on a listener a governed
 * process bound: its bind decided again (bw_bound_check), refused with
 * EPERM and an event of op accept; the connection stays in the queue.
 */
SEC("lsm/socket_accept")
int BPF_PROG(bw_tcp_accept, struct socket *sock, struct socket *newsock, int ret)
{
	struct sock *sk;

	if (ret)
		return ret;
	sk = sock->sk;
	if (!sk || !bw_tcp_sock(sk->sk_protocol))
		return 0;
	return bw_bound_check(sk, BW_OP_ACCEPT, IPPROTO_TCP);
}

/*
 * listen(2) (and io_uring's) of a TCP socket never bound: the kernel binds
 * it to the wildcard address at a port it picks, which no bind program
 * sees, so it would serve whatever the bind rules say. Decided here as
 * that bind (port 0, [::] also as 0.0.0.0), with an event of op bind if
 * refused (EPERM), and kept for accept like a bind(2)'s.
 */
SEC("lsm/socket_listen")
int BPF_PROG(bw_tcp_listen, struct socket *sock, int backlog, int ret)
{
	struct bw_tcp_stamp *s;
	struct bw_nc_query q;
	__u64 addr[2];
	struct sock *sk;
	bool v6;

	if (ret)
		return ret;
	sk = sock->sk;
	/* A bound socket has its port (skc_num); its bind(2) was decided. */
	if (!sk || !bw_tcp_sock(sk->sk_protocol) || sk->__sk_common.skc_num)
		return 0;
	q.cgroup = bw_current_cgroup();
	if (!bw_may_govern(q.cgroup))
		return 0;
	v6 = sk->__sk_common.skc_family == AF_INET6;
	addr[0] = 0;
	addr[1] = v6 ? 0 : bpf_htonl(0xffff);
	q.addr[0] = addr[0];
	q.addr[1] = addr[1];
	q.tag = BW_NC_TAG(0, BW_NOP_BIND, IPPROTO_TCP);
	if (!bw_bind_query(&q, BW_OP_BIND, IPPROTO_TCP, 0, v6))
		return -EPERM;
	s = bpf_sk_storage_get(&bw_binds, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (s)
		bw_tcp_stamp_set(s, q.cgroup, q.gen, addr, 0);
	return 0;
}

/*
 * bind(2) to a path makes the socket file here, after the kernel resolved
 * the name; mknod(2) of a socket inode is decided as a bind too.
 */
SEC("lsm/path_mknod")
int BPF_PROG(bw_unix_mknod, const struct path *dir, struct dentry *dentry, umode_t mode,
	     unsigned int dev, int ret)
{
	if (ret)
		return ret;
	if ((mode & S_IFMT) != S_IFSOCK)
		return 0;
	return bw_unix_check_bind(dir->mnt, dentry, NULL, 0);
}

/*
 * Every connect(2) of a socket (and io_uring's): a TCP or MPTCP one by a
 * governed process is marked (bpf/tcpconn.bpf.h) so that its sends and
 * receives decide the peer again after a policy change; the cgroup connect
 * programs decide the connect itself. UDP-Lite's connect, which no cgroup
 * program sees (its protocol has no pre_connect hook), is decided here by
 * the udp rules as the cgroup programs decide UDP's; its unconnected
 * datagrams pass the cgroup sendmsg programs.
 */
SEC("lsm/socket_connect")
int BPF_PROG(bw_sock_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	struct sock *sk;
	struct bw_net_obj obj = {};
	struct bw_net_key k = {};
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	__u32 *a = (__u32 *)k.addr;
	__u16 port, rule;
	void *rules;
	__u64 cgid;
	bool host;

	if (ret)
		return ret;
	/* Plain loads through the hook's typed pointer: every connect comes here. */
	sk = sock->sk;
	if (!sk)
		return 0;
	if (bw_tcp_sock(sk->sk_protocol)) {
		if (bw_may_govern(bw_current_cgroup()))
			bw_tcp_mark(sk);
		return 0;
	}
	if (sk->sk_protocol != IPPROTO_UDPLITE)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	rules = bw_trie_of(&bw_net_rules, cg->policy);
	if (!pol || !rules)
		return -EPERM;
	if (!bw_sockaddr_endpoint(address, addrlen, a, &port))
		return 0;
	if (bw_net_verdict(pol, cg->policy, rules, &k, BW_NOP_CONNECT, IPPROTO_UDP, port, &rule,
			   &host) != BW_V_DENY) {
		bw_opstat(cg->policy, BW_OP_CONNECT, cg->mode, 1);
		return 0;
	}
	__builtin_memcpy(obj.addr, k.addr, sizeof(obj.addr));
	obj.port = port;
	obj.family =
	    BPF_CORE_READ(sock, sk, __sk_common.skc_family) == AF_INET6 ? BW_FAM_IPV6 : BW_FAM_IPV4;
	obj.proto = IPPROTO_UDP;
	return bw_lsm_ret(bw_net_outcome(cgid, cg, pol, BW_OP_CONNECT, rule, &obj), -EPERM);
}

/* sk's peer into q->addr (IPv6 form, IPv4 mapped); its port, 0 if it has none. */
static __always_inline __u16 bw_peer_of(struct sock *sk, struct bw_nc_query *q, bool *v6)
{
	/* Plain loads through the hooks' typed pointer: every send and receive may come here. */
	__u16 port = bpf_ntohs(sk->__sk_common.skc_dport);

	*v6 = sk->__sk_common.skc_family == AF_INET6;
	if (*v6) {
		BPF_CORE_READ_INTO(&q->addr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		q->addr[0] = 0;
		q->addr[1] = bpf_htonl(0xffff) | (__u64)sk->__sk_common.skc_daddr << 32;
	}
	return port;
}

/*
 * A connected UDP socket's datagrams name no destination, so no cgroup
 * program sees them (sendmsg4/6 run for unconnected ones only), and the
 * verdict of its connect() would hold for as long as the socket lives:
 * across a swap to a profile that denies its peer (`attach --replace`, the
 * daemon's update), or for a socket connected before its cgroup was
 * governed. Each such datagram is decided here by the socket's peer, as an
 * unconnected one to the same endpoint would be, through this object's
 * network verdict cache, which a policy change invalidates (a repeat is one
 * table lookup); so is each receive, which only the peer can have sent
 * (evop: sendmsg or recvmsg).
 */
static __always_inline int bw_udp_peer_check(struct sock *sk, __u8 evop)
{
	struct bw_nc_query q;
	__u16 protocol, port;
	bool v6;

	protocol = sk->sk_protocol;
	if (protocol != IPPROTO_UDP && protocol != IPPROTO_UDPLITE)
		return 0;
	/* Not connected: the kernel refuses a datagram without an address. */
	if (sk->__sk_common.skc_state != TCP_ESTABLISHED)
		return 0;
	q.cgroup = bw_current_cgroup();
	if (!bw_may_govern(q.cgroup))
		return 0;
	port = bw_peer_of(sk, &q, &v6);
	q.tag = BW_NC_TAG(port, BW_NOP_CONNECT, IPPROTO_UDP);
	return bw_net_query(&q, BW_NOP_SENDMSG, evop, IPPROTO_UDP, port, v6) ? 0 : -EPERM;
}

/*
 * A TCP connection whose peer a governed process chose (bpf/tcpconn.bpf.h):
 * each send and receive by a governed process decides the peer as a
 * connect, unless its stamp says this cgroup had it allowed at this
 * generation (a repeat is a storage lookup and a compare; after a policy
 * change, one network verdict cache lookup). Refused: EPERM, an event (op
 * evop: sendmsg or recvmsg) naming the peer. A process outside every
 * sandbox pays the cgroup's bit test; other sockets of a governed one a
 * storage lookup that finds nothing.
 */
static __always_inline int bw_tcp_peer_check(struct sock *sk, __u8 evop)
{
	struct bw_tcp_stamp *s;
	struct bw_nc_query q;
	__u16 port;
	bool v6;

	/* The bit test first: a process outside every sandbox makes no helper call. */
	q.cgroup = bw_current_cgroup();
	if (!bw_may_govern(q.cgroup))
		return 0;
	s = bpf_sk_storage_get(&bw_tcp_conns, sk, 0, 0);
	if (!s)
		return 0;
	port = bw_peer_of(sk, &q, &v6);
	if (!port) /* not connected */
		return 0;
	if (bw_tcp_stamp_holds(s, q.cgroup, bw_dc_gen_now(), q.addr, port))
		return 0;
	q.tag = BW_NC_TAG(port, BW_NOP_CONNECT, IPPROTO_TCP);
	if (!bw_net_query(&q, BW_NOP_CONNECT, evop, IPPROTO_TCP, port, v6))
		return -EPERM;
	bw_tcp_stamp_set(s, q.cgroup, q.gen, q.addr, port);
	return 0;
}

/*
 * sendmsg, sendto, sendmmsg, write and io_uring sends. UDP: those without
 * an address (or, on an IPv6 socket, with an AF_UNSPEC one), to the
 * connected peer; those with an address were decided by the cgroup sendmsg
 * programs. TCP: every send on a marked connection; a sendto with an
 * address on a socket not connected is TCP Fast Open's connect (the cgroup
 * connect programs decide it), whose socket is marked here (on a connected
 * one the address is ignored: an accepted connection stays unmarked).
 */
SEC("lsm/socket_sendmsg")
int BPF_PROG(bw_peer_send, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	struct sockaddr *name;
	struct sock *sk;

	if (ret)
		return ret;
	sk = sock->sk;
	if (!sk)
		return 0;
	name = msg->msg_name;
	if (bw_tcp_sock(sk->sk_protocol)) {
		if (name && sk->__sk_common.skc_state == TCP_CLOSE &&
		    bw_may_govern(bw_current_cgroup()))
			bw_tcp_mark(sk);
		return bw_tcp_peer_check(sk, BW_OP_SENDMSG);
	}
	/*
	 * The address's family is read last (a helper call): an unconnected
	 * socket's datagrams are the cgroup programs' whatever it says.
	 */
	if (sk->__sk_common.skc_state != TCP_ESTABLISHED ||
	    (name && BPF_CORE_READ(name, sa_family) != AF_UNSPEC))
		return 0;
	return bw_udp_peer_check(sk, BW_OP_SENDMSG);
}

/*
 * recvmsg, recvfrom, recvmmsg, read and io_uring receives on a marked TCP
 * connection, a connected UDP socket (its peer), or a UDP socket a governed
 * process bound (its bind: an event of op bind).
 */
SEC("lsm/socket_recvmsg")
int BPF_PROG(bw_peer_recv, struct socket *sock, struct msghdr *msg, int size, int flags, int ret)
{
	struct sock *sk;

	if (ret)
		return ret;
	sk = sock->sk;
	if (!sk)
		return 0;
	if (bw_tcp_sock(sk->sk_protocol))
		return bw_tcp_peer_check(sk, BW_OP_RECVMSG);
	if (!bw_udp_sock(sk->sk_protocol))
		return 0;
	ret = bw_udp_peer_check(sk, BW_OP_RECVMSG);
	if (ret)
		return ret;
	return bw_bound_check(sk, BW_OP_BIND, IPPROTO_UDP);
}

/* TCP_ZEROCOPY_RECEIVE maps received pages without recvmsg. */
SEC("lsm/socket_getsockopt")
int BPF_PROG(bw_peer_zcrx, struct socket *sock, int level, int optname, int ret)
{
	struct sock *sk;

	if (ret)
		return ret;
	if (level != SOL_TCP || optname != TCP_ZEROCOPY_RECEIVE)
		return 0;
	sk = sock->sk;
	if (!sk)
		return 0;
	return bw_tcp_peer_check(sk, BW_OP_RECVMSG);
}

/*
 * Kernels before 6.5 send spliced pages (splice(2), sendfile(2)) through
 * the protocol's sendpage, which UDP and TCP do without socket_sendmsg;
 * both calls ask file_permission first, as does every splice from a socket
 * (TCP's splice_read skips socket_recvmsg on every kernel). Loaded only
 * where proto_ops has a sendpage (user/loader.c): on later kernels every
 * read and write would pay for it, and a splice from a TCP connection is
 * not decided again after a policy change (docs/threat-model.md).
 */
SEC("lsm/file_permission")
int BPF_PROG(bw_peer_splice, struct file *file, int mask, int ret)
{
	struct socket *sock;
	struct sock *sk;

	if (ret)
		return ret;
	if (!(mask & (MAY_WRITE | MAY_READ)) || (file->f_inode->i_mode & S_IFMT) != S_IFSOCK)
		return 0;
	sock = bpf_sock_from_file(file);
	sk = sock ? sock->sk : NULL;
	if (!sk)
		return 0;
	if (bw_tcp_sock(sk->sk_protocol))
		return bw_tcp_peer_check(sk, mask & MAY_WRITE ? BW_OP_SENDMSG : BW_OP_RECVMSG);
	if (!(mask & MAY_WRITE))
		return 0;
	return bw_udp_peer_check(sk, BW_OP_SENDMSG);
}
