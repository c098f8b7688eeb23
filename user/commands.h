/* SPDX-License-Identifier: GPL-2.0-only */
/* Each subcommand takes its own argv (argv[0] is the subcommand) and returns the exit status. */
#ifndef BW_COMMANDS_H
#define BW_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_mode(int argc, char **argv);
int cmd_learn(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_reset(int argc, char **argv);

#endif
