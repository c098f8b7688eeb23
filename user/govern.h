/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A compiled profile goes into a policy slot (its trie keys, inode pins,
 * settings and ring buffer), then cgroups are pointed at the slot. Rules
 * are in place before any cgroup refers to them, and a cgroup is let go
 * before its slot is emptied, so no governed cgroup ever sees half a policy.
 */
#ifndef BW_GOVERN_H
#define BW_GOVERN_H

#include <stdint.h>
#include "compile.h"
#include "loader.h"

struct bw_slot {
	uint32_t id;
	int rb_fd; /* this slot's ring buffer, owned by the caller */
	size_t pins_resolved;
	int link_scan_incomplete; /* the hard-link scan of denied directories hit its bound */
};

/* Take a free slot and fill it; pins are resolved against the caller's view of paths. */
int bw_slot_install(struct bw_maps *m, const struct bw_compiled *c, struct bw_slot *slot);
/* Empty a slot: its keys, pins and ring buffer. No cgroup may refer to it. */
int bw_slot_release(struct bw_maps *m, uint32_t id);

/* Govern dir and every cgroup below it with slot in mode (enum bw_mode). */
int bw_govern(struct bw_maps *m, const char *dir, uint32_t slot, uint8_t mode);
/*
 * Let dir and every cgroup below it go. *slot (if not NULL and not UINT32_MAX)
 * names the slot whose entries go; otherwise the slot of the first governed
 * cgroup found, returned in *slot. Entries of other slots stay. -ENOENT when
 * nothing there was governed.
 */
int bw_ungovern(struct bw_maps *m, const char *dir, uint32_t *slot);
/* Is any governed cgroup using slot? */
int bw_slot_referenced(struct bw_maps *m, uint32_t slot);

#endif
