// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden attach / detach: govern an existing cgroup v2 subtree. attach
 * stays in the foreground streaming events; SIGINT or SIGTERM detaches and
 * exits. detach, from another shell, lets the subtree go at once; the
 * attach that governed it notices and exits.
 */
#include <errno.h>
#include <stdint.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "commands.h"
#include "govern.h"
#include "loader.h"
#include "session.h"
#include "util.h"

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cgroup", required_argument, NULL, 'c'},
	    {"profile", required_argument, NULL, 'p'},
	    {"mode", required_argument, NULL, 'm'},
	    {"log", required_argument, NULL, 'l'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"event-rate", required_argument, NULL, 'r'},
	    {},
	};
	const char *cgroup = NULL, *profile = NULL, *mode = NULL, *log = NULL;
	struct bw_loop loop = {.child_fd = -1, .watch = true};
	struct bw_session s;
	char cgdir[PATH_MAX];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:p:m:l:vr:", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cgroup = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'v':
			bw_verbose = true;
			break;
		case 'r':
			if (bw_parse_event_rate(optarg))
				return 2;
			break;
		default:
			goto usage;
		}
	}
	if (!cgroup || !profile || optind != argc)
		goto usage;
	ret = bw_cgroup_resolve(cgroup, cgdir, sizeof(cgdir));
	if (ret) {
		bw_err("%s is not a cgroup v2 directory: %s", cgroup, strerror(-ret));
		return 1;
	}
	ret = bw_session_prepare(&s, profile, mode, log);
	if (!ret && bw_session_govern(&s, cgdir))
		ret = 1;
	if (ret) {
		bw_session_end(&s);
		return ret;
	}
	bw_session_signals(false);
	if (bw_session_loop(&s, &loop) == BW_LOOP_GONE)
		bw_events_agent(&s.ev, "detached by another command or cgroup removed");
	else
		bw_events_agent(&s.ev, "detaching on signal");
	bw_session_end(&s);
	return 0;
usage:
	fprintf(stderr,
		"usage: bpfwarden attach --cgroup PATH --profile FILE [--mode enforce|audit|learn] "
		"[--log FILE] [--event-rate N] [-v]\n");
	return 2;
}

int cmd_detach(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cgroup", required_argument, NULL, 'c'},
	    {"verbose", no_argument, NULL, 'v'},
	    {},
	};
	struct bw_maps m = BW_MAPS_INIT;
	const char *cgroup = NULL;
	char cgdir[PATH_MAX];
	uint32_t slot = UINT32_MAX; /* whichever governs the named cgroup */
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:v", opts, NULL)) != -1) {
		if (c == 'c')
			cgroup = optarg;
		else if (c == 'v')
			bw_verbose = true;
		else
			goto usage;
	}
	if (!cgroup || optind != argc)
		goto usage;
	ret = bw_cgroup_resolve(cgroup, cgdir, sizeof(cgdir));
	if (ret) {
		bw_err("%s is not a cgroup v2 directory: %s", cgroup, strerror(-ret));
		return 1;
	}
	ret = bw_open_pinned(&m);
	if (ret) {
		bw_err("nothing is governed: no pinned state under %s", BW_PIN_ROOT);
		return 1;
	}
	ret = bw_ungovern(&m, cgdir, &slot);
	bw_maps_close(&m);
	if (ret == -ENOENT) {
		bw_err("%s is not governed", cgdir);
		return 1;
	}
	if (ret) {
		bw_err("cannot detach %s: %s", cgdir, strerror(-ret));
		return 1;
	}
	printf("detached %s (policy slot %u)\n", bw_cgroup_rel(cgdir), slot);
	return 0;
usage:
	fprintf(stderr, "usage: bpfwarden detach --cgroup PATH\n");
	return 2;
}

/* bpfwarden mode: switch a governed subtree's mode; each cgroup's entry changes atomically. */
int cmd_mode(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cgroup", required_argument, NULL, 'c'},
	    {},
	};
	struct bw_maps m = BW_MAPS_INIT;
	const char *cgroup = NULL;
	char cgdir[PATH_MAX];
	enum bw_mode mode;
	int c, ret, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		if (c == 'c')
			cgroup = optarg;
		else
			goto usage;
	}
	if (!cgroup || optind != argc - 1 ||
	    bw_mode_parse(argv[optind], strlen(argv[optind]), &mode))
		goto usage;
	ret = bw_cgroup_resolve(cgroup, cgdir, sizeof(cgdir));
	if (ret) {
		bw_err("%s is not a cgroup v2 directory: %s", cgroup, strerror(-ret));
		return 1;
	}
	if (bw_open_pinned(&m)) {
		bw_err("nothing is governed: no pinned state under %s", BW_PIN_ROOT);
		return 1;
	}
	ret = bw_govern_set_mode(&m, cgdir, mode, &n);
	bw_maps_close(&m);
	if (ret) {
		bw_err("%s: %s", cgdir, ret == -ENOENT ? "not governed" : strerror(-ret));
		return 1;
	}
	printf("%s: %s (%d cgroups)\n", bw_cgroup_rel(cgdir), bw_mode_name(mode), n);
	return 0;
usage:
	fprintf(stderr, "usage: bpfwarden mode --cgroup PATH enforce|audit|learn\n");
	return 2;
}
