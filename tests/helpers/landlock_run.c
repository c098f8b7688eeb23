// SPDX-License-Identifier: GPL-2.0-only
/*
 * landlock_run [r:DIR | rw:DIR | x:DIR]... -- CMD [ARG...]: run CMD under
 * a Landlock ruleset that handles every file access this kernel's Landlock
 * knows and allows, beneath each DIR, reading (r: files and directories),
 * reading and changing (rw), or reading and executing (x). The benchmarks
 * (tools/bench/) measure a peer with it: Landlock enforcing rules
 * equivalent to a bpfwarden profile's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define READ_ACCESS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define WRITE_ACCESS                                                                               \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |                           \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |                           \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)
#define ALL_V1 (READ_ACCESS | WRITE_ACCESS | LANDLOCK_ACCESS_FS_EXECUTE)

static int die(const char *what)
{
	fprintf(stderr, "landlock_run: %s: %s\n", what, strerror(errno));
	return 125;
}

int main(int argc, char **argv)
{
	struct landlock_ruleset_attr attr = {.handled_access_fs = ALL_V1};
	struct landlock_path_beneath_attr rule;
	int ruleset, i, fd;

	ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return die("landlock_create_ruleset");
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *dir = strchr(argv[i], ':');

		if (!dir) {
			fprintf(stderr, "landlock_run: %s: not r:DIR, rw:DIR or x:DIR\n", argv[i]);
			return 125;
		}
		rule.allowed_access = READ_ACCESS;
		if (!strncmp(argv[i], "rw:", 3))
			rule.allowed_access |= WRITE_ACCESS;
		else if (!strncmp(argv[i], "x:", 2))
			rule.allowed_access |= LANDLOCK_ACCESS_FS_EXECUTE;
		fd = open(dir + 1, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return die(dir + 1);
		rule.parent_fd = fd;
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0))
			return die("landlock_add_rule");
		close(fd);
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: landlock_run [r:DIR | rw:DIR | x:DIR]... -- CMD [ARG...]\n");
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return die("PR_SET_NO_NEW_PRIVS");
	if (syscall(SYS_landlock_restrict_self, ruleset, 0))
		return die("landlock_restrict_self");
	close(ruleset);
	execvp(argv[i + 1], argv + i + 1);
	return die(argv[i + 1]);
}
