// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile lexer: one pass over a writable buffer, tokens on demand.
 * Nothing is allocated: words point into the buffer, and strings are
 * decoded in place (a decoded string is never longer than its source).
 */
#include <string.h>

#include "lexer.h"

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

void bw_lexer_init(struct bw_lexer *lx, char *buf, size_t len)
{
	lx->buf = buf;
	lx->len = len;
	lx->pos = 0;
	lx->line_start = 0;
	lx->line = 1;
	/* A UTF-8 byte order mark, as some editors write it, is not text. */
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		lx->pos = lx->line_start = 3;
}

static int col_of(const struct bw_lexer *lx, size_t pos)
{
	return (int)(pos - lx->line_start) + 1;
}

static void lex_error(struct bw_lexer *lx, struct bw_token *t, size_t at, const char *msg)
{
	t->type = BW_TOK_ERROR;
	t->s = lx->buf + at;
	t->len = 0;
	t->col = col_of(lx, at);
	t->end_col = t->col;
	t->msg = msg;
}

static void lex_string(struct bw_lexer *lx, struct bw_token *t)
{
	size_t start = lx->pos;
	size_t r = start + 1;
	char *w = lx->buf + r;

	t->s = w;
	for (;;) {
		if (r >= lx->len || lx->buf[r] == '\n') {
			lx->pos = r;
			lex_error(lx, t, start, "unterminated string");
			return;
		}
		char c = lx->buf[r];
		if (c == '"')
			break;
		if (c == '\0') {
			lx->pos = r;
			lex_error(lx, t, r, "NUL byte in profile");
			return;
		}
		if (c == '\\') {
			char e = r + 1 < lx->len ? lx->buf[r + 1] : '\n';
			if (e != '"' && e != '\\') {
				lx->pos = r;
				lex_error(lx, t, r,
					  "bad escape in string: only \\\" and \\\\ are allowed");
				return;
			}
			c = e;
			r++;
		}
		*w++ = c;
		r++;
	}
	lx->pos = r + 1;
	t->type = BW_TOK_STRING;
	t->len = (size_t)(w - t->s);
	t->end_col = col_of(lx, lx->pos);
}

void bw_lex_next(struct bw_lexer *lx, struct bw_token *t)
{
	while (lx->pos < lx->len && is_blank((unsigned char)lx->buf[lx->pos]))
		lx->pos++;
	/* A comment runs to the end of the line, NUL bytes and all. */
	if (lx->pos < lx->len && lx->buf[lx->pos] == '#')
		bw_lex_skip_line(lx);
	t->line = lx->line;
	t->col = col_of(lx, lx->pos);
	t->end_col = t->col;
	t->s = lx->buf + lx->pos;
	t->len = 0;
	t->msg = NULL;

	if (lx->pos >= lx->len) {
		t->type = BW_TOK_EOF;
		return;
	}
	char c = lx->buf[lx->pos];
	if (c == '\n') {
		t->type = BW_TOK_EOL;
		lx->pos++;
		lx->line++;
		lx->line_start = lx->pos;
		return;
	}
	if (c == '\0') {
		lex_error(lx, t, lx->pos, "NUL byte in profile");
		lx->pos++;
		return;
	}
	if (c == '"') {
		lex_string(lx, t);
		return;
	}
	size_t start = lx->pos;
	while (lx->pos < lx->len) {
		c = lx->buf[lx->pos];
		if (is_blank((unsigned char)c) || c == '\n' || c == '"' || c == '\0')
			break;
		lx->pos++;
	}
	t->type = BW_TOK_WORD;
	t->len = lx->pos - start;
	t->end_col = col_of(lx, lx->pos);
}

void bw_lex_skip_line(struct bw_lexer *lx)
{
	while (lx->pos < lx->len && lx->buf[lx->pos] != '\n')
		lx->pos++;
}
