// SPDX-License-Identifier: GPL-2.0-only
/* The lexer on its own: words, strings, comments, positions, bad bytes. */
#include <check.h>
#include <string.h>

#include "lexer.h"
#include "suites.h"

#define MAXTOK 32

struct lexed {
	char buf[256];
	struct bw_token t[MAXTOK];
	int n;
};

/* Lex `len` bytes of `src` to the end (a copy: strings are decoded in place). */
static void lex_all(struct lexed *x, const char *src, size_t len)
{
	struct bw_lexer lx;

	ck_assert_uint_lt(len, sizeof(x->buf));
	memcpy(x->buf, src, len);
	bw_lexer_init(&lx, x->buf, len);
	x->n = 0;
	do {
		ck_assert_int_lt(x->n, MAXTOK);
		bw_lex_next(&lx, &x->t[x->n]);
		if (x->t[x->n].type == BW_TOK_ERROR)
			bw_lex_skip_line(&lx);
	} while (x->t[x->n++].type != BW_TOK_EOF);
}

#define lex_str(x, s) lex_all((x), (s), strlen(s))

static void expect_tok(const struct bw_token *t, enum bw_tok_type type, const char *text, int line,
		       int col, int end_col)
{
	ck_assert_int_eq(t->type, type);
	if (text) {
		ck_assert_uint_eq(t->len, strlen(text));
		ck_assert(memcmp(t->s, text, t->len) == 0);
	}
	ck_assert_int_eq(t->line, line);
	ck_assert_int_eq(t->col, col);
	if (end_col)
		ck_assert_int_eq(t->end_col, end_col);
}

START_TEST(words_and_positions)
{
	struct lexed x;

	lex_str(&x, "allow file r /usr/**\n\tdeny  exec /bin/sh");
	ck_assert_int_eq(x.n, 9);
	expect_tok(&x.t[0], BW_TOK_WORD, "allow", 1, 1, 6);
	expect_tok(&x.t[1], BW_TOK_WORD, "file", 1, 7, 11);
	expect_tok(&x.t[2], BW_TOK_WORD, "r", 1, 12, 13);
	expect_tok(&x.t[3], BW_TOK_WORD, "/usr/**", 1, 14, 21);
	expect_tok(&x.t[4], BW_TOK_EOL, NULL, 1, 21, 0);
	/* a tab counts as one column */
	expect_tok(&x.t[5], BW_TOK_WORD, "deny", 2, 2, 6);
	expect_tok(&x.t[6], BW_TOK_WORD, "exec", 2, 8, 12);
	expect_tok(&x.t[7], BW_TOK_WORD, "/bin/sh", 2, 13, 20);
	expect_tok(&x.t[8], BW_TOK_EOF, NULL, 2, 20, 0);
}
END_TEST

START_TEST(comments)
{
	struct lexed x;

	/* '#' starts a comment only at the start of a word */
	lex_str(&x, "# whole line\nallow /a#b # tail \"not a string\n#\n");
	ck_assert_int_eq(x.n, 6);
	expect_tok(&x.t[0], BW_TOK_EOL, NULL, 1, 13, 0);
	expect_tok(&x.t[1], BW_TOK_WORD, "allow", 2, 1, 6);
	expect_tok(&x.t[2], BW_TOK_WORD, "/a#b", 2, 7, 11);
	expect_tok(&x.t[3], BW_TOK_EOL, NULL, 2, 32, 0);
	expect_tok(&x.t[4], BW_TOK_EOL, NULL, 3, 2, 0);
	expect_tok(&x.t[5], BW_TOK_EOF, NULL, 4, 1, 0);
}
END_TEST

START_TEST(strings)
{
	struct lexed x;

	lex_str(&x, "include \"a b\" \"q\\\"uote\\\\\" \"\"x");
	ck_assert_int_eq(x.n, 6);
	expect_tok(&x.t[0], BW_TOK_WORD, "include", 1, 1, 8);
	expect_tok(&x.t[1], BW_TOK_STRING, "a b", 1, 9, 14);
	/* the source "q\"uote\\" is 11 bytes; decoded q"uote\ */
	expect_tok(&x.t[2], BW_TOK_STRING, "q\"uote\\", 1, 15, 26);
	/* an empty string, and a word glued to it is a token of its own */
	expect_tok(&x.t[3], BW_TOK_STRING, "", 1, 27, 29);
	expect_tok(&x.t[4], BW_TOK_WORD, "x", 1, 29, 30);
	expect_tok(&x.t[5], BW_TOK_EOF, NULL, 1, 30, 0);
}
END_TEST

START_TEST(string_errors)
{
	struct lexed x;

	lex_str(&x, "a \"open\nb \"bad \\n escape\"\nc \"x\"");
	expect_tok(&x.t[0], BW_TOK_WORD, "a", 1, 1, 2);
	expect_tok(&x.t[1], BW_TOK_ERROR, NULL, 1, 3, 0);
	ck_assert_str_eq(x.t[1].msg, "unterminated string");
	expect_tok(&x.t[2], BW_TOK_EOL, NULL, 1, 8, 0);
	expect_tok(&x.t[3], BW_TOK_WORD, "b", 2, 1, 2);
	/* reported at the backslash */
	expect_tok(&x.t[4], BW_TOK_ERROR, NULL, 2, 8, 0);
	ck_assert_ptr_nonnull(strstr(x.t[4].msg, "bad escape"));
	expect_tok(&x.t[5], BW_TOK_EOL, NULL, 2, 18, 0);
	expect_tok(&x.t[6], BW_TOK_WORD, "c", 3, 1, 2);
	expect_tok(&x.t[7], BW_TOK_STRING, "x", 3, 3, 6);

	/* a string may not end at the end of the input either */
	lex_str(&x, "\"abc\\");
	expect_tok(&x.t[0], BW_TOK_ERROR, NULL, 1, 5, 0);
}
END_TEST

START_TEST(nul_bytes)
{
	struct lexed x;

	lex_all(&x, "ab\0cd\n\"x\0y\"\n#c\0mment\n", 21);
	expect_tok(&x.t[0], BW_TOK_WORD, "ab", 1, 1, 3);
	expect_tok(&x.t[1], BW_TOK_ERROR, NULL, 1, 3, 0);
	ck_assert_str_eq(x.t[1].msg, "NUL byte in profile");
	expect_tok(&x.t[2], BW_TOK_EOL, NULL, 1, 6, 0);
	expect_tok(&x.t[3], BW_TOK_ERROR, NULL, 2, 3, 0);
	ck_assert_str_eq(x.t[3].msg, "NUL byte in profile");
	expect_tok(&x.t[4], BW_TOK_EOL, NULL, 2, 6, 0);
	/* inside a comment a NUL is just a byte */
	expect_tok(&x.t[5], BW_TOK_EOL, NULL, 3, 9, 0);
	expect_tok(&x.t[6], BW_TOK_EOF, NULL, 4, 1, 0);
}
END_TEST

START_TEST(crlf_and_blanks)
{
	struct lexed x;

	lex_str(&x, "a\r\n \v\fb\r");
	ck_assert_int_eq(x.n, 4);
	expect_tok(&x.t[0], BW_TOK_WORD, "a", 1, 1, 2);
	expect_tok(&x.t[1], BW_TOK_EOL, NULL, 1, 3, 0);
	expect_tok(&x.t[2], BW_TOK_WORD, "b", 2, 4, 5);
	expect_tok(&x.t[3], BW_TOK_EOF, NULL, 2, 6, 0);

	/* a byte order mark is skipped, and not counted as columns */
	lex_str(&x, "\xef\xbb\xbfprofile p\n\xef\xbb\xbf");
	ck_assert_int_eq(x.n, 5);
	expect_tok(&x.t[0], BW_TOK_WORD, "profile", 1, 1, 8);
	expect_tok(&x.t[3], BW_TOK_WORD, "\xef\xbb\xbf", 2, 1, 4);

	lex_str(&x, "");
	ck_assert_int_eq(x.n, 1);
	expect_tok(&x.t[0], BW_TOK_EOF, NULL, 1, 1, 0);
}
END_TEST

Suite *lexer_suite(void)
{
	Suite *s = suite_create("lexer");
	TCase *tc = tcase_create("tokens");

	tcase_add_test(tc, words_and_positions);
	tcase_add_test(tc, comments);
	tcase_add_test(tc, strings);
	tcase_add_test(tc, string_errors);
	tcase_add_test(tc, nul_bytes);
	tcase_add_test(tc, crlf_and_blanks);
	suite_add_tcase(s, tc);
	return s;
}
