/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The command line: one argp option table per command, from which argp
 * generates usage and --help, over one set of option definitions and one
 * parser. argp as in libbpf-tools; it also fits `run ... -- CMD`: parsed in
 * order, the first argument that is not an option ends our options and the
 * rest is CMD (see bw_parse_opt).
 */
#ifndef BW_CLI_H
#define BW_CLI_H

#include <argp.h>
#include <stdbool.h>

#include "bpfwarden.h"

/*
 * Deny and audit events per governed cgroup and second (--event-rate); the
 * rest are counted and reported as `lost` records with reason "throttled".
 */
#define BW_DEFAULT_EVENT_RATE 1000

/* Every option of every command; a command's table says which it takes. */
struct bw_opts {
	const char *profile, *log, *output, *cgroup;
	enum bw_mode mode;
	bool mode_given;
	bool all;
	bool replace;	      /* attach: take a governed subtree over */
	bool json;	      /* status: one JSON object */
	const char **explain; /* check: the objects to explain */
	int nexplain;
	const char *name;      /* profile merge: the merged profile's name */
	long duration;	       /* seconds; 0: not given */
	unsigned event_rate;   /* BW_DEFAULT_EVENT_RATE unless given; 0: no limit */
	unsigned min_children; /* 0: the learner's default */
	unsigned learn_flags;  /* BW_LEARN_NO_* */
	char **args;	       /* the arguments (run: CMD [ARG...]), NULL-terminated */
	int nargs;
	/* daemon */
	const char *policy_dir, *metrics_addr, *socket, *runtime_state, *learn_dir;
	bool per_pod_metrics, bpf_stats;
};

/* Keys of options without a short form. */
enum {
	BW_KEY_EVENT_RATE = 0x100,
	BW_KEY_MIN_CHILDREN,
	BW_KEY_EXACT,
	BW_KEY_USAGE,
	BW_KEY_POLICY_DIR,
	BW_KEY_METRICS_ADDR,
	BW_KEY_SOCKET,
	BW_KEY_RUNTIME_STATE,
	BW_KEY_PER_POD_METRICS,
	BW_KEY_LEARN_DIR,
	BW_KEY_BPF_STATS,
	BW_KEY_REPLACE,
	BW_KEY_JSON,
	BW_KEY_EXPLAIN,
	BW_KEY_NAME,
};

/* The options, defined once; each command lists the ones it takes. */
#define BW_OPT_PROFILE                                                                             \
	{                                                                                          \
		"profile", 'p', "FILE", 0, "The profile (learning: the one to start from)", 0      \
	}
#define BW_OPT_MODE                                                                                \
	{                                                                                          \
		"mode", 'm', "MODE", 0,                                                            \
		    "enforce, audit or learn (default: the profile's, else enforce)", 0            \
	}
#define BW_OPT_LOG                                                                                 \
	{                                                                                          \
		"log", 'l', "FILE", 0,                                                             \
		    "Append the audit log (JSON Lines) to FILE (- : standard output), not "        \
		    "standard "                                                                    \
		    "error",                                                                       \
		    0                                                                              \
	}
#define BW_OPT_EVENT_RATE                                                                          \
	{                                                                                          \
		"event-rate", BW_KEY_EVENT_RATE, "N", 0,                                           \
		    "Log at most N deny and audit events a second per cgroup, count the rest as "  \
		    "lost "                                                                        \
		    "(default 1000, 0: no limit)",                                                 \
		    0                                                                              \
	}
#define BW_OPT_CGROUP                                                                              \
	{                                                                                          \
		"cgroup", 'c', "PATH", 0,                                                          \
		    "A cgroup v2 directory, absolute or below the cgroup2 mount", 0                \
	}
#define BW_OPT_ALL                                                                                 \
	{                                                                                          \
		"all", 'a', 0, 0, "Every cgroup of the host but the agent's own", 0                \
	}
#define BW_OPT_DURATION                                                                            \
	{                                                                                          \
		"duration", 'd', "SECONDS", 0, "Stop after SECONDS (default: at SIGINT, SIGTERM)", \
		    0                                                                              \
	}
#define BW_OPT_OUTPUT                                                                              \
	{                                                                                          \
		"output", 'o', "PATH", 0,                                                          \
		    "Write the learned profile to PATH (a directory with --all)", 0                \
	}
#define BW_OPT_REPLACE                                                                             \
	{                                                                                          \
		"replace", BW_KEY_REPLACE, 0, 0,                                                   \
		    "If the cgroup is governed, replace its profile at once (no gap, no mix)", 0   \
	}
/* Learning: how far the profile writer generalises (docs/learn.md). */
#define BW_OPTS_LEARN                                                                              \
	{"min-children",                                                                           \
	 BW_KEY_MIN_CHILDREN,                                                                      \
	 "N",                                                                                      \
	 0,                                                                                        \
	 "Allow a directory's subtree when N of its files were used (default 8)",                  \
	 0},                                                                                       \
	{                                                                                          \
		"exact", BW_KEY_EXACT, 0, 0, "One rule per object seen, no generalisation", 0      \
	}
/* Every command takes these. */
#define BW_OPTS_COMMON                                                                             \
	{"verbose", 'v', 0, 0, "Debug messages, libbpf's among them", -1},                         \
	    {"help", 'h', 0, 0, "This help", -1},                                                  \
	    {"usage", BW_KEY_USAGE, 0, 0, "A short usage message", -1},                            \
	{                                                                                          \
		0                                                                                  \
	}

/*
 * The parser of every option above and of the arguments: a command's own
 * parser passes what it does not check itself on to this one. On a usage
 * error it says why (argp_error) and returns EINVAL.
 */
error_t bw_parse_opt(int key, char *arg, struct argp_state *state);

/* A command: its name, its argp (whose doc's first line is its summary) and its body. */
struct bw_command {
	const char *name;
	const struct argp *argp;
	int (*run)(struct bw_opts *o); /* returns the exit status */
	unsigned argp_flags;	       /* ARGP_IN_ORDER: options stop at the first argument */
	int usage_status;	       /* for a bad command line; 0: BW_EXIT_USAGE */
};

/*
 * Exit statuses (docs/operations.md, "Exit statuses"). `run` passes CMD's
 * own on, so its own failures take those env(1), timeout(1) and podman use,
 * which no ordinary command returns for itself.
 */
#define BW_EXIT_USAGE	   2   /* a bad command line (every command but run) */
#define BW_EXIT_RUN_FAILED 125 /* run: bpfwarden itself failed, CMD did not start */
#define BW_EXIT_CANNOT_RUN 126 /* run: CMD found but not runnable, or refused by the profile */
#define BW_EXIT_NOT_FOUND  127 /* run: CMD not found */

extern const struct bw_command bw_cmd_run, bw_cmd_attach, bw_cmd_detach, bw_cmd_mode, bw_cmd_learn,
    bw_cmd_audit, bw_cmd_status, bw_cmd_check, bw_cmd_reset, bw_cmd_daemon, bw_cmd_selftest,
    bw_cmd_upgrade, bw_cmd_diff, bw_cmd_profile;

/*
 * Parse argv (argv[0] is the command's name) with the command's argp and
 * run it. Exit status 0 after --help or --usage, 2 after a usage error
 * (explained on stderr), else the command's.
 */
int bw_command_main(const struct bw_command *c, int argc, char **argv);

#endif
