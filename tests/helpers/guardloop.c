// SPDX-License-Identifier: GPL-2.0-only
/*
 * guardloop MODE N: one call that reaches a hook of bpf/guard.bpf.c or
 * bpf/receive.bpf.c, N times; prints the nanoseconds per iteration. The
 * workload of tools/bench/guard-hooks.sh. MODE:
 *
 *   kill     kill(child, SIGCONT) to a child waiting in pause()   task_kill
 *   nice     setpriority(PRIO_PROCESS, 0, 0) of itself            task_setnice
 *   rlimit   prlimit(0, RLIMIT_NOFILE) set to what it is           task_setrlimit
 *   vmread   process_vm_readv of 8 bytes of the child             ptrace_access_check
 *   bpf      bpf(BPF_PROG_GET_NEXT_ID) past the last id (ENOENT)  bpf
 *   receive  a descriptor sent over a socketpair (SCM_RIGHTS),    file_receive
 *            received and closed
 */
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char word[8] = "guarded";

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, c = 'x';
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, c;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *h;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	h = CMSG_FIRSTHDR(&m);
	if (!h || h->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 3 ? argv[1] : "";
	union bpf_attr attr;
	struct timespec a, b;
	struct rlimit rl;
	char buf[8];
	struct iovec local = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct iovec remote = {.iov_base = word, .iov_len = sizeof(word)};
	pid_t child = -1;
	long n, i;
	ssize_t got;
	int sv[2], fd, ret = 0;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0 ||
	    (strcmp(mode, "kill") && strcmp(mode, "nice") && strcmp(mode, "rlimit") &&
	     strcmp(mode, "vmread") && strcmp(mode, "bpf") && strcmp(mode, "receive"))) {
		fprintf(stderr, "usage: guardloop kill|nice|rlimit|vmread|bpf|receive N\n");
		return 2;
	}
	if (!strcmp(mode, "kill") || !strcmp(mode, "vmread")) {
		child = fork();
		if (child < 0)
			return perror("fork"), 1;
		if (child == 0) {
			signal(SIGCONT, SIG_IGN);
			for (;;)
				pause();
		}
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return perror("socketpair"), 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n && !ret; i++) {
		switch (mode[0]) {
		case 'k':
			ret = kill(child, SIGCONT);
			break;
		case 'n':
			ret = setpriority(PRIO_PROCESS, 0, 0);
			break;
		case 'r':
			if (mode[1] == 'l') {
				ret = prlimit(0, RLIMIT_NOFILE, &rl, NULL);
				break;
			}
			if (send_fd(sv[0], 0) || (fd = recv_fd(sv[1])) < 0)
				ret = -1;
			else
				close(fd);
			break;
		case 'v':
			got = process_vm_readv(child, &local, 1, &remote, 1, 0);
			ret = got == sizeof(buf) ? 0 : -1;
			break;
		case 'b':
			/* Past the last id: ENOENT, after the hook, loaded or not. */
			memset(&attr, 0, sizeof(attr));
			attr.start_id = 0x7ffffffe;
			ret = syscall(SYS_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr)) < 0 &&
			      errno != ENOENT;
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (ret) {
		perror(mode);
		return 1;
	}
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
