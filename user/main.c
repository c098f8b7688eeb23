// SPDX-License-Identifier: GPL-2.0-only
/* bpfwarden: kernel-backed sandbox and audit agent. Subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cmd_check.h"
#include "commands.h"
#include "util.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
    {"run", cmd_run, "run --profile FILE [--mode M] [--log FILE] -- CMD [ARG...]"},
    {"run", cmd_run, "run --mode learn [--profile FILE] --output FILE -- CMD [ARG...]"},
    {"attach", cmd_attach, "attach --cgroup PATH --profile FILE [--mode M] [--log FILE]"},
    {"detach", cmd_detach, "detach --cgroup PATH"},
    {"mode", cmd_mode, "mode --cgroup PATH enforce|audit|learn"},
    {"learn", cmd_learn, "learn --cgroup PATH [--duration SECONDS] --output FILE"},
    {"learn", cmd_learn,
     "learn --all [--duration SECONDS] --output DIR   (one profile per cgroup)"},
    {"audit", cmd_audit, "audit --all [--duration SECONDS] [--log FILE]   (host-wide, a summary)"},
    {"status", cmd_status, "status"},
    {"check", cmd_check, "check FILE..."},
    {"reset", cmd_reset, "reset   (unpin everything: nothing stays governed)"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: bpfwarden COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].help);
	fprintf(f, "\nThe audit log (JSON Lines) goes to standard error unless --log is given.\n"
		   "Docs: docs/profile-language.md, docs/events.md, docs/testing.md\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "bpfwarden: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
