/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Events leave through the ring buffer of the policy that decided them.
 * Every event that cannot be sent (no consumer has registered a ring buffer,
 * or it is full) is counted in bw_counters[policy].lost, which the agent turns
 * into a `lost` record: nothing is dropped silently.
 */
#ifndef BW_EVENT_BPF_H
#define BW_EVENT_BPF_H

#include "bpfwarden.h"
#include "maps.bpf.h"
#include "path.bpf.h"
#include "record.bpf.h"

/* Fill s->ev for the current task; the path is copied by the caller. */
static __always_inline void bw_event_fill(struct bw_scratch *s, __u64 cgid, __u32 policy, __u8 type,
					  __u8 op, __u8 decision, __u8 access, __u16 rule,
					  __u8 flags)
{
	bw_event_head(&s->ev, cgid, policy, type, op, decision, rule);
	s->ev.access = access;
	s->ev.flags = flags;
}

/* Send s->ev followed by path_len + args_len bytes from s->evpath on. */
static __always_inline void bw_event_send(struct bw_scratch *s, __u32 path_len, __u32 args_len)
{
	struct bw_counters *c;
	__u32 policy = s->ev.policy, size;
	void *rb;

	s->ev.path_len = path_len;
	s->ev.args_len = args_len;
	/* Arguments may run past evpath into the key, which is no longer needed. */
	size = (path_len + args_len) & (2 * BW_PATH_BUF - 1);
	rb = bpf_map_lookup_elem(&bw_rbufs, &policy);
	if (rb && !bpf_ringbuf_output(rb, &s->ev, sizeof(s->ev) + size, 0))
		return;
	c = bw_counters_of(policy);
	if (c)
		__sync_fetch_and_add(&c->lost, 1);
}

#endif /* BW_EVENT_BPF_H */
