/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The network verdict cache: a governed connect, datagram or bind that its
 * policy allowed leaves the verdict in a per-CPU table, and the next one of
 * the same cgroup to the same endpoint is let through on a table hit,
 * without the cgroup's entry, its policy or the trie (those were four fifths
 * of a governed connect's cost: docs/enforcement.md, "The network verdict
 * cache").
 *
 * What a verdict depends on, and why a hit is still that verdict:
 *  - the cgroup's entry, its policy and its network trie: agents change them
 *    under their lock and add one to bw_dc_gen before they let it go
 *    (user/loader.c, bw_unlock); an entry carries the generation read
 *    before its verdict was decided, and is used only while it is current.
 *    The kernel's own writes to bw_cgroups make entries for cgroups that had
 *    none (a mkdir below a governed cgroup, a pending cgroup's first exec),
 *    whose ids were never governed before and so are in no entry; cgroup ids
 *    are never reused.
 *  - the host's own addresses (bw_dest_local, consulted for a destination
 *    the loopback rules would decide otherwise): such a verdict is not kept.
 *  - nothing else: the endpoint, the protocol and the operation are the
 *    entry's key, with the cgroup.
 * Only allow verdicts are kept (refusals and audits are decided every time,
 * with their events); an allowed call has no other effect than its count,
 * which a hit adds as the slow path does.
 *
 * The table is per CPU and a program stays on its CPU, but another task
 * may preempt it there: each entry has a sequence, odd while it is written,
 * which one writer takes with a compare-and-swap (a writer that finds it
 * taken keeps nothing), and which a reader reads before and after the
 * entry: a hit is one whole entry, never two writes' halves.
 */
#ifndef BW_NETCACHE_BPF_H
#define BW_NETCACHE_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "event.bpf.h"
#include "netrules.bpf.h"

#define BW_NC_BITS    8
#define BW_NC_ENTRIES (1u << BW_NC_BITS)

/* An entry's key but its cgroup, in one word: port, operation, protocol. */
#define BW_NC_TAG(port, op, proto) ((__u32)(port) | (__u32)(op) << 16 | (__u32)(proto) << 24)

struct bw_nc_entry {
	__u64 seq;     /* odd while written */
	__u64 cgroup;  /* the key: cgroup, endpoint (addr, tag) */
	__u64 addr[2]; /* IPv6 form, as the call gave it */
	__u64 gen;     /* bw_dc_gen, read before the verdict */
	__u32 tag;     /* BW_NC_TAG: op BW_NOP_CONNECT (connects, datagrams) or BW_NOP_BIND */
	__u32 policy;  /* for the count of a hit: the cgroup's slot and mode */
	__u8 mode;
	__u8 pad[7];
};
_Static_assert(sizeof(struct bw_nc_entry) == 56, "bw_nc_entry size");

/*
 * Not pinned: each object that includes this has a table of its own
 * (net.bpf.c's cgroup programs, sock.bpf.c's connected datagrams), and
 * nothing outside the kernel reads it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BW_NC_ENTRIES);
	__type(key, __u32);
	__type(value, struct bw_nc_entry);
} bw_netcache SEC(".maps");

/* One endpoint asked about: an entry's key, the generation now, the entry's place. */
struct bw_nc_query {
	__u64 cgroup;
	__u64 addr[2];
	__u64 gen;
	__u32 tag;
	struct bw_nc_entry *e;
};

#define BW_NC_ONCE(x) (*(volatile typeof(x) *)&(x))

/* The entry for q's key (its slot in this CPU's table), and the generation now. */
static __always_inline void bw_nc_find(struct bw_nc_query *q)
{
	__u32 idx;
	__u64 h;

	q->gen = bw_dc_gen_now();
	h = q->cgroup ^ q->addr[0] ^ q->addr[1] ^ ((__u64)q->tag << 32);
	idx = (h * 0x9e3779b97f4a7c15ULL) >> (64 - BW_NC_BITS);
	q->e = bpf_map_lookup_elem(&bw_netcache, &idx);
}

/* Is q's endpoint allowed by a current entry? Then *policy and *mode are the cgroup's. */
static __always_inline bool bw_nc_hit(const struct bw_nc_query *q, __u32 *policy, __u8 *mode)
{
	struct bw_nc_entry *e = q->e;
	__u64 seq;

	if (!e)
		return false;
	/* Volatile loads, in this order: the fields between the two of the sequence. */
	seq = BW_NC_ONCE(e->seq);
	if ((seq & 1) || BW_NC_ONCE(e->cgroup) != q->cgroup ||
	    BW_NC_ONCE(e->addr[1]) != q->addr[1] || BW_NC_ONCE(e->addr[0]) != q->addr[0] ||
	    BW_NC_ONCE(e->tag) != q->tag || BW_NC_ONCE(e->gen) != q->gen)
		return false;
	*policy = BW_NC_ONCE(e->policy);
	*mode = BW_NC_ONCE(e->mode);
	return BW_NC_ONCE(e->seq) == seq;
}

/*
 * Keep q's endpoint as allowed for the cgroup (slot policy, mode), decided
 * at q->gen; counted with the slot's kept verdicts (bw_counters.kept).
 */
static __always_inline void bw_nc_keep(const struct bw_nc_query *q, __u32 policy, __u8 mode)
{
	struct bw_nc_entry *e = q->e;
	struct bw_counters *c;
	__u64 seq;

	if (!e)
		return;
	seq = BW_NC_ONCE(e->seq);
	if ((seq & 1) || __sync_val_compare_and_swap(&e->seq, seq, seq + 1) != seq)
		return;
	BW_NC_ONCE(e->cgroup) = q->cgroup;
	BW_NC_ONCE(e->addr[0]) = q->addr[0];
	BW_NC_ONCE(e->addr[1]) = q->addr[1];
	BW_NC_ONCE(e->gen) = q->gen;
	BW_NC_ONCE(e->tag) = q->tag;
	BW_NC_ONCE(e->policy) = policy;
	BW_NC_ONCE(e->mode) = mode;
	BW_NC_ONCE(e->seq) = seq + 2;
	c = bpf_map_lookup_elem(&bw_counters, &policy);
	if (c)
		c->kept++;
}

/* The policy's verdict on q's endpoint, on a cache miss: what bw_net_check returns. */
static __always_inline int bw_net_decide(const struct bw_nc_query *q, __u8 op, __u8 evop,
					 __u8 proto, __u16 port, bool v6)
{
	struct bw_net_obj obj = {};
	struct bw_net_key k = {};
	struct bw_cgroup *cg;
	union bw_cgroup_copy cg_copy;
	struct bw_policy *pol;
	__u16 rule;
	__u8 verdict;
	void *rules;
	bool host;

	cg = bw_governing_of(q->cgroup, &cg_copy);
	if (!cg)
		return 1;
	pol = bw_policy_of(cg);
	rules = bw_trie_of(&bw_net_rules, cg->policy);
	if (!pol || !rules)
		return 0;
	__builtin_memcpy(k.addr, q->addr, sizeof(k.addr));
	verdict = bw_net_verdict(pol, cg->policy, rules, &k, op, proto, port, &rule, &host);
	if (verdict != BW_V_DENY) {
		if (!host)
			bw_nc_keep(q, cg->policy, cg->mode);
		bw_opstat(cg->policy, evop, cg->mode, 1);
		return 1;
	}
	__builtin_memcpy(obj.addr, k.addr, sizeof(obj.addr));
	obj.port = port;
	obj.family = v6 ? BW_FAM_IPV6 : BW_FAM_IPV4;
	obj.proto = proto;
	return !bw_net_outcome(q->cgroup, cg, pol, evop, rule, &obj).refuse;
}

/* q's verdict: kept, or decided by the policy (1 lets the call through). */
static __always_inline int bw_net_query(struct bw_nc_query *q, __u8 op, __u8 evop, __u8 proto,
					__u16 port, bool v6)
{
	__u32 policy;
	__u8 mode;

	/* Before anything the verdict is decided by is read: bpf/netcache.bpf.h. */
	bw_nc_find(q);
	if (bw_nc_hit(q, &policy, &mode)) {
		bw_opstat(policy, evop, mode, 1);
		return 1;
	}
	return bw_net_decide(q, op, evop, proto, port, v6);
}

/*
 * A bind's verdict (q's tag says BW_NOP_BIND): a bind to [::] accepts IPv4
 * connections too (unless IPV6_V6ONLY, which no program here can see), so
 * it is decided as 0.0.0.0 as well. q->gen is left as the first query read
 * it: before either verdict.
 */
static __always_inline int bw_bind_query(struct bw_nc_query *q, __u8 evop, __u8 proto, __u16 port,
					 bool v6)
{
	__u64 gen;
	int ok;

	if (!bw_net_query(q, BW_NOP_BIND, evop, proto, port, v6))
		return 0;
	if (!v6 || q->addr[0] || q->addr[1])
		return 1;
	gen = q->gen;
	q->addr[1] = bpf_htonl(0xffff);
	ok = bw_net_query(q, BW_NOP_BIND, evop, proto, port, false);
	q->gen = gen;
	return ok;
}

#endif /* BW_NETCACHE_BPF_H */
