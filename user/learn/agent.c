// SPDX-License-Identifier: GPL-2.0-only
/*
 * Between the kernel's learn records and the profile writer (user/learn/): decode
 * each record into a struct bw_learned, let the writer look at the host's
 * file system for secrets, and save the result where the user asked,
 * atomically.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfwarden.h"
#include "learn.h"
#include "learn_agent.h"
#include "libdir.h"
#include "util.h"

/* This agent's own program, read once ("" when /proc cannot say). */
static const char *agent_exe(void)
{
	static char self[PATH_MAX];
	static bool known;

	if (!known) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[n > 0 ? n : 0] = '\0';
		known = true;
	}
	return self;
}

/*
 * A process's own /proc entries (/proc/PID..., the kernel says which:
 * BW_EVF_OWN_PROC, by the entry's struct pid, so PID may be a namespace's)
 * are learned as /proc/self...: the next run has another PID, and the kernel
 * matches a process's own /proc/PID to rules on /proc/self.
 */
static void own_proc_as_self(char *path, size_t size)
{
	size_t n = 6;

	if (strncmp(path, "/proc/", 6))
		return;
	while (path[n] >= '0' && path[n] <= '9')
		n++;
	if (n == 6 || (path[n] && path[n] != '/') || strlen(path) + 10 - n >= size)
		return;
	memmove(path + 10, path + n, strlen(path + n) + 1);
	memcpy(path, "/proc/self", 10);
}

/* A learn record, decoded into what the profile writer aggregates. */
void bw_learn_event(void *ctx, const struct bw_event *ev, const char *path, const char *exe,
		    bool here)
{
	struct bw_learned l = {};
	char name[BW_PATH_BUF + 1], comm[BW_COMM_LEN + 1];
	struct bw_net_obj o;

	snprintf(comm, sizeof(comm), "%.*s", BW_COMM_LEN, ev->comm);
	l.program = exe && *exe ? exe : comm;
	/*
	 * `run` starts the command from a copy of itself in the governed cgroup:
	 * what that copy does (the command's exec) is the start, and the comments
	 * should not name wherever this build happens to live.
	 */
	if (exe && *agent_exe() && !strcmp(exe, agent_exe()))
		l.program = "bpfwarden (starting the command)";
	if (bw_op_ns(ev->op) >= 0) {
		/*
		 * A mount, chroot, user namespace or move between the sandbox's own
		 * cgroups: `allow mount` and the like, no object.
		 */
		l.cat = BW_CAT_NS;
		l.what = bw_op_ns(ev->op);
		bw_learn_add(ctx, &l);
		return;
	}
	/* An exec whose program could not be read (BW_DF_EXEC): the read is what to allow. */
	switch (ev->op == BW_OP_EXEC && (ev->access & BW_ACC_R) ? BW_OP_OPEN : ev->op) {
	case BW_OP_EXEC:
	case BW_OP_MMAP:
	case BW_OP_MPROTECT:
		if (!ev->path_len)
			return; /* a memfd: no path to allow; `allow exec memfd` is a choice to make
				   by hand */
		l.cat = BW_CAT_EXEC;
		l.access = ev->op == BW_OP_EXEC ? BW_ACC_X : BW_ACC_M;
		break;
	case BW_OP_CAPABLE:
		/* Only one privilege is the profile's to allow: `net admin`. */
		if (ev->path_len != sizeof("CAP_NET_ADMIN") - 1 ||
		    memcmp(path, "CAP_NET_ADMIN", ev->path_len))
			return;
		l.cat = BW_CAT_NET;
		l.net_op = BW_NET_ADMIN;
		bw_learn_add(ctx, &l);
		return;
	case BW_OP_RECEIVE_SOCKET:
		/* Only a raw or packet socket has a rule to allow it: `net raw`. */
		if (ev->path_len < sizeof(o))
			return;
		memcpy(&o, path, sizeof(o));
		if (o.proto != SOCK_RAW && o.family != BW_FAM_PACKET)
			return;
		/* fall through */
	case BW_OP_CONNECT:
	case BW_OP_BIND:
	case BW_OP_SENDMSG:
	case BW_OP_RECVMSG: /* a connection's peer decided again: allowed as a connect */
	case BW_OP_ACCEPT:  /* a listener's bind decided again: allowed as a bind */
	case BW_OP_SOCKET:
	case BW_OP_RECEIVE_NET: /* a socket received: allowed as a connect to its peer */
		l.cat = BW_CAT_NET;
		l.net_op = ev->op == BW_OP_BIND || ev->op == BW_OP_ACCEPT ? BW_NET_BIND
			   : ev->op == BW_OP_SOCKET || ev->op == BW_OP_RECEIVE_SOCKET
			       ? BW_NET_RAW
			       : BW_NET_CONNECT;
		if (ev->flags & BW_EVF_UNIX) {
			l.proto = BW_NET_UNIX;
			snprintf(name, sizeof(name), "%.*s", (int)ev->path_len, path);
			l.unix_name = name;
		} else if (l.net_op != BW_NET_RAW && ev->path_len >= sizeof(o)) {
			memcpy(&o, path, sizeof(o));
			l.proto = o.proto == IPPROTO_UDP ? BW_NET_UDP : BW_NET_TCP;
			l.family = o.family;
			memcpy(l.addr, o.addr, sizeof(l.addr));
			l.port = o.port;
		}
		bw_learn_add(ctx, &l);
		return;
	default:
		if (!ev->path_len || (ev->flags & (BW_EVF_PATH_TOO_LONG | BW_EVF_UNREACHABLE)))
			return;
		l.cat = BW_CAT_FILE;
		l.access = ev->access & (BW_ACC_R | BW_ACC_W);
		break;
	}
	snprintf(name, sizeof(name), "%.*s", (int)ev->path_len, path);
	if (ev->flags & BW_EVF_OWN_PROC)
		own_proc_as_self(name, sizeof(name));
	else
		l.here = here && !(ev->flags & (BW_EVF_FS_RELATIVE | BW_EVF_DISCONNECTED));
	l.path = name;
	bw_learn_add(ctx, &l);
}

static int host_mode(void *ctx, const char *path, unsigned *mode)
{
	struct stat st;

	if (lstat(path, &st))
		return -errno;
	*mode = st.st_mode;
	return 0;
}

static int host_list(void *ctx, const char *dir,
		     int (*each)(void *arg, const char *name, unsigned mode), void *arg)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), ret = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while (!ret && (errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			ret = errno == ENOENT ? 0 : -errno; /* gone meanwhile: nothing to expose */
		else
			ret = each(arg, e->d_name, st.st_mode);
	}
	if (!e && errno && !ret)
		ret = -errno;
	closedir(d);
	return ret;
}

/* O_NONBLOCK: a FIFO put at a learned file's name opens and reads as nothing. */
static long host_read(void *ctx, const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	size_t n = 0;
	long ret;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size > cap) {
		ret = -EFBIG;
		goto out;
	}
	while (n < cap) {
		ssize_t got = read(fd, buf + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			goto out;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	ret = (long)n;
out:
	close(fd);
	return ret;
}

/*
 * The paths are the governed processes' own: for a container, this host's file
 * at the same path may be another file, or none. So the writer refuses on what
 * it finds, and reads a file's contents (content roots) only where the agent
 * saw the process's object at the same name (bw_learned.here).
 */
const struct bw_learn_fs bw_learn_host_fs = {
    .mode = host_mode, .list = host_list, .read = host_read};

unsigned bw_learn_min_children; /* 0: the writer's default */
unsigned bw_learn_flags;
bool bw_learn_tell_widenings = true;

int bw_learn_save(struct bw_learn_set *set, const char *output, const char *cmd,
		  const struct bw_profile *const *bases, size_t nbases)
{
	/*
	 * The shell abstraction allows the shell and every everyday utility: it
	 * is folded in only when the workload ran a shell itself, never because
	 * it ran one utility.
	 */
	static const char *const with_shell[] = {"abstractions/base", "abstractions/python",
						 "abstractions/shell", NULL};
	static const char *const without_shell[] = {"abstractions/base", "abstractions/python",
						    NULL};
	const char *const *abstractions =
	    bw_learn_has_exec(set, "/usr/bin/dash") || bw_learn_has_exec(set, "/usr/bin/bash")
		? with_shell
		: without_shell;
	struct bw_learn_opts opts = {};
	char tmp[PATH_MAX], name[65], why[512] = "", *wide = NULL;
	size_t wlen = 0;
	const char *base = !cmd ? "" : strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
	size_t i, n = 0;
	FILE *f;
	int ret;

	/* The profile's name: the command's, in the characters names allow. */
	for (i = 0; base[i] && n < sizeof(name) - 1; i++)
		if (isalnum((unsigned char)base[i]) || strchr("._-", base[i]))
			name[n++] = base[i];
	name[n] = '\0';
	if (!n || !isalnum((unsigned char)name[0]))
		snprintf(name, sizeof(name), "learned");
	opts.name = cmd || !nbases ? name : NULL;
	opts.bases = bases;
	opts.nbases = nbases;
	opts.libdir = bw_profile_libdir();
	opts.fs = &bw_learn_host_fs;
	opts.abstractions = abstractions;
	opts.min_children = bw_learn_min_children;
	opts.flags = bw_learn_flags;
	snprintf(tmp, sizeof(tmp), "%s.tmp", output);
	f = fopen(tmp, "we");
	if (!f) {
		bw_err("cannot write %s: %s", tmp, strerror(errno));
		return -errno;
	}
	if (bw_learn_tell_widenings)
		opts.widenings = open_memstream(&wide, &wlen);
	opts.why = why;
	opts.why_len = sizeof(why);
	ret = bw_learn_write_profile(set, &opts, f);
	if (opts.widenings && fclose(opts.widenings) && !ret)
		ret = -ENOMEM;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, output))
		ret = -errno;
	if (ret) {
		bw_err("cannot write the learned profile %s: %s", output,
		       why[0] ? why : strerror(-ret));
		unlink(tmp);
		free(wide);
		return ret;
	}
	bw_info("learned profile written to %s", output);
	/* What to review first: the rules that allow more than the workload was seen doing. */
	if (wlen)
		bw_info("these rules allow more than was seen (review them before enforcing):\n%s",
			wide);
	free(wide);
	return 0;
}
