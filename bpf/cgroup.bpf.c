// SPDX-License-Identifier: GPL-2.0-only
/*
 * Keeps bw_cgroups closed under descent: a cgroup created below a governed
 * one inherits its parent's entry at mkdir, before any process can enter it,
 * so the hooks need a single lookup of the current cgroup id. Entries go
 * away with their cgroup. Both count what they change (cgcount.bpf.h): a
 * made entry is charged to the slot of the sandbox that made it (else its
 * parent's), whose limits cgguard.bpf.c checks before the mkdir. One made
 * below a cgroup waiting for its first exec (bw_pending) waits likewise. A
 * cgroup made outside every governed or waiting one is matched against the daemon's service
 * selectors (`match cgroup=GLOB`, include/bpfwarden.h), so that a service's
 * cgroup is governed from its first exec whoever makes it and whether the
 * daemon runs or not. tp_btf works on every kernel we support, including
 * those without BPF LSM.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "kernel.bpf.h"
#include "cgcount.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* cgroup v1 hierarchies share the tracepoint; their ids are another namespace. */
static __always_inline bool bw_on_dfl_root(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, root, hierarchy_id) == 0;
}

/*
 * The path against each selector's glob in turn, one step per bpf_loop
 * iteration (a loop around bpf_loop is taken for an infinite one by the
 * 6.1 and 6.12 verifiers). A glob is fnmatch without flags over '*', '?'
 * and literal bytes, walked the classic way: on a mismatch the last star
 * takes one byte more. That is at most len(path) * len(glob) steps, which
 * the walk caps per selector (BW_GLOB_STEPS, a selector not decided within
 * it counted as missed): the tracepoint runs with interrupts off, and a
 * user with a delegated subtree chooses the names. A service's path and
 * glob take a few hundred.
 */
#define BW_GLOB_STEPS 8192

struct bw_select_walk {
	__u32 k;	      /* the selector */
	__u32 i, j;	      /* next byte of the path, of its glob */
	__s32 star_i, star_j; /* where the glob's last star was met; star_j -1: none yet */
	__u32 n;	      /* the path's length */
	__u32 steps;	      /* taken on this selector */
	__u32 match;
};

/*
 * The path of the cgroup being made, and the walk: in a map value, whose
 * contents the verifier does not follow from one iteration to the next (on
 * the stack, 6.12 verified the walk's every state: 292,000 instructions).
 */
struct bw_cg_scratch {
	char path[BW_CG_PATH_LEN];
	struct bw_select_walk w;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_cg_scratch);
} bw_cg_scratch SEC(".maps");

static long bw_select_step(__u32 step, void *ctx)
{
	__u32 zero = 0, k, i, j;
	struct bw_cg_scratch *sc = bpf_map_lookup_elem(&bw_cg_scratch, &zero);
	struct bw_select_walk *w;
	struct bw_cg_select *sel;
	char g;

	if (!sc)
		return 1;
	w = &sc->w;
	k = w->k;
	i = w->i;
	j = w->j;
	if (k >= BW_CG_SELECT_MAX)
		return 1;
	sel = bpf_map_lookup_elem(&bw_cg_select, &k);
	if (!sel)
		return 1;
	if (!sel->glob[0] || j >= BW_CG_GLOB_LEN)
		goto next;
	if (++w->steps > BW_GLOB_STEPS) {
		__sync_fetch_and_add(&sel->missed, 1);
		goto next;
	}
	g = sel->glob[j & (BW_CG_GLOB_LEN - 1)];
	if (i >= w->n) {
		/* The path is used up: only stars may be left of the glob. */
		if (g == '*') {
			w->j = j + 1;
			return 0;
		}
		if (!g) {
			w->match = 1;
			return 1;
		}
		goto next;
	}
	if (g == '*') {
		w->star_i = i;
		w->star_j = j;
		w->j = j + 1;
		return 0;
	}
	if (g && (g == '?' || g == sc->path[i & (BW_CG_PATH_LEN - 1)])) {
		w->i = i + 1;
		w->j = j + 1;
		return 0;
	}
	if (w->star_j < 0)
		goto next;
	w->star_i++;
	w->i = w->star_i;
	w->j = w->star_j + 1;
	return 0;
next:
	*w = (struct bw_select_walk){.k = k + 1, .n = w->n, .star_j = -1};
	return 0;
}

/*
 * Govern cgrp, made outside every governed cgroup, by the first service
 * selector its path matches. path is the tracepoint's, relative to the
 * making process's cgroup namespace: made from any other namespace than
 * the host's, the cgroup is not matched (a container cannot name itself
 * into a host service's profile, nor would its names mean the host's).
 */
static __always_inline void bw_cg_select_made(struct cgroup *cgrp, const char *path)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bw_cg_select *sel;
	struct bw_cg_scratch *sc;
	struct bw_cgroup v;
	__u32 zero = 0, k;
	long len, ret;
	__u64 id;

	if (BPF_CORE_READ(task, nsproxy, cgroup_ns, ns.inum) != BW_INIT_CGROUP_NS_INO)
		return;
	sc = bpf_map_lookup_elem(&bw_cg_scratch, &zero);
	if (!sc)
		return;
	len = bpf_probe_read_kernel_str(sc->path, sizeof(sc->path), path);
	if (len <= 1)
		return;
	sc->w = (struct bw_select_walk){.n = len - 1, .star_j = -1};
	bpf_loop(BW_CG_SELECT_MAX * (BW_GLOB_STEPS + 1), bw_select_step, NULL, 0);
	if (!sc->w.match)
		return;
	k = sc->w.k;
	sel = bpf_map_lookup_elem(&bw_cg_select, &k);
	if (!sel)
		return;
	v = sel->v;
	v.charged = 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	/* Counted as an agent's entry, as the daemon's own (user/govern.c). */
	if (bw_cg_count_get(BW_CG_AGENT) >= BW_MAX_CGROUPS) {
		__sync_fetch_and_add(&sel->missed, 1);
		return;
	}
	bw_gov_mark(id);
	if (sel->pending)
		ret = bpf_map_update_elem(&bw_pending, &id, &v, BPF_NOEXIST);
	else
		ret = bpf_map_update_elem(&bw_cgroups, &id, &v, BPF_NOEXIST);
	if (ret) {
		__sync_fetch_and_add(&sel->missed, 1);
		return;
	}
	bw_cg_count_add(BW_CG_AGENT, 1);
}

/*
 * A cgroup made below one waiting for its first exec (a unit's cgroup that
 * systemd's DelegateSubgroup= splits before the exec, a runtime's nested
 * cgroup) waits too, for its own first exec, with the same entry: the first
 * exec may come in either. Counted as an agent's entry, as the parent's.
 * False when there is no room: the caller governs it at once instead.
 */
static __always_inline bool bw_cg_pending_made(struct cgroup *cgrp, struct bw_cgroup *parent)
{
	struct bw_cgroup v = *parent;
	__u64 id;

	if (bw_cg_count_get(BW_CG_AGENT) >= BW_MAX_CGROUPS)
		return false;
	v.charged = 0;
	id = BPF_CORE_READ(cgrp, kn, id);
	bw_gov_mark(id);
	if (bpf_map_update_elem(&bw_pending, &id, &v, BPF_NOEXIST))
		return false;
	bw_cg_count_add(BW_CG_AGENT, 1);
	return true;
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
	if (!parent) {
		parent = bpf_map_lookup_elem(&bw_pending, &parent_id);
		if (!parent) {
			bw_cg_select_made(cgrp, path);
			return 0;
		}
		if (bw_cg_pending_made(cgrp, parent))
			return 0;
		/* No room to wait for its first exec: governed from now, as made below. */
	}
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
