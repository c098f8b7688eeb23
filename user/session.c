// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "libdir.h"
#include "probe.h"
#include "session.h"
#include "util.h"

static const char *const mode_names[] = {
    [BW_MODE_ENFORCE] = "enforce",
    [BW_MODE_AUDIT] = "audit",
    [BW_MODE_LEARN] = "learn",
};

unsigned bw_event_rate = BW_DEFAULT_EVENT_RATE;

int bw_parse_event_rate(const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (!*arg || *end || v > 1000000) {
		bw_err("--event-rate wants events a second (0: no limit), not '%s'", arg);
		return -EINVAL;
	}
	bw_event_rate = (unsigned)v;
	return 0;
}

int bw_parse_mode(const char *s, unsigned *mode)
{
	unsigned i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
		if (!strcmp(s, mode_names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *bw_mode_name(unsigned mode)
{
	return mode < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[mode] : "unknown";
}

/* Does enforcing this profile need the file and exec hooks? */
static bool needs_lsm(const struct bw_compiled *c)
{
	return c->nfiles || c->nexecs || c->nunixes || c->policy.default_file != BW_V_ALLOW ||
	       c->policy.default_exec != BW_V_ALLOW || c->policy.exec_memfd_rule;
}

int bw_session_prepare(struct bw_session *s, const char *profile_path, const char *mode_opt,
		       const char *log_path)
{
	struct bw_diags diags = {};
	const struct bw_support *sup;
	const char *why;
	char err[512];
	int ret;

	memset(s, 0, sizeof(*s));
	s->log_fd = -1;
	s->maps = (struct bw_maps)BW_MAPS_INIT;
	s->slot.rb_fd = -1;

	if (profile_path) {
		ret = bw_profile_load(profile_path, bw_profile_libdir(), &s->profile, &diags);
	} else {
		/* Learning from nothing: everything the workload does is new. */
		static const char text[] = "profile learned\ndefault deny\n";

		profile_path = "(built-in learn profile)";
		ret = bw_profile_parse_string(profile_path, text, sizeof(text) - 1, NULL,
					      &s->profile, &diags);
	}
	bw_diags_print(stderr, &diags);
	bw_diags_free(&diags);
	if (ret) {
		if (ret != -EINVAL)
			bw_err("cannot read profile %s: %s", profile_path, strerror(-ret));
		return 1;
	}
	if (mode_opt) {
		if (bw_parse_mode(mode_opt, &s->mode)) {
			bw_err("unknown mode '%s' (enforce, audit or learn)", mode_opt);
			return 2;
		}
	} else if (s->profile->mode == BW_PMODE_AUDIT) {
		s->mode = BW_MODE_AUDIT;
	} else if (s->profile->mode == BW_PMODE_LEARN) {
		s->mode = BW_MODE_LEARN;
	} else {
		s->mode = BW_MODE_ENFORCE;
	}
	ret = bw_compile(s->profile, &s->compiled, err, sizeof(err));
	if (ret) {
		bw_err("%s", err[0] ? err : strerror(-ret));
		return 1;
	}
	s->compiled.policy.event_rate = bw_event_rate;

	sup = bw_probe();
	if (!sup->cgroup2) {
		bw_err("no cgroup2 hierarchy is mounted (see /proc/self/mountinfo)");
		return 1;
	}
	why = bw_lsm_unavailable(sup);
	if (why && needs_lsm(&s->compiled)) {
		bw_err("file, exec and unix socket rules need BPF LSM: %s. TCP and UDP rules "
		       "alone are enforced on this kernel (cgroup programs): a profile with "
		       "`default allow file`, `default allow exec` and no file, exec or unix "
		       "rules runs here. `bpfwarden status` shows what this kernel supports.",
		       why);
		return 1;
	}
	s->net_only = why != NULL;
	if (bw_load(&s->maps, !why))
		return 1;
	ret = bw_slot_install(&s->maps, &s->compiled, &s->slot);
	if (ret)
		return 1;
	s->installed = true;

	if (log_path) {
		s->log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (s->log_fd < 0) {
			bw_err("cannot open log %s: %s", log_path, strerror(errno));
			return 1;
		}
	} else {
		s->log_fd = dup(STDERR_FILENO);
	}
	s->ev.log_fd = s->log_fd;
	s->ev.profile = s->profile;
	s->ev.mode = bw_mode_name(s->mode);
	s->ev.slot = s->slot.id;
	s->ev.maps = &s->maps;
	s->ev.kill_on_deny = s->compiled.policy.on_deny == BW_ON_DENY_KILL;
	ret = bw_events_open(&s->ev, s->slot.rb_fd);
	if (ret) {
		bw_err("cannot read the event ring buffer: %s", strerror(-ret));
		return 1;
	}
	s->events_open = true;
	return 0;
}

int bw_session_govern(struct bw_session *s, const char *cgdir)
{
	char msg[PATH_MAX + 128];
	int ret;

	snprintf(s->cgdir, sizeof(s->cgdir), "%s", cgdir);
	snprintf(s->ev.cgroup_dir, sizeof(s->ev.cgroup_dir), "%s", cgdir);
	ret = bw_cgroup_id(cgdir, &s->ev.cgroup_id);
	if (ret) {
		bw_err("cannot identify cgroup %s: %s", cgdir, strerror(-ret));
		return ret;
	}
	ret = bw_lock(&s->maps);
	if (!ret) {
		struct bw_cgroup cur;

		if (!bpf_map_lookup_elem(s->maps.cgroups, &s->ev.cgroup_id, &cur)) {
			bw_err("%s is already governed (policy slot %u): detach it first", cgdir,
			       cur.policy);
			ret = -EEXIST;
		} else {
			ret = bw_govern(&s->maps, cgdir, s->slot.id, s->mode);
			s->governing = true;
		}
		bw_unlock(&s->maps);
	}
	if (ret)
		return ret;
	snprintf(msg, sizeof(msg),
		 "governing %s with profile %s in %s mode (%zu file keys, %zu exec keys, %zu net "
		 "keys, %zu inode pins%s%s)",
		 bw_cgroup_rel(cgdir), s->profile->name, bw_mode_name(s->mode), s->compiled.nfiles,
		 s->compiled.nexecs, s->compiled.nnets, s->slot.pins_resolved,
		 s->net_only ? "; no BPF LSM on this kernel: tcp and udp rules only, and packet "
			       "and unix sockets are not refused"
			     : "",
		 s->slot.link_scan_incomplete
		     ? "; the hard-link scan of denied directories stopped at its bound: other "
		       "names of files deep inside them are not pinned"
		     : "");
	bw_events_agent(&s->ev, msg);
	return 0;
}

void bw_session_end(struct bw_session *s)
{
	if (s->events_open) {
		bw_events_poll(&s->ev, 0);
		bw_events_check_lost(&s->ev);
	}
	if (s->governing && !access(s->cgdir, F_OK) && !bw_lock(&s->maps)) {
		uint32_t slot = s->slot.id;

		bw_ungovern(&s->maps, s->cgdir, &slot);
		bw_unlock(&s->maps);
	}
	if (s->installed && !bw_lock(&s->maps)) {
		/* Another command may have re-governed cgroups with our slot; keep it then. */
		if (!bw_slot_referenced(&s->maps, s->slot.id))
			bw_slot_release(&s->maps, s->slot.id);
		bw_unlock(&s->maps);
	}
	if (s->events_open)
		bw_events_close(&s->ev);
	if (s->slot.rb_fd >= 0)
		close(s->slot.rb_fd);
	if (s->log_fd >= 0)
		close(s->log_fd);
	bw_maps_close(&s->maps);
	if (s->maps.lock_fd >= 0)
		close(s->maps.lock_fd);
	bw_compiled_free(&s->compiled);
	bw_profile_free(s->profile);
	s->profile = NULL;
}
