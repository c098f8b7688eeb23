// SPDX-License-Identifier: GPL-2.0-only
/* File and exec rules: permissions, path normalisation, subtrees, limits. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpfwarden.h>

#include "helpers.h"
#include "suites.h"

/* Parse "profile p\n" + line; expect it clean with exactly one rule. */
static const struct bw_rule *one_rule(struct parsed *r, const char *line)
{
	char text[1024];

	snprintf(text, sizeof(text), "profile p\n%s\n", line);
	parse_text(r, text, NULL);
	ck_assert_msg(r->ret == 0 && r->d.n == 0, "'%s': ret %d\n%s", line, r->ret, diag_dump(r));
	ck_assert_uint_eq(r->p->nrules, 1);
	return &r->p->rules[0];
}

/* Parse "profile p\n" + line; expect one error at line 2, `col`. */
static void one_error(const char *line, int col, const char *substr)
{
	struct parsed r;
	char text[1024];

	snprintf(text, sizeof(text), "profile p\n%s\n", line);
	parse_text(&r, text, NULL);
	ck_assert_msg(r.ret == -EINVAL, "'%s' was accepted", line);
	expect_error(&r, 2, col, substr);
	expect_counts(&r, 1, 0);
	parsed_free(&r);
}

START_TEST(permissions)
{
	static const struct {
		const char *perms;
		unsigned access;
	} t[] = {{"r", BW_ACC_R},
		 {"w", BW_ACC_W},
		 {"rw", BW_ACC_R | BW_ACC_W},
		 {"wr", BW_ACC_R | BW_ACC_W},
		 {"\"rw\"", BW_ACC_R | BW_ACC_W}};
	struct parsed r;
	char line[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(line, sizeof(line), "allow file %s /etc/hosts", t[i].perms);
		const struct bw_rule *rule = one_rule(&r, line);
		ck_assert_int_eq(rule->cat, BW_CAT_FILE);
		ck_assert_int_eq(rule->verdict, BW_V_ALLOW);
		ck_assert_uint_eq(rule->file.access, t[i].access);
		ck_assert_str_eq(rule->file.path, "/etc/hosts");
		ck_assert(!rule->file.subtree);
		ck_assert(!rule->file.memfd);
		parsed_free(&r);
	}

	one_error("allow file x /a", 12, "bad permission letters 'x': expected r, w or rw");
	one_error("allow file rwx /a", 12, "bad permission letters 'rwx'");
	one_error("allow file rr /a", 12, "bad permission letters 'rr'");
	one_error("allow file R /a", 12, "bad permission letters 'R'");
	one_error("allow file \"\" /a", 12, "bad permission letters ''");
	one_error("allow file", 11, "missing permissions");
	one_error("allow file rw", 14, "missing path");
}
END_TEST

START_TEST(both_arguments_checked)
{
	struct parsed r;

	parse_text(&r, "profile p\ndeny file q etc/shadow\n", NULL);
	expect_error(&r, 2, 11, "bad permission letters 'q'");
	expect_error(&r, 2, 13, "relative path 'etc/shadow'");
	expect_counts(&r, 2, 0);
	parsed_free(&r);
}
END_TEST

START_TEST(normalisation)
{
	static const struct {
		const char *in, *path;
		bool subtree;
	} t[] = {
	    {"/etc/hosts", "/etc/hosts", false},
	    {"/a//b/", "/a/b", false},
	    {"//", "/", false},
	    {"/", "/", false},
	    {"/dir/**", "/dir", true},
	    {"/dir/**/", "/dir", true},
	    {"///dir//sub///**", "/dir/sub", true},
	    {"/**", "/", true},
	    {"//**", "/", true},
	    {"/a/.b/..c/d./e..", "/a/.b/..c/d./e..", false},
	    {"/what?/[x]/{y}", "/what?/[x]/{y}", false},
	    {"\"/tmp/with space/\\\"q\\\"\"", "/tmp/with space/\"q\"", false},
	    {"\"/tmp/with space/**\"", "/tmp/with space", true},
	};
	struct parsed r;
	char line[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(line, sizeof(line), "deny file rw %s", t[i].in);
		const struct bw_rule *rule = one_rule(&r, line);
		ck_assert_int_eq(rule->verdict, BW_V_DENY);
		ck_assert_str_eq(rule->file.path, t[i].path);
		ck_assert_int_eq(rule->file.subtree, t[i].subtree);
		parsed_free(&r);
	}
}
END_TEST

START_TEST(path_errors)
{
	one_error("allow file r etc/passwd", 14,
		  "relative path 'etc/passwd': paths must be absolute");
	one_error("allow file r **", 14, "relative path '**'");
	one_error("allow file r \"\"", 14, "empty path");
	one_error("allow file r /a/../b", 14, "'.' and '..' components are not allowed");
	one_error("allow file r /a/.", 14, "'.' and '..' components are not allowed");
	one_error("allow file r /./**", 14, "'.' and '..' components are not allowed");
	one_error("allow file r /a/**/b", 14, "'**' is only allowed as the last component");
	one_error("allow file r /**/**", 14, "'**' is only allowed as the last component");
	one_error("allow file r /a/*", 14, "a '*' alone would be every name in the directory");
	one_error("allow file r /a/b**", 14, "glob characters are not supported here");
	one_error("allow file r /a/b*/c", 14, "glob characters are not supported here");
	one_error("allow file r /a/b*c", 14, "glob characters are not supported here");
	one_error("allow file r /a/***", 14, "glob characters are not supported here");
	one_error("allow file r /a/**x", 14, "glob characters are not supported here");
	one_error("allow file r /*/x", 14, "glob characters are not supported here");
}
END_TEST

/* DIR/NAME*: the names in DIR beginning with NAME, allow rules only. */
START_TEST(name_prefixes)
{
	struct parsed r;
	const struct bw_rule *rule;

	rule = one_rule(&r, "allow file rw /dev/shm//PostgreSQL.*");
	ck_assert_str_eq(rule->file.path, "/dev/shm/PostgreSQL.");
	ck_assert(rule->file.name_prefix);
	ck_assert(!rule->file.subtree);
	parsed_free(&r);

	rule = one_rule(&r, "allow exec lib /opt/app/lib/libplugin-*");
	ck_assert_str_eq(rule->file.path, "/opt/app/lib/libplugin-");
	ck_assert(rule->file.name_prefix);
	ck_assert_uint_eq(rule->file.access, BW_ACC_M);
	parsed_free(&r);

	/* a subtree is not a prefix, and a plain path neither */
	rule = one_rule(&r, "allow file r /a/**");
	ck_assert(!rule->file.name_prefix);
	parsed_free(&r);

	one_error("deny file r /etc/ssh/ssh_host_*", 13, "a name prefix can only allow");
	one_error("deny exec /usr/bin/x*", 11, "a name prefix can only allow");
	one_error("allow net connect unix /run/x*", 24,
		  "unix socket rules name a socket or a directory's");
	one_error("allow file r /proc/self/ta*", 14, "no name prefix in /proc/self");
}
END_TEST

START_TEST(length_limit)
{
	struct parsed r;
	char path[300], line[400];

	/* exactly BW_RULE_PATH_MAX bytes */
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[BW_RULE_PATH_MAX] = '\0';
	snprintf(line, sizeof(line), "allow file r %s", path);
	const struct bw_rule *rule = one_rule(&r, line);
	ck_assert_uint_eq(strlen(rule->file.path), BW_RULE_PATH_MAX);
	parsed_free(&r);

	/* the limit is on the stored path: after "//" collapse, without the subtree suffix */
	snprintf(line, sizeof(line), "allow file r /%s/**", path);
	rule = one_rule(&r, line);
	ck_assert_uint_eq(strlen(rule->file.path), BW_RULE_PATH_MAX);
	ck_assert(rule->file.subtree);
	parsed_free(&r);

	path[BW_RULE_PATH_MAX] = 'a';
	path[BW_RULE_PATH_MAX + 1] = '\0';
	snprintf(line, sizeof(line), "allow file r %s", path);
	one_error(line, 14, "path is 251 bytes long; the kernel-side limit is 250 bytes");
	snprintf(line, sizeof(line), "allow exec %s/**", path);
	one_error(line, 12, "the kernel-side limit is 250 bytes (BW_RULE_PATH_MAX)");
}
END_TEST

/* An exec rule on a path: what it decides (BW_ACC_X running, BW_ACC_M mapping) and where. */
static void expect_exec_path(const struct bw_rule *rule, unsigned access, const char *path,
			     bool subtree)
{
	ck_assert_int_eq(rule->cat, BW_CAT_EXEC);
	ck_assert_uint_eq(rule->file.access, access);
	ck_assert_str_eq(rule->file.path, path);
	ck_assert_int_eq(rule->file.subtree, subtree);
	ck_assert(!rule->file.memfd);
}

START_TEST(exec_rules)
{
	struct parsed r;
	const struct bw_rule *rule;

	rule = one_rule(&r, "allow exec /usr/bin/python3.11");
	ck_assert_int_eq(rule->verdict, BW_V_ALLOW);
	/* a program runs, and its code is mapped */
	expect_exec_path(rule, BW_ACC_X | BW_ACC_M, "/usr/bin/python3.11", false);
	ck_assert_uint_eq(bw_rule_slots(rule), BW_ACC_R | BW_ACC_W);
	parsed_free(&r);

	rule = one_rule(&r, "deny exec /opt/tools//**");
	ck_assert_int_eq(rule->verdict, BW_V_DENY);
	ck_assert_str_eq(rule->file.path, "/opt/tools");
	ck_assert(rule->file.subtree);
	parsed_free(&r);

	rule = one_rule(&r, "allow exec memfd");
	ck_assert(rule->file.memfd);
	ck_assert_ptr_null(rule->file.path);
	ck_assert(!rule->file.subtree);
	parsed_free(&r);

	rule = one_rule(&r, "deny exec memfd");
	ck_assert_int_eq(rule->verdict, BW_V_DENY);
	ck_assert(rule->file.memfd);
	parsed_free(&r);

	/* a quoted "memfd" is a path, not the keyword */
	one_error("allow exec \"memfd\"", 12, "relative path 'memfd'");
	one_error("allow exec bin/sh", 12, "relative path 'bin/sh'");
	one_error("allow exec /bin/*", 12, "a '*' alone would be every name in the directory");
	one_error("allow exec /usr/**/bin", 12, "'**' is only allowed as the last component");
	one_error("allow exec", 11, "missing program path, 'lib PATH' or 'memfd'");
}
END_TEST

START_TEST(exec_lib_rules)
{
	struct parsed r;
	const struct bw_rule *rule;

	/* a library's code may be mapped, not run as a program */
	rule = one_rule(&r, "allow exec lib /usr/lib/x86_64-linux-gnu//**");
	expect_exec_path(rule, BW_ACC_M, "/usr/lib/x86_64-linux-gnu", true);
	ck_assert_uint_eq(bw_rule_slots(rule), BW_ACC_W);
	parsed_free(&r);

	rule = one_rule(&r, "allow exec lib /opt/app/libapp.so");
	expect_exec_path(rule, BW_ACC_M, "/opt/app/libapp.so", false);
	parsed_free(&r);

	/* a quoted "lib" is a (relative) path, not the keyword */
	one_error("allow exec \"lib\"", 12, "relative path 'lib'");
	one_error("allow exec lib", 15, "missing library path after 'lib'");
	one_error("allow exec lib lib/x.so", 16, "relative path 'lib/x.so'");
	one_error("deny exec lib /usr/lib/**", 11,
		  "'lib' is for allow rules only: 'deny exec PATH' refuses both running and "
		  "mapping PATH");
	one_error("allow exec lib memfd", 16,
		  "'allow exec memfd' lets a memfd both run and be "
		  "mapped: 'lib' takes a path");
	one_error("allow exec lib /a /b", 19, "unexpected '/b' after a complete statement");
}
END_TEST

START_TEST(origins)
{
	struct parsed r;

	parse_text(&r, "# c\nprofile p\n\n  deny file r /x\n\tallow exec memfd\n", NULL);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 2);
	ck_assert_str_eq(r.p->rules[0].origin.file, T_NAME);
	ck_assert_int_eq(r.p->rules[0].origin.line, 4);
	ck_assert_int_eq(r.p->rules[0].origin.col, 3);
	ck_assert_int_eq(r.p->rules[1].origin.line, 5);
	ck_assert_int_eq(r.p->rules[1].origin.col, 2);
	/* origins point into the profile's own file list */
	ck_assert_ptr_eq(r.p->rules[0].origin.file, r.p->files[0]);
	parsed_free(&r);
}
END_TEST

Suite *path_suite(void)
{
	Suite *s = suite_create("file and exec rules");
	TCase *tc = tcase_create("paths");

	tcase_add_test(tc, permissions);
	tcase_add_test(tc, both_arguments_checked);
	tcase_add_test(tc, normalisation);
	tcase_add_test(tc, path_errors);
	tcase_add_test(tc, length_limit);
	tcase_add_test(tc, name_prefixes);
	tcase_add_test(tc, exec_rules);
	tcase_add_test(tc, exec_lib_rules);
	tcase_add_test(tc, origins);
	suite_add_tcase(s, tc);
	return s;
}
