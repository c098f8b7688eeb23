// SPDX-License-Identifier: GPL-2.0-only
/*
 * Option parsing for every command (cli.h). argp runs with ARGP_NO_EXIT and
 * our own --help and --usage, so that parsing never ends the process: a
 * command can be run and tested in-process, and main decides the exit.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "learn.h"
#include "util.h"

/* Returned by a parser after --help or --usage: stop, and exit 0. */
#define BW_PARSE_DONE ECANCELED

/* A whole decimal number in [min, max] and nothing else (no sign, space or suffix). */
static int parse_number(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The numbers options take: one home for each, with the range it allows. */
static const struct {
	int key;
	unsigned long min, max;
	const char *want;
} numbers[] = {
    {'d', 1, INT_MAX, "--duration wants a whole number of seconds"},
    {BW_KEY_EVENT_RATE, 0, 1000000, "--event-rate wants events a second (0: no limit)"},
    {BW_KEY_MIN_CHILDREN, 2, 100000, "--min-children wants a number of files from 2 up"},
};

static error_t number(struct argp_state *st, int key, const char *arg, unsigned long *out)
{
	size_t i;

	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		if (numbers[i].key != key)
			continue;
		if (!parse_number(arg, numbers[i].min, numbers[i].max, out))
			return 0;
		argp_error(st, "%s, not '%s'", numbers[i].want, arg);
		return EINVAL;
	}
	return EINVAL;
}

error_t bw_parse_opt(int key, char *arg, struct argp_state *st)
{
	struct bw_opts *o = st->input;
	unsigned long v = 0;

	switch (key) {
	case 'p':
		o->profile = arg;
		break;
	case 'm':
		if (bw_mode_parse(arg, strlen(arg), &o->mode)) {
			argp_error(st, "unknown mode '%s' (enforce, audit or learn)", arg);
			return EINVAL;
		}
		o->mode_given = true;
		break;
	case 'l':
		o->log = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case BW_KEY_NAME:
		o->name = arg;
		break;
	case 'c':
		o->cgroup = arg;
		break;
	case 'a':
		o->all = true;
		break;
	case BW_KEY_REPLACE:
		o->replace = true;
		break;
	case BW_KEY_JSON:
		o->json = true;
		break;
	case 'd':
	case BW_KEY_EVENT_RATE:
	case BW_KEY_MIN_CHILDREN:
		if (number(st, key, arg, &v))
			return EINVAL;
		if (key == 'd')
			o->duration = (long)v;
		else if (key == BW_KEY_EVENT_RATE)
			o->event_rate = (unsigned)v;
		else
			o->min_children = (unsigned)v;
		break;
	case BW_KEY_EXACT:
		o->learn_flags |= BW_LEARN_NO_FANOUT | BW_LEARN_NO_VOLATILE;
		break;
	case 'v':
		bw_verbose = true;
		break;
	case BW_KEY_POLICY_DIR:
		o->policy_dir = arg;
		break;
	case BW_KEY_METRICS_ADDR:
		o->metrics_addr = arg;
		break;
	case BW_KEY_SOCKET:
		o->socket = arg;
		break;
	case BW_KEY_RUNTIME_STATE:
		o->runtime_state = arg;
		break;
	case BW_KEY_PER_POD_METRICS:
		o->per_pod_metrics = true;
		break;
	case BW_KEY_LEARN_DIR:
		o->learn_dir = arg;
		break;
	case BW_KEY_BPF_STATS:
		o->bpf_stats = true;
		break;
	case 'h':
		argp_state_help(st, stdout, ARGP_HELP_STD_HELP);
		return BW_PARSE_DONE;
	case BW_KEY_USAGE:
		argp_state_help(st, stdout, ARGP_HELP_USAGE);
		return BW_PARSE_DONE;
	case ARGP_KEY_ARGS:
		/* The rest of argv: in order (run), everything after the first non-option. */
		o->args = st->argv + st->next;
		o->nargs = st->argc - st->next;
		st->next = st->argc;
		break;
	case ARGP_KEY_END:
		if (o->nargs && !st->root_argp->args_doc) {
			argp_error(st, "unexpected argument '%s'", o->args[0]);
			return EINVAL;
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int bw_command_main(const struct bw_command *c, int argc, char **argv)
{
	struct bw_opts o = {.event_rate = BW_DEFAULT_EVENT_RATE};
	char name[64];
	error_t err;

	/* argp names the program after argv[0] in its messages and usage lines. */
	snprintf(name, sizeof(name), "bpfwarden %s", c->name);
	argv[0] = name;
	err =
	    argp_parse(c->argp, argc, argv, ARGP_NO_EXIT | ARGP_NO_HELP | c->argp_flags, NULL, &o);
	if (err == BW_PARSE_DONE)
		return 0;
	if (err)
		return c->usage_status ? c->usage_status : BW_EXIT_USAGE;
	return c->run(&o);
}
