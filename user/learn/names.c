// SPDX-License-Identifier: GPL-2.0-only
/*
 * Predicates on names (learn_names.h): what a rule can spell, the path order,
 * per-run names, system directories. Secrets are in secrets.c. docs/learn.md
 * is their specification.
 */
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
 * glibc's loaders are ld-linux*.so.N, ld64.so.N, ld-VERSION.so and ld.so.N,
 * musl's ld-musl-ARCH.so.1; the linker (ld, ld.bfd, ld.gold) has no ".so".
 */
bool bw_learn_is_loader(const char *path)
{
	const char *base = strrchr(path, '/'), *so;

	base = base ? base + 1 : path;
	if (strncmp(base, "ld-", 3) && strncmp(base, "ld64.", 5) && strncmp(base, "ld.", 3))
		return false;
	so = strstr(base, ".so");
	if (!so)
		return false;
	for (so += 3; *so; so++)
		if (*so != '.' && (*so < '0' || *so > '9'))
			return false;
	return true;
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

/* ---- per-run names ---- */

static bool c_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool c_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool c_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool c_alpha(char c)
{
	return c_upper(c) || c_lower(c);
}

static bool c_alnum(char c)
{
	return c_alpha(c) || c_digit(c);
}

static bool c_hex(char c)
{
	return c_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool all_digits(const char *c, size_t n)
{
	size_t i;

	for (i = 0; i < n && c_digit(c[i]); i++)
		;
	return n && i == n;
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

/* 16 or more hex digits in a row, digits and letters: a hash, a random id. */
static bool long_hex(const char *c, size_t n)
{
	size_t run = 0;
	bool digit = false, letter = false;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && c_hex(c[i])) {
			run++;
			digit |= c_digit(c[i]);
			letter |= c_alpha(c[i]);
			continue;
		}
		if (run >= 16 && digit && letter)
			return true;
		run = 0;
		digit = letter = false;
	}
	return false;
}

/*
 * `tmp` and 6 to 16 letters, digits or '_' with a digit or a capital (after
 * an optional '.', '_' or '-'): mktemp's tmp.XXXXXXXXXX and most tempfile
 * names. Or, before any suffix, `tmp` and exactly 8 of [a-z0-9_]: Python's
 * tempfile, whose random part may be all letters.
 */
static bool tmp_name(const char *c, size_t n)
{
	size_t j, k, stem;
	bool mark = false;

	if (n < 9 || memcmp(c, "tmp", 3))
		return false;
	j = 3 + (c[3] == '.' || c[3] == '_' || c[3] == '-');
	for (k = j; k < n && (c_alnum(c[k]) || c[k] == '_'); k++)
		mark |= c_digit(c[k]) || c_upper(c[k]);
	if (k == n && n - j >= 6 && n - j <= 16 && mark)
		return true;
	for (stem = 3; stem < n && (c_lower(c[stem]) || c_digit(c[stem]) || c[stem] == '_'); stem++)
		;
	return stem == 11 && (stem == n || c[stem] == '.');
}

/*
 * The part after the last '.' or '-' is 6 letters and digits, with a digit,
 * or with two capitals and a small letter: mkstemp's XXXXXX.
 */
static bool mkstemp_tail(const char *c, size_t n)
{
	const char *sep = NULL;
	unsigned digits = 0, upper = 0, lower = 0;

	for (size_t i = 0; i < n; i++)
		if (c[i] == '.' || c[i] == '-')
			sep = c + i;
	if (!sep || sep == c || (size_t)(c + n - sep - 1) != 6)
		return false;
	for (const char *p = sep + 1; p < c + n; p++) {
		if (!c_alnum(*p))
			return false;
		digits += c_digit(*p);
		upper += c_upper(*p);
		lower += c_lower(*p);
	}
	return (digits && digits < 6) || (upper >= 2 && lower);
}

/* A token (letters and digits between other bytes) of 8 or more hex digits,
 * with a digit and a letter: a random suffix (secrets.token_hex(4), a short hash). */
static bool hex_token(const char *c, size_t n)
{
	for (size_t i = 0, j; i < n; i = j + 1) {
		bool digit = false, letter = false, hex = true;

		for (j = i; j < n && c_alnum(c[j]); j++) {
			hex &= c_hex(c[j]);
			digit |= c_digit(c[j]);
			letter |= c_alpha(c[j]);
		}
		if (hex && digit && letter && j - i >= 8)
			return true;
	}
	return false;
}

/* Four or more digits in a row, or a token of three or more digits alone: a
 * PID, a counter, a time (a year looks the same). Versions have fewer. */
static bool number(const char *c, size_t n)
{
	for (size_t i = 0, j; i < n; i = j + 1) {
		for (j = i; j < n && c_digit(c[j]); j++)
			;
		if (j - i >= 4 ||
		    (j - i >= 3 && (!i || !c_alnum(c[i - 1])) && (j == n || !c_alnum(c[j]))))
			return true;
	}
	return false;
}

/*
 * A part between '.', '-' or the ends, 8 to 16 letters, digits or '_', in
 * which letters and digits alternate at least twice (a3kf9x2b): the random
 * part of tempfile.mkstemp(prefix=..., suffix=...). Words with a version
 * (python311, libpcre2) alternate once.
 */
static bool random_part(const char *c, size_t n)
{
	for (size_t i = 0, j; i < n; i = j + 1) {
		unsigned turns = 0;
		int last = 0; /* 1 letter, 2 digit */
		bool ok = true;

		for (j = i; j < n && c[j] != '.' && c[j] != '-'; j++) {
			int k = c_alpha(c[j]) ? 1 : c_digit(c[j]) ? 2 : 0;

			ok &= k || c[j] == '_';
			if (k && last && k != last)
				turns++;
			if (k)
				last = k;
		}
		if (ok && turns >= 2 && j - i >= 8 && j - i <= 16)
			return true;
	}
	return false;
}

/* `NAME-N` or `NAME_N`: a numbered run directory (run-17, build_42). */
static bool numbered_dir(const char *c, size_t n)
{
	const char *sep = NULL;

	for (size_t i = 0; i < n; i++)
		if (c[i] == '-' || c[i] == '_')
			sep = c + i;
	return sep && sep > c && sep + 1 < c + n && all_digits(sep + 1, (size_t)(c + n - sep - 1));
}

const char *bw_learn_per_run(const char *c, size_t n, bool leaf)
{
	if (all_digits(c, n))
		return "all digits";
	for (size_t i = 0; i < n; i++)
		if (is_uuid_at(c + i, n - i))
			return "a UUID";
	if (long_hex(c, n))
		return "a long hex part";
	if (tmp_name(c, n) || mkstemp_tail(c, n))
		return "a temporary name";
	if (hex_token(c, n))
		return "a hex part";
	/* A key is kept where it is: id_ed25519 is not a run's number. */
	if (leaf && bw_learn_key_like(c, n))
		return NULL;
	/* Looser forms only for files: a directory's name is more often a version. */
	if (leaf && number(c, n))
		return "a number";
	if (leaf && random_part(c, n))
		return "a random part";
	if (!leaf && numbered_dir(c, n))
		return "a numbered run directory";
	return NULL;
}

size_t bw_learn_per_run_stem(const char *c, size_t n)
{
	if (!bw_learn_per_run(c, n, true))
		return 0;
	for (size_t k = n; k-- > 0;) {
		bool letter = false;

		if ((c[k] != '.' && c[k] != '-' && c[k] != '_') || k + 1 == n)
			continue;
		if (!bw_learn_per_run(c + k + 1, n - k - 1, true) ||
		    bw_learn_per_run(c, k + 1, true))
			continue;
		for (size_t i = 0; i < k; i++)
			letter |= c_alpha(c[i]);
		return k + 1 >= 3 && letter ? k + 1 : 0;
	}
	return 0;
}

/* ---- the command a learned profile is named after ---- */

static const char *base_of(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

static bool in_list(const char *word, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(word, *list))
			return true;
	return false;
}

const char *bw_learn_command_name(char *const *argv)
{
	/* Programs that only start another, with its own options in between. */
	static const char *const wrappers[] = {
	    "runuser", "su",	  "sudo",  "doas",  "setpriv", "env",	  "nice",  "ionice",
	    "timeout", "chroot", "nohup", "stdbuf", "taskset", "chrt",	  "setsid", "unshare",
	    "nsenter", "prlimit", "gosu",  "su-exec", "tini",  "dumb-init", "time", "exec",
	    NULL};
	static const char *const shells[] = {"sh", "dash", "bash", "zsh", "ksh", NULL};
	size_t i = 0;

	while (argv[i] && in_list(base_of(argv[i]), wrappers)) {
		size_t j, dashes = 0;

		for (j = i + 1; argv[j]; j++)
			if (!strcmp(argv[j], "--")) {
				dashes = j;
				break;
			}
		if (dashes) {
			i = dashes + 1;
			continue;
		}
		/* No "--": options, VAR=value and a timeout's or nice's number go. */
		for (i++; argv[i] && (argv[i][0] == '-' || strchr(argv[i], '=') ||
				      (argv[i][0] >= '0' && argv[i][0] <= '9'));
		     i++)
			;
	}
	if (argv[i] && in_list(base_of(argv[i]), shells) && argv[i + 1] && argv[i + 1][0] != '-')
		return argv[i + 1];
	return argv[i];
}

/* ---- system directories ---- */

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
