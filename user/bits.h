/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BW_BITS_H
#define BW_BITS_H

#include <linux/types.h>

#include "bpfwarden.h"

/*
 * bw_pinbits, bw_posbits and bw_govbits are set by the kernel too, so the
 * agent sets bits with atomic ORs on the map's memory: map, set, unmap.
 * NULL (errno) when the map cannot be mapped.
 */
#define BW_BITS_SIZE (BW_PINBITS_WORDS * sizeof(__u64))
__u64 *bw_bits_map(int map_fd);
void bw_bits_set(__u64 *bits, __u64 ino);
void bw_bits_unmap(__u64 *bits);

#endif
