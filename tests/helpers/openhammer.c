// SPDX-License-Identifier: GPL-2.0-only
/*
 * openhammer FILE...: open(O_RDONLY) each FILE in turn, as fast as it can,
 * until SIGTERM; then print one line per FILE: "FILE OK_COUNT EACCES_COUNT
 * OTHER_COUNT" (OTHER: any other errno), and exit 0. It writes "ready\n" on
 * stdout before its first open. On SIGUSR1 it prints the same lines and a
 * line "--" between two opens, and counts from zero again: every open
 * counted after that began after the signal. The lifecycle tests run it in
 * a governed cgroup while its policy is replaced or its programs upgraded;
 * the decision cache's races (tests/escape/test_dcache.py) use SIGUSR1.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_FILES 16

static volatile sig_atomic_t stop, report;

static void on_term(int sig)
{
	stop = 1;
}

static void on_usr1(int sig)
{
	report = 1;
}

static void print_counts(char **files, int n, unsigned long *ok, unsigned long *eacces,
			 unsigned long *other)
{
	int i;

	for (i = 0; i < n; i++)
		printf("%s %lu %lu %lu\n", files[i], ok[i], eacces[i], other[i]);
}

int main(int argc, char **argv)
{
	unsigned long ok[MAX_FILES] = {0}, eacces[MAX_FILES] = {0}, other[MAX_FILES] = {0};
	struct sigaction sa = {.sa_handler = on_term}, sa_usr1 = {.sa_handler = on_usr1};
	int n = argc - 1, i;

	if (n < 1 || n > MAX_FILES) {
		fprintf(stderr, "usage: openhammer FILE... (at most %d)\n", MAX_FILES);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa_usr1, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		if (report) {
			report = 0;
			print_counts(argv + 1, n, ok, eacces, other);
			printf("--\n");
			fflush(stdout);
			for (i = 0; i < n; i++)
				ok[i] = eacces[i] = other[i] = 0;
		}
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
	print_counts(argv + 1, n, ok, eacces, other);
	return 0;
}
