// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden learn --cgroup PATH: govern an existing subtree in learn mode for
 * a while (--duration, or until SIGINT/SIGTERM), then write what it did as a
 * profile and let it go. Nothing is blocked but what the starting profile
 * (--profile, default: an empty `default deny` one) denies itself.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "cli.h"
#include "learn.h"
#include "learn_agent.h"
#include "session.h"
#include "util.h"

/* One learn set per cgroup seen, for --all. */
struct cg_learned {
	uint64_t id;
	char path[PATH_MAX];
	struct bw_learn_set *set;
	unsigned long files, programs, network, denials;
	/* Which programs did it, most active first in the summary. */
	struct {
		char name[64];
		unsigned long n;
	} progs[8];
	unsigned nprogs;
	unsigned long other_progs;
};

static void count_program(struct cg_learned *c, const char *name)
{
	unsigned i;

	for (i = 0; i < c->nprogs; i++) {
		if (!strncmp(c->progs[i].name, name, sizeof(c->progs[i].name) - 1)) {
			c->progs[i].n++;
			return;
		}
	}
	if (c->nprogs == sizeof(c->progs) / sizeof(c->progs[0])) {
		c->other_progs++;
		return;
	}
	snprintf(c->progs[c->nprogs].name, sizeof(c->progs[0].name), "%s", name);
	c->progs[c->nprogs++].n = 1;
}

static void print_programs(struct cg_learned *c)
{
	unsigned i, j;

	/* Few entries: a selection sort by count keeps it simple. */
	for (i = 0; i < c->nprogs; i++) {
		unsigned best = i;

		for (j = i + 1; j < c->nprogs; j++)
			if (c->progs[j].n > c->progs[best].n)
				best = j;
		if (best != i) {
			__typeof__(c->progs[0]) t = c->progs[i];

			c->progs[i] = c->progs[best];
			c->progs[best] = t;
		}
		printf("%s%s (%lu)", i ? ", " : "    by ", c->progs[i].name, c->progs[i].n);
	}
	if (c->other_progs)
		printf(", others (%lu)", c->other_progs);
	if (c->nprogs)
		printf("\n");
}

struct all_ctx {
	struct bw_events *ev;
	struct cg_learned *v;
	size_t n;
	unsigned long events;
	long shown; /* when the progress line was last written */
};

static void learn_all_event(void *ctx, const struct bw_event *ev, const char *path, const char *exe,
			    bool here)
{
	struct all_ctx *a = ctx;
	struct cg_learned *c = NULL, *nv;
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->v[i].id == ev->cgroup_id)
			c = &a->v[i];
	if (!c) {
		nv = realloc(a->v, (a->n + 1) * sizeof(*nv));
		if (!nv)
			return;
		a->v = nv;
		c = &a->v[a->n];
		memset(c, 0, sizeof(*c));
		c->set = bw_learn_new();
		if (!c->set)
			return;
		c->id = ev->cgroup_id;
		snprintf(c->path, sizeof(c->path), "%s",
			 bw_events_cgroup_path(a->ev, ev->cgroup_id));
		a->n++;
	}
	{
		char comm[BW_COMM_LEN + 1];

		snprintf(comm, sizeof(comm), "%.*s", BW_COMM_LEN, ev->comm);
		count_program(c, exe && *exe ? exe : comm);
	}
	if (ev->type == BW_EV_DENY) {
		c->denials++;
		return;
	}
	a->events++;
	if (ev->op == BW_OP_EXEC && !(ev->access & BW_ACC_R))
		c->programs++;
	else if (bw_op_names_peer(ev->op) || ev->op == BW_OP_SOCKET ||
		 ev->op == BW_OP_RECEIVE_SOCKET)
		c->network++;
	else
		c->files++;
	bw_learn_event(c->set, ev, path, exe, here);
}

/* The agent record that says why learning ended (enum bw_loop_end). */
static const char *learn_end(int why)
{
	return why == BW_LOOP_SIGNAL ? "learning stopped on signal"
	       : why == BW_LOOP_GONE ? "learning ended: the cgroup was removed or let go"
				     : "learning time is up";
}

/* The progress line, on a terminal, once a second. */
static int progress(struct bw_session *s, void *arg)
{
	struct all_ctx *a = arg;
	size_t objects = 0, k;
	long now = time(NULL);

	if (now == a->shown)
		return 0;
	a->shown = now;
	for (k = 0; k < a->n; k++)
		objects += bw_learn_count(a->v[k].set);
	fprintf(stderr, "\rlearning: %lu events, %zu distinct objects, %zu cgroups, %llu lost   ",
		a->events, objects, a->n, (unsigned long long)s->in.ev.lost);
	return 0;
}

/* A file name for a cgroup's profile: its path with '/' as '-', "root" for /. */
static void profile_file_name(const char *cgpath, char *out, size_t len)
{
	size_t i, n = 0;

	for (i = 0; cgpath[i] && n + 1 < len; i++) {
		char ch = cgpath[i];

		if (ch == '/' && i == 0)
			continue;
		out[n++] = (isalnum((unsigned char)ch) || strchr("._-@", ch)) ? ch : '-';
	}
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "root");
}

/* Settings of the profile writer (learn_agent.c) from the command line. */
static void learn_options(const struct bw_opts *o)
{
	bw_learn_min_children = o->min_children;
	bw_learn_flags = o->learn_flags;
}

/* learn --all and audit --all (outdir NULL: no profiles, the summary only). */
static int learn_all(struct bw_opts *o, const char *outdir)
{
	struct all_ctx a = {};
	struct bw_profile *start = NULL;
	struct bw_loop loop = {.duration = o->duration, .child_fd = -1};
	struct bw_session s;
	char root[PATH_MAX], self[PATH_MAX], skip[PATH_MAX + 16], line[PATH_MAX + 128];
	uint64_t self_id = 0;
	int n;
	size_t i;
	int ret, tty = isatty(STDERR_FILENO), failed = 0;

	if (outdir && mkdir(outdir, 0755) && errno != EEXIST) {
		bw_err("cannot create %s: %s", outdir, strerror(errno));
		return 1;
	}
	o->mode = BW_MODE_LEARN;
	o->mode_given = true;
	ret = bw_session_prepare(&s, o);
	if (!ret && bw_cgroup_root(root, sizeof(root)))
		ret = 1;
	if (ret) {
		bw_session_end(&s);
		return ret;
	}
	/* Events name cgroups below the root; the session's slot is ours. */
	snprintf(s.in.ev.cgroup_dir, sizeof(s.in.ev.cgroup_dir), "%s", root);
	bw_cgroup_id(root, &s.in.ev.cgroup_id);
	snprintf(s.cgdir, sizeof(s.cgdir), "%s", root);
	/*
	 * Not the agent's own cgroup (observing it would observe the agent),
	 * nor <root>/bpfwarden, where run and attach make their cgroups.
	 */
	snprintf(skip, sizeof(skip), "%s/bpfwarden", root);
	if (!bw_cgroup_self(self, sizeof(self)))
		bw_cgroup_id(self, &self_id);
	ret = bw_govern_all(&s.maps, root, s.in.slot.id, BW_MODE_LEARN, skip, self_id, &n);
	s.governing = true;
	if (ret) {
		bw_err("cannot govern the cgroups of this host: %s", strerror(-ret));
		bw_session_end(&s);
		return 1;
	}
	snprintf(line, sizeof(line), "learning on %d cgroups (all but the agent's own and %s)", n,
		 bw_cgroup_rel(skip));
	bw_events_agent(&s.in.ev, line);
	a.ev = &s.in.ev;
	s.in.ev.on_learn = learn_all_event;
	s.in.ev.on_deny = learn_all_event; /* counted per cgroup in the summary */
	s.in.ev.learn_ctx = &a;
	if (tty) {
		loop.tick = progress;
		loop.arg = &a;
	}
	bw_session_signals(false);
	ret = bw_session_loop(&s, &loop);
	if (tty)
		fprintf(stderr, "\n");
	bw_events_agent(&s.in.ev, learn_end(ret));
	if (o->profile) {
		start = s.in.profile; /* each cgroup's profile starts from it */
		s.in.profile = NULL;
	}
	bw_session_end(&s);

	/* The summary: per cgroup, what it did that no rule allowed (learn events). */
	learn_options(o);
	bw_learn_tell_widenings = false; /* one list per cgroup would bury the table */
	printf("%-40s %-24s %7s %8s %7s %7s %7s  %s\n", "cgroup", "what", "files", "programs",
	       "network", "objects", "denials", outdir ? "profile" : "");
	for (i = 0; i < a.n; i++) {
		struct cg_learned *c = &a.v[i];
		char name[PATH_MAX], file[2 * PATH_MAX] = "";

		if (outdir) {
			profile_file_name(c->path, name, sizeof(name));
			snprintf(file, sizeof(file), "%s/%s.profile", outdir, name);
			if (bw_learn_save(c->set, file, name,
					  (const struct bw_profile *const *)&start, start ? 1 : 0))
				failed = 1;
		}
		char unit[128];

		bw_cgroup_unit(c->path, unit, sizeof(unit));
		printf("%-40s %-24s %7lu %8lu %7lu %7zu %7lu  %s\n", c->path, unit[0] ? unit : "-",
		       c->files, c->programs, c->network, bw_learn_count(c->set), c->denials, file);
		print_programs(c);
		bw_learn_free(c->set);
	}
	printf("%lu learn events, %zu cgroups, %llu lost\n", a.events, a.n,
	       (unsigned long long)s.in.ev.lost);
	free(a.v);
	bw_profile_free(start);
	return failed;
}

static int learn(struct bw_opts *o)
{
	struct bw_loop loop = {.duration = o->duration, .child_fd = -1, .watch = true};
	struct bw_learn_set *set;
	struct bw_profile *start = NULL;
	struct bw_session s;
	char cgdir[PATH_MAX];
	int ret;

	if (o->all)
		return learn_all(o, o->output);
	if (bw_cgroup_arg(o->cgroup, cgdir, sizeof(cgdir)))
		return 1;
	set = bw_learn_new();
	if (!set)
		return 1;
	o->mode = BW_MODE_LEARN;
	o->mode_given = true;
	ret = bw_session_prepare(&s, o);
	/* Before governing, as attach does: a signal after "governing" ends it cleanly. */
	bw_session_signals(false);
	if (!ret && bw_session_govern(&s, cgdir))
		ret = 1;
	if (ret) {
		bw_session_end(&s);
		bw_learn_free(set);
		return ret;
	}
	s.in.ev.on_learn = bw_learn_event;
	s.in.ev.learn_ctx = set;
	bw_events_agent(&s.in.ev, learn_end(bw_session_loop(&s, &loop)));
	/* Learning from an operator's profile: kept, the learned one starts from it. */
	if (o->profile) {
		start = s.in.profile;
		s.in.profile = NULL;
	}
	bw_session_end(&s);
	learn_options(o);
	ret = bw_learn_save(set, o->output, start ? NULL : bw_cgroup_rel(cgdir),
			    (const struct bw_profile *const *)&start, start ? 1 : 0);
	bw_profile_free(start);
	bw_info("learned %zu distinct objects from %llu accesses", bw_learn_count(set),
		(unsigned long long)bw_learn_events(set));
	bw_learn_free(set);
	return ret ? 1 : 0;
}

/* bpfwarden audit --all: the host-wide learn session, reported, no profiles written. */
static int audit(struct bw_opts *o)
{
	return learn_all(o, NULL);
}

static const struct argp learn_argp;

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;

	if (key != ARGP_KEY_END)
		return bw_parse_opt(key, arg, st);
	if (st->root_argp == &learn_argp && !o->cgroup == !o->all)
		argp_error(st, "either --cgroup or --all is needed, not both");
	else if (st->root_argp == &learn_argp && !o->output)
		argp_error(st, "--output is needed");
	else if (st->root_argp != &learn_argp && !o->all)
		argp_error(st, "--all is needed (audit covers the whole host)");
	else
		return bw_parse_opt(key, arg, st);
	return EINVAL;
}

static const struct argp_option learn_options_table[] = {
    BW_OPT_CGROUP,  BW_OPT_ALL, BW_OPT_DURATION, BW_OPT_OUTPUT,
    BW_OPT_PROFILE, BW_OPT_LOG, BW_OPTS_LEARN,	 BW_OPTS_COMMON,
};
static const struct argp_option audit_options[] = {
    BW_OPT_ALL, BW_OPT_DURATION, BW_OPT_PROFILE, BW_OPT_LOG, BW_OPTS_COMMON,
};

static const struct argp learn_argp = {
    learn_options_table, parse, NULL,
    "Learn a profile from what a cgroup does. What a cgroup subtree (--cgroup) or every "
    "cgroup of the host (--all) does, for --duration or until SIGINT or SIGTERM, is written "
    "as a profile (--all: one per cgroup, in the directory --output).\vNothing is blocked but what "
    "--profile denies itself; "
    "docs/learn.md says how the profile is written."};
static const struct argp audit_argp = {
    audit_options, parse, NULL,
    "Learn on the whole host and print a summary. One line per cgroup says what it did; no "
    "profile is written."};

const struct bw_command bw_cmd_learn = {"learn", &learn_argp, learn, 0};
const struct bw_command bw_cmd_audit = {"audit", &audit_argp, audit, 0};
