// SPDX-License-Identifier: GPL-2.0-only
/* bpfwarden: kernel-backed sandbox and audit agent. Subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "loader.h"
#include "version.h"

static const struct bw_command *const commands[] = {
    &bw_cmd_run,     &bw_cmd_attach,   &bw_cmd_detach,	&bw_cmd_mode,	&bw_cmd_learn,
    &bw_cmd_audit,   &bw_cmd_status,   &bw_cmd_check,	&bw_cmd_diff,	&bw_cmd_reset,
    &bw_cmd_profile, &bw_cmd_selftest, &bw_cmd_upgrade, &bw_cmd_daemon,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The command list: each command's summary is the first sentence of its own --help. */
static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: bpfwarden COMMAND [OPTION...] [ARG...]\n\nCommands:\n");
	for (i = 0; i < NCOMMANDS; i++) {
		const char *doc = commands[i]->argp->doc;

		fprintf(f, "  %-8s %.*s\n", commands[i]->name, (int)strcspn(doc, ".\v"), doc);
	}
	fprintf(f, "\n`bpfwarden COMMAND --help` shows a command's options; `bpfwarden --version` "
		   "the version.\nThe audit log (JSON Lines) goes to standard error unless --log "
		   "is given.\nDocs: docs/profile-language.md, docs/events.md, docs/learn.md\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		/* The hash is what the pinned-state check compares (loader.c). */
		printf("bpfwarden %s (BPF objects %016llx)\n", BW_VERSION,
		       (unsigned long long)bw_objects_hash());
		return 0;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i]->name))
			return bw_command_main(commands[i], argc - 1, argv + 1);
	fprintf(stderr, "bpfwarden: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
