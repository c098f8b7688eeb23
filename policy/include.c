// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profile files and `include`. A name is looked up next to the including
 * file, then in the profile library, each time as written and with
 * ".profile" appended. Files are known by device and inode: one already on
 * the include chain is a cycle (an error), one read before by another route
 * (a diamond) is not read again. Includes open only regular files and never
 * block, whatever a name points at.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "parser.h"

int bw_read_fd(int fd, char **bufp, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	struct stat st;
	char *buf;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (unsigned long long)st.st_size <= BW_PROFILE_FILE_MAX)
		cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > BW_PROFILE_FILE_MAX) {
				free(buf);
				return -EFBIG;
			}
			size_t ncap =
			    cap * 2 > BW_PROFILE_FILE_MAX + 1 ? BW_PROFILE_FILE_MAX + 1 : cap * 2;
			char *nbuf = realloc(buf, ncap);
			if (!nbuf) {
				free(buf);
				return -ENOMEM;
			}
			buf = nbuf;
			cap = ncap;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = -errno;
			free(buf);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > BW_PROFILE_FILE_MAX) {
		free(buf);
		return -EFBIG;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

const char *bw_add_file(struct bw_parser *ps, const char *name)
{
	struct bw_profile *p = ps->p;
	char *copy;

	if (p->nfiles == ps->files_cap) {
		size_t cap = ps->files_cap ? ps->files_cap * 2 : 8;
		char **v = realloc(p->files, cap * sizeof(*v));
		if (!v) {
			ps->err = -ENOMEM;
			return NULL;
		}
		p->files = v;
		ps->files_cap = cap;
	}
	copy = strdup(name);
	if (!copy) {
		ps->err = -ENOMEM;
		return NULL;
	}
	p->files[p->nfiles++] = copy;
	return copy;
}

static bool same_file(const struct bw_file_id *a, const struct bw_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

bool bw_mark_seen(struct bw_parser *ps, const struct bw_file_id *id)
{
	for (size_t i = 0; i < ps->nseen; i++) {
		if (same_file(&ps->seen[i], id))
			return false;
	}
	if (ps->nseen == ps->seen_cap) {
		size_t cap = ps->seen_cap ? ps->seen_cap * 2 : 8;
		struct bw_file_id *v = realloc(ps->seen, cap * sizeof(*v));
		if (!v) {
			ps->err = -ENOMEM;
			return false;
		}
		ps->seen = v;
		ps->seen_cap = cap;
	}
	ps->seen[ps->nseen++] = *id;
	return true;
}

/* A growing string; on ENOMEM it stays NULL and every append is a no-op. */
struct sbuf {
	char *s;
	size_t len;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	char *ns = realloc(b->s, b->len + n + 1);
	if (!ns) {
		free(b->s);
		b->s = NULL;
		b->oom = true;
		return;
	}
	memcpy(ns + b->len, s, n);
	b->len += n;
	ns[b->len] = '\0';
	b->s = ns;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* dir + name + suffix, where dir is "" or ends in '/'. */
static char *candidate(const char *dir, size_t dlen, const char *name, size_t nlen,
		       const char *suffix)
{
	struct sbuf b = {0};

	sb_add(&b, dir, dlen);
	sb_add(&b, name, nlen);
	sb_str(&b, suffix);
	return b.s;
}

struct found {
	int fd;
	char *path;
	struct bw_file_id id;
};

/*
 * Try one candidate: 1 found (f filled), 0 absent, -1 an error reported at
 * `at`.
 */
static int try_open(struct bw_parser *ps, const char *from, const struct bw_token *at, char *path,
		    struct found *f)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG)
			return 0;
		bw_report(ps, BW_SEV_ERROR, from, at->line, at->col, "cannot open include '%s': %s",
			  path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		bw_report(ps, BW_SEV_ERROR, from, at->line, at->col, "cannot stat include '%s': %s",
			  path, strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		bw_report(ps, BW_SEV_ERROR, from, at->line, at->col,
			  "include '%s' is not a regular file", path);
		close(fd);
		return -1;
	}
	f->fd = fd;
	f->path = path;
	f->id.dev = st.st_dev;
	f->id.ino = st.st_ino;
	return 1;
}

/* Look `name` up; 1 found, 0 not found or error (reported). */
static int resolve(struct bw_parser *ps, const char *from, const struct bw_token *at,
		   const char *name, size_t len, struct found *f)
{
	static const char *const suffixes[] = {"", ".profile"};
	const char *dirs[2];
	size_t dlens[2], ndirs = 0;
	struct sbuf tried = {0};
	char q[BW_QUOTE_BUF];
	int ret = 0;

	if (name[0] == '/') {
		dirs[ndirs] = "";
		dlens[ndirs++] = 0;
	} else {
		const char *slash = strrchr(from, '/');
		dirs[ndirs] = from;
		dlens[ndirs++] = slash ? (size_t)(slash - from) + 1 : 0;
		if (ps->libdir && ps->libdir[0]) {
			dirs[ndirs] = ps->libdir;
			dlens[ndirs++] = strlen(ps->libdir);
		}
	}

	for (size_t d = 0; d < ndirs && ret == 0; d++) {
		char *dir = NULL;
		size_t dlen = dlens[d];
		/* A library dir given without its trailing '/'. */
		if (dlen && dirs[d][dlen - 1] != '/') {
			dir = candidate(dirs[d], dlen, "/", 1, "");
			if (!dir) {
				ps->err = -ENOMEM;
				break;
			}
			dlen++;
		}
		for (size_t s = 0; s < 2 && ret == 0; s++) {
			char *path = candidate(dir ? dir : dirs[d], dlen, name, len, suffixes[s]);
			if (!path) {
				ps->err = -ENOMEM;
				ret = -1;
				break;
			}
			ret = try_open(ps, from, at, path, f);
			if (ret == 0) {
				sb_str(&tried, tried.len ? ", " : "");
				sb_str(&tried, path);
			}
			if (ret != 1)
				free(path);
		}
		free(dir);
	}

	if (ret == 0 && !ps->err) {
		if (tried.oom)
			ps->err = -ENOMEM;
		else
			bw_report(ps, BW_SEV_ERROR, from, at->line, at->col,
				  "include '%s' not found (tried %s)", bw_quote(q, name, len),
				  tried.s);
	}
	free(tried.s);
	return ret == 1;
}

void bw_include(struct bw_parser *ps, const char *from, const struct bw_token *at, const char *name,
		size_t len)
{
	struct found f = {.fd = -1};
	const char *stored;
	size_t blen;
	char *buf;
	int err;

	if (ps->stop || ps->err)
		return;
	if (!resolve(ps, from, at, name, len, &f))
		return;

	for (int i = 0; i < ps->depth; i++) {
		if (!ps->chain[i].has_id || !same_file(&ps->chain[i].id, &f.id))
			continue;
		struct sbuf chain = {0};
		for (int j = i; j < ps->depth; j++) {
			sb_str(&chain, ps->chain[j].name);
			sb_str(&chain, " -> ");
		}
		sb_str(&chain, f.path);
		if (chain.oom)
			ps->err = -ENOMEM;
		else
			bw_report(ps, BW_SEV_ERROR, from, at->line, at->col, "include cycle: %s",
				  chain.s);
		free(chain.s);
		goto out;
	}
	for (size_t i = 0; i < ps->nseen; i++) {
		if (same_file(&ps->seen[i], &f.id))
			goto out; /* read already, by another route */
	}
	if (ps->depth > BW_INCLUDE_DEPTH_MAX) {
		bw_report(ps, BW_SEV_ERROR, from, at->line, at->col,
			  "includes nested more than %d deep at '%s'", BW_INCLUDE_DEPTH_MAX,
			  f.path);
		goto out;
	}
	if (!bw_mark_seen(ps, &f.id))
		goto out;

	err = bw_read_fd(f.fd, &buf, &blen);
	if (err == -ENOMEM) {
		ps->err = err;
		goto out;
	}
	if (err == -EFBIG) {
		bw_report(ps, BW_SEV_ERROR, from, at->line, at->col,
			  "include '%s' is larger than %u MiB", f.path, BW_PROFILE_FILE_MAX >> 20);
		goto out;
	}
	if (err) {
		bw_report(ps, BW_SEV_ERROR, from, at->line, at->col, "cannot read include '%s': %s",
			  f.path, strerror(-err));
		goto out;
	}
	close(f.fd);
	f.fd = -1;

	stored = bw_add_file(ps, f.path);
	if (stored) {
		struct bw_chain_entry *e = &ps->chain[ps->depth++];
		e->id = f.id;
		e->has_id = true;
		e->name = stored;
		bw_parse_buffer(ps, stored, buf, blen);
		ps->depth--;
	}
	free(buf);
out:
	if (f.fd >= 0)
		close(f.fd);
	free(f.path);
}
