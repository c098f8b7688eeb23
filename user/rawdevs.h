/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The block devices that hold the host's files (bw_rawdevs in
 * bpf/maps.bpf.h), which no governed process may open: reading one reads
 * every file on it, those under deny rules and other sandboxes' included.
 */
#ifndef BW_RAWDEVS_H
#define BW_RAWDEVS_H

#include "loader.h"

/*
 * Write the set into bw_rawdevs, replacing what was there: the source of
 * every mounted file system of the host's first process's mount table and
 * of ours, every active swap device, the whole disk of each of these that
 * is a partition, and the devices under each that is a device-mapper or md
 * device, down the stack. The caller holds the agents' lock. Returns 0 or
 * -errno.
 */
int bw_rawdevs_sync(struct bw_maps *m);

/*
 * A descriptor of our mount table that poll(2) reports with POLLPRI when a
 * mount changes, or -1; after such a report bw_rawdevs_rearm() reads it
 * through, so that the next change is reported again.
 */
int bw_rawdevs_watch(void);
void bw_rawdevs_rearm(int fd);

#endif
