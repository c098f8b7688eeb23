// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rule paths. The kernel matches a rule by path prefix, so a rule path has
 * exactly one spelling: absolute, no empty, "." or ".." components, no
 * trailing "/". Two patterns: a final "**" component, the directory and
 * everything below it, and a last component ending in '*', the names in that
 * directory that begin with what precedes it (the trie matches a prefix; the
 * kernel checks that no '/' follows). Any other '*' would promise matching
 * that the trie cannot do, so it is refused rather than taken literally.
 */
#include <stdlib.h>
#include <string.h>

#include "path.h"

enum bw_path_err bw_path_parse(const char *s, size_t len, bool subtree_ok, size_t max,
			       struct bw_path *out)
{
	size_t i = 0, w = 0;
	char *p;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return BW_PATH_EMPTY;
	if (s[0] != '/')
		return BW_PATH_RELATIVE;

	p = malloc(len + 1);
	if (!p)
		return BW_PATH_NOMEM;

	while (i < len) {
		while (i < len && s[i] == '/')
			i++;
		if (i == len)
			break;
		size_t start = i;
		while (i < len && s[i] != '/')
			i++;
		size_t clen = i - start;
		const char *c = s + start;
		bool last = true;
		for (size_t j = i; j < len; j++) {
			if (s[j] != '/') {
				last = false;
				break;
			}
		}

		out->err_off = start;
		if ((clen == 1 && c[0] == '.') || (clen == 2 && c[0] == '.' && c[1] == '.')) {
			free(p);
			return BW_PATH_DOT;
		}
		if (clen == 2 && c[0] == '*' && c[1] == '*') {
			if (!last) {
				free(p);
				return BW_PATH_DSTAR_INNER;
			}
			if (!subtree_ok) {
				free(p);
				return BW_PATH_GLOB;
			}
			out->subtree = true;
			break;
		}
		if (memchr(c, '*', clen)) {
			const char *star = memchr(c, '*', clen);

			out->err_off = start + (size_t)(star - c);
			if (clen == 1 && last && subtree_ok) {
				free(p);
				return BW_PATH_PREFIX_BARE;
			}
			if (!last || !subtree_ok || star != c + clen - 1) {
				free(p);
				return BW_PATH_GLOB;
			}
			out->name_prefix = true;
			clen--;
		}
		p[w++] = '/';
		memcpy(p + w, c, clen);
		w += clen;
	}
	if (w == 0)
		p[w++] = '/';
	p[w] = '\0';
	out->len = w;
	out->err_off = 0;
	if (w > max) {
		free(p);
		out->subtree = false;
		out->name_prefix = false;
		return BW_PATH_TOO_LONG;
	}
	out->path = p;
	return BW_PATH_OK;
}

bool bw_path_is_proc_self(const char *path)
{
	return !strncmp(path, "/proc/self", 10) && (!path[10] || path[10] == '/');
}
