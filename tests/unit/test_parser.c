// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profile-level statements (profile, mode, default, on-deny, match), the
 * statement structure (keywords, missing arguments, trailing text) and
 * recovery: every line's error is reported, with its column.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "helpers.h"
#include "suites.h"

START_TEST(minimal)
{
	struct parsed r;

	parse_text(&r, "profile p\n", NULL);
	expect_clean(&r);
	ck_assert_str_eq(r.p->name, "p");
	ck_assert_str_eq(r.p->path, T_NAME);
	ck_assert(!r.p->mode_given);
	ck_assert_int_eq(r.p->mode, BW_MODE_ENFORCE);
	ck_assert_int_eq(r.p->on_deny, BW_ON_DENY_LOG);
	for (int c = 0; c < BW_CAT_COUNT; c++) {
		ck_assert_int_eq(r.p->defaults[c], BW_V_DENY);
		ck_assert_int_eq(r.p->default_origin[c].line, 0);
	}
	ck_assert_uint_eq(r.p->nrules, 0);
	ck_assert_uint_eq(r.p->nmatches, 0);
	ck_assert_uint_eq(r.p->nfiles, 1);
	ck_assert_str_eq(r.p->files[0], T_NAME);
	parsed_free(&r);

	/* no final newline, comments, blank lines, CRLF, indentation */
	parse_text(&r, "# header\r\n\r\n   \t profile p # trailing comment\r\n\n# end", NULL);
	expect_clean(&r);
	ck_assert_str_eq(r.p->name, "p");
	parsed_free(&r);
}
END_TEST

START_TEST(profile_name)
{
	struct parsed r;
	char text[128];

	parse_text(&r, "", NULL);
	expect_invalid(&r);
	expect_error(&r, 1, 1, "missing 'profile NAME' line");
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	parse_text(&r, "\n\nmode enforce\n", NULL);
	expect_error(&r, 1, 1, "missing 'profile NAME' line");
	parsed_free(&r);

	parse_text(&r, "profile a\nprofile b\n", NULL);
	expect_error(&r, 2, 1, "second 'profile' line (first at t.profile:1)");
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	parse_text(&r, "profile\n", NULL);
	expect_error(&r, 1, 8, "missing profile name");
	parsed_free(&r);

	parse_text(&r, "profile -x\n", NULL);
	expect_error(&r, 1, 9, "bad profile name '-x'");
	parsed_free(&r);

	parse_text(&r, "profile \"a b\"\n", NULL);
	expect_error(&r, 1, 9, "bad profile name 'a b'");
	parsed_free(&r);

	parse_text(&r, "profile \"quoted.name_1-2\"\n", NULL);
	expect_clean(&r);
	ck_assert_str_eq(r.p->name, "quoted.name_1-2");
	parsed_free(&r);

	memset(text, 0, sizeof(text));
	strcpy(text, "profile ");
	memset(text + 8, 'n', 64);
	parse_text(&r, text, NULL);
	expect_clean(&r);
	ck_assert_uint_eq(strlen(r.p->name), 64);
	parsed_free(&r);

	text[8 + 64] = 'n';
	parse_text(&r, text, NULL);
	expect_error(&r, 1, 9, "bad profile name");
	parsed_free(&r);
}
END_TEST

START_TEST(mode)
{
	static const struct {
		const char *word;
		enum bw_mode mode;
	} modes[] = {
	    {"enforce", BW_MODE_ENFORCE}, {"audit", BW_MODE_AUDIT}, {"learn", BW_MODE_LEARN}};
	struct parsed r;
	char text[64];

	for (size_t i = 0; i < 3; i++) {
		snprintf(text, sizeof(text), "profile p\nmode %s\n", modes[i].word);
		parse_text(&r, text, NULL);
		expect_clean(&r);
		ck_assert_int_eq(r.p->mode, modes[i].mode);
		ck_assert(r.p->mode_given);
		ck_assert_str_eq(bw_mode_name(r.p->mode), modes[i].word);
		parsed_free(&r);
	}

	/* A keyword, not a string. */
	parse_text(&r, "profile p\nmode \"audit\"\n", NULL);
	expect_error(&r, 2, 6, "bad mode 'audit': expected enforce, audit or learn");
	parsed_free(&r);

	parse_text(&r, "profile p\nmode fast\n", NULL);
	expect_error(&r, 2, 6, "bad mode 'fast': expected enforce, audit or learn");
	parsed_free(&r);

	parse_text(&r, "profile p\nmode\n", NULL);
	expect_error(&r, 2, 5, "missing mode");
	parsed_free(&r);

	parse_text(&r, "profile p\nmode audit\nmode audit\n", NULL);
	ck_assert_int_eq(r.ret, 0);
	expect_warning(&r, 3, 1, "repeated 'mode' (first at t.profile:2)");
	expect_counts(&r, 0, 1);
	ck_assert_int_eq(r.p->mode, BW_MODE_AUDIT);
	parsed_free(&r);

	parse_text(&r, "profile p\nmode audit\nmode learn\n", NULL);
	expect_error(&r, 3, 1, "conflicting 'mode': 'learn' here, 'audit' at t.profile:2");
	expect_counts(&r, 1, 0);
	parsed_free(&r);
}
END_TEST

START_TEST(defaults)
{
	struct parsed r;

	parse_text(&r, "profile p\ndefault allow\n", NULL);
	expect_clean(&r);
	for (int c = 0; c < BW_CAT_COUNT; c++) {
		ck_assert_int_eq(r.p->defaults[c], BW_V_ALLOW);
		ck_assert_int_eq(r.p->default_origin[c].line, 2);
		ck_assert_int_eq(r.p->default_origin[c].col, 1);
		ck_assert_str_eq(r.p->default_origin[c].file, T_NAME);
	}
	parsed_free(&r);

	/* a category not stated stays deny, and implicit */
	parse_text(&r, "profile p\ndefault allow net\ndefault deny exec\n", NULL);
	expect_clean(&r);
	ck_assert_int_eq(r.p->defaults[BW_CAT_NET], BW_V_ALLOW);
	ck_assert_int_eq(r.p->default_origin[BW_CAT_NET].line, 2);
	ck_assert_int_eq(r.p->defaults[BW_CAT_EXEC], BW_V_DENY);
	ck_assert_int_eq(r.p->default_origin[BW_CAT_EXEC].line, 3);
	ck_assert_int_eq(r.p->defaults[BW_CAT_FILE], BW_V_DENY);
	ck_assert_int_eq(r.p->default_origin[BW_CAT_FILE].line, 0);
	parsed_free(&r);

	parse_text(&r, "profile p\ndefault deny\ndefault deny file\n", NULL);
	ck_assert_int_eq(r.ret, 0);
	expect_warning(&r, 3, 1, "repeated default for file (first at t.profile:2)");
	expect_counts(&r, 0, 1);
	parsed_free(&r);

	/* `default deny` speaks for net too: allowing it afterwards contradicts */
	parse_text(&r, "profile p\ndefault deny\ndefault allow net\n", NULL);
	expect_invalid(&r);
	expect_error(&r, 3, 1, "conflicting default for net: 'allow' here, 'deny' at t.profile:2");
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	parse_text(&r, "profile p\ndefault allow file\ndefault deny\n", NULL);
	expect_error(&r, 3, 1, "conflicting default for file: 'deny' here, 'allow' at t.profile:2");
	parsed_free(&r);

	parse_text(&r, "profile p\ndefault maybe\n", NULL);
	expect_error(&r, 2, 9, "bad default 'maybe': expected allow or deny");
	parsed_free(&r);

	parse_text(&r, "profile p\ndefault allow files\n", NULL);
	expect_error(&r, 2, 15, "bad default category 'files': expected file, exec or net");
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	parse_text(&r, "profile p\ndefault allow net exec\n", NULL);
	expect_error(&r, 2, 19, "unexpected 'exec' after a complete statement");
	parsed_free(&r);

	parse_text(&r, "profile p\ndefault\n", NULL);
	expect_error(&r, 2, 8, "missing verdict: expected allow or deny");
	parsed_free(&r);
}
END_TEST

START_TEST(on_deny)
{
	struct parsed r;

	parse_text(&r, "profile p\non-deny kill\n", NULL);
	expect_clean(&r);
	ck_assert_int_eq(r.p->on_deny, BW_ON_DENY_KILL);
	parsed_free(&r);

	parse_text(&r, "profile p\non-deny log\n", NULL);
	expect_clean(&r);
	ck_assert_int_eq(r.p->on_deny, BW_ON_DENY_LOG);
	parsed_free(&r);

	parse_text(&r, "profile p\non-deny stop\n", NULL);
	expect_error(&r, 2, 9, "bad on-deny action 'stop': expected log or kill");
	parsed_free(&r);

	parse_text(&r, "profile p\non-deny\n", NULL);
	expect_error(&r, 2, 8, "missing action: expected log or kill");
	parsed_free(&r);

	parse_text(&r, "profile p\non-deny kill\non-deny kill\non-deny log\n", NULL);
	expect_warning(&r, 3, 1, "repeated 'on-deny' (first at t.profile:2)");
	expect_error(&r, 4, 1, "conflicting 'on-deny': 'log' here, 'kill' at t.profile:2");
	expect_counts(&r, 1, 1);
	parsed_free(&r);
}
END_TEST

START_TEST(match)
{
	struct parsed r;

	parse_text(&r,
		   "profile p\n"
		   "match namespace=ci pod=runner-* container=job\n"
		   "match cgroup=/system.slice/*.service\n",
		   NULL);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nmatches, 2);
	const struct bw_match *m = &r.p->matches[0];
	ck_assert_str_eq(m->namespace_, "ci");
	ck_assert_str_eq(m->pod, "runner-*");
	ck_assert_str_eq(m->container, "job");
	ck_assert_ptr_null(m->cgroup);
	ck_assert_int_eq(m->origin.line, 2);
	ck_assert_int_eq(m->origin.col, 1);
	ck_assert_str_eq(m->origin.file, T_NAME);
	m = &r.p->matches[1];
	ck_assert_str_eq(m->cgroup, "/system.slice/*.service");
	ck_assert_ptr_null(m->namespace_);
	ck_assert_ptr_null(m->pod);
	ck_assert_ptr_null(m->container);
	ck_assert_int_eq(m->origin.line, 3);
	parsed_free(&r);

	/* a value may itself contain '=' */
	parse_text(&r, "profile p\nmatch pod=a=b\n", NULL);
	expect_clean(&r);
	ck_assert_str_eq(r.p->matches[0].pod, "a=b");
	parsed_free(&r);

	parse_text(&r, "profile p\nmatch\n", NULL);
	expect_error(&r, 2, 6, "'match' needs at least one KEY=VALUE");
	parsed_free(&r);

	/* every bad pair of a line is reported */
	parse_text(&r, "profile p\nmatch user=x pod=a pod=b pod namespace=\n", NULL);
	expect_invalid(&r);
	expect_error(&r, 2, 7,
		     "unknown match key 'user': expected cgroup, namespace, pod or container");
	expect_error(&r, 2, 20, "duplicate match key 'pod'");
	expect_error(&r, 2, 26, "expected KEY=VALUE, found 'pod'");
	expect_error(&r, 2, 30, "empty value for match key 'namespace'");
	expect_counts(&r, 4, 0);
	parsed_free(&r);
}
END_TEST

START_TEST(keywords)
{
	struct parsed r;

	parse_text(&r, "profile p\n  allowed file r /x\n", NULL);
	expect_error(&r, 2, 3, "unknown keyword 'allowed'");
	expect_counts(&r, 1, 0);
	parsed_free(&r);

	/* keywords are case-sensitive bare words */
	parse_text(&r, "profile p\nAllow file r /x\n\"allow\" file r /x\n", NULL);
	expect_error(&r, 2, 1, "unknown keyword 'Allow'");
	expect_error(&r, 3, 1, "expected a keyword, found the string \"allow\"");
	expect_counts(&r, 2, 0);
	parsed_free(&r);

	parse_text(&r, "profile p\nallow\n", NULL);
	expect_error(&r, 2, 6,
		     "missing category: expected file, exec, net, mount, chroot, userns or cgroup");
	parsed_free(&r);

	parse_text(&r, "profile p\ndeny files r /x\n", NULL);
	expect_error(
	    &r, 2, 6,
	    "bad rule category 'files': expected file, exec, net, mount, chroot, userns or cgroup");
	expect_counts(&r, 1, 0);
	parsed_free(&r);
}
END_TEST

START_TEST(trailing)
{
	struct parsed r;

	parse_text(&r,
		   "profile p extra\n"
		   "mode enforce now\n"
		   "on-deny log x\n"
		   "allow exec /bin/sh -c\n"
		   "allow exec memfd please\n"
		   "allow file r /x \"y\"\n"
		   "include \"a\" \"b\"\n"
		   "allow net connect tcp 1.2.3.4:5 6\n",
		   NULL);
	expect_invalid(&r);
	expect_error(&r, 1, 11, "unexpected 'extra' after a complete statement");
	expect_error(&r, 2, 14, "unexpected 'now'");
	expect_error(&r, 3, 13, "unexpected 'x'");
	expect_error(&r, 4, 20, "unexpected '-c'");
	expect_error(&r, 5, 18, "unexpected 'please'");
	expect_error(&r, 6, 17, "unexpected 'y'");
	/* an include with trailing text is not read at all */
	expect_error(&r, 7, 13, "unexpected 'b'");
	expect_error(&r, 8, 33, "unexpected '6'");
	expect_counts(&r, 8, 0);
	parsed_free(&r);
}
END_TEST

/* `as NAME` may end any rule; the name is checked as a profile's is. */
START_TEST(rule_names)
{
	struct parsed r;
	char text[160];

	parse_text(&r,
		   "profile p\n"
		   "deny file rw /etc/shadow as shadow\n"
		   "allow exec memfd as jit.code\n"
		   "allow exec lib /usr/lib/** as \"libs_1\"\n"
		   "deny net connect tcp 169.254.169.254:* as cloud-metadata\n"
		   "deny net connect unix @x as cloud-metadata\n"
		   "allow net raw as ping\n"
		   "allow mount as mounts\n"
		   "allow file r /srv/as\n",
		   NULL);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, 8);
	ck_assert_str_eq(r.p->rules[0].name, "shadow");
	ck_assert_str_eq(r.p->rules[1].name, "jit.code");
	ck_assert_str_eq(r.p->rules[2].name, "libs_1");
	ck_assert_str_eq(r.p->rules[3].name, "cloud-metadata");
	ck_assert_str_eq(r.p->rules[4].name, "cloud-metadata");
	ck_assert_str_eq(r.p->rules[5].name, "ping");
	ck_assert_str_eq(r.p->rules[6].name, "mounts");
	ck_assert_ptr_null(r.p->rules[7].name);
	ck_assert_str_eq(r.p->rules[7].file.path, "/srv/as");
	parsed_free(&r);

	/* One error a line: a rule in error still has its name read and checked. */
	parse_text(&r,
		   "profile p\n"
		   "allow file r /x as\n"
		   "allow file r /x as -x\n"
		   "allow file r /x as \"a b\"\n"
		   "allow file r /x as a b\n"
		   "allow file q /x as a\n"
		   "allow file q /x as -a\n"
		   "allow file r /x \"as\" a\n",
		   NULL);
	expect_invalid(&r);
	expect_error(&r, 2, 19, "missing rule name after 'as'");
	expect_error(&r, 3, 20, "bad rule name '-x': use 1 to 64 letters");
	expect_error(&r, 4, 20, "bad rule name 'a b'");
	expect_error(&r, 5, 22, "unexpected 'b' after a complete statement");
	expect_error(&r, 6, 12, "bad permission letters 'q'");
	expect_error(&r, 7, 12, "bad permission letters 'q'");
	expect_error(&r, 7, 20, "bad rule name '-a'");
	expect_error(&r, 8, 17, "unexpected 'as' after a complete statement");
	/* the rules of lines 5 and 8 are kept: the only errors there are past them */
	expect_counts(&r, 8, 1);
	parsed_free(&r);

	memset(text, 0, sizeof(text));
	strcpy(text, "profile p\nallow mount as ");
	memset(text + strlen(text), 'n', 64);
	parse_text(&r, text, NULL);
	expect_clean(&r);
	ck_assert_uint_eq(strlen(r.p->rules[0].name), 64);
	parsed_free(&r);

	strcat(text, "n");
	parse_text(&r, text, NULL);
	expect_error(&r, 2, 16, "bad rule name");
	parsed_free(&r);
}
END_TEST

/* Errors do not stop the parse: each line reports its own. */
START_TEST(recovery)
{
	struct parsed r;

	parse_text(&r,
		   "profile p\n"
		   "allow file x /a\n"
		   "bogus\n"
		   "allow file r /ok\n"
		   "allow file r \"/unterminated\n"
		   "allow file r relative\n"
		   "mode\n",
		   NULL);
	expect_invalid(&r);
	expect_error(&r, 2, 12, "bad permission letters 'x'");
	expect_error(&r, 3, 1, "unknown keyword 'bogus'");
	expect_error(&r, 5, 14, "unterminated string");
	expect_error(&r, 6, 14, "relative path 'relative'");
	expect_error(&r, 7, 5, "missing mode");
	expect_counts(&r, 5, 0);
	parsed_free(&r);
}
END_TEST

START_TEST(nul_bytes)
{
	static const char text[] = "profile p\0\nallow file r /a\0b\n\0\nallow file r \"/x\0\"\n";
	struct parsed r;

	parse_bytes(&r, text, sizeof(text) - 1, NULL);
	expect_invalid(&r);
	expect_error(&r, 1, 10, "NUL byte in profile");
	expect_error(&r, 2, 16, "NUL byte in profile");
	expect_error(&r, 3, 1, "NUL byte in profile");
	expect_error(&r, 4, 17, "NUL byte in profile");
	expect_counts(&r, 4, 0);
	parsed_free(&r);
}
END_TEST

START_TEST(too_large)
{
	struct parsed r;

	/* the size is checked before anything is read or copied */
	parse_bytes(&r, "", (8u << 20) + 1, NULL);
	expect_invalid(&r);
	expect_error(&r, 1, 1, "profile is larger than 8 MiB");
	expect_counts(&r, 1, 0);
	parsed_free(&r);
}
END_TEST

Suite *parser_suite(void)
{
	Suite *s = suite_create("parser");
	TCase *tc = tcase_create("statements");

	tcase_add_test(tc, minimal);
	tcase_add_test(tc, profile_name);
	tcase_add_test(tc, mode);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, on_deny);
	tcase_add_test(tc, match);
	tcase_add_test(tc, keywords);
	tcase_add_test(tc, trailing);
	tcase_add_test(tc, rule_names);
	tcase_add_test(tc, recovery);
	tcase_add_test(tc, nul_bytes);
	tcase_add_test(tc, too_large);
	suite_add_tcase(s, tc);
	return s;
}
