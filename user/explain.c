// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which rule decides an object, and why: the answer is read from the
 * compiled entries (the path tries' filled-in slots, the net ranges, the
 * policy's one-object verdicts) that the kernel gets, so a rule that loses
 * to a more specific one, or a deny that wins at equal specificity, shows
 * as the kernel will decide it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "net.h"
#include "path.h"

/* Line `line` of file, without its surrounding blanks, or "" if unreadable. */
static void source_line(const char *file, int line, char *buf, size_t len)
{
	FILE *f = file ? fopen(file, "r") : NULL;
	char l[512];
	int n = 0;

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(l, sizeof(l), f)) {
		size_t e = strcspn(l, "\r\n");
		bool whole = l[e] != '\0' || feof(f);

		l[e] = '\0';
		if (++n == line) {
			char *s = l + strspn(l, " \t");

			e = strlen(s);
			while (e && (s[e - 1] == ' ' || s[e - 1] == '\t'))
				s[--e] = '\0';
			snprintf(buf, len, "%s", s);
			break;
		}
		/* A line longer than l: skip its rest, it is one line. */
		while (!whole && fgets(l, sizeof(l), f)) {
			whole = strchr(l, '\n') != NULL;
		}
	}
	fclose(f);
}

static void by_origin(FILE *out, const struct bw_origin *o)
{
	char text[256];

	source_line(o->file, o->line, text, sizeof(text));
	fprintf(out, "%s:%d%s%s", o->file, o->line, text[0] ? ": " : "", text);
}

/*
 * One access: the deciding rule, else the category's default (cat), else
 * (cat < 0) what no rule means for objects without a default: refused.
 */
static void decided(FILE *out, const struct bw_profile *p, const char *what, __u8 verdict,
		    __u16 rule, int cat)
{
	if (verdict != BW_V_NONE && rule && rule <= p->nrules) {
		fprintf(out, "  %-10s %-5s by ", what, bw_verdict_name(verdict));
		by_origin(out, &p->rules[rule - 1].origin);
		fputc('\n', out);
		return;
	}
	if (cat < 0) {
		fprintf(out, "  %-10s deny  no rule: refused unless a rule allows it\n", what);
		return;
	}
	fprintf(out, "  %-10s %-5s by default", what, bw_verdict_name(p->defaults[cat]));
	if (p->default_origin[cat].line > 0) {
		fputs(" (", out);
		by_origin(out, &p->default_origin[cat]);
		fputs(")\n", out);
	} else {
		fputs(" (no `default` line: deny)\n", out);
	}
}

static int bad(char *why, size_t len, const char *fmt, const char *obj)
{
	snprintf(why, len, fmt, obj);
	return -EINVAL;
}

static int explain_path(const struct bw_profile *p, const struct bw_compiled *c, const char *obj,
			FILE *out, char *why, size_t whylen)
{
	const struct bw_file_entry *f, *x;
	struct bw_path np;

	if (bw_path_parse(obj, strlen(obj), false, BW_KEY_PATH_MAX - 1, &np) != BW_PATH_OK)
		return bad(why, whylen,
			   "'%s': want an absolute path without '.', '..' or globs, at most the "
			   "kernel's key length",
			   obj);
	f = bw_compiled_lookup(c, np.path);
	x = bw_entries_find(c->execs, c->nexecs, np.path);
	fprintf(out, "%s in profile %s (%s):\n", np.path, p->name, bw_mode_name(p->mode));
	decided(out, p, "file r", f ? f->val.verdict_r : 0, f ? f->val.rule_r : 0, BW_CAT_FILE);
	decided(out, p, "file w", f ? f->val.verdict_w : 0, f ? f->val.rule_w : 0, BW_CAT_FILE);
	/* Exec keys hold running in the r slot and mapping in the w slot. */
	decided(out, p, "exec", x ? x->val.verdict_r : 0, x ? x->val.rule_r : 0, BW_CAT_EXEC);
	decided(out, p, "exec lib", x ? x->val.verdict_w : 0, x ? x->val.rule_w : 0, BW_CAT_EXEC);
	free(np.path);
	return 0;
}

/* "net connect|bind tcp|udp ADDR:PORT" or "net connect|bind unix NAME". */
static int explain_sock(const struct bw_profile *p, const struct bw_compiled *c, const char *obj,
			const char *op, const char *proto, const char *ep, FILE *out, char *why,
			size_t whylen)
{
	bool bind = !strcmp(op, "bind");
	__u8 nop = bind ? BW_NOP_BIND : BW_NOP_CONNECT;

	if (!bind && strcmp(op, "connect"))
		return bad(why, whylen, "'%s': want net connect|bind, net raw or net admin", obj);
	if (!strcmp(proto, "unix")) {
		char name[sizeof(c->unixes[0].key.name)];
		struct bw_path np;

		if (ep[0] == '@' && ep[1] && strlen(ep) < sizeof(name)) {
			snprintf(name, sizeof(name), "%s", ep);
		} else if (bw_path_parse(ep, strlen(ep), false, BW_UNIX_PATH_MAX, &np) ==
			   BW_PATH_OK) {
			snprintf(name, sizeof(name), "%s", np.path);
			free(np.path);
		} else {
			return bad(why, whylen,
				   "'%s': want an absolute socket path or @name, at most 107 bytes",
				   obj);
		}
		fprintf(out, "net %s unix %s in profile %s (%s):\n", op, name, p->name,
			bw_mode_name(p->mode));
		{
			const struct bw_unix_entry *e = bw_unix_lookup(c, nop, name);

			decided(out, p, op, e ? e->val.verdict : 0, e ? e->val.rule : 0,
				BW_CAT_NET);
		}
		return 0;
	}
	if (strcmp(proto, "tcp") && strcmp(proto, "udp"))
		return bad(why, whylen, "'%s': want the protocol tcp, udp or unix", obj);
	{
		struct bw_net_rule r = {};
		struct bw_net_err err;
		const struct bw_port_range *pr;
		uint8_t a[16] = {0};
		char shown[INET6_ADDRSTRLEN];

		if (bw_net_parse_endpoint(ep, strlen(ep), &r, &err) || r.localhost ||
		    r.prefixlen != (r.family == 4 ? 32 : 128) || r.port_lo != r.port_hi)
			return bad(why, whylen,
				   "'%s': want one address and one port, as 10.0.0.1:443 or "
				   "[::1]:8080",
				   obj);
		/* The kernel's keys hold IPv4 as IPv4-mapped IPv6. */
		if (r.family == 4) {
			a[10] = a[11] = 0xff;
			memcpy(a + 12, r.addr, 4);
			inet_ntop(AF_INET, r.addr, shown, sizeof(shown));
		} else {
			memcpy(a, r.addr, 16);
			inet_ntop(AF_INET6, r.addr, shown, sizeof(shown));
		}
		pr = bw_net_lookup(c, nop, proto[0] == 't' ? IPPROTO_TCP : IPPROTO_UDP, a,
				   r.port_lo);
		fprintf(out, "net %s %s %s%s%s:%u in profile %s (%s):\n", op, proto,
			r.family == 6 ? "[" : "", shown, r.family == 6 ? "]" : "", r.port_lo,
			p->name, bw_mode_name(p->mode));
		decided(out, p, op, pr ? pr->verdict : 0, pr ? pr->rule : 0, BW_CAT_NET);
	}
	return 0;
}

int bw_explain(const struct bw_profile *p, const struct bw_compiled *c, const char *obj, FILE *out,
	       char *why, size_t whylen)
{
	char w[4][512], extra;
	int n;

	if (obj[0] == '/')
		return explain_path(p, c, obj, out, why, whylen);
	if (strlen(obj) >= sizeof(w[0]))
		return bad(why, whylen, "'%.64s...': too long", obj);
	n = sscanf(obj, "%511s %511s %511s %511s %c", w[0], w[1], w[2], w[3], &extra);
	if (n == 1) {
		for (unsigned what = 0; what < BW_NS_COUNT; what++) {
			if (!strcmp(w[0], bw_ns_name(what))) {
				fprintf(out, "%s in profile %s (%s):\n", w[0], p->name,
					bw_mode_name(p->mode));
				decided(out, p, w[0], c->policy.ns[what],
					bw_ns_rule(&c->policy, what), -1);
				return 0;
			}
		}
	}
	if (n == 2 && !strcmp(w[0], "exec") && !strcmp(w[1], "memfd")) {
		fprintf(out, "exec memfd in profile %s (%s):\n", p->name, bw_mode_name(p->mode));
		decided(out, p, "exec",
			c->memfd_denied	       ? BW_V_DENY
			: c->policy.exec_memfd ? BW_V_ALLOW
					       : BW_V_NONE,
			c->policy.exec_memfd_rule, BW_CAT_EXEC);
		return 0;
	}
	if (n == 2 && !strcmp(w[0], "net") && !strcmp(w[1], "raw")) {
		fprintf(out, "net raw in profile %s (%s):\n", p->name, bw_mode_name(p->mode));
		decided(out, p, "raw", c->policy.net_raw, c->policy.net_raw_rule, BW_CAT_NET);
		return 0;
	}
	if (n == 2 && !strcmp(w[0], "net") && !strcmp(w[1], "admin")) {
		fprintf(out, "net admin in profile %s (%s):\n", p->name, bw_mode_name(p->mode));
		decided(out, p, "admin", c->policy.net_admin, c->policy.net_admin_rule, -1);
		return 0;
	}
	if (n == 4 && !strcmp(w[0], "net"))
		return explain_sock(p, c, obj, w[1], w[2], w[3], out, why, whylen);
	return bad(why, whylen,
		   "'%s': want an absolute path, exec memfd, net connect|bind tcp|udp|unix "
		   "ENDPOINT, net raw, net admin, mount, chroot, userns or cgroup",
		   obj);
}
