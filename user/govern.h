/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Cgroups pointed at policy slots (user/slot.h fills those): the entries
 * of bw_cgroups and bw_pending that tell the kernel which profile governs
 * a cgroup, and in which mode. A cgroup is let go before its slot is
 * emptied, so no governed cgroup ever sees half a policy.
 */
#ifndef BW_GOVERN_H
#define BW_GOVERN_H

#include <signal.h>
#include <stdint.h>
#include "loader.h"
#include "slot.h"

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
