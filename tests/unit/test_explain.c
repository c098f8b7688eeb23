// SPDX-License-Identifier: GPL-2.0-only
/*
 * `check --explain`: the deciding rule of each access, read from the
 * compiled entries the kernel gets (most specific wins, deny at equal
 * specificity, name prefixes, IPv4-mapped addresses, one-object verdicts),
 * and a clear refusal of what it cannot read.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "explain.h"
#include "profile.h"
#include "suites.h"

static const char *text = "profile x\n"					     /* 1 */
			  "default deny file\n"				     /* 2 */
			  "default allow net\n"				     /* 3, exec: deny */
			  "allow file r /srv/**\n"			     /* 4 */
			  "deny file r /srv/secret/**\n"		     /* 5 */
			  "allow file rw /srv/data/**\n"		     /* 6 */
			  "deny file w /srv/data/**\n"			     /* 7 */
			  "allow file rw /dev/shm/PostgreSQL.*\n"	     /* 8 */
			  "allow exec /usr/bin/**\n"			     /* 9 */
			  "allow exec lib /usr/lib/**\n"		     /* 10 */
			  "deny net connect tcp 10.1.0.0/16:* as internal\n" /* 11 */
			  "allow net connect tcp 10.0.0.0/8:443\n"	     /* 12 */
			  "deny net connect unix /run/docker.sock\n"	     /* 13 */
			  "allow net raw\n"				     /* 14 */
			  "allow mount\n"				     /* 15 */
			  "deny exec memfd\n";				     /* 16 */

static struct bw_profile *p;
static struct bw_compiled c;

static void setup(void)
{
	struct bw_diags d = {};
	char err[256];

	ck_assert_int_eq(bw_profile_parse_string("t", text, strlen(text), NULL, &p, &d), 0);
	bw_diags_free(&d);
	ck_assert_int_eq(bw_compile(p, &c, err, sizeof(err)), 0);
}

static void teardown(void)
{
	bw_compiled_free(&c);
	bw_profile_free(p);
}

/* The explanation of obj (malloc'd), failing the test if it is refused. */
static char *explain(const char *obj)
{
	char *buf = NULL, why[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = bw_explain(p, &c, obj, f, why, sizeof(why));

	fclose(f);
	ck_assert_msg(ret == 0, "%s: %s", obj, why);
	return buf;
}

#define EXPECT(obj, line)                                                                          \
	do {                                                                                       \
		char *out_ = explain(obj);                                                         \
		ck_assert_msg(strstr(out_, line), "%s: no line\n%s\nin\n%s", obj, line, out_);     \
		free(out_);                                                                        \
	} while (0)

START_TEST(paths)
{
	EXPECT("/srv/a/b", "/srv/a/b in profile x (enforce):\n");
	EXPECT("/srv/a/b", "  file r     allow by t:4\n");
	EXPECT("/srv/a/b", "  file w     deny  by default (t:2)\n");
	/* The longer rule wins; its own slot only, the other inherited. */
	EXPECT("/srv/secret/k", "  file r     deny  by t:5\n");
	/* At equal specificity a deny wins, and each slot says whose it is. */
	EXPECT("/srv/data/f", "  file r     allow by t:6\n");
	EXPECT("/srv/data/f", "  file w     deny  by t:7\n");
	/* The subtree rule decides its directory too; normalised as a rule path. */
	EXPECT("//srv//data/", "/srv/data in profile x");
	EXPECT("//srv//data/", "  file r     allow by t:6\n");
	/* A name prefix decides names in its directory, not below them. */
	EXPECT("/dev/shm/PostgreSQL.1234", "  file w     allow by t:8\n");
	EXPECT("/dev/shm/PostgreSQL.1234/x", "  file w     deny  by default");
	EXPECT("/dev/shm/other", "  file r     deny  by default");
	/* Exec keys: running in one slot, mapping in the other. */
	EXPECT("/usr/bin/env", "  exec       allow by t:9\n");
	EXPECT("/usr/bin/env", "  exec lib   allow by t:9\n");
	EXPECT("/usr/lib/libc.so.6", "  exec       deny  by default (no `default` line: deny)\n");
	EXPECT("/usr/lib/libc.so.6", "  exec lib   allow by t:10\n");
}
END_TEST

START_TEST(network_and_others)
{
	EXPECT("net connect tcp 10.1.2.3:443", "  connect    deny  by t:11\n");
	EXPECT("net connect tcp 10.2.0.1:443", "  connect    allow by t:12\n");
	EXPECT("net connect tcp 10.2.0.1:80", "  connect    allow by default (t:3)\n");
	/* An IPv4-mapped IPv6 address is the IPv4 address it reaches. */
	EXPECT("net connect tcp [::ffff:10.1.2.3]:22", "net connect tcp 10.1.2.3:22 in profile");
	EXPECT("net connect tcp [::ffff:10.1.2.3]:22", "  connect    deny  by t:11\n");
	EXPECT("net connect udp 10.1.2.3:53", "  connect    allow by default");
	EXPECT("net bind tcp 10.1.2.3:443", "  bind       allow by default");
	EXPECT("net connect tcp [fd00::1]:443", "net connect tcp [fd00::1]:443 in");
	EXPECT("net connect unix /run//docker.sock", "  connect    deny  by t:13\n");
	EXPECT("net connect unix @other", "  connect    allow by default");
	EXPECT("net raw", "  raw        allow by t:14\n");
	EXPECT("net admin", "  admin      deny  no rule: refused unless a rule allows it\n");
	EXPECT("mount", "  mount      allow by t:15\n");
	EXPECT("userns", "  userns     deny  no rule: refused unless a rule allows it\n");
	EXPECT("exec memfd", "  exec       deny  by t:16\n");
}
END_TEST

START_TEST(refusals)
{
	static const char *const bad[] = {
	    "relative/path",
	    "/a/../b",
	    "/srv/*",
	    "net connect tcp 10.0.0.0/8:443",
	    "net connect tcp 10.0.0.1:1-2",
	    "net connect tcp localhost:80",
	    "net listen tcp 1.2.3.4:5",
	    "net connect sctp 1.2.3.4:5",
	    "net connect unix run/x",
	    "net connect tcp 1.2.3.4:5 x",
	    "net",
	    "mounts",
	    "",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[256] = "";
		int ret = bw_explain(p, &c, bad[i], stdout, why, sizeof(why));

		ck_assert_msg(ret == -EINVAL && why[0], "'%s' was explained", bad[i]);
	}
}
END_TEST

Suite *explain_suite(void)
{
	Suite *s = suite_create("check --explain");
	TCase *tc = tcase_create("explain");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, network_and_others);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}
