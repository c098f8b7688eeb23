/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF side is loaded once per boot and pinned under /sys/fs/bpf/bpfwarden
 * (maps by name, links under links/), so enforcement never depends on an
 * agent staying alive; every later agent opens the pins.
 */
#ifndef BW_LOADER_H
#define BW_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct bpf_program;
struct bpf_link;
struct bw_policy;

#define BW_PIN_ROOT "/sys/fs/bpf/bpfwarden"
#define BW_RUN_DIR  "/run/bpfwarden"
/* Every fd closed: the initial value of a struct bw_maps. */
/* Every descriptor of struct bw_maps closed (-1); the assert below keeps the count. */
#define BW_MAPS_NFDS 25
#define BW_MAPS_INIT                                                                               \
	{                                                                                          \
		-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,    \
		    -1, -1, -1, -1, -1                                                             \
	}

struct bw_maps {
	int cgroups;
	int policies;
	int file_rules;
	int exec_rules;
	int net_rules;
	int unix_rules;
	int unix_places; /* places of unix path deny rules (user/pins.c) */
	int inodes;
	int rbufs;
	int counters;
	int pinbits;
	int opstats;   /* deny verdicts per slot, operation and mode */
	int pending;   /* cgroups governed from their first exec */
	int cg_select; /* service selectors: cgroups governed as they are made */
	int positions; /* positions of rule objects (user/positions.c) */
	int pos_pins;
	int pos_dirs;
	int posbits;
	int cg_count;  /* bw_cgroups entries by kind (include/bpfwarden.h) */
	int cg_limits; /* limits on made cgroups */
	int dc_gen;    /* the decision cache's generation (bpf/dcache.bpf.h) */
	int govbits;   /* cgroups that may be governed (bpf/maps.bpf.h) */
	int slot_end;  /* every slot in use is below it (bpf/maps.bpf.h) */
	int rawdevs;   /* block devices that hold the host's files (user/rawdevs.c) */
	int lock_fd;   /* held while changing shared state */
};

/*
 * A field added without its -1 in BW_MAPS_INIT starts as descriptor 0: a
 * lock_fd of 0 made bw_lock flock standard input, and two agents loaded
 * the programs at once.
 */
_Static_assert(sizeof(struct bw_maps) == BW_MAPS_NFDS * sizeof(int),
	       "BW_MAPS_INIT must set every descriptor of struct bw_maps to -1");

/*
 * Load and pin whatever is not pinned yet: the cgroup tracking and the
 * network programs always, the file and exec hooks when want_lsm (BPF LSM,
 * which the caller has probed). Then open every map. Returns 0 or -errno
 * after printing what went wrong in words.
 */
int bw_load(struct bw_maps *m, bool want_lsm);
/*
 * What bw_load would still have to load (BW_NEED_* of probe.h; 0 when every
 * program is pinned already): each of these takes its capabilities.
 */
unsigned bw_load_needs(bool want_lsm);
/*
 * The changes of the sandbox's view (mount, chroot, user namespaces:
 * bpf/ns.bpf.c) that this kernel has no LSM hook to refuse, as a list of
 * "what (hook)"; NULL when every one is refused there (given BPF LSM).
 */
const char *bw_view_unrefused(void);
/* Open the pinned maps only; -ENOENT when nothing is loaded. */
int bw_open_pinned(struct bw_maps *m);
void bw_maps_close(struct bw_maps *m);

/*
 * FNV-1a over the BPF objects this agent carries: their version. Pins made
 * by another build (another hash) are replaced or refused, never mixed.
 */
uint64_t bw_objects_hash(void);

/*
 * The BPF objects this build carries (bw_objects_count of them, in load
 * order), for `bpfwarden upgrade`: object i opened with its maps to be
 * reused from the pins, its programs for hooks this kernel lacks not to be
 * loaded; *what names it for messages, *needs its BW_NEED_* (probe.h).
 */
size_t bw_objects_count(void);
struct bpf_object *bw_object_open(size_t i, const char **what, unsigned *needs);
/* Attach one loaded program: cgroup programs to the cgroup2 root cg_fd. NULL, errno set. */
struct bpf_link *bw_prog_attach(struct bpf_program *prog, int cg_fd);
/* A program attached only while a profile in force needs it (not by bw_load). */
bool bw_prog_on_demand(const struct bpf_program *prog);
/*
 * Attach bw_cg_leave while some slot in use says `allow cgroup`, detach it
 * once none does. The caller holds bw_lock.
 */
int bw_cg_moves_sync(struct bw_maps *m);

/*
 * Every slot's bw_policy, BW_MAX_POLICIES of them, read in one batch: the
 * scans over slots run twice at every start and end of an agent, one system
 * call rather than a thousand each.
 */
int bw_policies_read(const struct bw_maps *m, struct bw_policy *all);

/* Remove a directory of pins (and so drop what only they kept loaded). */
int bw_unpin_all(const char *dir);

/*
 * Set the bit of a cgroup in bw_govbits, before its entry is made in
 * bw_cgroups or bw_pending: the kernel takes a clear bit for "not governed".
 */
int bw_gov_mark(const struct bw_maps *m, uint64_t cgroup_id);

/*
 * Serialise slot allocation and cgroup changes between agents. Every agent
 * change to policy state is made under the lock, so bw_unlock also ends
 * every verdict the kernel's decision cache kept before it (bw_dc_gen).
 */
int bw_lock(struct bw_maps *m);
void bw_unlock(struct bw_maps *m);

#endif
