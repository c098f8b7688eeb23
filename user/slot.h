/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A policy slot holds one installed profile for the kernel: its trie keys
 * (user/compile.c made them), the pins and positions of its rules' objects
 * (user/pins.c, user/positions.c, resolved here in each view of paths), its
 * settings and its ring buffer. Rules are in place before any cgroup refers
 * to the slot (user/govern.c points cgroups at it), and a slot is emptied
 * only once no cgroup does, so no governed cgroup ever sees half a policy.
 */
#ifndef BW_SLOT_H
#define BW_SLOT_H

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
 * Empty slot id if its agent is dead and nothing refers to it any more (a
 * slot whose cgroups were all taken over). The caller holds bw_lock.
 */
void bw_slot_reclaim_orphan(struct bw_maps *m, uint32_t id);

#endif
