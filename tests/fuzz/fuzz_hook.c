// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for everything bpfwarden-hook and the daemon parse from
 * a container runtime and from each other: the JSON reader (hook/json.c),
 * the OCI state and config.json, an NRI v0.1 request (hook/runtime.c), the
 * hook socket's request and answer (hook/proto.c), the selectors file and a
 * cgroupsPath (hook/select.c, hook/runtime.c). The first byte picks the
 * reader, the rest is its input. Besides "no crash, no leak, no undefined
 * behaviour", it checks what each promises: a tree whose strings are as
 * long as they say and whose depth is bounded, a request that encodes and
 * decodes to itself, a cgroup directory that is absolute.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "proto.h"
#include "runtime.h"
#include "select.h"

#define require(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant broken: %s (%s:%d)\n", #cond, __FILE__,         \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void check_tree(const struct bwj *v, int depth)
{
	require(depth <= BWJ_DEPTH_MAX + 1);
	for (; v; v = v->next) {
		require(v->type >= BWJ_NULL && v->type <= BWJ_OBJ);
		if (v->type == BWJ_STR) {
			require(v->str && v->str[v->len] == '\0');
			require(!bwj_str(v) || strlen(v->str) == v->len);
		}
		if (v->type != BWJ_ARR && v->type != BWJ_OBJ)
			require(!v->child);
		check_tree(v->child, depth + 1);
	}
}

static void check_container(const struct bw_container *c)
{
	char dir[4096];

	if (c->cgroups_path && !bw_cgroups_path_dir(c->cgroups_path, dir, sizeof(dir)))
		require(dir[0] == '/');
}

static const char *same(const char *a, const char *b)
{
	require((!a && !b) || (a && b && !strcmp(a, b)));
	return a;
}

static void request(const char *in, size_t len)
{
	struct bw_hook_req r, again;
	char out[BW_HOOK_MSG_MAX];
	int n;

	(void)bw_hook_req_complete(in, len);
	if (bw_hook_req_decode(in, len, &r))
		return;
	n = bw_hook_req_encode(&r, out, sizeof(out));
	if (n > 0) {
		require(bw_hook_req_complete(out, n));
		require(!bw_hook_req_decode(out, n, &again));
		same(r.op, again.op);
		same(r.via, again.via);
		same(r.cgroup, again.cgroup);
		same(r.root, again.root);
		same(r.id.namespace_, again.id.namespace_);
		same(r.id.pod, again.id.pod);
		same(r.id.container, again.id.container);
		same(r.id.profile, again.id.profile);
		require(r.pid == again.pid && r.cgroup_id == again.cgroup_id);
		bw_hook_req_free(&again);
	}
	bw_hook_req_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char state[] = "{\"id\":\"x\",\"pid\":1,\"bundle\":\"/b\"}";
	struct bw_container c = {0};
	struct bw_selectors s = {0};
	struct bw_hook_resp resp;
	char err[256], dir[4096], *text;
	const char *in = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	struct bwj *t;
	int line;

	if (!size)
		return 0;
	switch (data[0] % 8) {
	case 0:
		t = bwj_parse(in, len, err, sizeof(err));
		check_tree(t, 0);
		bwj_free(t);
		break;
	case 1:
		if (!bw_oci_state_parse(in, len, &c, err, sizeof(err)))
			check_container(&c);
		bw_container_free(&c);
		break;
	case 2:
		/* A state, then a config.json: the two halves of one input. */
		if (!bw_oci_state_parse(state, sizeof(state) - 1, &c, err, sizeof(err)) &&
		    !bw_oci_config_parse(in, len, &c, err, sizeof(err)))
			check_container(&c);
		bw_container_free(&c);
		break;
	case 3:
		if (!bw_nri_parse(in, len, &c, err, sizeof(err)))
			check_container(&c);
		bw_container_free(&c);
		break;
	case 4:
		request(in, len);
		break;
	case 5:
		if (!bw_hook_resp_decode(in, len, &resp))
			require(resp.result >= BW_HOOK_GOVERNED && resp.result <= BW_HOOK_FAIL);
		break;
	case 6:
		text = malloc(len + 1);
		if (!text)
			return 0;
		memcpy(text, in, len);
		text[len] = '\0';
		if (!bw_selectors_parse(text, &s, &line)) {
			const char *profile;
			struct bw_k8s_id id = {.namespace_ = "ns", .pod = "p", .container = "c"};

			(void)bw_select(&id, "/kubepods/x", &s, &profile);
			(void)bw_select_exempt(&id, &s, &profile);
		}
		bw_selectors_free(&s);
		free(text);
		break;
	case 7:
		text = malloc(len + 1);
		if (!text)
			return 0;
		memcpy(text, in, len);
		text[len] = '\0';
		if (!bw_cgroups_path_dir(text, dir, sizeof(dir)))
			require(dir[0] == '/');
		free(text);
		break;
	}
	return 0;
}
