/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `run`, `attach` and `learn` share: one installed profile
 * (user/agent.h), the audit log open, and the cgroup it governs. The
 * journey of a rule: policy/ parses it, user/compile.c turns it into trie
 * keys, user/slot.c stores them, bpf/file.bpf.c decides with them, and
 * user/events.c writes the decision with the rule's FILE:LINE.
 */
#ifndef BW_SESSION_H
#define BW_SESSION_H

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "agent.h"
#include "cli.h"
#include "compile.h"
#include "events.h"
#include "govern.h"
#include "loader.h"
#include "profile.h"

struct bw_session {
	struct bw_maps maps;
	struct bw_installed in; /* its profile, slot and records (user/agent.h) */
	int log_fd;
	enum bw_mode mode;
	char cgdir[PATH_MAX];
	bool governing;
	bool net_only; /* no BPF LSM: the cgroup programs enforce the net rules alone */
	bool replace;  /* bw_session_govern takes a governed cgroup over */
};

/*
 * Parse and compile o->profile (NULL: an empty `default deny` one, for
 * learning), make sure the kernel side is loaded, take a slot and open the
 * log (o->log, NULL: stderr), in o->mode if given, else the profile's.
 * Returns 0, or a process exit status after telling the user why.
 */
int bw_session_prepare(struct bw_session *s, const struct bw_opts *o);
/* Does enforcing this profile need the file and exec hooks (BPF LSM)? */
bool bw_compiled_needs_lsm(const struct bw_compiled *c);
/*
 * Govern cgdir and its subtree with the session's slot; with s->replace, a
 * subtree governed already is taken over (bw_govern_replace).
 */
int bw_session_govern(struct bw_session *s, const char *cgdir);
/* Read every event there is now, then report lost ones. */
void bw_session_drain(struct bw_session *s);
/* Drain, let the cgroup go (if still governed), empty the slot, close everything. */
void bw_session_end(struct bw_session *s);

/*
 * The one event loop of the commands. It sleeps in ppoll(2), with no
 * timeout, until something happens: an event in the ring buffer, the
 * child's exit (its pidfd), a signal, the removal of the session's cgroup
 * (inotify on its parent directory), BW_NUDGE_SIGNAL from a command that
 * let it go or replaced its profile, or the end of --duration. Then it
 * reads the events, reports lost ones and looks at what may end it. An
 * idle agent does not wake up at all (docs/operations.md, "The agent's
 * loop").
 */
/*
 * After a wake-up that read events, one more look this much later, events
 * or not: what was throttled in the same second (bw_event_allowed) comes
 * with no record to wake the loop, and is reported then.
 */
#define BW_LOST_RECHECK_MS 2000

struct bw_loop {
	long duration; /* seconds; 0: until something else ends it */
	pid_t child;   /* > 0: until it exits; SIGTERM and SIGHUP go to it */
	int child_fd;  /* its pidfd, to wake up when it exits (-1: none) */
	bool watch;    /* until the session's cgroup is no longer governed by its slot */
	/* Called at every wake-up (progress lines); non-zero ends the loop. */
	int (*tick)(struct bw_session *s, void *arg);
	void *arg;
	int child_status; /* out: as waitpid gives it */
	int signal;	  /* out: the signal that ended the loop */
};

enum bw_loop_end { BW_LOOP_SIGNAL = 1, BW_LOOP_TIME, BW_LOOP_CHILD, BW_LOOP_GONE, BW_LOOP_TICK };

/*
 * Catch SIGINT, SIGTERM and SIGHUP for bw_session_loop; with for_child,
 * SIGINT is ignored instead (the terminal sends it to the child too).
 */
void bw_session_signals(bool for_child);
/* Run the loop until one of l's conditions holds, drain, and say which (enum bw_loop_end). */
int bw_session_loop(struct bw_session *s, struct bw_loop *l);

/* The parts of the loop the daemon's shares. CLOCK_MONOTONIC in milliseconds. */
long bw_now_ms(void);
/* Block the signals the loop takes (SIGTERM, SIGINT, SIGHUP, BW_NUDGE_SIGNAL); *old: the mask
 * before. */
void bw_loop_signals_block(sigset_t *old);
/* ppoll with the mask old until deadline_ms (bw_now_ms; 0: none). */
int bw_loop_sleep(struct pollfd *fds, nfds_t n, long deadline_ms, const sigset_t *old);
/* The earlier of a deadline and the lost-events recheck (either 0: none). */
long bw_lost_deadline(long deadline_ms, long recheck_ms);

#endif
