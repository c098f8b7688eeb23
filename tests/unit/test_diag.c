// SPDX-License-Identifier: GPL-2.0-only
/* Diagnostics: the printed format, origins, quoting, and the limits. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "suites.h"

static char *printed(const struct parsed *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	bw_diags_print(f, &r->d);
	fclose(f);
	return buf;
}

START_TEST(print_format)
{
	struct parsed r;
	char *out;

	parse_text(&r, "profile p\nmode enforce\nmode enforce\n  foo bar\n", NULL);
	expect_invalid(&r);
	out = printed(&r);
	ck_assert_str_eq(out, "t.profile:3:1: warning: repeated 'mode' (first at t.profile:2)\n"
			      "t.profile:4:3: error: unknown keyword 'foo'\n");
	ck_assert_uint_eq(r.d.nerrors, 1);
	free(out);
	parsed_free(&r);
}
END_TEST

START_TEST(diags_accumulate)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;

	/* A second parse into the same diags fails only for its own errors. */
	ck_assert_int_eq(bw_profile_parse_string("a", "foo\n", 4, NULL, &p, &d), -EINVAL);
	ck_assert_int_eq(bw_profile_parse_string("b", "profile b\n", 10, NULL, &p, &d), 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(d.n, 2);
	ck_assert_str_eq(d.v[0].file, "a");
	bw_profile_free(p);
	bw_diags_free(&d);
	bw_diags_free(&d);
	ck_assert_uint_eq(d.n, 0);
	bw_profile_free(NULL);
}
END_TEST

START_TEST(bad_arguments)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;

	ck_assert_int_eq(bw_profile_parse_string(NULL, "", 0, NULL, &p, &d), -EFAULT);
	ck_assert_int_eq(bw_profile_parse_string("x", NULL, 3, NULL, &p, &d), -EFAULT);
	ck_assert_int_eq(bw_profile_load(NULL, NULL, &p, &d), -EFAULT);
	ck_assert_uint_eq(d.n, 0);
}
END_TEST

START_TEST(origin_format)
{
	struct bw_origin o = {.file = "dir/a.profile", .line = 12, .col = 1};
	struct bw_origin def = {0};
	char buf[32];

	ck_assert_int_eq(bw_origin_format(&o, buf, sizeof(buf)), 16);
	ck_assert_str_eq(buf, "dir/a.profile:12");
	ck_assert_int_eq(bw_origin_format(&o, buf, 8), -ENOSPC);
	ck_assert_uint_lt(strlen(buf), 8);
	ck_assert_int_eq(bw_origin_format(&def, buf, sizeof(buf)), 7);
	ck_assert_str_eq(buf, "default");
	ck_assert_int_eq(bw_origin_format(NULL, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(bw_origin_format(&o, NULL, 0), -EINVAL);
}
END_TEST

START_TEST(quoting)
{
	struct parsed r;
	char text[300];

	parse_text(&r, "profile p\n\x01\x1b[31mfoo\\\n", NULL);
	expect_error(&r, 2, 1, "unknown keyword '\\x01\\x1b[31mfoo\\\\'");
	parsed_free(&r);

	/* long tokens are cut */
	memset(text, 'k', sizeof(text));
	memcpy(text, "profile p\n", 10);
	text[sizeof(text) - 1] = '\0';
	parse_text(&r, text, NULL);
	char want[100] = "unknown keyword '";
	memset(want + strlen(want), 'k', 64);
	strcpy(want + 17 + 64, "...'");
	expect_error(&r, 2, 1, want);
	parsed_free(&r);
}
END_TEST

START_TEST(error_limit)
{
	struct parsed r;
	size_t n = 3000;
	char *text = malloc(n * 4 + 1);

	for (size_t i = 0; i < n; i++)
		memcpy(text + i * 4, "foo\n", 4);
	text[n * 4] = '\0';
	parse_text(&r, text, NULL);
	expect_invalid(&r);
	/* 1000 errors, then one saying so; nothing after (not even "missing profile") */
	ck_assert_uint_eq(r.d.n, 1001);
	expect_error(&r, 1000, 1, "unknown keyword 'foo'");
	expect_error(&r, 1001, 1, "too many errors");
	ck_assert_uint_ge(r.d.nerrors, 1001);
	parsed_free(&r);
	free(text);
}
END_TEST

START_TEST(warning_limit)
{
	struct parsed r;
	size_t n = 1500, off;
	char *text = malloc(n * 13 + 16);

	off = (size_t)sprintf(text, "profile p\n");
	for (size_t i = 0; i < n; i++)
		off += (size_t)sprintf(text + off, "mode enforce\n");
	parse_text(&r, text, NULL);
	/* warnings alone never fail a profile */
	ck_assert_int_eq(r.ret, 0);
	ck_assert_uint_eq(r.d.n, 1001);
	expect_warning(&r, 1002, 1, "repeated 'mode'");
	expect_warning(&r, 1003, 1, "too many warnings");
	parsed_free(&r);
	free(text);
}
END_TEST

Suite *diag_suite(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("diag");

	tcase_add_test(tc, print_format);
	tcase_add_test(tc, diags_accumulate);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, origin_format);
	tcase_add_test(tc, quoting);
	tcase_add_test(tc, error_limit);
	tcase_add_test(tc, warning_limit);
	suite_add_tcase(s, tc);
	return s;
}
