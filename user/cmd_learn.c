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
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "commands.h"
#include "learn.h"
#include "learn_agent.h"
#include "session.h"
#include "util.h"

/* --duration: a whole positive number of seconds; -EINVAL after saying why. */
static int parse_duration(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0) {
		bw_err("--duration wants a whole number of seconds, not '%s'", s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

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

static void learn_all_event(void *ctx, const struct bw_event *ev, const char *path, const char *exe)
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
	if (ev->op == BW_OP_EXEC)
		c->programs++;
	else if (ev->op == BW_OP_CONNECT || ev->op == BW_OP_BIND || ev->op == BW_OP_SENDMSG ||
		 ev->op == BW_OP_SOCKET)
		c->network++;
	else
		c->files++;
	bw_learn_event(c->set, ev, path, exe);
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
		a->events, objects, a->n, (unsigned long long)s->ev.lost);
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

static int learn_all(const char *profile, long duration, const char *outdir, const char *log)
{
	struct all_ctx a = {};
	struct bw_loop loop = {.duration = duration, .child_fd = -1};
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
	ret = bw_session_prepare(&s, profile, "learn", log);
	if (!ret && bw_cgroup_root(root, sizeof(root)))
		ret = 1;
	if (ret) {
		bw_session_end(&s);
		return ret;
	}
	/* Events name cgroups below the root; the session's slot is ours. */
	snprintf(s.ev.cgroup_dir, sizeof(s.ev.cgroup_dir), "%s", root);
	bw_cgroup_id(root, &s.ev.cgroup_id);
	snprintf(s.cgdir, sizeof(s.cgdir), "%s", root);
	/*
	 * Not the agent's own cgroup (observing it would observe the agent),
	 * nor <root>/bpfwarden, where run and attach make their cgroups.
	 */
	snprintf(skip, sizeof(skip), "%s/bpfwarden", root);
	if (!bw_cgroup_self(self, sizeof(self)))
		bw_cgroup_id(self, &self_id);
	ret = bw_govern_all(&s.maps, root, s.slot.id, BW_MODE_LEARN, skip, self_id, &n);
	s.governing = true;
	if (ret) {
		bw_err("cannot govern the cgroups of this host: %s", strerror(-ret));
		bw_session_end(&s);
		return 1;
	}
	snprintf(line, sizeof(line), "learning on %d cgroups (all but the agent's own and %s)", n,
		 bw_cgroup_rel(skip));
	bw_events_agent(&s.ev, line);
	a.ev = &s.ev;
	s.ev.on_learn = learn_all_event;
	s.ev.on_deny = learn_all_event; /* counted per cgroup in the summary */
	s.ev.learn_ctx = &a;
	if (tty) {
		loop.tick = progress;
		loop.arg = &a;
	}
	bw_session_signals(false);
	ret = bw_session_loop(&s, &loop);
	if (tty)
		fprintf(stderr, "\n");
	bw_events_agent(&s.ev, learn_end(ret));
	bw_session_end(&s);

	/* The summary: per cgroup, what it did that no rule allowed (learn events). */
	printf("%-40s %-24s %7s %8s %7s %7s %7s  %s\n", "cgroup", "what", "files", "programs",
	       "network", "objects", "denials", outdir ? "profile" : "");
	for (i = 0; i < a.n; i++) {
		struct cg_learned *c = &a.v[i];
		char name[PATH_MAX], file[2 * PATH_MAX] = "";

		if (outdir) {
			profile_file_name(c->path, name, sizeof(name));
			snprintf(file, sizeof(file), "%s/%s.profile", outdir, name);
			if (bw_learn_save(c->set, file, name))
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
	       (unsigned long long)s.ev.lost);
	free(a.v);
	return failed;
}

/* bpfwarden audit --all: the host-wide learn session, reported, no profiles written. */
int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"all", no_argument, NULL, 'a'},	   {"duration", required_argument, NULL, 'd'},
	    {"log", required_argument, NULL, 'l'}, {"profile", required_argument, NULL, 'p'},
	    {"verbose", no_argument, NULL, 'v'},   {},
	};
	const char *log = NULL, *profile = NULL;
	bool all = false;
	long duration = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ad:l:p:v", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = true;
			break;
		case 'd':
			if (parse_duration(optarg, &duration))
				return 2;
			break;
		case 'l':
			log = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 'v':
			bw_verbose = true;
			break;
		default:
			goto usage;
		}
	}
	if (!all || optind != argc)
		goto usage;
	return learn_all(profile, duration, NULL, log);
usage:
	fprintf(stderr, "usage: bpfwarden audit --all [--duration SECONDS] [--log FILE]\n");
	return 2;
}

int cmd_learn(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cgroup", required_argument, NULL, 'c'},
	    {"profile", required_argument, NULL, 'p'},
	    {"duration", required_argument, NULL, 'd'},
	    {"output", required_argument, NULL, 'o'},
	    {"log", required_argument, NULL, 'l'},
	    {"all", no_argument, NULL, 'a'},
	    {"verbose", no_argument, NULL, 'v'},
	    BW_LEARN_OPTIONS,
	    {},
	};
	const char *cgroup = NULL, *profile = NULL, *output = NULL, *log = NULL;
	struct bw_loop loop = {.child_fd = -1};
	struct bw_learn_set *set;
	struct bw_session s;
	char cgdir[PATH_MAX];
	long duration = 0;
	bool all = false;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:p:d:o:l:vM:E", opts, NULL)) != -1) {
		switch (c) {
		case 'M':
		case 'E':
			if (bw_learn_option(c, optarg) < 0)
				return 2;
			break;
		case 'c':
			cgroup = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 'd':
			if (parse_duration(optarg, &duration))
				return 2;
			break;
		case 'o':
			output = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'v':
			bw_verbose = true;
			break;
		default:
			goto usage;
		}
	}
	if (!output || optind != argc || (!cgroup == !all))
		goto usage;
	if (all)
		return learn_all(profile, duration, output, log);
	ret = bw_cgroup_resolve(cgroup, cgdir, sizeof(cgdir));
	if (ret) {
		bw_err("%s is not a cgroup v2 directory: %s", cgroup, strerror(-ret));
		return 1;
	}
	set = bw_learn_new();
	if (!set)
		return 1;
	ret = bw_session_prepare(&s, profile, "learn", log);
	if (!ret && bw_session_govern(&s, cgdir))
		ret = 1;
	if (ret) {
		bw_session_end(&s);
		bw_learn_free(set);
		return ret;
	}
	s.ev.on_learn = bw_learn_event;
	s.ev.learn_ctx = set;
	loop.duration = duration;
	loop.watch = true;
	bw_session_signals(false);
	bw_events_agent(&s.ev, learn_end(bw_session_loop(&s, &loop)));
	bw_session_end(&s);
	ret = bw_learn_save(set, output, bw_cgroup_rel(cgdir));
	bw_info("learned %zu distinct objects from %llu accesses", bw_learn_count(set),
		(unsigned long long)bw_learn_events(set));
	bw_learn_free(set);
	return ret ? 1 : 0;
usage:
	fprintf(stderr,
		"usage: bpfwarden learn --cgroup PATH [--profile FILE] [--duration SECONDS] "
		"--output FILE [--log FILE] [--min-children N] [--exact]\n"
		"       bpfwarden learn --all [--profile FILE] [--duration SECONDS] --output DIR "
		"[--log FILE] [--min-children N] [--exact]\n");
	return 2;
}
