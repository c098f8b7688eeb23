// SPDX-License-Identifier: GPL-2.0-only
/* JSON line writer: escaping, invalid UTF-8, one line per record. */
#include <check.h>
#include <string.h>

#include "jsonw.h"
#include "suites.h"

static char out[512];

static const char *esc(const char *s, size_t n)
{
	struct jw w;

	jw_init(&w);
	jw_escape(&w, s, n);
	memcpy(out, w.buf, w.len);
	out[w.len] = '\0';
	jw_free(&w);
	return out;
}

START_TEST(escapes)
{
	ck_assert_str_eq(esc("a\"b\\c", 5), "a\\\"b\\\\c");
	ck_assert_str_eq(esc("\n\t\x01", 3), "\\n\\t\\u0001");
	ck_assert_str_eq(esc("caf\xc3\xa9", 5), "caf\xc3\xa9");
	ck_assert_str_eq(esc("\xe2\x82\xac", 3), "\xe2\x82\xac");
}
END_TEST

START_TEST(invalid_utf8_is_surrogate_escaped)
{
	ck_assert_str_eq(esc("a\xff"
			     "b",
			     3),
			 "a\\udcffb");
	/* overlong '/', a lone continuation byte, a truncated sequence */
	ck_assert_str_eq(esc("\xc0\xaf", 2), "\\udcc0\\udcaf");
	ck_assert_str_eq(esc("\x80", 1), "\\udc80");
	ck_assert_str_eq(esc("\xe2\x82", 2), "\\udce2\\udc82");
	/* an encoded surrogate is not UTF-8 either */
	ck_assert_str_eq(esc("\xed\xa0\x80", 3), "\\udced\\udca0\\udc80");
}
END_TEST

START_TEST(object_layout)
{
	struct jw w;

	jw_init(&w);
	jw_begin(&w);
	jw_str(&w, "type", "deny");
	jw_obj(&w, "cgroup");
	jw_u64(&w, "id", 42);
	jw_str(&w, "path", "/x");
	jw_end(&w);
	jw_bool(&w, "by_inode", 1);
	jw_end(&w);
	ck_assert_int_eq((int)w.len,
			 (int)strlen("{\"type\":\"deny\",\"cgroup\":{\"id\":42,\"path\":\"/x\"},"
				     "\"by_inode\":true}"));
	ck_assert(!memcmp(
	    w.buf, "{\"type\":\"deny\",\"cgroup\":{\"id\":42,\"path\":\"/x\"},\"by_inode\":true}",
	    w.len));
	jw_free(&w);
}
END_TEST

Suite *jsonw_suite(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("escaping");

	tcase_add_test(tc, escapes);
	tcase_add_test(tc, invalid_utf8_is_surrogate_escaped);
	tcase_add_test(tc, object_layout);
	suite_add_tcase(s, tc);
	return s;
}
