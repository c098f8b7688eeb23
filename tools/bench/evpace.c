// SPDX-License-Identifier: GPL-2.0-only
/*
 * evpace RATE SECONDS FILE: tries to open FILE, which the profile refuses,
 * RATE times a second for SECONDS (RATE 0: as fast as it can), so that
 * every attempt is one deny event offered to the agent. The event
 * benchmark's producer (tools/bench/events.sh). Prints
 * "ATTEMPTED REFUSED NS CPU_NS": the attempts, how many the kernel refused
 * (EACCES or EPERM), the time they took and the CPU time this process used.
 *
 * Paced by the clock, not by sleeping a fixed time per attempt: every
 * millisecond it makes the attempts due by then, so a slow wake-up is made
 * up for in the next batch and the offered rate is RATE over the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* One attempt: 1 if the kernel refused it, 0 if it opened, -1 on another error. */
static int attempt(const char *file)
{
	int fd = open(file, O_RDONLY);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EACCES || errno == EPERM ? 1 : -1;
}

int main(int argc, char **argv)
{
	const struct timespec tick = {0, 1000000};
	long rate, attempted = 0, refused = 0, due;
	double seconds, start, end, ns;
	struct rusage ru;
	int r;

	if (argc != 4 || (rate = strtol(argv[1], NULL, 10)) < 0 ||
	    (seconds = strtod(argv[2], NULL)) <= 0) {
		fprintf(stderr, "usage: evpace RATE SECONDS FILE\n");
		return 2;
	}
	start = now_ns();
	end = start + seconds * 1e9;
	for (;;) {
		double t = now_ns();

		if (t >= end)
			break;
		due = rate ? (long)((t - start) * rate / 1e9) + 1 : attempted + 256;
		/* However far behind, it stops at the end: a batch is 256 at most. */
		if (due > attempted + 256)
			due = attempted + 256;
		while (attempted < due) {
			r = attempt(argv[3]);
			if (r < 0) {
				perror(argv[3]);
				return 1;
			}
			refused += r;
			attempted++;
		}
		if (rate && attempted >= (long)((now_ns() - start) * rate / 1e9))
			nanosleep(&tick, NULL);
	}
	ns = now_ns() - start;
	getrusage(RUSAGE_SELF, &ru);
	printf("%ld %ld %.0f %.0f\n", attempted, refused, ns,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		   (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3);
	return 0;
}
