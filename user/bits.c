// SPDX-License-Identifier: GPL-2.0-only
#include <stddef.h>
#include <sys/mman.h>

#include "bits.h"

__u64 *bw_bits_map(int map_fd)
{
	void *p = mmap(NULL, BW_BITS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

void bw_bits_set(__u64 *bits, __u64 ino)
{
	__atomic_fetch_or(&bits[bw_pinbits_word(ino)], bw_pinbits_bit(ino), __ATOMIC_RELAXED);
}

void bw_bits_unmap(__u64 *bits)
{
	munmap(bits, BW_BITS_SIZE);
}
