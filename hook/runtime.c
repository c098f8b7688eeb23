// SPDX-License-Identifier: GPL-2.0-only
/* Reading the runtime's documents (runtime.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"
#include "select.h"

static struct bwj *parse(const char *text, size_t len, const char *what, char *err, size_t errlen)
{
	char why[160];
	struct bwj *v = bwj_parse(text, len, why, sizeof(why));

	if (!v)
		snprintf(err, errlen, "%s: %s", what, why);
	else if (v->type != BWJ_OBJ)
		snprintf(err, errlen, "%s: not a JSON object", what);
	else
		return v;
	bwj_free(v);
	return NULL;
}

/* The first annotation (or label) present of names, else NULL. */
static const char *first_of(const struct bwj *map, const char *const *names)
{
	const char *v;

	for (; *names; names++)
		if ((v = bwj_str(bwj_get(map, *names))))
			return v;
	return NULL;
}

static void fill_k8s(struct bw_container *c, const struct bwj *ann, const struct bwj *labels)
{
	static const char *const ns[] = {"io.kubernetes.cri.sandbox-namespace",
					 "io.kubernetes.pod.namespace", NULL};
	static const char *const pod[] = {"io.kubernetes.cri.sandbox-name",
					  "io.kubernetes.pod.name", NULL};
	static const char *const uid[] = {"io.kubernetes.cri.sandbox-uid", "io.kubernetes.pod.uid",
					  NULL};
	static const char *const ctr[] = {"io.kubernetes.cri.container-name",
					  "io.kubernetes.container.name", NULL};
	static const char *const image[] = {"io.kubernetes.cri.image-name",
					    "io.kubernetes.cri-o.ImageName", NULL};
	static const char *const sandbox[] = {"io.kubernetes.cri.sandbox-id",
					      "io.kubernetes.cri-o.SandboxID", NULL};
	static const char *const type[] = {"io.kubernetes.cri.container-type",
					   "io.kubernetes.cri-o.ContainerType", NULL};
	static const char *const prof[] = {BW_PROFILE_ANNOTATION, NULL};
	struct bw_k8s_id *k = &c->k8s;

	k->namespace_ = first_of(ann, ns);
	k->pod = first_of(ann, pod);
	k->pod_uid = first_of(ann, uid);
	k->container = first_of(ann, ctr);
	k->image = first_of(ann, image);
	k->sandbox_id = first_of(ann, sandbox);
	k->type = first_of(ann, type);
	k->profile = first_of(ann, prof);
	/* NRI's sandbox labels are what kubelet set on the pod. */
	if (!k->namespace_)
		k->namespace_ = first_of(labels, ns);
	if (!k->pod)
		k->pod = first_of(labels, pod);
	if (!k->pod_uid)
		k->pod_uid = first_of(labels, uid);
	k->container_id = c->id;
}

static int get_pid(const struct bwj *v, long long *pid)
{
	/* NRI writes -1 (or nothing) where there is no process. */
	if (!v) {
		*pid = 0;
		return 0;
	}
	if (bwj_int(v, -1, 0x7fffffff, pid))
		return -1;
	if (*pid < 0)
		*pid = 0;
	return 0;
}

int bw_oci_state_parse(const char *text, size_t len, struct bw_container *c, char *err,
		       size_t errlen)
{
	struct bwj *st;

	memset(c, 0, sizeof(*c));
	st = parse(text, len, "the OCI state", err, errlen);
	if (!st)
		return -EINVAL;
	c->doc[0] = st;
	c->state = "create";
	c->id = bwj_str(bwj_get(st, "id"));
	c->bundle = bwj_str(bwj_get(st, "bundle"));
	if (!c->id || !c->bundle || get_pid(bwj_get(st, "pid"), &c->pid) || !c->pid) {
		snprintf(err, errlen, "the OCI state lacks its id, pid or bundle");
		return -EINVAL;
	}
	/* The state's annotations are the config's: used until config.json is read. */
	fill_k8s(c, bwj_get(st, "annotations"), NULL);
	return 0;
}

int bw_oci_config_parse(const char *text, size_t len, struct bw_container *c, char *err,
			size_t errlen)
{
	struct bwj *cfg = parse(text, len, "config.json", err, errlen);

	if (!cfg)
		return -EINVAL;
	bwj_free(c->doc[1]);
	c->doc[1] = cfg;
	c->root = bwj_str(bwj_path(cfg, "root", "path", NULL));
	c->cgroups_path = bwj_str(bwj_path(cfg, "linux", "cgroupsPath", NULL));
	if (!c->root) {
		snprintf(err, errlen, "config.json has no root.path");
		return -EINVAL;
	}
	fill_k8s(c, bwj_get(cfg, "annotations"), NULL);
	return 0;
}

int bw_nri_parse(const char *text, size_t len, struct bw_container *c, char *err, size_t errlen)
{
	struct bwj *r;
	const struct bwj *spec;

	memset(c, 0, sizeof(*c));
	r = parse(text, len, "the NRI request", err, errlen);
	if (!r)
		return -EINVAL;
	c->doc[0] = r;
	c->state = bwj_str(bwj_get(r, "state"));
	c->id = bwj_str(bwj_get(r, "id"));
	spec = bwj_get(r, "spec");
	c->cgroups_path = bwj_str(bwj_get(spec, "cgroupsPath"));
	if (!c->state || !c->id || get_pid(bwj_get(r, "pid"), &c->pid)) {
		snprintf(err, errlen, "the NRI request lacks its state or id, or has a bad pid");
		return -EINVAL;
	}
	fill_k8s(c, bwj_get(spec, "annotations"), bwj_get(r, "labels"));
	if (!c->k8s.type) {
		const char *sb = bwj_str(bwj_get(r, "sandboxID"));

		/* NRI's own rule: a request whose id is its sandbox's is for the sandbox. */
		c->k8s.type = sb && !strcmp(sb, c->id) ? "sandbox" : "container";
	}
	return 0;
}

void bw_container_free(struct bw_container *c)
{
	bwj_free(c->doc[0]);
	bwj_free(c->doc[1]);
	memset(c, 0, sizeof(*c));
}

struct out {
	char *p;
	size_t len, n;
};

static int put(struct out *o, const char *s, size_t n)
{
	if (o->n + n >= o->len)
		return -ENAMETOOLONG;
	memcpy(o->p + o->n, s, n);
	o->n += n;
	o->p[o->n] = '\0';
	return 0;
}

/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" is the root. */
static int put_slice(struct out *o, const char *slice, size_t n)
{
	const char *dash;
	size_t stem;

	if (n < 6 || memcmp(slice + n - 6, ".slice", 6))
		return -EINVAL;
	stem = n - 6;
	if (stem == 1 && slice[0] == '-')
		return 0;
	if (!stem || slice[0] == '-' || slice[stem - 1] == '-')
		return -EINVAL;
	for (dash = slice; (dash = memchr(dash, '-', slice + stem - dash)); dash++) {
		if (dash[1] == '-')
			return -EINVAL;
		if (put(o, "/", 1) || put(o, slice, dash - slice) || put(o, ".slice", 6))
			return -ENAMETOOLONG;
	}
	return put(o, "/", 1) || put(o, slice, n) ? -ENAMETOOLONG : 0;
}

int bw_cgroups_path_dir(const char *p, char *outbuf, size_t len)
{
	struct out o = {outbuf, len, 0};
	const char *c1, *c2;
	int ret;

	if (!p || !*p || !len)
		return -EINVAL;
	outbuf[0] = '\0';
	if (p[0] == '/')
		return put(&o, p, strlen(p));
	/* systemd: SLICE:PREFIX:NAME */
	c1 = strchr(p, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strchr(c2 + 1, ':') || strchr(p, '/') || !c2[1])
		return -EINVAL;
	ret = c1 == p ? put_slice(&o, "system.slice", 12) : put_slice(&o, p, c1 - p);
	if (ret)
		return ret;
	if (put(&o, "/", 1))
		return -ENAMETOOLONG;
	if (c2 > c1 + 1 && (put(&o, c1 + 1, c2 - c1 - 1) || put(&o, "-", 1)))
		return -ENAMETOOLONG;
	/* A NAME that is a unit already stays as it is. */
	if (put(&o, c2 + 1, strlen(c2 + 1)))
		return -ENAMETOOLONG;
	if (strlen(c2 + 1) > 6 && !strcmp(c2 + 1 + strlen(c2 + 1) - 6, ".slice"))
		return 0;
	if (strlen(c2 + 1) > 6 && !strcmp(c2 + 1 + strlen(c2 + 1) - 6, ".scope"))
		return 0;
	return put(&o, ".scope", 6);
}
