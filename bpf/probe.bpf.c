// SPDX-License-Identifier: GPL-2.0-only
/*
 * Trial programs for `bpfwarden status` and the support probe: a kernel can
 * list bpf among its LSMs and still refuse to attach an LSM program (the
 * build machine's kernel does, with EPERM), so only an attach proves it.
 * Neither program changes any decision.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/file_open")
int BPF_PROG(bw_probe_lsm, struct file *file, int ret)
{
	return ret;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(bw_probe_tp, struct cgroup *cgrp, const char *path)
{
	return 0;
}
