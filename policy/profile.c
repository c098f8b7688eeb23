// SPDX-License-Identifier: GPL-2.0-only
/* Entry points of the profile library: load a file or a string, free. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "parser.h"

static struct bw_profile *profile_new(const char *name)
{
	struct bw_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->path = strdup(name);
	if (!p->path) {
		free(p);
		return NULL;
	}
	for (int c = 0; c < BW_CAT_COUNT; c++)
		p->defaults[c] = BW_V_DENY;
	p->mode = BW_MODE_ENFORCE;
	p->on_deny = BW_ON_DENY_LOG;
	return p;
}

void bw_profile_free(struct bw_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		struct bw_rule *r = &p->rules[i];
		free(r->name);
		if (r->cat == BW_CAT_NET)
			free(r->net.unix_path);
		else if (r->cat != BW_CAT_NS)
			free(r->file.path);
	}
	free(p->rules);
	for (size_t i = 0; i < p->nmatches; i++) {
		free(p->matches[i].cgroup);
		free(p->matches[i].namespace_);
		free(p->matches[i].pod);
		free(p->matches[i].container);
	}
	free(p->matches);
	for (size_t i = 0; i < p->nincludes; i++)
		free(p->includes[i]);
	free(p->includes);
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	free(p->name);
	free(p->path);
	free(p);
}

/*
 * Parse `buf` (taken over and freed) as the top-level file `name`. `id` is
 * the file's identity, or NULL for a string.
 */
static int parse_top(const char *name, char *buf, size_t len, const struct bw_file_id *id,
		     const char *libdir, struct bw_profile **out, struct bw_diags *diags)
{
	struct bw_parser ps = {.diags = diags, .libdir = libdir};
	size_t errors_before = diags->nerrors;
	const char *stored;
	int ret;

	ps.p = profile_new(name);
	if (!ps.p) {
		free(buf);
		return -ENOMEM;
	}
	stored = bw_add_file(&ps, name);
	if (stored) {
		ps.chain[0].name = stored;
		ps.chain[0].has_id = id != NULL;
		if (id) {
			ps.chain[0].id = *id;
			bw_mark_seen(&ps, id);
		}
		ps.depth = 1;
		if (len > BW_PROFILE_FILE_MAX)
			bw_report(&ps, BW_SEV_ERROR, stored, 1, 1, "profile is larger than %u MiB",
				  BW_PROFILE_FILE_MAX >> 20);
		else
			bw_parse_buffer(&ps, stored, buf, len);
		if (len <= BW_PROFILE_FILE_MAX)
			bw_validate(&ps);
	}
	free(buf);
	free(ps.seen);

	if (ps.err)
		ret = ps.err;
	else if (diags->nerrors > errors_before)
		ret = -EINVAL;
	else
		ret = 0;
	if (ret) {
		bw_profile_free(ps.p);
		return ret;
	}
	*out = ps.p;
	return 0;
}

int bw_profile_parse_string(const char *name, const char *text, size_t len, const char *libdir,
			    struct bw_profile **out, struct bw_diags *diags)
{
	char *buf = NULL;

	if (!name || (!text && len) || !out || !diags)
		return -EFAULT;
	*out = NULL;
	/* The lexer decodes strings in place: work on a copy. */
	if (len <= BW_PROFILE_FILE_MAX) {
		buf = malloc(len + 1);
		if (!buf)
			return -ENOMEM;
		if (len)
			memcpy(buf, text, len);
	}
	return parse_top(name, buf, len, NULL, libdir, out, diags);
}

int bw_profile_load(const char *path, const char *libdir, struct bw_profile **out,
		    struct bw_diags *diags)
{
	struct bw_file_id id;
	struct stat st;
	size_t len;
	char *buf;
	int fd, err;

	if (!path || !out || !diags)
		return -EFAULT;
	*out = NULL;
	/* The top-level file may be a pipe (`check /dev/stdin`): block if so. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	err = bw_read_fd(fd, &buf, &len);
	close(fd);
	if (err == -EFBIG) {
		/* Over the limit is the profile's fault: say so as a diagnostic. */
		buf = NULL;
		len = (size_t)BW_PROFILE_FILE_MAX + 1;
	} else if (err) {
		return err;
	}
	return parse_top(path, buf, len, &id, libdir, out, diags);
}

static const char *const mode_names[] = {
    [BW_MODE_ENFORCE] = "enforce",
    [BW_MODE_AUDIT] = "audit",
    [BW_MODE_LEARN] = "learn",
};

const char *bw_mode_name(enum bw_mode m)
{
	return (unsigned)m < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[m] : "unknown";
}

int bw_mode_parse(const char *s, size_t len, enum bw_mode *out)
{
	for (unsigned i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (strlen(mode_names[i]) == len && !memcmp(s, mode_names[i], len)) {
			*out = (enum bw_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *bw_verdict_name(enum bw_verdict v)
{
	return v == BW_V_ALLOW ? "allow" : "deny";
}

static const char *const ns_names[BW_NS_COUNT] = {
    [BW_NS_MOUNT] = "mount",
    [BW_NS_CHROOT] = "chroot",
    [BW_NS_USERNS] = "userns",
    [BW_NS_CGROUP] = "cgroup",
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

#define FNV_NUM(h, v)                                                                              \
	do {                                                                                       \
		uint64_t v_ = (uint64_t)(v);                                                       \
		h = fnv(h, &v_, sizeof(v_));                                                       \
	} while (0)
#define FNV_STR(h, s) h = fnv(h, (s) ? (s) : "", (s) ? strlen(s) + 1 : 1)

uint64_t bw_rule_id(const struct bw_rule *r)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	/* A value no category has leads, so that no name hashes like a rule's content. */
	if (r->name) {
		FNV_NUM(h, BW_CAT_NS + 1);
		FNV_STR(h, r->name);
		return h;
	}
	FNV_NUM(h, r->cat);
	FNV_NUM(h, r->verdict);
	switch (r->cat) {
	case BW_CAT_FILE:
	case BW_CAT_EXEC:
		FNV_NUM(h, r->file.access);
		FNV_NUM(h, r->file.subtree);
		/* Hashed only when set: the ids of every other rule stay as they were. */
		if (r->file.name_prefix)
			FNV_NUM(h, r->file.name_prefix);
		FNV_NUM(h, r->file.memfd);
		FNV_STR(h, r->file.path);
		break;
	case BW_CAT_NET:
		FNV_NUM(h, r->net.op);
		FNV_NUM(h, r->net.proto);
		FNV_NUM(h, r->net.family);
		h = fnv(h, r->net.addr, sizeof(r->net.addr));
		FNV_NUM(h, r->net.prefixlen);
		FNV_NUM(h, r->net.localhost);
		FNV_NUM(h, r->net.port_lo);
		FNV_NUM(h, r->net.port_hi);
		FNV_STR(h, r->net.unix_path);
		FNV_NUM(h, r->net.unix_abstract);
		break;
	default:
		FNV_NUM(h, r->ns.what);
		break;
	}
	return h;
}

uint64_t bw_profile_digest(const struct bw_profile *p)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	FNV_STR(h, p->name);
	FNV_NUM(h, p->nrules);
	for (i = 0; i < p->nrules; i++) {
		FNV_NUM(h, bw_rule_id(&p->rules[i]));
		FNV_STR(h, p->rules[i].origin.file);
		FNV_NUM(h, p->rules[i].origin.line);
	}
	return h;
}

const char *bw_ns_name(unsigned what)
{
	return what < BW_NS_COUNT ? ns_names[what] : NULL;
}

static void put(char **at, char *end, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*at, end - *at, fmt, ap);
	va_end(ap);
	*at += n > 0 ? (n < end - *at ? n : end - *at - 1) : 0;
}

/* A value as the lexer reads it back: bare if it can be, else quoted with \" and \\. */
static void put_value(char **at, char *end, const char *v)
{
	if (v[0] && v[0] != '#' && !strpbrk(v, " \t\r\v\f\"\\")) {
		put(at, end, "%s", v);
		return;
	}
	put(at, end, "\"");
	for (; *v; v++)
		put(at, end, *v == '"' || *v == '\\' ? "\\%c" : "%c", *v);
	put(at, end, "\"");
}

static void put_path(char **at, char *end, const struct bw_file_rule *f)
{
	char p[BW_RULE_PATH_MAX + 8]; /* the path, its slash-stars or star */

	if (f->subtree)
		snprintf(p, sizeof(p), "%s/**", strcmp(f->path, "/") ? f->path : "");
	else
		snprintf(p, sizeof(p), "%s%s", f->path, f->name_prefix ? "*" : "");
	put_value(at, end, p);
}

static void put_endpoint(char **at, char *end, const struct bw_net_rule *n)
{
	char a[INET6_ADDRSTRLEN];

	if (n->localhost) {
		put(at, end, "localhost");
	} else if (!n->family) {
		put(at, end, "*");
	} else if (n->family == 4) {
		inet_ntop(AF_INET, n->addr, a, sizeof(a));
		put(at, end, n->prefixlen < 32 ? "%s/%d" : "%s", a, n->prefixlen);
	} else {
		inet_ntop(AF_INET6, n->addr, a, sizeof(a));
		put(at, end, n->prefixlen < 128 ? "[%s/%d]" : "[%s]", a, n->prefixlen);
	}
	if (n->port_lo == 0 && n->port_hi == 65535)
		put(at, end, ":*");
	else if (n->port_lo == n->port_hi)
		put(at, end, ":%u", n->port_lo);
	else
		put(at, end, ":%u-%u", n->port_lo, n->port_hi);
}

int bw_rule_format(const struct bw_rule *r, bool with_name, char *buf, size_t len)
{
	static const char *const perms[] = {"", "r", "w", "rw"};
	static const char *const ops[] = {"", "connect", "bind", "raw", "admin"};
	static const char *const protos[] = {"", "tcp", "udp", "unix"};
	char *at = buf, *end = buf + len;
	size_t n;

	if (!buf || !len)
		return -ENOSPC;
	buf[0] = '\0';
	put(&at, end, "%s ", bw_verdict_name(r->verdict));
	switch (r->cat) {
	case BW_CAT_FILE:
		put(&at, end, "file %s ", perms[r->file.access & 3]);
		put_path(&at, end, &r->file);
		break;
	case BW_CAT_EXEC:
		if (r->file.memfd) {
			put(&at, end, "exec memfd");
			break;
		}
		put(&at, end, r->file.access == BW_ACC_M ? "exec lib " : "exec ");
		put_path(&at, end, &r->file);
		break;
	case BW_CAT_NET:
		put(&at, end, "net %s", ops[(unsigned)r->net.op < 5 ? r->net.op : 0]);
		if (r->net.op == BW_NET_RAW || r->net.op == BW_NET_ADMIN)
			break;
		put(&at, end, " %s ", protos[(unsigned)r->net.proto < 4 ? r->net.proto : 0]);
		if (r->net.proto != BW_NET_UNIX) {
			put_endpoint(&at, end, &r->net);
		} else if (r->net.unix_abstract) {
			char a[BW_UNIX_PATH_MAX + 2];

			snprintf(a, sizeof(a), "@%s", r->net.unix_path);
			put_value(&at, end, a);
		} else {
			put_value(&at, end, r->net.unix_path);
		}
		break;
	default:
		put(&at, end, "%s", bw_ns_name(r->ns.what) ? bw_ns_name(r->ns.what) : "?");
		break;
	}
	if (with_name && r->name)
		put(&at, end, " as %s", r->name);
	n = (size_t)(at - buf);
	return n + 1 < len ? (int)n : -ENOSPC;
}

int bw_match_format(const struct bw_match *m, char *buf, size_t len)
{
	int n = snprintf(buf, len, "match%s%s%s%s%s%s%s%s", m->cgroup ? " cgroup=" : "",
			 m->cgroup ? m->cgroup : "", m->namespace_ ? " namespace=" : "",
			 m->namespace_ ? m->namespace_ : "", m->pod ? " pod=" : "",
			 m->pod ? m->pod : "", m->container ? " container=" : "",
			 m->container ? m->container : "");

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}
