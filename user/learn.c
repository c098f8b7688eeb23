// SPDX-License-Identifier: GPL-2.0-only
/*
 * Learn mode: merge what a workload did into a profile a person can review,
 * and that `bpfwarden check` accepts as written. Decisions, in the order the
 * writer applies them (`/dir/...` stands for the subtree rule `/dir/` `**`,
 * which a C comment cannot spell):
 *
 * Objects. Accesses are merged per object: a file or program path (with "//"
 * collapsed and a trailing "/" dropped), a net (operation, protocol, address,
 * port), a unix (operation, name), raw sockets, programs run from a memfd (an
 * exec with no path). A merged object keeps a count, the union of its access
 * bits and the BW_LEARN_PROGS smallest program names (strcmp order) plus
 * whether there were more: so the output never depends on the order events
 * came in. Net addresses are kept in IPv6 form; an IPv4 address given in the
 * first four bytes with family 4 is mapped first. A connect to 0.0.0.0 or ::
 * is recorded as 127.0.0.1 or ::1, the host the kernel decides it as (a rule
 * naming 0.0.0.0 would never match a connect); a bind keeps the address.
 *
 * Output. `profile NAME` ("learned" by default), `mode enforce`, `default
 * deny`, the includes, then the sections `# files`, `# programs`, `# network`,
 * always in that order and present even when empty. Every rule is preceded by
 * `# seen N times, by PROG[, PROG...]` (", and others" past BW_LEARN_PROGS;
 * "1 time"), followed after "; " by what the reviewer should know about it
 * (generalisation, bits an abstraction already allows). Sections are sorted:
 * paths component-wise ('/' before any other byte, so a directory's rules
 * stay together, and `/d` comes before `/d/...`), the memfd rule after paths;
 * net by operation (connect, bind, raw), protocol (tcp, udp, unix), IPv4
 * before IPv6, address bytes, port; unix names by bytes. No timestamps.
 *
 * Folding. Each name in opts->abstractions is read as a profile would read
 * `include "NAME"` from a file in opts->libdir (a top-level text naming
 * `<libdir>/.bw-learn`, so the lookup goes to the library: an abstraction
 * alone is not a valid top-level profile) and compiled with bw_compile. It is
 * included when, alone, it allows at least one learned object entirely (all
 * its access bits, by its most specific rule: bw_entries_lookup,
 * bw_net_lookup, the unix and raw entries). Coverage is then decided by the
 * included abstractions together (one of them may deny what another allows):
 * an access bit they allow is not written again; a file allowed `r` and
 * learned `rw` gets `allow file w` and a note naming the rule that allows `r`
 * (writing `rw` would be a duplicate warning). An abstraction that cannot be
 * read, or allows nothing learned, gets a comment instead of an include,
 * with the reason; a name given twice is one include. A learned access the included abstractions
 * deny on the object's own trie key (deny wins at equal specificity) cannot be allowed by any rule
 * of ours; it is written as a comment naming the denying rule. Accesses they deny through a less
 * specific rule get an exact rule (it is more specific, so it wins) and are never generalised.
 *
 * Generalisation (files only; programs and network stay exact: no port
 * ranges, no prefixes, no `localhost`):
 * - fan-out: a directory with at least opts->min_children (default 8)
 *   learned files directly in it with identical access (what is left to
 *   allow once the abstractions are folded in) becomes
 *   `allow file ACC /dir/...`; a directory generalised this way does not count
 *   as a file of its parent (no cascading);
 * - volatile names: a file learned with `r` only whose path has a per-run
 *   component (all digits, like PIDs; `tmp` followed by 6 to 16 letters and
 *   digits with a digit or a capital, as tempfile and mktemp make them; a
 *   final `.XXXXXX`/`-XXXXXX` of letters and digits, mkstemp's; 16 or more hex
 *   digits, or a UUID; a directory `NAME-N` or `NAME_N`) becomes
 *   `allow file r /parent/...` for the parent of the shallowest such
 *   component. If that parent may not be generalised the file stays exact
 *   (a deeper per-run component would still leave the first one in the
 *   rule), with a note saying why. So /proc/PID/... paths stay exact
 *   (/proc is a system directory, and the language has no rule for "the
 *   process's own PID"): such a rule will not match the next run's PID, and
 *   its note says so to the reviewer;
 * - never a subtree rule on `/` or on a system directory: every top-level
 *   directory (the first-level children of /, like /tmp, /proc, /dev), and
 *   the first-level children of /usr, /etc, /bin, /sbin, /lib, /lib64, /boot,
 *   /var, /opt, /root and /home (/usr/lib, /home/alice, /var/lib). Stricter
 *   for `w`: no subtree rule with `w` anywhere inside /usr, /etc, /bin,
 *   /sbin, /lib, /lib64, /boot, /proc, /sys, /dev (the system's own files,
 *   kernel knobs, devices): writes there stay exact, reviewable rules. So a
 *   workload that wrote in /tmp/job gets /tmp/job/..., never /tmp/...;
 * - nor on a directory an included abstraction already has a rule on with
 *   overlapping access (that would be a duplicate or a contradiction);
 * - a subtree rule made redundant by an ancestor's with the same or more
 *   bits is dropped; files covered by a subtree rule are not written, their
 *   counts and programs go to its comment.
 *
 * What cannot be expressed is written as a comment that says why and shows
 * the rule it would have been, never dropped: a path longer than
 * BW_RULE_PATH_MAX (unless a subtree rule covers it: the kernel matches long
 * paths by their first bytes), a unix path over 107 bytes, a '*' in a name
 * (the language has globs and no escape), a '.' or '..' component, no path
 * at all, a newline or other control byte (strings have no escape for them,
 * and raw control bytes in a file meant for review are a terminal hazard).
 * Tabs, spaces and '"' are written in a double-quoted string (with \" and \\
 * escapes), other bytes as they are. In comments, control bytes (program
 * names included) are shown as \xNN, so no name can start a line of its own.
 *
 * Checked before written: the text is parsed (includes from libdir) and
 * compiled. Past a kernel limit (BW_MAX_RULES rules, BW_NET_RANGES ports on
 * one address) it does not load; it is still written in full, with comment
 * lines at the top saying what failed, and 0 is returned: what was learned is
 * kept for a person to trim.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bpfwarden.h"
#include "compile.h"
#include "learn.h"
#include "path.h"

/* ---- the set ---- */

struct progs {
	char *v[BW_LEARN_PROGS]; /* sorted, distinct */
	unsigned n;
	bool more; /* a name that is not kept was seen */
};

struct lobj {
	char *key; /* identity: a tag byte, then the object's bytes */
	size_t keylen;
	uint64_t hash;
	enum bw_cat cat;
	unsigned access; /* file: BW_ACC_R | BW_ACC_W; others: BW_ACC_R */
	char *path;	 /* file, exec (NULL: memfd); unix: the name */
	int op, proto;	 /* net */
	uint8_t addr[16];
	uint16_t port;
	unsigned long long count;
	struct progs progs;
};

struct bw_learn_set {
	struct lobj *v;
	size_t n, cap;
	size_t *tab; /* open addressing: index + 1, 0 is empty */
	size_t tabsz;
	unsigned long long events;
};

struct bw_learn_set *bw_learn_new(void)
{
	return calloc(1, sizeof(struct bw_learn_set));
}

static void progs_free(struct progs *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->v[i]);
	memset(p, 0, sizeof(*p));
}

void bw_learn_free(struct bw_learn_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].path);
		progs_free(&s->v[i].progs);
	}
	free(s->v);
	free(s->tab);
	free(s);
}

size_t bw_learn_count(const struct bw_learn_set *s)
{
	return s ? s->n : 0;
}

unsigned long long bw_learn_events(const struct bw_learn_set *s)
{
	return s ? s->events : 0;
}

bool bw_learn_has_exec(const struct bw_learn_set *s, const char *path)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (s->v[i].cat == BW_CAT_EXEC && s->v[i].path && !strcmp(s->v[i].path, path))
			return true;
	return false;
}

/* Keep the BW_LEARN_PROGS smallest names: the same set whatever the order. */
static int progs_add(struct progs *p, const char *name)
{
	unsigned at;
	char *d;

	if (!name || !*name)
		return 0;
	for (at = 0; at < p->n; at++) {
		int c = strcmp(name, p->v[at]);

		if (!c)
			return 0;
		if (c < 0)
			break;
	}
	if (at == BW_LEARN_PROGS) {
		p->more = true;
		return 0;
	}
	d = strdup(name);
	if (!d)
		return -ENOMEM;
	if (p->n == BW_LEARN_PROGS) {
		free(p->v[--p->n]);
		p->more = true;
	}
	memmove(&p->v[at + 1], &p->v[at], (p->n - at) * sizeof(p->v[0]));
	p->v[at] = d;
	p->n++;
	return 0;
}

static int progs_merge(struct progs *into, const struct progs *from)
{
	for (unsigned i = 0; i < from->n; i++)
		if (progs_add(into, from->v[i]))
			return -ENOMEM;
	into->more |= from->more;
	return 0;
}

/* "//" collapsed, a trailing "/" dropped; anything not absolute is kept as is. */
static char *norm_path(const char *in)
{
	size_t n = strlen(in), w = 0;
	char *p = malloc(n + 1);

	if (!p)
		return NULL;
	if (in[0] != '/') {
		memcpy(p, in, n + 1);
		return p;
	}
	for (size_t i = 0; i < n; i++) {
		if (in[i] == '/' && w && p[w - 1] == '/')
			continue;
		p[w++] = in[i];
	}
	if (w > 1 && p[w - 1] == '/')
		w--;
	p[w] = '\0';
	return p;
}

static const uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static bool is_mapped(const uint8_t *a)
{
	return !memcmp(a, mapped_prefix, sizeof(mapped_prefix));
}

static bool all_zero(const uint8_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i])
			return false;
	return true;
}

static uint64_t fnv1a(const char *k, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)k[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int set_grow(struct bw_learn_set *s)
{
	size_t nsz = s->tabsz ? s->tabsz * 2 : 256, *nt;

	nt = calloc(nsz, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t j = s->v[i].hash & (nsz - 1);

		while (nt[j])
			j = (j + 1) & (nsz - 1);
		nt[j] = i + 1;
	}
	free(s->tab);
	s->tab = nt;
	s->tabsz = nsz;
	return 0;
}

/* Fill o (path, addr, ...) and its key from l; -EINVAL when l names no object. */
static int make_obj(const struct bw_learned *l, struct lobj *o)
{
	size_t plen;
	char *k;

	memset(o, 0, sizeof(*o));
	o->cat = l->cat;
	o->access = BW_ACC_R;
	switch (l->cat) {
	case BW_CAT_FILE:
		o->access = l->access & (BW_ACC_R | BW_ACC_W);
		if (!o->access)
			return -EINVAL;
		o->path = norm_path(l->path ? l->path : "");
		break;
	case BW_CAT_EXEC:
		if (l->path && *l->path)
			o->path = norm_path(l->path);
		else
			o->path = NULL; /* memfd */
		if (l->path && *l->path && !o->path)
			return -ENOMEM;
		break;
	case BW_CAT_NET:
		o->op = l->net_op;
		if (l->net_op == BW_NET_RAW)
			break;
		if (l->net_op != BW_NET_CONNECT && l->net_op != BW_NET_BIND)
			return -EINVAL;
		o->proto = l->proto;
		if (l->proto == BW_NET_UNIX) {
			const char *u = l->unix_name ? l->unix_name : "";

			o->path = u[0] == '/' ? norm_path(u) : strdup(u);
			break;
		}
		if (l->proto != BW_NET_TCP && l->proto != BW_NET_UDP)
			return -EINVAL;
		memcpy(o->addr, l->addr, 16);
		if (l->family == 4 && !is_mapped(o->addr)) {
			if (!all_zero(o->addr + 4, 12))
				return -EINVAL;
			memmove(o->addr + 12, o->addr, 4);
			memcpy(o->addr, mapped_prefix, 12);
		} else if (l->family != 4 && l->family != 6) {
			return -EINVAL;
		}
		/* A connect to the unspecified address reaches the local host. */
		if (l->net_op == BW_NET_CONNECT) {
			if (is_mapped(o->addr) && all_zero(o->addr + 12, 4))
				o->addr[12] = 127, o->addr[15] = 1;
			else if (all_zero(o->addr, 16))
				o->addr[15] = 1;
		}
		o->port = l->port;
		break;
	default:
		return -EINVAL;
	}
	if ((o->cat == BW_CAT_FILE || (o->cat == BW_CAT_NET && o->proto == BW_NET_UNIX)) &&
	    !o->path)
		return -ENOMEM;

	plen = o->path ? strlen(o->path) : 0;
	k = malloc(3 + 16 + 2 + plen);
	if (!k)
		return -ENOMEM;
	o->key = k;
	switch (o->cat) {
	case BW_CAT_FILE:
	case BW_CAT_EXEC:
		*k++ = o->cat == BW_CAT_FILE ? 'F' : o->path ? 'X' : 'M';
		break;
	default:
		*k++ = o->op == BW_NET_RAW ? 'R' : o->proto == BW_NET_UNIX ? 'U' : 'N';
		*k++ = (char)o->op;
		*k++ = (char)o->proto;
		if (o->op != BW_NET_RAW && o->proto != BW_NET_UNIX) {
			memcpy(k, o->addr, 16);
			k += 16;
			*k++ = (char)(o->port >> 8);
			*k++ = (char)o->port;
		}
		break;
	}
	if (plen)
		memcpy(k, o->path, plen);
	o->keylen = (size_t)(k - o->key) + plen;
	o->hash = fnv1a(o->key, o->keylen);
	return 0;
}

int bw_learn_add(struct bw_learn_set *s, const struct bw_learned *l)
{
	struct lobj o;
	size_t j;
	int ret;

	if (!s || !l)
		return -EINVAL;
	ret = make_obj(l, &o);
	if (ret)
		goto out;
	if (s->n * 2 >= s->tabsz && (ret = set_grow(s)))
		goto out;
	for (j = o.hash & (s->tabsz - 1); s->tab[j]; j = (j + 1) & (s->tabsz - 1)) {
		struct lobj *x = &s->v[s->tab[j] - 1];

		if (x->hash == o.hash && x->keylen == o.keylen &&
		    !memcmp(x->key, o.key, o.keylen)) {
			ret = progs_add(&x->progs, l->program);
			if (ret)
				goto out;
			x->access |= o.access;
			x->count++;
			s->events++;
			goto out;
		}
	}
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		struct lobj *nv = realloc(s->v, ncap * sizeof(*nv));

		if (!nv) {
			ret = -ENOMEM;
			goto out;
		}
		s->v = nv;
		s->cap = ncap;
	}
	ret = progs_add(&o.progs, l->program);
	if (ret)
		goto out;
	o.count = 1;
	s->v[s->n] = o;
	s->tab[j] = ++s->n;
	s->events++;
	return 0;
out:
	free(o.key);
	free(o.path);
	progs_free(&o.progs);
	return ret;
}

/* ---- text ---- */

/* Component-wise order: '/' sorts before every other byte. */
static int path_cmp(const char *a, const char *b)
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

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Comment text: control bytes as \xNN, so nothing can end the comment's line. */
static void put_comment_n(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (is_control((unsigned char)s[i]))
			fprintf(f, "\\x%02x", (unsigned char)s[i]);
		else
			fputc(s[i], f);
	}
}

static void put_comment(FILE *f, const char *s)
{
	put_comment_n(f, s, strlen(s));
}

/*
 * A value token (path, unix name) with `suffix` ("/" "**" or ""): bare unless
 * it holds a blank or '"', then quoted with \" and \\ escapes. In a comment
 * (`comment`), the text as put_comment shows it.
 */
static void put_word(FILE *f, const char *s, const char *suffix, bool comment)
{
	bool quote = false;

	if (comment) {
		put_comment(f, s);
		fputs(suffix, f);
		return;
	}
	for (const char *p = s; *p; p++)
		if (*p == ' ' || *p == '\t' || *p == '"')
			quote = true;
	if (!quote) {
		fputs(s, f);
		fputs(suffix, f);
		return;
	}
	fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		fputc(*p, f);
	}
	fputs(suffix, f);
	fputc('"', f);
}

static const char *acc_str(unsigned bits)
{
	return bits == (BW_ACC_R | BW_ACC_W) ? "rw" : bits == BW_ACC_W ? "w" : "r";
}

/*
 * Why a path cannot be a rule's operand, into buf; NULL when it can. `max`:
 * BW_RULE_PATH_MAX for file and exec rules, BW_UNIX_PATH_MAX for sockets.
 */
static const char *path_problem(const char *p, size_t max, char *buf, size_t len)
{
	struct bw_path np;

	if (!p || !*p)
		return "no path: a pipe, socket, memfd or other file without a name";
	if (p[0] != '/')
		return "not an absolute path";
	for (const char *c = p; *c; c++)
		if (is_control((unsigned char)*c) && *c != '\t')
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

static const char *unix_problem(const char *u, char *buf, size_t len)
{
	size_t n = strlen(u);

	if (u[0] == '/')
		return path_problem(u, BW_UNIX_PATH_MAX, buf, len);
	if (u[0] != '@')
		return "not a socket path or @name (an unnamed socket)";
	if (n == 1)
		return "an empty abstract socket name";
	for (const char *c = u; *c; c++)
		if (is_control((unsigned char)*c) && *c != '\t')
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
static const char *volatile_why(const char *c, size_t n, bool leaf)
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
static bool is_system_dir(const char *g)
{
	size_t depth = 0;

	for (const char *p = g; *p; p++)
		depth += *p == '/' && p[1];
	if (!strcmp(g, "/") || depth <= 1)
		return true;
	return depth == 2 && first_is(g, system_tops);
}

/* ---- the writer ---- */

struct fold {
	const char *name;
	struct bw_profile *p;
	struct bw_compiled c;
	bool loaded;
	char why[512]; /* not loaded: the reason */
	size_t allows; /* learned objects it allows alone */
};

/* An object as the included abstractions decide it. */
struct ostate {
	unsigned need;	  /* bits to allow */
	unsigned allowed; /* by the included abstractions */
	unsigned denied;  /* denied by them */
	unsigned blocked; /* denied on the object's own key: no rule of ours can win */
	unsigned rule_r, rule_w;
};

/* A file access left to write, and how it ends up. */
struct fres {
	const struct lobj *o;
	const struct ostate *st;
	unsigned bits;		  /* what is left to allow */
	bool pinned;		  /* exact rule only */
	long cand;		  /* the subtree rule covering it, or -1 */
	const char *vol;	  /* a per-run component that was not generalised */
	size_t vol_len, vol_plen; /* its length, its parent's */
	const char *vol_why, *vol_refused;
};

struct cand {
	char *dir;
	unsigned bits;
	size_t fanout;	      /* files directly in it that made it */
	unsigned fanout_bits; /* their access */
	char *vol;	      /* or: an example per-run name below it */
	const char *vol_why;
	bool dead; /* an ancestor's rule covers it */
	unsigned long long count;
	size_t nfiles;
	struct progs progs;
};

struct wctx {
	const struct bw_learn_set *s;
	const char *libdir;
	unsigned min_children, flags;
	struct fold *folds;
	size_t nfolds;
	struct bw_profile *cp; /* the included abstractions, together */
	struct bw_compiled cc;
	bool have_cc;
	struct ostate *st; /* per object */
	struct fres *fr;
	size_t nfr;
	struct cand *cands;
	size_t ncands;
};

static int load_abstractions(const char *libdir, const char *const *names, size_t n,
			     struct bw_profile **p, struct bw_compiled *c, char *why, size_t whylen)
{
	struct bw_diags d = {0};
	char *text = NULL, *fname = NULL;
	size_t tlen = 0;
	FILE *f;
	int ret;

	*p = NULL;
	f = open_memstream(&text, &tlen);
	if (!f)
		return -ENOMEM;
	fputs("profile bw-learn\n", f);
	for (size_t i = 0; i < n; i++) {
		fputs("include \"", f);
		for (const char *q = names[i]; *q; q++) {
			if (*q == '"' || *q == '\\')
				fputc('\\', f);
			fputc(*q, f);
		}
		fputs("\"\n", f);
	}
	if (fclose(f))
		ret = -ENOMEM;
	else if (libdir ? asprintf(&fname, "%s/.bw-learn", libdir) < 0
			: !(fname = strdup(".bw-learn")))
		ret = -ENOMEM;
	else
		ret = bw_profile_parse_string(fname, text, tlen, libdir, p, &d);
	if (ret == -EINVAL) {
		for (size_t i = 0; i < d.n; i++) {
			if (d.v[i].severity == BW_SEV_ERROR) {
				snprintf(why, whylen, "%s", d.v[i].msg);
				break;
			}
		}
	} else if (ret == 0) {
		ret = bw_compile(*p, c, why, whylen);
		if (ret) {
			bw_profile_free(*p);
			*p = NULL;
		}
	} else {
		snprintf(why, whylen, "%s", strerror(-ret));
	}
	bw_diags_free(&d);
	free(text);
	free(fname);
	return ret;
}

/* Where rule `rid` of the included abstractions is: FILE:LINE, FILE relative to the library. */
static void put_origin(FILE *f, const struct wctx *w, unsigned rid)
{
	const struct bw_origin *o;
	const char *file;
	size_t ll;

	if (!w->cp || !rid || rid > w->cp->nrules) {
		fputs("an included abstraction", f);
		return;
	}
	o = &w->cp->rules[rid - 1].origin;
	file = o->file ? o->file : "?";
	ll = w->libdir ? strlen(w->libdir) : 0;
	if (ll && !strncmp(file, w->libdir, ll) && file[ll] == '/')
		file += ll + 1;
	put_comment(f, file);
	fprintf(f, ":%d", o->line);
}

static int nop_of(int op)
{
	return op == BW_NET_BIND ? BW_NOP_BIND : BW_NOP_CONNECT;
}

static int ipproto_of(int proto)
{
	return proto == BW_NET_UDP ? IPPROTO_UDP : IPPROTO_TCP;
}

/* How the compiled rules `c` decide object o. */
static void decide(const struct bw_compiled *c, const struct lobj *o, struct ostate *v)
{
	memset(v, 0, sizeof(*v));
	v->need = o->access;
	if (o->cat == BW_CAT_FILE || (o->cat == BW_CAT_EXEC && o->path)) {
		const struct bw_file_entry *e;
		bool own;

		if (!o->path || o->path[0] != '/')
			return;
		if (o->cat == BW_CAT_FILE)
			e = bw_entries_lookup(c->files, c->nfiles, o->path);
		else
			e = bw_entries_lookup(c->execs, c->nexecs, o->path);
		if (!e)
			return;
		own = e->key[e->keylen - 1] == '\0';
		if (v->need & BW_ACC_R) {
			v->allowed |= e->val.verdict_r == BW_V_ALLOW ? BW_ACC_R : 0;
			v->denied |= e->val.verdict_r == BW_V_DENY ? BW_ACC_R : 0;
			v->rule_r = e->val.rule_r;
		}
		if (v->need & BW_ACC_W) {
			v->allowed |= e->val.verdict_w == BW_V_ALLOW ? BW_ACC_W : 0;
			v->denied |= e->val.verdict_w == BW_V_DENY ? BW_ACC_W : 0;
			v->rule_w = e->val.rule_w;
		}
		if (own)
			v->blocked = v->denied;
		return;
	}
	if (o->cat == BW_CAT_EXEC) {
		if (c->memfd_denied)
			v->denied = v->blocked = BW_ACC_R;
		else if (c->policy.exec_memfd)
			v->allowed = BW_ACC_R;
		v->rule_r = c->policy.exec_memfd_rule;
		return;
	}
	if (o->op == BW_NET_RAW) {
		if (c->policy.net_raw == BW_V_DENY)
			v->denied = v->blocked = BW_ACC_R;
		else if (c->policy.net_raw == BW_V_ALLOW)
			v->allowed = BW_ACC_R;
		v->rule_r = c->policy.net_raw_rule;
		return;
	}
	if (o->proto == BW_NET_UNIX) {
		for (size_t i = 0; i < c->nunixes; i++) {
			const struct bw_unix_entry *u = &c->unixes[i];

			if (u->key.op != nop_of(o->op) || strcmp(u->key.name, o->path))
				continue;
			if (u->val.verdict == BW_V_DENY)
				v->denied = v->blocked = BW_ACC_R;
			else
				v->allowed = BW_ACC_R;
			v->rule_r = u->val.rule;
		}
		return;
	}
	const struct bw_port_range *r =
	    bw_net_lookup(c, nop_of(o->op), ipproto_of(o->proto), o->addr, o->port);

	if (!r)
		return;
	v->rule_r = r->rule;
	if (r->verdict == BW_V_ALLOW) {
		v->allowed = BW_ACC_R;
		return;
	}
	v->denied = BW_ACC_R;
	/* Our rule would be the full address and the port alone: a deny there wins. */
	for (size_t i = 0; i < c->nnets; i++) {
		const struct bw_net_entry *e = &c->nets[i];

		if (e->key.op != nop_of(o->op) || e->key.proto != ipproto_of(o->proto) ||
		    e->key.prefixlen != 128 || memcmp(e->key.addr, o->addr, 16))
			continue;
		for (unsigned k = 0; k < e->own.n; k++)
			if (e->own.r[k].verdict == BW_V_DENY && e->own.r[k].lo == o->port &&
			    e->own.r[k].hi == o->port)
				v->blocked = BW_ACC_R;
	}
}

/* Does an included abstraction name (g, subtree) with one of `bits`? */
static bool abstraction_names(const struct wctx *w, const char *g, unsigned bits)
{
	if (!w->cp)
		return false;
	for (size_t i = 0; i < w->cp->nrules; i++) {
		const struct bw_rule *r = &w->cp->rules[i];

		if (r->cat == BW_CAT_FILE && r->file.subtree && r->file.path &&
		    (r->file.access & bits) && !strcmp(r->file.path, g))
			return true;
	}
	return false;
}

/* NULL if `allow file BITS G/...` may be written, else what G is. */
static const char *subtree_refused(const struct wctx *w, const char *g, unsigned bits)
{
	char buf[160];

	if (!strcmp(g, "/"))
		return "the root directory";
	if (is_system_dir(g))
		return "a system directory";
	if ((bits & BW_ACC_W) && first_is(g, os_tops))
		return "in the system's own tree, where writes stay exact";
	if (path_problem(g, BW_RULE_PATH_MAX, buf, sizeof(buf)))
		return "not expressible as a rule";
	if (abstraction_names(w, g, bits))
		return "named by an included abstraction";
	return NULL;
}

static int fres_cmp(const void *a, const void *b)
{
	const struct fres *x = a, *y = b;

	return path_cmp(x->o->path, y->o->path);
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return path_cmp(x->dir, y->dir);
}

static struct cand *cand_find(const struct wctx *w, const char *dir)
{
	struct cand probe = {.dir = (char *)dir};

	return bsearch(&probe, w->cands, w->ncands, sizeof(probe), cand_cmp);
}

static int cand_push(struct wctx *w, size_t *cap, const char *dir, size_t dlen, unsigned bits)
{
	struct cand *c;

	if (w->ncands == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct cand *nv = realloc(w->cands, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		w->cands = nv;
		*cap = ncap;
	}
	c = &w->cands[w->ncands];
	memset(c, 0, sizeof(*c));
	c->dir = strndup(dir, dlen ? dlen : 1);
	if (!c->dir)
		return -ENOMEM;
	c->bits = bits;
	w->ncands++;
	return 0;
}

/* Sort candidates by directory, merge equal ones, mark those an ancestor's rule covers. */
static int cands_settle(struct wctx *w)
{
	size_t i, out = 0;

	if (!w->ncands)
		return 0;
	qsort(w->cands, w->ncands, sizeof(*w->cands), cand_cmp);
	for (i = 0; i < w->ncands; i++) {
		struct cand *c = &w->cands[i];

		if (out && !strcmp(w->cands[out - 1].dir, c->dir)) {
			struct cand *into = &w->cands[out - 1];

			into->bits |= c->bits;
			if (c->fanout) {
				into->fanout += c->fanout;
				into->fanout_bits |= c->fanout_bits;
			}
			if (!into->vol) {
				into->vol = c->vol;
				into->vol_why = c->vol_why;
				c->vol = NULL;
			}
			free(c->vol);
			free(c->dir);
			continue;
		}
		w->cands[out++] = *c;
	}
	w->ncands = out;
	for (i = 0; i < w->ncands; i++) {
		struct cand *c = &w->cands[i];
		char *a = strdup(c->dir), *slash;

		if (!a)
			return -ENOMEM;
		while ((slash = strrchr(a, '/')) && slash != a) {
			struct cand *up;

			*slash = '\0';
			up = cand_find(w, a);
			if (up && !(c->bits & ~up->bits)) {
				c->dead = true;
				break;
			}
		}
		free(a);
	}
	return 0;
}

/* A file as a child of its directory: same access, then same parent, sort together. */
struct kid {
	const char *path;
	size_t plen; /* of its parent: 0 for a file in / */
	unsigned bits;
};

static int kid_cmp(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	int c;

	if (x->bits != y->bits)
		return x->bits < y->bits ? -1 : 1;
	c = memcmp(x->path, y->path, x->plen < y->plen ? x->plen : y->plen);
	if (c)
		return c;
	return x->plen < y->plen ? -1 : x->plen > y->plen;
}

/* Fan-out and volatile candidates from the files left to write, then coverage. */
static int generalise(struct wctx *w)
{
	size_t cap = 0, i, j, nkids = 0;
	struct kid *kids = NULL;
	int ret = 0;

	/* Volatile names: files read only. */
	for (i = 0; i < w->nfr && !(w->flags & BW_LEARN_NO_VOLATILE); i++) {
		struct fres *f = &w->fr[i];
		const char *p = f->o->path, *c, *why = NULL, *refused;
		size_t clen = 0, plen;
		char *g;

		if (f->pinned || f->bits != BW_ACC_R)
			continue;
		for (c = p + 1; *c; c += clen + (c[clen] == '/')) {
			clen = strcspn(c, "/");
			why = volatile_why(c, clen, c[clen] == '\0');
			if (why)
				break;
		}
		if (!why)
			continue;
		plen = (size_t)(c - p) - 1;
		g = strndup(p, plen ? plen : 1);
		if (!g)
			return -ENOMEM;
		refused = subtree_refused(w, g, BW_ACC_R);
		free(g);
		if (refused) {
			f->vol = c;
			f->vol_len = clen;
			f->vol_plen = plen;
			f->vol_why = why;
			f->vol_refused = refused;
			continue;
		}
		ret = cand_push(w, &cap, p, plen, BW_ACC_R);
		if (ret)
			return ret;
		w->cands[w->ncands - 1].vol = strndup(c, clen);
		w->cands[w->ncands - 1].vol_why = why;
		if (!w->cands[w->ncands - 1].vol)
			return -ENOMEM;
	}

	/* Fan-out: files directly in one directory with the same access. */
	if (!(w->flags & BW_LEARN_NO_FANOUT) && w->nfr) {
		kids = malloc(w->nfr * sizeof(*kids));
		if (!kids)
			return -ENOMEM;
	}
	for (i = 0; kids && i < w->nfr; i++) {
		const char *p = w->fr[i].o->path;

		if (w->fr[i].pinned || !strcmp(p, "/"))
			continue;
		kids[nkids].path = p;
		kids[nkids].plen = (size_t)(strrchr(p, '/') - p);
		kids[nkids++].bits = w->fr[i].bits;
	}
	if (nkids)
		qsort(kids, nkids, sizeof(*kids), kid_cmp);
	for (i = 0; i < nkids; i = j) {
		char *g;

		for (j = i + 1; j < nkids && !kid_cmp(&kids[i], &kids[j]); j++)
			;
		if (j - i < w->min_children)
			continue;
		g = strndup(kids[i].path, kids[i].plen ? kids[i].plen : 1);
		if (!g) {
			ret = -ENOMEM;
			break;
		}
		if (!subtree_refused(w, g, kids[i].bits)) {
			ret = cand_push(w, &cap, g, strlen(g), kids[i].bits);
			if (!ret) {
				w->cands[w->ncands - 1].fanout = j - i;
				w->cands[w->ncands - 1].fanout_bits = kids[i].bits;
			}
		}
		free(g);
		if (ret)
			break;
	}
	free(kids);
	if (ret)
		return ret;
	ret = cands_settle(w);
	if (ret)
		return ret;

	/* Coverage: the bits of every live rule on the file or a directory above it. */
	for (i = 0; i < w->nfr && w->ncands; i++) {
		struct fres *f = &w->fr[i];
		char *a;
		unsigned have = 0;
		long best = -1;
		size_t k;

		if (f->pinned)
			continue;
		a = strdup(f->o->path);
		if (!a)
			return -ENOMEM;
		for (k = strlen(a);; k--) {
			if (a[k] == '/' || a[k] == '\0') {
				struct cand *c;
				char save = a[k];

				a[k] = '\0';
				c = k ? cand_find(w, a) : NULL;
				a[k] = save;
				if (c && !c->dead) {
					have |= c->bits;
					if (best < 0 && (c->bits & f->bits))
						best = c - w->cands;
				}
			}
			if (!k)
				break;
		}
		free(a);
		if ((f->bits & ~have) || best < 0)
			continue;
		f->cand = best;
		w->cands[best].count += f->o->count;
		w->cands[best].nfiles++;
		if (progs_merge(&w->cands[best].progs, &f->o->progs))
			return -ENOMEM;
	}
	return 0;
}

static void put_seen(FILE *f, unsigned long long count, const struct progs *p)
{
	fprintf(f, "# seen %llu time%s", count, count == 1 ? "" : "s");
	for (unsigned i = 0; i < p->n; i++) {
		fputs(i ? ", " : ", by ", f);
		put_comment(f, p->v[i]);
	}
	if (p->more)
		fputs(", and others", f);
}

/* "; r is allowed by abstractions/base:17" for bits the abstractions already allow. */
static void put_partial(FILE *f, const struct wctx *w, const struct ostate *st)
{
	unsigned a = st->allowed & st->need;

	if (!a)
		return;
	fprintf(f, "; %s is allowed by ", acc_str(a));
	if (a == (BW_ACC_R | BW_ACC_W) && st->rule_r != st->rule_w) {
		put_origin(f, w, st->rule_r);
		fputs(" (r) and ", f);
		put_origin(f, w, st->rule_w);
		fputs(" (w)", f);
	} else {
		put_origin(f, w, a & BW_ACC_R ? st->rule_r : st->rule_w);
	}
}

static void put_blocked(FILE *f, const struct wctx *w, const struct ostate *st, const char *rule,
			const char *word, const char *suffix)
{
	fputs("# not allowed: ", f);
	put_origin(f, w, st->blocked & BW_ACC_R ? st->rule_r : st->rule_w);
	fputs(" denies it, and deny wins on the same object: ", f);
	fputs(rule, f);
	put_word(f, word, suffix, true);
	fputc('\n', f);
}

static void put_unexpressible(FILE *f, const char *why, const char *rule, const char *word,
			      const char *suffix)
{
	fputs("# cannot be expressed (", f);
	fputs(why, f);
	fputs("): ", f);
	fputs(rule, f);
	put_word(f, word, suffix, true);
	fputc('\n', f);
}

static void put_rule_or_comment(FILE *f, const struct ostate *st, unsigned bits, const char *rule,
				const char *word, const char *problem)
{
	if (!(bits & ~st->blocked))
		return;
	if (problem) {
		put_unexpressible(f, problem, rule, word, "");
		return;
	}
	fputs(rule, f);
	put_word(f, word, "", false);
	fputc('\n', f);
}

struct item {
	const char *path;
	bool subtree;
	size_t idx; /* into fr, or into cands when subtree */
};

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = path_cmp(x->path, y->path);

	return c ? c : (int)x->subtree - (int)y->subtree;
}

static int write_files(FILE *f, struct wctx *w)
{
	struct item *it = calloc(w->nfr + w->ncands + 1, sizeof(*it));
	size_t n = 0, i;
	char pbuf[160], rule[16];

	if (!it)
		return -ENOMEM;
	for (i = 0; i < w->nfr; i++)
		if (w->fr[i].cand < 0)
			it[n++] = (struct item){w->fr[i].o->path, false, i};
	for (i = 0; i < w->ncands; i++)
		if (!w->cands[i].dead && w->cands[i].nfiles)
			it[n++] = (struct item){w->cands[i].dir, true, i};
	qsort(it, n, sizeof(*it), item_cmp);
	if (!n)
		fputs("# (none)\n", f);
	for (i = 0; i < n; i++) {
		if (it[i].subtree) {
			const struct cand *c = &w->cands[it[i].idx];

			put_seen(f, c->count, &c->progs);
			fprintf(f, "; generalised from %zu learned file%s", c->nfiles,
				c->nfiles == 1 ? "" : "s");
			if (c->fanout)
				fprintf(f, ": %zu directly in it with access %s (min_children %u)",
					c->fanout, acc_str(c->fanout_bits), w->min_children);
			if (c->vol) {
				fputs(c->fanout ? ", and" : ":", f);
				fputs(" per-run names like '", f);
				put_comment(f, c->vol);
				fprintf(f, "' (%s)", c->vol_why);
			}
			fprintf(f, "\nallow file %s ", acc_str(c->bits));
			put_word(f, c->dir, "/**", false);
			fputc('\n', f);
			continue;
		}
		const struct fres *r = &w->fr[it[i].idx];
		const char *problem =
		    path_problem(r->o->path, BW_RULE_PATH_MAX, pbuf, sizeof(pbuf));

		put_seen(f, r->o->count, &r->o->progs);
		put_partial(f, w, r->st);
		if (r->vol) {
			fputs("; kept exact although '", f);
			put_comment_n(f, r->vol, r->vol_len);
			fprintf(f, "' looks per-run (%s): ", r->vol_why);
			put_comment_n(f, r->vol_plen ? r->o->path : "/",
				      r->vol_plen ? r->vol_plen : 1);
			fprintf(f, " is %s", r->vol_refused);
		}
		fputc('\n', f);
		snprintf(rule, sizeof(rule), "allow file %s ", acc_str(r->bits & ~r->st->blocked));
		put_rule_or_comment(f, r->st, r->bits, rule, r->o->path, problem);
		if (r->bits & r->st->blocked) {
			snprintf(rule, sizeof(rule), "allow file %s ",
				 acc_str(r->bits & r->st->blocked));
			put_blocked(f, w, r->st, rule, r->o->path, "");
		}
	}
	free(it);
	return 0;
}

static int obj_ptr_cmp_exec(const void *a, const void *b)
{
	const struct lobj *x = *(const struct lobj *const *)a, *y = *(const struct lobj *const *)b;

	if (!x->path || !y->path)
		return !x->path - !y->path;
	return path_cmp(x->path, y->path);
}

static int obj_ptr_cmp_net(const void *a, const void *b)
{
	const struct lobj *x = *(const struct lobj *const *)a, *y = *(const struct lobj *const *)b;
	int c;

	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->op == BW_NET_RAW)
		return 0;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->proto == BW_NET_UNIX)
		return strcmp(x->path, y->path);
	if (is_mapped(x->addr) != is_mapped(y->addr))
		return is_mapped(x->addr) ? -1 : 1;
	c = memcmp(x->addr, y->addr, 16);
	if (c)
		return c;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* The objects of category `cat` that still need a rule, sorted; *n set. */
static const struct lobj **residual(const struct wctx *w, enum bw_cat cat, size_t *n,
				    int (*cmp)(const void *, const void *))
{
	const struct lobj **v = calloc(w->s->n + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < w->s->n; i++)
		if (w->s->v[i].cat == cat && (w->st[i].need & ~w->st[i].allowed))
			v[(*n)++] = &w->s->v[i];
	qsort(v, *n, sizeof(*v), cmp);
	return v;
}

static int write_execs(FILE *f, const struct wctx *w)
{
	size_t n, i;
	const struct lobj **v = residual(w, BW_CAT_EXEC, &n, obj_ptr_cmp_exec);
	char pbuf[160];

	if (!v)
		return -ENOMEM;
	if (!n)
		fputs("# (none)\n", f);
	for (i = 0; i < n; i++) {
		const struct lobj *o = v[i];
		const struct ostate *st = &w->st[o - w->s->v];

		put_seen(f, o->count, &o->progs);
		fputc('\n', f);
		if (!o->path) {
			if (st->blocked)
				put_blocked(f, w, st, "allow exec memfd", "", "");
			else
				fputs("allow exec memfd\n", f);
			continue;
		}
		if (st->blocked)
			put_blocked(f, w, st, "allow exec ", o->path, "");
		else
			put_rule_or_comment(
			    f, st, BW_ACC_R, "allow exec ", o->path,
			    path_problem(o->path, BW_RULE_PATH_MAX, pbuf, sizeof(pbuf)));
	}
	free(v);
	return 0;
}

static int write_net(FILE *f, const struct wctx *w)
{
	size_t n, i;
	const struct lobj **v = residual(w, BW_CAT_NET, &n, obj_ptr_cmp_net);
	char buf[INET6_ADDRSTRLEN + 16], rule[128], pbuf[160];

	if (!v)
		return -ENOMEM;
	if (!n)
		fputs("# (none)\n", f);
	for (i = 0; i < n; i++) {
		const struct lobj *o = v[i];
		const struct ostate *st = &w->st[o - w->s->v];
		const char *op = o->op == BW_NET_BIND ? "bind" : "connect";

		put_seen(f, o->count, &o->progs);
		fputc('\n', f);
		if (o->op == BW_NET_RAW) {
			if (st->blocked)
				put_blocked(f, w, st, "allow net raw", "", "");
			else
				fputs("allow net raw\n", f);
			continue;
		}
		if (o->proto == BW_NET_UNIX) {
			snprintf(rule, sizeof(rule), "allow net %s unix ", op);
			if (st->blocked)
				put_blocked(f, w, st, rule, o->path, "");
			else
				put_rule_or_comment(f, st, BW_ACC_R, rule, o->path,
						    unix_problem(o->path, pbuf, sizeof(pbuf)));
			continue;
		}
		if (is_mapped(o->addr)) {
			inet_ntop(AF_INET, o->addr + 12, buf, sizeof(buf));
		} else {
			buf[0] = '[';
			inet_ntop(AF_INET6, o->addr, buf + 1, sizeof(buf) - 2);
			strcat(buf, "]");
		}
		snprintf(rule, sizeof(rule), "allow net %s %s %s:%u", op,
			 o->proto == BW_NET_UDP ? "udp" : "tcp", buf, o->port);
		if (st->blocked)
			put_blocked(f, w, st, rule, "", "");
		else
			fprintf(f, "%s\n", rule);
	}
	free(v);
	return 0;
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > BW_PROFILE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!c_alpha(s[i]) && !c_digit(s[i]) && (!i || !strchr("._-", s[i])))
			return false;
	return true;
}

/*
 * Parse and compile the text as the agent would; what fails goes into `msgs`
 * as comment lines (none when it loads cleanly), with line numbers as they
 * will be once those lines and the two that introduce them are above it.
 */
static int self_check(const struct wctx *w, const char *text, size_t len, FILE *msgs)
{
	struct bw_diags d = {0};
	struct bw_profile *p = NULL;
	struct bw_compiled c;
	char *fname = NULL, err[512] = "";
	const char *m = NULL;
	size_t shown, flen, i;
	int ret, cret = 0, off, line = 0;

	if (w->libdir ? asprintf(&fname, "%s/.bw-learn-check", w->libdir) < 0
		      : !(fname = strdup(".bw-learn-check")))
		return -ENOMEM;
	ret = bw_profile_parse_string(fname, text, len, w->libdir, &p, &d);
	if (ret == -ENOMEM)
		goto out;
	if (ret == 0) {
		cret = bw_compile(p, &c, err, sizeof(err));
		if (cret == -ENOMEM) {
			ret = cret;
			goto out;
		}
		if (!cret)
			bw_compiled_free(&c);
	}
	if (cret) {
		/* "NAME:LINE: message": the name is ours, not the reader's. */
		flen = strlen(fname);
		m = *err ? err : strerror(-cret);
		if (!strncmp(m, fname, flen) && m[flen] == ':') {
			line = atoi(m + flen + 1);
			m = strchr(m + flen + 1, ':');
			m = m ? m + 1 + (m[1] == ' ') : err;
		}
	}
	shown = d.n < 5 ? d.n : 5;
	off = 2 + (int)shown + (d.n > shown) + (cret != 0);
	if (!shown && !cret)
		off = 0;
	for (i = 0; i < shown; i++) {
		fprintf(msgs, "#   line %d: %s: ", d.v[i].line + off,
			d.v[i].severity == BW_SEV_ERROR ? "error" : "warning");
		put_comment(msgs, d.v[i].msg);
		fputc('\n', msgs);
	}
	if (d.n > shown)
		fprintf(msgs, "#   and %zu more\n", d.n - shown);
	if (cret) {
		fputs("#   ", msgs);
		if (line)
			fprintf(msgs, "line %d: ", line + off);
		put_comment(msgs, m);
		fputc('\n', msgs);
	}
	ret = 0;
out:
	bw_profile_free(p);
	bw_diags_free(&d);
	free(fname);
	return ret;
}

static void wctx_free(struct wctx *w)
{
	for (size_t i = 0; i < w->nfolds; i++) {
		if (w->folds[i].loaded)
			bw_compiled_free(&w->folds[i].c);
		bw_profile_free(w->folds[i].p);
	}
	free(w->folds);
	if (w->have_cc)
		bw_compiled_free(&w->cc);
	bw_profile_free(w->cp);
	for (size_t i = 0; i < w->ncands; i++) {
		free(w->cands[i].dir);
		free(w->cands[i].vol);
		progs_free(&w->cands[i].progs);
	}
	free(w->cands);
	free(w->fr);
	free(w->st);
}

static int fold_all(struct wctx *w, const char *const *names)
{
	const char **inc = NULL;
	size_t ninc = 0, i, j;
	char why[512] = "";
	int ret;

	for (i = 0; names && names[i]; i++)
		;
	w->folds = calloc(i + 1, sizeof(*w->folds));
	inc = calloc(i + 1, sizeof(*inc));
	if (!w->folds || !inc) {
		free(inc);
		return -ENOMEM;
	}
	for (i = 0, w->nfolds = 0; names && names[i]; i++) {
		struct fold *fo = &w->folds[w->nfolds];

		/* A name given twice is one include. */
		for (j = 0; j < w->nfolds && strcmp(w->folds[j].name, names[i]); j++)
			;
		if (j < w->nfolds)
			continue;
		w->nfolds++;
		fo->name = names[i];
		ret = load_abstractions(w->libdir, &names[i], 1, &fo->p, &fo->c, fo->why,
					sizeof(fo->why));
		if (ret == -ENOMEM)
			goto out;
		fo->loaded = ret == 0;
		for (j = 0; fo->loaded && j < w->s->n; j++) {
			struct ostate v;

			decide(&fo->c, &w->s->v[j], &v);
			fo->allows += (v.need & ~v.allowed) == 0;
		}
		if (fo->allows)
			inc[ninc++] = fo->name;
	}
	ret = 0;
	if (ninc) {
		ret = load_abstractions(w->libdir, inc, ninc, &w->cp, &w->cc, why, sizeof(why));
		if (ret)
			goto out; /* each loads alone; together they may pass a limit */
		w->have_cc = true;
	}
	for (j = 0; j < w->s->n; j++) {
		if (w->have_cc) {
			decide(&w->cc, &w->s->v[j], &w->st[j]);
		} else {
			memset(&w->st[j], 0, sizeof(w->st[j]));
			w->st[j].need = w->s->v[j].access;
		}
	}
out:
	free(inc);
	return ret;
}

int bw_learn_write_profile(const struct bw_learn_set *s, const struct bw_learn_opts *opts,
			   FILE *out)
{
	static const struct bw_learn_opts defaults;
	struct wctx w = {0};
	const char *name;
	char *body = NULL, *warn = NULL;
	size_t blen = 0, wlen = 0, i;
	FILE *f = NULL, *wf = NULL;
	int ret;

	if (!s || !out)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	name = opts->name ? opts->name : "learned";
	if (!name_ok(name))
		return -EINVAL;
	/* An include name is one string on one line. */
	for (i = 0; opts->abstractions && opts->abstractions[i]; i++) {
		const char *a = opts->abstractions[i];

		if (!*a)
			return -EINVAL;
		for (; *a; a++)
			if (is_control((unsigned char)*a))
				return -EINVAL;
	}

	w.s = s;
	w.libdir = opts->libdir;
	w.min_children = opts->min_children ? opts->min_children : BW_LEARN_MIN_CHILDREN;
	w.flags = opts->flags;
	w.st = calloc(s->n + 1, sizeof(*w.st));
	w.fr = calloc(s->n + 1, sizeof(*w.fr));
	ret = -ENOMEM;
	if (!w.st || !w.fr)
		goto out;
	ret = fold_all(&w, opts->abstractions);
	if (ret)
		goto out;

	/* Files left to write, sorted by path. */
	for (i = 0; i < s->n; i++) {
		const struct lobj *o = &s->v[i];
		struct fres *r;

		if (o->cat != BW_CAT_FILE || !(w.st[i].need & ~w.st[i].allowed))
			continue;
		r = &w.fr[w.nfr++];
		r->o = o;
		r->st = &w.st[i];
		r->bits = w.st[i].need & ~w.st[i].allowed;
		r->pinned = (r->bits & w.st[i].denied) || o->path[0] != '/';
		r->cand = -1;
	}
	qsort(w.fr, w.nfr, sizeof(*w.fr), fres_cmp);
	ret = generalise(&w);
	if (ret)
		goto out;

	ret = -ENOMEM;
	f = open_memstream(&body, &blen);
	if (!f)
		goto out;
	fprintf(f,
		"# Learned by bpfwarden from %llu accesses to %zu objects. Review every rule\n"
		"# before enforcing it: each allows something the workload did while learned.\n",
		s->events, s->n);
	if (!(w.flags & BW_LEARN_NO_FANOUT))
		fprintf(
		    f,
		    "# Generalised: a directory with %u or more files of one access is DIR/**.\n",
		    w.min_children);
	if (!(w.flags & BW_LEARN_NO_VOLATILE))
		fputs("# Generalised: a per-run name (digits, tmpXXXXXX, hex) read is PARENT/**.\n",
		      f);
	fputs("# Never /**, no subtree rule on a system directory, no w subtree in /usr, /etc,\n"
	      "# /bin, /sbin, /lib, /lib64, /boot, /proc, /sys, /dev (see user/learn.c).\n",
	      f);
	fprintf(f, "profile %s\nmode enforce\ndefault deny\n", name);
	if (w.nfolds)
		fputc('\n', f);
	for (i = 0; i < w.nfolds; i++) {
		const struct fold *fo = &w.folds[i];

		fputs("# ", f);
		put_comment(f, fo->name);
		if (!fo->loaded) {
			fputs(": not included: ", f);
			put_comment(f, fo->why);
			fputc('\n', f);
		} else if (!fo->allows) {
			fputs(": not included, it allows none of the learned accesses\n", f);
		} else {
			fprintf(f, " allows %zu of the learned accesses\ninclude ", fo->allows);
			fputc('"', f);
			for (const char *c = fo->name; *c; c++) {
				if (*c == '"' || *c == '\\')
					fputc('\\', f);
				fputc(*c, f);
			}
			fputs("\"\n", f);
		}
	}
	fputs("\n# files\n", f);
	ret = write_files(f, &w);
	if (!ret) {
		fputs("\n# programs\n", f);
		ret = write_execs(f, &w);
	}
	if (!ret) {
		fputs("\n# network\n", f);
		ret = write_net(f, &w);
	}
	if (fclose(f)) {
		f = NULL;
		ret = ret ? ret : -ENOMEM;
		goto out;
	}
	f = NULL;
	if (ret)
		goto out;

	ret = -ENOMEM;
	wf = open_memstream(&warn, &wlen);
	if (!wf)
		goto out;
	ret = self_check(&w, body, blen, wf);
	if (fclose(wf) && !ret)
		ret = -ENOMEM;
	if (ret)
		goto out;
	if (wlen)
		fprintf(out,
			"# WARNING: this profile does not load as written (a kernel limit?);\n"
			"# trim or generalise it by hand. The check said:\n%s",
			warn);
	fwrite(body, 1, blen, out);
	ret = ferror(out) || fflush(out) ? -EIO : 0;
out:
	if (f)
		fclose(f);
	free(body);
	free(warn);
	wctx_free(&w);
	return ret;
}
