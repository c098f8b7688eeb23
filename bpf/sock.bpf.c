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

SEC("lsm/socket_bind")
int BPF_PROG(bw_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	if (ret)
		return ret;
	if (BPF_CORE_READ(address, sa_family) != AF_UNIX || addrlen <= 2)
		return 0;
	return bw_unix_check_bind(NULL, NULL, address, addrlen);
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
 * UDP-Lite's connect, which no cgroup program sees (its protocol has no
 * pre_connect hook), decided by the udp rules as the cgroup programs decide
 * UDP's; its unconnected datagrams pass the cgroup sendmsg programs.
 */
SEC("lsm/socket_connect")
int BPF_PROG(bw_udplite_conn, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	struct sock *sk;
	struct bw_net_obj obj = {};
	struct bw_net_key k = {};
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	__u32 *a = (__u32 *)k.addr;
	__u16 port, rule, family;
	void *rules;
	__u64 cgid;
	bool host;

	if (ret)
		return ret;
	/* Plain loads through the hook's typed pointer: every connect comes here. */
	sk = sock->sk;
	if (!sk || sk->sk_protocol != IPPROTO_UDPLITE)
		return 0;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	pol = bw_policy_of(cg);
	rules = bw_trie_of(&bw_net_rules, cg->policy);
	if (!pol || !rules)
		return -EPERM;
	family = BPF_CORE_READ(address, sa_family);
	if (family == AF_INET && addrlen >= (int)sizeof(struct sockaddr_in)) {
		struct sockaddr_in *sin = (void *)address;

		a[2] = bpf_htonl(0xffff);
		a[3] = BPF_CORE_READ(sin, sin_addr.s_addr);
		port = BPF_CORE_READ(sin, sin_port);
	} else if (family == AF_INET6 && addrlen >= (int)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 *sin6 = (void *)address;

		bpf_probe_read_kernel(a, 16, &sin6->sin6_addr);
		port = BPF_CORE_READ(sin6, sin6_port);
	} else {
		return 0; /* AF_UNSPEC: a disconnect */
	}
	port = bpf_ntohs(port);
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

/*
 * A connected UDP socket's datagrams name no destination, so no cgroup
 * program sees them (sendmsg4/6 run for unconnected ones only), and the
 * verdict of its connect() would hold for as long as the socket lives:
 * across a swap to a profile that denies its peer (`attach --replace`, the
 * daemon's update), or for a socket connected before its cgroup was
 * governed. Each such datagram is decided here by the socket's peer, as an
 * unconnected one to the same endpoint would be, through this object's
 * network verdict cache, which a policy change invalidates (a repeat is one
 * table lookup). TCP is not decided again: a connection, once made, lives
 * on, as under a firewall that tracks connections (docs/enforcement.md).
 */
static __always_inline int bw_udp_peer_check(struct sock *sk)
{
	struct bw_nc_query q;
	__u16 protocol, port;
	bool v6;

	if (!sk)
		return 0;
	protocol = BPF_CORE_READ(sk, sk_protocol);
	if (protocol != IPPROTO_UDP && protocol != IPPROTO_UDPLITE)
		return 0;
	/* Not connected: the kernel refuses a datagram without an address. */
	if (BPF_CORE_READ(sk, __sk_common.skc_state) != TCP_ESTABLISHED)
		return 0;
	q.cgroup = bw_current_cgroup();
	if (!bw_may_govern(q.cgroup))
		return 0;
	port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	v6 = BPF_CORE_READ(sk, __sk_common.skc_family) == AF_INET6;
	if (v6) {
		BPF_CORE_READ_INTO(&q.addr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		q.addr[0] = 0;
		q.addr[1] = bpf_htonl(0xffff) | (__u64)BPF_CORE_READ(sk, __sk_common.skc_daddr)
						    << 32;
	}
	q.tag = BW_NC_TAG(port, BW_NOP_CONNECT, IPPROTO_UDP);
	return bw_net_query(&q, BW_NOP_SENDMSG, BW_OP_SENDMSG, IPPROTO_UDP, port, v6) ? 0 : -EPERM;
}

/*
 * sendmsg, sendto, sendmmsg, write and io_uring sends without an address
 * (or, on an IPv6 socket, with an AF_UNSPEC one): to the connected peer.
 * Those with an address were decided by the cgroup sendmsg programs.
 */
SEC("lsm/socket_sendmsg")
int BPF_PROG(bw_udp_send, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	struct sockaddr *name;

	if (ret)
		return ret;
	name = msg->msg_name;
	if (name && BPF_CORE_READ(name, sa_family) != AF_UNSPEC)
		return 0;
	return bw_udp_peer_check(sock->sk);
}

/*
 * Kernels before 6.5 send spliced pages (splice(2), sendfile(2)) through
 * the protocol's sendpage, which UDP does without socket_sendmsg; both
 * calls ask file_permission first. Loaded only where proto_ops has a
 * sendpage (user/loader.c): on later kernels every read and write would
 * pay for nothing.
 */
SEC("lsm/file_permission")
int BPF_PROG(bw_udp_splice, struct file *file, int mask, int ret)
{
	if (ret)
		return ret;
	if (!(mask & MAY_WRITE) || (file->f_inode->i_mode & S_IFMT) != S_IFSOCK)
		return 0;
	return bw_udp_peer_check(BPF_CORE_READ((struct socket *)file->private_data, sk));
}
