// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden run: CMD starts in a fresh cgroup that is governed before the
 * child exists (clone3 with CLONE_INTO_CGROUP), so CMD's first instruction
 * already runs under the profile. When CMD exits, whatever it left behind in
 * the cgroup is killed, the events are drained, and the cgroup and the
 * policy slot are removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ctype.h>

#include "cgroup.h"
#include "learn.h"
#include "learn_agent.h"
#include "commands.h"
#include "session.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: bpfwarden run --profile FILE [--mode enforce|audit|learn] [--log FILE] "
		   "[--event-rate N] [-v] -- CMD [ARG...]\n"
		   "       bpfwarden run --mode learn [--profile FILE] --output PROFILE "
		   "[--min-children N] [--exact] -- CMD [ARG...]\n");
}

/* Start argv in cgdir; *pidfd wakes the event loop when it exits. */
static pid_t spawn_in_cgroup(const char *cgdir, char **argv, int *pidfd)
{
	struct clone_args args = {};
	int cgfd;
	pid_t pid;

	cgfd = open(cgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
	args.exit_signal = SIGCHLD;
	args.cgroup = (__u64)cgfd;
	args.pidfd = (__u64)(uintptr_t)pidfd;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		int ret = -errno;

		close(cgfd);
		return ret;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "bpfwarden: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(cgfd);
	return pid;
}

/* Kill what the command left behind and wait until the cgroup is empty. */
static void empty_cgroup(const char *cgdir)
{
	char path[PATH_MAX + 32], buf[256];
	int i;

	snprintf(path, sizeof(path), "%s/cgroup.events", cgdir);
	for (i = 0; i < 500; i++) {
		if (bw_read_file(path, buf, sizeof(buf)) < 0 || strstr(buf, "populated 0"))
			return;
		if (i == 0) {
			char kill_path[PATH_MAX + 32];

			snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", cgdir);
			bw_write_file(kill_path, "1");
		}
		usleep(10000);
	}
	bw_err("processes are still alive in %s after cgroup.kill", cgdir);
}

static int make_run_cgroup(char *out, size_t len)
{
	char root[PATH_MAX];
	int ret;

	ret = bw_cgroup_root(root, sizeof(root));
	if (ret)
		return ret;
	snprintf(out, len, "%s/bpfwarden", root);
	if (mkdir(out, 0755) && errno != EEXIST)
		return -errno;
	snprintf(out, len, "%s/bpfwarden/run-%d", root, getpid());
	if (mkdir(out, 0755))
		return -errno;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"profile", required_argument, NULL, 'p'},
	    {"mode", required_argument, NULL, 'm'},
	    {"log", required_argument, NULL, 'l'},
	    {"output", required_argument, NULL, 'o'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"event-rate", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    BW_LEARN_OPTIONS,
	    {},
	};
	const char *profile = NULL, *mode = NULL, *log = NULL, *output = NULL;
	struct bw_learn_set *learned = NULL;
	struct bw_session s;
	struct bw_loop loop = {.child_fd = -1};
	char cgdir[PATH_MAX];
	int c, ret, exit_code;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:m:l:o:vhr:M:E", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'v':
			bw_verbose = true;
			break;
		case 'r':
			if (bw_parse_event_rate(optarg))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'M':
		case 'E':
			if (bw_learn_option(c, optarg) < 0)
				return 2;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc || (!profile && !(mode && !strcmp(mode, "learn")))) {
		usage(stderr);
		return 2;
	}
	if (output && !(mode && !strcmp(mode, "learn"))) {
		bw_err("--output writes the learned profile: it needs --mode learn");
		return 2;
	}

	ret = bw_session_prepare(&s, profile, mode, log);
	if (ret) {
		bw_session_end(&s);
		return ret;
	}
	if (output) {
		learned = bw_learn_new();
		if (!learned) {
			bw_session_end(&s);
			return 1;
		}
		s.ev.on_learn = bw_learn_event;
		s.ev.learn_ctx = learned;
	}
	ret = make_run_cgroup(cgdir, sizeof(cgdir));
	if (ret) {
		bw_err("cannot create a cgroup for the command: %s", strerror(-ret));
		bw_session_end(&s);
		return 1;
	}
	if (bw_session_govern(&s, cgdir)) {
		rmdir(cgdir);
		bw_session_end(&s);
		return 1;
	}

	bw_session_signals(true);
	loop.child = spawn_in_cgroup(cgdir, argv + optind, &loop.child_fd);
	if (loop.child < 0) {
		bw_err("cannot start %s in %s: %s", argv[optind], cgdir, strerror(-loop.child));
		exit_code = 1;
	} else {
		bw_session_loop(&s, &loop);
		close(loop.child_fd);
		exit_code = WIFEXITED(loop.child_status)     ? WEXITSTATUS(loop.child_status)
			    : WIFSIGNALED(loop.child_status) ? 128 + WTERMSIG(loop.child_status)
							     : 1;
	}
	empty_cgroup(cgdir);
	/* Ends with a drain: what the last processes did is logged before the slot goes. */
	bw_session_end(&s);
	if (s.ev.denials || s.ev.lost)
		bw_info("%s: %llu denied, %llu events lost", argv[optind],
			(unsigned long long)s.ev.denials, (unsigned long long)s.ev.lost);
	if (rmdir(cgdir))
		bw_err("cannot remove %s: %s", cgdir, strerror(errno));
	if (learned) {
		if (bw_learn_save(learned, output, argv[optind]))
			exit_code = exit_code ? exit_code : 1;
		bw_learn_free(learned);
	}
	return exit_code;
}
