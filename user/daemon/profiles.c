// SPDX-License-Identifier: GPL-2.0-only
/*
 * The policy directory. A ConfigMap mounted as a volume holds one file per
 * key, each a symlink through `..data`, which kubelet swaps to a new
 * directory at once when the ConfigMap changes: every file is read again
 * then, and a profile is reinstalled only when its text changed.
 *
 * Replacing a profile never opens a window: the new version is parsed,
 * compiled and installed in a new slot (its rules, and its pins resolved in
 * each container it governs) while the old one still decides; then each of
 * its containers' cgroup entries is pointed at the new slot, one 8-byte
 * write each; then the old slot is emptied. A profile that fails to parse
 * or compile is an `agent` record, and the version in force stays.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "daemon.h"
#include "event_line.h"
#include "jsonw.h"
#include "libdir.h"
#include "session.h"
#include "util.h"

void d_agent(struct daemon *d, const struct bw_k8s_id *k8s, const char *fmt, ...)
{
	struct bw_event_src src = {.cgroup_path = "/", .k8s = k8s};
	struct timespec ts;
	char msg[4096];
	struct jw w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_REALTIME, &ts);
	jw_init(&w);
	bw_event_format_agent(&w, ts.tv_sec * 1000000000LL + ts.tv_nsec, msg, &src);
	jw_write_line(&w, d->log_fd);
	jw_free(&w);
}

/* FNV-1a of a file's bytes; 0 when it cannot be read. */
static uint64_t file_hash(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[8192];
	ssize_t n, i;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ULL;
	close(fd);
	return n < 0 ? 0 : h | 1;
}

struct d_profile *d_profile_find(struct daemon *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nprofiles; i++)
		if (!d->profiles[i]->removed && d->profiles[i]->name &&
		    !strcmp(d->profiles[i]->name, name))
			return d->profiles[i];
	return NULL;
}

static struct d_profile *by_file(struct daemon *d, const char *file)
{
	size_t i;

	for (i = 0; i < d->nprofiles; i++)
		if (!strcmp(d->profiles[i]->file, file))
			return d->profiles[i];
	return NULL;
}

/* The diagnostics of a failed load, on one line for the agent record. */
static void diags_line(const struct bw_diags *dg, char *out, size_t len)
{
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; i < dg->n && n < len; i++)
		n +=
		    snprintf(out + n, len - n, "%s%s:%d:%d: %s: %s", i ? "; " : "", dg->v[i].file,
			     dg->v[i].line, dg->v[i].col,
			     dg->v[i].severity == BW_SEV_ERROR ? "error" : "warning", dg->v[i].msg);
}

/* Parse and compile one file into np (not installed). 0, or -1 after an agent record. */
static int compile_file(struct daemon *d, const char *path, const char *file, struct d_profile *np)
{
	struct bw_diags dg = {};
	char why[2048], err[2048];
	int ret;

	ret = bw_installed_compile(&np->in, path, NULL, 0, &dg, err, sizeof(err));
	diags_line(&dg, why, sizeof(why));
	bw_diags_free(&dg);
	if (ret) {
		d_agent(d, NULL, "profile file %s not loaded: %s", file,
			ret == -EINVAL ? why
			: err[0]       ? err
				       : strerror(-ret));
		return -1;
	}
	if (!d->lsm && bw_compiled_needs_lsm(&np->in.compiled)) {
		d_agent(d, NULL,
			"profile file %s not loaded: its file, exec or unix socket rules need BPF "
			"LSM, which this kernel does not offer",
			file);
		return -1;
	}
	np->name = np->in.profile->name;
	np->mode = np->in.profile->mode;
	np->in.compiled.policy.event_rate = BW_DEFAULT_EVENT_RATE;
	return 0;
}

/*
 * A reader of slot's records, as profile p governs them: the daemon's log,
 * identities, on-deny kill of the container or service, and (learn mode
 * makes learn records) a learned profile per container or service.
 */
static void events_setup(struct daemon *d, struct bw_events *e, uint32_t slot,
			 const struct d_profile *p)
{
	e->log_fd = d->log_fd;
	e->profile = p->in.profile;
	e->slot = slot;
	e->maps = &d->maps;
	e->kill_on_deny = p->in.compiled.policy.on_deny == BW_ON_DENY_KILL;
	snprintf(e->cgroup_dir, sizeof(e->cgroup_dir), "%s", d->cgroot);
	e->identify = d_identify;
	e->identify_ctx = d;
	e->kill_target = d_kill_target;
	if (d->learn_dir) {
		e->on_learn = d_learn_event;
		e->learn_ctx = (void *)p; /* d_learn_event reads it only */
	}
}

/* Install np in a new slot, its pins in views; start reading its events. */
static int install(struct daemon *d, struct d_profile *np, const struct bw_pin_view *views,
		   size_t nviews)
{
	struct bw_pin_view *all = NULL;
	int ret;

	/* Services are pinned in the daemon's own view (services.c). */
	if (d_profile_selects_services(np)) {
		all = calloc(nviews + 1, sizeof(*all));
		if (!all)
			return -ENOMEM;
		if (nviews)
			memcpy(all, views, nviews * sizeof(*all));
		all[nviews] = (struct bw_pin_view){0};
		views = all;
		nviews++;
	}
	/* No view: nothing is governed yet, and the daemon's own view is no container's. */
	if (!nviews) {
		static const struct bw_pin_view none = {.base = "/nonexistent-view"};

		views = &none;
		nviews = 1;
	}
	ret = bw_installed_install(&np->in, &d->maps, views, nviews);
	free(all);
	if (ret)
		return ret;
	if (np->in.slot.id >= BW_OPSTATS_SLOTS)
		d_agent(d, NULL,
			"profile %s is in policy slot %u: its decisions are not counted in the "
			"metrics (the first %d slots are; others are taken by sandboxes)",
			np->name, np->in.slot.id, BW_OPSTATS_SLOTS);
	np->daemon = d;
	events_setup(d, &np->in.ev, np->in.slot.id, np);
	return bw_installed_events(&np->in);
}

/* Our side of a profile: its events, its ring buffer, its text (its slot stays). */
static void profile_free(struct d_profile *p)
{
	bw_installed_free(&p->in);
	free(p->file);
	free(p);
}

void d_slot_drain(struct daemon *d, uint32_t from, const struct d_profile *p)
{
	struct bw_profile named = {.name = p->name};
	int ncpu = libbpf_num_possible_cpus();
	struct bw_events e = {};
	struct bw_counters *c;
	uint64_t digest, lost = 0, throttled = 0;
	char name[256];
	bool same;
	int fd, n = 0, i;

	fd = bw_slot_ring(&d->maps, from);
	if (fd < 0)
		return;
	/*
	 * Its records' rule numbers are the version that filled the slot's:
	 * read with p's rules only when p is that version, else named only.
	 */
	same = !bw_slot_name_get(from, name, sizeof(name), &digest) && !strcmp(name, p->name) &&
	       digest == bw_profile_digest(p->in.profile);
	/* A denial no daemon was there to act on ends its cgroup now, under p. */
	events_setup(d, &e, from, p);
	e.profile = same ? p->in.profile : &named;
	if (bw_events_open(&e, fd)) {
		d_agent(d, NULL, "cannot read the records left in slot %u: %s", from,
			strerror(errno));
		close(fd);
		return;
	}
	while ((i = bw_events_poll(&e, 0)) > 0)
		n += i;
	bw_events_close(&e);
	close(fd);
	/*
	 * The former agent may have reported part of what the kernel counted
	 * since the slot was filled: the totals, not `lost` records that
	 * would count it twice.
	 */
	c = ncpu > 0 ? calloc(ncpu, sizeof(*c)) : NULL;
	if (c && !bpf_map_lookup_elem(d->maps.counters, &from, c))
		for (i = 0; i < ncpu; i++) {
			lost += c[i].lost;
			throttled += c[i].throttled;
		}
	free(c);
	if (!n && !lost && !throttled)
		return;
	d_agent(d, NULL,
		"read %d record%s a former agent left in slot %u (profile %s%s); since that slot "
		"was filled the kernel dropped %llu of its records (ring buffer full or not read) "
		"and throttled %llu, including any the former agent reported",
		n, n == 1 ? "" : "s", from, p->name,
		same ? "" : ", another version: rules by number", (unsigned long long)lost,
		(unsigned long long)throttled);
}

/* Drain and free a profile no longer in force, and empty its slot (referenced by nothing). */
static void retire(struct daemon *d, struct d_profile *p)
{
	bw_installed_drain(&p->in);
	if (bw_installed_put(&p->in, &d->maps) == -EBUSY)
		d_agent(d, NULL, "profile %s: its old slot %u is still in use", p->name,
			p->in.slot.id);
	profile_free(p);
}

static int add_profile(struct daemon *d, struct d_profile *p)
{
	struct d_profile **v = realloc(d->profiles, (d->nprofiles + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	d->profiles = v;
	v[d->nprofiles++] = p;
	return 0;
}

/* One file of the directory: new, changed or the same. */
static void load_one(struct daemon *d, const char *file)
{
	char path[PATH_MAX];
	struct d_profile *old = by_file(d, file), *np, *other;
	uint64_t h;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", d->dir, file);
	h = file_hash(path);
	if (old && !old->removed && old->hash == h)
		return;
	np = calloc(1, sizeof(*np));
	if (!np)
		return;
	np->file = strdup(file);
	np->hash = h;
	bw_installed_init(&np->in);
	d->metrics.reloads++;
	if (!np->file || compile_file(d, path, file, np))
		goto bad;
	other = d_profile_find(d, np->name);
	if (other && other != old) {
		d_agent(d, NULL, "profile file %s not loaded: profile %s is %s's already", file,
			np->name, other->file);
		goto bad;
	}
	/* Its containers' roots come one by one (d_profiles_progress). */
	if (install(d, np, NULL, 0)) {
		d_agent(d, NULL,
			"profile %s (%s) not installed: the policy slots or rule maps are full",
			np->name, file);
		goto bad;
	}
	if (!old) {
		add_profile(d, np);
		d_agent(d, NULL, "profile %s loaded from %s in %s mode (slot %u)", np->name, file,
			bw_mode_name(np->mode), np->in.slot.id);
		return;
	}
	/*
	 * The new version is in place: new containers get it from now on; the
	 * old one's move over a few each turn, then it goes.
	 */
	for (i = 0; i < d->nprofiles; i++)
		if (d->profiles[i] == old)
			d->profiles[i] = np;
	np->former = old;
	/*
	 * Services: the selectors first, so that a cgroup made from now on
	 * gets the new slot; then every cgroup still on the old one moves.
	 */
	if (old->in.installed && d_profile_selects_services(old)) {
		int moved = 0;

		d_services_sync(d, false);
		if (!bw_govern_repoint(&d->maps, d->cgroot, old->in.slot.id, np->in.slot.id,
				       &moved))
			np->former_moved += moved;
	}
	d_profiles_progress(d);
	return;
bad:
	d->metrics.reload_errors++;
	if (old && !old->removed)
		d_agent(d, NULL, "profile %s stays as it was", old->name);
	/* Seen: not tried again until its text changes. */
	if (old)
		old->hash = h;
	profile_free(np);
}

static int profile_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 8 && !strcmp(e->d_name + n - 8, ".profile");
}

/* The selectors the hook decides with while this daemon is down. */
static void write_selectors(struct daemon *d)
{
	char tmp[PATH_MAX];
	size_t i, j;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", d->selectors_file);
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "# written by bpfwarden daemon: what bpfwarden-hook selects while it is down\n");
	if (d->agent_ns && d->agent_prefix[0])
		fprintf(f, "agent %s %s\n", d->agent_ns, d->agent_prefix);
	for (i = 0; i < d->nprofiles; i++) {
		const struct d_profile *p = d->profiles[i];

		for (j = 0; !p->removed && j < p->in.profile->nmatches; j++) {
			const struct bw_match *m = &p->in.profile->matches[j];

			fprintf(f, "match %s", p->name);
			if (m->namespace_)
				fprintf(f, " namespace=%s", m->namespace_);
			if (m->pod)
				fprintf(f, " pod=%s", m->pod);
			if (m->container)
				fprintf(f, " container=%s", m->container);
			if (m->cgroup)
				fprintf(f, " cgroup=%s", m->cgroup);
			fprintf(f, "\n");
		}
	}
	if (fclose(f) || rename(tmp, d->selectors_file))
		unlink(tmp);
}

int d_profiles_load(struct daemon *d)
{
	struct dirent **names;
	size_t i;
	int n, k;

	n = scandir(d->dir, &names, profile_file, alphasort);
	if (n < 0) {
		d_agent(d, NULL, "cannot read the policy directory %s: %s", d->dir,
			strerror(errno));
		return -errno;
	}
	for (k = 0; k < n; k++) {
		char path[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", d->dir, names[k]->d_name);
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			load_one(d, names[k]->d_name);
	}
	/* Files that went away: their containers stay governed by the last version. */
	for (i = 0; i < d->nprofiles; i++) {
		struct d_profile *p = d->profiles[i];
		bool there = false;

		for (k = 0; k < n && !there; k++)
			there = !strcmp(names[k]->d_name, p->file);
		if (!there && !p->removed) {
			p->removed = true;
			d_agent(d, NULL,
				"profile %s: %s is gone from the policy directory; what it governs "
				"stays governed by its last version",
				p->name, p->file);
		} else if (there && p->removed) {
			p->removed = false;
		}
	}
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	write_selectors(d);
	d_services_sync(d, true);
	return 0;
}

int d_selectors(struct daemon *d, struct bw_selectors *s)
{
	size_t i, j, n = 0;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < d->nprofiles; i++)
		n += d->profiles[i]->removed ? 0 : d->profiles[i]->in.profile->nmatches;
	s->v = calloc(n ? n : 1, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	for (i = 0; i < d->nprofiles; i++) {
		const struct d_profile *p = d->profiles[i];

		for (j = 0; !p->removed && j < p->in.profile->nmatches; j++) {
			const struct bw_match *m = &p->in.profile->matches[j];

			s->v[s->n++] = (struct bw_selector){p->name, m->namespace_, m->pod,
							    m->container, m->cgroup};
		}
	}
	s->agent_namespace = d->agent_ns;
	s->agent_pod_prefix = d->agent_prefix[0] ? d->agent_prefix : NULL;
	return 0;
}

void d_profiles_release_idle(struct daemon *d)
{
	size_t i;

	/*
	 * A slot that no cgroup, waiting cgroup or service selector refers to
	 * governs nothing, and a restarted daemon installs its profile anew:
	 * left, it would stay "in use" by a dead agent until reclaimed.
	 */
	for (i = 0; i < d->nprofiles; i++) {
		struct d_profile *p = d->profiles[i];

		if (!p->in.installed)
			continue;
		while (p->in.events_open && bw_events_poll(&p->in.ev, 0) > 0)
			;
		if (!bw_slot_put(&d->maps, p->in.slot.id))
			p->in.installed = false;
	}
}

bool d_profiles_progress(struct daemon *d)
{
	bool more = false;
	size_t i;

	for (i = 0; i < d->nprofiles; i++) {
		struct d_profile *np = d->profiles[i], *old = np->former;

		if (!old)
			continue;
		if (d_containers_move(d, old, np, D_MOVES_PER_TURN, &np->former_moved)) {
			more = true;
			continue;
		}
		/* Its counters go on from the old version's (they are Prometheus counters). */
		d_profile_counts(d, old, &np->base, np->base_ops);
		d_agent(d, NULL, "profile %s reloaded from %s (slot %u -> %u, %d cgroups moved)",
			np->name, np->file, old->in.installed ? old->in.slot.id : 0, np->in.slot.id,
			np->former_moved);
		np->former = NULL;
		retire(d, old);
	}
	return more;
}

void d_profiles_free(struct daemon *d)
{
	size_t i;

	/* Enforcement outlives the daemon: slots stay, only our side goes. */
	for (i = 0; i < d->nprofiles; i++) {
		if (d->profiles[i]->former)
			profile_free(d->profiles[i]->former);
		profile_free(d->profiles[i]);
	}
	free(d->profiles);
	d->profiles = NULL;
	d->nprofiles = 0;
}
