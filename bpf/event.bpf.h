/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The last step of every decision, for every hook: what the governed
 * cgroup's mode makes of a deny verdict, and the event that says so.
 *
 *   enforce  refused; a `deny` event
 *   audit    let through; an `audit` event
 *   learn    a rule of the profile denies it: refused, a `deny` event;
 *            only the default denies it: let through, and a `learn` event
 *            the first time this cgroup does this operation on this object
 *            with this access in this learn session (bw_learned)
 *
 * A path too long to match, or an object with no path whose rules cannot be
 * known (a disconnected dentry), is never learned: refused unless in audit
 * mode. bpfwarden's own rules (BW_RULE_*, include/bpfwarden.h:
 * self-protection, other processes, the cgroup subtree) are never learned
 * either: refused in enforce mode, audited in audit and learn mode, which
 * block nothing a profile did not deny; the host's limit on made cgroups
 * refuses in every mode.
 * Counters (include/bpfwarden.h) and the per-cgroup event rate are applied
 * here too. Events leave through the ring buffer of the policy that decided
 * them; one that cannot be sent is counted in lost, which the agent turns
 * into a `lost` record: nothing is dropped silently.
 */
#ifndef BW_EVENT_BPF_H
#define BW_EVENT_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"

/* What a deny verdict comes to under the cgroup's mode. */
struct bw_outcome {
	__u8 type;    /* enum bw_event_type to send; 0: none (already learned, or throttled) */
	__u8 refuse;  /* the operation fails */
	__u8 mode;    /* enum bw_mode it was decided under */
	__u8 learned; /* learn mode let it through as a learned access (now or before) */
};

/*
 * An LSM hook's return for an outcome: err (a negative errno) if refused.
 * The barrier keeps a branch: for a 0/1 value the compiler would negate
 * instead, and the verifier, which checks the return range of LSM programs,
 * loses track of a negated register.
 */
static __always_inline int bw_lsm_ret(struct bw_outcome o, int err)
{
	__u8 refuse = o.refuse;

	barrier_var(refuse);
	return refuse ? err : 0;
}

/*
 * May this cgroup send one more deny or audit event this second? When not,
 * the event is counted in throttled. Races between CPUs may let a few more
 * through; none is lost uncounted.
 */
static __always_inline bool bw_event_allowed(__u64 cgid, struct bw_counters *c, __u32 rate)
{
	struct bw_throttle *t, fresh = {};
	__u64 now = bpf_ktime_get_boot_ns() >> 30;

	if (!rate)
		return true;
	t = bpf_map_lookup_elem(&bw_throttle, &cgid);
	if (!t) {
		fresh.second = now;
		fresh.sent = 1;
		bpf_map_update_elem(&bw_throttle, &cgid, &fresh, BPF_ANY);
		return true;
	}
	if (t->second != now) {
		t->second = now;
		t->sent = 1;
		return true;
	}
	if (t->sent < rate) {
		__sync_fetch_and_add(&t->sent, 1);
		return true;
	}
	if (c)
		__sync_fetch_and_add(&c->throttled, 1);
	return false;
}

/* Count one verdict (allowed: 0 deny, 1 allow) of slot policy for op under mode. */
static __always_inline void bw_opstat(__u32 policy, __u8 op, __u8 mode, __u32 allowed)
{
	__u32 stat = BW_OPSTATS_INDEX(policy, (__u32)op, (__u32)mode, allowed);
	__u64 *n = bpf_map_lookup_elem(&bw_opstats, &stat);

	if (n)
		*n += 1;
}

/*
 * The outcome of a deny verdict by `rule` (0: the category's default) for
 * operation op with access on the object `obj` (only a, b, c are read: its
 * identity for learn mode's deduplication, include/bpfwarden.h).
 */
static __always_inline struct bw_outcome bw_deny_outcome(__u64 cgid, const struct bw_cgroup *cg,
							 const struct bw_policy *pol, __u16 rule,
							 __u8 op, __u8 access, __u32 flags,
							 const struct bw_learn_key *obj)
{
	struct bw_outcome o = {.mode = cg->mode};
	__u32 policy = cg->policy;
	struct bw_counters *c = bpf_map_lookup_elem(&bw_counters, &policy);

	/* Every deny verdict counts, throttled or learned already or not. */
	bw_opstat(policy, op, cg->mode, 0);

	if (o.mode == BW_MODE_LEARN && rule == 0 &&
	    !(flags & (BW_EVF_PATH_TOO_LONG | BW_EVF_DISCONNECTED))) {
		struct bw_learn_key k = {};
		__u8 one = 1;

		k.cgroup = cgid;
		k.a = obj->a;
		k.b = obj->b;
		k.c = obj->c;
		k.op = op;
		k.access = access;
		k.gen = pol->learn_gen;
		/*
		 * Seen already: nothing more to say. A repeat costs a lookup, not
		 * an update: an LRU map's update takes a free node (evicting one
		 * when full) before it finds the key, even with NOEXIST. Two CPUs
		 * that both miss race in the update, which lets one through.
		 */
		o.learned = 1;
		if (bpf_map_lookup_elem(&bw_learned, &k) ||
		    bpf_map_update_elem(&bw_learned, &k, &one, BPF_NOEXIST))
			return o;
		if (c)
			__sync_fetch_and_add(&c->learned, 1);
		o.type = BW_EV_LEARN;
		return o;
	}
	if (rule != BW_RULE_CGROUPS_MADE &&
	    (o.mode == BW_MODE_AUDIT || (o.mode == BW_MODE_LEARN && rule >= BW_RULE_OWN))) {
		o.type = BW_EV_AUDIT;
		if (c)
			__sync_fetch_and_add(&c->audited, 1);
	} else {
		o.type = BW_EV_DENY;
		o.refuse = 1;
		if (c)
			__sync_fetch_and_add(&c->denied, 1);
	}
	if (c && (flags & BW_EVF_PATH_TOO_LONG))
		__sync_fetch_and_add(&c->truncated, 1);
	if (!bw_event_allowed(cgid, c, pol->event_rate))
		o.type = 0;
	return o;
}

/* The head of an event: who did it, when, what was decided and under which mode. */
static __always_inline void bw_event_head(struct bw_event *ev, __u64 cgid, __u32 policy,
					  struct bw_outcome o, __u8 op, __u8 access, __u16 rule,
					  __u32 flags)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 uid_gid = bpf_get_current_uid_gid();

	ev->ts_boot_ns = bpf_ktime_get_boot_ns();
	ev->cgroup_id = cgid;
	ev->pid = pid_tgid >> 32;
	ev->tid = (__u32)pid_tgid;
	ev->ppid = BPF_CORE_READ(task, real_parent, tgid);
	ev->uid = (__u32)uid_gid;
	ev->gid = uid_gid >> 32;
	ev->policy = policy;
	ev->rule = rule;
	ev->type = o.type;
	ev->op = op;
	ev->decision = o.refuse ? BW_V_DENY : BW_V_ALLOW;
	ev->access = access;
	ev->flags = flags;
	ev->mode = o.mode;
	ev->path_len = 0;
	ev->args_len = 0;
	ev->dev = 0;
	ev->ino = 0;
	if (!(flags & (BW_EVF_FS_RELATIVE | BW_EVF_DISCONNECTED))) {
		ev->dev = BPF_CORE_READ(task, mm, exe_file, f_inode, i_sb, s_dev);
		ev->ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino);
	}
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
}

/* Room for a fixed-size event in the policy's ring buffer; NULL (counted lost) when full. */
static __always_inline void *bw_event_reserve(__u32 policy, __u64 size)
{
	struct bw_counters *c;
	void *rb = bpf_map_lookup_elem(&bw_rbufs, &policy), *e = NULL;

	if (rb)
		e = bpf_ringbuf_reserve(rb, size, 0);
	if (!e) {
		c = bpf_map_lookup_elem(&bw_counters, &policy);
		if (c)
			__sync_fetch_and_add(&c->lost, 1);
	}
	return e;
}

/* Send size bytes from ev (head and object), for events whose size varies. */
static __always_inline void bw_event_send(__u32 policy, const void *ev, __u64 size)
{
	struct bw_counters *c;
	void *rb = bpf_map_lookup_elem(&bw_rbufs, &policy);

	if (rb && !bpf_ringbuf_output(rb, (void *)ev, size, 0))
		return;
	c = bpf_map_lookup_elem(&bw_counters, &policy);
	if (c)
		__sync_fetch_and_add(&c->lost, 1);
}

/* A network object's event: the head, then the object as its "path" bytes. */
struct bw_net_event {
	struct bw_event ev;
	struct bw_net_obj obj;
};

/*
 * A deny verdict by rule on a network object (an endpoint, or a raw or
 * packet socket for BW_OP_SOCKET): its outcome, and its event sent.
 */
static __always_inline struct bw_outcome bw_net_outcome(__u64 cgid, const struct bw_cgroup *cg,
							const struct bw_policy *pol, __u8 op,
							__u16 rule, const struct bw_net_obj *obj)
{
	struct bw_learn_key id = {};
	struct bw_net_event *e;
	struct bw_outcome o;

	__builtin_memcpy(&id.a, obj->addr, 8);
	__builtin_memcpy(&id.b, obj->addr + 8, 8);
	id.c = ((__u32)obj->family << 24) | ((__u32)obj->proto << 16) | obj->port;
	o = bw_deny_outcome(cgid, cg, pol, rule, op, 0, 0, &id);
	if (!o.type)
		return o;
	e = bw_event_reserve(cg->policy, sizeof(*e));
	if (!e)
		return o;
	bw_event_head(&e->ev, cgid, cg->policy, o, op, 0, rule, 0);
	e->ev.path_len = sizeof(e->obj);
	__builtin_memcpy(&e->obj, obj, sizeof(e->obj));
	bpf_ringbuf_submit(e, 0);
	return o;
}

#endif /* BW_EVENT_BPF_H */
