// SPDX-License-Identifier: GPL-2.0-only
/* Predicates on names (learn_names.h); docs/learn.md is their specification. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfwarden.h"
#include "learn_names.h"
#include "path.h"
#include "profile.h"

/* Component-wise order: '/' sorts before every other byte. */
int bw_learn_path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned ca = (unsigned char)*a, cb = (unsigned char)*b;

		if (ca == cb) {
			if (!ca)
				return 0;
			continue;
		}
		if (!ca || !cb)
			return !ca ? -1 : 1;
		if (ca == '/' || cb == '/')
			return ca == '/' ? -1 : 1;
		return ca < cb ? -1 : 1;
	}
}

bool bw_learn_is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/*
 * Why a path cannot be a rule's operand, into buf; NULL when it can. `max`:
 * BW_RULE_PATH_MAX for file and exec rules, BW_UNIX_PATH_MAX for sockets.
 */
const char *bw_learn_path_problem(const char *p, size_t max, char *buf, size_t len)
{
	struct bw_path np;

	if (!p || !*p)
		return "no path: a pipe, socket, memfd or other file without a name";
	if (p[0] != '/')
		return "not an absolute path";
	for (const char *c = p; *c; c++)
		if (bw_learn_is_control((unsigned char)*c) && *c != '\t')
			return "a newline or another control byte in the name: a profile "
			       "cannot spell it";
	switch (bw_path_parse(p, strlen(p), false, max, &np)) {
	case BW_PATH_OK:
		free(np.path);
		return NULL;
	case BW_PATH_DOT:
		return "a '.' or '..' component";
	case BW_PATH_DSTAR_INNER:
	case BW_PATH_GLOB:
		return "a '*' in a name: the language reads it as a glob and has no escape for it";
	case BW_PATH_TOO_LONG:
		if (max == BW_RULE_PATH_MAX)
			snprintf(buf, len,
				 "path is %zu bytes long, a rule names at most %d: "
				 "BW_RULE_PATH_MAX",
				 np.len, BW_RULE_PATH_MAX);
		else
			snprintf(buf, len,
				 "unix socket path is %zu bytes long, the limit is %d: "
				 "sun_path",
				 np.len, BW_UNIX_PATH_MAX);
		return buf;
	case BW_PATH_NOMEM:
		return "out of memory";
	default:
		return "not a path";
	}
}

const char *bw_learn_unix_problem(const char *u, char *buf, size_t len)
{
	size_t n = strlen(u);

	if (u[0] == '/')
		return bw_learn_path_problem(u, BW_UNIX_PATH_MAX, buf, len);
	if (u[0] != '@')
		return "not a socket path or @name (an unnamed socket)";
	if (n == 1)
		return "an empty abstract socket name";
	for (const char *c = u; *c; c++)
		if (bw_learn_is_control((unsigned char)*c) && *c != '\t')
			return "a newline or another control byte in the name: a profile "
			       "cannot spell it";
	if (n - 1 > BW_UNIX_PATH_MAX) {
		snprintf(buf, len, "abstract socket name is %zu bytes long, the limit is %d", n - 1,
			 BW_UNIX_PATH_MAX);
		return buf;
	}
	return NULL;
}

/* ---- volatile names and system directories ---- */

static bool c_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool c_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool c_alpha(char c)
{
	return c_upper(c) || (c >= 'a' && c <= 'z');
}

static bool c_hex(char c)
{
	return c_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_uuid_at(const char *c, size_t n)
{
	static const char pat[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (n < sizeof(pat) - 1)
		return false;
	for (size_t i = 0; i < sizeof(pat) - 1; i++)
		if (pat[i] == '-' ? c[i] != '-' : !c_hex(c[i]))
			return false;
	return true;
}

/* Why the component c[0..n) looks like it names one run, or NULL. */
const char *bw_learn_per_run(const char *c, size_t n, bool leaf)
{
	size_t i, run = 0;
	bool digit = false;
	const char *sep = NULL;

	for (i = 0; i < n && c_digit(c[i]); i++)
		;
	if (n && i == n)
		return "all digits";
	if (n >= 9 && !memcmp(c, "tmp", 3)) {
		size_t j = 3 + (c[3] == '.' || c[3] == '_' || c[3] == '-'), k;
		bool mark = false;

		for (k = j; k < n && (c_alpha(c[k]) || c_digit(c[k]) || c[k] == '_'); k++)
			mark |= c_digit(c[k]) || c_upper(c[k]);
		if (k == n && n - j >= 6 && n - j <= 16 && mark)
			return "a temporary name";
	}
	for (i = 0; i < n; i++)
		if (c[i] == '.' || c[i] == '-')
			sep = c + i;
	if (sep && sep > c && (size_t)(c + n - sep - 1) == 6) {
		bool d = false, a = false, ok = true;

		for (const char *p = sep + 1; p < c + n; p++) {
			d |= c_digit(*p);
			a |= c_alpha(*p);
			ok &= c_digit(*p) || c_alpha(*p);
		}
		if (ok && d && a)
			return "a temporary name";
	}
	for (i = 0; i <= n; i++) {
		if (i < n && c_hex(c[i])) {
			run++;
			digit |= c_digit(c[i]);
			continue;
		}
		if (run >= 16 && digit)
			return "a long hex part";
		run = 0;
		digit = false;
	}
	for (i = 0; i < n; i++)
		if (is_uuid_at(c + i, n - i))
			return "a UUID";
	if (!leaf) {
		sep = NULL;
		for (i = 0; i < n; i++)
			if (c[i] == '-' || c[i] == '_')
				sep = c + i;
		if (sep && sep > c && sep + 1 < c + n) {
			const char *p;

			for (p = sep + 1; p < c + n && c_digit(*p); p++)
				;
			if (p == c + n)
				return "a numbered run directory";
		}
	}
	return NULL;
}

static bool first_is(const char *g, const char *const *names)
{
	const char *e = strchr(g + 1, '/');
	size_t n = e ? (size_t)(e - g - 1) : strlen(g + 1);

	for (; *names; names++)
		if (strlen(*names) == n && !memcmp(g + 1, *names, n))
			return true;
	return false;
}

static const char *const system_tops[] = {"usr",  "etc", "bin", "sbin", "lib",	"lib64",
					  "boot", "var", "opt", "root", "home", NULL};
static const char *const os_tops[] = {"usr",  "etc",  "bin", "sbin", "lib", "lib64",
				      "boot", "proc", "sys", "dev",  NULL};

/* "/", a top-level directory, or a first-level child of one of system_tops. */
bool bw_learn_system_dir(const char *g)
{
	size_t depth = 0;

	for (const char *p = g; *p; p++)
		depth += *p == '/' && p[1];
	if (!strcmp(g, "/") || depth <= 1)
		return true;
	return depth == 2 && first_is(g, system_tops);
}

bool bw_learn_profile_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > BW_PROFILE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!c_alpha(s[i]) && !c_digit(s[i]) && (!i || !strchr("._-", s[i])))
			return false;
	return true;
}

bool bw_learn_in_os_tree(const char *path)
{
	return first_is(path, os_tops);
}
