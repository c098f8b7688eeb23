// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfwarden upgrade: this build's BPF programs replace the pinned ones
 * while cgroups stay governed, without a moment in which a hook is missing.
 *
 * Every object of this build is loaded first, its maps reused from the pins
 * (libbpf refuses a pinned map whose type, key, value or size differ: then
 * nothing has changed, and only `reset` goes from that state to this
 * build's). Then each pinned link gets its new program: in place where the
 * kernel can update the link (cgroup links, BPF_LINK_UPDATE), else (BPF LSM
 * and tp_btf links: tracing links have no update) the new program is
 * attached next to the old one, its link pinned under a temporary name and
 * renamed over the old pin, which drops the old link. In between both run;
 * for an LSM hook the stricter of the two wins, and a refusal may be
 * reported twice. Last, pins of programs this build no longer has go, and
 * bw_version takes this build's hash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroup.h"
#include "cli.h"
#include "loader.h"
#include "pins.h"
#include "probe.h"
#include "bits.h"
#include "util.h"

struct upgrade {
	struct bpf_object *objs[16];
	size_t nobjs;
	int cg_fd;
	int updated, side_by_side, added, removed;
};

static uint64_t pinned_hash(void)
{
	uint64_t have = 0;
	__u32 zero = 0;
	int fd = bpf_obj_get(BW_PIN_ROOT "/bw_version");

	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &zero, &have);
		close(fd);
	}
	return have;
}

/* Load every object of this build against the pinned maps; nothing is attached yet. */
static int load_all(struct upgrade *u, bool want_lsm)
{
	size_t i;

	if (bw_objects_count() > sizeof(u->objs) / sizeof(u->objs[0]))
		return -E2BIG;
	for (i = 0; i < bw_objects_count(); i++) {
		struct bpf_object *obj;
		const char *what, *caps;
		unsigned needs;
		int ret;

		obj = bw_object_open(i, &what, &needs);
		if (!obj)
			return -errno;
		if (!want_lsm && (needs & BW_NEED_LSM)) {
			bpf_object__close(obj);
			continue;
		}
		u->objs[u->nobjs++] = obj;
		caps = bw_caps_missing(BW_NEED_BPF | needs);
		if (caps) {
			bw_err("cannot load %s: %s", what, caps);
			return -EPERM;
		}
		ret = bpf_object__load(obj);
		if (ret) {
			bw_err("cannot load %s of this build against the pinned maps: %s (a map "
			       "this build reads differently cannot be carried over: detach "
			       "everything and `bpfwarden reset`; run with -v for libbpf's reason)",
			       what, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Give the pinned link of prog (if any) the new program, with no gap. */
static int replace_one(struct upgrade *u, struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);
	char pin[PATH_MAX], tmp[PATH_MAX];
	struct bpf_link *old, *link;
	int ret;

	snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", name);
	/* bpffs refuses names with a dot (reserved): the temporary pin is NAME-new. */
	snprintf(tmp, sizeof(tmp), BW_PIN_ROOT "/links/%s-new", name);
	old = bpf_link__open(pin);
	if (old) {
		ret = bpf_link__update_program(old, prog);
		bpf_link__destroy(old); /* our descriptor only: the pin keeps it */
		if (!ret) {
			u->updated++;
			return 0;
		}
		bw_dbg("%s: the kernel cannot update this link (%s): attaching beside it", name,
		       strerror(-ret));
	}
	link = bw_prog_attach(prog, u->cg_fd);
	if (!link) {
		ret = -errno;
		bw_err("cannot attach %s: %s", name, strerror(-ret));
		return ret;
	}
	unlink(tmp);
	ret = bpf_link__pin(link, tmp);
	/* The rename drops the old pin, and with it the old link: the new one runs already. */
	if (!ret && rename(tmp, pin))
		ret = -errno;
	bpf_link__destroy(link);
	if (ret) {
		unlink(tmp);
		bw_err("cannot pin %s: %s", pin, strerror(-ret));
		return ret;
	}
	if (old)
		u->side_by_side++;
	else
		u->added++;
	return 0;
}

static bool ours(struct upgrade *u, const char *name)
{
	struct bpf_program *prog;
	size_t i;

	for (i = 0; i < u->nobjs; i++) {
		bpf_object__for_each_program(prog, u->objs[i])
		{
			if (bpf_program__autoload(prog) && !strcmp(bpf_program__name(prog), name))
				return true;
		}
	}
	return false;
}

/* Programs of the old build that this one does not have are detached last. */
static void remove_stale(struct upgrade *u)
{
	DIR *d = opendir(BW_PIN_ROOT "/links");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char pin[PATH_MAX];

		if (de->d_name[0] == '.' || ours(u, de->d_name))
			continue;
		snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", de->d_name);
		if (!unlink(pin))
			u->removed++;
	}
	if (d)
		closedir(d);
}

static int replace_all(struct upgrade *u)
{
	struct bpf_program *prog;
	size_t i;
	int ret;

	for (i = 0; i < u->nobjs; i++) {
		bpf_object__for_each_program(prog, u->objs[i])
		{
			if (!bpf_program__autoload(prog))
				continue;
			/* Attached only while wanted: replaced if it is, not added. */
			if (bw_prog_on_demand(prog)) {
				char pin[PATH_MAX];

				snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s",
					 bpf_program__name(prog));
				if (access(pin, F_OK))
					continue;
			}
			ret = replace_one(u, prog);
			if (ret)
				return ret;
		}
	}
	remove_stale(u);
	return 0;
}

/*
 * Before the new programs attach: every bit of bw_govbits (bpf/maps.bpf.h)
 * set, until `reset`, so that every cgroup "may be governed" and is looked
 * up. The older build's agents go on running on the same maps and make
 * entries without bits; a build that had no bitmap made none at all.
 */
static int gov_bits_fill(void)
{
	int fd = bpf_obj_get(BW_PIN_ROOT "/bw_govbits"), ret = 0;
	__u64 *bits;

	if (fd < 0) {
		ret = -errno;
		bw_err("cannot open %s/bw_govbits: %s", BW_PIN_ROOT, strerror(-ret));
		return ret;
	}
	bits = bw_bits_map(fd);
	if (!bits) {
		ret = -errno;
		bw_err("cannot map the governed-cgroup bitmap: %s", strerror(-ret));
	} else {
		memset(bits, 0xff, BW_BITS_SIZE);
		bw_bits_unmap(bits);
	}
	close(fd);
	return ret;
}

static int stamp_version(void)
{
	uint64_t want = bw_objects_hash();
	__u32 zero = 0;
	int fd = bpf_obj_get(BW_PIN_ROOT "/bw_version"), ret = 0;

	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, &want, BPF_ANY))
		ret = -errno;
	close(fd);
	return ret;
}

static int upgrade(struct bw_opts *o)
{
	struct upgrade u = {.cg_fd = -1};
	struct bw_maps m = BW_MAPS_INIT;
	char root[PATH_MAX];
	uint64_t from;
	bool want_lsm;
	size_t i;
	int ret;

	/* Not bw_open_pinned: an older build's state lacks the maps this one adds. */
	if (access(BW_PIN_ROOT "/bw_cgroups", F_OK)) {
		bw_err("nothing to upgrade: no pinned state under %s (the next command loads "
		       "this build)",
		       BW_PIN_ROOT);
		return 1;
	}
	/* The programs are loaded once for every agent: they hold the lock meanwhile. */
	ret = bw_lock(&m);
	if (ret) {
		bw_err("cannot take the agents' lock: %s", strerror(-ret));
		return 1;
	}
	from = pinned_hash();
	if (from == bw_objects_hash()) {
		/* An upgrade stopped half way has not stamped the hash yet: it goes on below. */
		printf("the pinned BPF objects are this build's already (%016llx): nothing to "
		       "upgrade\n",
		       (unsigned long long)from);
		goto out;
	}
	want_lsm = !access(BW_PIN_ROOT "/links/bw_file_open", F_OK);
	ret = bw_cgroup_root(root, sizeof(root));
	if (!ret) {
		u.cg_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ret = u.cg_fd < 0 ? -errno : 0;
	}
	if (ret) {
		bw_err("cannot open the cgroup2 root for the network programs: %s", strerror(-ret));
		goto out;
	}
	ret = load_all(&u, want_lsm);
	if (ret)
		goto out; /* nothing changed */
	ret = gov_bits_fill();
	if (ret)
		goto out; /* nothing changed but bits set, which only cost time */
	ret = replace_all(&u);
	if (ret) {
		bw_err("upgrade stopped half way: every hook is attached, some with the old "
		       "build's program; run `bpfwarden upgrade` again");
		goto out;
	}
	ret = stamp_version();
	if (ret) {
		bw_err("cannot record this build's hash in %s/bw_version: %s", BW_PIN_ROOT,
		       strerror(-ret));
		goto out;
	}
	/* What the old programs kept is not the new programs' to reuse: bw_unlock ends it. */
	m.dc_gen = bpf_obj_get(BW_PIN_ROOT "/bw_dc_gen");
	printf("upgraded BPF objects %016llx -> %016llx: %d programs replaced in place, %d "
	       "attached before their predecessor was detached, %d new, %d removed\n",
	       (unsigned long long)from, (unsigned long long)bw_objects_hash(), u.updated,
	       u.side_by_side, u.added, u.removed);
out:
	for (i = 0; i < u.nobjs; i++)
		bpf_object__close(u.objs[i]);
	if (u.cg_fd >= 0)
		close(u.cg_fd);
	bw_unlock(&m);
	if (m.dc_gen >= 0)
		close(m.dc_gen);
	close(m.lock_fd);
	return ret ? 1 : 0;
}

static const struct argp_option upgrade_options[] = {BW_OPTS_COMMON};

static const struct argp upgrade_argp = {
    upgrade_options, bw_parse_opt, NULL,
    "Replace the pinned BPF programs with this build's, without a gap in enforcement.\vThe "
    "pinned maps, and so every profile and governed cgroup, are kept. A pinned map this build "
    "reads differently is refused, and then nothing changes. docs/operations.md says how."};

const struct bw_command bw_cmd_upgrade = {"upgrade", &upgrade_argp, upgrade, 0};
