// SPDX-License-Identifier: GPL-2.0-only
/*
 * mmaploop MODE FILE N: one page mapped and unmapped N times; prints the
 * nanoseconds per iteration. The workload of tools/bench/mmap-exec.sh.
 * MODE: r (FILE, PROT_READ), rx (FILE, PROT_READ|PROT_EXEC), anonx (anonymous
 * memory, PROT_READ|PROT_EXEC; FILE is not opened); rpx and anonpx map FILE or
 * anonymous memory PROT_READ and then mprotect it PROT_READ|PROT_EXEC (the
 * file_mprotect hook).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int prot = PROT_READ, flags = MAP_PRIVATE, fd = -1, later = 0;
	struct timespec a, b;
	long n, i, page = sysconf(_SC_PAGESIZE);
	double ns;

	if (argc != 4 || (n = strtol(argv[3], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: mmaploop r|rx|anonx|rpx|anonpx FILE N\n");
		return 2;
	}
	if (!strcmp(argv[1], "rpx") || !strcmp(argv[1], "anonpx"))
		later = 1;
	else if (strcmp(argv[1], "r"))
		prot |= PROT_EXEC;
	if (!strncmp(argv[1], "anon", 4)) {
		flags |= MAP_ANONYMOUS;
	} else {
		fd = open(argv[2], O_RDONLY);
		if (fd < 0) {
			perror(argv[2]);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		void *p = mmap(NULL, page, prot, flags, fd, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		if (later && mprotect(p, page, PROT_READ | PROT_EXEC)) {
			perror("mprotect");
			return 1;
		}
		munmap(p, page);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("%.1f\n", ns / n);
	return 0;
}
