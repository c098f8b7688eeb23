// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event line, one record kind per test, against docs/events.md: every
 * example line in that page's ```json blocks must be what the formatter
 * writes for one of the records below, and every record below must be
 * shown there, so the page and the code cannot drift apart.
 */
#include <check.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_line.h"
#include "jsonw.h"
#include "suites.h"

/* An hour after boot, at 2026-11-29T14:35:14.186211166Z; records follow by milliseconds. */
#define BOOT_NS	     3605186211166LL
#define BOOT_TO_REAL 1795959309000000000LL
#define PROFILE_FILE "profiles/python-sandbox.profile"

/*
 * Rule ids 1..5 as the shipped profile's lines, 6 from an abstraction, 7 a
 * named rule (`deny net connect tcp 169.254.169.254:* as cloud-metadata`).
 */
static struct bw_rule rules[] = {
    {.origin = {PROFILE_FILE, 25, 1}},
    {.origin = {PROFILE_FILE, 30, 1}},
    {.origin = {PROFILE_FILE, 32, 1}},
    {.origin = {PROFILE_FILE, 41, 1}},
    {.origin = {PROFILE_FILE, 45, 1}},
    {.origin = {"profiles/abstractions/base", 12, 1}},
    {.origin = {PROFILE_FILE, 47, 1}, .name = "cloud-metadata"},
};
static struct bw_profile profile = {
    .name = "python-sandbox", .rules = rules, .nrules = sizeof(rules) / sizeof(rules[0])};
static const struct bw_event_src src = {
    .profile = &profile, .cgroup_id = 107, .cgroup_path = "/bpfwarden/run-171"};

static void ex_lost_throttled(struct jw *w)
{
	bw_event_format_lost(w, BOOT_NS + BOOT_TO_REAL + 1000000000LL, 12, "throttled", &src);
}

static void ex_lost_ring(struct jw *w)
{
	bw_event_format_lost(w, BOOT_NS + BOOT_TO_REAL + 2000000000LL, 3,
			     "ring buffer full or not read", &src);
}

static void ex_agent(struct jw *w)
{
	bw_event_format_agent(
	    w, BOOT_NS + BOOT_TO_REAL - 1000000000LL,
	    "governing /bpfwarden/run-171 with profile python-sandbox in enforce "
	    "mode (214 file keys, 3 exec keys, 2 net keys, 9 inode pins, 4 positions)",
	    &src);
}

/* The daemon speaking for itself: no cgroup, no profile. */
static void ex_agent_daemon(struct jw *w)
{
	struct bw_event_src own = {.cgroup_path = "/"};

	bw_event_format_agent(
	    w, BOOT_NS + BOOT_TO_REAL - 2000000000LL,
	    "daemon started: 3 profiles from /etc/bpfwarden/profiles, 0 containers "
	    "taken over, hook socket /run/bpfwarden/hook.sock, metrics on :9464",
	    &own);
}

#define PY "/usr/bin/python3.11"

static const struct bw_k8s_id k8s_app = {
    .namespace_ = "shop",
    .pod = "web-7d9f",
    .pod_uid = "5d6c7b8a-1f2e-4d3c-9b8a-7f6e5d4c3b2a",
    .container = "app",
    .container_id = "3f2c9d1e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e",
    .image = "docker.io/library/nginx:1.25",
};
#define K8S_CGROUP                                                                                 \
	"/kubepods/besteffort/pod5d6c7b8a-1f2e-4d3c-9b8a-7f6e5d4c3b2a/"                            \
	"3f2c9d1e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e"
/* Arguments as the kernel sends them: each NUL-terminated. */
#define ARGS(s) .args = s, .args_len = sizeof(s)
#define MAPPED_10_0_0_5                                                                            \
	{                                                                                          \
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 5                              \
	}

/*
 * One record of each kind. A kernel record is a process of the sandbox
 * (comm and exe python3.11 unless said), ms milliseconds after the first;
 * its bytes are net when net.family is set, else path then args.
 */
static const struct example {
	const char *kind;
	__u8 type, mode, op, access, flags;
	__u16 rule;
	unsigned ms;
	const char *comm, *exe, *path;
	const char *args;
	size_t args_len;
	struct bw_net_obj net;
	struct bw_guard_obj guard;	  /* guard records: a process or a BPF object */
	void (*agent_line)(struct jw *w); /* lost and agent records */
	const struct bw_k8s_id *k8s;	  /* the daemon's records of a container */
	__u64 ino;			  /* a disconnected dentry's */
	const char *real_path;		  /* the object as the agent sees it */
	const char *parent_comm, *parent_exe;
} examples[] = {
    {"file: open", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R, 0, 2, 0, "cat",
     "/usr/bin/cat", "/etc/shadow"},
    {"file: rename, with its end", BW_EV_AUDIT, BW_MODE_AUDIT, BW_OP_RENAME_FROM, BW_ACC_W, 0, 3,
     37, "mv", "/usr/bin/mv", "/etc/ssh/sshd_config"},
    {"file: by_inode", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R, BW_EVF_INODE_PIN, 2, 74,
     .path = "/tmp/job/shadow-link"},
    {"file: open, the parent named", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R, 0, 2, 1258,
     "cat", "/usr/bin/cat", "/etc/shadow", .parent_comm = "sh", .parent_exe = "/usr/bin/dash"},
    {"file: a name that is not UTF-8", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R, 0, 2,
     1221, "cat", "/usr/bin/cat", "/srv/caf\xe9"},
    {"file: real_path", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R,
     BW_EVF_INODE_PIN | BW_EVF_REAL, 2, 1184, "cat", "/usr/bin/cat", "/key",
     .real_path = "/srv/jail/key"},
    {"file: path_too_long", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CREATE, BW_ACC_W,
     BW_EVF_PATH_TOO_LONG, 0, 111, .path = ""},
    {"file: pseudo_file (exec of a memfd)", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_EXEC, BW_ACC_X,
     BW_EVF_UNREACHABLE, 0, 148, .path = "", ARGS("payload\0--quiet")},
    {"file: path_from_fs_root (utimes)", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_UTIMES, BW_ACC_W,
     BW_EVF_FS_RELATIVE, 3, 185, "touch", "/usr/bin/touch", "/etc/ssh/sshd_config"},
    /* A file handle's dentry without a parent, named by the agent from its inode. */
    {"file: disconnected (open_by_handle_at)", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R,
     BW_EVF_DISCONNECTED, 0, 592, .path = "/srv/data/secret/key", .ino = 131074},
    {"exec with arguments", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_EXEC, BW_ACC_X, 0, 0, 222,
     .path = "/usr/bin/curl", ARGS("curl\0-s\0http://169.254.169.254/latest/meta-data/")},
    /* LD_PRELOAD of a library written in the job directory, into an allowed program. */
    {"mmap of a library", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_MMAP, BW_ACC_M, 0, 0, 240, "true",
     "/usr/bin/true", "/tmp/job/libhook.so"},
    /* dlopen("/proc/self/fd/N") of a memfd, without `allow exec memfd`. */
    {"mmap of a memfd", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_MMAP, BW_ACC_M, BW_EVF_UNREACHABLE, 0,
     248, .path = ""},
    /* A file mapped readable, then made executable. */
    {"mprotect", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_MPROTECT, BW_ACC_M, 0, 0, 252,
     .path = "/tmp/job/payload.bin"},
    {"connect, IPv4", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, 0, 0, 0, 259,
     .net = {MAPPED_10_0_0_5, 443, BW_FAM_IPV4, IPPROTO_TCP}},
    {"connect, IPv6", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, 0, 0, 0, 296,
     .net = {{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	     8443,
	     BW_FAM_IPV6,
	     IPPROTO_TCP}},
    {"connect, a named rule", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, 0, 0, 7, 301,
     .net = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 169, 254},
	     80,
	     BW_FAM_IPV4,
	     IPPROTO_TCP}},
    /* An IPv6 socket sending to an IPv4-mapped address: shown as the IPv4 address it reaches. */
    {"sendmsg, IPv4-mapped IPv6", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SENDMSG, 0, 0, 0, 333,
     .net = {MAPPED_10_0_0_5, 53, BW_FAM_IPV6, IPPROTO_UDP}},
    /*
     * After a swap to a profile that denies binding 0.0.0.0:8080, accept on a
     * listener bound to [::]:8080 while allowed (it takes IPv4 too).
     */
    {"accept, a bind decided again", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_ACCEPT, 0, 0, 0, 341,
     .net = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0},
	     8080,
	     BW_FAM_IPV6,
	     IPPROTO_TCP}},
    {"unix, a path", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, 0, BW_EVF_UNIX, 0, 370,
     .path = "/run/dbus/system_bus_socket"},
    /* In a chroot of /srv/jail: the socket by the name the sandbox used, and as the agent sees it.
     */
    {"unix: real_path", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, 0, BW_EVF_UNIX | BW_EVF_REAL, 0,
     1190, .path = "/run/app.sock", .real_path = "/srv/jail/run/app.sock"},
    {"unix, an abstract name", BW_EV_AUDIT, BW_MODE_AUDIT, BW_OP_CONNECT, 0, BW_EVF_UNIX, 0, 407,
     .path = "@/tmp/.X11-unix/X0"},
    /* socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)) */
    {"packet socket", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SOCKET, 0, 0, 0, 444,
     .net = {.port = 768, .family = BW_FAM_PACKET, .proto = SOCK_RAW}},
    /* socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) */
    {"raw IP socket", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SOCKET, 0, 0, 0, 481, "ping",
     "/usr/bin/ping", .net = {.port = 1, .family = BW_FAM_IPV4, .proto = SOCK_RAW}},
    /* socket(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6): a ping socket, which no address rule decides */
    {"ping socket", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SOCKET, 0, 0, 0, 740, "ping",
     "/usr/bin/ping", .net = {.port = 58, .family = BW_FAM_IPV6, .proto = SOCK_DGRAM}},
    /* socket(AF_VSOCK, SOCK_STREAM, 0): a family with no rules of its own */
    {"vsock socket", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SOCKET, 0, 0, 0, 777,
     .net = {.addr = {40}, .family = BW_FAM_OTHER, .proto = SOCK_STREAM}},
    {"learn", BW_EV_LEARN, BW_MODE_LEARN, BW_OP_OPEN, BW_ACC_R, 0, 0, 518,
     .path = "/usr/lib/python3.11/json/__init__.py"},
    /* Learn mode keeps the profile's own deny rules: a refusal, logged under mode learn. */
    {"deny in learn mode", BW_EV_DENY, BW_MODE_LEARN, BW_OP_OPEN, BW_ACC_R, 0, 2, 555,
     .path = "/etc/shadow"},
    {"kubernetes: a container's open", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R, 0, 2, 592,
     "cat", "/bin/busybox", "/etc/shadow", .k8s = &k8s_app},
    /* mount --bind /etc /tmp/job/etc: the event names the mount point. */
    {"view: a mount", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_MOUNT, 0, 0, 0, 592, "mount",
     "/usr/bin/mount", "/tmp/job/etc"},
    /* mount -t proc proc /proc in a chroot of /srv/jail. */
    {"view: a mount, real_path", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_MOUNT, 0, BW_EVF_REAL, 0, 1203,
     "mount", "/usr/bin/mount", "/proc", .real_path = "/srv/jail/proc"},
    {"view: a user namespace, which has no path", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_USERNS, 0, 0,
     0, 629, "unshare", "/usr/bin/unshare", ""},
    {"view: chroot learned", BW_EV_LEARN, BW_MODE_LEARN, BW_OP_CHROOT, 0, 0, 0, 666,
     .path = "/tmp/job/root"},
    /* Root in the sandbox writes its PID to the root cgroup's cgroup.procs. */
    {"cgroup_migrate", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CGROUP_MIGRATE, BW_ACC_W, 0,
     BW_RULE_LEAVE_CGROUP, 592, "sh", "/usr/bin/dash", "/"},
    {"cgroup_mkdir over a limit", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CGROUP_MKDIR, BW_ACC_W, 0,
     BW_RULE_CGROUPS_SLOT, 629, "mkdir", "/usr/bin/mkdir", "/bpfwarden/run-171/c1024"},
    {"setxattr", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SETXATTR, BW_ACC_W, BW_EVF_FS_RELATIVE, 3, 666,
     "setfattr", "/usr/bin/setfattr", "/etc/ssh/sshd_config"},
    /* The agent's own objects and other processes: rule builtin:... */
    {"ptrace of a process outside", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_PTRACE, 0, 0,
     BW_RULE_PROCESSES, 592, .guard = {1, 812, 812, BW_PTRACE_READ, BW_GOBJ_TASK, 0, {0}, "sshd"}},
    {"signal to the agent", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SIGNAL, 0, 0, BW_RULE_SELF, 629,
     "sh", "/usr/bin/dash", .guard = {1, 172, 172, 9, BW_GOBJ_TASK, 1, {0}, "bpfwarden"}},
    {"prlimit of the agent", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONTROL, 0, 0, BW_RULE_SELF, 666,
     .guard = {1, 172, 172, BW_CTL_RLIMIT, BW_GOBJ_TASK, 1, {0}, "bpfwarden"}},
    {"ptrace of the agent, learn mode", BW_EV_AUDIT, BW_MODE_LEARN, BW_OP_PTRACE, 0, 0,
     BW_RULE_SELF, 703, "gdb", "/usr/bin/gdb",
     .guard = {1, 172, 172, BW_PTRACE_ATTACH, BW_GOBJ_TASK, 1, {0}, "bpfwarden"}},
    {"bpf(2)", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_BPF, 0, 0, BW_RULE_SELF, 740, "bpftool",
     "/usr/sbin/bpftool", .guard = {.arg = 11, .kind = BW_GOBJ_BPF_CMD}},
    {"a pin opened", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_R, 0, BW_RULE_SELF, 777, "cat",
     "/usr/bin/cat", "/sys/fs/bpf/bpfwarden/bw_policies"},
    {"receive: a file", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_RECEIVE, BW_ACC_R, 0, 2, 814,
     .path = "/etc/shadow"},
    {"receive: a connected socket", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_RECEIVE_NET, 0, 0, 0, 851,
     .net = {MAPPED_10_0_0_5, 443, BW_FAM_IPV4, IPPROTO_TCP}},
    {"receive: a pipe under default deny", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_RECEIVE, BW_ACC_R,
     BW_EVF_UNREACHABLE, 0, 888, .path = "pipe:"},
    {"receive: a listening socket", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_RECEIVE_SOCKET, 0, 0, 0, 925,
     .net = {.port = IPPROTO_TCP, .family = BW_FAM_IPV4, .proto = SOCK_STREAM}},
    {"receive: a BPF map", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_RECEIVE_BPF, 0, 0, BW_RULE_SELF, 962,
     .guard = {.kind = BW_GOBJ_BPF_MAP, .name = "bw_policies"}},
    /* The host's kernel: rule builtin:host-kernel, whatever the profile allows. */
    {"the host: a helper knob", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, BW_ACC_W, 0, BW_RULE_HOST,
     999, "sh", "/usr/bin/dash", "/proc/sys/kernel/core_pattern"},
    {"the host: a privilege", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CAPABLE, 0, 0, BW_RULE_HOST, 1036,
     .path = "CAP_SYS_RAWIO"},
    {"the host: a module request", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_MODULE, 0, 0, BW_RULE_HOST,
     1073, .path = "net-pf-38"},
    {"the host: perf on a whole CPU", BW_EV_AUDIT, BW_MODE_AUDIT, BW_OP_PERF, 0, 0, BW_RULE_HOST,
     1110, "perf", "/usr/bin/perf", "cpu"},
    /* The host's network configuration: decided by `net admin` rules, else refused. */
    {"the host's network configuration", BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CAPABLE, 0, 0, 0, 1147,
     "tc", "/usr/sbin/tc", "CAP_NET_ADMIN"},
    {"lost: throttled", .agent_line = ex_lost_throttled},
    {"lost: ring buffer", .agent_line = ex_lost_ring},
    {"agent", .agent_line = ex_agent},
    {"agent: the daemon's own", .agent_line = ex_agent_daemon},
};
#define NEXAMPLES ((int)(sizeof(examples) / sizeof(examples[0])))

static struct bw_event record(const struct example *x)
{
	struct bw_event ev = {
	    .ts_boot_ns = BOOT_NS + x->ms * 1000000ULL + x->ms % 7 * 1021,
	    .cgroup_id = 107,
	    .pid = 173,
	    .tid = 173,
	    .ppid = 172,
	    .uid = 1000,
	    .gid = 1000,
	    .rule = x->rule,
	    .type = x->type,
	    .op = x->op,
	    .decision = x->type == BW_EV_DENY ? BW_V_DENY : BW_V_ALLOW,
	    .access = x->access,
	    .flags = x->flags,
	    .mode = x->mode,
	};

	snprintf(ev.comm, sizeof(ev.comm), "%s", x->comm ? x->comm : "python3.11");
	return ev;
}

static void format(struct jw *w, const struct example *x)
{
	struct bw_event ev = record(x);

	bw_event_set_node("node-1");
	char data[1024];
	size_t len = 0;

	if (x->agent_line) {
		x->agent_line(w);
		return;
	}
	if (x->net.family) {
		len = sizeof(x->net);
		memcpy(data, &x->net, len);
	} else if (x->guard.kind) {
		len = sizeof(x->guard);
		memcpy(data, &x->guard, len);
	} else {
		len = strlen(x->path);
		memcpy(data, x->path, len);
		memcpy(data + len, x->args, x->args_len);
		ev.args_len = x->args_len;
	}
	ev.path_len = len;
	ev.ino = x->ino;
	if (x->k8s) {
		struct bw_event_src k = src;

		k.k8s = x->k8s;
		k.cgroup_path = K8S_CGROUP;
		bw_event_format(w, &ev, data, x->exe, BOOT_TO_REAL, &k);
		return;
	}
	if (x->real_path || x->parent_comm) {
		struct bw_event_src r = src;

		r.real_path = x->real_path;
		r.parent_comm = x->parent_comm;
		r.parent_exe = x->parent_exe;
		bw_event_format(w, &ev, data, x->exe ? x->exe : PY, BOOT_TO_REAL, &r);
		return;
	}
	bw_event_format(w, &ev, data, x->exe ? x->exe : PY, BOOT_TO_REAL, &src);
}

/* The example lines of docs/events.md, a wrapped line joined again. */
static char *doc_lines[96];
static int ndoc;

static void read_doc(void)
{
	const char *dir = getenv("BW_TEST_DOCS");
	char path[4096], line[4096];
	int in_json = 0;
	FILE *f;

	ck_assert_msg(dir && dir[0], "BW_TEST_DOCS is not set: run the tests with `make unit`");
	snprintf(path, sizeof(path), "%s/events.md", dir);
	f = fopen(path, "r");
	ck_assert_msg(f, "cannot read %s", path);
	ndoc = 0;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\n");

		line[len] = '\0';
		if (!strncmp(line, "```", 3)) {
			in_json = !in_json && !strcmp(line, "```json");
			continue;
		}
		if (!in_json)
			continue;
		if (line[0] == '{') {
			ck_assert_int_lt(ndoc, (int)(sizeof(doc_lines) / sizeof(doc_lines[0])));
			doc_lines[ndoc++] = strdup(line);
		} else if (line[0] == ' ' && ndoc) {
			/* A wrapped line goes on after its leading spaces. */
			const char *rest = line + strspn(line, " ");
			char *joined;

			ck_assert_int_ge(asprintf(&joined, "%s%s", doc_lines[ndoc - 1], rest), 0);
			free(doc_lines[ndoc - 1]);
			doc_lines[ndoc - 1] = joined;
		}
	}
	fclose(f);
}

static char *format_example(int i)
{
	struct jw w;
	char *s;

	jw_init(&w);
	format(&w, &examples[i]);
	ck_assert(!w.oom);
	s = strndup(w.buf, w.len);
	jw_free(&w);
	return s;
}

static int doc_index(const char *line)
{
	int i;

	for (i = 0; i < ndoc; i++)
		if (!strcmp(doc_lines[i], line))
			return i;
	return -1;
}

/* One record kind: what the formatter writes is an example in the doc. */
START_TEST(record_kind_matches_doc)
{
	char *line;

	read_doc();
	line = format_example(_i);
	ck_assert_msg(doc_index(line) >= 0, "%s: docs/events.md has no example line\n%s",
		      examples[_i].kind, line);
	free(line);
}
END_TEST

/* And the other way: the doc shows no line the formatter would not write. */
START_TEST(doc_examples_all_come_from_the_formatter)
{
	int seen[96] = {0}, i;

	read_doc();
	ck_assert_int_ge(ndoc, NEXAMPLES);
	for (i = 0; i < NEXAMPLES; i++) {
		char *line = format_example(i);
		int d = doc_index(line);

		if (d >= 0)
			seen[d] = 1;
		free(line);
	}
	for (i = 0; i < ndoc; i++)
		ck_assert_msg(seen[i], "docs/events.md shows a line no test record produces:\n%s",
			      doc_lines[i]);
}
END_TEST

/* Each line is one JSON object and nothing else. */
START_TEST(lines_are_single_objects)
{
	char *line = format_example(_i);
	size_t len = strlen(line);

	ck_assert_msg(len > 2 && line[0] == '{' && line[len - 1] == '}' && !strchr(line, '\n'),
		      "%s", line);
	free(line);
}
END_TEST

START_TEST(unknown_values_are_named_so)
{
	struct example x = {"unknown", 9, 7, BW_OP_MAX, .rule = 99 /* past the profile's */};
	struct bw_event ev = record(&x);
	struct jw w;
	char *line;

	jw_init(&w);
	bw_event_set_node("node-1");
	bw_event_format(&w, &ev, "", "", 0, &src);
	line = strndup(w.buf, w.len);
	jw_free(&w);
	ck_assert_ptr_nonnull(
	    strstr(line, "\"type\":\"unknown\",\"node\":\"node-1\",\"op\":\"unknown\""));
	ck_assert_ptr_nonnull(strstr(line, "\"mode\":\"unknown\""));
	ck_assert_ptr_nonnull(strstr(line, "\"rule\":\"#99\""));
	free(line);
}
END_TEST

Suite *event_line_suite(void)
{
	Suite *s = suite_create("event line");
	TCase *tc = tcase_create("record kinds");

	tcase_add_loop_test(tc, record_kind_matches_doc, 0, NEXAMPLES);
	tcase_add_loop_test(tc, lines_are_single_objects, 0, NEXAMPLES);
	tcase_add_test(tc, doc_examples_all_come_from_the_formatter);
	tcase_add_test(tc, unknown_values_are_named_so);
	suite_add_tcase(s, tc);
	return s;
}
