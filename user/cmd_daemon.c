// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden daemon: the node agent (user/daemon/daemon.h says what its
 * parts do). It loads and pins the BPF side once, installs every profile of
 * --policy-dir, serves bpfwarden-hook on its socket, and writes the events
 * of every governed container as JSON Lines to standard output (what log
 * collectors read from a pod) or to --log FILE, reopened on SIGHUP. It
 * stops on SIGTERM or SIGINT and leaves everything it governs governed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "cli.h"
#include "daemon.h"
#include "guard.h"
#include "learn_agent.h"
#include "probe.h"
#include "rawdevs.h"
#include "session.h"
#include "util.h"

#define DEFAULT_STATE_DIR "/run/containerd/io.containerd.runtime.v2.task"
#define DEFAULT_LEARN_DIR "/var/lib/bpfwarden/learned"

static volatile sig_atomic_t stop_sig, hup;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void on_hup(int sig)
{
	hup = 1;
}

static int open_log(const char *path)
{
	int fd;

	if (!path)
		return dup(STDOUT_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		bw_err("cannot open log %s: %s", path, strerror(errno));
	return fd;
}

/* A DaemonSet's pods are named DAEMONSET-XXXXX: the prefix names all of them. */
static void agent_identity(struct daemon *d)
{
	const char *ns = getenv("POD_NAMESPACE"), *pod = getenv("POD_NAME");
	const char *dash;

	if (!ns || !*ns || !pod || !*pod)
		return;
	d->agent_ns = ns;
	dash = strrchr(pod, '-');
	snprintf(d->agent_prefix, sizeof(d->agent_prefix), "%.*s",
		 (int)(dash && dash != pod ? dash - pod + 1 : (long)strlen(pod)), pod);
}

/* Read what inotify says; any change in the directory means: read it again. */
static int drain_inotify(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int changed = 0;

	while (read(fd, buf, sizeof(buf)) > 0)
		changed = 1;
	return changed;
}

/*
 * Asleep in ppoll with no timeout until something happens (the loop of
 * bw_session_loop, user/session.h): a hook request, a metrics scrape, the
 * policy directory changed, a container's cgroup removed (d->cg_watch), an
 * event of a profile, a signal. After events, one more look at the lost
 * counts BW_LOST_RECHECK_MS later.
 */
static void loop(struct daemon *d, int lfd, int ifd, int mfd)
{
	long recheck = 0, reap_at = 0, watchdog_ms = d_notify_watchdog_ms(), ping_at = 0;
	long services_at = 0, learn_at = 0;
	int mounts = bw_rawdevs_watch();
	bool moving = false, dir_changed = false;
	sigset_t old;

	bw_loop_signals_block(&old);
	while (!stop_sig) {
		struct pollfd fds[5 + D_METRICS_CONNS + BW_MAX_POLICIES * 2];
		size_t n = 0, i, nm, k;
		long deadline;
		bool read_events = false;

		fds[n++] = (struct pollfd){.fd = lfd, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = ifd, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = mfd, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = d->cg_watch, .events = POLLIN};
		/* A file system mounted later is on the raw-device list from the moment it is. */
		fds[n++] = (struct pollfd){.fd = mounts, .events = POLLPRI};
		/* Metrics clients: each served as its socket allows, none waited on. */
		nm = d_metrics_pollfds(d, fds + n);
		n += nm;
		for (i = 0; i < d->nprofiles && n + 1 < sizeof(fds) / sizeof(fds[0]); i++) {
			struct d_profile *p = d->profiles[i];

			if (p->in.events_open)
				fds[n++] = (struct pollfd){.fd = ring_buffer__epoll_fd(p->in.ev.rb),
							   .events = POLLIN};
			if (p->former && p->former->in.events_open)
				fds[n++] = (struct pollfd){
				    .fd = ring_buffer__epoll_fd(p->former->in.ev.rb),
				    .events = POLLIN};
		}
		if (d->reap_poll && !reap_at)
			reap_at = bw_now_ms() + 1000;
		deadline = bw_lost_deadline(reap_at, recheck);
		/* Selected cgroups the kernel had no room for are told within a second. */
		if (d->nservice_sels && !services_at)
			services_at = bw_now_ms() + 1000;
		if (services_at && (!deadline || services_at < deadline))
			deadline = services_at;
		/* Learned profiles of what is gone are written within a second. */
		if (d->nlearned && !learn_at)
			learn_at = bw_now_ms() + 1000;
		if (learn_at && (!deadline || learn_at < deadline))
			deadline = learn_at;
		if (d_metrics_deadline(d) && (!deadline || d_metrics_deadline(d) < deadline))
			deadline = d_metrics_deadline(d);
		if (moving)
			deadline = bw_now_ms();
		/*
		 * The watchdog is fed only from here: a loop held anywhere (a
		 * hook request, a profile load) misses it, and the manager
		 * restarts the daemon; what it governs stays governed.
		 */
		if (watchdog_ms) {
			if (bw_now_ms() >= ping_at) {
				d_notify("WATCHDOG=1");
				ping_at = bw_now_ms() + watchdog_ms;
			}
			if (!deadline || ping_at < deadline)
				deadline = ping_at;
		}
		bw_loop_sleep(fds, n, deadline, &old);
		/* A new turn: the next /metrics text is made anew (metrics.c). */
		d_metrics_changed(d);
		/*
		 * Every request waiting now, before anything else the turn does
		 * (a profile reload costs a moment per container): a start storm
		 * is answered in one turn, not one container per turn. Bounded,
		 * so that the rest of the loop still runs under a flood.
		 */
		for (k = 0; (fds[0].revents & POLLIN) && k < D_HOOKS_PER_TURN; k++)
			if (d_server_accept(d, lfd))
				break;
		if ((fds[1].revents & POLLIN) && drain_inotify(ifd))
			dir_changed = true;
		/* One version at a time: a change waits until the last one's containers moved. */
		if (dir_changed && !moving) {
			dir_changed = false;
			d_profiles_load(d);
		}
		d_metrics_io(d, fds + 5, nm);
		if (fds[2].revents & POLLIN)
			d_metrics_accept(d, mfd);
		if (fds[4].revents & (POLLPRI | POLLERR)) {
			bw_rawdevs_rearm(mounts);
			if (!bw_lock(&d->maps)) {
				if (bw_rawdevs_sync(&d->maps))
					d_agent(d, NULL,
						"cannot list the block devices that hold the "
						"host's files after a mount change");
				bw_unlock(&d->maps);
			}
		}
		for (i = 0; i < d->nprofiles; i++) {
			struct bw_installed *in[2] = {
			    &d->profiles[i]->in,
			    d->profiles[i]->former ? &d->profiles[i]->former->in : NULL};

			for (k = 0; k < 2; k++) {
				if (!in[k] || !in[k]->events_open)
					continue;
				if (bw_events_poll(&in[k]->ev, 0) > 0)
					read_events = true;
				bw_events_check_lost(&in[k]->ev);
			}
		}
		/* A few containers to a profile's new version; the rest next turn, at once. */
		moving = d_profiles_progress(d);
		if (read_events)
			recheck = bw_now_ms() + BW_LOST_RECHECK_MS;
		else if (recheck && bw_now_ms() >= recheck)
			recheck = 0;
		if (hup) {
			int fd = open_log(d->log);

			hup = 0;
			/* Every writer keeps its descriptor: the file under it changes. */
			if (fd >= 0 && d->log) {
				dup2(fd, d->log_fd);
				d_agent(d, NULL, "log reopened on SIGHUP");
				if (bw_agent_file_keep(&d->maps, d->log_fd))
					d_agent(d, NULL,
						"the reopened log is not kept from the containers");
			}
			if (fd >= 0)
				close(fd);
		}
		if (services_at && bw_now_ms() >= services_at) {
			d_services_check(d);
			services_at = 0;
		}
		if (((fds[3].revents & POLLIN) && drain_inotify(d->cg_watch)) ||
		    (reap_at && bw_now_ms() >= reap_at)) {
			d_containers_reap(d);
			reap_at = 0;
			learn_at = bw_now_ms();
		}
		if (learn_at && bw_now_ms() >= learn_at) {
			d_learn_flush(d, false);
			learn_at = 0;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (mounts >= 0)
		close(mounts);
	d_metrics_close_all(d);
}

static int daemon_main(struct bw_opts *o)
{
	struct daemon d = {.maps = BW_MAPS_INIT, .log_fd = -1, .stats_fd = -1, .cg_watch = -1};
	struct sigaction stop = {.sa_handler = on_stop}, hupa = {.sa_handler = on_hup};
	const char *why;
	int lfd = -1, ifd = -1, mfd = -1, ret = 1;
	char sel[PATH_MAX], *slash;

	for (size_t i = 0; i < D_METRICS_CONNS; i++)
		d.mconns[i].fd = -1;
	if (d_notify_init())
		return 1;
	d.dir = o->policy_dir;
	d.log = o->log && strcmp(o->log, "-") ? o->log : NULL;
	d.socket = o->socket ? o->socket : BW_HOOK_SOCKET;
	d.state_dir = o->runtime_state ? o->runtime_state : DEFAULT_STATE_DIR;
	d.per_pod_metrics = o->per_pod_metrics;
	d.learn_dir = o->learn_dir ? o->learn_dir : DEFAULT_LEARN_DIR;
	/* One list per container would bury the log's readers in standard error. */
	bw_learn_tell_widenings = false;
	/* The selectors go next to the socket: the hook finds both in one place. */
	snprintf(sel, sizeof(sel), "%s", d.socket);
	slash = strrchr(sel, '/');
	snprintf(slash ? slash + 1 : sel, sizeof(sel) - (slash ? slash + 1 - sel : 0), "selectors");
	d.selectors_file = sel;
	agent_identity(&d);
	d.log_fd = open_log(d.log);
	if (d.log_fd < 0)
		return 1;
	if (bw_cgroup_root(d.cgroot, sizeof(d.cgroot))) {
		bw_err("no cgroup2 file system is mounted");
		goto out;
	}
	why = bw_agent_no_lsm();
	d.lsm = !why;
	if (why)
		bw_info(
		    "no BPF LSM (%s): profiles with file, exec or unix socket rules are refused",
		    why);
	/* Before any container is governed: none of them can reach this process. */
	if (bw_agent_start(&d.maps, d.lsm))
		goto out;
	ret = d.log ? bw_agent_file_keep(&d.maps, d.log_fd) : 0;
	if (ret) {
		bw_err("cannot keep the log out of the containers' reach: %s", strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = 1;
	if (o->bpf_stats) {
		d.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (d.stats_fd < 0)
			bw_err("cannot turn on the kernel's BPF statistics: %s", strerror(errno));
	}
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0 || inotify_add_watch(ifd, d.dir,
					 IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
					     IN_CLOSE_WRITE | IN_ATTRIB) < 0) {
		bw_err("cannot watch %s: %s", d.dir, strerror(errno));
		goto out;
	}
	d.cg_watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	d_profiles_load(&d);
	d_containers_recover(&d);
	lfd = d_server_open(&d);
	if (lfd < 0) {
		bw_err("cannot listen on %s: %s", d.socket, strerror(-lfd));
		goto out;
	}
	if (o->metrics_addr) {
		mfd = d_metrics_open(o->metrics_addr);
		if (mfd < 0) {
			if (mfd == -EINVAL)
				bw_err("--metrics-addr %s: want HOST:PORT, [V6]:PORT or :PORT, the "
				       "host numeric and the port from 1 to 65535",
				       o->metrics_addr);
			else
				bw_err("cannot serve metrics on %s: %s", o->metrics_addr,
				       strerror(-mfd));
			goto out;
		}
	}
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGHUP, &hupa, NULL);
	signal(SIGPIPE, SIG_IGN);
	d_agent(
	    &d, NULL,
	    "daemon started: %zu profiles from %s, %zu containers taken over, hook socket %s%s%s",
	    d.nprofiles, d.dir, d.ncontainers, d.socket, mfd >= 0 ? ", metrics on " : "",
	    mfd >= 0 ? o->metrics_addr : "");
	/* Ready: the hook is answered from here on (Type=notify holds the runtime till then). */
	ret = d_notify("READY=1\nSTATUS=%zu profiles, %zu containers governed", d.nprofiles,
		       d.ncontainers);
	if (ret)
		bw_err("cannot tell the service manager it is ready: %s", strerror(-ret));
	ret = 1;
	loop(&d, lfd, ifd, mfd);
	d_notify("STOPPING=1");
	d_learn_flush(&d, true);
	d_profiles_release_idle(&d);
	d_agent(&d, NULL, "daemon stopping on signal %d: what it governs stays governed",
		(int)stop_sig);
	ret = 0;
out:
	if (lfd >= 0) {
		close(lfd);
		unlink(d.socket);
	}
	if (mfd >= 0)
		close(mfd);
	if (ifd >= 0)
		close(ifd);
	if (d.cg_watch >= 0)
		close(d.cg_watch);
	if (d.stats_fd >= 0)
		close(d.stats_fd);
	d_containers_free(&d);
	d_profiles_free(&d);
	bw_maps_close(&d.maps);
	if (d.maps.lock_fd >= 0)
		close(d.maps.lock_fd);
	close(d.log_fd);
	return ret;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;

	if (key == ARGP_KEY_END && !o->policy_dir) {
		argp_error(st, "--policy-dir is needed");
		return EINVAL;
	}
	return bw_parse_opt(key, arg, st);
}

static const struct argp_option options[] = {
    {"policy-dir", BW_KEY_POLICY_DIR, "DIR", 0,
     "The profiles (*.profile; a mounted ConfigMap), watched for changes", 0},
    {"log", 'l', "FILE", 0,
     "Append the audit log (JSON Lines) to FILE, reopened on SIGHUP; - or none: standard "
     "output",
     0},
    {"metrics-addr", BW_KEY_METRICS_ADDR, "ADDR", 0,
     "Serve Prometheus metrics (/metrics) and /healthz on ADDR (HOST:PORT or :PORT)", 0},
    {"socket", BW_KEY_SOCKET, "PATH", 0,
     "The socket bpfwarden-hook asks on (default " BW_HOOK_SOCKET ")", 0},
    {"runtime-state", BW_KEY_RUNTIME_STATE, "DIR", 0,
     "The runtime's state, where containers are found again after a restart "
     "(default " DEFAULT_STATE_DIR ")",
     0},
    {"learn-dir", BW_KEY_LEARN_DIR, "DIR", 0,
     "Where a profile in learn mode writes what each container or service it governs did, "
     "one profile each (default " DEFAULT_LEARN_DIR ")",
     0},
    {"per-pod-metrics", BW_KEY_PER_POD_METRICS, 0, 0,
     "One metrics series per governed container (unbounded labels)", 0},
    {"bpf-stats", BW_KEY_BPF_STATS, 0, 0,
     "Turn on the kernel's BPF run-time statistics and export them", 0},
    BW_OPTS_COMMON,
};

static const struct argp argp = {
    options, parse, NULL,
    "The Kubernetes node agent. Governs the containers that select a profile of the policy "
    "directory, from their first instruction, when bpfwarden-hook asks.\v"
    "A pod selects a profile with the annotation " BW_PROFILE_ANNOTATION
    ": NAME, or a profile selects containers with `match namespace= pod= container=` lines. "
    "See docs/kubernetes.md."};

const struct bw_command bw_cmd_daemon = {"daemon", &argp, daemon_main, 0};
