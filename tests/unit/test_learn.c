// SPDX-License-Identifier: GPL-2.0-only
/*
 * The learned-profile writer: every output is parsed back (no error, no
 * warning) and compiled, then the compiled policy must allow every learned
 * access and refuse chosen unlearned ones. Generalisation thresholds, the
 * directories never generalised, folding into the shipped abstractions,
 * comments, sorting, quoting, stability under reordering.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn_helpers.h"
#include "suites.h"

static const char *const base_only[] = {"abstractions/base", NULL};

/* ---- tests ---- */

START_TEST(round_trip_every_kind)
{
	struct bw_learn_set *s = bw_learn_new();
	uint8_t lo[16], a6[16], other[16], any[16];
	struct bw_learn_opts o = {.name = "job"};
	struct loaded l;

	add_file(s, R, "/srv/app/a.json", "/usr/bin/python3.11");
	add_file(s, W, "/srv/out/log.txt", "/usr/bin/python3.11");
	add_file(s, RW, "/srv/out/state.db", "/usr/bin/python3.11");
	add_exec(s, "/usr/bin/true", "/usr/bin/python3.11");
	v4(lo, 127, 0, 0, 1);
	v6(a6, 0x2001, 1);
	v4(any, 0, 0, 0, 0);
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, 8080, "/usr/bin/python3.11");
	add_inet(s, BW_NET_CONNECT, BW_NET_UDP, lo, 53, "/usr/bin/python3.11");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a6, 443, "/usr/bin/python3.11");
	add_inet(s, BW_NET_BIND, BW_NET_TCP, any, 9000, "/usr/bin/python3.11");
	add_unix(s, BW_NET_CONNECT, "/run/app.sock", "/usr/bin/python3.11");
	add_unix(s, BW_NET_CONNECT, "@abstract", "/usr/bin/python3.11");
	{
		struct bw_learned raw = {.cat = BW_CAT_NET, .net_op = BW_NET_RAW};
		struct bw_learned admin = {.cat = BW_CAT_NET, .net_op = BW_NET_ADMIN};

		ck_assert_int_eq(bw_learn_add(s, &raw), 0);
		ck_assert_int_eq(bw_learn_add(s, &admin), 0);
	}
	l = gen_load(s, &o);
	ck_assert_str_eq(l.p->name, "job");
	ck_assert_int_eq(l.p->mode, BW_MODE_ENFORCE);
	for (int c = 0; c < BW_CAT_COUNT; c++)
		ck_assert_int_eq(l.p->defaults[c], BW_V_DENY);
	expect_line(l.text, "allow net connect tcp 127.0.0.1:8080");
	expect_line(l.text, "allow net connect tcp [2001::1]:443");
	expect_line(l.text, "allow net bind tcp 0.0.0.0:9000");
	expect_line(l.text, "allow net connect unix /run/app.sock");
	expect_line(l.text, "allow net connect unix @abstract");
	expect_line(l.text, "allow net raw");
	expect_line(l.text, "allow net admin");
	expect_line(l.text, "allow exec /usr/bin/true");

	/* Everything learned is allowed. */
	ck_assert(file_ok(&l, "/srv/app/a.json", R));
	ck_assert(file_ok(&l, "/srv/out/log.txt", W));
	ck_assert(file_ok(&l, "/srv/out/state.db", RW));
	ck_assert(exec_ok(&l, "/usr/bin/true"));
	ck_assert(inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, lo, 8080));
	ck_assert(inet_ok(&l, BW_NET_CONNECT, BW_NET_UDP, lo, 53));
	ck_assert(inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, a6, 443));
	ck_assert(inet_ok(&l, BW_NET_BIND, BW_NET_TCP, any, 9000));
	ck_assert(unix_ok(&l, BW_NET_CONNECT, "/run/app.sock"));
	ck_assert(unix_ok(&l, BW_NET_CONNECT, "@abstract"));
	ck_assert_int_eq(l.c.policy.net_raw, BW_V_ALLOW);
	ck_assert_int_eq(l.c.policy.net_admin, BW_V_ALLOW);

	/* Nothing else: a sibling, more access, another program, port, address, protocol. */
	ck_assert(!file_ok(&l, "/srv/app/b.json", R));
	ck_assert(!file_ok(&l, "/srv/app/a.json", W));
	ck_assert(!file_ok(&l, "/srv/out/log.txt", R));
	ck_assert(!file_ok(&l, "/srv/app", R));
	ck_assert(!exec_ok(&l, "/usr/bin/id"));
	ck_assert(!inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, lo, 8081));
	ck_assert(!inet_ok(&l, BW_NET_CONNECT, BW_NET_UDP, lo, 8080));
	ck_assert(!inet_ok(&l, BW_NET_BIND, BW_NET_TCP, lo, 8080));
	v4(other, 127, 0, 0, 2);
	ck_assert(!inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, other, 8080));
	ck_assert(!unix_ok(&l, BW_NET_CONNECT, "/run/other.sock"));
	ck_assert(!unix_ok(&l, BW_NET_BIND, "/run/app.sock"));
	check_invariants(&l);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(merge_counts_access_programs)
{
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;
	char *c;

	add_file(s, R, "/srv/x", "/usr/bin/b");
	add_file(s, R, "/srv//x/", "/usr/bin/a"); /* the same file, spelt otherwise */
	add_file(s, W, "/srv/x", "/usr/bin/b");
	add_file(s, R, "/srv/x", NULL);
	ck_assert_uint_eq(bw_learn_count(s), 1);
	ck_assert_uint_eq(bw_learn_events(s), 4);
	l = gen_load(s, NULL);
	ck_assert_str_eq(l.p->name, "learned");
	expect_line(l.text, "allow file rw /srv/x");
	c = line_before(l.text, "allow file rw /srv/x");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c, "# seen 4 times, by /usr/bin/a, /usr/bin/b");
	free(c);
	ck_assert_uint_eq(count_of(l.text, "\nallow "), 1);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(programs_keep_the_smallest_three)
{
	static const char *const names[] = {"/usr/bin/e", "/usr/bin/c", "/usr/bin/a", "/usr/bin/d",
					    "/usr/bin/b"};
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;
	char *c;

	for (size_t i = 0; i < 5; i++)
		add_file(s, R, "/srv/many", names[i]);
	add_file(s, R, "/srv/one", "sh"); /* a comm when the exe is unknown */
	l = gen_load(s, NULL);
	c = line_before(l.text, "allow file r /srv/many");
	ck_assert_str_eq(c, "# seen 5 times, by /usr/bin/a, /usr/bin/b, /usr/bin/c, and others");
	free(c);
	c = line_before(l.text, "allow file r /srv/one");
	ck_assert_str_eq(c, "# seen 1 time, by sh");
	free(c);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/* One mixed workload, added in the order given by `perm`. */
static char *workload_text(const size_t *perm, size_t n)
{
	struct bw_learn_set *s = bw_learn_new();
	uint8_t lo[16];
	char p[64];
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR, .abstractions = base_only};
	char *text;

	v4(lo, 127, 0, 0, 1);
	for (size_t k = 0; k < n; k++) {
		size_t i = perm[k];

		if (i < 10) {
			snprintf(p, sizeof(p), "/srv/data/f%zu", i);
			add_file(s, R, p, i % 2 ? "/usr/bin/a" : "/usr/bin/b");
		} else if (i < 14) {
			snprintf(p, sizeof(p), "/srv/jobs/%zu/out", 1000 + i);
			add_file(s, R, p, "/usr/bin/c");
		} else if (i < 18) {
			add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, (uint16_t)(8000 + i),
				 "/usr/bin/d");
		} else if (i < 22) {
			snprintf(p, sizeof(p), "/usr/bin/tool%zu", i);
			add_exec(s, p, i % 2 ? "/usr/bin/e" : "/usr/bin/f");
		} else if (i < 26) {
			add_file(s, i % 2 ? R : W, "/etc/passwd",
				 i % 3 ? "/usr/bin/g" : "/usr/bin/h");
		} else {
			snprintf(p, sizeof(p), "/srv/x%zu/y", i);
			add_file(s, RW, p, "/usr/bin/i");
		}
	}
	text = write_text(s, &o);
	bw_learn_free(s);
	return text;
}

START_TEST(stable_whatever_the_order)
{
	size_t fwd[30], rev[30], mix[30], i;
	char *a, *b, *c;
	struct loaded l = {0};

	for (i = 0; i < 30; i++) {
		fwd[i] = i;
		rev[i] = 29 - i;
		mix[i] = (i * 7) % 30; /* 7 and 30 are coprime: a permutation */
	}
	a = workload_text(fwd, 30);
	b = workload_text(rev, 30);
	c = workload_text(mix, 30);
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(a, c);
	load_clean(&l, a, BW_PROFILE_LIBDIR);
	check_invariants(&l);
	loaded_free(&l);
	free(b);
	free(c);
}
END_TEST

START_TEST(sections_are_sorted)
{
	struct bw_learn_set *s = bw_learn_new();
	uint8_t lo[16], a6[16];
	struct loaded l;
	const char *f, *p, *n;

	v4(lo, 127, 0, 0, 1);
	v6(a6, 0xfd00, 1);
	add_inet(s, BW_NET_BIND, BW_NET_TCP, lo, 9000, "x");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a6, 80, "x");
	add_inet(s, BW_NET_CONNECT, BW_NET_UDP, lo, 53, "x");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, 8080, "x");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, 80, "x");
	add_unix(s, BW_NET_CONNECT, "@b", "x");
	add_unix(s, BW_NET_CONNECT, "/run/a.sock", "x");
	add_exec(s, "/usr/bin/zz", "x");
	add_exec(s, "/usr/bin/aa", "x");
	add_file(s, R, "/srv/b", "x");
	add_file(s, R, "/srv/a-b", "x");
	add_file(s, R, "/srv/a/z", "x");
	add_file(s, R, "/srv/a", "x");
	l = gen_load(s, NULL);
	f = strstr(l.text, "\n# files\n");
	p = strstr(l.text, "\n# programs\n");
	n = strstr(l.text, "\n# network\n");
	ck_assert(f && p && n && f < p && p < n);
	/* Component-wise: a directory's files before a longer name that shares its prefix. */
	ck_assert_ptr_nonnull(strstr(f, "allow file r /srv/a\n# seen 1 time, by x\n"
					"allow file r /srv/a/z\n# seen 1 time, by x\n"
					"allow file r /srv/a-b\n# seen 1 time, by x\n"
					"allow file r /srv/b\n"));
	ck_assert_ptr_nonnull(
	    strstr(p, "allow exec /usr/bin/aa\n# seen 1 time, by x\nallow exec /usr/bin/zz\n"));
	ck_assert_ptr_nonnull(strstr(n,
				     "allow net connect tcp 127.0.0.1:80\n# seen 1 time, by x\n"
				     "allow net connect tcp 127.0.0.1:8080\n# seen 1 time, by x\n"
				     "allow net connect tcp [fd00::1]:80\n# seen 1 time, by x\n"
				     "allow net connect udp 127.0.0.1:53\n# seen 1 time, by x\n"
				     "allow net connect unix /run/a.sock\n# seen 1 time, by x\n"
				     "allow net connect unix @b\n# seen 1 time, by x\n"
				     "allow net bind tcp 127.0.0.1:9000\n"));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(long_paths_are_comments)
{
	struct bw_learn_set *s = bw_learn_new();
	char p250[251], p251[252], deep[400], line[600];
	struct loaded l;

	memset(p250, 'a', 250);
	p250[0] = '/';
	p250[250] = '\0';
	memset(p251, 'b', 251);
	p251[0] = '/';
	p251[251] = '\0';
	add_file(s, R, p250, "x");
	add_file(s, RW, p251, "x");
	l = gen_load(s, NULL);
	snprintf(line, sizeof(line), "allow file r %s", p250);
	expect_line(l.text, line);
	snprintf(line, sizeof(line),
		 "# cannot be expressed (path is 251 bytes long, a rule names at most 250: "
		 "BW_RULE_PATH_MAX): allow file rw %s",
		 p251);
	expect_line(l.text, line);
	ck_assert(file_ok(&l, p250, R));
	loaded_free(&l);
	bw_learn_free(s);

	/* Under a generalised directory a long path is allowed: the kernel matches its start. */
	s = files_in("/srv/d", 8, R);
	memset(deep, 'c', sizeof(deep));
	memcpy(deep, "/srv/d/", 7);
	deep[sizeof(deep) - 1] = '\0';
	add_file(s, R, deep, "x");
	l = gen_load(s, NULL);
	ck_assert_ptr_null(strstr(l.text, "cannot be expressed"));
	ck_assert(file_ok(&l, deep, R));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(quoting)
{
	static const char *const paths[] = {
	    "/srv/My Files/a.txt", "/srv/say \"hi\"", "/srv/back\\slash", "/srv/both \\ \"x\"",
	    "/srv/tab\there",	   "/srv/a#b",	      "/srv/caf\xc3\xa9"};
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learned ex = {.cat = BW_CAT_EXEC, .path = "/opt/my tools/run"};
	struct loaded l;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		add_file(s, R, paths[i], "x");
	ck_assert_int_eq(bw_learn_add(s, &ex), 0);
	add_unix(s, BW_NET_CONNECT, "@name with space", "x");
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file r \"/srv/My Files/a.txt\"");
	expect_line(l.text, "allow file r \"/srv/say \\\"hi\\\"\"");
	expect_line(l.text, "allow file r /srv/back\\slash");
	expect_line(l.text, "allow file r \"/srv/both \\\\ \\\"x\\\"\"");
	expect_line(l.text, "allow file r \"/srv/tab\there\"");
	expect_line(l.text, "allow file r /srv/a#b");
	expect_line(l.text, "allow exec \"/opt/my tools/run\"");
	expect_line(l.text, "allow net connect unix \"@name with space\"");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ck_assert_msg(file_ok(&l, paths[i], R), "%s", paths[i]);
	ck_assert(exec_ok(&l, "/opt/my tools/run"));
	ck_assert(unix_ok(&l, BW_NET_CONNECT, "@name with space"));
	ck_assert(!file_ok(&l, "/srv/My", R));
	ck_assert(!file_ok(&l, "/srv/a", R));
	loaded_free(&l);

	/* A generalised directory with a space in it. */
	bw_learn_free(s);
	s = files_in("/srv/My Files", 8, R);
	l = gen_load(s, NULL);
	expect_line(l.text, "allow file r \"/srv/My Files/**\"");
	ck_assert(file_ok(&l, "/srv/My Files/new", R));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(unexpressible_names_never_inject)
{
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;

	add_file(s, RW, "/srv/evil\nallow file rw /etc/shadow", "x");
	add_file(s, R, "/srv/glob*name", "x");
	add_file(s, R, "/srv/ok", "prog\nallow exec /usr/bin/sudo");
	add_exec(s, "/srv/run\rme", "x");
	add_unix(s, BW_NET_CONNECT, "@bad\nname", "x");
	add_unix(s, BW_NET_CONNECT, "relative.sock", "x");
	l = gen_load(s, NULL);
	ck_assert_uint_eq(l.p->nrules, 1);
	expect_line(l.text, "allow file r /srv/ok");
	expect_line(l.text, "# seen 1 time, by prog\\x0aallow exec /usr/bin/sudo");
	ck_assert_ptr_nonnull(strstr(l.text, "# cannot be expressed (a newline or another control "
					     "byte in the name: a profile cannot spell it): allow "
					     "file rw /srv/evil\\x0aallow file rw /etc/shadow\n"));
	ck_assert_ptr_nonnull(strstr(l.text, "# cannot be expressed (a '*' in a name"));
	ck_assert_ptr_nonnull(strstr(l.text, "allow file r /srv/glob*name\n"));
	ck_assert_ptr_nonnull(strstr(l.text, "allow exec /srv/run\\x0dme\n"));
	ck_assert_ptr_nonnull(strstr(l.text, "allow net connect unix @bad\\x0aname\n"));
	ck_assert_ptr_nonnull(strstr(l.text, "(not a socket path or @name (an unnamed socket)): "
					     "allow net connect unix relative.sock\n"));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(fold_into_base)
{
	static const char *const both[] = {"abstractions/base", "abstractions/python", NULL};
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR, .abstractions = both};
	struct loaded l;
	char *c;

	add_file(s, R, "/etc/ld.so.cache", "/usr/bin/true");
	add_file(s, R, "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/true");
	add_file(s, RW, "/dev/null", "/usr/bin/true");
	add_file(s, RW, "/etc/passwd", "/usr/bin/true"); /* base allows r only */
	add_file(s, R, "/srv/input", "/usr/bin/true");
	l = gen_load(s, &o);
	expect_line(l.text, "include \"abstractions/base\"");
	expect_line(l.text, "# abstractions/base allows 3 of the learned accesses");
	expect_line(l.text, "# abstractions/python: not included, it allows none of the learned "
			    "accesses");
	ck_assert_ptr_null(strstr(l.text, "include \"abstractions/python\""));
	ck_assert_ptr_null(strstr(l.text, "ld.so.cache"));
	ck_assert_ptr_null(strstr(l.text, "libc.so.6"));
	ck_assert_ptr_null(strstr(l.text, "/dev/null"));
	expect_line(l.text, "allow file w /etc/passwd");
	c = line_before(l.text, "allow file w /etc/passwd");
	ck_assert_ptr_nonnull(strstr(c, "; r is allowed by abstractions/base:"));
	free(c);
	expect_line(l.text, "allow file r /srv/input");
	ck_assert(file_ok(&l, "/etc/ld.so.cache", R));
	ck_assert(file_ok(&l, "/usr/lib/x86_64-linux-gnu/libc.so.6", R));
	ck_assert(file_ok(&l, "/dev/null", RW));
	ck_assert(file_ok(&l, "/etc/passwd", RW));
	ck_assert(file_ok(&l, "/srv/input", R));
	ck_assert(!file_ok(&l, "/etc/shadow", R));
	ck_assert(!file_ok(&l, "/etc/group", W));
	loaded_free(&l);

	/*
	 * One file of it is a program touching it in passing: a rule of its own.
	 * Python's library read, as a Python program reads it, makes the python
	 * abstraction worth including.
	 */
	add_file(s, R, "/etc/ssl/openssl.cnf", "/usr/sbin/nginx");
	l = gen_load(s, &o);
	expect_line(l.text, "# abstractions/python: not included, it allows only 1 of the learned "
			    "accesses (fewer than 3: touched in passing, not what it is for)");
	ck_assert_ptr_null(strstr(l.text, "include \"abstractions/python\""));
	expect_line(l.text, "allow file r /etc/ssl/openssl.cnf");
	ck_assert(!file_ok(&l, "/usr/lib/python3.11/os.py", R));
	loaded_free(&l);
	add_file(s, R, "/usr/lib/python3.11/os.py", "/usr/bin/python3.11");
	add_file(s, R, "/usr/lib/python3.11/re/__init__.py", "/usr/bin/python3.11");
	l = gen_load(s, &o);
	expect_line(l.text, "include \"abstractions/base\"");
	expect_line(l.text, "include \"abstractions/python\"");
	ck_assert_ptr_null(strstr(l.text, "os.py"));
	ck_assert(file_ok(&l, "/usr/lib/python3.11/os.py", R));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(fold_names_given_twice_are_one_include)
{
	static const char *const twice[] = {"abstractions/base", "abstractions/base", NULL};
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR, .abstractions = twice};
	struct loaded l;

	add_file(s, R, "/etc/ld.so.cache", "x");
	l = gen_load(s, &o);
	ck_assert_uint_eq(count_of(l.text, "\ninclude \"abstractions/base\"\n"), 1);
	ck_assert_uint_eq(count_of(l.text, "abstractions/base"), 2); /* the comment, the include */
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(fold_nothing_covered_or_missing)
{
	static const char *const names[] = {"abstractions/base", "abstractions/no-such", NULL};
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR, .abstractions = names};
	struct loaded l;

	add_file(s, R, "/srv/only", "x");
	l = gen_load(s, &o);
	ck_assert_ptr_null(strstr(l.text, "\ninclude "));
	expect_line(l.text,
		    "# abstractions/base: not included, it allows none of the learned accesses");
	ck_assert_ptr_nonnull(strstr(l.text, "# abstractions/no-such: not included: include "
					     "'abstractions/no-such' not found"));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/* A profile library of our own, with deny rules the learned accesses meet. */
static char *make_libdir(void)
{
	char *dir = strdup("/tmp/bw-learn-test-XXXXXX"), path[256];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/abstractions", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/abstractions/t", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("allow file r /srv/**\n"
	      "deny file r /srv/secret\n"
	      "deny file w /data/**\n"
	      "allow file r /data/**\n"
	      "allow net connect tcp 10.0.0.0/8:*\n"
	      "deny net connect tcp 10.0.0.1:80\n"
	      "allow exec /usr/bin/env\n"
	      "deny exec /usr/bin/su\n"
	      "deny net raw\n",
	      f);
	ck_assert_int_eq(fclose(f), 0);
	return dir;
}

static void rm_libdir(char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/abstractions/t", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/abstractions", dir);
	rmdir(path);
	rmdir(dir);
	free(dir);
}

START_TEST(fold_with_denies)
{
	static const char *const names[] = {"abstractions/t", NULL};
	char *lib = make_libdir();
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.libdir = lib, .abstractions = names, .min_children = 2};
	struct bw_learned raw = {.cat = BW_CAT_NET, .net_op = BW_NET_RAW, .program = "x"};
	uint8_t a[16];
	struct loaded l;
	char p[64];

	add_file(s, R, "/srv/a", "x");	    /* folded */
	add_file(s, R, "/srv/secret", "x"); /* denied on its own key: cannot be allowed */
	for (int i = 0; i < 4;
	     i++) { /* denied by the /data subtree: exact rules win, never a subtree */
		snprintf(p, sizeof(p), "/data/d/f%d", i);
		add_file(s, RW, p, "x");
	}
	v4(a, 10, 0, 0, 1);
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 80, "x"); /* denied, same object */
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 81, "x"); /* folded */
	v4(a, 192, 168, 0, 1);
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 80, "x"); /* neither */
	add_exec(s, "/usr/bin/env", "x");
	add_exec(s, "/usr/bin/su", "x");
	ck_assert_int_eq(bw_learn_add(s, &raw), 0);
	l = gen_load(s, &o);
	expect_line(l.text, "include \"abstractions/t\"");
	ck_assert_ptr_nonnull(strstr(l.text,
				     "# not allowed: abstractions/t:2 denies it, and deny "
				     "wins on the same object: allow file r /srv/secret\n"));
	expect_line(l.text, "allow file w /data/d/f0");
	ck_assert_ptr_null(strstr(l.text, "/data/d/**"));
	ck_assert_ptr_nonnull(strstr(l.text, "# not allowed: abstractions/t:6 denies it, and deny "
					     "wins on the same object: allow net connect tcp "
					     "10.0.0.1:80\n"));
	expect_line(l.text, "allow net connect tcp 192.168.0.1:80");
	ck_assert_ptr_nonnull(strstr(l.text, "allow exec /usr/bin/su\n"));
	ck_assert_ptr_null(strstr(l.text, "\nallow exec /usr/bin/su\n"));
	ck_assert_ptr_nonnull(strstr(l.text, "# not allowed: abstractions/t:9 denies it"));
	ck_assert_ptr_null(strstr(l.text, "\nallow net raw"));
	ck_assert_ptr_null(strstr(l.text, "/usr/bin/env"));

	ck_assert(file_ok(&l, "/srv/a", R));
	ck_assert(file_ok(&l, "/data/d/f0", RW));
	ck_assert(file_ok(&l, "/data/d/f3", RW));
	ck_assert(!file_ok(&l, "/data/d/f4", W));
	ck_assert(!file_ok(&l, "/srv/secret", R)); /* as said in the comment */
	ck_assert(inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, a, 80));
	v4(a, 10, 0, 0, 1);
	ck_assert(inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, a, 81));
	ck_assert(exec_ok(&l, "/usr/bin/env"));
	loaded_free(&l);
	bw_learn_free(s);
	rm_libdir(lib);
}
END_TEST

START_TEST(net_forms)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learned l4 = {.cat = BW_CAT_NET,
				.net_op = BW_NET_CONNECT,
				.proto = BW_NET_TCP,
				.family = 4,
				.addr = {10, 1, 2, 3},
				.port = 5432};
	uint8_t a[16], zero[16] = {0};
	struct loaded l;

	/* IPv4 in the first four bytes is accepted too, and is the same object. */
	ck_assert_int_eq(bw_learn_add(s, &l4), 0);
	v4(a, 10, 1, 2, 3);
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 5432, "y");
	/* Several ports stay several rules. */
	v4(a, 127, 0, 0, 1);
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 8000, "x");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 8001, "x");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 8003, "x");
	/* A connect to 0.0.0.0 or :: reaches the local host: that is what a rule must name. */
	v4(a, 0, 0, 0, 0);
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, 7000, "x");
	add_inet(s, BW_NET_BIND, BW_NET_UDP, a, 7001, "x");
	{
		struct bw_learned l6 = {.cat = BW_CAT_NET,
					.net_op = BW_NET_CONNECT,
					.proto = BW_NET_TCP,
					.family = 6,
					.port = 7002};

		ck_assert_int_eq(bw_learn_add(s, &l6), 0);
		l6.net_op = BW_NET_BIND;
		ck_assert_int_eq(bw_learn_add(s, &l6), 0);
	}
	ck_assert_uint_eq(bw_learn_count(s), 8);
	l = gen_load(s, NULL);
	expect_line(l.text, "allow net connect tcp 10.1.2.3:5432");
	ck_assert_ptr_nonnull(strstr(l.text, "# seen 2 times, by y\nallow net connect tcp "
					     "10.1.2.3:5432\n"));
	expect_line(l.text, "allow net connect tcp 127.0.0.1:8000");
	expect_line(l.text, "allow net connect tcp 127.0.0.1:8001");
	expect_line(l.text, "allow net connect tcp 127.0.0.1:8003");
	expect_line(l.text, "allow net connect tcp 127.0.0.1:7000");
	expect_line(l.text, "allow net bind udp 0.0.0.0:7001");
	expect_line(l.text, "allow net connect tcp [::1]:7002");
	expect_line(l.text, "allow net bind tcp [::]:7002");
	ck_assert_ptr_null(strstr(l.text, "8000-"));
	v4(a, 127, 0, 0, 1);
	ck_assert(inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, a, 8001));
	ck_assert(!inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, a, 8002));
	ck_assert(inet_ok(&l, BW_NET_BIND, BW_NET_TCP, zero, 7002));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/*
 * A listener of the workload's own: port 0 bound on the loopback or a
 * wildcard, then connects to loopback ports of the ephemeral range. Those are
 * one range rule per protocol and address, listed for the reviewer; any other
 * connect stays exact.
 */
START_TEST(own_listener_ports)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {0};
	uint8_t lo[16], lo6[16] = {[15] = 1}, any[16] = {0}, far[16];
	char *list = NULL, *t;
	size_t len = 0;
	struct loaded l;

	v4(lo, 127, 0, 0, 1);
	v4(far, 10, 0, 0, 1);
	add_inet(s, BW_NET_BIND, BW_NET_TCP, lo, 0, "python3");
	add_inet(s, BW_NET_BIND, BW_NET_UDP, any, 0, "python3");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, 39183, "python3");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, 45737, "python3");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo6, 40001, "python3");
	add_inet(s, BW_NET_CONNECT, BW_NET_UDP, lo, 50000, "python3");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, 5432, "python3");	/* below the range */
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, far, 40000, "python3"); /* not the loopback */
	l = gen_load(s, &o);
	expect_line(l.text, "allow net connect tcp 127.0.0.1:32768-60999");
	expect_line(l.text, "allow net connect tcp [::1]:32768-60999");
	expect_line(l.text, "allow net connect udp 127.0.0.1:32768-60999");
	expect_line(l.text, "allow net connect tcp 127.0.0.1:5432");
	expect_line(l.text, "allow net connect tcp 10.0.0.1:40000");
	ck_assert_ptr_nonnull(strstr(l.text,
				     "# seen 2 times, by python3; ports 39183, 45737 on the "
				     "loopback, where it bound tcp port 0 itself"));
	ck_assert_ptr_null(strstr(l.text, "39183\n"));
	ck_assert(inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, lo, 51234));
	ck_assert(!inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, lo, 5433));
	ck_assert(!inet_ok(&l, BW_NET_CONNECT, BW_NET_TCP, far, 40001));
	check_invariants(&l);
	loaded_free(&l);

	o.widenings = open_memstream(&list, &len);
	ck_assert_ptr_nonnull(o.widenings);
	t = write_text(s, &o);
	ck_assert_int_eq(fclose(o.widenings), 0);
	ck_assert_msg(strstr(list,
			     "  allow net connect tcp 127.0.0.1:32768-60999\n    ports 39183, "
			     "45737 on the loopback"),
		      "%s", list);
	ck_assert_ptr_null(strstr(list, ":5432"));
	free(list);
	free(t);
	bw_learn_free(s);

	/* Without a port 0 bind of that protocol, the same connects stay exact. */
	s = bw_learn_new();
	add_inet(s, BW_NET_BIND, BW_NET_UDP, lo, 0, "python3");
	add_inet(s, BW_NET_BIND, BW_NET_TCP, lo, 8080, "python3");
	add_inet(s, BW_NET_CONNECT, BW_NET_TCP, lo, 39183, "python3");
	l = gen_load(s, NULL);
	expect_line(l.text, "allow net connect tcp 127.0.0.1:39183");
	ck_assert_ptr_null(strstr(l.text, "32768-"));
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/* An O_TMPFILE file's name is dead once learned: a comment that says so, never a rule. */
START_TEST(unnamed_files_are_no_rules)
{
	struct bw_learn_set *s = bw_learn_new();
	struct loaded l;

	add_file(s, RW, "/tmp/#2124 (deleted)", "python3");
	add_file(s, RW, "/tmp/#2125 (deleted)", "python3");
	add_file(s, RW, "/tmp/#x (deleted)", "python3"); /* not the kernel's form: a name */
	l = gen_load(s, NULL);
	ck_assert_ptr_nonnull(strstr(l.text, "# cannot be expressed (an unnamed file (O_TMPFILE): "
					     "its name is new at every run"));
	ck_assert_ptr_null(strstr(l.text, "\nallow file rw \"/tmp/#2124"));
	ck_assert_ptr_null(strstr(l.text, "\nallow file rw \"/tmp/#2125"));
	expect_line(l.text, "allow file rw \"/tmp/#x (deleted)\"");
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(exec_memfd)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learned m = {.cat = BW_CAT_EXEC, .path = "", .program = "x"};
	struct loaded l;

	ck_assert_int_eq(bw_learn_add(s, &m), 0);
	m.path = NULL;
	ck_assert_int_eq(bw_learn_add(s, &m), 0);
	add_exec(s, "/usr/bin/zz", "x");
	l = gen_load(s, NULL);
	ck_assert_ptr_nonnull(strstr(l.text, "allow exec /usr/bin/zz\n# seen 2 times, by x\n"
					     "allow exec memfd\n"));
	ck_assert_int_eq(l.c.policy.exec_memfd, 1);
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

/*
 * A program run is `allow exec` (which maps it too), a file only mapped is
 * `allow exec lib`, and the loader run directly never becomes a rule to run.
 */
START_TEST(libraries_and_the_loader)
{
	static const char *const base[] = {"abstractions/base", NULL};
	static const char *loader = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2";
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {.libdir = BW_PROFILE_LIBDIR, .abstractions = base};
	struct loaded l;
	char *c;

	add_exec(s, "/opt/app/bin/app", "/usr/bin/dash");
	add_lib(s, "/opt/app/bin/app", "/opt/app/bin/app");
	add_lib(s, "/opt/app/lib/libapp.so.1", "/opt/app/bin/app");
	add_lib(s, "/opt/app/lib/libapp-extra.so", "/opt/app/bin/app");
	add_lib(s, "/opt/app/plugins/p.so", "/opt/app/bin/app");
	add_file(s, BW_ACC_W, "/opt/app/plugins/cache.bin", "/opt/app/bin/app");
	add_lib(s, "/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/app/bin/app");
	/* `ld.so /tmp/job/prog`: the loader run, and the program it mapped */
	add_exec(s, loader, "/usr/bin/dash");
	add_lib(s, loader, loader);
	add_lib(s, "/tmp/job/prog", loader);
	ck_assert(bw_learn_has_exec(s, "/opt/app/bin/app"));
	ck_assert(!bw_learn_has_exec(s, "/opt/app/lib/libapp.so.1"));
	ck_assert(bw_learn_has_exec(s, loader));
	ck_assert_uint_eq(bw_learn_count(s), 8);

	l = gen_load(s, &o);
	/* run and mapped: one rule, which maps it too */
	expect_line(l.text, "allow exec /opt/app/bin/app");
	expect_no_line(l.text, "allow exec lib /opt/app/bin/app");
	ck_assert(exec_ok(&l, "/opt/app/bin/app") && lib_ok(&l, "/opt/app/bin/app"));
	/* mapped only: a library, and its package's library directory with it */
	expect_line(l.text, "allow exec lib /opt/app/lib/**");
	c = line_before(l.text, "allow exec lib /opt/app/lib/**");
	ck_assert_ptr_nonnull(strstr(c, "# a library directory"));
	free(c);
	ck_assert(lib_ok(&l, "/opt/app/lib/libapp.so.1"));
	ck_assert(lib_ok(&l, "/opt/app/lib/plugins/libplugin.so"));
	ck_assert(!exec_ok(&l, "/opt/app/lib/libapp.so.1"));
	ck_assert(!lib_ok(&l, "/opt/app/share/x.so"));
	/* where the workload wrote, a library stays exact: code of its choosing */
	expect_line(l.text, "allow exec lib /opt/app/plugins/p.so");
	ck_assert(!lib_ok(&l, "/opt/app/plugins/q.so"));
	/* the system's libraries, the loader among them, are the base abstraction's */
	expect_line(l.text, "include \"abstractions/base\"");
	ck_assert_ptr_null(strstr(l.text, "libc.so.6"));
	ck_assert(lib_ok(&l, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	ck_assert(lib_ok(&l, loader));
	/* the loader run directly: a comment, never a rule */
	ck_assert(!exec_ok(&l, loader));
	ck_assert(!rule_with(l.text, "ld-linux"));
	ck_assert_ptr_nonnull(strstr(l.text, "# not written: allow exec /usr/lib/x86_64-linux-gnu/"
					     "ld-linux-x86-64.so.2 (the dynamic loader, run "
					     "directly"));
	/* what the loader mapped is said to be so */
	c = line_before(l.text, "allow exec lib /tmp/job/prog");
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(strstr(c, "# mapped by the dynamic loader run directly"));
	free(c);
	ck_assert(!exec_ok(&l, "/tmp/job/prog"));
	check_invariants(&l);
	loaded_free(&l);

	/* Without the base abstraction the loader is still mapped, as a library. */
	l = gen_load(s, NULL);
	ck_assert(!exec_ok(&l, loader));
	ck_assert(lib_ok(&l, loader));
	expect_line(l.text, "allow exec lib /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(bad_input)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learned l = {.cat = BW_CAT_FILE, .access = BW_ACC_X, .path = "/x"};
	static const char *const nl[] = {"abstractions/base\n", NULL};
	static const char *const empty[] = {"", NULL};
	struct bw_learn_opts o = {.name = "-bad"};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(bw_learn_add(NULL, &l), -EINVAL);
	ck_assert_int_eq(bw_learn_add(s, NULL), -EINVAL);
	ck_assert_int_eq(bw_learn_add(s, &l), -EINVAL); /* no r, no w */
	l.cat = (enum bw_cat)7;
	ck_assert_int_eq(bw_learn_add(s, &l), -EINVAL);
	l = (struct bw_learned){.cat = BW_CAT_NET, .net_op = 9, .proto = BW_NET_TCP, .family = 4};
	ck_assert_int_eq(bw_learn_add(s, &l), -EINVAL);
	l.net_op = BW_NET_CONNECT;
	l.proto = 0;
	ck_assert_int_eq(bw_learn_add(s, &l), -EINVAL);
	l.proto = BW_NET_UDP;
	l.family = 5;
	ck_assert_int_eq(bw_learn_add(s, &l), -EINVAL);
	l.family = 4;
	l.addr[0] = 0x20, l.addr[15] = 1; /* not an IPv4 address */
	ck_assert_int_eq(bw_learn_add(s, &l), -EINVAL);
	ck_assert_uint_eq(bw_learn_count(s), 0);
	ck_assert_uint_eq(bw_learn_events(s), 0);

	f = open_memstream(&text, &len);
	ck_assert_int_eq(bw_learn_write_profile(s, &o, f), -EINVAL);
	o.name = "this-name-is-longer-than-sixty-four-bytes-which-is-the-limit-of-names";
	ck_assert_int_eq(bw_learn_write_profile(s, &o, f), -EINVAL);
	o.name = "ok";
	o.abstractions = nl;
	ck_assert_int_eq(bw_learn_write_profile(s, &o, f), -EINVAL);
	o.abstractions = empty;
	ck_assert_int_eq(bw_learn_write_profile(s, &o, f), -EINVAL);
	ck_assert_int_eq(bw_learn_write_profile(NULL, &o, f), -EINVAL);
	fclose(f);
	ck_assert_uint_eq(len, 0); /* nothing written */
	free(text);
	bw_learn_free(s);
	bw_learn_free(NULL);
}
END_TEST

START_TEST(empty_set)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_learn_opts o = {
	    .name = "nothing", .libdir = BW_PROFILE_LIBDIR, .abstractions = base_only};
	struct loaded l = gen_load(s, &o);

	ck_assert_uint_eq(l.p->nrules, 0);
	ck_assert_uint_eq(count_of(l.text, "# (none)\n"), 3);
	expect_line(l.text, "profile nothing");
	expect_line(l.text, "mode enforce");
	expect_line(l.text, "default deny");
	loaded_free(&l);
	bw_learn_free(s);
}
END_TEST

START_TEST(over_a_kernel_limit_is_said_at_the_top)
{
	struct bw_learn_set *s = bw_learn_new();
	struct bw_profile *p = NULL;
	struct bw_diags d = {0};
	struct bw_compiled c;
	char err[256], *text, *at, want[64];
	uint8_t a[16];
	int line = 0;

	v4(a, 127, 0, 0, 1);
	for (int i = 0; i <= BW_NET_RANGES; i++)
		add_inet(s, BW_NET_CONNECT, BW_NET_TCP, a, (uint16_t)(1000 + i), "x");
	text = write_text(s, NULL);
	ck_assert_msg(!strncmp(text, "# WARNING: this profile does not load as written", 48), "%s",
		      text);
	ck_assert_ptr_nonnull(strstr(text, "port ranges"));
	/* The line it names is the rule that went over. */
	at = strstr(text, "#   line ");
	ck_assert_ptr_nonnull(at);
	line = atoi(at + 9);
	at = text;
	for (int i = 1; i < line; i++)
		at = strchr(at, '\n') + 1;
	snprintf(want, sizeof(want), "allow net connect tcp 127.0.0.1:%d", 1000 + BW_NET_RANGES);
	ck_assert_msg(!strncmp(at, want, strlen(want)), "line %d: %.60s\n%s", line, at, text);
	/* It parses: only the compiler refuses it. */
	ck_assert_int_eq(bw_profile_parse_string("t", text, strlen(text), NULL, &p, &d), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_int_eq(bw_compile(p, &c, err, sizeof(err)), -E2BIG);
	bw_profile_free(p);
	bw_diags_free(&d);
	free(text);
	bw_learn_free(s);
}
END_TEST

Suite *learn_suite(void)
{
	Suite *s = suite_create("learn");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, round_trip_every_kind);
	tcase_add_test(tc, merge_counts_access_programs);
	tcase_add_test(tc, programs_keep_the_smallest_three);
	tcase_add_test(tc, stable_whatever_the_order);
	tcase_add_test(tc, sections_are_sorted);
	tcase_add_test(tc, long_paths_are_comments);
	tcase_add_test(tc, quoting);
	tcase_add_test(tc, unexpressible_names_never_inject);
	tcase_add_test(tc, fold_into_base);
	tcase_add_test(tc, fold_names_given_twice_are_one_include);
	tcase_add_test(tc, fold_nothing_covered_or_missing);
	tcase_add_test(tc, fold_with_denies);
	tcase_add_test(tc, net_forms);
	tcase_add_test(tc, own_listener_ports);
	tcase_add_test(tc, unnamed_files_are_no_rules);
	tcase_add_test(tc, exec_memfd);
	tcase_add_test(tc, libraries_and_the_loader);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, empty_set);
	tcase_add_test(tc, over_a_kernel_limit_is_said_at_the_top);
	suite_add_tcase(s, tc);
	return s;
}
