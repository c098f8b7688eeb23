/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's side of counting bw_cgroups entries (include/bpfwarden.h):
 * cgroup.bpf.c counts what it adds at mkdir and removes at rmdir,
 * cgguard.bpf.c reads the counts to refuse a mkdir over a limit. Both run
 * under the kernel's cgroup_mutex for cgroup mkdir and rmdir (the tracepoints
 * and kernfs_init_security), so a check and the insert that follows it are
 * never interleaved with another mkdir's.
 */
#ifndef BW_CGCOUNT_BPF_H
#define BW_CGCOUNT_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"

static __always_inline void bw_cg_count_add(__u32 idx, __s64 delta)
{
	__s64 *c = bpf_map_lookup_elem(&bw_cg_count, &idx);

	if (c)
		__sync_fetch_and_add(c, delta);
}

/* Count idx: the kernel's half plus the agents' half. */
static __always_inline __s64 bw_cg_count_get(__u32 idx)
{
	__u32 agent = BW_CG_AGENT_HALF + idx;
	__s64 *k = bpf_map_lookup_elem(&bw_cg_count, &idx);
	__s64 *a = bpf_map_lookup_elem(&bw_cg_count, &agent);

	return (k ? *k : 0) + (a ? *a : 0);
}

/*
 * The slot a new cgroup below a governed parent is charged to: the maker's,
 * when a governed process makes it (a sandbox's cgroups count against its
 * own limit wherever it makes them), else the parent's.
 */
static __always_inline __u32 bw_cg_charge_slot(const struct bw_cgroup *maker,
					       const struct bw_cgroup *parent)
{
	return maker ? maker->policy : parent->policy;
}

/*
 * Would one more made cgroup pass a limit? 0, or the limit's rule
 * (BW_RULE_CGROUPS_*). maker: the governing entry of the process making
 * it, NULL when none governs it: a slot's limit is for its sandboxes, the
 * host's for everyone.
 */
static __always_inline __u16 bw_cg_over_limit(const struct bw_cgroup *maker)
{
	__u32 zero = 0, per_slot = BW_CGROUPS_MADE_PER_SLOT, made = BW_MAX_CGROUPS_MADE;
	struct bw_cg_limits *l = bpf_map_lookup_elem(&bw_cg_limits, &zero);

	if (l && l->per_slot)
		per_slot = l->per_slot;
	if (l && l->made && l->made < made)
		made = l->made;
	if (maker && bw_cg_count_get(maker->policy) >= per_slot)
		return BW_RULE_CGROUPS_SLOT;
	if (bw_cg_count_get(BW_CG_MADE) >= made)
		return BW_RULE_CGROUPS_MADE;
	return 0;
}

#endif /* BW_CGCOUNT_BPF_H */
