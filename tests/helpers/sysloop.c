// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysloop MODE ARG N: one system call (or a few that go together) N times;
 * prints the nanoseconds per iteration. The workloads of
 * tools/bench/syscalls.sh, beside openloop's open()+close().
 *
 *   stat PATH        stat(2)
 *   open FILE        open(O_RDONLY) + close of FILE
 *   distinct DIR     open(O_RDONLY) + close of DIR/0, DIR/1, ... DIR/N-1:
 *                    each file once
 *   exec PROGRAM     fork, execve(PROGRAM) with no arguments, waitpid;
 *                    sysloop itself with no arguments exits 0 at once
 *   refused PORT     TCP connect to 127.0.0.1:PORT where nothing listens
 *                    (ECONNREFUSED), then close; the socket made each time
 *   denied PORT      the same connect, expected to fail with EPERM or EACCES
 *                    (a profile refuses it)
 *   accepted PORT    TCP connect to a listener of this process on
 *                    127.0.0.1:PORT, accept, close both
 *   udp PORT         sendto of 64 bytes to a socket of this process bound
 *                    to 127.0.0.1:PORT, and recv of them
 *   tcp PORT         64 bytes each way on one TCP connection to a listener
 *                    of this process on 127.0.0.1:PORT, made before the
 *                    loop: send and recv on the connecting side (the side
 *                    a connect rule governs), send and recv on the accepted
 *                    one
 *
 * An iteration whose call does not end as expected stops the loop with a
 * message and exit status 1: a benchmark of refused calls would otherwise
 * time the wrong thing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in loopback(const char *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int fail(const char *what, long i)
{
	fprintf(stderr, "sysloop: %s (iteration %ld): %s\n", what, i, strerror(errno));
	return 1;
}

static int connect_once(const struct sockaddr_in *a, int want_errno, long i)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r;

	if (s < 0)
		return fail("socket", i);
	r = connect(s, (const struct sockaddr *)a, sizeof(*a));
	if (want_errno == EPERM && r < 0 && errno == EACCES)
		errno = EPERM;
	if (r == 0 || errno != want_errno) {
		if (r == 0)
			errno = 0;
		close(s);
		return fail(want_errno == EPERM ? "connect not refused by the profile"
						: "connect not refused",
			    i);
	}
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	struct timespec t0, t1;
	const char *mode, *arg;
	char buf[64] = {0};
	int lsn = -1, rcv = -1, snd = -1;
	long n, i;
	double ns;

	if (argc == 1)
		return 0; /* exec's program */
	if (argc != 4 || (n = strtol(argv[3], NULL, 10)) <= 0) {
		fprintf(
		    stderr,
		    "usage: sysloop stat|open|distinct|exec|refused|denied|accepted|udp|tcp ARG N\n");
		return 2;
	}
	mode = argv[1];
	arg = argv[2];
	a = loopback(arg);
	if (!strcmp(mode, "accepted") || !strcmp(mode, "tcp")) {
		int one = 1;

		lsn = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lsn < 0 || setsockopt(lsn, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lsn, (struct sockaddr *)&a, sizeof(a)) || listen(lsn, 16))
			return fail("listen", -1);
		if (mode[0] == 't') {
			snd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (snd < 0 || connect(snd, (struct sockaddr *)&a, sizeof(a)))
				return fail("connect", -1);
			rcv = accept4(lsn, NULL, NULL, SOCK_CLOEXEC);
			if (rcv < 0)
				return fail("accept", -1);
		}
	} else if (!strcmp(mode, "udp")) {
		rcv = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		snd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (rcv < 0 || snd < 0 || bind(rcv, (struct sockaddr *)&a, sizeof(a)))
			return fail("udp socket", -1);
	} else if (strcmp(mode, "stat") && strcmp(mode, "exec") && strcmp(mode, "refused") &&
		   strcmp(mode, "denied") && strcmp(mode, "open") && strcmp(mode, "distinct")) {
		fprintf(stderr, "sysloop: unknown mode %s\n", mode);
		return 2;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		if (!strcmp(mode, "stat")) {
			struct stat st;

			if (stat(arg, &st))
				return fail("stat", i);
		} else if (!strcmp(mode, "open") || !strcmp(mode, "distinct")) {
			char path[4096];
			int fd;

			if (mode[0] == 'd')
				snprintf(path, sizeof(path), "%s/%ld", arg, i);
			fd = open(mode[0] == 'd' ? path : arg, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				return fail("open", i);
			close(fd);
		} else if (!strcmp(mode, "exec")) {
			char *const args[] = {(char *)arg, NULL};
			int status;
			pid_t pid = fork();

			if (pid < 0)
				return fail("fork", i);
			if (!pid) {
				execve(arg, args, (char *const[]){NULL});
				_exit(127);
			}
			if (waitpid(pid, &status, 0) != pid)
				return fail("waitpid", i);
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				errno = 0;
				return fail("the program did not exit with 0", i);
			}
		} else if (!strcmp(mode, "refused")) {
			if (connect_once(&a, ECONNREFUSED, i))
				return 1;
		} else if (!strcmp(mode, "denied")) {
			if (connect_once(&a, EPERM, i))
				return 1;
		} else if (!strcmp(mode, "accepted")) {
			int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;

			if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
				return fail("connect", i);
			s = accept4(lsn, NULL, NULL, SOCK_CLOEXEC);
			if (s < 0)
				return fail("accept", i);
			close(s);
			close(c);
		} else if (!strcmp(mode, "tcp")) {
			/* 64 bytes on loopback arrive whole: one recv each. */
			if (send(snd, buf, sizeof(buf), 0) != sizeof(buf))
				return fail("send", i);
			if (recv(rcv, buf, sizeof(buf), MSG_WAITALL) != sizeof(buf))
				return fail("recv", i);
			if (send(rcv, buf, sizeof(buf), 0) != sizeof(buf))
				return fail("send back", i);
			if (recv(snd, buf, sizeof(buf), MSG_WAITALL) != sizeof(buf))
				return fail("recv back", i);
		} else {
			if (sendto(snd, buf, sizeof(buf), 0, (struct sockaddr *)&a, sizeof(a)) !=
			    sizeof(buf))
				return fail("sendto", i);
			if (recv(rcv, buf, sizeof(buf), 0) != sizeof(buf))
				return fail("recv", i);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("%.1f\n", ns / n);
	return 0;
}
