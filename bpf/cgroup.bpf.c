// SPDX-License-Identifier: GPL-2.0-only
/*
 * Keeps bw_cgroups closed under descent: a cgroup created below a governed
 * one inherits its parent's entry at mkdir, before any process can enter it,
 * so the hooks need a single lookup of the current cgroup id. Entries go
 * away with their cgroup. Both count what they change (cgcount.bpf.h): a
 * made entry is charged to the slot of the sandbox that made it (else its
 * parent's), whose limits cgguard.bpf.c checks before the mkdir. tp_btf works on every kernel we
 * support, including those without BPF LSM.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "cgcount.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* cgroup v1 hierarchies share the tracepoint; their ids are another namespace. */
static __always_inline bool bw_on_dfl_root(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, root, hierarchy_id) == 0;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(bw_cg_mkdir, struct cgroup *cgrp, const char *path)
{
	struct cgroup_subsys_state *parent_css;
	struct bw_cgroup *parent, *maker, copy;
	union bw_cgroup_copy maker_copy;
	__u64 id, parent_id, maker_id;
	__u32 slot;

	if (!bw_on_dfl_root(cgrp))
		return 0;
	parent_css = BPF_CORE_READ(cgrp, self.parent);
	if (!parent_css)
		return 0;
	parent_id = BPF_CORE_READ(parent_css, cgroup, kn, id);
	parent = bpf_map_lookup_elem(&bw_cgroups, &parent_id);
	if (!parent)
		return 0;
	/* We run in the mkdir(2) of the process making it. */
	maker = bw_governing(&maker_id, &maker_copy);
	slot = bw_cg_charge_slot(maker, parent);
	copy = *parent;
	copy.charged = (__u16)(slot + 1);
	id = BPF_CORE_READ(cgrp, kn, id);
	bw_gov_mark(id);
	/*
	 * The limits keep room for this entry (cgguard.bpf.c); should the
	 * insert fail all the same, the child stays ungoverned, and no process
	 * of the governed subtree may enter it (bw_cg_leave).
	 */
	if (bpf_map_update_elem(&bw_cgroups, &id, &copy, BPF_NOEXIST))
		return 0;
	bw_cg_count_add(slot, 1);
	bw_cg_count_add(BW_CG_MADE, 1);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(bw_cg_rmdir, struct cgroup *cgrp, const char *path)
{
	struct bw_cgroup *v;
	__u16 charged;
	__u64 id;

	if (!bw_on_dfl_root(cgrp))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	/* A pending entry was counted as an agent's when it was made (user/govern.c). */
	if (!bpf_map_delete_elem(&bw_pending, &id))
		bw_cg_count_add(BW_CG_AGENT, -1);
	v = bpf_map_lookup_elem(&bw_cgroups, &id);
	if (!v)
		return 0;
	/* Agents keep `charged` when they replace an entry: it is still this one's. */
	charged = v->charged;
	/* Whoever deletes an entry (an agent letting go, or we) uncounts it. */
	if (bpf_map_delete_elem(&bw_cgroups, &id))
		return 0;
	if (charged) {
		bw_cg_count_add(charged - 1, -1);
		bw_cg_count_add(BW_CG_MADE, -1);
	} else {
		bw_cg_count_add(BW_CG_AGENT, -1);
	}
	return 0;
}
