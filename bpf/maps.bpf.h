/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Maps shared by every bpfwarden BPF object. Each is pinned by name under
 * /sys/fs/bpf/bpfwarden, so the objects loaded by one agent and the agents
 * started later all see one policy state, and enforcement outlives them.
 */
#ifndef BW_MAPS_BPF_H
#define BW_MAPS_BPF_H

#include "bpfwarden.h"

/* Governed cgroup id -> policy slot and mode; descendants are added on mkdir. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, struct bw_cgroup);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct bw_policy);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_policies SEC(".maps");

/* File rules of every policy: the longest matching prefix is the most specific rule. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, BW_MAX_FILE_KEYS);
	__type(key, struct bw_path_key);
	__type(value, struct bw_path_rule);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_file_rules SEC(".maps");

/* Exec rules of every policy, keyed like file rules; the `r` slot decides. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, BW_MAX_FILE_KEYS);
	__type(key, struct bw_path_key);
	__type(value, struct bw_path_rule);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_exec_rules SEC(".maps");

/* Network rules of every policy (include/bpfwarden.h explains the layout). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, BW_MAX_NET_KEYS);
	__type(key, struct bw_net_key);
	__type(value, struct bw_net_value);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_net_rules SEC(".maps");

/* unix socket rules of every policy: exact names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_UNIX_KEYS);
	__type(key, struct bw_unix_key);
	__type(value, struct bw_unix_value);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_unix_rules SEC(".maps");

/* Objects of deny rules by device and inode, whatever name reaches them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_INODE_PINS);
	__type(key, struct bw_inode_key);
	__type(value, struct bw_inode_pin);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_inodes SEC(".maps");

/* Inodes that may be pinned: a cheap first test before bw_inodes (pins.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_PINBITS_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_pinbits SEC(".maps");

/* One ring buffer per policy slot, created by the agent that owns the slot. */
struct bw_rb {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, BW_RINGBUF_SIZE);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, BW_MAX_POLICIES);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct bw_rb);
} bw_rbufs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BW_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct bw_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_counters SEC(".maps");

/* What learn mode has already reported (include/bpfwarden.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BW_MAX_LEARNED);
	__type(key, struct bw_learn_key);
	__type(value, __u8);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_learned SEC(".maps");

/* True the first time this object is learned for the cgroup; false after. */
static __always_inline bool bw_learn_first(struct bw_learn_key *k)
{
	__u8 one = 1;

	return bpf_map_update_elem(&bw_learned, k, &one, BPF_NOEXIST) == 0;
}

static __always_inline struct bw_counters *bw_counters_of(__u32 policy)
{
	return bpf_map_lookup_elem(&bw_counters, &policy);
}

/* Events sent this second, per governed cgroup (include/bpfwarden.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BW_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, struct bw_throttle);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_throttle SEC(".maps");

/*
 * May this cgroup send one more deny or audit event this second? When not,
 * the event is counted in throttled. Races between CPUs may let a few more
 * through; none is lost uncounted.
 */
static __always_inline bool bw_event_allowed(__u64 cgid, __u32 policy, __u32 rate)
{
	struct bw_throttle *t, fresh = {};
	struct bw_counters *c;
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
	c = bw_counters_of(policy);
	if (c)
		__sync_fetch_and_add(&c->throttled, 1);
	return false;
}

#endif /* BW_MAPS_BPF_H */
