// SPDX-License-Identifier: GPL-2.0-only
/*
 * dcroute FIRST N READY GO SECOND: the decision cache's routes
 * (tests/escape/test_dcache.py). Opens and reads FIRST N times, so that its
 * verdict is kept; prints "ERR <ERRNO>" and exits 1 if one of those fails.
 * Then creates READY and waits (up to 60 s) for GO to exist, while the
 * harness changes what FIRST's name, mount or policy means outside the
 * sandbox; then opens SECOND once and prints "OK <contents>" or
 * "ERR <ERRNO>".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *errno_name(int e)
{
	switch (e) {
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	default:
		return strerror(e);
	}
}

/* Read path; 0 with its first line in buf, or an errno. */
static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec tick = {0, 10 * 1000 * 1000};
	char buf[256];
	int n, i, err, fd;

	if (argc != 6 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: dcroute FIRST N READY GO SECOND\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		err = read_file(argv[1], buf, sizeof(buf));
		if (err) {
			printf("ERR %s (open %d of %s)\n", errno_name(err), i + 1, argv[1]);
			return 1;
		}
	}
	fd = open(argv[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		printf("ERR %s (creating %s)\n", errno_name(errno), argv[3]);
		return 1;
	}
	close(fd);
	for (i = 0; access(argv[4], F_OK); i++) {
		if (i == 6000) {
			fprintf(stderr, "dcroute: %s did not appear\n", argv[4]);
			return 1;
		}
		nanosleep(&tick, NULL);
	}
	err = read_file(argv[5], buf, sizeof(buf));
	if (err)
		printf("ERR %s\n", errno_name(err));
	else
		printf("OK %s\n", buf);
	return 0;
}
