// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden learn --cgroup PATH: govern an existing subtree in learn mode for
 * a while (--duration, or until SIGINT/SIGTERM), then write what it did as a
 * profile and let it go. Nothing is blocked but what the starting profile
 * (--profile, default: an empty `default deny` one) denies itself.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "commands.h"
#include "learn.h"
#include "learn_agent.h"
#include "session.h"
#include "util.h"

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = sig;
}

/* Strict: a whole positive number of seconds. */
static int parse_seconds(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int cmd_learn(int argc, char **argv)
{
	static const struct option opts[] = {
		{"cgroup", required_argument, NULL, 'c'},   {"profile", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'}, {"output", required_argument, NULL, 'o'},
		{"log", required_argument, NULL, 'l'},	    {"all", no_argument, NULL, 'a'},
		{"verbose", no_argument, NULL, 'v'},	    {},
	};
	const char *cgroup = NULL, *profile = NULL, *output = NULL, *log = NULL;
	struct sigaction sa = {.sa_handler = on_stop};
	struct bw_learn_set *set;
	struct bw_session s;
	char cgdir[PATH_MAX];
	long duration = 0;
	time_t end = 0;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:p:d:o:l:v", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cgroup = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 'd':
			if (parse_seconds(optarg, &duration)) {
				bw_err("--duration wants a whole number of seconds, not '%s'", optarg);
				return 2;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'a':
			bw_err("learn --all (every cgroup of the host) is not in this version yet; "
			       "use --cgroup");
			return 2;
		case 'v':
			bw_verbose = true;
			break;
		default:
			goto usage;
		}
	}
	if (!cgroup || !output || optind != argc)
		goto usage;
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
		s.governing = false;
		bw_session_end(&s);
		bw_learn_free(set);
		return ret;
	}
	s.ev.on_learn = bw_learn_event;
	s.ev.learn_ctx = set;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (duration)
		end = time(NULL) + duration;
	while (!stop && (!end || time(NULL) < end)) {
		bw_events_poll(&s.ev, 200);
		bw_events_check_lost(&s.ev);
	}
	while (bw_events_poll(&s.ev, 0) > 0)
		;
	bw_events_agent(&s.ev, stop ? "learning stopped on signal" : "learning time is up");
	bw_session_end(&s);
	ret = bw_learn_save(set, output, bw_cgroup_rel(cgdir));
	bw_info("learned %zu distinct objects from %llu accesses", bw_learn_count(set),
		(unsigned long long)bw_learn_events(set));
	bw_learn_free(set);
	return ret ? 1 : 0;
usage:
	fprintf(stderr, "usage: bpfwarden learn --cgroup PATH [--profile FILE] [--duration SECONDS] "
			"--output FILE [--log FILE]\n");
	return 2;
}
