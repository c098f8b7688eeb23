// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rules of the three sections, each after a comment saying how often and
 * by which programs it was seen and what the reviewer should know about it
 * (docs/learn.md, "Output"). What a rule cannot spell is a comment that says
 * why, never dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bpfwarden.h"
#include "internal.h"
#include "learn_names.h"

/* Comment text: control bytes as \xNN, so nothing can end the comment's line. */
static void put_comment_n(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (bw_learn_is_control((unsigned char)s[i]))
			fprintf(f, "\\x%02x", (unsigned char)s[i]);
		else
			fputc(s[i], f);
	}
}

void bw_put_comment(FILE *f, const char *s)
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
		bw_put_comment(f, s);
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

/* Where rule `rid` of the included abstractions is: FILE:LINE, FILE relative to the library. */
void bw_put_origin(FILE *f, const struct bw_wctx *w, unsigned rid)
{
	const struct bw_origin *o;
	const char *file;
	size_t ll;

	if (!w->cp || !rid || rid > w->cp->nrules) {
		fputs("an included abstraction", f);
		return;
	}
	o = &w->cp->rules[rid - 1].origin;
	/* A base's rule: where the base has it, not where the writer's copy is. */
	if (w->cp->nfiles && o->file == w->cp->files[0] && o->line >= 1 &&
	    (size_t)o->line <= w->nbase_origin && w->base_origin[o->line - 1])
		o = w->base_origin[o->line - 1];
	file = o->file ? o->file : "?";
	ll = w->libdir ? strlen(w->libdir) : 0;
	if (ll && !strncmp(file, w->libdir, ll) && file[ll] == '/')
		file += ll + 1;
	bw_put_comment(f, file);
	fprintf(f, ":%d", o->line);
}

static void put_seen(FILE *f, unsigned long long count, const struct bw_progs *p)
{
	fprintf(f, "# seen %llu time%s", count, count == 1 ? "" : "s");
	for (unsigned i = 0; i < p->n; i++) {
		fputs(i ? ", " : ", by ", f);
		bw_put_comment(f, p->v[i]);
	}
	if (p->more)
		fputs(", and others", f);
}

/* "; r is allowed by abstractions/base:17" for bits the abstractions already allow. */
static void put_partial(FILE *f, const struct bw_wctx *w, const struct bw_ostate *st)
{
	unsigned a = st->allowed & st->need;

	if (!a)
		return;
	fprintf(f, "; %s is allowed by ", acc_str(a));
	if (a == (BW_ACC_R | BW_ACC_W) && st->rule_r != st->rule_w) {
		bw_put_origin(f, w, st->rule_r);
		fputs(" (r) and ", f);
		bw_put_origin(f, w, st->rule_w);
		fputs(" (w)", f);
	} else {
		bw_put_origin(f, w, a & BW_ACC_R ? st->rule_r : st->rule_w);
	}
}

static void put_blocked(FILE *f, const struct bw_wctx *w, const struct bw_ostate *st,
			const char *rule, const char *word, const char *suffix)
{
	fputs("# not allowed: ", f);
	bw_put_origin(f, w, st->blocked & BW_ACC_R ? st->rule_r : st->rule_w);
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

static void put_rule_or_comment(FILE *f, const struct bw_ostate *st, unsigned bits,
				const char *rule, const char *word, const char *problem)
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

/*
 * "DIR/#INO (deleted)": how the kernel names a file made with O_TMPFILE (an
 * unhashed dentry named after its inode). The next run's has another
 * number, and no name ever reaches it again: a rule for it is dead.
 */
static bool unnamed_file(const char *path)
{
	const char *p = strrchr(path, '/');

	if (!p || p[1] != '#' || p[2] < '0' || p[2] > '9')
		return false;
	for (p += 2; *p >= '0' && *p <= '9'; p++)
		;
	return !strcmp(p, " (deleted)");
}

struct item {
	const char *path;
	bool subtree;
	size_t idx; /* into fr, or into cands when subtree */
};

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = bw_learn_path_cmp(x->path, y->path);

	return c ? c : (int)x->subtree - (int)y->subtree;
}

int bw_write_files(FILE *f, struct bw_wctx *w)
{
	struct item *it = calloc(w->nfr + w->ncands + 1, sizeof(*it));
	size_t n = 0, i;
	char pbuf[160], rule[16];

	if (!it)
		return -ENOMEM;
	for (i = 0; i < w->nfr; i++)
		if (w->fr[i].cand < 0 && !w->fr[i].stem_merged)
			it[n++] = (struct item){w->fr[i].o->path, false, i};
	for (i = 0; i < w->ncands; i++)
		if (!w->cands[i].dead && w->cands[i].nfiles)
			it[n++] = (struct item){w->cands[i].dir, true, i};
	qsort(it, n, sizeof(*it), item_cmp);
	if (!n)
		fputs("# (none)\n", f);
	for (i = 0; i < n; i++) {
		if (it[i].subtree) {
			const struct bw_cand *c = &w->cands[it[i].idx];

			put_seen(f, c->count, &c->progs);
			fprintf(f, "; generalised from %zu learned file%s", c->nfiles,
				c->nfiles == 1 ? "" : "s");
			if (c->fanout)
				fprintf(f, ": %zu directly in it with access %s (min_children %u)",
					c->fanout, acc_str(c->fanout_bits), w->min_children);
			if (c->vol) {
				fputs(c->fanout ? ", and" : ":", f);
				fputs(" per-run names like '", f);
				bw_put_comment(f, c->vol);
				fprintf(f, "' (%s)", c->vol_why);
			}
			if (c->named_by) {
				fputs(c->fanout || c->vol ? ", and" : ":", f);
				fputs(" a content root, named in ", f);
				bw_put_comment(f, c->named_by);
				fprintf(f, ":%u, a configuration file the same program read",
					c->named_line);
			}
			if (c->read_back)
				fputs("; read too: written only, a directory the workload writes "
				      "names into is its own, read back at its next start",
				      f);
			fprintf(f, "\nallow file %s ", acc_str(c->bits));
			put_word(f, c->dir, "/**", false);
			fputc('\n', f);
			continue;
		}
		const struct bw_fres *r = &w->fr[it[i].idx];
		bool unnamed = unnamed_file(r->o->path);
		const char *problem =
		    unnamed
			? "an unnamed file (O_TMPFILE): its name is new at every run, so no rule "
			  "can name the next one; give the workload a directory of its own "
			  "(TMPDIR) and learn again"
			: bw_learn_path_problem(r->o->path, BW_RULE_PATH_MAX, pbuf, sizeof(pbuf));

		put_seen(f, r->o->count, &r->o->progs);
		put_partial(f, w, r->st);
		if (r->stem_len) {
			size_t dlen = r->vol_plen ? r->vol_plen : 1,
			       plen = (size_t)(r->vol - r->o->path);
			char *prefix = strndup(r->o->path, plen + r->stem_len);

			if (!prefix) {
				free(it);
				return -ENOMEM;
			}
			fputs("; per-run names like '", f);
			put_comment_n(f, r->vol, r->vol_len);
			fprintf(f, "' (%s), and ", r->vol_why);
			put_comment_n(f, r->o->path, dlen);
			fputs(" is ", f);
			bw_put_comment(f, r->vol_refused);
			fputs(": the names in it beginning with '", f);
			put_comment_n(f, r->vol, r->stem_len);
			fputs("'\n", f);
			snprintf(rule, sizeof(rule), "allow file %s ",
				 acc_str(r->bits & ~r->st->blocked));
			if (r->bits & ~r->st->blocked) {
				fputs(rule, f);
				put_word(f, prefix, "*", false);
				fputc('\n', f);
			}
			free(prefix);
			continue;
		}
		if (r->vol && !unnamed) {
			fputs("; kept exact although '", f);
			put_comment_n(f, r->vol, r->vol_len);
			fprintf(f, "' looks per-run (%s): ", r->vol_why);
			put_comment_n(f, r->vol_plen ? r->o->path : "/",
				      r->vol_plen ? r->vol_plen : 1);
			fputs(" is ", f);
			bw_put_comment(f, r->vol_refused);
		} else if (r->secret) {
			/* Fan-out refused for secrets: say it, or a reviewer may widen it by hand.
			 */
			fputs("; not generalised: ", f);
			put_comment_n(f, r->o->path,
				      (size_t)(strrchr(r->o->path, '/') - r->o->path));
			fputs(" is ", f);
			bw_put_comment(f, r->secret);
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
	const struct bw_lobj *x = *(const struct bw_lobj *const *)a,
			     *y = *(const struct bw_lobj *const *)b;

	if (!x->path || !y->path)
		return !x->path - !y->path;
	return bw_learn_path_cmp(x->path, y->path);
}

static int obj_ptr_cmp_net(const void *a, const void *b)
{
	const struct bw_lobj *x = *(const struct bw_lobj *const *)a,
			     *y = *(const struct bw_lobj *const *)b;
	int c;

	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->op == BW_NET_RAW || x->op == BW_NET_ADMIN)
		return 0;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->proto == BW_NET_UNIX)
		return strcmp(x->path, y->path);
	if (bw_addr_is_mapped(x->addr) != bw_addr_is_mapped(y->addr))
		return bw_addr_is_mapped(x->addr) ? -1 : 1;
	c = memcmp(x->addr, y->addr, 16);
	if (c)
		return c;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* Was o mapped only by processes whose program is the loader? */
static bool mapped_by_loader(const struct bw_lobj *o)
{
	if (!o->progs.n || o->progs.more)
		return false;
	for (unsigned i = 0; i < o->progs.n; i++)
		if (!bw_learn_is_loader(o->progs.v[i]))
			return false;
	return true;
}

/*
 * The library directory a library was mapped from, as a length of path, when
 * its other libraries may be mapped too: a package's own directory of shared
 * objects (/usr/lib/postgresql/15/lib), whose plugins and extensions a
 * service maps when it first needs them, often after learning ended. Only in
 * the system's own tree (/usr, /lib, /lib64) or /opt, three levels down or
 * more, and only where the workload wrote nothing: code it could write there
 * would be code of its choosing. 0: keep the library's own rule.
 */
static size_t lib_dir_len(const struct bw_wctx *w, const char *path)
{
	static const char *const tops[] = {"/usr/", "/lib/", "/lib64/", "/opt/", NULL};
	const char *base = strrchr(path, '/') + 1, *so = strstr(base, ".so");
	size_t len = (size_t)(base - path) - 1, depth = 0, i;
	bool top = false;

	if (!so || (so[3] && so[3] != '.') || bw_learn_is_loader(path))
		return 0;
	for (i = 0; tops[i]; i++)
		top |= !strncmp(path, tops[i], strlen(tops[i]));
	for (i = 0; i < len; i++)
		depth += path[i] == '/';
	if (!top || depth < 3)
		return 0;
	for (i = 0; i < w->nfiles; i++) {
		const struct bw_lobj *o = w->files[i];

		if ((o->access & BW_ACC_W) && !strncmp(o->path, path, len) &&
		    (!o->path[len] || o->path[len] == '/'))
			return 0;
	}
	return len;
}

/* The library directory written last: put_exec sees libraries in path order. */
static char lib_dir_done[PATH_MAX];

/*
 * An exec rule: memfd, or a path. A program run gets `allow exec` (which maps
 * it too); a file only mapped, a library, `allow exec lib`. The dynamic
 * loader run directly (`ld.so PROGRAM`) gets no rule to run: it would run any
 * program the sandbox can read, whatever the exec rules say.
 */
static void put_exec(FILE *f, const struct bw_wctx *w, const struct bw_lobj *o,
		     const struct bw_ostate *st)
{
	unsigned left = st->need & ~st->allowed;
	const char *rule;
	char pbuf[160];
	size_t len;

	if (!o->path) {
		if (st->blocked)
			put_blocked(f, w, st, "allow exec memfd", "", "");
		else
			fputs("allow exec memfd\n", f);
		return;
	}
	if ((left & BW_ACC_R) && bw_learn_is_loader(o->path)) {
		fputs("# not written: allow exec ", f);
		put_word(f, o->path, "", true);
		fputs(" (the dynamic loader, run directly as in `ld.so PROGRAM`, runs any program "
		      "the sandbox can read whatever the exec rules say: run PROGRAM itself)\n",
		      f);
		left &= ~BW_ACC_R;
		if (!left)
			return;
	}
	if (!(left & BW_ACC_R) && mapped_by_loader(o))
		fputs("# mapped by the dynamic loader run directly: the program it ran (run that "
		      "program itself, and learn again) or one of its libraries\n",
		      f);
	rule = left & BW_ACC_R ? "allow exec " : "allow exec lib ";
	len = !(left & BW_ACC_R) && !(st->blocked & left) ? lib_dir_len(w, o->path) : 0;
	if (len) {
		if (strlen(lib_dir_done) == len && !strncmp(lib_dir_done, o->path, len)) {
			fputs("# in the library directory allowed above\n", f);
			return;
		}
		snprintf(lib_dir_done, sizeof(lib_dir_done), "%.*s", (int)len, o->path);
		fputs("# a library directory: the package's other libraries (plugins, extensions "
		      "mapped when first used) may be mapped too\n",
		      f);
		fputs(rule, f);
		put_word(f, lib_dir_done, "/**", false);
		fputc('\n', f);
		return;
	}
	if (st->blocked & left)
		put_blocked(f, w, st, rule, o->path, "");
	else
		put_rule_or_comment(
		    f, st, left, rule, o->path,
		    bw_learn_path_problem(o->path, BW_RULE_PATH_MAX, pbuf, sizeof(pbuf)));
}

/* An address as a rule spells it: a.b.c.d, or [v6] in brackets. */
static void put_addr(char *buf, size_t len, const uint8_t *a)
{
	if (bw_addr_is_mapped(a)) {
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
	} else {
		buf[0] = '[';
		inet_ntop(AF_INET6, a, buf + 1, (socklen_t)len - 2);
		strcat(buf, "]");
	}
}

/* A net rule: raw sockets, the network configuration, a unix name, or an address and a port. */
static void put_net(FILE *f, const struct bw_wctx *w, const struct bw_lobj *o,
		    const struct bw_ostate *st)
{
	char buf[INET6_ADDRSTRLEN + 16], rule[128], pbuf[160];
	const char *op = o->op == BW_NET_BIND ? "bind" : "connect";

	if (o->op == BW_NET_RAW || o->op == BW_NET_ADMIN) {
		const char *one = o->op == BW_NET_RAW ? "allow net raw" : "allow net admin";

		if (st->blocked)
			put_blocked(f, w, st, one, "", "");
		else
			fprintf(f, "%s\n", one);
		return;
	}
	if (o->proto == BW_NET_UNIX) {
		snprintf(rule, sizeof(rule), "allow net %s unix ", op);
		if (st->blocked)
			put_blocked(f, w, st, rule, o->path, "");
		else
			put_rule_or_comment(f, st, BW_ACC_R, rule, o->path,
					    bw_learn_unix_problem(o->path, pbuf, sizeof(pbuf)));
		return;
	}
	put_addr(buf, sizeof(buf), o->addr);
	snprintf(rule, sizeof(rule), "allow net %s %s %s:%u", op,
		 o->proto == BW_NET_UDP ? "udp" : "tcp", buf, o->port);
	if (st->blocked)
		put_blocked(f, w, st, rule, "", "");
	else
		fprintf(f, "%s\n", rule);
}

/* The objects of category `cat` that still need a rule, sorted by cmp, each after its
 * "# seen" line. */
/*
 * The objects of category cat that the profile must still allow (*n of
 * them), sorted by cmp; a section with none says so. NULL: no memory.
 */
static const struct bw_lobj **section_objects(FILE *f, const struct bw_wctx *w, enum bw_cat cat,
					      int (*cmp)(const void *, const void *), size_t *n)
{
	const struct bw_lobj **v = calloc(w->s->n + 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < w->s->n; i++)
		if (w->s->v[i].cat == cat && (w->st[i].need & ~w->st[i].allowed))
			v[(*n)++] = &w->s->v[i];
	qsort(v, *n, sizeof(*v), cmp);
	if (!*n)
		fputs("# (none)\n", f);
	return v;
}

static int write_section(FILE *f, const struct bw_wctx *w, enum bw_cat cat,
			 int (*cmp)(const void *, const void *),
			 void (*put)(FILE *, const struct bw_wctx *, const struct bw_lobj *,
				     const struct bw_ostate *))
{
	size_t n;
	const struct bw_lobj **v = section_objects(f, w, cat, cmp, &n);

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		put_seen(f, v[i]->count, &v[i]->progs);
		fputc('\n', f);
		put(f, w, v[i], &w->st[v[i] - w->s->v]);
	}
	free(v);
	return 0;
}

int bw_write_execs(FILE *f, const struct bw_wctx *w)
{
	lib_dir_done[0] = '\0';
	return write_section(f, w, BW_CAT_EXEC, obj_ptr_cmp_exec, put_exec);
}

/* The range the kernel picks a port 0 bind's port from; Linux's default when unread. */
static void ephemeral_range(const struct bw_wctx *w, unsigned *lo, unsigned *hi)
{
	char buf[64];
	long n;

	*lo = 32768;
	*hi = 60999;
	if (!w->fs || !w->fs->read)
		return;
	n = w->fs->read(w->fs->ctx, "/proc/sys/net/ipv4/ip_local_port_range", buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%u %u", lo, hi) != 2 || *lo < 1 || *lo > *hi || *hi > 65535) {
		*lo = 32768;
		*hi = 60999;
	}
}

static bool addr_is_loopback(const uint8_t *a)
{
	static const uint8_t v6[16] = {[15] = 1};

	return bw_addr_is_mapped(a) ? a[12] == 127 : !memcmp(a, v6, 16);
}

/*
 * A workload that binds port 0 on a loopback or wildcard address listens on
 * a port the kernel picks from its ephemeral range, another at every run; a
 * connect of the same protocol to a loopback address and a port of that
 * range is taken to reach that listener of its own (a test suite's local
 * server, a worker pool's control socket). Such connects are one rule per
 * protocol and address, over the range: the next run's port is another.
 */
struct own_ports {
	unsigned lo, hi;
	bool listens[2]; /* [proto == BW_NET_UDP] */
};

static bool own_connect(const struct own_ports *own, const struct bw_lobj *o,
			const struct bw_ostate *st)
{
	return o->op == BW_NET_CONNECT && (o->proto == BW_NET_TCP || o->proto == BW_NET_UDP) &&
	       own->listens[o->proto == BW_NET_UDP] && addr_is_loopback(o->addr) &&
	       o->port >= own->lo && o->port <= own->hi && !st->blocked;
}

/* v[0..n) are own connects of one protocol and address, sorted by port. */
static int put_own_connects(FILE *f, const struct own_ports *own, const struct bw_lobj **v,
			    size_t n)
{
	struct bw_progs progs = {0};
	unsigned long long count = 0;
	char addr[INET6_ADDRSTRLEN + 4];
	const char *proto = v[0]->proto == BW_NET_UDP ? "udp" : "tcp";
	size_t i;

	for (i = 0; i < n; i++) {
		count += v[i]->count;
		if (bw_progs_merge(&progs, &v[i]->progs)) {
			bw_progs_free(&progs);
			return -ENOMEM;
		}
	}
	put_addr(addr, sizeof(addr), v[0]->addr);
	put_seen(f, count, &progs);
	fprintf(f, "; port%s ", n == 1 ? "" : "s");
	for (i = 0; i < n && i < 4; i++)
		fprintf(f, "%s%u", i ? ", " : "", v[i]->port);
	if (n > 4)
		fprintf(f, " and %zu more", n - 4);
	fprintf(f,
		" on the loopback, where it bound %s port 0 itself: a listener of its own, on a "
		"port the kernel picks anew at every run from its ephemeral range\n"
		"allow net connect %s %s:%u-%u\n",
		proto, proto, addr, own->lo, own->hi);
	bw_progs_free(&progs);
	return 0;
}

int bw_write_net(FILE *f, const struct bw_wctx *w)
{
	struct own_ports own = {0};
	size_t n, i, j;
	int ret = 0;
	const struct bw_lobj **v = section_objects(f, w, BW_CAT_NET, obj_ptr_cmp_net, &n);

	if (!v)
		return -ENOMEM;
	ephemeral_range(w, &own.lo, &own.hi);
	/* Every port 0 bind counts, the ones already allowed too. */
	for (i = 0; i < w->s->n; i++) {
		const struct bw_lobj *o = &w->s->v[i];

		if (o->cat == BW_CAT_NET && !(w->flags & BW_LEARN_NO_VOLATILE) &&
		    o->op == BW_NET_BIND && (o->proto == BW_NET_TCP || o->proto == BW_NET_UDP) &&
		    !o->port && (addr_is_loopback(o->addr) || bw_addr_is_any(o->addr)))
			own.listens[o->proto == BW_NET_UDP] = true;
	}
	for (i = 0; i < n && !ret; i = j) {
		const struct bw_ostate *st = &w->st[v[i] - w->s->v];

		j = i + 1;
		if (own_connect(&own, v[i], st)) {
			/* Sorted by op, protocol, address, port: one protocol and address are a
			 * run. */
			while (j < n && own_connect(&own, v[j], &w->st[v[j] - w->s->v]) &&
			       v[j]->proto == v[i]->proto && !memcmp(v[j]->addr, v[i]->addr, 16))
				j++;
			ret = put_own_connects(f, &own, v + i, j - i);
			continue;
		}
		put_seen(f, v[i]->count, &v[i]->progs);
		fputc('\n', f);
		put_net(f, w, v[i], st);
	}
	free(v);
	return ret;
}

static int obj_ptr_cmp_view(const void *a, const void *b)
{
	return (*(const struct bw_lobj *const *)a)->op - (*(const struct bw_lobj *const *)b)->op;
}

/* `allow mount`, `allow chroot`, `allow userns`. */
static void put_view(FILE *f, const struct bw_wctx *w, const struct bw_lobj *o,
		     const struct bw_ostate *st)
{
	char rule[32];

	snprintf(rule, sizeof(rule), "allow %s", bw_ns_name((unsigned)o->op));
	if (st->blocked)
		put_blocked(f, w, st, rule, "", "");
	else
		fprintf(f, "%s\n", rule);
}

int bw_write_view(FILE *f, const struct bw_wctx *w)
{
	for (size_t i = 0; i < w->s->n; i++)
		if (w->s->v[i].cat == BW_CAT_NS && (w->st[i].need & ~w->st[i].allowed)) {
			fputs(
			    "\n# mounts, chroot, user namespaces, moves between its own cgroups\n",
			    f);
			return write_section(f, w, BW_CAT_NS, obj_ptr_cmp_view, put_view);
		}
	return 0;
}
