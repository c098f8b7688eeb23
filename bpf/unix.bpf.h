/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unix socket rules, shared by the unix hooks (bpf/sock.bpf.c) and the
 * decision on a socket received from another process (bpf/receive.bpf.c):
 * a socket's name as rules spell it, and the decision on it.
 */
#ifndef BW_UNIX_BPF_H
#define BW_UNIX_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "event.bpf.h"
#include "kernel.bpf.h"
#include "path.bpf.h"
#include "pins.bpf.h"
#include "unixplace.bpf.h"

/*
 * unix sockets: connect (stream and seqpacket) and every datagram sent are
 * decided on the peer socket really reached, by its name: the path of its
 * socket file as the connecting process sees it, or "@" and its abstract
 * name. bind to an abstract name is decided by the name asked for; bind to
 * a path when the kernel makes its socket file (path_mknod), by the path of
 * that file, after the kernel resolved the name: a relative name, "//",
 * "/./", ".." and symlinked directories all meet the rule of the file made.
 */
struct bw_unix_event {
	struct bw_event ev;
	char name[BW_UNIX_NAME];
};

/*
 * The name is built in a bw_unix_key with room after it: lengths are
 * clamped to the name, and the verifier, which cannot follow the clamp
 * through the compiler's code, is shown a mask (after a barrier, so that the
 * compiler keeps it); a masked read must stay inside the map value.
 */
#define BW_UNIX_MASK 127

struct bw_unix_scratch {
	struct bw_unix_key key;
	char slack[BW_UNIX_MASK + 1 - BW_UNIX_NAME + 1];
	struct bw_unix_key sub; /* a subtree key being looked up (bw_unix_subtree) */
	char sub_slack[BW_UNIX_MASK + 1 - BW_UNIX_NAME + 1];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_unix_scratch);
} bw_unix_scratch SEC(".maps");

/* A name's learn identity: two FNV-1a hashes of its bytes (different bases), and its length. */
static __always_inline void bw_unix_id(struct bw_learn_key *id, const char *name, __u32 len)
{
	__u64 h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
	__u32 i;

	for (i = 0; i < BW_UNIX_NAME; i++) {
		if (i >= len)
			break;
		h1 = (h1 ^ (__u8)name[i]) * 0x100000001b3ULL;
		h2 = (h2 ^ (__u8)name[i]) * 0x100000001b3ULL;
	}
	id->a = h1;
	id->b = h2;
	id->c = len;
}

/*
 * A refusal's event naming the socket file (dentry) also as the agent sees
 * it, when the process's view is not the host's: the head and the name as
 * the process spells it, then the real name (bw_real_name_add). 0: not
 * sent, the caller sends the plain event.
 */
static __always_inline int bw_unix_event_real(struct bw_outcome o, __u64 cgid, __u32 policy,
					      __u8 evop, __u16 rule, const struct bw_unix_key *u,
					      __u32 len, struct dentry *dentry, __u8 flags)
{
	struct bw_scratch *s;
	__u32 zero = 0, real;

	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (!s)
		return 0;
	barrier_var(len);
	len &= BW_UNIX_MASK;
	bpf_probe_read_kernel(s->evpath, len, u->name);
	real = bw_real_name_add(s, dentry, len);
	if (!real)
		return 0;
	bw_event_head(&s->ev, cgid, policy, o, evop, 0, rule, flags | BW_EVF_REAL);
	s->ev.path_len = len;
	bw_event_send(policy, &s->ev, sizeof(s->ev) + ((len + real) & (4 * BW_PATH_BUF - 1)));
	return 1;
}

/*
 * A refusal of the socket named in u (len bytes) by rule, or its record in
 * audit and learn modes; dentry: the socket file, if any, for the event.
 * by_inode: the rule was met by the socket file's identity (its pin or its
 * place), not by its name.
 */
static __always_inline int bw_unix_refuse(struct bw_unix_key *u, __u64 cgid,
					  const struct bw_cgroup *cg, const struct bw_policy *pol,
					  __u8 evop, __u32 len, struct dentry *dentry, __u16 rule,
					  bool by_inode)
{
	__u8 flags = BW_EVF_UNIX | (by_inode ? BW_EVF_INODE_PIN : 0);
	struct bw_learn_key id = {};
	struct bw_unix_event *e;
	struct bw_outcome o;
	__u32 policy = cg->policy;

	if (len > BW_UNIX_NAME)
		len = BW_UNIX_NAME;
	bw_unix_id(&id, u->name, len);
	o = bw_deny_outcome(cgid, cg, pol, rule, evop, 0, flags, &id);
	if (!o.type)
		return bw_lsm_ret(o, -EPERM);
	if (dentry && bw_unix_event_real(o, cgid, policy, evop, rule, u, len, dentry, flags))
		return bw_lsm_ret(o, -EPERM);
	e = bw_event_reserve(policy, sizeof(*e));
	if (!e)
		return bw_lsm_ret(o, -EPERM);
	bw_event_head(&e->ev, cgid, policy, o, evop, 0, rule, flags);
	/* The whole name field: path_len says how much of it is used. */
	e->ev.path_len = len;
	__builtin_memcpy(e->name, u->name, sizeof(e->name));
	bpf_ringbuf_submit(e, 0);
	return bw_lsm_ret(o, -EPERM);
}

struct bw_unix_walk {
	__u32 len;    /* of the name in the scratch key */
	__u32 policy; /* the key's policy and op */
	__u8 op;
	__u8 found;
	struct bw_unix_value v;
};

/* One byte of the name, from its end: at a '/', the subtree key of that directory. */
static long bw_unix_subtree_step(__u32 i, struct bw_unix_walk *w)
{
	struct bw_unix_scratch *s;
	struct bw_unix_value *v;
	__u32 zero = 0, at;

	if (i >= w->len)
		return 1;
	at = w->len - 1 - i;
	/* Room for "**" and the terminator every key has (the compiler's snprintf). */
	if (at + 3 >= BW_UNIX_NAME)
		return 0;
	s = bpf_map_lookup_elem(&bw_unix_scratch, &zero);
	if (!s)
		return 1;
	if (s->key.name[at & BW_UNIX_MASK] != '/')
		return 0;
	__builtin_memset(s->sub.name, 0, sizeof(s->sub.name));
	barrier_var(at);
	bpf_probe_read_kernel(s->sub.name, (at + 1) & BW_UNIX_MASK, s->key.name);
	s->sub.name[(at + 1) & BW_UNIX_MASK] = '*';
	s->sub.name[(at + 2) & BW_UNIX_MASK] = '*';
	s->sub.policy = w->policy;
	s->sub.op = w->op;
	__builtin_memset(s->sub.pad, 0, sizeof(s->sub.pad));
	v = bpf_map_lookup_elem(&bw_unix_rules, &s->sub);
	if (!v)
		return 0;
	w->v = *v;
	w->found = 1;
	return 1;
}

/*
 * A path no exact rule names: the rule of the nearest directory above it
 * with a subtree rule, if any. u is the scratch key (bw_unix_scratch).
 */
static __always_inline bool bw_unix_subtree(const struct bw_unix_key *u, __u32 len,
					    struct bw_unix_value *out)
{
	struct bw_unix_walk w = {.policy = u->policy, .op = u->op};

	if (u->name[0] != '/')
		return false;
	w.len = len < BW_UNIX_NAME ? len : BW_UNIX_NAME;
	bpf_loop(BW_UNIX_NAME, bw_unix_subtree_step, &w, 0);
	*out = w.v;
	return w.found;
}

/*
 * What refuses a unix socket operation: the deny rule met, and whether the
 * socket file's identity met it (its pin or its place) rather than a name.
 * Each check only fills this; the hook refuses once, at its end, so that
 * the refusal and its event (bw_unix_refuse) are one copy per program for
 * the verifier, not one per check.
 */
struct bw_unix_denial {
	__u16 rule;
	bool by_inode;
};

/*
 * Is the name in u (len bytes) denied for op, by its exact rule, by the
 * subtree rule of the nearest directory above it, or by the default?
 * only_denials: the name is one the object had, not the one it has: only a
 * rule that denies it counts, never the default.
 */
static __always_inline bool bw_unix_denied(struct bw_unix_key *u, const struct bw_cgroup *cg,
					   const struct bw_policy *pol, __u8 op, __u32 len,
					   bool only_denials, struct bw_unix_denial *d)
{
	struct bw_unix_value *v, sub;

	u->policy = cg->policy;
	u->op = op;
	v = bpf_map_lookup_elem(&bw_unix_rules, u);
	if (!v && (pol->unix_subtree & (1 << op)) && bw_unix_subtree(u, len, &sub))
		v = &sub;
	if (v) {
		d->rule = v->rule;
		return v->verdict == BW_V_DENY;
	}
	d->rule = 0;
	return !only_denials && pol->default_net == BW_V_DENY;
}

/*
 * The socket file itself: pinned by a `deny net connect unix` rule
 * (BW_CAT_PIN_UNIX), it is refused under whatever name it has now, one a
 * rename of it or of a directory above gave it, even when it was bound by a
 * relative name.
 */
static __always_inline bool bw_unix_pin_denied(const struct bw_cgroup *cg, struct dentry *dentry,
					       struct bw_unix_denial *d)
{
	struct inode *inode = BPF_CORE_READ(dentry, d_inode);
	struct bw_inode_key k = {};
	struct bw_inode_pin *pin;

	if (!inode)
		return false;
	k.ino = BPF_CORE_READ(inode, i_ino);
	if (!bw_maybe_pinned(k.ino))
		return false;
	k.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.policy = cg->policy;
	k.cat = BW_CAT_PIN_UNIX;
	pin = bpf_map_lookup_elem(&bw_inodes, &k);
	if (!pin || pin->self.verdict_r != BW_V_DENY)
		return false;
	d->rule = pin->self.rule_r;
	d->by_inode = true;
	return true;
}

/*
 * A bind to a path, by the place of the socket file being made: its
 * directory's identity and its name (bpf/unixplace.bpf.h), which a chroot
 * or a bind mount of the directory does not change.
 */
static __always_inline bool bw_unix_place_denied(const struct bw_cgroup *cg, struct dentry *dentry,
						 struct bw_unix_denial *d)
{
	struct bw_unix_place_scratch *ps;
	struct bw_unix_value *v;
	__u32 zero = 0;

	ps = bpf_map_lookup_elem(&bw_unix_place_scratch, &zero);
	if (!ps || bw_unix_place_of(&ps->key, dentry))
		return false;
	ps->key.policy = cg->policy;
	ps->key.op = BW_NOP_BIND;
	v = bpf_map_lookup_elem(&bw_unix_places, &ps->key);
	if (!v || v->verdict != BW_V_DENY)
		return false;
	d->rule = v->rule;
	d->by_inode = true;
	return true;
}

/* The path of a socket file (mnt, dentry) as the process sees it, into u->name. */
static __always_inline int bw_unix_path_name(struct bw_unix_key *u, struct vfsmount *mnt,
					     struct dentry *dentry, __u32 *len)
{
	__u32 zero = 0, flags = 0, n;
	struct bw_scratch *s;

	s = bpf_map_lookup_elem(&bw_scratch, &zero);
	if (!s)
		return -1;
	n = bw_path_build(s, mnt, dentry, &flags);
	if (flags & (BW_EVF_PATH_TOO_LONG | BW_EVF_UNREACHABLE) || n >= BW_UNIX_NAME) {
		/* A name no rule can spell: decided by the default. */
		bpf_probe_read_kernel(u->name, BW_UNIX_NAME - 1, s->key.path);
		*len = BW_UNIX_NAME - 1;
		return 0;
	}
	barrier_var(n);
	bpf_probe_read_kernel(u->name, n & BW_UNIX_MASK, s->key.path);
	*len = n;
	return 0;
}

/* The peer's name into u->name ("@" + abstract name, or its socket file's path). */
static __always_inline int bw_unix_peer_name(struct bw_unix_key *u, struct sock *other, __u32 *len)
{
	struct unix_sock *peer = (struct unix_sock *)other;
	struct unix_address *addr = BPF_CORE_READ(peer, addr);
	/*
	 * A peer being closed clears path.dentry, then path.mnt
	 * (unix_release_sock): read in the other order, a path seen whole is
	 * one of before the close, and a half-cleared one (a dentry without
	 * its mount: a path from the file system's root, which no rule names,
	 * decided by the default) is not seen: it takes the name given to
	 * bind, below, as a closed peer's does.
	 */
	struct vfsmount *mnt = BPF_CORE_READ(peer, path.mnt);
	struct dentry *dentry = BPF_CORE_READ(peer, path.dentry);
	__u32 n;
	char first = 0;
	int alen;

	__builtin_memset(u->name, 0, sizeof(u->name));
	if (!addr)
		return -1; /* unnamed: a socketpair or an unbound socket, nothing to name */
	if (dentry && mnt)
		return bw_unix_path_name(u, mnt, dentry, len);
	/*
	 * No path: abstract (sun_path starts with a NUL, the name runs to
	 * addr->len), or a socket file's peer that was closed, whose path the
	 * kernel dropped (a connection still holding its data): then the name
	 * given to bind (addr->len counts its trailing NUL), as written: a
	 * relative one meets no rule.
	 */
	alen = BPF_CORE_READ(addr, len) - 2 /* sun_family */ - 1 /* leading or trailing NUL */;
	if (alen <= 0)
		return -1;
	n = alen;
	if (n > BW_UNIX_NAME - 1)
		n = BW_UNIX_NAME - 1;
	bpf_probe_read_kernel(&first, 1, (char *)addr->name[0].sun_path);
	if (first) {
		barrier_var(n);
		bpf_probe_read_kernel(u->name, n & BW_UNIX_MASK, (char *)addr->name[0].sun_path);
		*len = n;
		return 0;
	}
	u->name[0] = '@';
	barrier_var(n);
	bpf_probe_read_kernel(&u->name[1], n & BW_UNIX_MASK, (char *)addr->name[0].sun_path + 1);
	*len = n + 1;
	return 0;
}

/*
 * The path the peer's socket file was bound at, into u->name, when the
 * bind named it by an absolute path (a relative name says nothing of
 * where); -1 otherwise.
 */
static __always_inline int bw_unix_bound_path(struct bw_unix_key *u, struct sock *other, __u32 *len)
{
	struct unix_address *addr = BPF_CORE_READ((struct unix_sock *)other, addr);
	int alen;
	__u32 n;

	if (!addr)
		return -1;
	alen = BPF_CORE_READ(addr, len) - 2 /* sun_family */ - 1 /* trailing NUL */;
	if (alen <= 0)
		return -1;
	n = alen;
	if (n > BW_UNIX_NAME - 1)
		n = BW_UNIX_NAME - 1;
	__builtin_memset(u->name, 0, sizeof(u->name));
	barrier_var(n);
	bpf_probe_read_kernel(u->name, n & BW_UNIX_MASK, (char *)addr->name[0].sun_path);
	if (u->name[0] != '/')
		return -1;
	*len = n;
	return 0;
}

/*
 * A connect, a datagram or a received connection to peer: decided by the
 * peer's name now (bw_unix_peer_name), by the socket file's pin, and by a
 * deny rule of the path it was bound at, which no rename of the socket
 * file or of a directory above it changes: a socket a deny rule names
 * stays denied under any name it is given later. The event names the
 * socket by the name that met the rule.
 */
static __always_inline int bw_unix_decide_peer(struct bw_unix_key *u, __u64 cgid,
					       const struct bw_cgroup *cg, struct sock *peer,
					       __u8 evop)
{
	struct dentry *dentry = BPF_CORE_READ((struct unix_sock *)peer, path.dentry);
	struct bw_unix_denial d = {};
	struct bw_policy *pol;
	__u32 len = 0;
	bool denied;

	if (bw_unix_peer_name(u, peer, &len))
		return 0;
	pol = bw_policy_of(cg);
	if (!pol)
		return -EPERM;
	denied = bw_unix_denied(u, cg, pol, BW_NOP_CONNECT, len, false, &d);
	if (!denied && dentry)
		denied = bw_unix_pin_denied(cg, dentry, &d);
	/* The bound path replaces the name in u (and len): the event names it. */
	if (!denied && !bw_unix_bound_path(u, peer, &len))
		denied = bw_unix_denied(u, cg, pol, BW_NOP_CONNECT, len, true, &d);
	if (!denied) {
		bw_opstat(cg->policy, evop, cg->mode, 1);
		return 0;
	}
	return bw_unix_refuse(u, cgid, cg, pol, evop, len, dentry, d.rule, d.by_inode);
}

#endif /* BW_UNIX_BPF_H */
