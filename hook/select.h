/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which profile governs a container, and what happens when it cannot be
 * governed. One implementation for the daemon (which decides) and the hook
 * (which must decide alone when the daemon is unreachable):
 *
 *   - a pod's sandbox (pause) container is the runtime's: never selected;
 *   - the pod annotation bpfwarden.io/profile: NAME selects NAME;
 *   - otherwise the first profile, by name, with a `match` line whose every
 *     key (namespace=, pod=, container=, cgroup=; shell globs) matches;
 *   - failure policy: a selected container that cannot be governed (the
 *     daemon is unreachable, the profile is missing or does not apply) does
 *     not start, except in kube-system and the agent's own pod, which
 *     always start.
 *
 * The daemon writes the selectors it holds to /run/bpfwarden/selectors, so
 * that the hook knows which containers must not start while it is down:
 *
 *   agent NAMESPACE POD-PREFIX          the agent's own pods
 *   match PROFILE KEY=GLOB...           one line per match line of a profile
 */
#ifndef BW_HOOK_SELECT_H
#define BW_HOOK_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "proto.h"

#define BW_SELECTORS_FILE     "/run/bpfwarden/selectors"
#define BW_PROFILE_ANNOTATION "bpfwarden.io/profile"
#define BW_EXEMPT_NAMESPACE   "kube-system"

struct bw_selector {
	const char *profile;
	/* Globs; NULL: any. */
	const char *namespace_, *pod, *container, *cgroup;
};

struct bw_selectors {
	struct bw_selector *v;
	size_t n;
	const char *agent_namespace, *agent_pod_prefix; /* NULL: not known */
	char *buf;					/* parse: the strings' storage */
};

/*
 * The profile that selects a container (id, in cgroup below the cgroup2
 * mount): *profile set and 1, or 0 when none does.
 */
int bw_select(const struct bw_k8s_id *id, const char *cgroup, const struct bw_selectors *s,
	      const char **profile);
/* May this container start ungoverned although selected? *why says which rule. */
bool bw_select_exempt(const struct bw_k8s_id *id, const struct bw_selectors *s, const char **why);

/* Parse the selectors file's text; 0, or -EINVAL for a bad line (its number in *line). */
int bw_selectors_parse(const char *text, struct bw_selectors *s, int *line);
void bw_selectors_free(struct bw_selectors *s);

#endif
