// SPDX-License-Identifier: GPL-2.0-only
/* JSON line writer: escaping, invalid UTF-8, numbers, whole lines gathered and written. */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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

START_TEST(invalid_utf8_is_replaced)
{
	ck_assert_str_eq(esc("a\xff"
			     "b",
			     3),
			 "a\\ufffdb");
	/* overlong '/', a lone continuation byte, a truncated sequence */
	ck_assert_str_eq(esc("\xc0\xaf", 2), "\\ufffd\\ufffd");
	ck_assert_str_eq(esc("\x80", 1), "\\ufffd");
	ck_assert_str_eq(esc("\xe2\x82", 2), "\\ufffd\\ufffd");
	/* an encoded surrogate is not UTF-8 either */
	ck_assert_str_eq(esc("\xed\xa0\x80", 3), "\\ufffd\\ufffd\\ufffd");
	ck_assert(jw_utf8_valid("caf\xc3\xa9", 5));
	ck_assert(!jw_utf8_valid("\xed\xa0\x80", 3));
}
END_TEST

/* The exact bytes beside, in base64: every length's padding, and a round trip. */
START_TEST(invalid_utf8_keeps_its_bytes)
{
	static const struct {
		const char *in;
		size_t n;
		const char *line;
	} cases[] = {
	    {"/a\xff", 3, "{\"path\":\"/a\\ufffd\",\"path_b64\":\"L2H/\"}"},
	    {"\xff", 1, "{\"path\":\"\\ufffd\",\"path_b64\":\"/w==\"}"},
	    {"a\xfe", 2, "{\"path\":\"a\\ufffd\",\"path_b64\":\"Yf4=\"}"},
	    {"ok", 2, "{\"path\":\"ok\"}"},
	};
	struct jw w;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jw_init(&w);
		jw_begin(&w);
		jw_strn(&w, "path", cases[i].in, cases[i].n);
		jw_end(&w);
		ck_assert_uint_eq(w.len, strlen(cases[i].line));
		ck_assert(!memcmp(w.buf, cases[i].line, w.len));
		jw_free(&w);
	}
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

START_TEST(numbers)
{
	struct jw w;

	jw_init(&w);
	jw_begin(&w);
	jw_u64(&w, "a", 0);
	jw_u64(&w, "b", 7);
	jw_u64(&w, "c", UINT64_MAX);
	jw_end(&w);
	ck_assert_int_eq((int)w.len, (int)strlen("{\"a\":0,\"b\":7,\"c\":18446744073709551615}"));
	ck_assert(!memcmp(w.buf, "{\"a\":0,\"b\":7,\"c\":18446744073709551615}", w.len));
	jw_free(&w);
}
END_TEST

/* Two records gathered, one flush: both lines whole, in order, and out is empty after. */
START_TEST(lines_gathered_and_flushed)
{
	struct jw line, out;
	char got[128] = "";
	int fds[2];
	ssize_t n;

	ck_assert_int_eq(pipe(fds), 0);
	jw_init(&line);
	jw_init(&out);
	jw_begin(&line);
	jw_str(&line, "n", "one");
	jw_end(&line);
	ck_assert_int_eq(jw_append_line(&out, &line), 0);
	jw_begin(&line);
	jw_str(&line, "n", "two \"2\"");
	jw_end(&line);
	ck_assert_int_eq(jw_append_line(&out, &line), 0);
	ck_assert_int_eq(jw_flush(&out, fds[1]), 0);
	ck_assert_int_eq((int)out.len, 0);
	ck_assert_int_eq(jw_flush(&out, fds[1]), 0); /* nothing waits: nothing written */
	close(fds[1]);
	n = read(fds[0], got, sizeof(got) - 1);
	ck_assert_int_gt((int)n, 0);
	ck_assert_str_eq(got, "{\"n\":\"one\"}\n{\"n\":\"two \\\"2\\\"\"}\n");
	close(fds[0]);
	jw_free(&line);
	jw_free(&out);
}
END_TEST

Suite *jsonw_suite(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("escaping");

	tcase_add_test(tc, escapes);
	tcase_add_test(tc, invalid_utf8_is_replaced);
	tcase_add_test(tc, invalid_utf8_keeps_its_bytes);
	tcase_add_test(tc, object_layout);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, lines_gathered_and_flushed);
	suite_add_tcase(s, tc);
	return s;
}
