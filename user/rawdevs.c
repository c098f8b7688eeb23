// SPDX-License-Identifier: GPL-2.0-only
/* The block devices that hold the host's files (rawdevs.h says why). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfwarden.h"
#include "mounts.h"
#include "rawdevs.h"
#include "util.h"

/* Devices in the set (the kernel's dev_t); a device-mapper stack is a few deep. */
#define BW_STACK_DEPTH 8

struct devset {
	uint32_t *dev;
	size_t n, cap;
};

static bool devset_has(const struct devset *s, uint32_t dev)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->dev[i] == dev)
			return true;
	return false;
}

static int devset_put(struct devset *s, uint32_t dev)
{
	if (!dev || devset_has(s, dev))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint32_t *more = realloc(s->dev, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		s->dev = more;
		s->cap = cap;
	}
	s->dev[s->n++] = dev;
	return 0;
}

/* The kernel's dev_t in a sysfs "dev" file (MAJ:MIN), 0 if none. */
static uint32_t sysfs_dev(const char *dir)
{
	char path[PATH_MAX];
	unsigned ma, mi;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/dev", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fscanf(f, "%u:%u", &ma, &mi);
	fclose(f);
	return n == 2 ? bw_dev_encode(ma, mi) : 0;
}

/*
 * dev, the whole disk when it is a partition, and what lies under it
 * (sysfs "slaves": a device-mapper or md device's devices), down the stack.
 */
static int put_stack(struct devset *s, uint32_t dev, int depth)
{
	char link[64], dir[PATH_MAX], sub[PATH_MAX + 300];
	struct dirent *de;
	DIR *d;
	int ret;

	if (devset_has(s, dev) || depth > BW_STACK_DEPTH)
		return 0;
	ret = devset_put(s, dev);
	if (ret)
		return ret;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", bw_dev_major(dev), bw_dev_minor(dev));
	if (!realpath(link, dir))
		return 0; /* not a block device of this host (a pseudo file system's) */
	snprintf(sub, sizeof(sub), "%s/partition", dir);
	if (!access(sub, F_OK)) {
		snprintf(sub, sizeof(sub), "%s/..", dir);
		ret = put_stack(s, sysfs_dev(sub), depth + 1);
		if (ret)
			return ret;
	}
	snprintf(sub, sizeof(sub), "%s/slaves", dir);
	d = opendir(sub);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		char lower[PATH_MAX + 600];

		if (de->d_name[0] == '.')
			continue;
		snprintf(lower, sizeof(lower), "%s/%s", sub, de->d_name);
		ret = put_stack(s, sysfs_dev(lower), depth + 1);
	}
	closedir(d);
	return ret;
}

/* A mount's block device: its dev_t when that is a device's, else its source's. */
static int put_mount(const struct bw_mount *m, void *arg)
{
	struct devset *s = arg;
	struct stat st;
	int ret = 0;

	if (major(m->dev))
		ret = put_stack(s, bw_kdev(m->dev), 0);
	/* btrfs and others give their mounts an anonymous dev_t: the source names the disk. */
	if (!ret && m->source && m->source[0] == '/' && !stat(m->source, &st) &&
	    S_ISBLK(st.st_mode))
		ret = put_stack(s, bw_kdev(st.st_rdev), 0);
	return ret;
}

static int put_swaps(struct devset *s)
{
	char line[PATH_MAX + 128], name[PATH_MAX];
	struct stat st;
	int ret = 0;
	FILE *f;

	f = fopen("/proc/swaps", "re");
	if (!f)
		return 0;
	/* The header, then "NAME TYPE SIZE USED PRIORITY"; spaces in names are \040. */
	while (!ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%4095s", name) == 1 && name[0] == '/' && !stat(name, &st) &&
		    S_ISBLK(st.st_mode))
			ret = put_stack(s, bw_kdev(st.st_rdev), 0);
	fclose(f);
	return ret;
}

int bw_rawdevs_sync(struct bw_maps *m)
{
	struct devset s = {};
	uint32_t key, next, all = BW_RAWDEVS_ALL;
	bool more, have_key;
	__u8 one = 1;
	size_t i;
	int ret;

	ret = bw_mounts_each_in("/proc/1/mountinfo", put_mount, &s);
	if (ret == -ENOENT || ret == -EACCES)
		ret = 0;
	if (!ret)
		ret = bw_mounts_each(put_mount, &s);
	if (!ret)
		ret = put_swaps(&s);
	if (ret)
		goto out;
	more = s.n > BW_MAX_RAWDEVS - 1;
	/* Those no longer in the set go, then the set goes in. */
	have_key = !bpf_map_get_next_key(m->rawdevs, NULL, &key);
	while (have_key) {
		bool stay = more ? key == all : devset_has(&s, key);

		have_key = !bpf_map_get_next_key(m->rawdevs, &key, &next);
		if (!stay)
			bpf_map_delete_elem(m->rawdevs, &key);
		key = next;
	}
	if (more && bpf_map_update_elem(m->rawdevs, &all, &one, BPF_ANY)) {
		ret = -errno;
		goto out;
	}
	for (i = 0; i < s.n && i < BW_MAX_RAWDEVS - 1; i++)
		if (bpf_map_update_elem(m->rawdevs, &s.dev[i], &one, BPF_ANY)) {
			ret = -errno;
			goto out;
		}
	if (!more)
		bpf_map_delete_elem(m->rawdevs, &all);
out:
	free(s.dev);
	return ret;
}

int bw_rawdevs_watch(void)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		bw_rawdevs_rearm(fd);
	return fd;
}

void bw_rawdevs_rearm(int fd)
{
	char buf[16384];

	lseek(fd, 0, SEEK_SET);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
}
