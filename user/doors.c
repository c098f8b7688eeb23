// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "doors.h"
#include "util.h"

#define CGROUP2_SUPER_MAGIC 0x63677270

/* The flags of descriptor fd of tid (its fdinfo "flags:" line, octal), or -1. */
static long fd_flags(pid_t tid, const char *fd)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", tid, fd);
	if (bw_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "flags:");
	return p ? strtol(p + 6, NULL, 8) : -1;
}

static bool moves_tasks(const char *target)
{
	const char *base = strrchr(target, '/');

	base = base ? base + 1 : target;
	return !strcmp(base, "cgroup.procs") || !strcmp(base, "cgroup.threads");
}

int bw_door_in_task(pid_t tid, bool cloexec, char *what, size_t len)
{
	char dir[64], target[PATH_MAX], path[96];
	struct dirent *de;
	struct statfs sfs;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", tid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ESRCH ? 0 : -errno;
	while (!found && (de = readdir(d))) {
		ssize_t n;
		long flags;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		/* Only the kernel names files so on cgroup2: the name goes first, it is cheap. */
		if (!moves_tasks(target))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (statfs(path, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
			continue;
		flags = fd_flags(tid, de->d_name);
		if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
			continue;
		if (!cloexec && (flags & O_CLOEXEC))
			continue;
		snprintf(what, len, "descriptor %s of process %d: %s", de->d_name, tid, target);
		found = 1;
	}
	closedir(d);
	return found;
}

struct door_walk {
	pid_t *seen; /* sorted */
	size_t n, cap;
	pid_t *fresh;
	size_t nfresh, capfresh;
};

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int push(pid_t **v, size_t *n, size_t *cap, pid_t p)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		pid_t *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = p;
	return 0;
}

/* Threads of one cgroup not seen in an earlier round. */
static int threads_of(const char *path, uint64_t id, void *arg)
{
	struct door_walk *w = arg;
	char file[PATH_MAX + 32];
	FILE *f;
	int tid, ret = 0;

	(void)id;
	snprintf(file, sizeof(file), "%s/cgroup.threads", path);
	f = fopen(file, "re");
	if (!f)
		return 0; /* removed meanwhile */
	while (!ret && fscanf(f, "%d", &tid) == 1) {
		pid_t t = tid;

		if (!bsearch(&t, w->seen, w->n, sizeof(pid_t), pid_cmp))
			ret = push(&w->fresh, &w->nfresh, &w->capfresh, t);
	}
	fclose(f);
	return ret;
}

/* Rounds before giving up on a subtree whose tasks keep multiplying. */
#define DOOR_ROUNDS 16

int bw_door_in_cgroup(const char *cgdir, bool cloexec, char *what, size_t len)
{
	struct door_walk w = {};
	int ret = 0, round;
	size_t i;

	for (round = 0; round < DOOR_ROUNDS; round++) {
		w.nfresh = 0;
		ret = bw_cgroup_walk(cgdir, threads_of, &w);
		if (ret || !w.nfresh)
			break;
		for (i = 0; i < w.nfresh && !ret; i++)
			ret = bw_door_in_task(w.fresh[i], cloexec, what, len);
		for (i = 0; i < w.nfresh && ret >= 0; i++)
			if (push(&w.seen, &w.n, &w.cap, w.fresh[i]))
				ret = -ENOMEM;
		if (ret)
			break;
		qsort(w.seen, w.n, sizeof(pid_t), pid_cmp);
	}
	if (round == DOOR_ROUNDS) {
		snprintf(what, len, "new tasks kept appearing in %s while their descriptors were "
			 "read", bw_cgroup_rel(cgdir));
		ret = -EAGAIN;
	}
	free(w.seen);
	free(w.fresh);
	return ret;
}
