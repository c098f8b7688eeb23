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

/* The protocol a socket's rules are written for: udp, else tcp. */
static __always_inline __u8 bw_net_proto(__u32 protocol)
{
	return protocol == IPPROTO_UDP ? IPPROTO_UDP : IPPROTO_TCP;
}

/*
 * The verdict of policy pol for the endpoint in k (addr filled in, IPv6
 * form) and port, under operation op (BW_NOP_*) and proto: the most specific
 * rule, else the net default. *rule is the deciding rule (0: the default).
 * A destination is decided as the address it reaches (bw_local_dest).
 */
static __always_inline __u8 bw_net_verdict(const struct bw_policy *pol, __u32 policy,
					   struct bw_net_key *k, __u8 op, __u8 proto, __u16 port,
					   __u16 *rule)
{
	struct bw_net_value *r;
	__u8 verdict = BW_V_NONE;
	__u32 i, n;

	*rule = 0;
	if (op != BW_NOP_BIND)
		bw_local_dest(k);
	k->policy = policy;
	k->op = op == BW_NOP_BIND ? BW_NOP_BIND : BW_NOP_CONNECT;
	k->proto = proto;
	k->prefixlen = BW_NET_KEY_HEAD_BITS + 128;
	r = bpf_map_lookup_elem(&bw_net_rules, k);
	if (r) {
		n = r->n;
		for (i = 0; i < BW_NET_RANGES; i++) {
			if (i >= n)
				break;
			if (port >= r->r[i].lo && port <= r->r[i].hi) {
				verdict = r->r[i].verdict;
				*rule = r->r[i].rule;
				break;
			}
		}
	}
	if (verdict == BW_V_NONE) {
		verdict = pol->default_net;
		*rule = 0;
	}
	return verdict;
}

#endif /* BW_NETRULES_BPF_H */
