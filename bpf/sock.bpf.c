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
#include "record.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EPERM	  1
#define AF_PACKET 17

struct bw_sock_event {
	struct bw_event ev;
	struct bw_net_obj obj;
};

SEC("lsm/socket_create")
int BPF_PROG(bw_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct bw_sock_event *e;
	struct bw_counters *c;
	struct bw_cgroup *cg;
	struct bw_policy *pol;
	__u32 policy;
	__u64 cgid;
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
	if (evtype != BW_EV_LEARN && !bw_event_allowed(cgid, policy, pol->event_rate))
		return evtype == BW_EV_DENY ? -EPERM : 0;
	rb = bpf_map_lookup_elem(&bw_rbufs, &policy);
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		if (c)
			__sync_fetch_and_add(&c->lost, 1);
		return evtype == BW_EV_DENY ? -EPERM : 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	bw_event_head(&e->ev, cgid, policy, evtype, BW_OP_SOCKET,
		      evtype == BW_EV_DENY ? BW_V_DENY : BW_V_ALLOW,
		      pol->net_raw ? pol->net_raw_rule : 0);
	e->ev.path_len = sizeof(e->obj);
	e->obj.family = AF_PACKET;
	e->obj.proto = type;
	e->obj.port = protocol;
	bpf_ringbuf_submit(e, 0);
	return evtype == BW_EV_DENY ? -EPERM : 0;
}

/*
 * unix sockets: connect (stream and seqpacket) and every datagram sent are
 * decided on the peer socket really reached, by its name: the path of its
 * socket file as the connecting process sees it, or "@" and its abstract
 * name. bind is decided by the name asked for; a relative path is matched as
 * written, so it never meets a rule (rule paths are absolute).
 */
#include "path.bpf.h"

#define AF_UNIX 1

/* unix names already learned, per policy and learn session. */
struct bw_unix_learned_key {
	struct bw_unix_key name;
	__u32 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bw_unix_learned_key);
	__type(value, __u8);
} bw_unix_learned SEC(".maps");

struct bw_unix_scratch {
	struct bw_unix_key key;
	__u32 gen; /* with key: a struct bw_unix_learned_key */
	struct bw_sock_event_unix {
		struct bw_event ev;
		char name[BW_UNIX_NAME];
	} out;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_unix_scratch);
} bw_unix_scratch SEC(".maps");

static __always_inline int bw_unix_decide(struct bw_unix_scratch *u, __u64 cgid,
					  struct bw_cgroup *cg, __u8 op, __u8 evop, __u32 len)
{
	struct bw_unix_value *v;
	struct bw_counters *c;
	struct bw_policy *pol;
	__u32 policy = cg->policy;
	__u16 rule = 0;
	__u8 verdict, evtype;
	void *rb;

	pol = bpf_map_lookup_elem(&bw_policies, &policy);
	if (!pol)
		return -EPERM;
	u->key.policy = policy;
	u->key.op = op;
	v = bpf_map_lookup_elem(&bw_unix_rules, &u->key);
	verdict = v ? v->verdict : pol->default_net;
	if (v)
		rule = v->rule;
	if (verdict != BW_V_DENY)
		return 0;
	c = bw_counters_of(policy);
	evtype = cg->mode == BW_MODE_AUDIT ? BW_EV_AUDIT : BW_EV_DENY;
	if (cg->mode == BW_MODE_LEARN && !rule) {
		__u8 one = 1;

		evtype = BW_EV_LEARN;
		u->gen = pol->learn_gen;
		if (bpf_map_update_elem(&bw_unix_learned, &u->key, &one, BPF_NOEXIST))
			return 0;
	} else {
		if (c)
			__sync_fetch_and_add(&c->denied, 1);
		if (!bw_event_allowed(cgid, policy, pol->event_rate))
			return evtype == BW_EV_DENY ? -EPERM : 0;
	}
	bw_event_head(&u->out.ev, cgid, policy, evtype, evop,
		      evtype == BW_EV_DENY ? BW_V_DENY : BW_V_ALLOW, rule);
	u->out.ev.flags = BW_EVF_UNIX;
	len &= 127;
	if (len > BW_UNIX_NAME)
		len = BW_UNIX_NAME;
	u->out.ev.path_len = len;
	__builtin_memcpy(u->out.name, u->key.name, sizeof(u->out.name));
	rb = bpf_map_lookup_elem(&bw_rbufs, &policy);
	/* The whole record: path_len says how much of the name is used. */
	if (!rb || bpf_ringbuf_output(rb, &u->out, sizeof(u->out), 0)) {
		if (c)
			__sync_fetch_and_add(&c->lost, 1);
	}
	return evtype == BW_EV_DENY ? -EPERM : 0;
}

/* The peer's name into u->key.name ("@" + abstract name, or its socket file's path). */
static __always_inline int bw_unix_peer_name(struct bw_unix_scratch *u, struct sock *other,
					     __u32 *len)
{
	struct unix_sock *peer = (struct unix_sock *)other;
	struct unix_address *addr = BPF_CORE_READ(peer, addr);
	struct dentry *dentry = BPF_CORE_READ(peer, path.dentry);
	__u32 zero = 0, flags = 0, n;
	struct bw_scratch *s;
	int alen;

	__builtin_memset(u->key.name, 0, sizeof(u->key.name));
	if (!addr)
		return -1; /* unnamed: a socketpair or an unbound socket, nothing to name */
	if (dentry) {
		s = bpf_map_lookup_elem(&bw_scratch, &zero);
		if (!s)
			return -1;
		n = bw_path_build(s, BPF_CORE_READ(peer, path.mnt), dentry, &flags);
		if (flags & (BW_EVF_PATH_TOO_LONG | BW_EVF_UNREACHABLE) || n >= BW_UNIX_NAME) {
			/* A name no rule can spell: decided by the default. */
			bpf_probe_read_kernel(u->key.name, BW_UNIX_NAME - 1, s->key.path);
			*len = BW_UNIX_NAME - 1;
			return 0;
		}
		bpf_probe_read_kernel(u->key.name, n & 127, s->key.path);
		*len = n;
		return 0;
	}
	/* Abstract: sun_path starts with a NUL, and the name runs to addr->len. */
	alen = BPF_CORE_READ(addr, len) - 2 /* sun_family */ - 1 /* the leading NUL */;
	if (alen <= 0)
		return -1;
	if (alen > BW_UNIX_NAME - 1)
		alen = BW_UNIX_NAME - 1;
	u->key.name[0] = '@';
	bpf_probe_read_kernel(&u->key.name[1], alen & 127, (char *)addr->name[0].sun_path + 1);
	*len = alen + 1;
	return 0;
}

static __always_inline int bw_unix_peer(struct sock *other, __u8 evop)
{
	struct bw_unix_scratch *u;
	struct bw_cgroup *cg;
	__u32 zero = 0, len = 0;
	__u64 cgid;

	cgid = bpf_get_current_cgroup_id();
	cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (!cg)
		return 0;
	u = bpf_map_lookup_elem(&bw_unix_scratch, &zero);
	if (!u)
		return -EPERM;
	if (bw_unix_peer_name(u, other, &len))
		return 0;
	return bw_unix_decide(u, cgid, cg, BW_NOP_CONNECT, evop, len);
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(bw_unix_connect, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
	if (ret)
		return ret;
	return bw_unix_peer(other, BW_OP_CONNECT);
}

SEC("lsm/unix_may_send")
int BPF_PROG(bw_unix_send, struct socket *sock, struct socket *other, int ret)
{
	if (ret)
		return ret;
	return bw_unix_peer(BPF_CORE_READ(other, sk), BW_OP_SENDMSG);
}

SEC("lsm/socket_bind")
int BPF_PROG(bw_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
	struct bw_unix_scratch *u;
	struct bw_cgroup *cg;
	__u32 zero = 0, len;
	__u64 cgid, n;

	if (ret)
		return ret;
	if (BPF_CORE_READ(address, sa_family) != AF_UNIX || addrlen <= 2)
		return 0;
	cgid = bpf_get_current_cgroup_id();
	cg = bpf_map_lookup_elem(&bw_cgroups, &cgid);
	if (!cg)
		return 0;
	u = bpf_map_lookup_elem(&bw_unix_scratch, &zero);
	if (!u)
		return -EPERM;
	__builtin_memset(u->key.name, 0, sizeof(u->key.name));
	n = (__u64)addrlen - 2;
	if (n > BW_UNIX_NAME - 1)
		n = BW_UNIX_NAME - 1;
	barrier_var(n);
	bpf_probe_read_kernel(u->key.name, n, (char *)address + 2);
	if (u->key.name[0] == '\0') {
		/* abstract: "@" and the name after the leading NUL */
		u->key.name[0] = '@';
		len = n;
	} else {
		len = bpf_probe_read_kernel_str(u->key.name, BW_UNIX_NAME, (char *)address + 2);
		len = len > 0 ? len - 1 : 0;
	}
	return bw_unix_decide(u, cgid, cg, BW_NOP_BIND, BW_OP_BIND, len);
}
