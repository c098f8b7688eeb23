// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

bool bw_verbose;

int bw_write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
	return ret;
}

int bw_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* FNV-1a, 64 bits: keys are short (a path, a 16-byte inode key). */
uint64_t bw_hash(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

size_t *bw_index_slot(const struct bw_index *ix, uint64_t hash,
		      int (*eq)(size_t item, const void *ctx), const void *ctx)
{
	size_t i = hash & (ix->cap - 1);

	while (ix->slot[i] && !eq(ix->slot[i] - 1, ctx))
		i = (i + 1) & (ix->cap - 1);
	return &ix->slot[i];
}

int bw_index_reserve(struct bw_index *ix, uint64_t (*hash)(size_t item, const void *ctx),
		     const void *ctx)
{
	size_t cap, i, j, *slot;

	/* At most half full, so that a probe ends soon. */
	if ((ix->n + 1) * 2 <= ix->cap)
		return 0;
	cap = ix->cap ? ix->cap * 2 : 64;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (i = 0; i < ix->cap; i++) {
		if (!ix->slot[i])
			continue;
		j = hash(ix->slot[i] - 1, ctx) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = ix->slot[i];
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	return 0;
}

void bw_index_free(struct bw_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
	ix->cap = ix->n = 0;
}
