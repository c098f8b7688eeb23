// SPDX-License-Identifier: GPL-2.0-only
/*
 * Keeps bw_cgroups closed under descent: a cgroup created below a governed
 * one inherits its parent's entry at mkdir, before any process can enter it,
 * so the hooks need a single lookup of the current cgroup id. Entries go
 * away with their cgroup. tp_btf works on every kernel we support,
 * including those without BPF LSM.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"

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
	struct bw_cgroup *parent, copy;
	__u64 id, parent_id;

	if (!bw_on_dfl_root(cgrp))
		return 0;
	parent_css = BPF_CORE_READ(cgrp, self.parent);
	if (!parent_css)
		return 0;
	parent_id = BPF_CORE_READ(parent_css, cgroup, kn, id);
	parent = bpf_map_lookup_elem(&bw_cgroups, &parent_id);
	if (!parent)
		return 0;
	copy = *parent;
	id = BPF_CORE_READ(cgrp, kn, id);
	/* A full map must not leave the child ungoverned: the agent checks it. */
	bpf_map_update_elem(&bw_cgroups, &id, &copy, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(bw_cg_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id;

	if (!bw_on_dfl_root(cgrp))
		return 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	bpf_map_delete_elem(&bw_cgroups, &id);
	bpf_map_delete_elem(&bw_pending, &id);
	return 0;
}
