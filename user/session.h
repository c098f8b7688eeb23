/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `run` and `attach` share: a profile parsed, compiled and installed
 * in a policy slot, the audit log open, and the cgroup it governs. The
 * journey of a rule: policy/ parses it, user/compile.c turns it into trie
 * keys, user/govern.c stores them, bpf/file.bpf.c decides with them, and
 * user/events.c writes the decision with the rule's FILE:LINE.
 */
#ifndef BW_SESSION_H
#define BW_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cli.h"
#include "compile.h"
#include "events.h"
#include "govern.h"
#include "loader.h"
#include "profile.h"

struct bw_session {
	struct bw_profile *profile;
	struct bw_compiled compiled;
	struct bw_maps maps;
	struct bw_slot slot;
	bool installed;
	struct bw_events ev;
	bool events_open;
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
 * The one event loop of the commands. It sleeps in poll(2) until an event,
 * the child's exit or a signal arrives, or BW_LOOP_TICK_MS pass; then it
 * reads the events, reports lost ones and looks at what may end it.
 */
#define BW_LOOP_TICK_MS 200

struct bw_loop {
	long duration; /* seconds; 0: until something else ends it */
	pid_t child;   /* > 0: until it exits; SIGTERM and SIGHUP go to it */
	int child_fd;  /* its pidfd, to wake up when it exits (-1: none) */
	bool watch;    /* until the session's cgroup is no longer governed by its slot */
	/* Called at every turn (progress lines); non-zero ends the loop. */
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

#endif
