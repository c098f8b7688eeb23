// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "events.h"
#include "jsonw.h"
#include "mounts.h"
#include "util.h"

static const char *const op_names[BW_OP_MAX] = {
    [BW_OP_OPEN] = "open",	    [BW_OP_TRUNCATE] = "truncate", [BW_OP_CREATE] = "create",
    [BW_OP_MKDIR] = "mkdir",	    [BW_OP_RMDIR] = "rmdir",	   [BW_OP_UNLINK] = "unlink",
    [BW_OP_RENAME_FROM] = "rename", [BW_OP_RENAME_TO] = "rename",  [BW_OP_LINK] = "link",
    [BW_OP_SYMLINK] = "symlink",    [BW_OP_CHMOD] = "chmod",	   [BW_OP_CHOWN] = "chown",
    [BW_OP_UTIMES] = "utimes",	    [BW_OP_EXEC] = "exec",	   [BW_OP_CONNECT] = "connect",
    [BW_OP_BIND] = "bind",	    [BW_OP_SENDMSG] = "sendmsg",   [BW_OP_SOCKET] = "socket",
};

const char *bw_op_name(unsigned op)
{
	return op < BW_OP_MAX && op_names[op] ? op_names[op] : "unknown";
}

static int64_t boot_to_real(void)
{
	struct timespec rt, bt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	return (rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
}

static void format_ts(char *buf, size_t len, int64_t real_ns)
{
	time_t sec = real_ns / 1000000000LL;
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(real_ns % 1000000000LL));
}

static void put_ts(struct jw *w, int64_t real_ns)
{
	char ts[64];

	format_ts(ts, sizeof(ts), real_ns);
	jw_str(w, "ts", ts);
}

static int64_t now_real(void)
{
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	return rt.tv_sec * 1000000000LL + rt.tv_nsec;
}

static const char *type_name(unsigned t)
{
	return t == BW_EV_DENY	  ? "deny"
	       : t == BW_EV_AUDIT ? "audit"
	       : t == BW_EV_LEARN ? "learn"
				  : "unknown";
}

static void put_cgroup(struct jw *w, uint64_t id, const char *path)
{
	jw_obj(w, "cgroup");
	jw_u64(w, "id", id);
	jw_str(w, "path", path);
	jw_end(w);
}

/* family, proto, addr and port of a network event (struct bw_net_obj). */
static void put_net(struct jw *w, const char *data, size_t len)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct bw_net_obj o;
	char addr[INET6_ADDRSTRLEN];

	if (len < sizeof(o))
		return;
	memcpy(&o, data, sizeof(o));
	jw_str(w, "family", o.family == 6 ? "ipv6" : "ipv4");
	jw_str(w, "proto", o.proto == IPPROTO_UDP ? "udp" : "tcp");
	/* The address the rules were matched against: IPv4, or mapped IPv4, as a.b.c.d. */
	if (!memcmp(o.addr, mapped, sizeof(mapped)))
		inet_ntop(AF_INET, o.addr + 12, addr, sizeof(addr));
	else
		inet_ntop(AF_INET6, o.addr, addr, sizeof(addr));
	jw_str(w, "addr", addr);
	jw_u64(w, "port", o.port);
}

/* A raw or packet socket: family, type and protocol (struct bw_net_obj). */
static void put_socket(struct jw *w, const char *data, size_t len)
{
	struct bw_net_obj o;

	if (len < sizeof(o))
		return;
	memcpy(&o, data, sizeof(o));
	jw_str(w, "family", o.family == AF_PACKET ? "packet" : o.family == 6 ? "ipv6" : "ipv4");
	jw_str(w, "socket_type",
	       o.proto == SOCK_RAW     ? "raw"
	       : o.proto == SOCK_DGRAM ? "dgram"
				       : "other");
	jw_u64(w, "protocol", o.port);
}

void bw_event_format(struct bw_events *e, const struct bw_event *ev, const char *path,
		     const char *exe, const char *cgroup_path, struct jw *w)
{
	char access[4] = "", rule[PATH_MAX + 16];
	int n = 0;

	if (ev->access & BW_ACC_R)
		access[n++] = 'r';
	if (ev->access & BW_ACC_W)
		access[n++] = 'w';
	if (ev->access & BW_ACC_X)
		access[n++] = 'x';
	access[n] = '\0';
	if (ev->rule && e->profile && ev->rule <= e->profile->nrules)
		bw_origin_format(&e->profile->rules[ev->rule - 1].origin, rule, sizeof(rule));
	else if (ev->rule)
		snprintf(rule, sizeof(rule), "#%u", ev->rule);
	else
		snprintf(rule, sizeof(rule), "default");

	jw_begin(w);
	put_ts(w, (int64_t)ev->ts_boot_ns + e->boot_to_real_ns);
	jw_str(w, "type", type_name(ev->type));
	jw_str(w, "op", bw_op_name(ev->op));
	jw_str(w, "decision", ev->decision == BW_V_DENY ? "deny" : "allow");
	/* The mode the kernel decided under: it can change under a running agent. */
	jw_str(w, "mode",
	       ev->mode == BW_MODE_AUDIT   ? "audit"
	       : ev->mode == BW_MODE_LEARN ? "learn"
					   : "enforce");
	put_cgroup(w, ev->cgroup_id, cgroup_path);
	jw_obj(w, "proc");
	jw_u64(w, "pid", ev->pid);
	jw_u64(w, "tid", ev->tid);
	jw_u64(w, "ppid", ev->ppid);
	jw_u64(w, "uid", ev->uid);
	jw_u64(w, "gid", ev->gid);
	jw_strn(w, "comm", ev->comm, strnlen(ev->comm, sizeof(ev->comm)));
	jw_str(w, "exe", exe);
	jw_end(w);
	if (ev->flags & BW_EVF_UNIX) {
		jw_str(w, "family", "unix");
		jw_strn(w, "unix", path, ev->path_len);
	} else if (ev->op == BW_OP_SOCKET) {
		put_socket(w, path, ev->path_len);
	} else if (ev->op == BW_OP_CONNECT || ev->op == BW_OP_BIND || ev->op == BW_OP_SENDMSG) {
		put_net(w, path, ev->path_len);
	} else {
		jw_strn(w, "path", path, ev->path_len);
		jw_str(w, "access", access);
	}
	if (ev->args_len) {
		const char *a = path + ev->path_len, *end = a + ev->args_len;

		jw_arr(w, "args");
		while (a < end) {
			size_t l = strnlen(a, end - a);

			jw_strn(w, NULL, a, l);
			a += l + 1;
		}
		jw_end_arr(w);
	}
	if (ev->op == BW_OP_RENAME_FROM || ev->op == BW_OP_RENAME_TO)
		jw_str(w, "end", ev->op == BW_OP_RENAME_FROM ? "from" : "to");
	jw_str(w, "profile", e->profile && e->profile->name ? e->profile->name : "");
	jw_str(w, "rule", rule);
	if (ev->flags & BW_EVF_PATH_TOO_LONG)
		jw_bool(w, "path_too_long", 1);
	if (ev->flags & BW_EVF_INODE_PIN)
		jw_bool(w, "by_inode", 1);
	if (ev->flags & BW_EVF_UNREACHABLE)
		jw_bool(w, "pseudo_file", 1);
	if (ev->flags & BW_EVF_FS_RELATIVE)
		jw_bool(w, "path_from_fs_root", 1);
	jw_end(w);
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

static void kill_cgroup(struct bw_events *e)
{
	char path[PATH_MAX + 16];
	int ret;

	if (e->killed)
		return;
	e->killed = 1;
	snprintf(path, sizeof(path), "%s/cgroup.kill", e->cgroup_dir);
	ret = bw_write_file(path, "1");
	if (ret)
		bw_err("on-deny kill: cannot write %s: %s", path, strerror(-ret));
	else
		bw_events_agent(e, "on-deny kill: killed every process of the governed cgroup");
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
	struct dev_mount d = {makedev(dev >> 20, dev & 0xfffff), out, len};
	int ret = bw_mounts_each(is_dev_root, &d);

	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

static int handle(void *ctx, void *data, size_t size)
{
	struct bw_events *e = ctx;
	struct bw_event head;
	const struct bw_event *ev = &head;
	char exe[PATH_MAX] = "", link[64], cgpath[PATH_MAX];
	const char *path;
	struct jw w;
	ssize_t n;

	if (size < sizeof(head))
		return 0;
	memcpy(&head, data, sizeof(head)); /* the ring buffer is mapped read-only */
	if (size < sizeof(head) + head.path_len + head.args_len)
		return 0;
	path = (const char *)data + sizeof(*ev);
	if (ev->flags & BW_EVF_FS_RELATIVE) {
		static char full[2 * PATH_MAX];
		char mnt[PATH_MAX];
		int n;

		if (!head.args_len && !mount_of_dev(ev->dev, mnt, sizeof(mnt))) {
			n = snprintf(full, sizeof(full), "%s%.*s", mnt, (int)ev->path_len, path);
			if (n > 1 && full[n - 1] == '/')
				full[--n] = '\0';
			path = full;
			head.path_len = n < (int)sizeof(full) ? n : (int)sizeof(full) - 1;
		}
	}
	/* Best effort: the process may be gone by now. */
	snprintf(link, sizeof(link), "/proc/%u/exe", ev->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	cgroup_path_of(e, ev->cgroup_id, cgpath, sizeof(cgpath));

	jw_init(&w);
	bw_event_format(e, ev, path, exe, cgpath, &w);
	if (jw_write_line(&w, e->log_fd))
		bw_err("cannot write the audit log: %s", strerror(errno));
	jw_free(&w);

	if (ev->type == BW_EV_DENY) {
		e->denials++;
		if (e->on_deny)
			e->on_deny(e->learn_ctx, ev, path, exe);
		if (e->kill_on_deny)
			kill_cgroup(e);
	} else if (ev->type == BW_EV_AUDIT) {
		e->audits++;
	} else {
		e->learned++;
		if (e->on_learn)
			e->on_learn(e->learn_ctx, ev, path, exe);
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

	return n == -EINTR ? 0 : n;
}

static void put_lost(struct bw_events *e, uint64_t count, const char *reason)
{
	struct jw w;

	jw_init(&w);
	jw_begin(&w);
	put_ts(&w, now_real());
	jw_str(&w, "type", "lost");
	jw_u64(&w, "count", count);
	jw_str(&w, "reason", reason);
	put_cgroup(&w, e->cgroup_id, bw_cgroup_rel(e->cgroup_dir));
	jw_str(&w, "profile", e->profile && e->profile->name ? e->profile->name : "");
	jw_end(&w);
	jw_write_line(&w, e->log_fd);
	jw_free(&w);
}

void bw_events_check_lost(struct bw_events *e)
{
	int ncpu = libbpf_num_possible_cpus();
	struct bw_counters *c;
	uint64_t lost = 0, throttled = 0;
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
}

void bw_events_agent(struct bw_events *e, const char *msg)
{
	struct jw w;

	jw_init(&w);
	jw_begin(&w);
	put_ts(&w, now_real());
	jw_str(&w, "type", "agent");
	jw_str(&w, "msg", msg);
	put_cgroup(&w, e->cgroup_id, bw_cgroup_rel(e->cgroup_dir));
	jw_str(&w, "profile", e->profile && e->profile->name ? e->profile->name : "");
	jw_end(&w);
	jw_write_line(&w, e->log_fd);
	jw_free(&w);
}

void bw_events_close(struct bw_events *e)
{
	ring_buffer__free(e->rb);
	e->rb = NULL;
}
