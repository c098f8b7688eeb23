// SPDX-License-Identifier: GPL-2.0-only
/*
 * `bpfwarden profile merge A B... -o OUT`: one profile from several learn
 * runs of one service (one per replica, per day, per half of a workload).
 * The inputs' object rules (one exact path, endpoint, name each) are read
 * back as learned objects with the counts and programs of their "# seen"
 * comments and written again by the learn writer, which generalises over the
 * union as over one long run; every other rule (subtree, prefix, ranges,
 * denials, named rules) and every include is kept as written. Settings must
 * agree: a union of a `default allow` and a `default deny` profile has no
 * meaning. docs/learn.md, "Merging learned profiles". Loads nothing into the
 * kernel; needs no privilege.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "learn.h"
#include "learn_agent.h"
#include "learn_names.h"
#include "libdir.h"
#include "profile.h"
#include "util.h"

#define ME "bpfwarden profile merge"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			nb = cap <= BW_PROFILE_FILE_MAX + 1 ? realloc(buf, cap + 1) : NULL;
			if (!nb) {
				errno = cap > BW_PROFILE_FILE_MAX + 1 ? EFBIG : ENOMEM;
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Where b's settings differ from a's: the first difference in words, or NULL. */
static const char *disagree(const struct bw_profile *a, const struct bw_profile *b, char *buf,
			    size_t len)
{
	static const char *const cats[BW_CAT_COUNT] = {"file", "exec", "net"};

	if (a->mode_given != b->mode_given || a->mode != b->mode) {
		snprintf(buf, len, "mode %s, where %s has %s",
			 b->mode_given ? bw_mode_name(b->mode) : "(none)", a->path,
			 a->mode_given ? bw_mode_name(a->mode) : "(none)");
		return buf;
	}
	for (int c = 0; c < BW_CAT_COUNT; c++)
		if (a->defaults[c] != b->defaults[c]) {
			snprintf(buf, len, "default %s %s, where %s has default %s %s",
				 bw_verdict_name(b->defaults[c]), cats[c], a->path,
				 bw_verdict_name(a->defaults[c]), cats[c]);
			return buf;
		}
	if (a->on_deny != b->on_deny) {
		snprintf(buf, len, "on-deny %s, where %s has on-deny %s",
			 b->on_deny == BW_ON_DENY_KILL ? "kill" : "log", a->path,
			 a->on_deny == BW_ON_DENY_KILL ? "kill" : "log");
		return buf;
	}
	bool same = a->nmatches == b->nmatches;

	for (size_t i = 0; same && i < a->nmatches; i++) {
		const struct bw_match *x = &a->matches[i], *y = &b->matches[i];

		same = same_str(x->cgroup, y->cgroup) && same_str(x->namespace_, y->namespace_) &&
		       same_str(x->pod, y->pod) && same_str(x->container, y->container);
	}
	if (!same) {
		snprintf(buf, len, "other match lines than %s", a->path);
		return buf;
	}
	return NULL;
}

static int merge(struct bw_opts *o)
{
	const char *lib = bw_profile_libdir();
	struct bw_profile **in = calloc((size_t)o->nargs, sizeof(*in));
	struct bw_learn_set *set = bw_learn_new();
	char why[PATH_MAX + 128];
	int ret = 1, i;

	if (!in || !set) {
		fprintf(stderr, ME ": %s\n", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < o->nargs; i++) {
		struct bw_diags diags = {0};
		const char *bad;
		size_t len = 0;
		char *text;
		long added;
		int err = bw_profile_load(o->args[i], lib, &in[i], &diags);

		bw_diags_print(stderr, &diags);
		bw_diags_free(&diags);
		if (err) {
			if (err != -EINVAL)
				fprintf(stderr, ME ": %s: %s\n", o->args[i], strerror(-err));
			goto out;
		}
		bad = i ? disagree(in[0], in[i], why, sizeof(why)) : NULL;
		if (bad) {
			fprintf(stderr,
				ME ": %s: %s; merge the runs of one service, whose settings "
				   "agree\n",
				o->args[i], bad);
			goto out;
		}
		text = slurp(o->args[i], &len);
		if (!text) {
			fprintf(stderr, ME ": %s: %s\n", o->args[i], strerror(errno));
			goto out;
		}
		added = bw_learn_add_profile(set, in[i], text, len);
		free(text);
		if (added < 0) {
			fprintf(stderr, ME ": %s\n", strerror((int)-added));
			goto out;
		}
	}
	bw_learn_min_children = o->min_children;
	bw_learn_flags = o->learn_flags | BW_LEARN_BASE_OBJECTS;
	if (!bw_learn_save(set, o->output, o->name, (const struct bw_profile *const *)in,
			   (size_t)o->nargs))
		ret = 0;
out:
	for (i = 0; in && i < o->nargs; i++)
		bw_profile_free(in[i]);
	free(in);
	bw_learn_free(set);
	return ret;
}

/* `profile diff OLD NEW` is `diff OLD NEW`; `profile merge` the above. */
static int profile(struct bw_opts *o)
{
	bool is_merge = !strcmp(o->args[0], "merge");

	o->args++;
	o->nargs--;
	return is_merge ? merge(o) : bw_cmd_diff.run(o);
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;

	if (key == ARGP_KEY_END) {
		const char *sub = o->nargs ? o->args[0] : NULL;

		if (!sub || (strcmp(sub, "merge") && strcmp(sub, "diff"))) {
			argp_error(st, "want merge or diff%s%s%s", sub ? ", not '" : "",
				   sub ? sub : "", sub ? "'" : "");
			return EINVAL;
		}
		if (!strcmp(sub, "diff")) {
			if (o->nargs != 3) {
				argp_error(st, "diff wants two profiles, OLD and NEW");
				return EINVAL;
			}
			if (o->output || o->name || o->min_children || o->learn_flags) {
				argp_error(st, "diff takes no option of merge");
				return EINVAL;
			}
			return bw_parse_opt(key, arg, st);
		}
		if (o->nargs < 2) {
			argp_error(st, "merge wants the profiles to merge");
			return EINVAL;
		}
		if (!o->output) {
			argp_error(st, "merge wants --output (-o), the file to write");
			return EINVAL;
		}
		if (o->name && !bw_learn_profile_name_ok(o->name)) {
			argp_error(
			    st, "--name wants 1 to 64 letters, digits, '.', '_' or '-', not '%s'",
			    o->name);
			return EINVAL;
		}
	}
	return bw_parse_opt(key, arg, st);
}

static const struct argp_option options[] = {
    {"output", 'o', "FILE", 0, "merge: write the merged profile to FILE", 0},
    {"name", BW_KEY_NAME, "NAME", 0, "merge: the merged profile's name (default: the first one's)",
     0},
    BW_OPTS_LEARN,
    BW_OPTS_COMMON};

static const struct argp argp = {
    options, parse, "merge PROFILE... -o FILE\ndiff OLD NEW",
    "Work on profile files: merge learned profiles of one service into one, or compare two. "
    "Nothing is loaded; no privilege is needed.\v"
    "merge: each input's exact rules are read back as what was learned (with the count and "
    "programs of their \"# seen\" comments) and generalised again over the union, as if one "
    "run had done what all of them did: eight files of a directory seen across two runs make "
    "its subtree rule. Every other rule, and every include, is kept as written. The inputs "
    "must agree on mode, defaults, on-deny and match lines; the name is the first input's "
    "unless --name is given. Exit status 0 when written, 1 when an input does not load or "
    "the inputs disagree, 2 for a bad command line.\n\n"
    "diff: the same as `bpfwarden diff OLD NEW` (see its --help)."};

const struct bw_command bw_cmd_profile = {"profile", &argp, profile, 0, 0};
