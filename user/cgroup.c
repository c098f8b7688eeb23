// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "mounts.h"
#include "util.h"

static char root_cache[PATH_MAX];

static int find_cgroup2(const struct bw_mount *m, void *arg)
{
	if (strcmp(m->fstype, "cgroup2"))
		return 0;
	snprintf(root_cache, sizeof(root_cache), "%s", m->target);
	return 1;
}

int bw_cgroup_root(char *buf, size_t len)
{
	if (!root_cache[0]) {
		int ret = bw_mounts_each(find_cgroup2, NULL);

		if (ret < 0)
			return ret;
		if (!root_cache[0])
			return -ENOENT;
	}
	if ((size_t)snprintf(buf, len, "%s", root_cache) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int bw_cgroup_resolve(const char *path, char *out, size_t len)
{
	char root[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	int ret;

	ret = bw_cgroup_root(root, sizeof(root));
	if (ret)
		return ret;
	if (path[0] == '/' && !strncmp(path, root, strlen(root)) &&
	    (path[strlen(root)] == '/' || path[strlen(root)] == '\0'))
		ret = snprintf(out, len, "%s", path);
	else
		ret = snprintf(out, len, "%s/%s", root, path + (path[0] == '/'));
	if ((size_t)ret >= len)
		return -ENAMETOOLONG;
	/* Drop a trailing slash so that paths compare and print the same. */
	ret = strlen(out);
	while (ret > 1 && out[ret - 1] == '/')
		out[--ret] = '\0';
	if (stat(out, &st) || statfs(out, &sfs))
		return -errno;
	/* By its file system, not its name: "ROOT/../cpu" may be a v1 hierarchy's. */
	if (!S_ISDIR(st.st_mode) || sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -ENOTDIR;
	return 0;
}

int bw_cgroup_self(char *out, size_t len)
{
	char root[PATH_MAX], buf[PATH_MAX + 8], *p;
	int ret;

	ret = bw_cgroup_root(root, sizeof(root));
	if (ret)
		return ret;
	if (bw_read_file("/proc/self/cgroup", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	/* cgroup v2 is the "0::/path" line. */
	p = strstr(buf, "0::");
	if (!p || (p != buf && p[-1] != '\n'))
		return -ENOENT;
	p += 3;
	p[strcspn(p, "\n")] = '\0';
	if ((size_t)snprintf(out, len, "%s%s", root, strcmp(p, "/") ? p : "") >= len)
		return -ENAMETOOLONG;
	return 0;
}

int bw_cgroup_arg(const char *path, char *out, size_t len)
{
	char root[PATH_MAX];
	const char *why;
	int ret;

	ret = bw_cgroup_resolve(path, out, len);
	if (!ret)
		return 0;
	why = ret == -ENOTDIR ? "not a directory of the cgroup v2 file system" : strerror(-ret);
	if (bw_cgroup_root(root, sizeof(root)))
		bw_err("%s is not a cgroup v2 directory: no cgroup v2 file system is mounted",
		       path);
	else if (strcmp(out, path))
		/* A path outside the mount is taken under it: say where it was looked for. */
		bw_err(
		    "%s is not a cgroup v2 directory: %s (%s taken under the cgroup v2 mount %s)",
		    path, why, out, root);
	else
		bw_err("%s is not a cgroup v2 directory: %s", path, why);
	return ret;
}

const char *bw_cgroup_rel(const char *abs)
{
	char root[PATH_MAX];
	size_t n;

	if (bw_cgroup_root(root, sizeof(root)))
		return abs;
	n = strlen(root);
	if (strncmp(abs, root, n))
		return abs;
	return abs[n] ? abs + n : "/";
}

/* nftw passes no argument of ours: the current walk, saved and restored so walks can nest. */
static struct walk {
	bw_cgroup_fn fn;
	void *arg;
	int ret;
} * cur_walk;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct walk *w = cur_walk;
	uint64_t id = 0;
	int ret;

	/* Files, and directories removed or unreadable while we walk. */
	if (type != FTW_D)
		return FTW_CONTINUE;
	ret = bw_cgroup_id(path, &id);
	if (ret == -ENOENT && ftw->level > 0)
		return FTW_SKIP_SUBTREE;
	if (!ret)
		ret = w->fn(path, id, w->arg);
	if (ret == BW_WALK_PRUNE)
		return FTW_SKIP_SUBTREE;
	if (ret) {
		w->ret = ret;
		return FTW_STOP;
	}
	return FTW_CONTINUE;
}

int bw_cgroup_walk(const char *dir, bw_cgroup_fn fn, void *arg)
{
	struct walk w = {fn, arg, 0}, *saved = cur_walk;
	int ret, tries = 0;

	cur_walk = &w;
	/*
	 * nftw gives up when a directory goes between its stat and its
	 * opendir, which a cgroup removed at that moment does: walk again
	 * while dir itself is there (fn is then called again for cgroups it
	 * has seen; every fn here is idempotent).
	 * FTW_MOUNT: a cgroup tree is one file system, anything mounted
	 * inside it is not ours.
	 */
	do
		ret = nftw(dir, walk_one, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL) ? -errno : 0;
	while (ret == -ENOENT && !w.ret && ++tries < 4 && !access(dir, F_OK));
	cur_walk = saved;
	return w.ret ? w.ret : ret;
}

struct find_arg {
	uint64_t id;
	char *out;
	size_t len;
};

static int find_fn(const char *path, uint64_t id, void *arg)
{
	struct find_arg *a = arg;

	if (id != a->id)
		return 0;
	snprintf(a->out, a->len, "%s", path);
	return BW_WALK_STOP;
}

int bw_cgroup_find(const char *root, uint64_t id, char *out, size_t len)
{
	struct find_arg a = {id, out, len};

	return bw_cgroup_walk(root, find_fn, &a) == BW_WALK_STOP ? 0 : -ENOENT;
}

static int all_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return n > 0;
}

void bw_cgroup_unit(const char *path, char *out, size_t len)
{
	static const char *const runtimes[] = {"docker-", "cri-containerd-", "crio-", "libpod-"};
	const char *last = strrchr(path, '/');
	size_t n, i;

	out[0] = '\0';
	last = last ? last + 1 : path;
	n = strlen(last);
	for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		size_t k = strlen(runtimes[i]);

		if (!strncmp(last, runtimes[i], k) && n > k + 6 &&
		    !strcmp(last + n - 6, ".scope") && all_hex(last + k, n - k - 6)) {
			snprintf(out, len, "container %.12s", last + k);
			return;
		}
	}
	if (strstr(path, "kubepods") && n == 64 && all_hex(last, n)) {
		snprintf(out, len, "container %.12s", last);
		return;
	}
	if (n > 8 && !strcmp(last + n - 8, ".service"))
		snprintf(out, len, "service %.*s", (int)(n - 8), last);
	else if (n > 6 && !strcmp(last + n - 6, ".scope"))
		snprintf(out, len, "scope %.*s", (int)(n - 6), last);
}
