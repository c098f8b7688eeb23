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
};

/*
 * Deny and audit events per governed cgroup and second (--event-rate); the
 * rest are counted and reported as `lost` records with reason "throttled".
 */
#define BW_DEFAULT_EVENT_RATE 1000
extern unsigned bw_event_rate;
/* Set bw_event_rate from --event-rate ARG; -EINVAL after saying why. */
int bw_parse_event_rate(const char *arg);

/*
 * Parse and compile the profile (NULL: an empty `default deny` one, for
 * learning), make sure the kernel side is loaded, take a
 * slot and open the log. mode_opt (NULL: the profile's mode, else enforce)
 * and log_path (NULL: stderr) as given on the command line. Returns 0, or a
 * process exit status after telling the user why.
 */
int bw_session_prepare(struct bw_session *s, const char *profile_path, const char *mode_opt,
		       const char *log_path);
/* Govern cgdir and its subtree with the session's slot. */
int bw_session_govern(struct bw_session *s, const char *cgdir);
/* Let the cgroup go (if still governed), empty the slot, close everything. */
void bw_session_end(struct bw_session *s);

#endif
