// SPDX-License-Identifier: GPL-2.0-only
/*
 * floor CGROUP2 NAMES OBJECT...: the benchmarks' floor. For every program of
 * the agent's objects named in the file NAMES (one per line: what
 * /sys/fs/bpf/bpfwarden/links/ held while the agent was loaded), it loads a
 * program of the same type on the same hook that does nothing (returns 0,
 * or 1, "allow", for cgroup programs) and attaches it the way the agent
 * does: LSM and tp_btf programs to their hooks, cgroup programs to CGROUP2,
 * the cgroup2 root. Then it prints "floor: N programs attached" and waits
 * for SIGTERM or SIGINT; its exit detaches them.
 *
 * What a workload costs under the floor is what entering the agent's hooks
 * costs, with none of their work: the least an agent on those hooks could
 * cost. The agent's ungoverned and governed figures are read against it
 * (tools/bench/syscalls.sh, docs/performance.md).
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NAMES 256

static char *names[MAX_NAMES];
static int nnames, found[MAX_NAMES];

static int read_names(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "floor: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f) && nnames < MAX_NAMES) {
		line[strcspn(line, "\n")] = 0;
		if (*line)
			names[nnames++] = strdup(line);
	}
	fclose(f);
	return 0;
}

static int name_index(const char *name)
{
	int i;

	for (i = 0; i < nnames; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

/* The BTF id of the hook a program of this section attaches to, or <0. */
static int hook_btf_id(const struct btf *vmlinux, enum bpf_prog_type type, const char *sec)
{
	char fn[128];

	if (type == BPF_PROG_TYPE_LSM && !strncmp(sec, "lsm/", 4)) {
		snprintf(fn, sizeof(fn), "bpf_lsm_%s", sec + 4);
		return btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC);
	}
	if (type == BPF_PROG_TYPE_TRACING && !strncmp(sec, "tp_btf/", 7)) {
		snprintf(fn, sizeof(fn), "btf_trace_%s", sec + 7);
		return btf__find_by_name_kind(vmlinux, fn, BTF_KIND_TYPEDEF);
	}
	return -ENOENT;
}

static int attach_empty(const struct bpf_program *prog, const struct btf *vmlinux, int cg_fd)
{
	enum bpf_prog_type type = bpf_program__type(prog);
	enum bpf_attach_type eat = bpf_program__expected_attach_type(prog);
	const char *sec = bpf_program__section_name(prog);
	bool cgroup = type == BPF_PROG_TYPE_CGROUP_SOCK_ADDR || type == BPF_PROG_TYPE_CGROUP_SOCK;
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = cgroup},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = eat);
	char name[16];
	int fd, link;

	if (!cgroup) {
		int id = hook_btf_id(vmlinux, type, sec);

		if (id < 0) {
			fprintf(stderr, "floor: %s: no hook in the kernel's BTF\n", sec);
			return id;
		}
		opts.attach_btf_id = id;
	}
	snprintf(name, sizeof(name), "fl_%s", bpf_program__name(prog) + 3);
	fd = bpf_prog_load(type, name, "GPL", insns, 2, &opts);
	if (fd < 0) {
		fprintf(stderr, "floor: load %s: %s\n", sec, strerror(errno));
		return -errno;
	}
	if (cgroup)
		link = bpf_link_create(fd, cg_fd, eat, NULL);
	else if (type == BPF_PROG_TYPE_TRACING)
		link = bpf_raw_tracepoint_open(NULL, fd);
	else
		link = bpf_link_create(fd, 0, BPF_LSM_MAC, NULL);
	if (link < 0) {
		fprintf(stderr, "floor: attach %s: %s\n", sec, strerror(errno));
		return -errno;
	}
	return 0; /* both descriptors stay open until exit */
}

static void on_signal(int sig)
{
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct btf *vmlinux;
	int cg_fd, i, attached = 0, ret = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: floor CGROUP2 NAMES OBJECT...\n");
		return 2;
	}
	if (read_names(argv[2]))
		return 1;
	cg_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	vmlinux = btf__load_vmlinux_btf();
	if (cg_fd < 0 || !vmlinux) {
		fprintf(stderr, "floor: %s or the kernel's BTF: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (i = 3; i < argc && !ret; i++) {
		struct bpf_object *obj = bpf_object__open_file(argv[i], NULL);
		struct bpf_program *prog;

		if (!obj) {
			fprintf(stderr, "floor: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		bpf_object__for_each_program(prog, obj)
		{
			int k = name_index(bpf_program__name(prog));

			if (k < 0 || found[k])
				continue;
			ret = attach_empty(prog, vmlinux, cg_fd);
			if (ret)
				break;
			found[k] = 1;
			attached++;
		}
		bpf_object__close(obj);
	}
	for (i = 0; i < nnames && !ret; i++) {
		if (!found[i]) {
			fprintf(stderr, "floor: no program %s in the objects\n", names[i]);
			ret = -ENOENT;
		}
	}
	if (ret)
		return 1;
	printf("floor: %d programs attached\n", attached);
	fflush(stdout);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	pause();
	return 0;
}
