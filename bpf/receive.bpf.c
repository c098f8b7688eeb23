// SPDX-License-Identifier: GPL-2.0-only
/*
 * Descriptors from outside: a descriptor a governed process receives
 * (SCM_RIGHTS over a unix socket, pidfd_getfd, binder) was opened by someone
 * else, under another policy or none, so file_receive decides it as if the
 * receiver had opened or connected it itself:
 *
 * - a file with a path: as an open with the descriptor's access (r for
 *   FMODE_READ, w for FMODE_WRITE) by the file rules, its pins, and the pin
 *   directory's self-protection (bpf/decide.bpf.h);
 * - a socket with a peer: by the peer, as a connect by the network rules
 *   (TCP, UDP and their variants by address and port, IPv4-mapped as IPv4,
 *   0.0.0.0 as the loopback it reaches, the host's addresses as loopback
 *   too; unix sockets by the peer's name, an unnamed peer (a socketpair) as
 *   a connect to it: not governed);
 * - a raw IP or packet socket, an IP protocol no rule names (ICMP echo,
 *   SCTP...), another family (vsock, XDP...): as when made, by `net raw`,
 *   else the net default;
 * - what no rule can name (a socket without a peer; netlink, PF_KEY and
 *   AF_ALG sockets; a pipe, a memfd, an eventfd, io_uring or any other
 *   object without a path): the category's default, so refused under
 *   `default deny`;
 * - a BPF map, program or link: refused whatever the profile allows
 *   (self-protection: bpf/guard.bpf.c refuses bpf(2) itself, but a map
 *   descriptor is also read through mmap and read(2)).
 *
 * A refused descriptor never reaches the receiver: recvmsg returns the data
 * with MSG_CTRUNC and no descriptor, pidfd_getfd fails with the errno.
 * Processes outside every governed cgroup cost one hash lookup; for
 * governed ones every internal failure fails closed.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "path.bpf.h"
#include "decide.bpf.h"
#include "event.bpf.h"
#include "guard.bpf.h"
#include "kernel.bpf.h"
#include "netrules.bpf.h"
#include "unix.bpf.h"
#include "cgtree.bpf.h"
#include "tcpconn.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define FMODE_PATH 0x4000
#define TCP_LISTEN 10
#define AF_KEY	   15
#define AF_NETLINK 16
#define AF_ALG	   38

#define ANON_INODE_FS_MAGIC 0x09041934
#define PIPEFS_MAGIC	    0x50495045

/* A file's event: the head, then the kernel's name of an object without a path. */
struct bw_pseudo_event {
	struct bw_event ev;
	char name[BW_COMM_LEN * 2];
};

/*
 * An object without a path (a pipe, a memfd, an anonymous inode): no rule
 * can name it, so the file default decides. The event's path is the
 * kernel's name of it ("[eventfd]", "memfd:NAME", "pipe:").
 */
static __always_inline int bw_receive_pseudo(__u64 cgid, const struct bw_cgroup *cg,
					     struct dentry *d, __u8 access)
{
	struct bw_learn_key id = {};
	struct bw_pseudo_event *e;
	struct bw_policy *pol;
	struct bw_outcome o;
	__u32 policy = cg->policy;
	long n;

	pol = bw_policy_of(cg);
	if (!pol)
		return -EACCES;
	if (pol->default_file != BW_V_DENY)
		return 0;
	id.a = BPF_CORE_READ(d, d_inode, i_ino);
	id.c = BPF_CORE_READ(d, d_sb, s_dev);
	o = bw_deny_outcome(cgid, cg, pol, 0, BW_OP_RECEIVE, access, BW_EVF_UNREACHABLE, &id);
	if (!o.type)
		return bw_lsm_ret(o, -EACCES);
	e = bw_event_reserve(policy, sizeof(*e));
	if (!e)
		return bw_lsm_ret(o, -EACCES);
	bw_event_head(&e->ev, cgid, policy, o, BW_OP_RECEIVE, access, 0, BW_EVF_UNREACHABLE);
	__builtin_memset(e->name, 0, sizeof(e->name));
	n = bpf_probe_read_kernel_str(e->name, sizeof(e->name), BPF_CORE_READ(d, d_name.name));
	if (n <= 1 && BPF_CORE_READ(d, d_sb, s_magic) == PIPEFS_MAGIC) {
		__builtin_memcpy(e->name, "pipe:", 6);
		n = 6;
	}
	e->ev.path_len = n > 1 ? n - 1 : 0;
	bpf_ringbuf_submit(e, 0);
	return bw_lsm_ret(o, -EACCES);
}

/*
 * A BPF object's descriptor ("bpf-map", "bpf-prog", "bpf_link", "bpf_iter",
 * "bpf-token" and "btf" are the names the kernel gives their anonymous
 * inodes): 0 if it is none, else the object filled in for the event.
 */
static __always_inline int bw_bpf_object(struct file *file, struct dentry *d,
					 struct bw_guard_obj *obj)
{
	char name[9] = {};
	void *priv = BPF_CORE_READ(file, private_data);

	if (BPF_CORE_READ(d, d_sb, s_magic) != ANON_INODE_FS_MAGIC)
		return 0;
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(d, d_name.name));
	if (!(name[0] == 'b' && ((name[1] == 'p' && name[2] == 'f') ||
				 (name[1] == 't' && name[2] == 'f' && !name[3]))))
		return 0;
	if (bw_bytes_eq(name, "bpf-map", 8)) {
		bw_bpf_map_obj(obj, priv);
	} else if (bw_bytes_eq(name, "bpf-prog", 9)) {
		bw_bpf_prog_obj(obj, priv);
	} else if (bw_bytes_eq(name, "bpf_link", 9)) {
		obj->kind = BW_GOBJ_BPF_LINK;
		BPF_CORE_READ_STR_INTO(&obj->name, (struct bpf_link *)priv, prog, aux, name);
	} else {
		obj->kind = BW_GOBJ_BPF_OTHER;
		__builtin_memcpy(obj->name, name, sizeof(name));
	}
	return 1;
}

/* A socket no rule names (family, type, protocol): the net default, or `net raw`'s verdict. */
static __always_inline int bw_receive_unnamed(__u64 cgid, const struct bw_cgroup *cg,
					      const struct bw_policy *pol, __u16 family, __u16 type,
					      __u16 protocol, bool raw)
{
	struct bw_net_obj obj = {};
	__u8 verdict = pol->default_net;
	__u16 rule = 0;

	if (raw && pol->net_raw) {
		verdict = pol->net_raw;
		rule = pol->net_raw_rule;
	}
	if (verdict != BW_V_DENY)
		return 0;
	obj.family = family == AF_INET	   ? BW_FAM_IPV4
		     : family == AF_INET6  ? BW_FAM_IPV6
		     : family == AF_PACKET ? BW_FAM_PACKET
		     : family == AF_UNIX   ? BW_FAM_UNIX
					   : BW_FAM_OTHER;
	if (obj.family == BW_FAM_OTHER)
		obj.addr[0] = family;
	obj.proto = type;
	obj.port = protocol;
	return bw_lsm_ret(bw_net_outcome(cgid, cg, pol, BW_OP_RECEIVE_SOCKET, rule, &obj), -EPERM);
}

/* An inet socket: by its peer as a connect, when it has one. */
static __always_inline int bw_receive_inet(__u64 cgid, const struct bw_cgroup *cg,
					   const struct bw_policy *pol, struct sock *sk,
					   __u16 family, __u16 type)
{
	struct bw_net_obj obj = {};
	struct bw_net_key k = {};
	__u32 *a = (__u32 *)k.addr;
	__u16 protocol = BPF_CORE_READ(sk, sk_protocol), port, rule;
	__u8 proto, verdict;
	void *rules;
	bool host;

	proto = bw_net_proto(protocol);
	if (type == SOCK_RAW || !proto)
		/* Decided when made, by `net raw` (bw_sock_create in net.bpf.c). */
		return bw_receive_unnamed(cgid, cg, pol, family, type, protocol, true);
	port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (!port || BPF_CORE_READ(sk, __sk_common.skc_state) == TCP_LISTEN)
		return bw_receive_unnamed(cgid, cg, pol, family, type, protocol, false);
	if (family == AF_INET6) {
		BPF_CORE_READ_INTO(&k.addr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		a[2] = bpf_htonl(0xffff);
		a[3] = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	}
	rules = bw_trie_of(&bw_net_rules, cg->policy);
	if (!rules)
		return -EPERM;
	verdict =
	    bw_net_verdict(pol, cg->policy, rules, &k, BW_NOP_CONNECT, proto, port, &rule, &host);
	if (verdict != BW_V_DENY) {
		/* Its sends and receives decide the peer again after a policy change. */
		if (proto == IPPROTO_TCP)
			bw_tcp_mark(sk);
		return 0;
	}
	__builtin_memcpy(obj.addr, k.addr, sizeof(obj.addr));
	obj.port = port;
	obj.family = family == AF_INET6 ? BW_FAM_IPV6 : BW_FAM_IPV4;
	obj.proto = proto;
	return bw_lsm_ret(bw_net_outcome(cgid, cg, pol, BW_OP_RECEIVE_NET, rule, &obj), -EPERM);
}

/* A unix socket: by its peer's name as a connect; an unnamed peer is not governed. */
static __always_inline int bw_receive_unix(__u64 cgid, const struct bw_cgroup *cg,
					   const struct bw_policy *pol, struct sock *sk, __u16 type)
{
	struct sock *peer = (struct sock *)BPF_CORE_READ((struct unix_sock *)sk, peer);
	struct bw_unix_key *u;
	__u32 zero = 0;

	if (!peer)
		return bw_receive_unnamed(cgid, cg, pol, AF_UNIX, type, 0, false);
	u = bpf_map_lookup_elem(&bw_unix_scratch, &zero);
	if (!u)
		return -EPERM;
	return bw_unix_decide_peer(u, cgid, cg, peer, BW_OP_RECEIVE_NET);
}

static __always_inline int bw_receive_socket(__u64 cgid, const struct bw_cgroup *cg,
					     struct file *file)
{
	/* Typed pointers: a TCP connection is marked in its socket storage (bw_receive_inet). */
	struct socket *sock = bpf_sock_from_file(file);
	struct sock *sk = sock ? sock->sk : NULL;
	__u16 family, type;
	struct bw_policy *pol;

	pol = bw_policy_of(cg);
	if (!pol || !sk)
		return -EPERM;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	type = BPF_CORE_READ(sock, type);
	if (family == AF_INET || family == AF_INET6)
		return bw_receive_inet(cgid, cg, pol, sk, family, type);
	if (family == AF_UNIX)
		return bw_receive_unix(cgid, cg, pol, sk, type);
	/* Netlink, PF_KEY and AF_ALG talk to the kernel: the default; the others as made. */
	return bw_receive_unnamed(cgid, cg, pol, family, type, BPF_CORE_READ(sk, sk_protocol),
				  family != AF_NETLINK && family != AF_KEY && family != AF_ALG);
}

SEC("lsm/file_receive")
int BPF_PROG(bw_file_receive, struct file *file, int ret)
{
	union bw_cgroup_copy cg_copy;
	struct bw_guard_obj obj = {};
	struct dentry *d;
	struct bw_cgroup *cg;
	unsigned int fmode;
	__u8 access = 0;
	__u64 cgid;

	if (ret)
		return ret;
	cg = bw_governing(&cgid, &cg_copy);
	if (!cg)
		return 0;
	fmode = file->f_mode;
	if (fmode & FMODE_PATH)
		return 0; /* O_PATH: nothing to read or write through it */
	if ((BPF_CORE_READ(file, f_inode, i_mode) & S_IFMT) == S_IFSOCK)
		return bw_receive_socket(cgid, cg, file);
	if (fmode & FMODE_READ)
		access |= BW_ACC_R;
	if (fmode & FMODE_WRITE)
		access |= BW_ACC_W;
	d = file->f_path.dentry;
	if (d->d_parent == d && d != file->f_path.mnt->mnt_root) {
		if (bw_bpf_object(file, d, &obj))
			return bw_guard_deny(cgid, cg, BW_RULE_SELF, BW_OP_RECEIVE_BPF, &obj, NULL,
					     -EPERM);
		return bw_receive_pseudo(cgid, cg, d, access);
	}
	if (!access)
		return 0;
	ret = bw_decide_file(cgid, cg, file, &bw_file_rules, BW_CAT_PIN_FILE, BW_OP_RECEIVE, access,
			     NULL);
	return ret ? ret : bw_cg_door(cgid, cg, file);
}
