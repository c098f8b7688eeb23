// SPDX-License-Identifier: GPL-2.0-only
/*
 * `bpfwarden check FILE...`: parse each profile with its includes and
 * compile it as `run` would (so a profile over a kernel limit fails here,
 * not at load), print every diagnostic, and say which profiles are valid.
 * Loads nothing into the kernel and needs no privilege.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compile.h"
#include "explain.h"
#include "libdir.h"
#include "profile.h"

static int check_one(const char *path, const char *lib, const struct bw_opts *o)
{
	struct bw_diags diags = {0};
	struct bw_profile *p = NULL;
	int err;

	err = bw_profile_load(path, lib, &p, &diags);
	bw_diags_print(stderr, &diags);
	if (err == 0) {
		/* What the kernel's maps cannot hold is found by compiling, as run would. */
		struct bw_compiled c;
		char msg[512] = "";

		err = bw_compile(p, &c, msg, sizeof(msg));
		if (err)
			fprintf(stderr, "%s\n", msg[0] ? msg : strerror(-err));
		else
			printf("%s: ok (%zu rules)\n", path, p->nrules);
		for (int i = 0; !err && i < o->nexplain; i++) {
			err = bw_explain(p, &c, o->explain[i], stdout, msg, sizeof(msg));
			if (err)
				fprintf(stderr, "bpfwarden check: --explain %s\n", msg);
		}
		bw_compiled_free(&c);
	} else if (err != -EINVAL || diags.nerrors == 0) {
		fprintf(stderr, "bpfwarden check: %s: %s\n", path, strerror(-err));
	}
	bw_profile_free(p);
	bw_diags_free(&diags);
	return err ? 1 : 0;
}

static int check(struct bw_opts *o)
{
	const char *lib = bw_profile_libdir();
	int ret = 0;

	for (int i = 0; i < o->nargs; i++) {
		if (check_one(o->args[i], lib, o))
			ret = 1;
	}
	/* Results go to a pipe as often as to a terminal: make sure they left. */
	if (fflush(stdout) != 0) {
		fprintf(stderr, "bpfwarden check: writing results: %s\n", strerror(errno));
		return 1;
	}
	return ret;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;

	if (key == BW_KEY_EXPLAIN) {
		const char **v = realloc(o->explain, (o->nexplain + 1) * sizeof(*v));

		if (!v)
			return ENOMEM;
		v[o->nexplain++] = arg;
		o->explain = v;
		return 0;
	}
	if (key == ARGP_KEY_END && !o->nargs) {
		argp_error(st, "no profile given");
		return EINVAL;
	}
	return bw_parse_opt(key, arg, st);
}

/* The profile library is known at run time only: the help's last words say where it is. */
static char *help_filter(int key, const char *text, void *input)
{
	const char *lib;
	char *out;

	if (key != ARGP_KEY_HELP_POST_DOC)
		return (char *)text;
	lib = bw_profile_libdir();
	if (asprintf(&out, "%s%s.", text, lib ? lib : "(none)") < 0)
		return NULL;
	return out;
}

static const struct argp_option options[] = {
    {"explain", BW_KEY_EXPLAIN, "OBJECT", 0,
     "Say which rule decides OBJECT, and how: an absolute path (file r and w, exec and exec "
     "lib), 'exec memfd', 'net connect|bind tcp|udp ADDR:PORT', 'net connect|bind unix "
     "PATH|@NAME', 'net raw', 'net admin', mount, chroot, userns or cgroup. Repeatable",
     0},
    BW_OPTS_COMMON};

static const struct argp argp = {
    options,
    parse,
    "FILE...",
    "Validate profiles. With their includes; nothing is loaded, no privilege is needed.\v"
    "Errors and warnings are printed as FILE:LINE:COL: error: MESSAGE, and a line "
    "`FILE: ok (N rules)` for each valid profile; exit status 1 if any profile has an "
    "error. Includes are looked up next to the including file, then in the profile "
    "library ($BPFWARDEN_PROFILE_DIR if set, else profiles/ in the build tree this binary is "
    "in, else <prefix>/share/bpfwarden/profiles for one installed in <prefix>/sbin), here ",
    NULL,
    help_filter};

const struct bw_command bw_cmd_check = {"check", &argp, check, 0};
