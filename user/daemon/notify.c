// SPDX-License-Identifier: GPL-2.0-only
/*
 * The service manager's notification protocol (sd_notify(3)), for a unit
 * of Type=notify: READY=1 once the daemon answers the hook, WATCHDOG=1 from
 * the loop while it turns, STOPPING=1 on the way out. The protocol is one
 * datagram of text to the socket named by $NOTIFY_SOCKET; written here
 * rather than linked from libsystemd so that the agent stays one binary
 * with the same dependencies under any init system.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "util.h"

static struct sockaddr_un notify_addr;
static socklen_t notify_len;
static long watchdog_ms;

int d_notify_init(void)
{
	const char *path = getenv("NOTIFY_SOCKET"), *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	size_t n;

	/* Nothing the daemon starts is the manager's main process. */
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	if (!path || !*path)
		return 0;
	n = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(notify_addr.sun_path)) {
		bw_err("NOTIFY_SOCKET=%s: want an absolute path or @name of at most %zu bytes",
		       path, sizeof(notify_addr.sun_path) - 1);
		return -EINVAL;
	}
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, path, n);
	if (path[0] == '@')
		notify_addr.sun_path[0] = '\0';
	notify_len = offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/');
	/* The watchdog is this process's only if WATCHDOG_PID, when set, says so. */
	if (usec && (!pid || strtol(pid, NULL, 10) == (long)getpid())) {
		char *end;
		unsigned long long us = strtoull(usec, &end, 10);

		if (*end || !us) {
			bw_err("WATCHDOG_USEC=%s: want a positive number of microseconds", usec);
			return -EINVAL;
		}
		/* Twice per period, as sd_watchdog_enabled(3) advises. */
		watchdog_ms = (long)(us / 2000) ? (long)(us / 2000) : 1;
	}
	return 0;
}

long d_notify_watchdog_ms(void)
{
	return notify_len ? watchdog_ms : 0;
}

int d_notify(const char *fmt, ...)
{
	char text[512];
	va_list ap;
	int fd, len, ret = 0;

	if (!notify_len)
		return 0;
	va_start(ap, fmt);
	len = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(text))
		len = sizeof(text) - 1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, text, len, MSG_NOSIGNAL, (struct sockaddr *)&notify_addr, notify_len) < 0)
		ret = -errno;
	close(fd);
	return ret;
}
