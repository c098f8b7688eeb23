// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden-hook: the container runtime's way to ask `bpfwarden daemon` to
 * govern a container before its first instruction.
 *
 *   bpfwarden-hook          an OCI createRuntime hook (runc, crun; containerd's
 *                           base_runtime_spec, CRI-O and podman hooks.d)
 *   bpfwarden-hook invoke   an NRI v0.1 plugin (containerd 1.6 /etc/nri/conf.json)
 *
 * It reads what the runtime says, finds the container's cgroup, sends the
 * daemon one request (proto.h) and waits for the answer. Exit 0 lets the
 * container start (governed, or not selected, or exempt); non-zero stops it.
 * When the daemon cannot be reached, the selection rules decide alone
 * (select.h): a container that would be selected does not start, unless it
 * is in kube-system or the agent's own pod. No libbpf, no BPF: the daemon
 * does all of that.
 *
 * As an NRI plugin it always prints a valid answer on stdout: a result,
 * with an "error" when the container must not start (and a non-zero exit);
 * `delete` and the other states are answered at once (containerd waits for
 * them in its exit handling).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cgroup.h"
#include "jsonw.h"
#include "proto.h"
#include "version.h"
#include "runtime.h"
#include "select.h"

#define IN_MAX	    (4 << 20)
#define ANSWER_WAIT 20 /* seconds the daemon has to answer */
#define PLUGIN_NAME "bpfwarden-hook"

static int nri_mode;
static const char *nri_version = "0.1";

/* Read a whole small file (or stdin with path NULL); the length, or -errno. */
static ssize_t slurp(const char *path, char **out)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	ssize_t r;

	if (!buf || fd < 0) {
		r = fd < 0 ? -errno : -ENOMEM;
		free(buf);
		return r;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			char *nb = cap < IN_MAX ? realloc(buf, 2 * cap + 1) : NULL;

			if (!nb) {
				r = -EFBIG;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (r < 0) {
		r = r == -EFBIG ? r : -errno;
		free(buf);
		buf = NULL;
	}
	if (path)
		close(fd);
	if (r < 0)
		return r;
	buf[n] = '\0';
	*out = buf;
	return (ssize_t)n;
}

/*
 * An NRI answer on stdout: a result with metadata (what), or with an error.
 * Both readers of NRI v0.1: its first releases read an error object
 * ({"plugin", "message"}) after a non-zero exit, later ones (containerd
 * 1.6.20 among them) read a result whatever the exit status and fail only
 * on its "error".
 */
static void nri_answer(const char *what, const char *error)
{
	struct jw w;

	jw_init(&w);
	jw_begin(&w);
	jw_str(&w, "plugin", PLUGIN_NAME);
	jw_str(&w, "version", nri_version);
	if (error) {
		jw_str(&w, "error", error);
		jw_str(&w, "message", error);
	} else {
		jw_obj(&w, "metadata");
		jw_str(&w, "bpfwarden", what);
		jw_end(&w);
	}
	jw_end(&w);
	jw_write_line(&w, STDOUT_FILENO);
	jw_free(&w);
}

/* The answer that lets the container go on, and exit 0. */
static int ok(const char *what)
{
	if (nri_mode)
		nri_answer(what, NULL);
	return 0;
}

/* The container must not start: say why where the runtime reports it, exit 1. */
static int refuse(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "bpfwarden-hook: %s\n", msg);
	if (nri_mode)
		nri_answer(NULL, msg);
	return 1;
}

/* The cgroup2 mount point, from our mountinfo (field 5, after " - " the type). */
static int cgroup2_mount(char *out, size_t len)
{
	char *text, *line, *next;
	int ret = -ENOENT;

	if (slurp("/proc/self/mountinfo", &text) < 0)
		return -ENOENT;
	for (line = text; line && *line; line = next) {
		char *sep, mnt[PATH_MAX];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && !strchr(mnt, '\\')) {
			snprintf(out, len, "%s", mnt);
			ret = 0;
			break;
		}
	}
	free(text);
	return ret;
}

/*
 * The container's cgroup below the cgroup2 mount: where its init is (we run
 * in the runtime's cgroup namespace), else what its cgroupsPath names.
 */
static int find_cgroup(const struct bw_container *c, char *out, size_t len)
{
	char path[64], *text, *p;

	snprintf(path, sizeof(path), "/proc/%lld/cgroup", c->pid);
	if (c->pid > 0 && slurp(path, &text) >= 0) {
		p = strstr(text, "0::/");
		if (p && (p == text || p[-1] == '\n')) {
			p += 3;
			p[strcspn(p, "\n")] = '\0';
			snprintf(out, len, "%s", p);
			free(text);
			return 0;
		}
		free(text);
	}
	return bw_cgroups_path_dir(c->cgroups_path, out, len);
}

/* Ask the daemon; 0 with its answer, or -errno when it cannot be asked. */
static int ask(const struct bw_hook_req *req, struct bw_hook_resp *resp)
{
	const char *sock = getenv("BW_HOOK_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = ANSWER_WAIT};
	char msg[BW_HOOK_MSG_MAX], ans[BW_HOOK_RESP_MAX + 32];
	size_t got = 0;
	int fd, n, ret;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock && *sock ? sock : BW_HOOK_SOCKET);
	n = bw_hook_req_encode(req, msg, sizeof(msg));
	if (n < 0)
		return n;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || write(fd, msg, n) != n) {
		ret = -errno;
		goto out;
	}
	shutdown(fd, SHUT_WR);
	while (got < sizeof(ans) - 1) {
		ssize_t r = read(fd, ans + got, sizeof(ans) - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
		if (memchr(ans, '\n', got))
			break;
	}
	ret = got ? bw_hook_resp_decode(ans, strcspn(ans, "\n") + (memchr(ans, '\n', got) != NULL),
					resp)
		  : -ECONNRESET;
out:
	close(fd);
	return ret;
}

/* The daemon is unreachable: would it have selected this container? */
static int alone(const struct bw_container *c, const char *cgroup, int err)
{
	struct bw_selectors sel = {};
	const char *profile, *why;
	char *text = NULL;
	int line, have = 0, ret;

	if (slurp(getenv("BW_SELECTORS") ? getenv("BW_SELECTORS") : BW_SELECTORS_FILE, &text) >= 0)
		have = !bw_selectors_parse(text, &sel, &line);
	free(text);
	if (!bw_select(&c->k8s, cgroup, have ? &sel : NULL, &profile)) {
		ret = ok("unselected; the daemon is not running");
	} else if (bw_select_exempt(&c->k8s, have ? &sel : NULL, &why)) {
		fprintf(
		    stderr,
		    "bpfwarden-hook: %s/%s selects profile %s but the daemon is unreachable (%s): "
		    "starting ungoverned (%s)\n",
		    c->k8s.namespace_, c->k8s.pod, profile, strerror(-err), why);
		ret = ok("exempt; the daemon is not running");
	} else {
		ret = refuse("container %s of pod %s/%s selects profile %s, and the bpfwarden "
			     "daemon cannot be reached (%s): not starting it ungoverned",
			     c->k8s.container ? c->k8s.container : c->id, c->k8s.namespace_,
			     c->k8s.pod, profile, strerror(-err));
	}
	bw_selectors_free(&sel);
	return ret;
}

static int govern(struct bw_container *c)
{
	char cg[PATH_MAX], mnt[PATH_MAX], dir[2 * PATH_MAX], root[2 * PATH_MAX];
	struct bw_hook_req req = {.op = "create", .pid = c->pid, .id = c->k8s};
	struct bw_hook_resp resp;
	const char *profile, *why;
	int ret;

	if (c->k8s.type && !strcmp(c->k8s.type, "sandbox"))
		return ok("sandbox");
	ret = find_cgroup(c, cg, sizeof(cg));
	if (!ret)
		ret = cgroup2_mount(mnt, sizeof(mnt));
	if (!ret) {
		snprintf(dir, sizeof(dir), "%s%s", mnt, cg);
		ret = bw_cgroup_id(dir, &req.cgroup_id);
	}
	if (ret) {
		/* Without a cgroup nothing can be governed: only the unselected may start. */
		if (bw_select(&c->k8s, NULL, NULL, &profile) &&
		    !bw_select_exempt(&c->k8s, NULL, &why))
			return refuse("cannot find the cgroup of container %s: %s", c->id,
				      strerror(-ret));
		return ok("no cgroup found");
	}
	req.cgroup = cg;
	req.via = nri_mode ? "nri" : "hook";
	if (nri_mode) {
		req.root = "/";
	} else {
		/* Not pivoted yet: the container's / is the bundle's rootfs in init's namespace. */
		if (c->root[0] == '/')
			snprintf(root, sizeof(root), "%s", c->root);
		else
			snprintf(root, sizeof(root), "%s/%s", c->bundle, c->root);
		req.root = root;
	}
	ret = ask(&req, &resp);
	if (ret)
		return alone(c, cg, ret);
	switch (resp.result) {
	case BW_HOOK_FAIL:
		return refuse("%s", resp.detail);
	case BW_HOOK_EXEMPT:
		fprintf(stderr, "bpfwarden-hook: starting container %s ungoverned: %s\n", c->id,
			resp.detail);
		return ok("exempt");
	case BW_HOOK_UNSELECTED:
		return ok("unselected");
	default:
		return ok(bw_hook_result_name(resp.result));
	}
}

static const char usage[] =
    "Usage: bpfwarden-hook          (an OCI createRuntime hook: the state on stdin)\n"
    "       bpfwarden-hook invoke   (an NRI v0.1 plugin: one request on stdin)\n"
    "       bpfwarden-hook --help | --version\n"
    "\n"
    "Asks `bpfwarden daemon` (socket " BW_HOOK_SOCKET ") to govern the container\n"
    "before its first instruction. Exits 0 when the container may start (governed,\n"
    "not selected, or exempt), 1 when it must not; as an NRI plugin it always\n"
    "prints an answer on standard output.\n";

int main(int argc, char **argv)
{
	struct bw_container c;
	char err[256], path[PATH_MAX];
	char *in = NULL, *cfg = NULL;
	ssize_t n;
	int ret;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("bpfwarden-hook %s\n", BW_VERSION);
		return 0;
	}
	nri_mode = argc > 1 && !strcmp(argv[1], "invoke");
	n = slurp(NULL, &in);
	if (n < 0)
		return refuse("cannot read the request on stdin: %s", strerror(-n));
	if (nri_mode) {
		if (bw_nri_parse(in, n, &c, err, sizeof(err))) {
			free(in);
			return refuse("%s", err);
		}
		if (bwj_str(bwj_get(c.doc[0], "version")))
			nri_version = bwj_str(bwj_get(c.doc[0], "version"));
		/* Only a new container's task is ours; answer the rest at once. */
		ret = strcmp(c.state, "create") ? ok(c.state) : govern(&c);
		bw_container_free(&c);
		free(in);
		return ret;
	}
	if (bw_oci_state_parse(in, n, &c, err, sizeof(err))) {
		free(in);
		return refuse("%s", err);
	}
	snprintf(path, sizeof(path), "%s/config.json", c.bundle);
	n = slurp(path, &cfg);
	if (n < 0)
		ret = refuse("cannot read %s: %s", path, strerror(-n));
	else if (bw_oci_config_parse(cfg, n, &c, err, sizeof(err)))
		ret = refuse("%s", err);
	else
		ret = govern(&c);
	bw_container_free(&c);
	free(cfg);
	free(in);
	return ret;
}
