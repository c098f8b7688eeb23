// SPDX-License-Identifier: GPL-2.0-only
/* A recursive-descent JSON reader (json.h), RFC 8259 strict. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct reader {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
	int failed;
};

static void fail(struct reader *r, const char *why)
{
	if (!r->failed && r->errlen)
		snprintf(r->err, r->errlen, "%s at byte %zu", why, r->pos);
	r->failed = 1;
}

static void skip_ws(struct reader *r)
{
	while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
				   r->s[r->pos] == '\n' || r->s[r->pos] == '\r'))
		r->pos++;
}

static int hex4(struct reader *r, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	if (r->len - r->pos < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = r->s[r->pos++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xe0 | cp >> 12;
		o[1] = 0x80 | ((cp >> 6) & 0x3f);
		o[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | cp >> 18;
	o[1] = 0x80 | ((cp >> 12) & 0x3f);
	o[2] = 0x80 | ((cp >> 6) & 0x3f);
	o[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* A string at r->pos (its opening quote): decoded into a new buffer. */
static char *string(struct reader *r, size_t *outlen)
{
	size_t start = ++r->pos;
	char *out, *o;

	/* Decoded, a string is never longer than its escaped form. */
	while (r->pos < r->len && r->s[r->pos] != '"') {
		if (r->s[r->pos] == '\\')
			r->pos++;
		r->pos++;
	}
	if (r->pos >= r->len) {
		fail(r, "unterminated string");
		return NULL;
	}
	out = o = malloc(r->pos - start + 1);
	if (!out) {
		fail(r, "out of memory");
		return NULL;
	}
	r->pos = start;
	while (r->s[r->pos] != '"') {
		unsigned char c = r->s[r->pos++];
		uint32_t cp, lo;

		if (c < 0x20) {
			r->pos--;
			fail(r, "control character in a string");
			goto bad;
		}
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		c = r->s[r->pos++];
		switch (c) {
		case '"':
		case '\\':
		case '/':
			*o++ = c;
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			if (hex4(r, &cp))
				goto bad_escape;
			if (cp >= 0xd800 && cp <= 0xdbff && r->len - r->pos >= 6 &&
			    r->s[r->pos] == '\\' && r->s[r->pos + 1] == 'u') {
				size_t save = r->pos;

				r->pos += 2;
				if (!hex4(r, &lo) && lo >= 0xdc00 && lo <= 0xdfff)
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				else
					r->pos = save;
			}
			/* A lone surrogate is kept as the replacement character. */
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xfffd;
			o += put_utf8(o, cp);
			break;
		default:
			goto bad_escape;
		}
	}
	r->pos++;
	*o = '\0';
	*outlen = o - out;
	return out;
bad_escape:
	fail(r, "bad escape in a string");
bad:
	free(out);
	return NULL;
}

static int number(struct reader *r, double *out)
{
	size_t start = r->pos;
	char buf[64], *end;

	if (r->pos < r->len && r->s[r->pos] == '-')
		r->pos++;
	if (r->pos >= r->len || r->s[r->pos] < '0' || r->s[r->pos] > '9')
		return -1;
	if (r->s[r->pos] == '0' && r->pos + 1 < r->len && r->s[r->pos + 1] >= '0' &&
	    r->s[r->pos + 1] <= '9')
		return -1; /* no leading zeros */
	while (r->pos < r->len &&
	       ((r->s[r->pos] >= '0' && r->s[r->pos] <= '9') || r->s[r->pos] == '.' ||
		r->s[r->pos] == 'e' || r->s[r->pos] == 'E' || r->s[r->pos] == '+' ||
		r->s[r->pos] == '-'))
		r->pos++;
	if (r->pos - start >= sizeof(buf))
		return -1;
	memcpy(buf, r->s + start, r->pos - start);
	buf[r->pos - start] = '\0';
	*out = strtod(buf, &end);
	return *end ? -1 : 0;
}

static int literal(struct reader *r, const char *word)
{
	size_t n = strlen(word);

	if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n))
		return -1;
	r->pos += n;
	return 0;
}

static struct bwj *value(struct reader *r, int depth);

/* The members or elements of an object or array, r->pos after its opener. */
static int members(struct reader *r, struct bwj *v, int depth, char close)
{
	struct bwj **tail = &v->child;

	skip_ws(r);
	if (r->pos < r->len && r->s[r->pos] == close) {
		r->pos++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		size_t klen;
		struct bwj *m;

		skip_ws(r);
		if (close == '}') {
			if (r->pos >= r->len || r->s[r->pos] != '"') {
				fail(r, "expected a member name");
				return -1;
			}
			key = string(r, &klen);
			if (!key)
				return -1;
			skip_ws(r);
			if (r->pos >= r->len || r->s[r->pos] != ':') {
				free(key);
				fail(r, "expected ':'");
				return -1;
			}
			r->pos++;
		}
		m = value(r, depth + 1);
		if (!m) {
			free(key);
			return -1;
		}
		m->key = key;
		*tail = m;
		tail = &m->next;
		skip_ws(r);
		if (r->pos < r->len && r->s[r->pos] == ',') {
			r->pos++;
			continue;
		}
		if (r->pos < r->len && r->s[r->pos] == close) {
			r->pos++;
			return 0;
		}
		fail(r, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
		return -1;
	}
}

static struct bwj *value(struct reader *r, int depth)
{
	struct bwj *v;
	char c;

	if (depth > BWJ_DEPTH_MAX) {
		fail(r, "nested too deep");
		return NULL;
	}
	skip_ws(r);
	if (r->pos >= r->len) {
		fail(r, "unexpected end");
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		fail(r, "out of memory");
		return NULL;
	}
	c = r->s[r->pos];
	if (c == '{' || c == '[') {
		v->type = c == '{' ? BWJ_OBJ : BWJ_ARR;
		r->pos++;
		if (members(r, v, depth, c == '{' ? '}' : ']'))
			goto bad;
	} else if (c == '"') {
		v->type = BWJ_STR;
		v->str = string(r, &v->len);
		if (!v->str)
			goto bad;
	} else if (!literal(r, "true") || !literal(r, "false")) {
		v->type = BWJ_BOOL;
		v->num = r->s[r->pos - 1] == 'e' && r->s[r->pos - 2] == 'u';
	} else if (!literal(r, "null")) {
		v->type = BWJ_NULL;
	} else {
		v->type = BWJ_NUM;
		if (number(r, &v->num)) {
			fail(r, "unexpected character");
			goto bad;
		}
	}
	return v;
bad:
	bwj_free(v);
	return NULL;
}

struct bwj *bwj_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct reader r = {text, len, 0, err, errlen, 0};
	struct bwj *v;

	if (errlen)
		err[0] = '\0';
	v = value(&r, 0);
	if (!v)
		return NULL;
	skip_ws(&r);
	if (r.pos != r.len) {
		fail(&r, "trailing bytes");
		bwj_free(v);
		return NULL;
	}
	return v;
}

void bwj_free(struct bwj *v)
{
	while (v) {
		struct bwj *next = v->next;

		bwj_free(v->child);
		free((char *)v->key);
		free((char *)v->str);
		free(v);
		v = next;
	}
}

const struct bwj *bwj_get(const struct bwj *v, const char *key)
{
	const struct bwj *m;

	if (!v || v->type != BWJ_OBJ)
		return NULL;
	/* The last of duplicate names wins, as in most readers. */
	const struct bwj *found = NULL;

	for (m = v->child; m; m = m->next)
		if (!strcmp(m->key, key))
			found = m;
	return found;
}

const struct bwj *bwj_path(const struct bwj *v, ...)
{
	const char *key;
	va_list ap;

	va_start(ap, v);
	while (v && (key = va_arg(ap, const char *)))
		v = bwj_get(v, key);
	va_end(ap);
	return v;
}

const char *bwj_str(const struct bwj *v)
{
	if (!v || v->type != BWJ_STR || strlen(v->str) != v->len)
		return NULL;
	return v->str;
}

int bwj_int(const struct bwj *v, long long min, long long max, long long *out)
{
	if (!v || v->type != BWJ_NUM || v->num != floor(v->num) || v->num < (double)min ||
	    v->num > (double)max)
		return -1;
	*out = (long long)v->num;
	return 0;
}
