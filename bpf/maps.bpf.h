/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Maps shared by every bpfwarden BPF object. Each is pinned by name under
 * /sys/fs/bpf/bpfwarden, so the objects loaded by one agent and the agents
 * started later all see one policy state, and enforcement outlives them.
 */
#ifndef BW_MAPS_BPF_H
#define BW_MAPS_BPF_H

#include "bpfwarden.h"

/*
 * Governed cgroup id -> policy slot and mode; descendants are added on
 * mkdir. Room for the agents' entries and the made ones (include/bpfwarden.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_CGROUPS_MAP);
	__type(key, __u64);
	__type(value, struct bw_cgroup);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_cgroups SEC(".maps");

/*
 * Cgroups governed from their first exec: a container whose runtime (runc's
 * init) is still setting it up when the agent is asked, before the
 * container's own first instruction. bpf/exec.bpf.c moves the entry into
 * bw_cgroups at that exec, which is then decided under it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_PENDING);
	__type(key, __u64);
	__type(value, struct bw_cgroup);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_pending SEC(".maps");

/* Service selectors (include/bpfwarden.h), written by the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_CG_SELECT_MAX);
	__type(key, __u32);
	__type(value, struct bw_cg_select);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_cg_select SEC(".maps");
/* How many entries bw_cgroups holds, by kind, in two halves (include/bpfwarden.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * BW_CG_COUNTS);
	__type(key, __u32);
	__type(value, __s64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_cg_count SEC(".maps");

/* Limits on made cgroups; all zero (the defaults) unless someone lowered them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bw_cg_limits);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_cg_limits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BW_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct bw_policy);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_policies SEC(".maps");

/*
 * Every slot in use is below this (the agents keep it, under their lock):
 * what the kernel does once per slot (bpf/ident.bpf.c) loops that far, not
 * over all BW_MAX_POLICIES.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_slot_end SEC(".maps");

static __always_inline __u32 bw_slots_used(void)
{
	__u32 zero = 0, *end = bpf_map_lookup_elem(&bw_slot_end, &zero);

	/* A missing map would stop nothing: every slot then. */
	if (!end || *end > BW_MAX_POLICIES)
		return BW_MAX_POLICIES;
	return *end;
}

/*
 * Rules are kept per policy slot, one trie per category (file, exec,
 * network), created and filled by the agent that owns the slot and then put
 * in the slot's place: a slot's decision walks only its own profile's keys,
 * however many profiles are loaded, and a released slot takes its tries
 * with it (user/govern.c). A missing trie fails closed. The keys still
 * carry their slot, so a key read back says whose it is.
 *
 * File and exec tries are keyed alike: the longest matching prefix is the
 * most specific rule. Exec rules decide running with the `r` slot of their
 * values, mapping executable with `w`.
 */
/*
 * Sizes, not types, in the inner maps: an object that never names the key
 * type gets only a forward declaration of it in its BTF.
 */
struct bw_path_trie {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, BW_MAX_FILE_KEYS);
	__uint(key_size, sizeof(struct bw_path_key));
	__uint(value_size, sizeof(struct bw_path_rule));
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

#define BW_PATH_RULES(name)                                                                        \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);                                          \
		__uint(max_entries, BW_MAX_POLICIES);                                              \
		__type(key, __u32);                                                                \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                                               \
		__array(values, struct bw_path_trie);                                              \
	} name SEC(".maps")

BW_PATH_RULES(bw_file_rules);
BW_PATH_RULES(bw_exec_rules);

/* Network rules (include/bpfwarden.h explains the layout), a trie per slot. */
struct bw_net_trie {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, BW_MAX_NET_KEYS);
	__uint(key_size, sizeof(struct bw_net_key));
	__uint(value_size, sizeof(struct bw_net_value));
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, BW_MAX_POLICIES);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct bw_net_trie);
} bw_net_rules SEC(".maps");

/* The trie of slot `policy` in `tries` (one of the three above), or NULL. */
static __always_inline void *bw_trie_of(void *tries, __u32 policy)
{
	return bpf_map_lookup_elem(tries, &policy);
}

/* unix socket rules of every policy: exact names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_UNIX_KEYS);
	__type(key, struct bw_unix_key);
	__type(value, struct bw_unix_value);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_unix_rules SEC(".maps");

/* The places of unix path deny rules (struct bw_unix_place_key). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_UNIX_KEYS);
	__type(key, struct bw_unix_place_key);
	__type(value, struct bw_unix_value);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_unix_places SEC(".maps");

/* Objects of deny rules by device and inode, whatever name reaches them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_INODE_PINS);
	__type(key, struct bw_inode_key);
	__type(value, struct bw_inode_pin);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_inodes SEC(".maps");

/*
 * Inodes that may be pinned: a cheap first test before bw_inodes (pins.bpf.h).
 * The kernel sets bits too (bpf/ident.bpf.c), so the agent sets its bits
 * with atomic ORs through a mapping, never by a read and a write.
 */
#define BW_BITMAP(name)                                                                            \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, BW_PINBITS_WORDS);                                             \
		__type(key, __u32);                                                                \
		__type(value, __u64);                                                              \
		__uint(map_flags, BPF_F_MMAPABLE);                                                 \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                                               \
	} name SEC(".maps")

BW_BITMAP(bw_pinbits);

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

/* Deny verdicts per slot, operation and mode (include/bpfwarden.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BW_OPSTATS_ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_opstats SEC(".maps");

/* What learn mode has already reported (include/bpfwarden.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BW_MAX_LEARNED);
	__type(key, struct bw_learn_key);
	__type(value, __u8);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_learned SEC(".maps");

/* Events sent this second, per governed cgroup (include/bpfwarden.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BW_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, struct bw_throttle);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_throttle SEC(".maps");

/* Positions of rule objects (include/bpfwarden.h, bpf/ident.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_POSITIONS);
	__type(key, struct bw_pos_key);
	__type(value, struct bw_pos);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_positions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_POSITIONS);
	__type(key, struct bw_pos_pin_key);
	__type(value, struct bw_pos_pin);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_pos_pins SEC(".maps");

/* Written by the kernel as directories appear: preallocated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_POSITIONS);
	__type(key, struct bw_pos_dir_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_pos_dirs SEC(".maps");

/* Directories that may be in bw_pos_dirs, by inode number, like bw_pinbits. */
BW_BITMAP(bw_posbits);

/*
 * The decision cache's generation (bpf/dcache.bpf.h): agents add one after
 * every change they make to policy state (bw_unlock), the kernel after it
 * writes a pin. Mapped by agents, so both sides add atomically.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_dc_gen SEC(".maps");

/* Its value now (the decision cache, bpf/dcache.bpf.h; the network verdict cache). */
static __always_inline __u64 bw_dc_gen_now(void)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&bw_dc_gen, &zero);

	return gen ? *(volatile __u64 *)gen : 0;
}

/*
 * Cgroups that may be governed, by id (bw_pinbits_word/bit of the id): the
 * first test of bw_governing, so that a process outside every sandbox pays
 * a bit test, not a hash lookup. A bit is set before its cgroup's entry is
 * made in bw_cgroups or bw_pending (by agents, with atomic ORs through a
 * mapping: user/govern.c; by the kernel at mkdir: bpf/cgroup.bpf.c) and is
 * never cleared, so a clear bit means "not governed". `upgrade` sets every
 * bit, until `reset` (an older build's agents, still running, make entries
 * without bits). docs/enforcement.md, "Cost for processes outside every
 * sandbox".
 */
/*
 * Block devices that hold the bytes of the host's files: a mounted file
 * system or active swap, the disk of such a partition, the devices under
 * such a device-mapper or md device. The kernel's dev_t -> 1, written by
 * the agents (user/rawdevs.c) when a profile is installed and when their
 * mount table changes; a governed process may not open one (bpf/host.bpf.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BW_MAX_RAWDEVS);
	__type(key, __u32);
	__type(value, __u8);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} bw_rawdevs SEC(".maps");

BW_BITMAP(bw_govbits);

/* False only when cgid is certainly not governed (bw_govbits). */
static __always_inline bool bw_may_govern(__u64 cgid)
{
	__u32 word = bw_pinbits_word(cgid);
	__u64 *bits = bpf_map_lookup_elem(&bw_govbits, &word);

	return !bits || (*bits & bw_pinbits_bit(cgid));
}

/*
 * Before cgid's entry is made: its bit (bw_govbits). An atomic OR, as the
 * agents' (BPF ISA v3: the object is built with -mcpu=v3).
 */
static __always_inline void bw_gov_mark(__u64 cgid)
{
	__u32 word = bw_pinbits_word(cgid);
	__u64 *bits = bpf_map_lookup_elem(&bw_govbits, &word);

	if (bits)
		__sync_fetch_and_or(bits, bw_pinbits_bit(cgid));
}

/*
 * The current task's cgroup v2 id, what bpf_get_current_cgroup_id() returns.
 * LSM and tracing programs read it with four loads through the task's BTF:
 * the helper's call and its RCU read section were 20 of the 72
 * instructions an ungoverned open() paid over empty programs
 * (docs/performance.md). Cgroup programs cannot have the task's BTF
 * (bpf/net.bpf.c defines BW_CGROUP_PROGS) and call the helper; a cgroup
 * program built without it fails to load, not to decide.
 */
static __always_inline __u64 bw_current_cgroup(void)
{
#ifdef BW_CGROUP_PROGS
	return bpf_get_current_cgroup_id();
#else
	return bpf_get_current_task_btf()->cgroups->dfl_cgrp->kn->id;
#endif
}

/* A governing entry read in one 8-byte load (bw_governing). */
union bw_cgroup_copy {
	__u64 raw;
	struct bw_cgroup v;
};

/*
 * The governing entry of the current task's cgroup (and its id in *cgid),
 * copied into *copy: `attach --replace` and `mode` replace the entry while
 * a hook runs, and the hash map may reuse the old element at once. A
 * decision made from the copy is one profile's, slot and mode of one read.
 * NULL for a process outside every governed cgroup: this lookup is all
 * such a process pays on any hook. bw_governing_of: the same for cgroup
 * cgid, whose bit the caller has tested.
 */
static __always_inline struct bw_cgroup *bw_governing_of(__u64 cgid, union bw_cgroup_copy *copy)
{
	struct bw_cgroup *live = bpf_map_lookup_elem(&bw_cgroups, &cgid);

	if (!live)
		return NULL;
	copy->raw = *(volatile __u64 *)live;
	return &copy->v;
}

static __always_inline struct bw_cgroup *bw_governing(__u64 *cgid, union bw_cgroup_copy *copy)
{
	*cgid = bw_current_cgroup();
	if (!bw_may_govern(*cgid))
		return NULL;
	return bw_governing_of(*cgid, copy);
}

/* A governed cgroup's policy; NULL (the caller refuses: fail closed) if its slot is gone. */
static __always_inline struct bw_policy *bw_policy_of(const struct bw_cgroup *cg)
{
	__u32 policy = cg->policy;

	return bpf_map_lookup_elem(&bw_policies, &policy);
}

#endif /* BW_MAPS_BPF_H */
