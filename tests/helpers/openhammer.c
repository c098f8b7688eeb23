// SPDX-License-Identifier: GPL-2.0-only
/*
 * openhammer FILE...: open(O_RDONLY) each FILE in turn, as fast as it can,
 * until SIGTERM; then print one line per FILE: "FILE OK_COUNT EACCES_COUNT
 * OTHER_COUNT" (OTHER: any other errno), and exit 0. It writes "ready\n" on
 * stdout before its first open. The lifecycle tests run it in a governed
 * cgroup while its policy is replaced or its programs upgraded.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_FILES 16

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	unsigned long ok[MAX_FILES] = {0}, eacces[MAX_FILES] = {0}, other[MAX_FILES] = {0};
	struct sigaction sa = {.sa_handler = on_term};
	int n = argc - 1, i;

	if (n < 1 || n > MAX_FILES) {
		fprintf(stderr, "usage: openhammer FILE... (at most %d)\n", MAX_FILES);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		for (i = 0; i < n; i++) {
			int fd = open(argv[i + 1], O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				ok[i]++;
				close(fd);
			} else if (errno == EACCES) {
				eacces[i]++;
			} else {
				other[i]++;
			}
		}
	}
	for (i = 0; i < n; i++)
		printf("%s %lu %lu %lu\n", argv[i + 1], ok[i], eacces[i], other[i]);
	return 0;
}
