/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tokens of the profile language. The language is line oriented, so the end
 * of a line is a token of its own. Words are runs of bytes up to white space
 * or a double quote; a `#` that starts a word starts a comment. Strings are
 * double quoted, end on the same line and know two escapes, \" and \\.
 */
#ifndef BW_POLICY_LEXER_H
#define BW_POLICY_LEXER_H

#include <stddef.h>

enum bw_tok_type {
	BW_TOK_WORD = 1,
	BW_TOK_STRING,
	BW_TOK_EOL,
	BW_TOK_EOF,
	BW_TOK_ERROR, /* lexical error: msg and col say what and where */
};

struct bw_token {
	enum bw_tok_type type;
	const char *s; /* WORD, STRING (escapes decoded): not NUL-terminated */
	size_t len;
	int line, col;	 /* 1-based; columns count bytes */
	int end_col;	 /* column just past the token's last source byte */
	const char *msg; /* ERROR: a static message */
};

struct bw_lexer {
	char *buf; /* strings are decoded in place, so the buffer is writable */
	size_t len;
	size_t pos;
	size_t line_start;
	int line;
};

void bw_lexer_init(struct bw_lexer *lx, char *buf, size_t len);
void bw_lex_next(struct bw_lexer *lx, struct bw_token *t);
/* Drop the rest of the current line, unread: the next token is EOL or EOF. */
void bw_lex_skip_line(struct bw_lexer *lx);

#endif /* BW_POLICY_LEXER_H */
