/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A compiled profile goes into a policy slot (its trie keys, inode pins,
 * settings and ring buffer), then cgroups are pointed at the slot. Rules
 * are in place before any cgroup refers to them, and a cgroup is let go
 * before its slot is emptied, so no governed cgroup ever sees half a policy.
 */
#ifndef BW_GOVERN_H
#define BW_GOVERN_H

#include <signal.h>
#include <stdint.h>
#include "compile.h"
#include "loader.h"
#include "pins.h"
#include "positions.h"

/*
 * Names of the tries that hold one slot's rules (bpf/maps.bpf.h), by which
 * the metrics find them all.
 */
#define BW_FILE_TRIE "bw_file_trie"
#define BW_EXEC_TRIE "bw_exec_trie"
#define BW_NET_TRIE  "bw_net_trie"

struct bw_slot {
	uint32_t id;
	int rb_fd; /* this slot's ring buffer, owned by the caller */
	size_t pins_resolved;
	size_t positions;	  /* places of rule objects the kernel follows (user/positions.c) */
	int link_scan_incomplete; /* the hard-link scan of denied directories hit its bound */
};

/*
 * The name of the profile in slot id, for `status` (the kernel keeps slots
 * by number), and its bw_profile_digest, for a later agent that reads the
 * slot's records (its rule numbers): written by the agent that fills it,
 * under BW_RUN_DIR/slots, and removed when the slot is emptied.
 * bw_slot_name_get: name "" when unknown; -ENOENT when the digest is.
 */
void bw_slot_name_set(uint32_t id, const char *name, uint64_t digest);
int bw_slot_name_get(uint32_t id, char *out, size_t len, uint64_t *digest);
/*
 * A descriptor of slot id's ring buffer (the caller closes it), or -errno:
 * to read what a dead owner left there.
 */
int bw_slot_ring(struct bw_maps *m, uint32_t id);

/* Take a free slot and fill it; pins are resolved against the caller's view of paths. */
int bw_slot_install(struct bw_maps *m, const struct bw_compiled *c, struct bw_slot *slot);
/* The same with pins resolved in each of views (the containers a profile governs). */
int bw_slot_install_views(struct bw_maps *m, const struct bw_compiled *c,
			  const struct bw_pin_view *views, size_t nviews, struct bw_slot *slot);
/*
 * Add the positions and pins of one more view to slot id (compiled as c),
 * before it governs there; *pins and *pos (if not NULL) get them, for
 * bw_slot_drop_view.
 */
int bw_slot_add_view(struct bw_maps *m, const struct bw_compiled *c, uint32_t id,
		     const struct bw_pin_view *v, struct bw_pins_done *done,
		     struct bw_pin_set *pins, struct bw_pos_set *pos);
/*
 * Remove what a view that is gone added to slot id (the caller knows no
 * other view has these): its pins, its positions, and every pin of the slot
 * on the file systems in devs (those of the gone view only).
 */
int bw_slot_drop_view(struct bw_maps *m, uint32_t id, const struct bw_inode_key *keys, size_t n,
		      const struct bw_pos_set *pos);
/*
 * Empty a slot (its keys, pins and ring buffer) unless a governed cgroup
 * still refers to it (-EBUSY: another command governs with it now).
 */
int bw_slot_put(struct bw_maps *m, uint32_t id);

/*
 * The governed-cgroup map (bw_cgroups) is written here only, under bw_lock,
 * which every function below takes itself (and by the kernel, at cgroup
 * mkdir and rmdir). A cgroup's entry (slot and mode) is one 8-byte value:
 * each update is atomic for the kernel. Every entry added or deleted is
 * counted (bw_cg_count), the agents' half here.
 */

/*
 * How full bw_cgroups is: entries of agents (at most BW_MAX_CGROUPS), and
 * of cgroups made below governed ones, in all and by the slot they are
 * charged to, with the limits in force (include/bpfwarden.h).
 */
struct bw_cg_fill {
	int64_t agent;
	int64_t made;
	uint32_t made_max;
	uint32_t per_slot;
	int64_t made_by_slot[BW_MAX_POLICIES];
};
int bw_cgroups_fill(struct bw_maps *m, struct bw_cg_fill *f);

/* Who governs this cgroup: its entry, or -ENOENT. */
int bw_governor(struct bw_maps *m, uint64_t cgroup_id, struct bw_cgroup *out);
/* Call fn for every governed cgroup; a non-zero return stops and is returned. */
typedef int (*bw_governed_fn)(uint64_t cgroup_id, const struct bw_cgroup *v, void *arg);
int bw_governed_each(struct bw_maps *m, bw_governed_fn fn, void *arg);

/*
 * Govern dir and every cgroup below it with slot in mode. -EEXIST, and
 * nothing changed, when dir is governed already (its entry in *cur).
 */
int bw_govern(struct bw_maps *m, const char *dir, uint32_t slot, enum bw_mode mode,
	      struct bw_cgroup *cur);
/*
 * Govern every cgroup below root (root too) that nothing governs yet, except
 * the subtree skip_subtree (absolute, or NULL) and the one cgroup
 * skip_cgroup (its children are governed). *n: how many were taken.
 */
int bw_govern_all(struct bw_maps *m, const char *root, uint32_t slot, enum bw_mode mode,
		  const char *skip_subtree, uint64_t skip_cgroup, int *n);
/*
 * Switch every governed cgroup of dir's subtree to mode, each keeping its
 * slot. *n: how many; -ENOENT when none was governed.
 */
int bw_govern_set_mode(struct bw_maps *m, const char *dir, enum bw_mode mode, int *n);
/*
 * Sent by bw_ungovern, bw_govern_replace and bw_govern_repoint to the agent
 * owning the slot they took cgroups from (bw_policy.owner_pid), unless it is
 * the caller: its loop wakes up and sees (bw_session_loop). Ignored by
 * default: a stale owner_pid's new process is not harmed.
 */
#define BW_NUDGE_SIGNAL SIGURG

/*
 * Replace the profile of a governed subtree: every entry of dir's subtree
 * that points at the slot governing dir now (returned in *old) is pointed
 * at slot, in mode, one 8-byte entry at a time. A decision reads its
 * cgroup's entry once and every rule, pin and default of the one slot it
 * names: it is the old profile's or the new one's, never a mix. The old
 * slot is emptied by its agent once it sees it has been replaced (or here,
 * when that agent is dead). -ENOENT when dir is not governed, -EALREADY
 * when slot governs it already.
 */
int bw_govern_replace(struct bw_maps *m, const char *dir, uint32_t slot, enum bw_mode mode,
		      uint32_t *old);
/*
 * Let dir and every cgroup below it go. *slot (if not NULL and not UINT32_MAX)
 * names the slot whose entries go; otherwise the slot of the first governed
 * cgroup found, returned in *slot. Entries of other slots stay. -ENOENT when
 * nothing there was governed.
 */
int bw_ungovern(struct bw_maps *m, const char *dir, uint32_t *slot);

/*
 * Govern dir from its first exec on (bw_pending; the kernel's exec hook
 * moves the entry to bw_cgroups): a container whose runtime is still
 * setting it up. -EEXIST when it is governed or waiting already.
 */
int bw_govern_pending(struct bw_maps *m, const char *dir, uint32_t slot, enum bw_mode mode,
		      struct bw_cgroup *cur);
/*
 * Point every cgroup of dir's subtree that slot from governs at slot to,
 * each keeping its mode (a profile replaced by its new version). *n: how many.
 */
int bw_govern_repoint(struct bw_maps *m, const char *dir, uint32_t from, uint32_t to, int *n);

#endif
