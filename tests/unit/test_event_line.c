// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event line, one record kind per test, against docs/events.md: every
 * example line in that page's ```json blocks must be what the formatter
 * writes for one of the records below, and every record below must be
 * shown there, so the page and the code cannot drift apart.
 */
#include <check.h>
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

/* Rule ids 1..5 as the shipped profile's lines, 6 from an abstraction. */
static struct bw_rule rules[] = {
    {.origin = {PROFILE_FILE, 25, 1}}, {.origin = {PROFILE_FILE, 30, 1}},
    {.origin = {PROFILE_FILE, 32, 1}}, {.origin = {PROFILE_FILE, 41, 1}},
    {.origin = {PROFILE_FILE, 45, 1}}, {.origin = {"profiles/abstractions/base", 12, 1}},
};
static struct bw_profile profile = {
    .name = "python-sandbox", .rules = rules, .nrules = sizeof(rules) / sizeof(rules[0])};
static const struct bw_event_src src = {
    .profile = &profile, .cgroup_id = 107, .cgroup_path = "/bpfwarden/run-171"};

/* The record of a process of the sandbox; callers set what differs. */
static struct bw_event record(__u8 type, __u8 mode, __u8 op, const char *comm, __u64 after_ms)
{
	struct bw_event ev = {
	    .ts_boot_ns = BOOT_NS + after_ms * 1000000 + after_ms % 7 * 1021,
	    .cgroup_id = 107,
	    .pid = 173,
	    .tid = 173,
	    .ppid = 172,
	    .uid = 1000,
	    .gid = 1000,
	    .type = type,
	    .op = op,
	    .decision = type == BW_EV_DENY ? BW_V_DENY : BW_V_ALLOW,
	    .mode = mode,
	};

	snprintf(ev.comm, sizeof(ev.comm), "%s", comm);
	return ev;
}

static void kernel_line(struct jw *w, struct bw_event *ev, const void *data, size_t len,
			const char *exe)
{
	ev->path_len = (__u16)len;
	bw_event_format(w, ev, data, exe, BOOT_TO_REAL, &src);
}

static void file_line(struct jw *w, struct bw_event *ev, __u8 access, const char *path,
		      const char *exe)
{
	ev->access = access;
	kernel_line(w, ev, path, strlen(path), exe);
}

static void ex_open(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, "cat", 0);

	ev.rule = 2;
	file_line(w, &ev, BW_ACC_R, "/etc/shadow", "/usr/bin/cat");
}

static void ex_rename(struct jw *w)
{
	struct bw_event ev = record(BW_EV_AUDIT, BW_MODE_AUDIT, BW_OP_RENAME_FROM, "mv", 37);

	ev.rule = 3;
	file_line(w, &ev, BW_ACC_W, "/etc/ssh/sshd_config", "/usr/bin/mv");
}

static void ex_by_inode(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_OPEN, "python3.11", 74);

	ev.rule = 2;
	ev.flags = BW_EVF_INODE_PIN;
	file_line(w, &ev, BW_ACC_R, "/tmp/job/shadow-link", "/usr/bin/python3.11");
}

static void ex_path_too_long(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CREATE, "python3.11", 111);

	ev.flags = BW_EVF_PATH_TOO_LONG;
	file_line(w, &ev, BW_ACC_W, "", "/usr/bin/python3.11");
}

static void ex_pseudo_file(struct jw *w)
{
	static const char args[] = "payload\0--quiet";
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_EXEC, "python3.11", 148);

	ev.access = BW_ACC_X;
	ev.flags = BW_EVF_UNREACHABLE;
	ev.args_len = sizeof(args);
	kernel_line(w, &ev, args, 0, "/usr/bin/python3.11");
}

static void ex_path_from_fs_root(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_UTIMES, "touch", 185);

	ev.rule = 3;
	ev.flags = BW_EVF_FS_RELATIVE;
	file_line(w, &ev, BW_ACC_W, "/etc/ssh/sshd_config", "/usr/bin/touch");
}

static void ex_exec_args(struct jw *w)
{
	static const char data[] = "/usr/bin/curl"
				   "curl\0-s\0http://169.254.169.254/latest/meta-data/";
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_EXEC, "python3.11", 222);

	ev.access = BW_ACC_X;
	ev.args_len = sizeof(data) - strlen("/usr/bin/curl");
	kernel_line(w, &ev, data, strlen("/usr/bin/curl"), "/usr/bin/python3.11");
}

/* A network record's object: addr as the kernel decided it, IPv6 form. */
static void net_line(struct jw *w, struct bw_event *ev, __u8 family, __u8 proto, const __u8 *addr,
		     __u16 port)
{
	struct bw_net_obj o = {.port = port, .family = family, .proto = proto};

	memcpy(o.addr, addr, 16);
	kernel_line(w, ev, &o, sizeof(o), "/usr/bin/python3.11");
}

static const __u8 v4_mapped_10_0_0_5[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 5};

static void ex_connect_v4(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, "python3.11", 259);

	net_line(w, &ev, 4, 6, v4_mapped_10_0_0_5, 443);
}

static void ex_connect_v6(struct jw *w)
{
	static const __u8 addr[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, "python3.11", 296);

	net_line(w, &ev, 6, 6, addr, 8443);
}

/* An IPv6 socket sending to an IPv4-mapped address: shown as the IPv4 address it reaches. */
static void ex_sendmsg_v4_mapped(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SENDMSG, "python3.11", 333);

	net_line(w, &ev, 6, 17, v4_mapped_10_0_0_5, 53);
}

static void ex_unix_path(struct jw *w)
{
	static const char name[] = "/run/dbus/system_bus_socket";
	struct bw_event ev =
	    record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_CONNECT, "python3.11", 370);

	ev.flags = BW_EVF_UNIX;
	kernel_line(w, &ev, name, strlen(name), "/usr/bin/python3.11");
}

static void ex_unix_abstract(struct jw *w)
{
	static const char name[] = "@/tmp/.X11-unix/X0";
	struct bw_event ev = record(BW_EV_AUDIT, BW_MODE_AUDIT, BW_OP_CONNECT, "python3.11", 407);

	ev.flags = BW_EVF_UNIX;
	kernel_line(w, &ev, name, strlen(name), "/usr/bin/python3.11");
}

static void socket_line(struct jw *w, struct bw_event *ev, __u8 family, __u8 type, __u16 protocol,
			const char *exe)
{
	struct bw_net_obj o = {.port = protocol, .family = family, .proto = type};

	kernel_line(w, ev, &o, sizeof(o), exe);
}

/* socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)) */
static void ex_packet_socket(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SOCKET, "python3.11", 444);

	socket_line(w, &ev, 17, 3, 768, "/usr/bin/python3.11");
}

/* socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) */
static void ex_raw_socket(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_ENFORCE, BW_OP_SOCKET, "ping", 481);

	socket_line(w, &ev, 4, 3, 1, "/usr/bin/ping");
}

static void ex_learn(struct jw *w)
{
	struct bw_event ev = record(BW_EV_LEARN, BW_MODE_LEARN, BW_OP_OPEN, "python3.11", 518);

	file_line(w, &ev, BW_ACC_R, "/usr/lib/python3.11/json/__init__.py", "/usr/bin/python3.11");
}

/* Learn mode keeps the profile's own deny rules: a refusal, logged under mode learn. */
static void ex_deny_in_learn_mode(struct jw *w)
{
	struct bw_event ev = record(BW_EV_DENY, BW_MODE_LEARN, BW_OP_OPEN, "python3.11", 555);

	ev.rule = 2;
	file_line(w, &ev, BW_ACC_R, "/etc/shadow", "/usr/bin/python3.11");
}

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
	bw_event_format_agent(w, BOOT_NS + BOOT_TO_REAL - 1000000000LL,
			      "governing /bpfwarden/run-171 with profile python-sandbox in enforce "
			      "mode (214 file keys, 3 exec keys, 2 net keys, 9 inode pins)",
			      &src);
}

static const struct example {
	const char *kind;
	void (*format)(struct jw *w);
} examples[] = {
    {"file: open", ex_open},
    {"file: rename, with its end", ex_rename},
    {"file: by_inode", ex_by_inode},
    {"file: path_too_long", ex_path_too_long},
    {"file: pseudo_file (exec of a memfd)", ex_pseudo_file},
    {"file: path_from_fs_root (utimes)", ex_path_from_fs_root},
    {"exec with arguments", ex_exec_args},
    {"connect, IPv4", ex_connect_v4},
    {"connect, IPv6", ex_connect_v6},
    {"sendmsg, IPv4-mapped IPv6", ex_sendmsg_v4_mapped},
    {"unix, a path", ex_unix_path},
    {"unix, an abstract name", ex_unix_abstract},
    {"packet socket", ex_packet_socket},
    {"raw IP socket", ex_raw_socket},
    {"learn", ex_learn},
    {"deny in learn mode", ex_deny_in_learn_mode},
    {"lost: throttled", ex_lost_throttled},
    {"lost: ring buffer", ex_lost_ring},
    {"agent", ex_agent},
};
#define NEXAMPLES ((int)(sizeof(examples) / sizeof(examples[0])))

/* The example lines of docs/events.md, a wrapped line joined again. */
static char *doc_lines[64];
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
	examples[i].format(&w);
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
	int seen[64] = {0}, i;

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
	struct bw_event ev = record(9, 7, BW_OP_MAX, "x", 0);
	struct jw w;
	char *line;

	ev.rule = 99; /* past the profile's rules */
	jw_init(&w);
	kernel_line(&w, &ev, "", 0, "");
	line = strndup(w.buf, w.len);
	jw_free(&w);
	ck_assert_ptr_nonnull(strstr(line, "\"type\":\"unknown\",\"op\":\"unknown\""));
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
