/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A JSON line built in memory and written whole (alone with jw_write_line,
 * or gathered with others for one write with jw_append_line and jw_flush),
 * so that a log never holds a partial line. Strings are UTF-8; a byte that is not valid
 * UTF-8 is written as \udcXX (the lone surrogate U+DC00+byte, as Python's
 * "surrogateescape" reads it back), which keeps the original bytes
 * recoverable and the line valid JSON. Keys are the schema's own names,
 * plain ASCII without quotes or backslashes, and are copied as they are:
 * escaping them was a tenth of the agent's time per event.
 */
#ifndef BW_JSONW_H
#define BW_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jw {
	char *buf;
	size_t len, cap;
	int need_comma;
	int oom;
};

void jw_init(struct jw *w);
void jw_free(struct jw *w);
void jw_begin(struct jw *w);		    /* { */
void jw_end(struct jw *w);		    /* } */
void jw_obj(struct jw *w, const char *key); /* "key":{ */
void jw_arr(struct jw *w, const char *key); /* "key":[ ; values take a NULL key */
void jw_end_arr(struct jw *w);		    /* ] */
void jw_str(struct jw *w, const char *key, const char *s);
/*
 * A string of bytes: UTF-8 as it is; each byte that is not part of valid
 * UTF-8 becomes U+FFFD, and then (a key given) the exact bytes follow in a
 * second field, KEY_b64, base64 with padding: strict parsers take the line,
 * and nothing is lost.
 */
void jw_strn(struct jw *w, const char *key, const char *s, size_t n);
bool jw_utf8_valid(const char *s, size_t n);
/* "key": the base64 (with padding) of n bytes of s. */
void jw_b64(struct jw *w, const char *key, const char *s, size_t n);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_bool(struct jw *w, const char *key, int v);
/* Append the escaped bytes of s, without quotes (exposed for tests). */
void jw_escape(struct jw *w, const char *s, size_t n);
/* Write buf plus '\n' to fd in one call; returns 0 or -errno. */
int jw_write_line(struct jw *w, int fd);
/* "key": and the bytes of s as they are (JSON already: a number, a quoted string). */
void jw_raw(struct jw *w, const char *key, const char *s, size_t n);
/*
 * Lines gathered for one write: append line (whole, with its '\n') to dst;
 * jw_flush writes dst out and empties it (a short write is written on; an
 * error drops what is left). Both return 0 or -errno.
 */
int jw_append_line(struct jw *dst, const struct jw *line);
int jw_flush(struct jw *w, int fd);

#endif
