/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the guard programs share (bpf/guard.bpf.c, bpf/receive.bpf.c): the
 * event of a verdict that is bpfwarden's own (self-protection, other
 * processes), and the facts they decide on: a task's cgroup, whether the
 * caller may hold BPF objects at all.
 */
#ifndef BW_GUARD_BPF_H
#define BW_GUARD_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "event.bpf.h"

/* Capability numbers (include/uapi/linux/capability.h). */
#define BW_CAP_SYS_ADMIN 21
#define BW_CAP_BPF	 39

struct bw_guard_event {
	struct bw_event ev;
	struct bw_guard_obj obj;
};

/*
 * A verdict of one of bpfwarden's own rules (BW_RULE_SELF, _PROCESSES) on
 * operation op of a governed process: through bw_deny_outcome, so refused
 * with err in enforce mode and audited in audit and learn mode, with an
 * event naming obj. A slot that is gone refuses (fail closed). actor, when
 * not NULL, is named as the process instead of the current one (the
 * governed parent of a PTRACE_TRACEME).
 */
static __always_inline int bw_guard_deny(__u64 cgid, const struct bw_cgroup *cg, __u16 rule,
					 __u8 op, const struct bw_guard_obj *obj,
					 struct task_struct *actor, int err)
{
	struct bw_learn_key id = {};
	struct bw_guard_event *e;
	struct bw_policy *pol;
	struct bw_outcome o;
	__u32 policy = cg->policy;

	pol = bw_policy_of(cg);
	if (!pol)
		return err;
	o = bw_deny_outcome(cgid, cg, pol, rule, op, 0, 0, &id);
	if (!o.type)
		return bw_lsm_ret(o, err);
	e = bw_event_reserve(policy, sizeof(*e));
	if (!e)
		return bw_lsm_ret(o, err);
	bw_event_head(&e->ev, cgid, policy, o, op, 0, rule, 0);
	if (actor) {
		e->ev.pid = BPF_CORE_READ(actor, tgid);
		e->ev.tid = BPF_CORE_READ(actor, pid);
		e->ev.ppid = BPF_CORE_READ(actor, real_parent, tgid);
		e->ev.uid = BPF_CORE_READ(actor, cred, uid.val);
		e->ev.gid = BPF_CORE_READ(actor, cred, gid.val);
		BPF_CORE_READ_STR_INTO(&e->ev.comm, actor, comm);
	}
	e->ev.path_len = sizeof(e->obj);
	__builtin_memcpy(&e->obj, obj, sizeof(e->obj));
	bpf_ringbuf_submit(e, 0);
	return bw_lsm_ret(o, err);
}

/* The cgroup v2 id of a task, as bpf_get_current_cgroup_id() gives the current one's. */
static __always_inline __u64 bw_task_cgroup(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/*
 * Does the current process have CAP_BPF or CAP_SYS_ADMIN in the initial user
 * namespace, which the kernel's bpf_capable() asks? kernel_cap_t is two
 * 32-bit words up to 6.2 and one 64-bit word since: the same 8 bytes.
 */
static __always_inline bool bw_bpf_capable(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	const struct cred *cred = BPF_CORE_READ(t, cred);
	__u64 caps = 0;

	if (BPF_CORE_READ(cred, user_ns, level) != 0)
		return false;
	bpf_core_read(&caps, sizeof(caps), &cred->cap_effective);
	return caps & ((1ULL << BW_CAP_BPF) | (1ULL << BW_CAP_SYS_ADMIN));
}

/* A BPF map's, program's or link's name, for events. */
static __always_inline void bw_bpf_map_obj(struct bw_guard_obj *o, struct bpf_map *map)
{
	o->kind = BW_GOBJ_BPF_MAP;
	BPF_CORE_READ_STR_INTO(&o->name, map, name);
}

static __always_inline void bw_bpf_prog_obj(struct bw_guard_obj *o, struct bpf_prog *prog)
{
	o->kind = BW_GOBJ_BPF_PROG;
	BPF_CORE_READ_STR_INTO(&o->name, prog, aux, name);
}

/* Is this one of bpfwarden's own objects (every map and program it names "bw_...")? */
static __always_inline bool bw_ours(const char *name)
{
	return name[0] == 'b' && name[1] == 'w' && name[2] == '_';
}

#endif /* BW_GUARD_BPF_H */
