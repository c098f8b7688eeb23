// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "event_line.h"
#include "events.h"
#include "inode_name.h"
#include "jsonw.h"
#include "mounts.h"
#include "util.h"

static int64_t boot_to_real(void)
{
	struct timespec rt, bt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	return (rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
}

static int64_t now_real(void)
{
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	return rt.tv_sec * 1000000000LL + rt.tv_nsec;
}

/* Recently named cgroups: finding one walks the governed subtree. */
#define BW_CG_CACHE 64
static struct {
	uint64_t id;
	char path[PATH_MAX];
} cg_cache[BW_CG_CACHE];

static void cgroup_path_of(struct bw_events *e, uint64_t id, char *out, size_t len)
{
	char abs[PATH_MAX];
	unsigned slot = id % BW_CG_CACHE;

	if (id == e->cgroup_id) {
		snprintf(out, len, "%s", bw_cgroup_rel(e->cgroup_dir));
		return;
	}
	if (cg_cache[slot].id == id) {
		snprintf(out, len, "%s", cg_cache[slot].path);
		return;
	}
	if (bw_cgroup_find(e->cgroup_dir, id, abs, sizeof(abs))) {
		/* Gone already: say which governed subtree it was in. */
		snprintf(out, len, "%s", bw_cgroup_rel(e->cgroup_dir));
		return;
	}
	snprintf(out, len, "%s", bw_cgroup_rel(abs));
	cg_cache[slot].id = id;
	snprintf(cg_cache[slot].path, sizeof(cg_cache[slot].path), "%s", out);
}

const char *bw_events_cgroup_path(struct bw_events *e, uint64_t id)
{
	static char path[PATH_MAX];

	cgroup_path_of(e, id, path, sizeof(path));
	return path;
}

static void kill_cgroup(struct bw_events *e, uint64_t cgroup_id)
{
	char path[PATH_MAX + 16], dir[PATH_MAX], msg[PATH_MAX + 128];
	int ret;

	if (!e->kill_target) {
		if (e->killed)
			return;
		e->killed = 1;
		snprintf(dir, sizeof(dir), "%s", e->cgroup_dir);
	} else {
		ret = e->kill_target(e->identify_ctx, cgroup_id, dir, sizeof(dir));
		if (ret) {
			snprintf(msg, sizeof(msg),
				 "on-deny kill: no governed cgroup found for cgroup %llu: %s",
				 (unsigned long long)cgroup_id, strerror(-ret));
			bw_events_agent(e, msg);
			return;
		}
		/* Its other denials, read before it was gone, end nothing more. */
		if (!strcmp(dir, e->killed_dir))
			return;
		snprintf(e->killed_dir, sizeof(e->killed_dir), "%s", dir);
	}
	snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
	ret = bw_write_file(path, "1");
	if (ret) {
		bw_err("on-deny kill: cannot write %s: %s", path, strerror(-ret));
		snprintf(msg, sizeof(msg), "on-deny kill: cannot write %s: %s", path,
			 strerror(-ret));
	} else {
		snprintf(msg, sizeof(msg),
			 "on-deny kill: killed every process of the governed cgroup %s",
			 bw_cgroup_rel(dir));
	}
	bw_events_agent(e, msg);
}

struct dev_mount {
	dev_t dev;
	char *out;
	size_t len;
};

static int is_dev_root(const struct bw_mount *m, void *arg)
{
	struct dev_mount *d = arg;

	if (m->dev != d->dev || strcmp(m->root, "/"))
		return 0;
	snprintf(d->out, d->len, "%s", strcmp(m->target, "/") ? m->target : "");
	return 1;
}

/*
 * Where the file system of a kernel dev_t is mounted (at its own root) in our
 * mount namespace, for events whose hook had no mount to name the path by.
 */
static int mount_of_dev(uint32_t dev, char *out, size_t len)
{
	struct dev_mount d = {makedev(bw_dev_major(dev), bw_dev_minor(dev)), out, len};
	int ret = bw_mounts_each(is_dev_root, &d);

	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

/*
 * The name of an object the kernel could not name in the process's view: a
 * path from its file system's root, prefixed with where that file system is
 * mounted here, or (a disconnected dentry) a path found by device and inode
 * (user/inode_name.c). Exec arguments follow the path: they move with it.
 * Returns what to print, with head->path_len updated; path as it was when
 * no better name is found.
 */
static const char *real_name(struct bw_events *e, struct bw_event *head, const char *path)
{
	static char full[2 * PATH_MAX + BW_EXEC_ARGS * BW_EXEC_ARG_LEN];
	char mnt[PATH_MAX];
	int n;

	if (head->flags & BW_EVF_DISCONNECTED) {
		if (bw_inode_name(e->profile, head->dev, head->ino, full, 2 * PATH_MAX))
			return path;
		n = strlen(full);
	} else {
		if (mount_of_dev(head->dev, mnt, sizeof(mnt)))
			return path;
		n = snprintf(full, 2 * PATH_MAX, "%s%.*s", mnt, (int)head->path_len, path);
		if (n < 0 || n >= 2 * PATH_MAX)
			return path;
		if (n > 1 && full[n - 1] == '/')
			full[--n] = '\0';
	}
	memcpy(full + n, path + head->path_len, head->args_len);
	head->path_len = n;
	return full;
}

/*
 * Our mount table, for naming the real object of an event whose process
 * sees names as the host does not (BW_EVF_REAL): read again when older
 * than a second, or when it has no mount of the object's file system.
 * Only names depend on it, never a decision: a mount changed within the
 * second may name the object by its old place.
 */
static struct {
	struct mtab_entry {
		uint32_t dev; /* bw_kdev */
		char *root, *target;
	} * m;
	size_t n, cap;
	time_t read_at;
} mtab;

static int mtab_add(const struct bw_mount *m, void *arg)
{
	struct mtab_entry *e;

	(void)arg;
	if (mtab.n == mtab.cap) {
		size_t cap = mtab.cap ? 2 * mtab.cap : 64;

		e = realloc(mtab.m, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		mtab.m = e;
		mtab.cap = cap;
	}
	e = &mtab.m[mtab.n];
	e->dev = bw_kdev(m->dev);
	e->root = strdup(m->root);
	e->target = strdup(m->target);
	if (!e->root || !e->target) {
		free(e->root);
		free(e->target);
		return -ENOMEM;
	}
	mtab.n++;
	return 0;
}

static void mtab_read(void)
{
	size_t i;

	for (i = 0; i < mtab.n; i++) {
		free(mtab.m[i].root);
		free(mtab.m[i].target);
	}
	mtab.n = 0;
	mtab.read_at = time(NULL);
	bw_mounts_each(mtab_add, NULL);
}

/*
 * The mount of dev whose root holds fs_path deepest (a bind mount of the
 * very directory wins over the file system's root), or NULL.
 */
static const struct mtab_entry *mtab_find(uint32_t dev, const char *fs_path)
{
	const struct mtab_entry *best = NULL;
	size_t i, n, bestlen = 0;

	for (i = 0; i < mtab.n; i++) {
		const struct mtab_entry *e = &mtab.m[i];

		if (e->dev != dev)
			continue;
		n = strcmp(e->root, "/") ? strlen(e->root) : 0;
		if (strncmp(fs_path, e->root, n) || (fs_path[n] != '/' && fs_path[n] != '\0'))
			continue;
		if (!best || n > bestlen) {
			best = e;
			bestlen = n;
		}
	}
	return best;
}

/*
 * The real object's name as we see it: the path from its file system's
 * root (len bytes at fs_path) below where that file system is mounted here.
 * Returns 0 with the name in out, or -ENOENT when it is not mounted here.
 */
static int real_of(uint32_t dev, const char *fs_path, size_t len, char *out, size_t outlen)
{
	char rel[PATH_MAX];
	const struct mtab_entry *e;
	const char *rest;
	int n;

	if (len >= sizeof(rel))
		return -ENAMETOOLONG;
	memcpy(rel, fs_path, len);
	rel[len] = '\0';
	if (time(NULL) != mtab.read_at)
		mtab_read();
	e = mtab_find(dev, rel);
	if (!e) {
		mtab_read();
		e = mtab_find(dev, rel);
	}
	if (!e)
		return -ENOENT;
	rest = rel + (strcmp(e->root, "/") ? strlen(e->root) : 0);
	n = snprintf(out, outlen, "%s%s", strcmp(e->target, "/") ? e->target : "", rest);
	if (n < 0 || (size_t)n >= outlen)
		return -ENAMETOOLONG;
	if (!n)
		snprintf(out, outlen, "/");
	return 0;
}

/*
 * Executables recently named, by the identity the kernel put in the event.
 * An entry is made only when /proc/PID/exe, read after the event, still
 * leads to the inode the kernel saw (same device and inode): then that name
 * was the acting program's, not one exec'd since, nor a reused PID's. Any
 * entry holds any program, replaced in turn: the last 64 programs named
 * are all there, whatever their inode numbers.
 */
#define BW_EXE_CACHE 64
static struct {
	uint64_t ino;
	uint32_t dev;
	char path[PATH_MAX];
} exe_cache[BW_EXE_CACHE];
static unsigned exe_cache_next;

/*
 * The executable of the process that acted in ev, into exe. From the cache
 * when its identity is there: the process may have exited (its exe can no
 * longer be read) or exec'd another program since, and reading it was two
 * fifths of an event's time. Otherwise /proc/PID/exe as it is now, "" when
 * the process is gone.
 */
static void exe_of(const struct bw_event *ev, char *exe, size_t len)
{
	/* dev and ino are the object's with these flags (include/bpfwarden.h). */
	bool known = !(ev->flags & (BW_EVF_FS_RELATIVE | BW_EVF_DISCONNECTED)) && ev->ino;
	char link[64];
	struct stat st;
	unsigned i;
	ssize_t n;

	for (i = 0; known && i < BW_EXE_CACHE; i++) {
		if (exe_cache[i].ino == ev->ino && exe_cache[i].dev == ev->dev) {
			snprintf(exe, len, "%s", exe_cache[i].path);
			return;
		}
	}
	snprintf(link, sizeof(link), "/proc/%u/exe", ev->pid);
	n = readlink(link, exe, len - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (n <= 0 || !known || stat(link, &st) || st.st_ino != ev->ino ||
	    bw_kdev(st.st_dev) != ev->dev)
		return;
	i = exe_cache_next++ % BW_EXE_CACHE;
	exe_cache[i].ino = ev->ino;
	exe_cache[i].dev = ev->dev;
	snprintf(exe_cache[i].path, sizeof(exe_cache[i].path), "%s", exe);
}

/*
 * The parent's command name and executable, as /proc has them when the
 * record is written ("" when it has gone: the pid is the kernel's, always).
 */
static void parent_of(uint32_t ppid, char *comm, size_t clen, char *exe, size_t elen)
{
	char path[64];
	ssize_t n;
	FILE *f;

	comm[0] = exe[0] = '\0';
	if (!ppid)
		return;
	snprintf(path, sizeof(path), "/proc/%u/comm", ppid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, (int)clen, f))
			comm[strcspn(comm, "\n")] = '\0';
		else
			comm[0] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%u/exe", ppid);
	n = readlink(path, exe, elen - 1);
	exe[n > 0 ? n : 0] = '\0';
}

/* Past this much waiting, the lines go out before the poll ends. */
#define BW_OUT_FLUSH (64 * 1024)

static void out_flush(struct bw_events *e)
{
	int ret = jw_flush(&e->out, e->log_fd);

	if (ret)
		bw_err("cannot write the audit log: %s", strerror(-ret));
}

/* e->line, just built, to the lines waiting for the end of the poll. */
static void out_line(struct bw_events *e)
{
	if (jw_append_line(&e->out, &e->line))
		bw_err("cannot write the audit log: %s", strerror(ENOMEM));
	if (e->out.len >= BW_OUT_FLUSH)
		out_flush(e);
}

static int handle(void *ctx, void *data, size_t size)
{
	struct bw_events *e = ctx;
	struct bw_event head;
	const struct bw_event *ev = &head;
	char exe[PATH_MAX], cgpath[PATH_MAX], real[PATH_MAX], pcomm[32], pexe[PATH_MAX];
	struct bw_event_src src = {.profile = e->profile, .cgroup_path = cgpath};
	size_t at = sizeof(head);
	struct bw_real_name rn;
	const char *path;
	bool here;

	if (size < sizeof(head))
		return 0;
	memcpy(&head, data, sizeof(head)); /* the ring buffer is mapped read-only */
	if (size < sizeof(head) + head.path_len + head.args_len)
		return 0;
	path = (const char *)data + sizeof(*ev);
	at += head.path_len + head.args_len;
	here = !(head.flags & BW_EVF_REAL);
	/* Named as well by where we see it, when that is another name. */
	if ((head.flags & BW_EVF_REAL) && size >= at + sizeof(rn)) {
		memcpy(&rn, (const char *)data + at, sizeof(rn));
		if (size >= at + sizeof(rn) + rn.len &&
		    !real_of(rn.dev, (const char *)data + at + sizeof(rn), rn.len, real,
			     sizeof(real))) {
			here = strlen(real) == head.path_len && !memcmp(real, path, head.path_len);
			if (!here)
				src.real_path = real;
		}
	}
	if (ev->flags & (BW_EVF_FS_RELATIVE | BW_EVF_DISCONNECTED))
		path = real_name(e, &head, path);
	exe_of(ev, exe, sizeof(exe));
	parent_of(ev->ppid, pcomm, sizeof(pcomm), pexe, sizeof(pexe));
	src.parent_comm = pcomm[0] ? pcomm : NULL;
	src.parent_exe = pexe[0] ? pexe : NULL;
	if (e->identify) {
		cgpath[0] = '\0';
		src.k8s = e->identify(e->identify_ctx, ev->cgroup_id, cgpath, sizeof(cgpath));
	} else {
		cgroup_path_of(e, ev->cgroup_id, cgpath, sizeof(cgpath));
	}

	bw_event_format(&e->line, ev, path, exe, e->boot_to_real_ns, &src);
	out_line(e);

	if (ev->type == BW_EV_DENY) {
		e->denials++;
		if (e->on_deny)
			e->on_deny(e->learn_ctx, ev, path, exe, here);
		if (e->kill_on_deny)
			kill_cgroup(e, ev->cgroup_id);
	} else if (ev->type == BW_EV_AUDIT) {
		e->audits++;
	} else {
		e->learned++;
		if (e->on_learn)
			e->on_learn(e->learn_ctx, ev, path, exe, here);
	}
	return 0;
}

int bw_events_open(struct bw_events *e, int rb_fd)
{
	e->boot_to_real_ns = boot_to_real();
	e->rb = ring_buffer__new(rb_fd, handle, e, NULL);
	if (!e->rb)
		return -errno;
	return 0;
}

int bw_events_poll(struct bw_events *e, int timeout_ms)
{
	int n = ring_buffer__poll(e->rb, timeout_ms);

	out_flush(e);
	return n == -EINTR ? 0 : n;
}

/* Where the agent's own records come from: the governed cgroup. */
static struct bw_event_src own_src(const struct bw_events *e)
{
	struct bw_event_src src = {.profile = e->profile, .cgroup_id = e->cgroup_id};

	src.cgroup_path = bw_cgroup_rel(e->cgroup_dir);
	return src;
}

static void put_lost(struct bw_events *e, uint64_t count, const char *reason)
{
	struct bw_event_src src = own_src(e);

	bw_event_format_lost(&e->line, now_real(), count, reason, &src);
	out_line(e);
	out_flush(e);
}

void bw_events_check_lost(struct bw_events *e)
{
	int ncpu = libbpf_num_possible_cpus();
	struct bw_counters *c;
	uint64_t lost = 0, throttled = 0, pins_lost = 0;
	int i;

	if (ncpu <= 0 || !e->maps)
		return;
	c = calloc(ncpu, sizeof(*c));
	if (!c)
		return;
	if (!bpf_map_lookup_elem(e->maps->counters, &e->slot, c)) {
		for (i = 0; i < ncpu; i++) {
			lost += c[i].lost;
			throttled += c[i].throttled;
			pins_lost += c[i].pins_lost;
		}
	}
	free(c);
	if (lost > e->lost_reported) {
		put_lost(e, lost - e->lost_reported, "ring buffer full or not read");
		e->lost += lost - e->lost_reported;
		e->lost_reported = lost;
	}
	if (throttled > e->throttled_reported) {
		put_lost(e, throttled - e->throttled_reported, "throttled");
		e->lost += throttled - e->throttled_reported;
		e->throttled_reported = throttled;
	}
	if (pins_lost > e->pins_lost_reported) {
		/* Not events: pins the kernel could not store, each an object left unpinned. */
		put_lost(e, pins_lost - e->pins_lost_reported,
			 "inode pins full: objects that appeared after load are not pinned");
		e->pins_lost_reported = pins_lost;
	}
}

void bw_events_agent(struct bw_events *e, const char *msg)
{
	struct bw_event_src src = own_src(e);

	/* After the records read before it (on-deny kill writes it inside a poll). */
	bw_event_format_agent(&e->line, now_real(), msg, &src);
	out_line(e);
	out_flush(e);
}

void bw_events_close(struct bw_events *e)
{
	out_flush(e);
	jw_free(&e->line);
	jw_free(&e->out);
	ring_buffer__free(e->rb);
	e->rb = NULL;
}
