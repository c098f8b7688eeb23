// SPDX-License-Identifier: GPL-2.0-only
/* The profiles shipped in profiles/ parse cleanly and say what they mean. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpfwarden.h>

#include "helpers.h"
#include "suites.h"

#ifndef BW_PROFILE_LIBDIR
#error "the Makefile defines BW_PROFILE_LIBDIR (the profiles/ directory)"
#endif

/* The rule of category `cat` whose path is `path` (file and exec), or NULL. */
static const struct bw_rule *find(const struct bw_profile *p, enum bw_cat cat, const char *path,
				  bool subtree)
{
	for (size_t i = 0; i < p->nrules; i++) {
		const struct bw_rule *r = &p->rules[i];
		if (r->cat == cat && r->file.path && strcmp(r->file.path, path) == 0 &&
		    r->file.subtree == subtree)
			return r;
	}
	return NULL;
}

static void expect_file(const struct bw_profile *p, const char *path, bool subtree,
			enum bw_verdict v, unsigned access)
{
	const struct bw_rule *r = find(p, BW_CAT_FILE, path, subtree);

	ck_assert_msg(r, "no file rule for %s%s", path, subtree ? "/**" : "");
	ck_assert_int_eq(r->verdict, v);
	ck_assert_uint_eq(r->file.access, access);
}

START_TEST(python_sandbox)
{
	struct parsed r;

	memset(&r, 0, sizeof(r));
	r.ret = bw_profile_load(BW_PROFILE_LIBDIR "/python-sandbox.profile", BW_PROFILE_LIBDIR,
				&r.p, &r.d);
	expect_clean(&r);
	const struct bw_profile *p = r.p;
	ck_assert_str_eq(p->name, "python-sandbox");
	ck_assert_int_eq(p->mode, BW_MODE_ENFORCE);
	for (int c = 0; c < BW_CAT_COUNT; c++) {
		ck_assert_int_eq(p->defaults[c], BW_V_DENY);
		ck_assert_int_gt(p->default_origin[c].line, 0);
	}
	ck_assert_uint_eq(p->nfiles, 3);

	/* from abstractions/base */
	expect_file(p, "/etc/ld.so.cache", false, BW_V_ALLOW, BW_ACC_R);
	expect_file(p, "/lib/x86_64-linux-gnu", true, BW_V_ALLOW, BW_ACC_R);
	expect_file(p, "/dev/null", false, BW_V_ALLOW, BW_ACC_R | BW_ACC_W);
	/* from abstractions/python */
	expect_file(p, "/usr/lib/python3.11", true, BW_V_ALLOW, BW_ACC_R);
	expect_file(p, "/usr/lib/python3", true, BW_V_ALLOW, BW_ACC_R);
	/* its own */
	expect_file(p, "/tmp/job", true, BW_V_ALLOW, BW_ACC_R | BW_ACC_W);
	expect_file(p, "/etc/shadow", false, BW_V_DENY, BW_ACC_R | BW_ACC_W);
	expect_file(p, "/root", true, BW_V_DENY, BW_ACC_R | BW_ACC_W);

	/* One program runs; libraries are only mapped, the loader among them. */
	size_t nexec = 0, nnet = 0, nlib = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct bw_rule *rule = &p->rules[i];
		if (rule->cat == BW_CAT_EXEC && rule->verdict == BW_V_ALLOW &&
		    (rule->file.access & BW_ACC_X)) {
			nexec++;
			ck_assert_str_eq(rule->file.path, "/usr/bin/python3.11");
		}
		if (rule->cat == BW_CAT_EXEC && rule->file.access == BW_ACC_M) {
			nlib++;
			ck_assert_msg(rule->file.subtree && strncmp(rule->file.path, "/usr/bin", 8),
				      "exec lib %s", rule->file.path);
		}
		if (rule->cat == BW_CAT_FILE)
			ck_assert_msg(rule->verdict == BW_V_DENY ||
					  !(rule->file.access & BW_ACC_W) ||
					  strcmp(rule->file.path, "/tmp/job") == 0 ||
					  strncmp(rule->file.path, "/dev/", 5) == 0,
				      "%s is writable", rule->file.path);
		if (rule->cat != BW_CAT_NET)
			continue;
		nnet++;
		ck_assert_int_eq(rule->net.op, BW_NET_CONNECT);
		ck_assert_int_eq(rule->net.proto, BW_NET_TCP);
		ck_assert(rule->net.localhost);
		ck_assert_int_eq(rule->net.port_lo, 8080);
		ck_assert_int_eq(rule->net.port_hi, 8080);
	}
	ck_assert_uint_eq(nexec, 1);
	ck_assert_uint_eq(nlib, 7);
	ck_assert_ptr_nonnull(find(p, BW_CAT_EXEC, "/usr/lib/x86_64-linux-gnu", true));
	ck_assert_ptr_nonnull(find(p, BW_CAT_EXEC, "/usr/lib/python3.11/lib-dynload", true));
	ck_assert_uint_eq(nnet, 1);
	parsed_free(&r);
}
END_TEST

/* Each abstraction on its own, included from a minimal profile. */
START_TEST(abstractions)
{
	static const char *const names[] = {"abstractions/base", "abstractions/python"};
	struct parsed r;
	char text[128];

	for (size_t i = 0; i < 2; i++) {
		snprintf(text, sizeof(text), "profile a\ninclude \"%s\"\n", names[i]);
		parse_text(&r, text, BW_PROFILE_LIBDIR);
		expect_clean(&r);
		ck_assert_uint_gt(r.p->nrules, 3);
		for (size_t j = 0; j < r.p->nrules; j++)
			ck_assert_int_eq(r.p->rules[j].verdict, BW_V_ALLOW);
		parsed_free(&r);
	}
}
END_TEST

/*
 * abstractions/host-code: write denials only, each a file rule of the
 * host's programs or of a configuration its daemons run code from.
 */
START_TEST(host_code)
{
	struct parsed r;

	parse_text(&r, "profile a\ndefault allow\ninclude \"abstractions/host-code\"\n",
		   BW_PROFILE_LIBDIR);
	expect_clean(&r);
	ck_assert_uint_gt(r.p->nrules, 50);
	for (size_t j = 0; j < r.p->nrules; j++) {
		const struct bw_rule *rule = &r.p->rules[j];

		ck_assert_int_eq(rule->cat, BW_CAT_FILE);
		ck_assert_int_eq(rule->verdict, BW_V_DENY);
		ck_assert_uint_eq(rule->file.access, BW_ACC_W);
	}
	expect_file(r.p, "/usr", true, BW_V_DENY, BW_ACC_W);
	expect_file(r.p, "/etc/ld.so.preload", false, BW_V_DENY, BW_ACC_W);
	expect_file(r.p, "/etc/cron.d", true, BW_V_DENY, BW_ACC_W);
	expect_file(r.p, "/etc/systemd", true, BW_V_DENY, BW_ACC_W);
	expect_file(r.p, "/etc/modprobe.d", true, BW_V_DENY, BW_ACC_W);
	parsed_free(&r);
}
END_TEST

Suite *shipped_suite(void)
{
	Suite *s = suite_create("shipped profiles");
	TCase *tc = tcase_create("profiles");

	tcase_add_test(tc, python_sandbox);
	tcase_add_test(tc, abstractions);
	tcase_add_test(tc, host_code);
	suite_add_tcase(s, tc);
	return s;
}
