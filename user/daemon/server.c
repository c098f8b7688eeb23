// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hook socket: one request, one answer (hook/proto.h). Only root may
 * ask (SO_PEERCRED): the runtime runs its hooks as root, and a request
 * names a process whose root the daemon reads. Requests are answered one
 * at a time; each takes milliseconds (the pins of one container).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "util.h"

const unsigned d_latency_bounds_ms[D_LATENCY_BUCKETS] = {1, 5, 10, 25, 50, 100, 250, 1000};

int d_server_open(struct daemon *d)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[sizeof(sa.sun_path)], *slash;
	int fd, ret;

	if (strlen(d->socket) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->socket);
	snprintf(dir, sizeof(dir), "%s", d->socket);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) ||
	    listen(fd, 64)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static void count(struct daemon *d, enum bw_hook_result r, uint64_t us)
{
	size_t i;

	d->metrics.hook[r]++;
	d->metrics.latency_us_sum += us;
	d->metrics.latency_count++;
	for (i = 0; i < D_LATENCY_BUCKETS; i++)
		if (us <= d_latency_bounds_ms[i] * 1000ULL)
			d->metrics.latency_le[i]++;
}

int d_server_accept(struct daemon *d, int lfd)
{
	struct timeval tv = {.tv_sec = 5};
	char buf[BW_HOOK_MSG_MAX], ans[BW_HOOK_RESP_MAX + 64];
	struct bw_hook_resp resp = {.result = BW_HOOK_FAIL};
	struct bw_hook_req req;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	size_t got = 0;
	uint64_t start;
	int fd, n;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -EAGAIN;
	start = now_us();
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != 0) {
		snprintf(resp.detail, sizeof(resp.detail), "only root may ask bpfwarden daemon");
		goto answer;
	}
	while (got < sizeof(buf) && !bw_hook_req_complete(buf, got)) {
		ssize_t r = read(fd, buf + got, sizeof(buf) - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	if (bw_hook_req_decode(buf, got, &req)) {
		snprintf(resp.detail, sizeof(resp.detail), "the daemon cannot read the request");
		goto answer;
	}
	d_container_create(d, &req, &resp);
	bw_hook_req_free(&req);
answer:
	n = bw_hook_resp_encode(&resp, ans, sizeof(ans));
	if (n > 0 && write(fd, ans, n) != n)
		bw_dbg("cannot answer a hook: %s", strerror(errno));
	close(fd);
	count(d, resp.result, now_us() - start);
	return 0;
}
