// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden attach / detach / mode: govern an existing cgroup v2 subtree.
 * attach stays in the foreground streaming events; SIGINT or SIGTERM
 * detaches and exits. detach, from another shell, lets the subtree go at
 * once; the attach that governed it notices and exits. mode switches a
 * governed subtree's mode without detaching.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cli.h"
#include "govern.h"
#include "loader.h"
#include "session.h"
#include "util.h"

static int attach(struct bw_opts *o)
{
	struct bw_loop loop = {.child_fd = -1, .watch = true};
	struct bw_session s;
	char cgdir[PATH_MAX];
	int ret;

	if (bw_cgroup_arg(o->cgroup, cgdir, sizeof(cgdir)))
		return 1;
	ret = bw_session_prepare(&s, o);
	s.replace = o->replace;
	/*
	 * Before governing: a SIGTERM right after the "governing" line (what
	 * a supervisor waits for) must detach, not kill the agent half way.
	 */
	bw_session_signals(false);
	if (!ret && bw_session_govern(&s, cgdir))
		ret = 1;
	if (ret) {
		bw_session_end(&s);
		return ret;
	}
	if (bw_session_loop(&s, &loop) == BW_LOOP_GONE)
		bw_events_agent(&s.in.ev, "detached by another command, replaced by another "
					  "profile (attach --replace), or cgroup removed");
	else
		bw_events_agent(&s.in.ev, "detaching on signal");
	bw_session_end(&s);
	return 0;
}

/* The pinned maps, for commands that change what is governed without loading anything. */
static int open_pinned(struct bw_maps *m)
{
	if (!bw_open_pinned(m))
		return 0;
	bw_err("nothing is governed: no pinned state under %s", BW_PIN_ROOT);
	return 1;
}

static int detach(struct bw_opts *o)
{
	struct bw_maps m = BW_MAPS_INIT;
	char cgdir[PATH_MAX];
	uint32_t slot = UINT32_MAX; /* whichever governs the named cgroup */
	int ret;

	if (bw_cgroup_arg(o->cgroup, cgdir, sizeof(cgdir)) || open_pinned(&m))
		return 1;
	ret = bw_ungovern(&m, cgdir, &slot);
	bw_maps_close(&m);
	if (ret) {
		bw_err("%s: %s", cgdir, ret == -ENOENT ? "not governed" : strerror(-ret));
		return 1;
	}
	printf("detached %s (policy slot %u)\n", bw_cgroup_rel(cgdir), slot);
	return 0;
}

static int mode(struct bw_opts *o)
{
	struct bw_maps m = BW_MAPS_INIT;
	char cgdir[PATH_MAX];
	int ret, n;

	if (bw_cgroup_arg(o->cgroup, cgdir, sizeof(cgdir)) || open_pinned(&m))
		return 1;
	ret = bw_govern_set_mode(&m, cgdir, o->mode, &n);
	bw_maps_close(&m);
	if (ret) {
		bw_err("%s: %s", cgdir, ret == -ENOENT ? "not governed" : strerror(-ret));
		return 1;
	}
	printf("%s: %s (%d cgroups)\n", bw_cgroup_rel(cgdir), bw_mode_name(o->mode), n);
	return 0;
}

static const struct argp attach_argp, mode_argp;

/* What each of the three needs beyond the options' own checks. */
static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;

	if (key != ARGP_KEY_END)
		return bw_parse_opt(key, arg, st);
	if (!o->cgroup) {
		argp_error(st, "--cgroup is needed");
		return EINVAL;
	}
	if (st->root_argp == &attach_argp && !o->profile) {
		argp_error(st, "--profile is needed");
		return EINVAL;
	}
	if (st->root_argp == &mode_argp) {
		if (o->nargs != 1) {
			argp_error(st, "one MODE is needed: enforce, audit or learn");
			return EINVAL;
		}
		if (bw_mode_parse(o->args[0], strlen(o->args[0]), &o->mode)) {
			argp_error(st, "unknown mode '%s' (enforce, audit or learn)", o->args[0]);
			return EINVAL;
		}
		o->nargs = 0;
	}
	return bw_parse_opt(key, arg, st);
}

static const struct argp_option attach_options[] = {
    BW_OPT_CGROUP,  BW_OPT_PROFILE,    BW_OPT_MODE,    BW_OPT_LOG,
    BW_OPT_REPLACE, BW_OPT_EVENT_RATE, BW_OPTS_COMMON,
};
static const struct argp_option cgroup_options[] = {BW_OPT_CGROUP, BW_OPTS_COMMON};

static const struct argp attach_argp = {
    attach_options, parse, NULL,
    "Govern an existing cgroup subtree with a profile. In the foreground, streaming its "
    "events.\vSIGINT or SIGTERM lets the subtree go and exits; so does `bpfwarden detach` "
    "from another shell. With --replace, a subtree governed already changes profile at once: "
    "each decision is the old profile's or the new one's, and the attach that governed it "
    "exits."};
static const struct argp detach_argp = {
    cgroup_options, parse, NULL,
    "Let a governed cgroup subtree go. Its attach, if still running, notices and exits."};
static const struct argp mode_argp = {
    cgroup_options, parse, "MODE",
    "Switch a governed subtree's mode without detaching. MODE is enforce, audit or "
    "learn.\vEach "
    "cgroup's entry changes at once: the kernel decides under the old mode or the new."};

const struct bw_command bw_cmd_attach = {"attach", &attach_argp, attach, 0};
const struct bw_command bw_cmd_detach = {"detach", &detach_argp, detach, 0};
const struct bw_command bw_cmd_mode = {"mode", &mode_argp, mode, 0};
