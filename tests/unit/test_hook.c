// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden-hook's pure parts: the JSON reader, what containerd and CRI-O
 * hand a createRuntime hook and what containerd's NRI v0.1 client hands a
 * plugin (fixtures in tests/unit/fixtures/hook/, the containerd and NRI ones
 * captured from containerd 1.6.20 in the VM), cgroupsPath of both cgroup
 * drivers, the hook <-> daemon codec and the selection rules.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "proto.h"
#include "runtime.h"
#include "select.h"
#include "suites.h"

static char *load(const char *name, size_t *len)
{
	const char *dir = getenv("BW_TEST_FIXTURES");
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	ck_assert_msg(dir != NULL, "BW_TEST_FIXTURES is not set (run through make unit)");
	snprintf(path, sizeof(path), "%s/hook/%s", dir, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	ck_assert_int_eq(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	fclose(f);
	*len = n;
	return buf;
}

static struct bwj *pj(const char *s)
{
	char err[128];

	return bwj_parse(s, strlen(s), err, sizeof(err));
}

START_TEST(json_values)
{
	struct bwj *v =
	    pj(" {\"a\": [1, -2.5e1, true, false, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\","
	       " \"o\": {\"k\": \"v\"}, \"s\": \"last\"} ");
	long long n;

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(bwj_get(v, "a")->child->type, BWJ_NUM);
	ck_assert_int_eq(bwj_int(bwj_get(v, "a")->child, 0, 10, &n), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(bwj_int(bwj_get(v, "a")->child->next, -100, 100, &n), 0);
	ck_assert_int_eq(n, -25);
	ck_assert_int_eq(bwj_int(bwj_get(v, "a")->child->next, 0, 100, &n), -1);
	ck_assert_str_eq(bwj_str(bwj_path(v, "o", "k", NULL)), "v");
	/* The last of duplicate names wins. */
	ck_assert_str_eq(bwj_str(bwj_get(v, "s")), "last");
	ck_assert_ptr_null(bwj_get(v, "missing"));
	ck_assert_ptr_null(bwj_str(bwj_get(v, "a")));
	bwj_free(v);
	v = pj("\"x\\u00e9\\ud83d\\ude00\\n\\ud800z\"");
	ck_assert_str_eq(bwj_str(v), "x\xc3\xa9\xf0\x9f\x98\x80\n\xef\xbf\xbdz");
	bwj_free(v);
	/* A NUL inside a string is not a string for us. */
	v = pj("\"a\\u0000b\"");
	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_null(bwj_str(v));
	bwj_free(v);
}
END_TEST

START_TEST(json_rejects)
{
	static const char *const bad[] = {
	    "",	   "{",		  "{\"a\" 1}", "{\"a\":1,}", "[1,]", "\"abc", "\"a\\x\"",  "01",
	    "1 2", "{\"a\":tru}", "\"\x01\"",  "{a:1}",	     "[1}",  "nul",   "\"\\u12\"",
	};
	char deep[2 * BWJ_DEPTH_MAX + 10];
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bwj *v = bwj_parse(bad[i], strlen(bad[i]), err, sizeof(err));

		ck_assert_msg(v == NULL, "accepted %s", bad[i]);
		ck_assert_msg(strstr(err, "at byte") != NULL, "no position in '%s'", err);
	}
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	ck_assert_ptr_null(bwj_parse(deep, strlen(deep), err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "nested too deep"));
}
END_TEST

START_TEST(oci_containerd_cgroupfs)
{
	struct bw_container c;
	char err[256], dir[4096];
	size_t n1, n2;
	char *st = load("containerd-state.json", &n1), *cfg = load("containerd-config.json", &n2);

	ck_assert_int_eq(bw_oci_state_parse(st, n1, &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.pid, 271);
	ck_assert_str_eq(c.id, "8e4d586525756e99c7a2ede2516cf92fd3ef7dcd3fd8d1c0b5a9b1ab7d1a9d69");
	ck_assert_int_eq(bw_oci_config_parse(cfg, n2, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.root, "rootfs");
	ck_assert_str_eq(c.k8s.namespace_, "default");
	ck_assert_str_eq(c.k8s.pod, "p1");
	ck_assert_str_eq(c.k8s.pod_uid, "28a83091-1e06-44c4-bf41-1cf05adcf00c");
	ck_assert_str_eq(c.k8s.container, "c1");
	ck_assert_str_eq(c.k8s.image, "localhost/bw-busybox:1");
	ck_assert_str_eq(c.k8s.type, "container");
	ck_assert_str_eq(c.k8s.profile, "x");
	ck_assert_str_eq(c.k8s.container_id, c.id);
	ck_assert_int_eq(bw_cgroups_path_dir(c.cgroups_path, dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/kubepods/besteffort/pod28a83091-1e06-44c4-bf41-1cf05adcf00c/"
			      "8e4d586525756e99c7a2ede2516cf92fd3ef7dcd3fd8d1c0b5a9b1ab7d1a9d69");
	bw_container_free(&c);
	free(st);
	free(cfg);
}
END_TEST

START_TEST(oci_crio_systemd)
{
	struct bw_container c;
	char err[256], dir[4096];
	size_t n1, n2;
	char *st = load("crio-systemd-state.json", &n1),
	     *cfg = load("crio-systemd-config.json", &n2);

	ck_assert_int_eq(bw_oci_state_parse(st, n1, &c, err, sizeof(err)), 0);
	ck_assert_int_eq(bw_oci_config_parse(cfg, n2, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.root, "/var/lib/containers/storage/overlay/7c1e2a9b3d4f/merged");
	ck_assert_str_eq(c.k8s.namespace_, "shop");
	ck_assert_str_eq(c.k8s.pod, "web-7d9f");
	ck_assert_str_eq(c.k8s.container, "app");
	ck_assert_str_eq(c.k8s.image, "docker.io/library/nginx:1.25");
	ck_assert_str_eq(c.k8s.type, "container");
	ck_assert_str_eq(c.k8s.profile, "web");
	ck_assert_int_eq(bw_cgroups_path_dir(c.cgroups_path, dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir,
			 "/kubepods.slice/kubepods-burstable.slice/"
			 "kubepods-burstable-pod5d6c7b8a_1f2e_4d3c_9b8a_7f6e5d4c3b2a.slice/"
			 "crio-3f2c9d1e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e."
			 "scope");
	bw_container_free(&c);
	free(st);
	free(cfg);
}
END_TEST

START_TEST(oci_bad_input)
{
	struct bw_container c;
	char err[256];

	ck_assert_int_eq(bw_oci_state_parse("{\"id\":\"x\"}", 10, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "lacks"));
	bw_container_free(&c);
	ck_assert_int_eq(bw_oci_state_parse("[]", 2, &c, err, sizeof(err)), -EINVAL);
	bw_container_free(&c);
	ck_assert_int_eq(bw_oci_state_parse("{\"id\":\"x\",\"pid\":1.5,\"bundle\":\"/b\"}", 34, &c,
					    err, sizeof(err)),
			 -EINVAL);
	bw_container_free(&c);
}
END_TEST

START_TEST(cgroups_paths)
{
	char dir[256];

	ck_assert_int_eq(
	    bw_cgroups_path_dir("kubepods-besteffort-podab_cd.slice:cri-containerd:0123", dir,
				sizeof(dir)),
	    0);
	ck_assert_str_eq(dir, "/kubepods.slice/kubepods-besteffort.slice/"
			      "kubepods-besteffort-podab_cd.slice/cri-containerd-0123.scope");
	ck_assert_int_eq(bw_cgroups_path_dir("system.slice:docker:abc", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/system.slice/docker-abc.scope");
	ck_assert_int_eq(bw_cgroups_path_dir(":cri-containerd:abc", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/system.slice/cri-containerd-abc.scope");
	ck_assert_int_eq(bw_cgroups_path_dir("-.slice:crio:abc", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/crio-abc.scope");
	ck_assert_int_eq(bw_cgroups_path_dir("/k8s.io/abc", dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, "/k8s.io/abc");
	ck_assert_int_eq(bw_cgroups_path_dir("a-.slice:x:y", dir, sizeof(dir)), -EINVAL);
	ck_assert_int_eq(bw_cgroups_path_dir("notaslice:x:y", dir, sizeof(dir)), -EINVAL);
	ck_assert_int_eq(bw_cgroups_path_dir("a.slice:x", dir, sizeof(dir)), -EINVAL);
	ck_assert_int_eq(bw_cgroups_path_dir("", dir, sizeof(dir)), -EINVAL);
	ck_assert_int_eq(bw_cgroups_path_dir("a-b-c-d-e.slice:p:n", dir, 20), -ENAMETOOLONG);
}
END_TEST

START_TEST(nri_requests)
{
	struct bw_container c;
	char err[256];
	size_t n;
	char *t = load("nri-create-container.json", &n);

	ck_assert_int_eq(bw_nri_parse(t, n, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.state, "create");
	ck_assert_int_eq(c.pid, 460);
	ck_assert_str_eq(c.k8s.type, "container");
	ck_assert_str_eq(c.k8s.namespace_, "default");
	ck_assert_str_eq(c.k8s.pod, "p1");
	ck_assert_str_eq(c.k8s.container, "c1");
	ck_assert_str_eq(c.k8s.profile, "x");
	ck_assert_ptr_nonnull(strstr(c.cgroups_path, "/kubepods/besteffort/pod7a9d646a"));
	bw_container_free(&c);
	free(t);

	t = load("nri-create-sandbox.json", &n);
	ck_assert_int_eq(bw_nri_parse(t, n, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.k8s.type, "sandbox");
	bw_container_free(&c);
	free(t);

	t = load("nri-delete-container.json", &n);
	ck_assert_int_eq(bw_nri_parse(t, n, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.state, "delete");
	bw_container_free(&c);
	free(t);

	/* No annotations, no type: the sandbox is the request whose id is its sandboxID. */
	t = strdup("{\"version\":\"0.1\",\"state\":\"create\",\"id\":\"a\",\"sandboxID\":\"a\","
		   "\"pid\":-1,\"spec\":{},\"labels\":{\"io.kubernetes.pod.namespace\":\"n\"}}");
	ck_assert_int_eq(bw_nri_parse(t, strlen(t), &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c.k8s.type, "sandbox");
	ck_assert_int_eq(c.pid, 0);
	ck_assert_str_eq(c.k8s.namespace_, "n");
	bw_container_free(&c);
	free(t);
	ck_assert_int_eq(bw_nri_parse("{\"id\":\"a\"}", 10, &c, err, sizeof(err)), -EINVAL);
	bw_container_free(&c);
}
END_TEST

START_TEST(codec_round_trip)
{
	struct bw_hook_req r = {.op = "create",
				.via = "hook",
				.pid = 4242,
				.cgroup = "/kubepods/pod1/abc",
				.cgroup_id = 18446744073709551615ULL,
				.root = "/run/x/rootfs",
				.id = {.namespace_ = "ns",
				       .pod = "p\nod\\x",
				       .container = "c",
				       .profile = "web",
				       .type = "container"}};
	struct bw_hook_req d;
	char buf[4096];
	int n = bw_hook_req_encode(&r, buf, sizeof(buf));

	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(bw_hook_req_complete(buf, n), 1);
	ck_assert_int_eq(bw_hook_req_complete(buf, n - 1), 0);
	ck_assert_int_eq(bw_hook_req_decode(buf, n, &d), 0);
	ck_assert_str_eq(d.op, "create");
	ck_assert_str_eq(d.via, "hook");
	ck_assert_int_eq(d.pid, 4242);
	ck_assert_uint_eq(d.cgroup_id, 18446744073709551615ULL);
	ck_assert_str_eq(d.cgroup, "/kubepods/pod1/abc");
	ck_assert_str_eq(d.root, "/run/x/rootfs");
	ck_assert_str_eq(d.id.pod, "p\nod\\x");
	ck_assert_str_eq(d.id.profile, "web");
	ck_assert_ptr_null(d.id.image);
	bw_hook_req_free(&d);
	ck_assert_int_eq(bw_hook_req_encode(&r, buf, 40), -ENOSPC);
}
END_TEST

START_TEST(codec_rejects)
{
	static const char *const bad[] = {
	    "bpfwarden-hook 2\nop create\npid 1\n\n",		/* another version */
	    "bpfwarden-hook 1\npid 1\n\n",			/* no op */
	    "bpfwarden-hook 1\nop create\n\n",			/* no pid */
	    "bpfwarden-hook 1\nop create\nop x\npid 1\n\n",	/* repeated */
	    "bpfwarden-hook 1\nop create\npid -1\n\n",		/* bad number */
	    "bpfwarden-hook 1\nop create\npid 1\npid 2\n\n",	/* repeated number */
	    "bpfwarden-hook 1\nop create\npid 99999999999\n\n", /* out of range */
	    "bpfwarden-hook 1\nop cre\\ate\npid 1\n\n",		/* bad escape */
	    "bpfwarden-hook 1\nopcreate\npid 1\n\n",		/* no value */
	    "bpfwarden-hook 1\nop create\npid 1\n",		/* incomplete */
	};
	struct bw_hook_req d;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(bw_hook_req_decode(bad[i], strlen(bad[i]), &d) == -EINVAL,
			      "accepted %zu", i);
	/* A NUL byte anywhere. */
	ck_assert_int_eq(bw_hook_req_decode("bpfwarden-hook 1\nop c\0\npid 1\n\n", 28, &d),
			 -EINVAL);
	/* A newer hook's field is skipped. */
	static const char newer[] = "bpfwarden-hook 1\nop create\nshiny new\npid 7\n\n";

	ck_assert_int_eq(bw_hook_req_decode(newer, strlen(newer), &d), 0);
	ck_assert_int_eq(d.pid, 7);
	bw_hook_req_free(&d);
}
END_TEST

START_TEST(codec_answers)
{
	struct bw_hook_resp r = {BW_HOOK_GOVERNED, "web"}, d;
	char buf[2048];
	int n;

	n = bw_hook_resp_encode(&r, buf, sizeof(buf));
	ck_assert_str_eq(buf, "ok governed web\n");
	ck_assert_int_eq(bw_hook_resp_decode(buf, n, &d), 0);
	ck_assert_int_eq(d.result, BW_HOOK_GOVERNED);
	ck_assert_str_eq(d.detail, "web");
	r = (struct bw_hook_resp){BW_HOOK_UNSELECTED, ""};
	n = bw_hook_resp_encode(&r, buf, sizeof(buf));
	ck_assert_str_eq(buf, "ok unselected\n");
	ck_assert_int_eq(bw_hook_resp_decode(buf, n, &d), 0);
	ck_assert_int_eq(d.result, BW_HOOK_UNSELECTED);
	r = (struct bw_hook_resp){BW_HOOK_FAIL, "profile web: no such profile"};
	n = bw_hook_resp_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(bw_hook_resp_decode(buf, n, &d), 0);
	ck_assert_int_eq(d.result, BW_HOOK_FAIL);
	ck_assert_str_eq(d.detail, "profile web: no such profile");
	r = (struct bw_hook_resp){BW_HOOK_EXEMPT, "kube-system"};
	n = bw_hook_resp_encode(&r, buf, sizeof(buf));
	ck_assert_int_eq(bw_hook_resp_decode(buf, n, &d), 0);
	ck_assert_int_eq(d.result, BW_HOOK_EXEMPT);
	r = (struct bw_hook_resp){BW_HOOK_FAIL, "two\nlines"};
	ck_assert_int_eq(bw_hook_resp_encode(&r, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(bw_hook_resp_decode("ok governed", 11, &d), -EINVAL);
	ck_assert_int_eq(bw_hook_resp_decode("ok unselected x", 15, &d), -EINVAL);
	ck_assert_int_eq(bw_hook_resp_decode("yes", 3, &d), -EINVAL);
	ck_assert_int_eq(bw_hook_resp_decode("ok governed a\nb", 15, &d), -EINVAL);
}
END_TEST

START_TEST(selection_rules)
{
	static const char text[] = "# written by bpfwarden daemon\n"
				   "agent bpfwarden bpfwarden-\n"
				   "match web namespace=shop pod=web-*\n"
				   "match batch namespace=ci container=job\n"
				   "match aaa namespace=shop\n"
				   "match host cgroup=/system.slice/*\n";
	struct bw_selectors s;
	struct bw_k8s_id id = {
	    .namespace_ = "shop", .pod = "web-1", .container = "app", .type = "container"};
	const char *p = NULL, *why;
	int line;

	ck_assert_int_eq(bw_selectors_parse(text, &s, &line), 0);
	ck_assert_uint_eq(s.n, 4);
	/* Two profiles select it: the first by name. */
	ck_assert_int_eq(bw_select(&id, NULL, &s, &p), 1);
	ck_assert_str_eq(p, "aaa");
	/* The annotation wins over match lines. */
	id.profile = "web";
	ck_assert_int_eq(bw_select(&id, NULL, &s, &p), 1);
	ck_assert_str_eq(p, "web");
	/* Every key of a line must match. */
	id = (struct bw_k8s_id){.namespace_ = "ci", .pod = "x", .container = "job"};
	ck_assert_int_eq(bw_select(&id, NULL, &s, &p), 1);
	ck_assert_str_eq(p, "batch");
	id.container = "sidecar";
	ck_assert_int_eq(bw_select(&id, NULL, &s, &p), 0);
	/* A cgroup selector, for hosts without Kubernetes. */
	ck_assert_int_eq(bw_select(&id, "/system.slice/cron.service", &s, &p), 1);
	ck_assert_str_eq(p, "host");
	/* The pod's sandbox is never selected, annotation or not. */
	id = (struct bw_k8s_id){.namespace_ = "shop", .type = "sandbox", .profile = "web"};
	ck_assert_int_eq(bw_select(&id, NULL, &s, &p), 0);
	/* No selectors file: the annotation alone. */
	id = (struct bw_k8s_id){.namespace_ = "shop", .pod = "web-1"};
	ck_assert_int_eq(bw_select(&id, NULL, NULL, &p), 0);
	/* Failure policy. */
	id = (struct bw_k8s_id){.namespace_ = "kube-system", .pod = "coredns"};
	ck_assert(bw_select_exempt(&id, NULL, &why));
	ck_assert_str_eq(why, "kube-system");
	id = (struct bw_k8s_id){.namespace_ = "bpfwarden", .pod = "bpfwarden-x7k2p"};
	ck_assert(bw_select_exempt(&id, &s, &why));
	ck_assert(!bw_select_exempt(&id, NULL, &why));
	id.namespace_ = "shop";
	ck_assert(!bw_select_exempt(&id, &s, &why));
	bw_selectors_free(&s);
}
END_TEST

START_TEST(selectors_file_errors)
{
	static const char *const bad[] = {
	    "match\n",		       /* no profile */
	    "match web\n",	       /* no key */
	    "match web colour=red\n",  /* unknown key */
	    "match web pod=\n",	       /* empty glob */
	    "match web pod=a pod=b\n", /* repeated key */
	    "agent ns\n",	       /* no prefix */
	    "frobnicate\n",
	};
	struct bw_selectors s;
	size_t i;
	int line;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(bw_selectors_parse(bad[i], &s, &line) == -EINVAL, "accepted %s",
			      bad[i]);
	ck_assert_int_eq(bw_selectors_parse("\n# c\nmatch a pod=x\nbad\n", &s, &line), -EINVAL);
	ck_assert_int_eq(line, 4);
}
END_TEST

Suite *hook_suite(void)
{
	Suite *s = suite_create("hook");
	TCase *tc = tcase_create("hook");

	tcase_add_test(tc, json_values);
	tcase_add_test(tc, json_rejects);
	tcase_add_test(tc, oci_containerd_cgroupfs);
	tcase_add_test(tc, oci_crio_systemd);
	tcase_add_test(tc, oci_bad_input);
	tcase_add_test(tc, cgroups_paths);
	tcase_add_test(tc, nri_requests);
	tcase_add_test(tc, codec_round_trip);
	tcase_add_test(tc, codec_rejects);
	tcase_add_test(tc, codec_answers);
	tcase_add_test(tc, selection_rules);
	tcase_add_test(tc, selectors_file_errors);
	suite_add_tcase(s, tc);
	return s;
}
