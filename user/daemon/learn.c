// SPDX-License-Identifier: GPL-2.0-only
/*
 * Learning in the daemon: a profile of the policy directory in `mode learn`
 * governs what it selects in learn mode, and each container (by namespace,
 * pod and container name) or service (the cgroup its `match cgroup=` line
 * selected) gets a learned profile of its own in --learn-dir, started from
 * that profile (its name, defaults, includes, rules and match lines, as
 * `learn --profile` keeps them), so that the results of replicas or of
 * several days merge with `bpfwarden profile merge`.
 *
 * Each learn record is added to its target's set as it is read; a target's
 * file is written (through a temporary file and a rename) when its
 * container or service cgroup is gone, every D_LEARN_WRITE_MS while it has
 * new records, and at a clean stop.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "learn.h"
#include "learn_agent.h"
#include "session.h"
#include "util.h"

#define D_LEARN_WRITE_MS 30000

struct d_learned {
	char *key;     /* the file's name without .profile */
	char *profile; /* the name of the profile it learns under */
	char *cgdir;   /* the container's or service's cgroup (absolute): gone, written */
	struct bw_learn_set *set;
	size_t written;	 /* distinct objects when last written */
	long written_at; /* bw_now_ms() */
};

/* A file name of s: letters, digits, '.', '-' kept, anything else '_'; never "." or "..". */
static void file_name(char *out, size_t len, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		out[i] = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
				 (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '-'
			     ? s[i]
			     : '_';
	out[i] = '\0';
	if (out[0] == '.')
		out[0] = '_';
}

/*
 * The service a cgroup (rel, below the cgroup2 mount) belongs to: its
 * nearest ancestor, itself included, that one of p's `match cgroup=` lines
 * selects; rel itself when none does (a cgroup governed otherwise).
 */
static void service_of(const struct bw_profile *p, const char *rel, char *out, size_t len)
{
	char *slash;
	size_t i;

	snprintf(out, len, "%s", rel);
	while (out[0]) {
		for (i = 0; i < p->nmatches; i++)
			if (p->matches[i].cgroup && !fnmatch(p->matches[i].cgroup, out, 0))
				return;
		slash = strrchr(out, '/');
		if (!slash || slash == out)
			break;
		*slash = '\0';
	}
	snprintf(out, len, "%s", rel);
}

static void learned_free(struct d_learned *t)
{
	bw_learn_free(t->set);
	free(t->key);
	free(t->profile);
	free(t->cgdir);
	free(t);
}

static struct d_learned *target(struct daemon *d, const char *key, const char *profile,
				const char *cgdir)
{
	struct d_learned *t, **v;
	size_t i;

	for (i = 0; i < d->nlearned; i++)
		if (!strcmp(d->learned[i]->key, key))
			return d->learned[i];
	v = realloc(d->learned, (d->nlearned + 1) * sizeof(*v));
	if (!v)
		return NULL;
	d->learned = v;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->key = strdup(key);
	t->profile = strdup(profile);
	t->cgdir = strdup(cgdir);
	t->set = bw_learn_new();
	t->written_at = bw_now_ms();
	if (!t->key || !t->profile || !t->cgdir || !t->set) {
		learned_free(t);
		return NULL;
	}
	v[d->nlearned++] = t;
	return t;
}

void d_learn_event(void *ctx, const struct bw_event *ev, const char *path, const char *exe,
		   bool here)
{
	struct d_profile *p = ctx;
	struct daemon *d = p->daemon;
	char rel[PATH_MAX], svc[PATH_MAX], key[512], cgdir[PATH_MAX];
	const struct bw_k8s_id *k8s;
	struct d_learned *t;

	rel[0] = '\0';
	k8s = d_identify(d, ev->cgroup_id, rel, sizeof(rel));
	if (k8s && k8s->container && k8s->pod) {
		snprintf(svc, sizeof(svc), "%s_%s_%s", k8s->namespace_ ? k8s->namespace_ : "-",
			 k8s->pod, k8s->container);
		file_name(key, sizeof(key), svc);
		if (d_container_cgdir(d, k8s, cgdir, sizeof(cgdir)))
			snprintf(cgdir, sizeof(cgdir), "%s%s", d->cgroot, rel);
	} else if (k8s && k8s->container_id) {
		file_name(key, sizeof(key), k8s->container_id);
		if (d_container_cgdir(d, k8s, cgdir, sizeof(cgdir)))
			snprintf(cgdir, sizeof(cgdir), "%s%s", d->cgroot, rel);
	} else if (rel[0]) {
		service_of(p->in.profile, rel, svc, sizeof(svc));
		file_name(key, sizeof(key), svc[0] == '/' ? svc + 1 : svc);
		snprintf(cgdir, sizeof(cgdir), "%s%s", d->cgroot, svc);
	} else {
		return; /* a cgroup gone before its record was read, of no known container */
	}
	t = target(d, key, p->name, cgdir);
	if (!t) {
		d_agent(d, k8s, "a learn record of profile %s is not kept for %s: out of memory",
			p->name, key);
		return;
	}
	bw_learn_event(t->set, ev, path, exe, here);
}

/* dir and its missing parents (mode 0700: what services did is for root to read). */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	char *p;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}

/* Write t's profile, started from its profile's version now loaded. */
static int write_one(struct daemon *d, struct d_learned *t)
{
	const struct d_profile *p = d_profile_find(d, t->profile);
	const struct bw_profile *base = p ? p->in.profile : NULL;
	char file[PATH_MAX];
	int ret;

	/* A failed write is tried again D_LEARN_WRITE_MS later, not at every look. */
	t->written_at = bw_now_ms();
	ret = make_dirs(d->learn_dir);
	if (ret) {
		d_agent(d, NULL, "cannot make the learn directory %s: %s", d->learn_dir,
			strerror(-ret));
		return ret;
	}
	snprintf(file, sizeof(file), "%s/%s.profile", d->learn_dir, t->key);
	ret = bw_learn_save(t->set, file, base ? NULL : t->key, &base, base ? 1 : 0);
	if (ret) {
		d_agent(d, NULL, "cannot write the learned profile %s: %s", file, strerror(-ret));
		return ret;
	}
	t->written = bw_learn_count(t->set);
	d_agent(d, NULL, "learned profile %s written: %zu objects from %llu records (profile %s)",
		file, t->written, (unsigned long long)bw_learn_events(t->set), t->profile);
	return 0;
}

void d_learn_flush(struct daemon *d, bool all)
{
	long now = bw_now_ms();
	size_t i, j;

	for (i = 0; i < d->nlearned;) {
		struct d_learned *t = d->learned[i];
		bool gone = access(t->cgdir, F_OK) != 0;
		bool fresh = bw_learn_count(t->set) != t->written;

		if (fresh && (all || gone || now - t->written_at >= D_LEARN_WRITE_MS))
			write_one(d, t);
		if (!gone && !all) {
			i++;
			continue;
		}
		for (j = i + 1; j < d->nlearned; j++)
			d->learned[j - 1] = d->learned[j];
		d->nlearned--;
		learned_free(t);
	}
	if (!d->nlearned) {
		free(d->learned);
		d->learned = NULL;
	}
}
