/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * `bpfwarden daemon`, the node agent: the profiles of a directory (a
 * mounted ConfigMap), each installed once in a policy slot; the containers
 * that select them, governed when their runtime's hook asks (hook/); their
 * events with the containers' identity; metrics. Its parts:
 *
 *   profiles.c    the policy directory: load, watch, replace atomically
 *   containers.c  the governed containers: govern one, who a cgroup is,
 *                 re-adopt them after a restart from the runtime's state
 *   services.c    the cgroups `match cgroup=` selects as they are made (the
 *                 kernel's selectors), and those that exist already
 *   server.c      the hook socket
 *   metrics.c     Prometheus text on --metrics-addr
 *   user/cmd_daemon.c  the command and its loop
 *
 * docs/kubernetes.md says how it is deployed and what it guarantees.
 */
#ifndef BW_DAEMON_H
#define BW_DAEMON_H

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "compile.h"
#include "events.h"
#include "govern.h"
#include "loader.h"
#include "agent.h"
#include "pins.h"
#include "profile.h"
#include "proto.h"
#include "select.h"

/* One profile file of the policy directory, and the slot it is installed in. */
struct d_profile {
	char *file;		/* its name in the directory */
	char *name;		/* `profile NAME`: what pods select */
	uint64_t hash;		/* of its text: reloaded only when that changes */
	struct bw_installed in; /* its text, slot and records (user/agent.h) */
	enum bw_mode mode;
	struct daemon *daemon; /* its learn records' (learn.c) */
	bool removed;	       /* its file is gone; its containers stay governed by this version */
	/* What the kernel counted in the slots of its earlier versions (metrics). */
	struct bw_counters base;
	uint64_t base_ops[BW_OPSTATS_PER_SLOT];
	/*
	 * The version this one replaced while its containers still move over,
	 * a few each turn of the loop (d_profiles_progress), and the cgroups
	 * moved so far. Until they all have, it governs the rest, whole.
	 */
	struct d_profile *former;
	int former_moved;
};

/* A governed container. */
struct d_container {
	uint64_t cgid;
	char cgdir[PATH_MAX]; /* absolute */
	char *strs[6];	      /* the k8s fields' storage */
	struct bw_k8s_id k8s;
	struct d_profile *prof;
	long long pid;
	struct bw_pin_view view; /* where its paths are, for its pins */
	char view_base[PATH_MAX], view_mountinfo[64], view_prefix[PATH_MAX];
	const char *via; /* "hook", "nri" or "restart" */
	/* Its pins (their policy field: the slot they were made for), dropped when it goes. */
	struct bw_pin_set pins;
	struct bw_pos_set pos; /* and its positions, placed in its view */
	int wd;		       /* the inotify watch of its parent directory (daemon.cg_watch), -1 */
};

#define D_LATENCY_BUCKETS 8

struct d_metrics {
	uint64_t hook[BW_HOOK_FAIL + 1]; /* requests by result */
	uint64_t latency_us_sum;
	uint64_t latency_le[D_LATENCY_BUCKETS]; /* cumulative: <= d_latency_bounds_ms[i] */
	uint64_t latency_count;
	uint64_t reloads, reload_errors;
};

/*
 * A metrics client being served (metrics.c): the loop reads its request and
 * writes its answer as the socket lets it, never waiting on it; at its
 * deadline it is closed, whatever it has done.
 */
#define D_METRICS_CONNS 16
/* Hook requests answered in one turn of the loop at most (cmd_daemon.c). */
#define D_HOOKS_PER_TURN 64
/*
 * Containers moved to a profile's new version in one turn at most: each
 * resolves the version's pins in its root (tens of system calls), and a
 * hook request waits for no more than these.
 */
#define D_MOVES_PER_TURN      2
#define D_METRICS_DEADLINE_MS 2000
#define D_METRICS_REQ	      1024

struct d_mconn {
	int fd;	       /* -1: free */
	long deadline; /* bw_now_ms() */
	size_t n;      /* request bytes so far */
	char req[D_METRICS_REQ];
	char *out; /* the answer, once the request is whole */
	size_t out_len, out_off;
};

struct daemon {
	struct bw_maps maps;
	bool lsm;	 /* BPF LSM available: file and exec rules can be enforced */
	const char *dir; /* --policy-dir */
	const char *log; /* --log FILE, NULL: standard output */
	int log_fd;
	const char *socket;    /* the hook socket */
	const char *state_dir; /* the runtime's state, for identities after a restart */
	const char *selectors_file;
	const char *learn_dir; /* --learn-dir: the learned profiles (learn.c) */
	struct d_learned **learned;
	size_t nlearned;
	bool per_pod_metrics;
	bool bpf_stats;
	int stats_fd; /* BPF_ENABLE_STATS while the daemon runs, -1 */
	char cgroot[PATH_MAX];
	const char *agent_ns, *agent_pod; /* this daemon's own pod (downward API), or NULL */
	char agent_prefix[256];
	struct d_profile **profiles;
	size_t nprofiles;
	struct d_container **containers;
	size_t ncontainers;
	struct bw_events agent_ev; /* the daemon's own records */
	/*
	 * inotify on the parent directories of the containers' cgroups: their
	 * removal wakes the loop, which reaps (d_containers_reap). -1, or a
	 * watch that failed: reap_poll, the loop looks every second instead.
	 */
	int cg_watch;
	bool reap_poll;
	size_t nservice_sels; /* service selectors in bw_cg_select (services.c) */
	struct d_metrics metrics;
	struct d_mconn mconns[D_METRICS_CONNS];
	/* The /metrics text of this turn of the loop, once made (NULL: not yet). */
	char *mtext;
	size_t mtext_len;
};

extern const unsigned d_latency_bounds_ms[D_LATENCY_BUCKETS];

/* profiles.c */
/* Read the policy directory and install what changed; the first call installs all. */
int d_profiles_load(struct daemon *d);
struct d_profile *d_profile_find(struct daemon *d, const char *name);
/* The selectors of every loaded profile (strings point into them). */
int d_selectors(struct daemon *d, struct bw_selectors *s);
/* At a clean stop: empty the slots of profiles that govern nothing. */
void d_profiles_release_idle(struct daemon *d);
void d_profiles_free(struct daemon *d);
/*
 * Move up to D_MOVES_PER_TURN containers of each replaced version to its
 * successor, and retire a replaced version once none is left on it. True
 * while some remain (the loop comes back at once, and holds the policy
 * directory's changes until none does).
 */
bool d_profiles_progress(struct daemon *d);
/*
 * Log the records a dead agent left in slot from's ring buffer, now that
 * profile p governs the cgroups that made them (and their totals of
 * records dropped), before the slot is emptied.
 */
void d_slot_drain(struct daemon *d, uint32_t from, const struct d_profile *p);
/* An `agent` record in the daemon's log. */
void d_agent(struct daemon *d, const struct bw_k8s_id *k8s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* services.c */
/* Has p a `match cgroup=` line without other keys? */
bool d_profile_selects_services(const struct d_profile *p);
/*
 * Write the loaded profiles' service selectors into the kernel (say: tell
 * which lines cannot be), then govern the cgroups they match that exist.
 */
int d_services_sync(struct daemon *d, bool say);
/* Tell of selected cgroups the kernel could not govern since the last look. */
void d_services_check(struct daemon *d);

/* learn.c */
/* struct bw_events.on_learn of a profile (ctx): the record to its container's or service's set. */
void d_learn_event(void *ctx, const struct bw_event *ev, const char *path, const char *exe,
		   bool here);
/*
 * Write the learned profiles of containers and services that are gone, or
 * have new objects and were last written D_LEARN_WRITE_MS ago; all: every
 * one with new objects, and forget them all (a clean stop).
 */
void d_learn_flush(struct daemon *d, bool all);

/* containers.c */
/* Answer one hook request. */
void d_container_create(struct daemon *d, const struct bw_hook_req *req, struct bw_hook_resp *out);
/* bw_events.identify: a cgroup's path and its container's identity. */
const struct bw_k8s_id *d_identify(void *ctx, uint64_t cgroup_id, char *path, size_t len);
/*
 * struct bw_events.kill_target: what on-deny kill ends for a record of
 * cgroup_id, its container's cgroup or its service's (the highest cgroup
 * of its subtree its slot governs); -errno when none.
 */
int d_kill_target(void *ctx, uint64_t cgroup_id, char *dir, size_t len);
/* The cgroup (absolute) of the container whose identity d_identify gave; -ENOENT. */
int d_container_cgdir(struct daemon *d, const struct bw_k8s_id *k8s, char *out, size_t len);
/* Forget containers whose cgroup is gone. */
void d_containers_reap(struct daemon *d);
/* Containers governed before this daemon started, from the runtime's state. */
void d_containers_recover(struct daemon *d);
void d_containers_free(struct daemon *d);
/*
 * Move up to max containers of profile version from to version to
 * (installed already): its pins in each one's root, then its cgroups
 * pointed at it (*cgroups counts them). True while others remain.
 */
bool d_containers_move(struct daemon *d, struct d_profile *from, struct d_profile *to, size_t max,
		       int *cgroups);

/* server.c */
int d_server_open(struct daemon *d);
/*
 * Answer one waiting hook request on listening socket fd (non-blocking):
 * 0, or -EAGAIN when none waits.
 */
int d_server_accept(struct daemon *d, int fd);

/* notify.c: the service manager's protocol (sd_notify(3)); no-ops without $NOTIFY_SOCKET. */
/* Read (and clear) $NOTIFY_SOCKET and the watchdog's variables. 0 or -EINVAL. */
int d_notify_init(void);
/* One datagram of "KEY=VALUE\n..." lines. 0 or -errno. */
int d_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How often to send WATCHDOG=1 (half the manager's period), 0 if it wants none. */
long d_notify_watchdog_ms(void);

/* metrics.c */
/* The kernel's counts of a profile, its earlier versions' included. */
void d_profile_counts(struct daemon *d, const struct d_profile *p, struct bw_counters *c,
		      uint64_t ops[BW_OPSTATS_PER_SLOT]);
int d_metrics_open(const char *addr);
/* Every client waiting on the listening socket fd: taken in, or closed past the cap. */
void d_metrics_accept(struct daemon *d, int fd);
/* The clients' descriptors to poll, from fds (room for D_METRICS_CONNS); how many. */
size_t d_metrics_pollfds(struct daemon *d, struct pollfd *fds);
/* After poll: what those clients let us do, and those past their deadline closed. */
void d_metrics_io(struct daemon *d, const struct pollfd *fds, size_t n);
/* A new turn of the loop: the next /metrics text is made anew. */
void d_metrics_changed(struct daemon *d);
/* The nearest client deadline (bw_now_ms()), 0 if none. */
long d_metrics_deadline(const struct daemon *d);
void d_metrics_close_all(struct daemon *d);

#endif
