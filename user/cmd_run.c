// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden run: CMD starts in a fresh cgroup that is governed before the
 * child exists (clone3 with CLONE_INTO_CGROUP), so CMD's first instruction
 * already runs under the profile, in a mount namespace of its own. When CMD
 * exits, whatever it left behind in the cgroup is killed, the events are
 * drained, and the cgroup and the policy slot are removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ctype.h>
#include <sched.h>

#include "cgroup.h"
#include "cli.h"
#include "learn.h"
#include "learn_agent.h"
#include "learn_names.h"
#include "session.h"
#include "doors.h"
#include "util.h"

/*
 * The launcher, a child outside the governed cgroup: gives itself a mount
 * namespace whose mounts are slaves of ours (the host's mounts still reach
 * the command; its own never reach the host, so a profile's `allow mount`
 * changes the sandbox's view only), then starts argv in cgdir as our child
 * (CLONE_PARENT) and writes its pid, or a negative errno, to out. Making the
 * mounts slaves is itself a mount change: done by the command, the profile
 * would decide it.
 */
static void launch(int cgfd, char **argv, int out)
{
	struct clone_args args = {};
	int ret;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) {
		ret = -errno;
		goto out;
	}
	/* Its exit signal is ours, SIGCHLD: clone3 wants none with CLONE_PARENT. */
	args.flags = CLONE_INTO_CGROUP | CLONE_PARENT;
	args.cgroup = (__u64)cgfd;
	ret = syscall(SYS_clone3, &args, sizeof(args));
	if (ret < 0) {
		ret = -errno;
	} else if (ret == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		ret = errno;
		fprintf(stderr, "bpfwarden: cannot run %s: %s\n", argv[0], strerror(ret));
		_exit(ret == ENOENT || ret == ENOTDIR ? BW_EXIT_NOT_FOUND : BW_EXIT_CANNOT_RUN);
	}
out:
	_exit(write(out, &ret, sizeof(ret)) == sizeof(ret) ? 0 : 1);
}

/* Start argv in cgdir (through launch); *pidfd wakes the event loop when it exits. */
static pid_t spawn_in_cgroup(const char *cgdir, char **argv, int *pidfd)
{
	int cgfd, pipefd[2], ret = -ECHILD;
	pid_t launcher;

	cgfd = open(cgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return -errno;
	if (pipe2(pipefd, O_CLOEXEC)) {
		ret = -errno;
		goto out_cg;
	}
	launcher = fork();
	if (launcher < 0) {
		ret = -errno;
		goto out_pipe;
	}
	if (launcher == 0)
		launch(cgfd, argv, pipefd[1]);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (read(pipefd[0], &ret, sizeof(ret)) != sizeof(ret))
		ret = -ECHILD;
	waitpid(launcher, NULL, 0);
	if (ret > 0) {
		/* Our child now: its pid cannot be reused before we reap it. */
		*pidfd = syscall(SYS_pidfd_open, ret, 0);
		if (*pidfd < 0) {
			int err = -errno;

			kill(ret, SIGKILL);
			waitpid(ret, NULL, 0);
			ret = err;
		}
	} else if (ret == 0) {
		ret = -ECHILD;
	}
out_pipe:
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
out_cg:
	close(cgfd);
	return ret;
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

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	/* Depth first: a cgroup's children are gone by the time it comes. */
	if (type == FTW_DP && ftw->level > 0 && rmdir(path))
		bw_dbg("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

/* The command's cgroup and those it made below it (cgroup.kill has emptied them all). */
static int remove_cgroup_tree(const char *cgdir)
{
	nftw(cgdir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	return rmdir(cgdir) ? -errno : 0;
}

/*
 * Can the caller's own cgroup take the command's below it? Not the root
 * (the old place, <cgroup2>/bpfwarden, is kept for callers there), and a
 * domain: a threaded cgroup's children take no new process.
 */
static bool caller_cgroup_fits(const char *self, const char *root)
{
	char path[PATH_MAX + 16], type[32];

	if (!strcmp(self, root))
		return false;
	snprintf(path, sizeof(path), "%s/cgroup.type", self);
	return bw_read_file(path, type, sizeof(type)) > 0 && !strcmp(type, "domain\n");
}

/*
 * The command's cgroup goes below the caller's own when it may, so that the
 * command stays in the caller's systemd unit or scope, a CI job's cgroup, a
 * container: the limits set there (MemoryMax=, TasksMax=, pids.max) and its
 * end (KillMode=, cgroup.kill) reach the command, and the subtree's owner
 * sees it as its own. Else (the caller in the root cgroup or a threaded one,
 * or a mkdir refused there: cgroup.max.descendants, cgroup.max.depth, a
 * read-only cgroup mount) at <cgroup2>/bpfwarden, outside every unit.
 */
static int make_run_cgroup(char *out, size_t len)
{
	char root[PATH_MAX], self[PATH_MAX];
	int ret;

	ret = bw_cgroup_root(root, sizeof(root));
	if (ret)
		return ret;
	if (!bw_cgroup_self(self, sizeof(self)) && caller_cgroup_fits(self, root)) {
		errno = ENAMETOOLONG;
		if ((size_t)snprintf(out, len, "%s/bpfwarden-run-%d", self, getpid()) < len &&
		    !mkdir(out, 0755)) {
			bw_dbg("the command's cgroup: %s, below this process's own",
			       bw_cgroup_rel(out));
			return 0;
		}
		bw_dbg("cannot make a cgroup below this process's own, %s (%s): the command's goes "
		       "under /bpfwarden",
		       bw_cgroup_rel(self), strerror(errno));
	}
	snprintf(out, len, "%s/bpfwarden", root);
	if (mkdir(out, 0755) && errno != EEXIST)
		return -errno;
	snprintf(out, len, "%s/bpfwarden/run-%d", root, getpid());
	if (mkdir(out, 0755))
		return -errno;
	bw_dbg("the command's cgroup: %s", bw_cgroup_rel(out));
	return 0;
}

/*
 * The command inherits this process's descriptors but the close-on-exec
 * ones: one that moves tasks would be its way out (user/doors.h).
 */
static int inherited_doors(struct bw_session *s)
{
	char what[PATH_MAX + 96], msg[PATH_MAX + 256];
	int ret;

	if (s->net_only || s->in.compiled.policy.ns[BW_NS_CGROUP] == BW_V_ALLOW)
		return 0;
	ret = bw_door_in_task(getpid(), false, what, sizeof(what));
	if (ret < 0) {
		bw_err("cannot read this process's descriptors: %s", strerror(-ret));
		return ret;
	}
	if (!ret)
		return 0;
	if (s->mode != BW_MODE_ENFORCE) {
		snprintf(msg, sizeof(msg),
			 "the command inherits %s, open for writing: moves of tasks through it "
			 "are not seen",
			 what);
		bw_events_agent(&s->in.ev, msg);
		return 0;
	}
	bw_err("not starting the command: it would inherit %s, open for writing, and could "
	       "leave its cgroup through it (close it first, or allow moves between the "
	       "sandbox's own cgroups with `allow cgroup`, which lets the kernel check every "
	       "move)",
	       what);
	return -EPERM;
}

static int run(struct bw_opts *o)
{
	struct bw_learn_set *learned = NULL;
	struct bw_profile *start = NULL;
	struct bw_session s;
	struct bw_loop loop = {.child_fd = -1};
	char cgdir[PATH_MAX], **argv = o->args;
	int ret, exit_code;

	ret = bw_session_prepare(&s, o);
	if (ret) {
		bw_session_end(&s);
		return BW_EXIT_RUN_FAILED;
	}
	if (o->output) {
		learned = bw_learn_new();
		if (!learned) {
			bw_session_end(&s);
			return BW_EXIT_RUN_FAILED;
		}
		s.in.ev.on_learn = bw_learn_event;
		s.in.ev.learn_ctx = learned;
	}
	ret = make_run_cgroup(cgdir, sizeof(cgdir));
	if (ret) {
		bw_err("cannot create a cgroup for the command: %s", strerror(-ret));
		bw_session_end(&s);
		return BW_EXIT_RUN_FAILED;
	}
	if (bw_session_govern(&s, cgdir)) {
		rmdir(cgdir);
		bw_session_end(&s);
		return BW_EXIT_RUN_FAILED;
	}

	bw_session_signals(true);
	ret = inherited_doors(&s);
	loop.child = ret ? ret : spawn_in_cgroup(cgdir, argv, &loop.child_fd);
	if (ret) {
		exit_code = BW_EXIT_RUN_FAILED;
	} else if (loop.child < 0) {
		bw_err("cannot start %s in %s: %s", argv[0], cgdir, strerror(-loop.child));
		exit_code = BW_EXIT_RUN_FAILED;
	} else {
		bw_session_loop(&s, &loop);
		close(loop.child_fd);
		exit_code = WIFEXITED(loop.child_status)     ? WEXITSTATUS(loop.child_status)
			    : WIFSIGNALED(loop.child_status) ? 128 + WTERMSIG(loop.child_status)
							     : 1;
	}
	empty_cgroup(cgdir);
	/* Learning from an operator's profile: kept, the learned one starts from it. */
	if (learned && o->profile) {
		start = s.in.profile;
		s.in.profile = NULL;
	}
	/* Ends with a drain: what the last processes did is logged before the slot goes. */
	bw_session_end(&s);
	/* Throttled events are counted, not lost to the ring buffer: told apart. */
	if (s.in.ev.denials || s.in.ev.lost)
		bw_info("%s: %llu denied, %llu events lost (ring buffer full), %llu throttled "
			"(--event-rate)",
			argv[0], (unsigned long long)s.in.ev.denials,
			(unsigned long long)s.in.ev.lost_reported,
			(unsigned long long)s.in.ev.throttled_reported);
	ret = remove_cgroup_tree(cgdir);
	if (ret)
		bw_err("cannot remove %s: %s", cgdir, strerror(-ret));
	if (learned) {
		bw_learn_min_children = o->min_children;
		bw_learn_flags = o->learn_flags;
		if (bw_learn_save(learned, o->output,
				  start				? NULL
				  : bw_learn_command_name(argv) ? bw_learn_command_name(argv)
								: argv[0],
				  (const struct bw_profile *const *)&start, start ? 1 : 0))
			exit_code = exit_code ? exit_code : BW_EXIT_RUN_FAILED;
		bw_learn_free(learned);
	}
	bw_profile_free(start);
	return exit_code;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;
	bool learn = o->mode_given && o->mode == BW_MODE_LEARN;

	if (key != ARGP_KEY_END)
		return bw_parse_opt(key, arg, st);
	if (!o->nargs)
		argp_error(st, "no command to run");
	else if (!o->profile && !learn)
		argp_error(st, "--profile is needed (learning from nothing: --mode learn)");
	else if (o->output && !learn)
		argp_error(st, "--output writes the learned profile: it needs --mode learn");
	else
		return bw_parse_opt(key, arg, st);
	return EINVAL;
}

static const struct argp_option options[] = {
    BW_OPT_PROFILE, BW_OPT_MODE,   BW_OPT_LOG,	   BW_OPT_EVENT_RATE,
    BW_OPT_OUTPUT,  BW_OPTS_LEARN, BW_OPTS_COMMON,
};

static const struct argp argp = {
    options, parse, "-- CMD [ARG...]",
    "Run a command under a profile. CMD starts in a new cgroup, governed before CMD's first "
    "instruction: below the caller's own cgroup, so that the caller's unit or scope still "
    "limits and ends it, or under /bpfwarden when the caller's is the root or cannot take a "
    "child (--verbose says which); when it exits, the cgroup is emptied and removed, and the "
    "exit status is CMD's (128+N if a signal N ended it); bpfwarden's own failure is 125, a CMD "
    "that cannot run or that the profile refuses 126, a CMD not found 127.\v"
    "With --mode learn, nothing is blocked but what the profile denies, and --output writes "
    "what CMD did as a profile. The first argument that is not an option starts CMD."};

const struct bw_command bw_cmd_run = {"run", &argp, run, ARGP_IN_ORDER, BW_EXIT_RUN_FAILED};
