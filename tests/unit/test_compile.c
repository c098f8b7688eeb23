// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile compiler: trie keys, per-access inheritance from the nearest
 * ancestor, deny winning ties, rule ids. bw_compiled_lookup() is the
 * reference for what the kernel's longest-prefix lookup returns.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "pins.h"
#include "profile.h"
#include "suites.h"

static struct bw_profile *prof;
static struct bw_compiled comp;

static int compile_text(const char *text, char *err, size_t errlen)
{
	struct bw_diags diags = {};
	int ret;

	ret = bw_profile_parse_string("t.profile", text, strlen(text), NULL, &prof, &diags);
	bw_diags_free(&diags);
	ck_assert_int_eq(ret, 0);
	return bw_compile(prof, &comp, err, errlen);
}

static void teardown(void)
{
	bw_compiled_free(&comp);
	bw_profile_free(prof);
	prof = NULL;
}

static const struct bw_path_rule *lookup(const char *path)
{
	const struct bw_file_entry *e = bw_compiled_lookup(&comp, path);

	return e ? &e->val : NULL;
}

START_TEST(binary_search_agrees_with_reference)
{
	static const char *const paths[] = {
	    "/",	 "/a",	      "/a/",	  "/a/b", "/a/b/",  "/a/b/c",  "/a/b/c/d",
	    "/a/bc",	 "/a/bcd",    "/ab",	  "/x/y", "/a//b",  "/a/b/cd", "/usr/lib/x.so",
	    "/usr/lib/", "/usr/libx", "relative", "",	  "/a/b/c/"};
	char err[256];
	size_t i;

	ck_assert_int_eq(compile_text("profile t\n"
				      "allow file r /**\n"
				      "allow file r /a/**\n"
				      "deny file r /a/b/**\n"
				      "allow file rw /a/b/c\n"
				      "deny file w /a/bc\n"
				      "allow file r /usr/lib/**\n"
				      "allow file rw /a/b/c/d\n",
				      err, sizeof(err)),
			 0);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ck_assert_msg(bw_entries_find(comp.files, comp.nfiles, paths[i]) ==
				  bw_entries_lookup(comp.files, comp.nfiles, paths[i]),
			      "%s", paths[i]);
	ck_assert_ptr_null(bw_entries_find(comp.files, 0, "/a"));
}
END_TEST

/*
 * DIR/NAME*: one key without a terminator, deciding the names in DIR that
 * begin with NAME, never what is below one of them; shorter prefixes of the
 * same name and the directories above fill what it leaves open.
 */
START_TEST(name_prefix_keys)
{
	static const char *const paths[] = {"/dev/shm/PostgreSQL.1",
					    "/dev/shm/PostgreSQL.",
					    "/dev/shm/PostgreSQL.1/x",
					    "/dev/shm/PostgreSQL.conf",
					    "/dev/shm/Postfix",
					    "/dev/shm/Pos",
					    "/dev/shm/Other",
					    "/dev/shm/Post/x/y",
					    "/dev/shm",
					    "/dev/shm/",
					    "/tmp/abc",
					    "/tmp/a",
					    "/tmp/ab/c"};
	const struct bw_path_rule *v;
	char err[256];
	size_t i;

	ck_assert_int_eq(compile_text("profile t\n"
				      "default deny file\n"
				      "allow file r /dev/**\n"
				      "allow file rw /dev/shm/PostgreSQL.*\n"
				      "allow file w /dev/shm/Post*\n"
				      "deny file rw /dev/shm/PostgreSQL.conf\n"
				      "allow file w /tmp/a*\n"
				      "allow file r /tmp/ab*\n",
				      err, sizeof(err)),
			 0);
	v = lookup("/dev/shm/PostgreSQL.3292570658");
	ck_assert_uint_eq(v->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_r, 2);
	ck_assert_uint_eq(v->verdict_w, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_w, 2);
	ck_assert_uint_eq(v->name_at, strlen("/dev/shm/"));
	/* below a name it matches: the directories above decide */
	v = lookup("/dev/shm/PostgreSQL.1/x");
	ck_assert_uint_eq(v->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_r, 1);
	ck_assert_uint_eq(v->verdict_w, BW_V_NONE);
	ck_assert_uint_eq(v->name_at, 0);
	/* an exact rule in the directory is more specific */
	v = lookup("/dev/shm/PostgreSQL.conf");
	ck_assert_uint_eq(v->verdict_r, BW_V_DENY);
	ck_assert_uint_eq(v->rule_r, 4);
	/* a shorter prefix of the same name, and the name itself */
	v = lookup("/dev/shm/Postfix");
	ck_assert_uint_eq(v->verdict_w, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_w, 3);
	ck_assert_uint_eq(v->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_r, 1);
	ck_assert_uint_eq(lookup("/dev/shm/PostgreSQL.")->rule_w, 2);
	ck_assert_uint_eq(lookup("/dev/shm/Pos")->verdict_w, BW_V_NONE);
	/* a longer prefix fills what it leaves open from a shorter one */
	v = lookup("/tmp/abc");
	ck_assert_uint_eq(v->rule_r, 6);
	ck_assert_uint_eq(v->rule_w, 5);
	/* below a matched name in /tmp: /tmp's own key, which no rule names */
	v = lookup("/tmp/ab/c");
	ck_assert_uint_eq(v->verdict_r, BW_V_NONE);
	ck_assert_uint_eq(v->verdict_w, BW_V_NONE);
	/* every name prefix's directory has a key: the kernel's second lookup stops there */
	ck_assert_ptr_nonnull(bw_entries_find(comp.files, comp.nfiles, "/dev/shm/"));
	ck_assert_uint_eq(bw_entries_find(comp.files, comp.nfiles, "/dev/shm/")->keylen, 9);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ck_assert_msg(bw_entries_find(comp.files, comp.nfiles, paths[i]) ==
				  bw_entries_lookup(comp.files, comp.nfiles, paths[i]),
			      "%s", paths[i]);
	/* nothing to pin: a prefix names no object */
	for (i = 0; i < comp.npins; i++)
		ck_assert_msg(strcmp(comp.pins[i].path, "/dev/shm/PostgreSQL.") &&
				  strcmp(comp.pins[i].path, "/dev/shm/Post") &&
				  strncmp(comp.pins[i].path, "/tmp/a", 6),
			      "pinned %s", comp.pins[i].path);
}
END_TEST

/*
 * /proc/self rules: flagged in the trie (the kernel matches a process's own
 * /proc/PID to them), the policy says which tries hold them, never pinned.
 */
START_TEST(proc_self_keys)
{
	char err[256];
	const struct bw_path_rule *v;

	ck_assert_int_eq(compile_text("profile t\n"
				      "default deny file\n"
				      "allow file r /proc/**\n"
				      "allow file r /proc/self/**\n"
				      "deny file r /proc/self/environ\n"
				      "allow file r /proc/selfish\n",
				      err, sizeof(err)),
			 0);
	ck_assert_uint_eq(comp.policy.proc_self, BW_SELF_FILE);
	v = lookup("/proc/self/stat");
	ck_assert(v->flags & BW_PATH_SELF);
	ck_assert_uint_eq(v->rule_r, 2);
	ck_assert(lookup("/proc/self/environ")->flags & BW_PATH_SELF);
	ck_assert_uint_eq(lookup("/proc/self/environ")->verdict_r, BW_V_DENY);
	/* the rules around it are not */
	ck_assert(!(lookup("/proc/1/stat")->flags & BW_PATH_SELF));
	ck_assert(!(lookup("/proc/selfish")->flags & BW_PATH_SELF));
	for (size_t i = 0; i < comp.npins; i++)
		ck_assert_msg(strncmp(comp.pins[i].path, "/proc/self", 10) ||
				  !strcmp(comp.pins[i].path, "/proc/selfish"),
			      "pinned %s", comp.pins[i].path);
	teardown();
	ck_assert_int_eq(compile_text("profile t\nallow file r /proc/**\n", err, sizeof(err)), 0);
	ck_assert_uint_eq(comp.policy.proc_self, 0);
}
END_TEST

/* One pin per path whatever the number of rules naming it, in the order of first mention. */
START_TEST(pins_one_per_path)
{
	enum { N = 5000 };
	char *text = malloc(N * 64 + 64), err[256];
	size_t len = 0, i;

	ck_assert_ptr_nonnull(text);
	len += sprintf(text + len, "profile t\n");
	for (i = 0; i < N; i++)
		len += sprintf(text + len, "allow file r /p/%zu/**\n", i);
	/* The same paths again, as deny rules of another access. */
	for (i = 0; i < N; i += 2)
		len += sprintf(text + len, "deny file w /p/%zu/**\n", i);
	ck_assert_int_eq(compile_text(text, err, sizeof(err)), 0);
	free(text);
	ck_assert_uint_eq(comp.npins, N);
	for (i = 0; i < N; i++) {
		char want[32];

		snprintf(want, sizeof(want), "/p/%zu", i);
		ck_assert_str_eq(comp.pins[i].path, want);
		ck_assert_int_eq(comp.pins[i].deny, !(i % 2));
		ck_assert_int_eq(comp.pins[i].dir, 1);
		ck_assert_uint_eq(comp.pins[i].pin.below.verdict_r, BW_V_ALLOW);
		ck_assert_uint_eq(comp.pins[i].pin.below.verdict_w, i % 2 ? BW_V_NONE : BW_V_DENY);
	}
}
END_TEST

START_TEST(exact_and_subtree_keys)
{
	char err[256];
	const struct bw_path_rule *v;

	ck_assert_int_eq(
	    compile_text("profile t\nallow file r /a/**\ndeny file r /a/b\n", err, sizeof(err)), 0);
	ck_assert_uint_eq(comp.nfiles, 3); /* "/a\0", "/a/", "/a/b\0" */
	v = lookup("/a/x/y");
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_r, 1);
	v = lookup("/a");
	ck_assert_uint_eq(v->verdict_r, BW_V_ALLOW);
	v = lookup("/a/b");
	ck_assert_uint_eq(v->verdict_r, BW_V_DENY);
	ck_assert_uint_eq(v->rule_r, 2);
	/* An exact rule is not a prefix: /a/b/c falls to the subtree rule on /a. */
	ck_assert_uint_eq(lookup("/a/b/c")->verdict_r, BW_V_ALLOW);
	ck_assert_ptr_null(lookup("/ab"));
	ck_assert_ptr_null(lookup("/"));
}
END_TEST

START_TEST(inherit_per_access)
{
	char err[256];
	const struct bw_path_rule *v;

	ck_assert_int_eq(
	    compile_text("profile t\nallow file rw /usr/**\ndeny file w /usr/lib/x/**\n", err,
			 sizeof(err)),
	    0);
	v = lookup("/usr/lib/x/f");
	ck_assert_uint_eq(v->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_r, 1);
	ck_assert_uint_eq(v->verdict_w, BW_V_DENY);
	ck_assert_uint_eq(v->rule_w, 2);
	v = lookup("/usr/lib/f");
	ck_assert_uint_eq(v->verdict_w, BW_V_ALLOW);
}
END_TEST

START_TEST(deny_wins_ties_and_first_rule_reported)
{
	char err[256];
	const struct bw_path_rule *v;

	ck_assert_int_eq(
	    compile_text("profile t\nallow file r /t\nallow file r /t\ndeny file r /t\n"
			 "allow file w /t\nallow file w /t\n",
			 err, sizeof(err)),
	    0);
	v = lookup("/t");
	ck_assert_uint_eq(v->verdict_r, BW_V_DENY);
	ck_assert_uint_eq(v->rule_r, 3);
	ck_assert_uint_eq(v->verdict_w, BW_V_ALLOW);
	ck_assert_uint_eq(v->rule_w, 4);
}
END_TEST

START_TEST(root_subtree)
{
	char err[256];

	ck_assert_int_eq(
	    compile_text("profile t\nallow file r /**\ndeny file r /etc/**\n", err, sizeof(err)),
	    0);
	ck_assert_uint_eq(lookup("/")->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(lookup("/bin/sh")->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(lookup("/etc/passwd")->verdict_r, BW_V_DENY);
	ck_assert_uint_eq(lookup("/etcetera")->verdict_r, BW_V_ALLOW);
}
END_TEST

START_TEST(defaults_and_on_deny)
{
	char err[256];

	ck_assert_int_eq(compile_text("profile t\ndefault allow file\ndefault deny exec\n"
				      "default deny net\non-deny kill\n",
				      err, sizeof(err)),
			 0);
	ck_assert_uint_eq(comp.policy.default_file, BW_V_ALLOW);
	ck_assert_uint_eq(comp.policy.default_exec, BW_V_DENY);
	ck_assert_uint_eq(comp.policy.on_deny, BW_ON_DENY_KILL);
	ck_assert_uint_eq(comp.policy.has_pins, 0);
}
END_TEST

START_TEST(unix_rules)
{
	char err[256] = "";

	ck_assert_int_eq(
	    compile_text("profile t\nallow net connect unix /run/x.sock\n"
			 "deny net connect unix /run/x.sock\nallow net bind unix @name\n",
			 err, sizeof(err)),
	    0);
	ck_assert_uint_eq(comp.nunixes, 2);
	ck_assert_str_eq(comp.unixes[0].key.name, "/run/x.sock");
	ck_assert_uint_eq(comp.unixes[0].key.op, BW_NOP_CONNECT);
	ck_assert_uint_eq(comp.unixes[0].val.verdict, BW_V_DENY);
	ck_assert_uint_eq(comp.unixes[0].val.rule, 2);
	ck_assert_str_eq(comp.unixes[1].key.name, "@name");
	ck_assert_uint_eq(comp.unixes[1].key.op, BW_NOP_BIND);
}
END_TEST

/* The rule id the kernel's lookup would pick for a unix name, 0 for the default. */
static unsigned unix_rule(__u8 op, const char *name)
{
	const struct bw_unix_entry *e = bw_unix_lookup(&comp, op, name);

	return e ? e->val.rule : 0;
}

/*
 * Subtree rules: an exact name first, else the nearest directory above the
 * name with one; only paths, and only the operation that has them.
 */
START_TEST(unix_subtree_rules)
{
	char err[256] = "";

	ck_assert_int_eq(compile_text("profile t\n"
				      "deny net connect unix /run/**\n"		   /* 1 */
				      "allow net connect unix /run/user/**\n"	   /* 2 */
				      "deny net connect unix /run/user/1/x.sock\n" /* 3 */
				      "allow net bind unix /tmp/a.sock\n"	   /* 4 */
				      "allow net connect unix /**\n",		   /* 5 */
				      err, sizeof(err)),
			 0);
	ck_assert_uint_eq(comp.policy.unix_subtree, 1 << BW_NOP_CONNECT);
	ck_assert_uint_eq(unix_rule(BW_NOP_CONNECT, "/run/user/1/x.sock"), 3);
	ck_assert_uint_eq(unix_rule(BW_NOP_CONNECT, "/run/user/1/y.sock"), 2);
	ck_assert_uint_eq(unix_rule(BW_NOP_CONNECT, "/run/user/x.sock"), 2);
	ck_assert_uint_eq(unix_rule(BW_NOP_CONNECT, "/run/z.sock"), 1);
	ck_assert_uint_eq(unix_rule(BW_NOP_CONNECT, "/run/user"), 1);
	ck_assert_uint_eq(unix_rule(BW_NOP_CONNECT, "/srv/a.sock"), 5);
	ck_assert_uint_eq(unix_rule(BW_NOP_CONNECT, "@run/x"), 0);
	ck_assert_uint_eq(unix_rule(BW_NOP_BIND, "/run/z.sock"), 0);
	ck_assert_uint_eq(unix_rule(BW_NOP_BIND, "/tmp/a.sock"), 4);
	ck_assert_int_eq(
	    compile_text("profile t\nallow net connect unix /run/x.sock\n", err, sizeof(err)), 0);
	ck_assert_uint_eq(comp.policy.unix_subtree, 0);
}
END_TEST

static const struct bw_port_range *net(int op, int proto, const char *v4, uint16_t port)
{
	uint8_t a[16] = {0};

	a[10] = a[11] = 0xff;
	ck_assert_int_eq(inet_pton(AF_INET, v4, a + 12), 1);
	return bw_net_lookup(&comp, op, proto, a, port);
}

START_TEST(net_prefixes_and_ranges)
{
	const struct bw_port_range *r;
	uint8_t lo6[16] = {0};
	char err[256];

	ck_assert_int_eq(compile_text("profile t\n"
				      "allow net connect tcp 10.0.0.0/8:*\n"	 /* 1 */
				      "deny net connect tcp 10.1.0.0/16:80-90\n" /* 2 */
				      "allow net connect tcp 10.1.0.0/16:85\n"	 /* 3 */
				      "deny net connect tcp localhost:22\n"	 /* 4 */
				      "allow net connect udp *:53\n"		 /* 5 */
				      "allow net bind tcp 0.0.0.0:9000\n",	 /* 6 */
				      err, sizeof(err)),
			 0);
	ck_assert_uint_eq(net(BW_NOP_CONNECT, 6, "10.1.2.3", 85)->rule, 3);
	r = net(BW_NOP_CONNECT, 6, "10.1.2.3", 86);
	ck_assert_uint_eq(r->verdict, BW_V_DENY);
	ck_assert_uint_eq(r->rule, 2);
	/* outside the /16 ranges, the /8 decides */
	ck_assert_uint_eq(net(BW_NOP_CONNECT, 6, "10.1.2.3", 443)->rule, 1);
	ck_assert_uint_eq(net(BW_NOP_CONNECT, 6, "10.2.0.1", 85)->rule, 1);
	ck_assert_ptr_null(net(BW_NOP_CONNECT, 6, "11.0.0.1", 85));
	/* localhost: all of 127/8 and ::1 */
	ck_assert_uint_eq(net(BW_NOP_CONNECT, 6, "127.0.0.2", 22)->rule, 4);
	lo6[15] = 1;
	ck_assert_uint_eq(bw_net_lookup(&comp, BW_NOP_CONNECT, 6, lo6, 22)->rule, 4);
	/* `*` covers both families; protocols and operations are apart */
	ck_assert_uint_eq(net(BW_NOP_CONNECT, 17, "192.0.2.1", 53)->rule, 5);
	ck_assert_uint_eq(bw_net_lookup(&comp, BW_NOP_CONNECT, 17, lo6, 53)->rule, 5);
	ck_assert_ptr_null(net(BW_NOP_CONNECT, 6, "192.0.2.1", 53));
	ck_assert_uint_eq(net(BW_NOP_BIND, 6, "0.0.0.0", 9000)->rule, 6);
	ck_assert_ptr_null(net(BW_NOP_CONNECT, 6, "0.0.0.0", 9000));
}
END_TEST

START_TEST(net_too_many_ranges)
{
	char text[4096] = "profile t\n", err[256] = "";
	int i;

	for (i = 0; i <= BW_NET_RANGES; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "allow net connect tcp 10.0.0.1:%d\n", 1000 + i);
	ck_assert_int_eq(compile_text(text, err, sizeof(err)), -E2BIG);
	ck_assert_ptr_nonnull(strstr(err, "port ranges"));
}
END_TEST

START_TEST(exec_rules_and_memfd)
{
	char err[256];
	const struct bw_file_entry *e;
	size_t i;
	int pinned = 0;

	ck_assert_int_eq(compile_text("profile t\nallow exec /usr/bin/**\ndeny exec /usr/bin/id\n"
				      "allow exec memfd\nallow file r /usr/bin/id\n",
				      err, sizeof(err)),
			 0);
	e = bw_entries_lookup(comp.execs, comp.nexecs, "/usr/bin/true");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->val.verdict_r, BW_V_ALLOW);
	e = bw_entries_lookup(comp.execs, comp.nexecs, "/usr/bin/id");
	ck_assert_uint_eq(e->val.verdict_r, BW_V_DENY);
	ck_assert_uint_eq(e->val.rule_r, 2);
	/* exec and file rules do not mix */
	ck_assert_uint_eq(lookup("/usr/bin/id")->verdict_r, BW_V_ALLOW);
	ck_assert_uint_eq(comp.policy.exec_memfd, 1);
	ck_assert_uint_eq(comp.policy.exec_memfd_rule, 3);
	ck_assert_uint_eq(comp.policy.has_exec_pins, 1);
	ck_assert_uint_eq(comp.policy.has_pins, 0);
	for (i = 0; i < comp.npins; i++)
		pinned += comp.pins[i].cat == BW_CAT_PIN_EXEC && comp.pins[i].deny;
	ck_assert_int_eq(pinned, 1);
}
END_TEST

/* The exec key of path: running (`r` slot) and mapping (`w` slot), and the rule of each. */
static void expect_exec(const char *path, unsigned run, unsigned run_rule, unsigned map,
			unsigned map_rule)
{
	const struct bw_file_entry *e = bw_entries_lookup(comp.execs, comp.nexecs, path);

	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->val.verdict_r, run);
	if (run != BW_V_NONE)
		ck_assert_uint_eq(e->val.rule_r, run_rule);
	ck_assert_uint_eq(e->val.verdict_w, map);
	ck_assert_uint_eq(e->val.rule_w, map_rule);
}

/*
 * Exec keys carry running in `r` and mapping in `w`: `exec lib` fills only
 * `w`, and each access is decided by its own most specific rule.
 */
START_TEST(exec_lib_slots)
{
	char err[256];

	ck_assert_int_eq(compile_text("profile t\nallow exec /usr/bin/**\n"
				      "allow exec lib /usr/lib/**\n"
				      "allow exec /usr/lib/git-core/git\n"
				      "deny exec /usr/lib/evil.so\n"
				      "allow exec lib /opt/app/lib/**\n",
				      err, sizeof(err)),
			 0);
	/* a program: runs and is mapped */
	expect_exec("/usr/bin/true", BW_V_ALLOW, 1, BW_V_ALLOW, 1);
	/* a library: mapped, not run (the default decides running) */
	expect_exec("/usr/lib/x86_64-linux-gnu/libc.so.6", BW_V_NONE, 0, BW_V_ALLOW, 2);
	/* a program inside a library directory runs by its own rule */
	expect_exec("/usr/lib/git-core/git", BW_V_ALLOW, 3, BW_V_ALLOW, 3);
	/* deny exec refuses mapping too */
	expect_exec("/usr/lib/evil.so", BW_V_DENY, 4, BW_V_DENY, 4);
	expect_exec("/opt/app/lib/libapp.so", BW_V_NONE, 0, BW_V_ALLOW, 5);
	/* the pin of a deny exec rule carries both */
	for (size_t i = 0; i < comp.npins; i++) {
		if (comp.pins[i].cat != BW_CAT_PIN_EXEC || !comp.pins[i].deny)
			continue;
		ck_assert_str_eq(comp.pins[i].path, "/usr/lib/evil.so");
		ck_assert_uint_eq(comp.pins[i].pin.self.verdict_w, BW_V_DENY);
	}
	ck_assert_uint_eq(comp.policy.has_exec_pins, 1);
}
END_TEST

Suite *compile_suite(void)
{
	Suite *s = suite_create("compile");
	TCase *tc = tcase_create("file rules");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, exact_and_subtree_keys);
	tcase_add_test(tc, inherit_per_access);
	tcase_add_test(tc, deny_wins_ties_and_first_rule_reported);
	tcase_add_test(tc, root_subtree);
	tcase_add_test(tc, defaults_and_on_deny);
	tcase_add_test(tc, unix_rules);
	tcase_add_test(tc, unix_subtree_rules);
	tcase_add_test(tc, net_prefixes_and_ranges);
	tcase_add_test(tc, net_too_many_ranges);
	tcase_add_test(tc, exec_rules_and_memfd);
	tcase_add_test(tc, exec_lib_slots);
	tcase_add_test(tc, binary_search_agrees_with_reference);
	tcase_add_test(tc, pins_one_per_path);
	tcase_add_test(tc, name_prefix_keys);
	tcase_add_test(tc, proc_self_keys);
	suite_add_tcase(s, tc);
	return s;
}
