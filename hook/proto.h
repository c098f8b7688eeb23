/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What bpfwarden-hook and `bpfwarden daemon` say to each other over the
 * daemon's unix socket (/run/bpfwarden/hook.sock): one request, one answer,
 * then the connection closes.
 *
 * A request is text: the line "bpfwarden-hook 1", one "KEY VALUE" line per
 * field, then an empty line. Values are escaped so that a line is a line:
 * '\' as "\\", a newline as "\n"; a NUL byte cannot be sent. Unknown keys
 * are skipped (a newer hook may say more), a repeated key is an error. The
 * answer is one line: "ok governed PROFILE", "ok pending PROFILE" (governed
 * from the container's first exec), "ok unselected", "ok exempt REASON"
 * (selected, not governed, and allowed to start: kube-system, the agent's
 * own pod) or "fail REASON" (the container must not start).
 */
#ifndef BW_HOOK_PROTO_H
#define BW_HOOK_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define BW_HOOK_MAGIC	 "bpfwarden-hook 1"
#define BW_HOOK_SOCKET	 "/run/bpfwarden/hook.sock"
#define BW_HOOK_MSG_MAX	 65536
#define BW_HOOK_RESP_MAX 1024

/* Who a container is, as its runtime tells it (any field may be NULL). */
struct bw_k8s_id {
	const char *namespace_;
	const char *pod;
	const char *pod_uid;
	const char *container;
	const char *container_id;
	const char *image;
	const char *sandbox_id;
	const char *type;    /* "container" or "sandbox" (the pod's pause process) */
	const char *profile; /* the pod's bpfwarden.io/profile annotation */
};

struct bw_hook_req {
	const char *op;	    /* "create" */
	const char *via;    /* "hook" (OCI createRuntime) or "nri" */
	long long pid;	    /* the container's init, in the runtime's (host) PID namespace */
	const char *cgroup; /* its cgroup below the cgroup2 mount, "/kubepods/..." */
	uint64_t cgroup_id;
	/*
	 * Where the container's / is in its init's mount namespace: the
	 * bundle's rootfs for an OCI hook (init has not pivoted yet), "/" for
	 * NRI (it has).
	 */
	const char *root;
	struct bw_k8s_id id;
	char *buf; /* decode: the storage the strings point into */
};

/* Encode r into out; the length, or -ENOSPC / -EINVAL (a NUL in a value). */
int bw_hook_req_encode(const struct bw_hook_req *r, char *out, size_t len);
/* Decode a whole request (len bytes, its empty line included); 0 or -EINVAL. */
int bw_hook_req_decode(const char *in, size_t len, struct bw_hook_req *r);
void bw_hook_req_free(struct bw_hook_req *r);
/* Has buf (len bytes) a whole request yet (its closing empty line)? */
int bw_hook_req_complete(const char *buf, size_t len);

enum bw_hook_result {
	BW_HOOK_GOVERNED = 1,
	BW_HOOK_PENDING,
	BW_HOOK_UNSELECTED,
	BW_HOOK_EXEMPT,
	BW_HOOK_FAIL,
};

struct bw_hook_resp {
	enum bw_hook_result result;
	char detail[BW_HOOK_RESP_MAX]; /* the profile, or why */
};

/* "ok governed NAME\n" and so on; the length, or -ENOSPC. */
int bw_hook_resp_encode(const struct bw_hook_resp *r, char *out, size_t len);
/* One answer line (with or without its newline); 0 or -EINVAL. */
int bw_hook_resp_decode(const char *in, size_t len, struct bw_hook_resp *r);
/* "governed", "pending", ... (metrics labels). */
const char *bw_hook_result_name(enum bw_hook_result r);

#endif
