/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every agent does with the kernel side, whichever command it is
 * (`run`, `attach`, `learn` and `audit` through user/session.c, the daemon
 * through user/daemon/profiles.c): start (load or adopt the programs and
 * maps, then become unreachable from every sandbox), and keep profiles
 * installed, each a bw_installed: its text parsed and compiled, a policy
 * slot filled with it (user/slot.c), and the slot's records read
 * (user/events.c). Pointing cgroups at the slot is user/govern.c's.
 */
#ifndef BW_AGENT_H
#define BW_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "compile.h"
#include "events.h"
#include "loader.h"
#include "profile.h"
#include "slot.h"

/*
 * Why this kernel cannot enforce file, exec and unix socket rules (one
 * sentence), or NULL when it can: BPF LSM's programs are pinned already, or
 * load here.
 */
const char *bw_agent_no_lsm(void);
/*
 * Load or adopt the programs (the file and exec ones with lsm) and open the
 * maps, then record this process as an agent, before anything is governed:
 * from then on no sandbox can reach it. 0, or -errno after saying why.
 */
int bw_agent_start(struct bw_maps *m, bool lsm);

/* A profile as one agent keeps it installed. */
struct bw_installed {
	struct bw_profile *profile;
	struct bw_compiled compiled;
	struct bw_slot slot; /* slot.rb_fd: -1 until installed */
	bool installed;
	/* The slot's records: the caller sets ev up before bw_installed_events. */
	struct bw_events ev;
	bool events_open;
};

void bw_installed_init(struct bw_installed *in);
/*
 * Parse the profile at path (text NULL), or the text of len bytes named
 * path, and compile it. Returns 0; -EINVAL with the problems in *dg; or
 * another -errno, with err saying why when it can (a rule this build
 * cannot enforce), else empty.
 */
int bw_installed_compile(struct bw_installed *in, const char *path, const char *text, size_t len,
			 struct bw_diags *dg, char *err, size_t errlen);
/*
 * Fill a free slot with the compiled profile, its pins resolved in each of
 * views (none: this process's view), and record the profile's name and
 * digest under the slot. 0 or -errno, said in words.
 */
int bw_installed_install(struct bw_installed *in, struct bw_maps *m,
			 const struct bw_pin_view *views, size_t nviews);
/* Start reading the slot's records through in->ev. */
int bw_installed_events(struct bw_installed *in);
/* Read every record there is now, then report lost ones. */
void bw_installed_drain(struct bw_installed *in);
/*
 * Empty the slot (its keys, pins and ring buffer) unless a governed cgroup
 * still refers to it: -EBUSY.
 */
int bw_installed_put(struct bw_installed *in, struct bw_maps *m);
/* Close the reader and the ring buffer, free the text and the keys (the slot stays). */
void bw_installed_free(struct bw_installed *in);

#endif
