// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonw.h"

void jw_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
}

void jw_free(struct jw *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

static void put(struct jw *w, const char *s, size_t n)
{
	if (w->len + n + 2 > w->cap) {
		size_t cap = w->cap ? w->cap : 512;
		char *nb;

		while (w->len + n + 2 > cap)
			cap *= 2;
		nb = realloc(w->buf, cap);
		if (!nb) {
			w->oom = 1;
			return;
		}
		w->buf = nb;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void putc_(struct jw *w, char c)
{
	if (w->len + 3 <= w->cap)
		w->buf[w->len++] = c;
	else
		put(w, &c, 1);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Printable ASCII but the quote and the backslash: copied as it is. */
static int plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void jw_escape(struct jw *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	char tmp[8];
	size_t i = 0, l, run;

	while (i < n) {
		unsigned char c = s[i];

		/* Paths and names are mostly plain: one copy per run of it. */
		for (run = i; run < n && plain(s[run]); run++)
			;
		if (run > i) {
			put(w, str + i, run - i);
			i = run;
			continue;
		}
		if (c == '"' || c == '\\') {
			putc_(w, '\\');
			putc_(w, c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			const char *esc = c == '\n'   ? "\\n"
					  : c == '\t' ? "\\t"
					  : c == '\r' ? "\\r"
						      : NULL;

			if (esc) {
				put(w, esc, 2);
			} else {
				snprintf(tmp, sizeof(tmp), "\\u%04x", c);
				put(w, tmp, 6);
			}
			i++;
		} else if ((l = utf8_len(s + i, n - i))) {
			put(w, str + i, l);
			i += l;
		} else {
			/* Not UTF-8: U+FFFD for the byte (jw_strn keeps the bytes beside). */
			put(w, "\\ufffd", 6);
			i++;
		}
	}
}

static void key(struct jw *w, const char *k);

bool jw_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, l;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		l = utf8_len(s + i, n - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

void jw_b64(struct jw *w, const char *k, const char *str, size_t n)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = (const unsigned char *)str;
	char q[4];
	size_t i;

	key(w, k);
	putc_(w, '"');
	for (i = 0; i + 2 < n; i += 3) {
		q[0] = abc[s[i] >> 2];
		q[1] = abc[(s[i] & 3) << 4 | s[i + 1] >> 4];
		q[2] = abc[(s[i + 1] & 15) << 2 | s[i + 2] >> 6];
		q[3] = abc[s[i + 2] & 63];
		put(w, q, 4);
	}
	if (i < n) {
		q[0] = abc[s[i] >> 2];
		q[1] = abc[(s[i] & 3) << 4 | (i + 1 < n ? s[i + 1] >> 4 : 0)];
		q[2] = i + 1 < n ? abc[(s[i + 1] & 15) << 2] : '=';
		q[3] = '=';
		put(w, q, 4);
	}
	putc_(w, '"');
}

static void key(struct jw *w, const char *k)
{
	if (w->need_comma)
		putc_(w, ',');
	w->need_comma = 1;
	if (k) {
		putc_(w, '"');
		put(w, k, strlen(k)); /* a name of the schema: plain ASCII (jsonw.h) */
		put(w, "\":", 2);
	}
}

void jw_begin(struct jw *w)
{
	w->len = 0;
	w->oom = 0;
	w->need_comma = 0;
	putc_(w, '{');
}

void jw_end(struct jw *w)
{
	putc_(w, '}');
	w->need_comma = 1;
}

void jw_obj(struct jw *w, const char *k)
{
	key(w, k);
	putc_(w, '{');
	w->need_comma = 0;
}

void jw_arr(struct jw *w, const char *k)
{
	key(w, k);
	putc_(w, '[');
	w->need_comma = 0;
}

void jw_end_arr(struct jw *w)
{
	putc_(w, ']');
	w->need_comma = 1;
}

void jw_strn(struct jw *w, const char *k, const char *s, size_t n)
{
	char kb[64];

	key(w, k);
	putc_(w, '"');
	jw_escape(w, s, n);
	putc_(w, '"');
	/* Bytes that are not UTF-8: the exact ones beside, as KEY_b64. */
	if (k && !jw_utf8_valid(s, n) && strlen(k) + 5 <= sizeof(kb)) {
		snprintf(kb, sizeof(kb), "%s_b64", k);
		jw_b64(w, kb, s, n);
	}
}

void jw_str(struct jw *w, const char *k, const char *s)
{
	jw_strn(w, k, s, strlen(s));
}

void jw_u64(struct jw *w, const char *k, uint64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	key(w, k);
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, p, tmp + sizeof(tmp) - p);
}

void jw_raw(struct jw *w, const char *k, const char *s, size_t n)
{
	key(w, k);
	put(w, s, n);
}

int jw_append_line(struct jw *dst, const struct jw *line)
{
	put(dst, line->buf, line->len);
	putc_(dst, '\n');
	return line->oom || dst->oom ? -ENOMEM : 0;
}

int jw_flush(struct jw *w, int fd)
{
	size_t off = 0;
	int ret = w->oom ? -ENOMEM : 0;

	while (off < w->len) {
		ssize_t n = write(fd, w->buf + off, w->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		off += n;
	}
	w->len = 0;
	w->oom = 0;
	return ret;
}

void jw_bool(struct jw *w, const char *k, int v)
{
	key(w, k);
	put(w, v ? "true" : "false", v ? 4 : 5);
}

int jw_write_line(struct jw *w, int fd)
{
	ssize_t n;

	putc_(w, '\n');
	if (w->oom)
		return -ENOMEM;
	n = write(fd, w->buf, w->len);
	if (n < 0)
		return -errno;
	return n == (ssize_t)w->len ? 0 : -EIO;
}
