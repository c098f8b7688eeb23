// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "guard.h"
#include "libdir.h"
#include "probe.h"
#include "rawdevs.h"
#include "session.h"
#include "doors.h"
#include "util.h"

bool bw_compiled_needs_lsm(const struct bw_compiled *c)
{
	return c->nfiles || c->nexecs || c->nunixes || c->policy.default_file != BW_V_ALLOW ||
	       c->policy.default_exec != BW_V_ALLOW || c->policy.exec_memfd_rule;
}

int bw_session_prepare(struct bw_session *s, const struct bw_opts *o)
{
	/* Learning from nothing: everything the workload does is new. */
	static const char learn_text[] = "profile learned\ndefault deny\n";
	const char *profile_path = o->profile ? o->profile : "(built-in learn profile)";
	struct bw_diags diags = {};
	const char *why;
	char err[512];
	int ret;

	memset(s, 0, sizeof(*s));
	s->log_fd = -1;
	s->maps = (struct bw_maps)BW_MAPS_INIT;
	bw_installed_init(&s->in);

	ret = bw_installed_compile(&s->in, profile_path, o->profile ? NULL : learn_text,
				   sizeof(learn_text) - 1, &diags, err, sizeof(err));
	bw_diags_print(stderr, &diags);
	bw_diags_free(&diags);
	if (ret && !s->in.profile) {
		if (ret != -EINVAL)
			bw_err("cannot read profile %s: %s", profile_path, strerror(-ret));
		return 1;
	}
	if (ret) {
		bw_err("%s", err[0] ? err : strerror(-ret));
		return 1;
	}
	/* The command line's, else the profile's (enforce without a mode line). */
	s->mode = o->mode_given ? o->mode : s->in.profile->mode;
	s->in.compiled.policy.event_rate = o->event_rate;

	why = bw_agent_no_lsm();
	if (why && bw_compiled_needs_lsm(&s->in.compiled)) {
		if (bw_caps_missing(BW_NEED_BPF | BW_NEED_LSM))
			bw_err("file, exec and unix socket rules need BPF LSM: %s.", why);
		else
			bw_err("file, exec and unix socket rules need BPF LSM: %s. TCP and UDP "
			       "rules alone are enforced on this kernel (cgroup programs): a "
			       "profile with `default allow file`, `default allow exec` and no "
			       "file, exec or unix rules runs here. `bpfwarden status` shows what "
			       "this kernel supports.",
			       why);
		return 1;
	}
	s->net_only = why != NULL;
	if (bw_agent_start(&s->maps, !why))
		return 1;
	if (bw_installed_install(&s->in, &s->maps, NULL, 0))
		return 1;

	if (o->log && !strcmp(o->log, "-")) {
		s->log_fd =
		    dup(STDOUT_FILENO); /* `--log -`: standard output, as for every command */
	} else if (o->log) {
		s->log_fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (s->log_fd < 0) {
			bw_err("cannot open log %s: %s", o->log, strerror(errno));
			return 1;
		}
	} else {
		s->log_fd = dup(STDERR_FILENO);
	}
	/*
	 * Before the command starts: no sandbox truncates, rewrites or removes
	 * its record. Not standard output or error, which the command shares
	 * (`echo x >/dev/stderr` opens the same file).
	 */
	ret = o->log && strcmp(o->log, "-") ? bw_agent_file_keep(&s->maps, s->log_fd) : 0;
	if (ret) {
		bw_err("cannot keep the log out of the sandbox's reach: %s", strerror(-ret));
		return 1;
	}
	s->in.ev.log_fd = s->log_fd;
	s->in.ev.profile = s->in.profile;
	s->in.ev.slot = s->in.slot.id;
	s->in.ev.maps = &s->maps;
	s->in.ev.kill_on_deny = s->in.compiled.policy.on_deny == BW_ON_DENY_KILL;
	ret = bw_installed_events(&s->in);
	if (ret) {
		bw_err("cannot read the event ring buffer: %s", strerror(-ret));
		return 1;
	}
	return 0;
}

/*
 * A task of the subtree holding a descriptor that moves tasks (user/doors.h):
 * in enforce mode the subtree is not governed (the caller ends the session,
 * which lets it go); in audit and learn modes, which refuse nothing, the
 * log says what goes unseen.
 */
static int held_doors(struct bw_session *s, const char *cgdir)
{
	char what[PATH_MAX + 96], msg[PATH_MAX + 512];
	int ret;

	if (s->net_only || s->in.compiled.policy.ns[BW_NS_CGROUP] == BW_V_ALLOW)
		return 0;
	ret = bw_door_in_cgroup(cgdir, true, what, sizeof(what));
	if (!ret)
		return 0;
	if (ret < 0) {
		bw_err("cannot read the descriptors of the tasks in %s: %s%s%s", cgdir,
		       strerror(-ret), ret == -EAGAIN ? ": " : "", ret == -EAGAIN ? what : "");
		return ret;
	}
	if (s->mode != BW_MODE_ENFORCE) {
		snprintf(msg, sizeof(msg),
			 "%s holds a cgroup.procs or cgroup.threads open for writing (%s): moves "
			 "of tasks through it are not seen",
			 bw_cgroup_rel(cgdir), what);
		bw_events_agent(&s->in.ev, msg);
		return 0;
	}
	bw_err("not governing %s: %s, open for writing, would let its tasks leave their cgroup "
	       "(close it first, or allow moves between the sandbox's own cgroups with `allow "
	       "cgroup`, which lets the kernel check every move)",
	       cgdir, what);
	return -EPERM;
}

int bw_session_govern(struct bw_session *s, const char *cgdir)
{
	const char *unrefused = s->net_only ? NULL : bw_view_unrefused();
	struct bw_cgroup cur;
	char msg[PATH_MAX + 1536], was[64] = "";
	uint32_t replaced = 0;
	int ret;

	snprintf(s->cgdir, sizeof(s->cgdir), "%s", cgdir);
	snprintf(s->in.ev.cgroup_dir, sizeof(s->in.ev.cgroup_dir), "%s", cgdir);
	ret = bw_cgroup_id(cgdir, &s->in.ev.cgroup_id);
	if (ret) {
		bw_err("cannot identify cgroup %s: %s", cgdir, strerror(-ret));
		return ret;
	}
	ret = bw_govern(&s->maps, cgdir, s->in.slot.id, s->mode, &cur);
	if (ret == -EEXIST && s->replace) {
		ret = bw_govern_replace(&s->maps, cgdir, s->in.slot.id, s->mode, &replaced);
		/* Let go meanwhile: govern it afresh. */
		if (ret == -ENOENT)
			ret = bw_govern(&s->maps, cgdir, s->in.slot.id, s->mode, &cur);
		else if (!ret)
			snprintf(was, sizeof(was), "; replaced the profile of policy slot %u",
				 replaced);
	}
	if (ret == -EEXIST) {
		bw_err("%s is already governed (policy slot %u): detach it first, or attach "
		       "--replace",
		       cgdir, cur.policy);
		return ret;
	}
	/* A walk stopped half way leaves entries: bw_session_end lets them go. */
	s->governing = true;
	if (ret)
		return ret;
	ret = held_doors(s, cgdir);
	if (ret)
		return ret;
	snprintf(msg, sizeof(msg),
		 "governing %s with profile %s in %s mode (%zu file keys, %zu exec keys, %zu net "
		 "keys, %zu inode pins, %zu positions%s%s%s%s%s)",
		 bw_cgroup_rel(cgdir), s->in.profile->name, bw_mode_name(s->mode),
		 s->in.compiled.nfiles, s->in.compiled.nexecs, s->in.compiled.nnets,
		 s->in.slot.pins_resolved, s->in.slot.positions,
		 s->net_only ? "; no BPF LSM on this kernel: tcp and udp rules only, and packet "
			       "and unix sockets are not refused, nor are other socket families, "
			       "UDP-Lite connects, datagrams of sockets connected before a profile "
			       "change, the host's network configuration, mounts, chroot, new user "
			       "namespaces and moves out of the governed cgroup"
			     : "",
		 s->in.slot.link_scan_incomplete
		     ? "; the hard-link scan of denied directories stopped at its bound: other "
		       "names of files deep inside them are not pinned"
		     : "",
		 unrefused ? "; not refused on this kernel: " : "", unrefused ? unrefused : "",
		 was);
	bw_events_agent(&s->in.ev, msg);
	return 0;
}

void bw_session_drain(struct bw_session *s)
{
	bw_installed_drain(&s->in);
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* BW_NUDGE_SIGNAL: another command changed what governs our cgroup; the wake-up is all. */
static void on_nudge(int sig)
{
}

void bw_session_signals(bool for_child)
{
	/* No SA_RESTART: ppoll(2) returns EINTR (it is never restarted anyway). */
	struct sigaction sa = {.sa_handler = on_signal}, nudge = {.sa_handler = on_nudge};

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(BW_NUDGE_SIGNAL, &nudge, NULL);
	if (for_child)
		signal(SIGINT, SIG_IGN);
	else
		sigaction(SIGINT, &sa, NULL);
}

/* Is the session's cgroup still there and governed by its slot? */
static bool still_ours(struct bw_session *s)
{
	struct bw_cgroup v;

	return !access(s->cgdir, F_OK) && !bw_governor(&s->maps, s->in.ev.cgroup_id, &v) &&
	       v.policy == s->in.slot.id;
}

/*
 * The removal of the session's cgroup, seen by inotify: rmdir (or a rename)
 * is told to the parent directory. The cgroup's own watch says nothing on
 * cgroup2 (no IN_DELETE_SELF: the watch keeps the inode), so the parent is
 * watched; a sibling's removal wakes the loop too, which looks and sleeps.
 */
static int watch_removal(const char *cgdir)
{
	char parent[PATH_MAX], *slash;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0)
		return -1;
	snprintf(parent, sizeof(parent), "%s", cgdir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (inotify_add_watch(fd, parent, IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_ONLYDIR) <
	    0) {
		bw_dbg("cannot watch %s: %s", parent, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void drain_fd(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

long bw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

void bw_loop_signals_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, BW_NUDGE_SIGNAL);
	sigprocmask(SIG_BLOCK, &set, old);
}

int bw_loop_sleep(struct pollfd *fds, nfds_t n, long deadline_ms, const sigset_t *old)
{
	struct timespec ts, *tp = NULL;

	if (deadline_ms) {
		long left = deadline_ms - bw_now_ms();

		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000L;
		tp = &ts;
	}
	return ppoll(fds, n, tp, old);
}

long bw_lost_deadline(long deadline_ms, long recheck_ms)
{
	if (!recheck_ms)
		return deadline_ms;
	return !deadline_ms || recheck_ms < deadline_ms ? recheck_ms : deadline_ms;
}

/* The mount table changed: the block devices that hold the host's files again. */
static void rawdevs_resync(struct bw_session *s)
{
	int ret = bw_lock(&s->maps);

	if (!ret) {
		ret = bw_rawdevs_sync(&s->maps);
		bw_unlock(&s->maps);
	}
	if (ret)
		bw_events_agent(&s->in.ev,
				"cannot list the block devices that hold the host's files "
				"after a mount change");
}

int bw_session_loop(struct bw_session *s, struct bw_loop *l)
{
	struct pollfd fds[4] = {
	    {.fd = ring_buffer__epoll_fd(s->in.ev.rb), .events = POLLIN},
	    {.fd = l->child > 0 ? l->child_fd : -1, .events = POLLIN},
	    {.fd = l->watch ? watch_removal(s->cgdir) : -1, .events = POLLIN},
	    /* A file system mounted later is on the list from the moment it is. */
	    {.fd = bw_rawdevs_watch(), .events = POLLPRI},
	};
	long end = l->duration ? bw_now_ms() + l->duration * 1000L : 0, recheck = 0;
	sigset_t old;
	int why = 0;

	/*
	 * The signals are blocked but while asleep in ppoll: one that comes
	 * while the loop looks is pending, and ends the next sleep at once.
	 */
	bw_loop_signals_block(&old);
	for (;;) {
		if (fds[2].fd >= 0)
			drain_fd(fds[2].fd);
		if (fds[3].revents & (POLLPRI | POLLERR)) {
			bw_rawdevs_rearm(fds[3].fd);
			rawdevs_resync(s);
		}
		if (bw_events_poll(&s->in.ev, 0) > 0)
			recheck = bw_now_ms() + BW_LOST_RECHECK_MS;
		else if (recheck && bw_now_ms() >= recheck)
			recheck = 0;
		bw_events_check_lost(&s->in.ev);
		if (stop_signal && l->child > 0) {
			kill(l->child, stop_signal);
			stop_signal = 0;
		} else if (stop_signal) {
			l->signal = stop_signal;
			why = BW_LOOP_SIGNAL;
		}
		if (l->child > 0) {
			pid_t r = waitpid(l->child, &l->child_status, WNOHANG);

			if (r == l->child || (r < 0 && errno != EINTR))
				why = BW_LOOP_CHILD;
		}
		if (end && bw_now_ms() >= end)
			why = BW_LOOP_TIME;
		if (l->watch && !still_ours(s)) {
			/* Whoever let it go has removed our entries. */
			s->governing = false;
			why = BW_LOOP_GONE;
		}
		if (l->tick && l->tick(s, l->arg))
			why = BW_LOOP_TICK;
		if (why)
			break;
		/*
		 * No inotify (its watches used up) or no pidfd: the removal, or
		 * the child's exit, is looked for every 2 s.
		 */
		if (((l->watch && fds[2].fd < 0) || (l->child > 0 && fds[1].fd < 0)) && !recheck)
			recheck = bw_now_ms() + BW_LOST_RECHECK_MS;
		bw_loop_sleep(fds, 4, bw_lost_deadline(end, recheck), &old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fds[2].fd >= 0)
		close(fds[2].fd);
	if (fds[3].fd >= 0)
		close(fds[3].fd);
	bw_session_drain(s);
	return why;
}

void bw_session_end(struct bw_session *s)
{
	bw_session_drain(s);
	if (s->governing && !access(s->cgdir, F_OK)) {
		uint32_t slot = s->in.slot.id;
		int ret = bw_ungovern(&s->maps, s->cgdir, &slot);

		/* -ENOENT: let go already (detach, or the cgroup went with its last process). */
		if (ret && ret != -ENOENT)
			bw_err("cannot let %s go: %s (it stays governed; `bpfwarden detach` it)",
			       s->cgdir, strerror(-ret));
	}
	/* Another command may have re-governed cgroups with our slot; it stays then. */
	bw_installed_put(&s->in, &s->maps);
	bw_installed_free(&s->in);
	if (s->log_fd >= 0)
		close(s->log_fd);
	bw_maps_close(&s->maps);
	if (s->maps.lock_fd >= 0)
		close(s->maps.lock_fd);
	bw_agent_unregister();
}
