// SPDX-License-Identifier: GPL-2.0-only
/* Checks across rules: duplicates, contradictions, the rule limit, big input. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <bpfwarden.h>

#include "helpers.h"
#include "suites.h"

/* "profile p\n" then the lines: rule N is on line N + 1. */
static void parse_rules(struct parsed *r, const char *rules)
{
	char text[2048];

	snprintf(text, sizeof(text), "profile p\n%s", rules);
	parse_text(r, text, NULL);
}

/* Parses fine, without any diagnostic. */
static void quiet(const char *rules)
{
	struct parsed r;

	parse_rules(&r, rules);
	ck_assert_msg(r.ret == 0 && r.d.n == 0, "%s:\n%s", rules, diag_dump(&r));
	parsed_free(&r);
}

START_TEST(duplicates)
{
	struct parsed r;

	parse_rules(&r, "allow file r /x\nallow file r /x\n");
	ck_assert_int_eq(r.ret, 0);
	expect_warning(&r, 3, 1, "duplicate rule (first at t.profile:2)");
	expect_counts(&r, 0, 1);
	/* warnings do not drop rules */
	ck_assert_uint_eq(r.p->nrules, 2);
	parsed_free(&r);

	/* the same object spelled differently; overlapping access is enough */
	parse_rules(&r,
		    "deny file rw /x/\n  deny file r //x\nallow exec memfd\nallow exec memfd\n");
	expect_warning(&r, 3, 3, "duplicate rule (first at t.profile:2)");
	expect_warning(&r, 5, 1, "duplicate rule (first at t.profile:4)");
	expect_counts(&r, 0, 2);
	parsed_free(&r);

	/* every repeat names the first */
	parse_rules(&r, "allow exec /bin/sh\nallow exec /bin/sh\nallow exec /bin/sh\n");
	expect_warning(&r, 3, 1, "duplicate rule (first at t.profile:2)");
	expect_warning(&r, 4, 1, "duplicate rule (first at t.profile:2)");
	expect_counts(&r, 0, 2);
	parsed_free(&r);

	/* `exec` maps what it runs: `exec lib` on the same object adds nothing */
	parse_rules(&r, "allow exec /opt/x/**\nallow exec lib /opt/x/**\nallow exec lib /y\n"
			"allow exec lib /y\n");
	expect_warning(&r, 3, 1, "duplicate rule (first at t.profile:2)");
	expect_warning(&r, 5, 1, "duplicate rule (first at t.profile:4)");
	expect_counts(&r, 0, 2);
	parsed_free(&r);

	parse_rules(&r, "allow net connect tcp [::ffff:1.2.3.4]:80\n"
			"allow net connect tcp 1.2.3.4/32:80-80\n"
			"allow net bind unix @sock\n"
			"allow net bind unix \"@sock\"\n");
	expect_warning(&r, 3, 1, "duplicate rule (first at t.profile:2)");
	expect_warning(&r, 5, 1, "duplicate rule (first at t.profile:4)");
	expect_counts(&r, 0, 2);
	parsed_free(&r);
}
END_TEST

START_TEST(contradictions)
{
	struct parsed r;

	parse_rules(&r, "allow file rw /x\ndeny file w /x\n");
	ck_assert_int_eq(r.ret, 0);
	expect_warning(&r, 3, 1, "contradicts t.profile:2; deny wins");
	expect_counts(&r, 0, 1);
	parsed_free(&r);

	/* reported on the later rule, whichever verdict it has */
	parse_rules(&r, "deny exec /bin/sh\nallow exec /bin/sh\n");
	expect_warning(&r, 3, 1, "contradicts t.profile:2; deny wins");
	parsed_free(&r);

	/* mapping is part of what `deny exec` refuses */
	parse_rules(&r, "deny exec /lib/x.so\nallow exec lib /lib/x.so\n");
	expect_warning(&r, 3, 1, "contradicts t.profile:2; deny wins");
	expect_counts(&r, 0, 1);
	parsed_free(&r);

	parse_rules(&r, "allow net connect udp 10.0.0.0/8:53\n"
			"deny net connect udp 10.0.0.0/8:53\n"
			"allow net connect unix /run/s\n"
			"deny net connect unix /run/s\n");
	expect_warning(&r, 3, 1, "contradicts t.profile:2; deny wins");
	expect_warning(&r, 5, 1, "contradicts t.profile:4; deny wins");
	expect_counts(&r, 0, 2);
	parsed_free(&r);

	/* a rule can repeat one rule and contradict another */
	parse_rules(&r, "allow file r /x\ndeny file r /x\nallow file r /x\n");
	expect_warning(&r, 3, 1, "contradicts t.profile:2; deny wins");
	expect_warning(&r, 4, 1, "duplicate rule (first at t.profile:2)");
	expect_warning(&r, 4, 1, "contradicts t.profile:3; deny wins");
	expect_counts(&r, 0, 3);
	parsed_free(&r);
}
END_TEST

START_TEST(distinct_objects)
{
	/* different access bits */
	quiet("allow file r /x\ndeny file w /x\nallow file w /y\nallow file r /y\n");
	/* a file and its subtree; a file rule and an exec rule */
	quiet("allow file r /x\ndeny file r /x/**\nallow exec /x\n");
	/* memfd and a path */
	quiet("allow exec memfd\ndeny exec /memfd\n");
	/* a library's file and its directory */
	quiet("allow exec lib /l/x.so\nallow exec lib /l/**\ndeny exec /l\n");
	/* operation, protocol, address, prefix, ports, family */
	quiet("allow net connect tcp 1.2.3.4:80\n"
	      "deny net bind tcp 1.2.3.4:80\n"
	      "deny net connect udp 1.2.3.4:80\n"
	      "deny net connect tcp 1.2.3.5:80\n"
	      "deny net connect tcp 1.2.3.0/24:80\n"
	      "deny net connect tcp 1.2.3.4:81\n"
	      "deny net connect tcp 1.2.3.4:80-81\n"
	      "deny net connect tcp *:80\n"
	      "deny net connect tcp localhost:80\n"
	      "deny net connect tcp [::1]:80\n");
	/* abstract and path unix sockets */
	quiet("allow net connect unix @a\ndeny net connect unix /a\n");
}
END_TEST

START_TEST(across_files)
{
	struct parsed r;
	char *want = fixture("inc/grandchild.profile"), msg[600];

	parse_fixture(&r, "dup-include.profile", NULL);
	ck_assert_int_eq(r.ret, 0);
	snprintf(msg, sizeof(msg), "duplicate rule (first at %s:1)", want);
	expect_diag(&r, BW_SEV_WARNING, "dup-include.profile", 3, 1, msg);
	expect_counts(&r, 0, 1);
	parsed_free(&r);
	free(want);
}
END_TEST

/* n distinct rules, then `extra` appended. */
static char *many_rules(size_t n, const char *extra)
{
	size_t cap = n * 32 + strlen(extra) + 32, off;
	char *text = malloc(cap);

	off = (size_t)snprintf(text, cap, "profile many\n");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(text + off, cap - off, "allow file r /r/%zu\n", i);
	snprintf(text + off, cap - off, "%s", extra);
	return text;
}

START_TEST(rule_limit)
{
	struct parsed r;
	char *text;

	text = many_rules(BW_MAX_RULES, "");
	parse_text(&r, text, NULL);
	expect_clean(&r);
	ck_assert_uint_eq(r.p->nrules, BW_MAX_RULES);
	parsed_free(&r);
	free(text);

	/* reported at the first rule past the limit */
	text = many_rules(BW_MAX_RULES, "deny exec memfd\nallow exec memfd\n");
	parse_text(&r, text, NULL);
	expect_invalid(&r);
	expect_error(&r, BW_MAX_RULES + 2, 1,
		     "too many rules: 16386 after includes, the limit is 16384 (BW_MAX_RULES)");
	expect_counts(&r, 1, 0);
	parsed_free(&r);
	free(text);

	/* included rules count: the one past the limit is in the included file */
	char *inc = fixture("inc/grandchild.profile"), line[600];
	snprintf(line, sizeof(line), "include \"%s\"\n", inc);
	text = many_rules(BW_MAX_RULES, line);
	parse_text(&r, text, NULL);
	expect_diag(&r, BW_SEV_ERROR, "inc/grandchild.profile", 1, 1, "too many rules: 16385");
	parsed_free(&r);
	free(text);
	free(inc);
}
END_TEST

/* Big hostile input is linear: time it loosely (the tcase timeout is the bound). */
START_TEST(big_input)
{
	size_t n = (8u << 20) / 16, off = 0;
	char *text = malloc(n * 16 + 16);
	struct parsed r;

	/* 512 Ki identical rules: duplicates by the thousand, rules past the limit */
	off = (size_t)sprintf(text, "profile big\n");
	while (off + 16 < n * 16)
		off += (size_t)sprintf(text + off, "allow file r /x\n");
	parse_text(&r, text, NULL);
	expect_invalid(&r);
	expect_diag(&r, BW_SEV_ERROR, T_NAME, BW_MAX_RULES + 2, 1, "too many rules");
	expect_warning(&r, 3, 1, "duplicate rule (first at t.profile:2)");
	expect_warning(&r, 1003, 1, "too many warnings");
	parsed_free(&r);

	/* one line of 8 MiB: a single token */
	memset(text, 'a', n * 16);
	memcpy(text, "profile big\nallow file r /", 26);
	text[n * 16] = '\0';
	parse_text(&r, text, NULL);
	expect_error(&r, 2, 14, "the kernel-side limit is 250 bytes");
	parsed_free(&r);

	/* many tokens on one line */
	memcpy(text, "profile big\nmatch ", 18);
	for (size_t i = 18; i + 1 < n * 16; i += 2)
		memcpy(text + i, "x ", 2);
	parse_text(&r, text, NULL);
	expect_error(&r, 2, 7, "expected KEY=VALUE, found 'x'");
	expect_error(&r, 2, 7 + 2 * 1000, "too many errors");
	parsed_free(&r);
	free(text);
}
END_TEST

Suite *validate_suite(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("across rules");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, duplicates);
	tcase_add_test(tc, contradictions);
	tcase_add_test(tc, distinct_objects);
	tcase_add_test(tc, across_files);
	tcase_add_test(tc, rule_limit);
	tcase_add_test(tc, big_input);
	suite_add_tcase(s, tc);
	return s;
}
