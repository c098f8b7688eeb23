/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BW_UTIL_H
#define BW_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "bpfwarden.h"

extern bool bw_verbose;

/* A user-space dev_t as the kernel's, which pins and events carry. */
static inline uint32_t bw_kdev(dev_t d)
{
	return bw_dev_encode(major(d), minor(d));
}

/* Messages for people: prefixed with the program name, on stderr. */
#define bw_err(fmt, ...)  fprintf(stderr, "bpfwarden: " fmt "\n", ##__VA_ARGS__)
#define bw_info(fmt, ...) fprintf(stderr, "bpfwarden: " fmt "\n", ##__VA_ARGS__)
#define bw_dbg(fmt, ...)                                                                           \
	do {                                                                                       \
		if (bw_verbose)                                                                    \
			fprintf(stderr, "bpfwarden: " fmt "\n", ##__VA_ARGS__);                    \
	} while (0)

int bw_write_file(const char *path, const char *text);
/* Read up to len-1 bytes of a small file; returns bytes read or -errno. */
int bw_read_file(const char *path, char *buf, size_t len);

/*
 * An index from keys to item numbers, for the sets a profile makes per rule
 * (pins, positions) where a linear search per item made starting a large
 * profile quadratic. Open addressing; the caller keeps the items, hashes
 * them and compares them.
 */
struct bw_index {
	size_t *slot; /* item number + 1; 0 is an empty slot */
	size_t cap;   /* a power of two, or 0 */
	size_t n;
};

uint64_t bw_hash(const void *p, size_t len);
/*
 * The slot of the item for which eq(item, ctx) holds, or the empty slot where
 * such an item goes (store its number + 1 there and count it in n). Call
 * bw_index_reserve() first: a full index has no empty slot.
 */
size_t *bw_index_slot(const struct bw_index *ix, uint64_t hash,
		      int (*eq)(size_t item, const void *ctx), const void *ctx);
/* Room for one more item; hash(item, ctx) rehashes those in. 0 or -ENOMEM. */
int bw_index_reserve(struct bw_index *ix, uint64_t (*hash)(size_t item, const void *ctx),
		     const void *ctx);
void bw_index_free(struct bw_index *ix);

#endif
