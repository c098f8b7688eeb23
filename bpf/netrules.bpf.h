/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The network rules' decision on an endpoint, shared by the cgroup programs
 * (bpf/net.bpf.c: connect, sendmsg, bind) and the LSM program deciding a
 * socket received from another process (bpf/receive.bpf.c), so that both
 * reach the same verdict for the same peer.
 */
#ifndef BW_NETRULES_BPF_H
#define BW_NETRULES_BPF_H

#include <bpf/bpf_endian.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "localaddr.bpf.h"

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
 * The protocol whose rules decide a socket: tcp for TCP and MPTCP (TCP
 * subflows), udp for UDP and UDP-Lite (a UDP with partial checksums). 0: a
 * protocol no rule names (ICMP echo, SCTP, ...), decided whatever the peer
 * when the socket was made (bw_sock_create in net.bpf.c).
 */
static __always_inline __u8 bw_net_proto(__u32 protocol)
{
	if (protocol == IPPROTO_TCP || protocol == IPPROTO_MPTCP)
		return IPPROTO_TCP;
	if (protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE)
		return IPPROTO_UDP;
	return 0;
}

/* The verdict of the rules for k's address and port (NONE: no rule), and the rule. */
static __always_inline __u8 bw_net_rule(void *rules, struct bw_net_key *k, __u16 port, __u16 *rule)
{
	struct bw_net_value *r;
	__u32 i, n;

	r = bpf_map_lookup_elem(rules, k);
	if (!r)
		return BW_V_NONE;
	n = r->n;
	for (i = 0; i < BW_NET_RANGES; i++) {
		if (i >= n)
			break;
		if (port >= r->r[i].lo && port <= r->r[i].hi) {
			*rule = r->r[i].rule;
			return r->r[i].verdict;
		}
	}
	return BW_V_NONE;
}

static __always_inline bool bw_loopback(const __u32 *a)
{
	return a[0] == 0 && a[1] == 0 &&
	       ((a[2] == bpf_htonl(0xffff) &&
		 (a[3] & bpf_htonl(0xff000000)) == bpf_htonl(0x7f000000)) ||
		(a[2] == 0 && a[3] == bpf_htonl(1)));
}

/*
 * A destination that is another address of the local host (the host's eth0
 * address, a link-local one, one added a moment ago) reaches what its
 * loopback address reaches: it is decided by both, deny winning, and an
 * allow of either winning over the default. The host's addresses are looked
 * at (bw_dest_local) only when the loopback rules would change the outcome.
 */
static __always_inline void bw_net_local(void *rules, struct bw_net_key *k, __u16 port,
					 __u8 default_net, __u8 *verdict, __u16 *rule, bool *host)
{
	__u32 *a = (__u32 *)k->addr, saved[4];
	__u16 lo_rule = 0;
	__u8 lo;

	if (*verdict == BW_V_DENY || bw_loopback(a))
		return;
	__builtin_memcpy(saved, a, sizeof(saved));
	if (a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff)) {
		a[3] = bpf_htonl(0x7f000001);
	} else {
		a[0] = a[1] = a[2] = 0;
		a[3] = bpf_htonl(1);
	}
	lo = bw_net_rule(rules, k, port, &lo_rule);
	__builtin_memcpy(a, saved, sizeof(saved));
	if (lo != BW_V_DENY &&
	    (lo != BW_V_ALLOW || *verdict != BW_V_NONE || default_net != BW_V_DENY))
		return;
	*host = true;
	if (bw_dest_local(k->addr)) {
		*verdict = lo;
		*rule = lo_rule;
	}
}

/*
 * The verdict of policy pol (slot `policy`, its trie `rules`: bw_net_trie)
 * for the endpoint in k (addr filled in, IPv6 form) and port, under
 * operation op (BW_NOP_*) and proto: the most specific rule, else the net
 * default. *rule is the deciding rule (0: the default).
 * A destination is decided as the address it reaches (bw_local_dest), and
 * one of the local host's as its loopback address too (bw_net_local): *host
 * says whether the verdict depended on the host's addresses.
 */
static __always_inline __u8 bw_net_verdict(const struct bw_policy *pol, __u32 policy, void *rules,
					   struct bw_net_key *k, __u8 op, __u8 proto, __u16 port,
					   __u16 *rule, bool *host)
{
	__u8 verdict;

	*rule = 0;
	*host = false;
	if (op != BW_NOP_BIND)
		bw_local_dest(k);
	k->policy = policy;
	k->op = op == BW_NOP_BIND ? BW_NOP_BIND : BW_NOP_CONNECT;
	k->proto = proto;
	k->prefixlen = BW_NET_KEY_HEAD_BITS + 128;
	verdict = bw_net_rule(rules, k, port, rule);
	if (op != BW_NOP_BIND)
		bw_net_local(rules, k, port, pol->default_net, &verdict, rule, host);
	if (verdict == BW_V_NONE) {
		verdict = pol->default_net;
		*rule = 0;
	}
	return verdict;
}

#endif /* BW_NETRULES_BPF_H */
