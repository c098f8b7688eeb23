// SPDX-License-Identifier: GPL-2.0-only
/*
 * `bpfwarden selftest [--list] [ROUTE...]`: the escape corpus
 * (tests/escape/, docs/threat-model.md) run against this kernel with this
 * agent, so an operator can check a node before trusting it. Each route's
 * hostile program runs in a scratch sandbox under a profile that forbids
 * what it reaches, then under a permissive one (the control that proves the
 * route is real here); every route is printed as refused, OPEN, broken
 * (the control did not get through), failed or skipped.
 *
 * The corpus is Python driving small C programs, as the VM tests run it:
 * this command finds it (a checkout, or what `make install` put in
 * <prefix>/share/bpfwarden/selftest) and runs its runner,
 * tests/escape/selftest.py, with this binary as the agent under test.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "libdir.h"

/* Names the corpus's root (the directory holding tests/escape), overriding the lookup. */
#define BW_SELFTEST_DIR_ENV "BPFWARDEN_SELFTEST_DIR"
#define BW_SELFTEST_RUNNER  "tests/escape/selftest.py"

enum { BW_KEY_LIST = 0x200 };

static bool list_only;

/* Where the corpus's root is: the checkout this binary was built in, or the installed copy. */
static int corpus_root(const char *exe, char *dir, size_t size)
{
	static const char *const below[] = {".", "share/bpfwarden/selftest"};
	const char *env = getenv(BW_SELFTEST_DIR_ENV);
	char tried[2 * PATH_MAX + 64];
	int err;

	if (env && env[0]) {
		if ((size_t)snprintf(dir, size, "%s", env) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	err = bw_dir_near_exe(exe, below, sizeof(below) / sizeof(below[0]), BW_SELFTEST_RUNNER, dir,
			      size, tried, sizeof(tried));
	if (err == -ENOENT)
		fprintf(stderr,
			"bpfwarden selftest: no escape corpus: $%s is not set and none of %s holds "
			"%s (`make install` installs it)\n",
			BW_SELFTEST_DIR_ENV, tried, BW_SELFTEST_RUNNER);
	return err;
}

/*
 * The helpers the corpus runs (fsop, mountop...): in the build tree next to
 * this binary, else where `make install` puts programs, <prefix>/libexec
 * (ELF files stay out of share/), else in the corpus's own build/.
 */
static void helpers_dir(const char *exe, const char *root, char *dir, size_t size)
{
	static const char *const near[] = {"", "/../libexec/bpfwarden"};
	char probe[PATH_MAX + 64], resolved[PATH_MAX];
	struct stat st;
	const char *slash = strrchr(exe, '/');

	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		snprintf(probe, sizeof(probe), "%.*s%s/tests/fsop", (int)(slash - exe), exe,
			 near[i]);
		/* Resolved: the corpus's profiles name it, and paths there have no "..". */
		if (stat(probe, &st) == 0 && realpath(dirname(probe), resolved)) {
			snprintf(dir, size, "%s", dirname(resolved));
			return;
		}
	}
	snprintf(dir, size, "%s/build", root);
}

static int selftest(struct bw_opts *o)
{
	char exe[PATH_MAX], root[PATH_MAX], build[PATH_MAX + 8], runner[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char **argv;
	int i, err;

	if (n <= 0) {
		fprintf(stderr, "bpfwarden selftest: where is this binary? %s\n", strerror(errno));
		return 2;
	}
	exe[n] = '\0';
	err = corpus_root(exe, root, sizeof(root));
	if (err) {
		if (err != -ENOENT)
			fprintf(stderr, "bpfwarden selftest: %s\n", strerror(-err));
		return 2;
	}
	if (!list_only && geteuid() != 0) {
		fprintf(stderr,
			"bpfwarden selftest: needs root: each route runs in a sandbox of its "
			"own, and some as root in it\n");
		return 2;
	}
	helpers_dir(exe, root, build, sizeof(build));
	snprintf(runner, sizeof(runner), "%s/%s", root, BW_SELFTEST_RUNNER);
	if (setenv("BW_AGENT", exe, 1) || setenv("BW_BUILD", build, 1) || chdir(root)) {
		fprintf(stderr, "bpfwarden selftest: %s: %s\n", root, strerror(errno));
		return 2;
	}
	argv = calloc((size_t)o->nargs + 4, sizeof(*argv));
	if (!argv)
		return 2;
	argv[0] = "python3";
	argv[1] = runner;
	i = 2;
	if (list_only)
		argv[i++] = "--list";
	for (int a = 0; a < o->nargs; a++)
		argv[i++] = o->args[a];
	fflush(NULL);
	execvp("python3", argv);
	fprintf(stderr, "bpfwarden selftest: cannot run python3, which the corpus needs: %s\n",
		strerror(errno));
	free(argv);
	return 2;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	if (key == BW_KEY_LIST) {
		list_only = true;
		return 0;
	}
	return bw_parse_opt(key, arg, st);
}

static const struct argp_option options[] = {
    {"list", BW_KEY_LIST, 0, 0, "List the routes, with what each tries, and run none", 0},
    BW_OPTS_COMMON};

static const struct argp argp = {
    options, parse, "[ROUTE...]",
    "Run the escape corpus against this kernel and say, route by route, whether it is "
    "refused.\v"
    "Each route (docs/threat-model.md) is a hostile program tried in a sandbox of its own "
    "under a profile that forbids what it reaches, and then under a permissive profile, the "
    "control that proves the route is real on this node. Each is printed as `refused`, `OPEN` "
    "(it got through), `broken` (the control did not get through: the route proves nothing "
    "here), `failed` or `skipped` (with the reason). Exit status 0 when no route is open, "
    "broken or failed, 1 otherwise, 2 when the corpus cannot run. Needs root, BPF LSM and "
    "python3; the corpus is found in the checkout this binary was built in, else in "
    "<prefix>/share/bpfwarden/selftest, or at $BPFWARDEN_SELFTEST_DIR."};

const struct bw_command bw_cmd_selftest = {"selftest", &argp, selftest, 0};
