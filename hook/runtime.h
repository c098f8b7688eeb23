/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a container runtime tells bpfwarden-hook, read into one shape:
 *
 *   OCI createRuntime hook: the state on stdin ({"id", "pid", "bundle",
 *     "annotations"}), and the bundle's config.json ("root", "linux"
 *     "cgroupsPath", "annotations"); runc has put the init process in its
 *     cgroup and mounted the volumes, and not pivoted into the root yet.
 *   NRI v0.1 plugin (`bpfwarden-hook invoke`): one request on stdin
 *     ({"state", "id", "sandboxID", "pid", "spec": {"cgroupsPath",
 *     "annotations"}, "labels"}); for "create", after the runtime created
 *     the task and before it starts it.
 *
 * Identity comes from the annotations as containerd's CRI plugin writes
 * them (io.kubernetes.cri.*) or CRI-O (io.kubernetes.pod.*,
 * io.kubernetes.container.name, io.kubernetes.cri-o.*), and NRI's labels.
 * Pure: no file is read here but by the caller.
 */
#ifndef BW_HOOK_RUNTIME_H
#define BW_HOOK_RUNTIME_H

#include <stddef.h>

#include "json.h"
#include "proto.h"

struct bw_container {
	const char *state;	  /* NRI: "create", "delete", ...; OCI hook: "create" */
	const char *id;		  /* the container's id */
	long long pid;		  /* its init process (host PID namespace); 0: none */
	const char *bundle;	  /* OCI hook: the bundle directory */
	const char *root;	  /* config.json root.path (OCI hook) */
	const char *cgroups_path; /* linux.cgroupsPath as the runtime gave it */
	struct bw_k8s_id k8s;
	struct bwj *doc[2]; /* the parsed documents the strings point into */
};

/* The OCI state (stdin) alone: id, pid, bundle. 0 or -EINVAL with a reason in err. */
int bw_oci_state_parse(const char *text, size_t len, struct bw_container *c, char *err,
		       size_t errlen);
/* Then the bundle's config.json: root, cgroupsPath, annotations. */
int bw_oci_config_parse(const char *text, size_t len, struct bw_container *c, char *err,
			size_t errlen);
/* An NRI v0.1 request. */
int bw_nri_parse(const char *text, size_t len, struct bw_container *c, char *err, size_t errlen);
void bw_container_free(struct bw_container *c);

/*
 * The cgroup directory below the cgroup2 mount that a cgroupsPath names:
 * as it is for the cgroupfs driver ("/kubepods/besteffort/podUID/ID"), and
 * for the systemd driver ("SLICE:PREFIX:NAME") the slice expanded into its
 * parents and the unit PREFIX-NAME.scope, as runc's systemd driver makes it
 * ("kubepods-besteffort-podX.slice:cri-containerd:ID" ->
 * "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podX.slice/
 * cri-containerd-ID.scope"). 0, -EINVAL or -ENAMETOOLONG.
 */
int bw_cgroups_path_dir(const char *cgroups_path, char *out, size_t len);

#endif
