// SPDX-License-Identifier: GPL-2.0-only
/*
 * `bpfwarden diff OLD NEW`: what changed between two versions of a profile
 * (a relearned one, an edit under review), with includes, rule by rule as
 * policy/diff.c compares them. Exit statuses as diff(1)'s: 0 the same, 1
 * different, 2 trouble (a bad command line, a profile that does not parse
 * or cannot be read). Loads nothing into the kernel; needs no privilege.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diff.h"
#include "libdir.h"
#include "profile.h"

static struct bw_profile *load(const char *path, const char *lib)
{
	struct bw_diags diags = {0};
	struct bw_profile *p = NULL;
	int err = bw_profile_load(path, lib, &p, &diags);

	bw_diags_print(stderr, &diags);
	if (err && (err != -EINVAL || !diags.nerrors))
		fprintf(stderr, "bpfwarden diff: %s: %s\n", path, strerror(-err));
	bw_diags_free(&diags);
	return p;
}

static int diff(struct bw_opts *o)
{
	const char *lib = bw_profile_libdir();
	struct bw_profile *a = load(o->args[0], lib), *b = load(o->args[1], lib);
	int n = -EINVAL;

	if (a && b) {
		printf("--- %s (profile %s)\n+++ %s (profile %s)\n", o->args[0], a->name,
		       o->args[1], b->name);
		n = bw_profile_diff(a, b, stdout);
		if (n < 0)
			fprintf(stderr, "bpfwarden diff: %s\n", strerror(-n));
	}
	bw_profile_free(a);
	bw_profile_free(b);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "bpfwarden diff: writing the differences: %s\n", strerror(errno));
		return 2;
	}
	return n < 0 ? 2 : n > 0;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;

	if (key == ARGP_KEY_END && o->nargs != 2) {
		argp_error(st,
			   o->nargs < 2 ? "want two profiles, OLD and NEW" : "too many arguments");
		return EINVAL;
	}
	return bw_parse_opt(key, arg, st);
}

static const struct argp_option options[] = {BW_OPTS_COMMON};

static const struct argp argp = {
    options, parse, "OLD NEW",
    "Compare two versions of a profile, rule by rule. With their includes; nothing is "
    "loaded, no privilege is needed.\v"
    "Rules are compared by what they say, not where: a moved rule is no difference. One "
    "line per difference: `~ SETTING: OLD -> NEW`; `- FILE:LINE: RULE` (only in OLD; with `(covered by FILE:LINE: RULE)` when a rule of NEW "
    "still decides all it did); "
    "`+ FILE:LINE: RULE` (only in NEW); `> FILE:LINE: RULE (was FILE:LINE: RULE)`, a rule "
    "of NEW that covers more than the one of OLD it replaces (paths, accesses, addresses "
    "or ports); `<` one that covers less. Exit status 0 if the profiles say the same, 1 if "
    "they differ, 2 on trouble (as diff(1))."};

const struct bw_command bw_cmd_diff = {"diff", &argp, diff, 0, 0};
