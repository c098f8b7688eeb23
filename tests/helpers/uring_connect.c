// SPDX-License-Identifier: GPL-2.0-only
/*
 * uring_connect ADDR PORT: a TCP connect submitted through io_uring
 * (IORING_OP_CONNECT), which does not pass through connect(2). Prints "OK"
 * or "ERR <errno-name>" and exits 0 or with the errno.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = {};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	socklen_t len;
	int fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: uring_connect ADDR PORT\n");
		return 2;
	}
	if (strchr(argv[1], ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(atoi(argv[2]));
		inet_pton(AF_INET6, argv[1], &a->sin6_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(atoi(argv[2]));
		inet_pton(AF_INET, argv[1], &a->sin_addr);
		len = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	ret = io_uring_queue_init(4, &ring, 0);
	if (fd < 0 || ret) {
		printf("ERR SETUP %s\n", strerror(ret ? -ret : errno));
		return 2;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_connect(sqe, fd, (struct sockaddr *)&ss, len);
	io_uring_submit(&ring);
	ret = io_uring_wait_cqe(&ring, &cqe);
	if (!ret)
		ret = cqe->res;
	if (ret >= 0) {
		printf("OK\n");
		return 0;
	}
	printf("ERR %s\n", strerrorname_np(-ret) ? strerrorname_np(-ret) : "?");
	return -ret;
}
