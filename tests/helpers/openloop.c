// SPDX-License-Identifier: GPL-2.0-only
/*
 * openloop FILE N: open(O_RDONLY) + close of one cached file N times; prints
 * the nanoseconds per iteration. The benchmark's workload (tools/bench).
 *
 * It holds HELD more descriptors of FILE open meanwhile, so that the loop's
 * own struct file is never the last object in use of its slab: then every
 * close frees the slab and every open makes one again, and the same loop
 * measured 7,072 instead of 6,577 guest ns per iteration (6.12, in a child
 * cgroup), depending on nothing but what was allocated before it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define HELD 8

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n, i;
	double ns;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: openloop FILE N\n");
		return 2;
	}
	for (i = 0; i < HELD; i++) {
		if (open(argv[1], O_RDONLY) < 0) {
			perror(argv[1]);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		int fd = open(argv[1], O_RDONLY);

		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("%.1f\n", ns / n);
	return 0;
}
