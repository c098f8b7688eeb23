// SPDX-License-Identifier: GPL-2.0-only
/* Building learned sets, writing them and reading the profile back: what the learn suites share. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn_helpers.h"

/* ---- building sets ---- */

void add_file(struct bw_learn_set *s, unsigned acc, const char *path, const char *prog)
{
	struct bw_learned l = {.cat = BW_CAT_FILE, .access = acc, .path = path, .program = prog};

	ck_assert_int_eq(bw_learn_add(s, &l), 0);
}

void add_exec(struct bw_learn_set *s, const char *path, const char *prog)
{
	struct bw_learned l = {.cat = BW_CAT_EXEC, .path = path, .program = prog};

	ck_assert_int_eq(bw_learn_add(s, &l), 0);
}

void add_lib(struct bw_learn_set *s, const char *path, const char *prog)
{
	struct bw_learned l = {
	    .cat = BW_CAT_EXEC, .access = BW_ACC_M, .path = path, .program = prog};

	ck_assert_int_eq(bw_learn_add(s, &l), 0);
}

/* An IPv4 address as the agent gives it: ::ffff:a.b.c.d. */
void v4(uint8_t *addr, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(addr, 0, 16);
	addr[10] = addr[11] = 0xff;
	addr[12] = a;
	addr[13] = b;
	addr[14] = c;
	addr[15] = d;
}

void v6(uint8_t *addr, uint16_t first, uint8_t last)
{
	memset(addr, 0, 16);
	addr[0] = first >> 8;
	addr[1] = first & 0xff;
	addr[15] = last;
}

void add_inet(struct bw_learn_set *s, int op, int proto, const uint8_t *addr, uint16_t port,
	      const char *prog)
{
	struct bw_learned l = {
	    .cat = BW_CAT_NET, .net_op = op, .proto = proto, .port = port, .program = prog};

	memcpy(l.addr, addr, 16);
	l.family = addr[10] == 0xff && addr[11] == 0xff && !addr[0] ? 4 : 6;
	ck_assert_int_eq(bw_learn_add(s, &l), 0);
}

void add_unix(struct bw_learn_set *s, int op, const char *name, const char *prog)
{
	struct bw_learned l = {.cat = BW_CAT_NET,
			       .net_op = op,
			       .proto = BW_NET_UNIX,
			       .unix_name = name,
			       .program = prog};

	ck_assert_int_eq(bw_learn_add(s, &l), 0);
}

/* ---- writing and reading back ---- */

char *write_text(const struct bw_learn_set *s, const struct bw_learn_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bw_learn_write_profile(s, o, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

char *diags_text(const struct bw_diags *d)
{
	char *t = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&t, &n);

	bw_diags_print(f, d);
	fclose(f);
	return t;
}

/* Parse (includes from libdir) with no diagnostic at all, and compile. */
void load_clean(struct loaded *l, const char *text, const char *libdir)
{
	struct bw_diags d = {0};
	char err[512] = "";
	int ret;

	l->text = (char *)text;
	ret = bw_profile_parse_string("learned.profile", text, strlen(text), libdir, &l->p, &d);
	ck_assert_msg(ret == 0 && d.n == 0, "ret %d, diagnostics:\n%s\nprofile:\n%s", ret,
		      diags_text(&d), text);
	bw_diags_free(&d);
	ret = bw_compile(l->p, &l->c, err, sizeof(err));
	ck_assert_msg(ret == 0, "compile: %d %s\n%s", ret, err, text);
}

void loaded_free(struct loaded *l)
{
	bw_compiled_free(&l->c);
	bw_profile_free(l->p);
	free(l->text);
}

struct loaded gen_load(const struct bw_learn_set *s, const struct bw_learn_opts *o)
{
	struct loaded l = {0};

	load_clean(&l, write_text(s, o), o ? o->libdir : NULL);
	return l;
}

bool file_ok(const struct loaded *l, const char *path, unsigned acc)
{
	const struct bw_file_entry *e = bw_compiled_lookup(&l->c, path);

	if ((acc & R) && (!e || e->val.verdict_r != BW_V_ALLOW))
		return false;
	if ((acc & W) && (!e || e->val.verdict_w != BW_V_ALLOW))
		return false;
	return true;
}

bool exec_ok(const struct loaded *l, const char *path)
{
	const struct bw_file_entry *e = bw_entries_lookup(l->c.execs, l->c.nexecs, path);

	return e && e->val.verdict_r == BW_V_ALLOW;
}

bool lib_ok(const struct loaded *l, const char *path)
{
	const struct bw_file_entry *e = bw_entries_lookup(l->c.execs, l->c.nexecs, path);

	return e && e->val.verdict_w == BW_V_ALLOW;
}

bool inet_ok(const struct loaded *l, int op, int proto, const uint8_t *addr, uint16_t port)
{
	const struct bw_port_range *r =
	    bw_net_lookup(&l->c, op == BW_NET_BIND ? BW_NOP_BIND : BW_NOP_CONNECT,
			  proto == BW_NET_UDP ? 17 : 6, addr, port);

	return r && r->verdict == BW_V_ALLOW;
}

bool unix_ok(const struct loaded *l, int op, const char *name)
{
	for (size_t i = 0; i < l->c.nunixes; i++)
		if (l->c.unixes[i].key.op == (op == BW_NET_BIND ? BW_NOP_BIND : BW_NOP_CONNECT) &&
		    !strcmp(l->c.unixes[i].key.name, name))
			return l->c.unixes[i].val.verdict == BW_V_ALLOW;
	return false;
}

size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Does a rule line (not a comment) hold `needle`? */
bool rule_with(const char *text, const char *needle)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (!strncmp(p, "allow ", 6) && memmem(p, n, needle, strlen(needle)))
			return true;
	}
	return false;
}

/* A line of the text equal to `line`. */
bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/* The line just before `line`. */
char *line_before(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++) {
		if (p > text && p[-1] == '\n' && (p[n] == '\n' || !p[n])) {
			const char *e = p - 1, *b = e;

			while (b > text && b[-1] != '\n')
				b--;
			return strndup(b, (size_t)(e - b));
		}
	}
	return NULL;
}

const char *acc_name(unsigned acc)
{
	return acc == RW ? "rw" : acc == W ? "w" : "r";
}

/* An independent statement of the rules: no rule on the whole tree, no subtree on a system
 * directory. */
bool sys_dir(const char *d)
{
	static const char *const tops[] = {"/usr",  "/etc", "/bin", "/sbin", "/lib", "/lib64",
					   "/boot", "/var", "/opt", "/root", "/home"};
	const char *second;

	if (!strcmp(d, "/") || !strchr(d + 1, '/'))
		return true;
	second = strchr(d + 1, '/');
	if (strchr(second + 1, '/'))
		return false;
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		if (strlen(tops[i]) == (size_t)(second - d) && !memcmp(d, tops[i], second - d))
			return true;
	return false;
}

/* A component of d that names a well-known directory of secrets, or a holder of them. */
static bool secret_dir(const char *d)
{
	static const char *const names[] = {
	    "/.ssh",	"/.gnupg", "/.aws", "/.azure",	 "/.kube",	     "/.docker", "/private",
	    "/secrets", "/gcloud", "/pki",  "/keyrings", "/.password-store", "/.config", "/.local"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);
		/* .config and .local hold secrets among other things: only they themselves. */
		bool holder = !strcmp(names[i], "/.config") || !strcmp(names[i], "/.local");

		for (const char *p = d; (p = strstr(p, names[i])); p++)
			if (holder ? !p[n] : (p[n] == '/' || !p[n]))
				return true;
	}
	return false;
}

void check_invariants(const struct loaded *l)
{
	static const char *const os[] = {"/usr/",   "/etc/",  "/bin/",	"/sbin/", "/lib/",
					 "/lib64/", "/boot/", "/proc/", "/sys/",  "/dev/"};

	for (size_t i = 0; i < l->p->nrules; i++) {
		const struct bw_rule *r = &l->p->rules[i];

		if (r->cat != BW_CAT_FILE || !r->file.subtree ||
		    strstr(r->origin.file, "abstractions"))
			continue;
		ck_assert_msg(strcmp(r->file.path, "/"), "/** written:\n%s", l->text);
		ck_assert_msg(!sys_dir(r->file.path), "subtree on system dir %s:\n%s", r->file.path,
			      l->text);
		for (size_t k = 0; (r->file.access & W) && k < sizeof(os) / sizeof(os[0]); k++)
			ck_assert_msg(strncmp(r->file.path, os[k], strlen(os[k])),
				      "w subtree %s in the system's tree:\n%s", r->file.path,
				      l->text);
		ck_assert_msg(!secret_dir(r->file.path), "subtree on secrets %s:\n%s", r->file.path,
			      l->text);
	}
}

struct bw_learn_set *files_in(const char *dir, int n, unsigned acc)
{
	struct bw_learn_set *s = bw_learn_new();
	char p[256];

	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/file%02d.txt", dir, i);
		add_file(s, acc, p, "/usr/bin/python3.11");
	}
	return s;
}
