// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel records, lost counts and the agent's own messages as JSON lines.
 * No clock, no /proc, no globals: event_line.h says what comes in.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <time.h>

#include "event_line.h"

static const char *const op_names[BW_OP_MAX] = {
    [BW_OP_OPEN] = "open",
    [BW_OP_TRUNCATE] = "truncate",
    [BW_OP_CREATE] = "create",
    [BW_OP_MKDIR] = "mkdir",
    [BW_OP_RMDIR] = "rmdir",
    [BW_OP_UNLINK] = "unlink",
    [BW_OP_RENAME_FROM] = "rename",
    [BW_OP_RENAME_TO] = "rename",
    [BW_OP_LINK] = "link",
    [BW_OP_SYMLINK] = "symlink",
    [BW_OP_CHMOD] = "chmod",
    [BW_OP_CHOWN] = "chown",
    [BW_OP_UTIMES] = "utimes",
    [BW_OP_EXEC] = "exec",
    [BW_OP_CONNECT] = "connect",
    [BW_OP_BIND] = "bind",
    [BW_OP_SENDMSG] = "sendmsg",
    [BW_OP_RECVMSG] = "recvmsg",
    [BW_OP_ACCEPT] = "accept",
    [BW_OP_SOCKET] = "socket",
    [BW_OP_MOUNT] = "mount",
    [BW_OP_UMOUNT] = "umount",
    [BW_OP_MOVE_MOUNT] = "move_mount",
    [BW_OP_PIVOT_ROOT] = "pivot_root",
    [BW_OP_CHROOT] = "chroot",
    [BW_OP_USERNS] = "userns",
    [BW_OP_FSOPEN] = "fsopen",
    [BW_OP_FSPICK] = "fspick",
    [BW_OP_FSMOUNT] = "fsmount",
    [BW_OP_OPEN_TREE] = "open_tree",
    [BW_OP_MOUNT_SETATTR] = "mount_setattr",
    [BW_OP_SETNS] = "setns",
    [BW_OP_CGROUP_MIGRATE] = "cgroup_migrate",
    [BW_OP_CGROUP_MKDIR] = "cgroup_mkdir",
    [BW_OP_SETXATTR] = "setxattr",
    [BW_OP_REMOVEXATTR] = "removexattr",
    [BW_OP_SETACL] = "setacl",
    [BW_OP_SETFLAGS] = "setflags",
    [BW_OP_MMAP] = "mmap",
    [BW_OP_MPROTECT] = "mprotect",
    [BW_OP_PTRACE] = "ptrace",
    [BW_OP_SIGNAL] = "signal",
    [BW_OP_CONTROL] = "control",
    [BW_OP_BPF] = "bpf",
    [BW_OP_RECEIVE] = "receive",
    [BW_OP_RECEIVE_NET] = "receive",
    [BW_OP_RECEIVE_SOCKET] = "receive",
    [BW_OP_RECEIVE_BPF] = "receive",
    [BW_OP_CAPABLE] = "capability",
    [BW_OP_MODULE] = "module",
    [BW_OP_PERF] = "perf",
};

/* bpf(2) commands by number (enum bpf_cmd, include/uapi/linux/bpf.h). */
static const char *const bpf_cmds[] = {
    "BPF_MAP_CREATE",	     "BPF_MAP_LOOKUP_ELEM",
    "BPF_MAP_UPDATE_ELEM",   "BPF_MAP_DELETE_ELEM",
    "BPF_MAP_GET_NEXT_KEY",  "BPF_PROG_LOAD",
    "BPF_OBJ_PIN",	     "BPF_OBJ_GET",
    "BPF_PROG_ATTACH",	     "BPF_PROG_DETACH",
    "BPF_PROG_TEST_RUN",     "BPF_PROG_GET_NEXT_ID",
    "BPF_MAP_GET_NEXT_ID",   "BPF_PROG_GET_FD_BY_ID",
    "BPF_MAP_GET_FD_BY_ID",  "BPF_OBJ_GET_INFO_BY_FD",
    "BPF_PROG_QUERY",	     "BPF_RAW_TRACEPOINT_OPEN",
    "BPF_BTF_LOAD",	     "BPF_BTF_GET_FD_BY_ID",
    "BPF_TASK_FD_QUERY",     "BPF_MAP_LOOKUP_AND_DELETE_ELEM",
    "BPF_MAP_FREEZE",	     "BPF_BTF_GET_NEXT_ID",
    "BPF_MAP_LOOKUP_BATCH",  "BPF_MAP_LOOKUP_AND_DELETE_BATCH",
    "BPF_MAP_UPDATE_BATCH",  "BPF_MAP_DELETE_BATCH",
    "BPF_LINK_CREATE",	     "BPF_LINK_UPDATE",
    "BPF_LINK_GET_FD_BY_ID", "BPF_LINK_GET_NEXT_ID",
    "BPF_ENABLE_STATS",	     "BPF_ITER_CREATE",
    "BPF_LINK_DETACH",	     "BPF_PROG_BIND_MAP",
    "BPF_TOKEN_CREATE",
};

const char *bw_op_name(unsigned op)
{
	return op < BW_OP_MAX && op_names[op] ? op_names[op] : "unknown";
}

static const char *type_name(unsigned t)
{
	return t == BW_EV_DENY	  ? "deny"
	       : t == BW_EV_AUDIT ? "audit"
	       : t == BW_EV_LEARN ? "learn"
				  : "unknown";
}

/* The mode the kernel decided under, as the record carries it. */
static const char *mode_name(unsigned m)
{
	return m == BW_MODE_ENFORCE ? "enforce"
	       : m == BW_MODE_AUDIT ? "audit"
	       : m == BW_MODE_LEARN ? "learn"
				    : "unknown";
}

/* The n decimal digits of v, zero-padded, at p; returns p + n. */
static char *digits(char *p, unsigned long long v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	return p + n;
}

/*
 * RFC 3339 in UTC with nanoseconds, "2026-12-02T01:45:45.200853746Z". Built
 * by hand: every record has one, and snprintf (here and in jw_u64) was about
 * a tenth of the agent's time per learn record.
 */
static void put_ts(struct jw *w, int64_t real_ns)
{
	time_t sec = real_ns / 1000000000LL;
	struct tm tm;
	char ts[40], *p = ts;

	gmtime_r(&sec, &tm);
	*p++ = '"';
	p = digits(p, (unsigned)(tm.tm_year + 1900) % 10000, 4);
	*p++ = '-';
	p = digits(p, tm.tm_mon + 1, 2);
	*p++ = '-';
	p = digits(p, tm.tm_mday, 2);
	*p++ = 'T';
	p = digits(p, tm.tm_hour, 2);
	*p++ = ':';
	p = digits(p, tm.tm_min, 2);
	*p++ = ':';
	p = digits(p, tm.tm_sec, 2);
	*p++ = '.';
	p = digits(p, (unsigned long long)(real_ns % 1000000000LL), 9);
	*p++ = 'Z';
	*p++ = '"';
	jw_raw(w, "ts", ts, p - ts);
}

static void put_cgroup(struct jw *w, uint64_t id, const char *path)
{
	jw_obj(w, "cgroup");
	jw_u64(w, "id", id);
	jw_str(w, "path", path);
	jw_end(w);
}

static void put_profile(struct jw *w, const struct bw_profile *p)
{
	jw_str(w, "profile", p && p->name ? p->name : "");
}

/* Who the cgroup is on a Kubernetes node (docs/events.md, "k8s"). */
static void put_k8s(struct jw *w, const struct bw_k8s_id *k)
{
	if (!k)
		return;
	jw_obj(w, "k8s");
	jw_str(w, "namespace", k->namespace_ ? k->namespace_ : "");
	jw_str(w, "pod", k->pod ? k->pod : "");
	jw_str(w, "uid", k->pod_uid ? k->pod_uid : "");
	jw_str(w, "container", k->container ? k->container : "");
	jw_str(w, "container_id", k->container_id ? k->container_id : "");
	jw_str(w, "image", k->image ? k->image : "");
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
	jw_str(w, "family", o.family == BW_FAM_IPV6 ? "ipv6" : "ipv4");
	jw_str(w, "proto", o.proto == IPPROTO_UDP ? "udp" : "tcp");
	/* The address the rules were matched against: IPv4, or mapped IPv4, as a.b.c.d. */
	if (!memcmp(o.addr, mapped, sizeof(mapped)))
		inet_ntop(AF_INET, o.addr + 12, addr, sizeof(addr));
	else
		inet_ntop(AF_INET6, o.addr, addr, sizeof(addr));
	jw_str(w, "addr", addr);
	jw_u64(w, "port", o.port);
}

/* The family of a socket event that is neither IP nor packet (AF_* in addr[0]). */
static void put_other_family(struct jw *w, unsigned af)
{
	static const struct {
		unsigned af;
		const char *name;
	} names[] = {{3, "ax25"},   {5, "appletalk"},	{9, "x25"},   {21, "rds"},
		     {26, "llc"},   {29, "can"},	{30, "tipc"}, {31, "bluetooth"},
		     {33, "rxrpc"}, {36, "ieee802154"}, {39, "nfc"},  {40, "vsock"},
		     {41, "kcm"},   {42, "qipcrtr"},	{43, "smc"},  {44, "xdp"},
		     {45, "mctp"}};
	char buf[16];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].af == af) {
			jw_str(w, "family", names[i].name);
			return;
		}
	}
	snprintf(buf, sizeof(buf), "af%u", af);
	jw_str(w, "family", buf);
}

/* A socket no address rule decides: family, type and protocol (struct bw_net_obj). */
static void put_socket(struct jw *w, const char *data, size_t len)
{
	struct bw_net_obj o;

	if (len < sizeof(o))
		return;
	memcpy(&o, data, sizeof(o));
	if (o.family == BW_FAM_OTHER)
		put_other_family(w, o.addr[0]);
	else
		jw_str(w, "family",
		       o.family == BW_FAM_PACKET ? "packet"
		       : o.family == BW_FAM_IPV6 ? "ipv6"
		       : o.family == BW_FAM_IPV4 ? "ipv4"
						 : "unix");
	jw_str(w, "socket_type",
	       o.proto == SOCK_RAW	   ? "raw"
	       : o.proto == SOCK_DGRAM	   ? "dgram"
	       : o.proto == SOCK_STREAM	   ? "stream"
	       : o.proto == SOCK_SEQPACKET ? "seqpacket"
					   : "other");
	jw_u64(w, "protocol", o.port);
}

/*
 * The object of a guard event (struct bw_guard_obj): the process reached,
 * with what was asked of it, or the BPF command or object.
 */
static void put_guard(struct jw *w, unsigned op, const char *data, size_t len)
{
	static const char *const controls[] = {"", "rlimit", "nice", "scheduler", "ioprio"};
	static const char *const objects[] = {
	    [BW_GOBJ_BPF_MAP] = "map",
	    [BW_GOBJ_BPF_PROG] = "prog",
	    [BW_GOBJ_BPF_LINK] = "link",
	    [BW_GOBJ_BPF_OTHER] = "object",
	};
	struct bw_guard_obj o;

	if (len < sizeof(o))
		return;
	memcpy(&o, data, sizeof(o));
	if (o.kind == BW_GOBJ_TASK) {
		jw_obj(w, "target");
		jw_u64(w, "pid", o.pid);
		jw_u64(w, "tid", o.tid);
		jw_strn(w, "comm", o.name, strnlen(o.name, sizeof(o.name)));
		jw_u64(w, "cgroup_id", o.cgroup_id);
		jw_bool(w, "agent", o.agent);
		jw_end(w);
		if (op == BW_OP_PTRACE)
			jw_str(w, "access",
			       o.arg & BW_PTRACE_TRACEME  ? "traceme"
			       : o.arg & BW_PTRACE_ATTACH ? "attach"
							  : "read");
		else if (op == BW_OP_SIGNAL)
			jw_u64(w, "signal", o.arg);
		else if (op == BW_OP_CONTROL && o.arg < sizeof(controls) / sizeof(controls[0]))
			jw_str(w, "control", controls[o.arg]);
		return;
	}
	jw_obj(w, "bpf");
	if (o.kind == BW_GOBJ_BPF_CMD) {
		jw_u64(w, "cmd", o.arg);
		if (o.arg < sizeof(bpf_cmds) / sizeof(bpf_cmds[0]))
			jw_str(w, "name", bpf_cmds[o.arg]);
	} else if (o.kind < sizeof(objects) / sizeof(objects[0]) && objects[o.kind]) {
		jw_strn(w, objects[o.kind], o.name, strnlen(o.name, sizeof(o.name)));
	}
	jw_end(w);
}

static void put_args(struct jw *w, const char *args, size_t len)
{
	const char *end = args + len, *a;
	bool exact = true;

	jw_arr(w, "args");
	for (a = args; a < end; a += strnlen(a, end - a) + 1) {
		jw_strn(w, NULL, a, strnlen(a, end - a));
		exact = exact && jw_utf8_valid(a, strnlen(a, end - a));
	}
	jw_end_arr(w);
	if (exact)
		return;
	/* An argument that is not UTF-8: every argument's bytes, as args_b64. */
	jw_arr(w, "args_b64");
	for (a = args; a < end; a += strnlen(a, end - a) + 1)
		jw_b64(w, NULL, a, strnlen(a, end - a));
	jw_end_arr(w);
}

static void put_rule(struct jw *w, const struct bw_profile *p, unsigned rule)
{
	char buf[PATH_MAX + 16];

	if (rule == BW_RULE_SELF)
		snprintf(buf, sizeof(buf), "builtin:self-protection");
	else if (rule == BW_RULE_PROCESSES)
		snprintf(buf, sizeof(buf), "builtin:process-boundary");
	else if (rule == BW_RULE_HOST)
		snprintf(buf, sizeof(buf), "builtin:host-kernel");
	else if (rule == BW_RULE_LEAVE_CGROUP)
		snprintf(buf, sizeof(buf), "builtin:cgroup-subtree");
	else if (rule == BW_RULE_CGROUPS_SLOT)
		snprintf(buf, sizeof(buf), "limit:cgroups-per-profile");
	else if (rule == BW_RULE_CGROUPS_MADE)
		snprintf(buf, sizeof(buf), "limit:cgroups-made");
	else if (rule && p && rule <= p->nrules)
		bw_origin_format(&p->rules[rule - 1].origin, buf, sizeof(buf));
	else if (rule)
		snprintf(buf, sizeof(buf), "#%u", rule);
	else
		snprintf(buf, sizeof(buf), "default");
	jw_str(w, "rule", buf);
	/*
	 * Its name or what it says, not where: alerts and suppressions keyed
	 * on it outlive edits.
	 */
	if (rule && rule < BW_RULE_OWN && p && rule <= p->nrules) {
		const struct bw_rule *r = &p->rules[rule - 1];

		snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)bw_rule_id(r));
		jw_str(w, "rule_id", buf);
		if (r->name)
			jw_str(w, "rule_name", r->name);
	}
}

static char node_name[256];

void bw_event_set_node(const char *name)
{
	snprintf(node_name, sizeof(node_name), "%s", name);
}

const char *bw_event_node(void)
{
	const char *env;

	if (!node_name[0]) {
		/* A DaemonSet gives the node's name (spec.nodeName); else the host's. */
		env = getenv("NODE_NAME");
		if (env && env[0])
			bw_event_set_node(env);
		else if (gethostname(node_name, sizeof(node_name) - 1))
			bw_event_set_node("unknown");
	}
	return node_name;
}

void bw_event_format(struct jw *w, const struct bw_event *ev, const char *data, const char *exe,
		     int64_t boot_to_real_ns, const struct bw_event_src *src)
{
	char access[5] = "";
	int n = 0;

	if (ev->access & BW_ACC_R)
		access[n++] = 'r';
	if (ev->access & BW_ACC_W)
		access[n++] = 'w';
	if (ev->access & BW_ACC_X)
		access[n++] = 'x';
	if (ev->access & BW_ACC_M)
		access[n++] = 'm';
	access[n] = '\0';

	jw_begin(w);
	put_ts(w, (int64_t)ev->ts_boot_ns + boot_to_real_ns);
	jw_str(w, "type", type_name(ev->type));
	jw_str(w, "node", bw_event_node());
	jw_str(w, "op", bw_op_name(ev->op));
	jw_str(w, "decision", ev->decision == BW_V_DENY ? "deny" : "allow");
	jw_str(w, "mode", mode_name(ev->mode));
	put_cgroup(w, ev->cgroup_id, src->cgroup_path);
	jw_obj(w, "proc");
	jw_u64(w, "pid", ev->pid);
	jw_u64(w, "tid", ev->tid);
	jw_u64(w, "ppid", ev->ppid);
	jw_u64(w, "uid", ev->uid);
	jw_u64(w, "gid", ev->gid);
	jw_strn(w, "comm", ev->comm, strnlen(ev->comm, sizeof(ev->comm)));
	jw_str(w, "exe", exe);
	jw_end(w);
	jw_obj(w, "parent");
	jw_u64(w, "pid", ev->ppid);
	if (src->parent_comm)
		jw_str(w, "comm", src->parent_comm);
	if (src->parent_exe)
		jw_str(w, "exe", src->parent_exe);
	jw_end(w);
	if (ev->flags & BW_EVF_UNIX) {
		jw_str(w, "family", "unix");
		jw_strn(w, "unix", data, ev->path_len);
		if (src->real_path)
			jw_str(w, "real_path", src->real_path);
	} else if (ev->op == BW_OP_SOCKET || ev->op == BW_OP_RECEIVE_SOCKET) {
		put_socket(w, data, ev->path_len);
	} else if (bw_op_names_peer(ev->op)) {
		put_net(w, data, ev->path_len);
	} else if ((ev->op >= BW_OP_PTRACE && ev->op <= BW_OP_BPF) || ev->op == BW_OP_RECEIVE_BPF) {
		put_guard(w, ev->op, data, ev->path_len);
	} else if (ev->op == BW_OP_CAPABLE || ev->op == BW_OP_MODULE || ev->op == BW_OP_PERF) {
		/* What of the host's kernel was asked for, by name. */
		jw_strn(w,
			ev->op == BW_OP_CAPABLE	 ? "capability"
			: ev->op == BW_OP_MODULE ? "module"
						 : "scope",
			data, ev->path_len);
	} else if (ev->op == BW_OP_CGROUP_MIGRATE && !ev->path_len) {
		/* clone3(CLONE_INTO_CGROUP), refused before the kernel resolves where to. */
		jw_str(w, "access", access);
	} else if (bw_op_ns(ev->op) >= 0 && ev->op != BW_OP_CGROUP_MIGRATE) {
		/* A change of the view: the mount point or new root, for the calls that name
		 * one (enum bw_op lists them first, up to chroot). */
		if (ev->op <= BW_OP_CHROOT) {
			jw_strn(w, "path", data, ev->path_len);
			if (src->real_path)
				jw_str(w, "real_path", src->real_path);
		}
	} else {
		jw_strn(w, "path", data, ev->path_len);
		if (src->real_path)
			jw_str(w, "real_path", src->real_path);
		jw_str(w, "access", access);
	}
	if (ev->args_len)
		put_args(w, data + ev->path_len, ev->args_len);
	if (ev->op == BW_OP_RENAME_FROM || ev->op == BW_OP_RENAME_TO)
		jw_str(w, "end", ev->op == BW_OP_RENAME_FROM ? "from" : "to");
	put_profile(w, src->profile);
	put_rule(w, src->profile, ev->rule);
	put_k8s(w, src->k8s);
	if (ev->flags & BW_EVF_PATH_TOO_LONG)
		jw_bool(w, "path_too_long", 1);
	if (ev->flags & BW_EVF_INODE_PIN)
		jw_bool(w, "by_inode", 1);
	if (ev->flags & BW_EVF_UNREACHABLE)
		jw_bool(w, "pseudo_file", 1);
	if (ev->flags & BW_EVF_FS_RELATIVE)
		jw_bool(w, "path_from_fs_root", 1);
	if (ev->flags & BW_EVF_DISCONNECTED) {
		jw_bool(w, "disconnected", 1);
		jw_u64(w, "ino", ev->ino);
	}
	jw_end(w);
}

void bw_event_format_lost(struct jw *w, int64_t real_ns, uint64_t count, const char *reason,
			  const struct bw_event_src *src)
{
	jw_begin(w);
	put_ts(w, real_ns);
	jw_str(w, "type", "lost");
	jw_str(w, "node", bw_event_node());
	jw_u64(w, "count", count);
	jw_str(w, "reason", reason);
	put_cgroup(w, src->cgroup_id, src->cgroup_path);
	put_profile(w, src->profile);
	put_k8s(w, src->k8s);
	jw_end(w);
}

void bw_event_format_agent(struct jw *w, int64_t real_ns, const char *msg,
			   const struct bw_event_src *src)
{
	jw_begin(w);
	put_ts(w, real_ns);
	jw_str(w, "type", "agent");
	jw_str(w, "node", bw_event_node());
	jw_str(w, "msg", msg);
	/* The daemon speaking for itself names no cgroup and no profile. */
	if (src->cgroup_id)
		put_cgroup(w, src->cgroup_id, src->cgroup_path);
	if (src->profile)
		put_profile(w, src->profile);
	put_k8s(w, src->k8s);
	jw_end(w);
}
