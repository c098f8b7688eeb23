// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfwarden.h"
#include "loader.h"
#include "probe.h"
#include "bits.h"
#include "util.h"
#include "cgroup.skel.h"
#include "cgroup.h"
#include "exec.skel.h"
#include "net.skel.h"
#include "sock.skel.h"
#include "file.skel.h"
#include "ident.skel.h"
#include "ns.skel.h"
#include "cgguard.skel.h"
#include "guard.skel.h"
#include "receive.skel.h"

#define BPF_FS_MAGIC 0xcafe4a11

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !bw_verbose)
		return 0;
	if (!bw_verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int ensure_bpffs(void)
{
	struct statfs sfs;

	if (!statfs("/sys/fs/bpf", &sfs) && sfs.f_type == BPF_FS_MAGIC)
		goto mkdirs;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		int ret = -errno;
		const char *caps = bw_caps_missing(BW_NEED_MOUNT);

		bw_err("bpffs is not mounted on /sys/fs/bpf and mounting it failed: %s",
		       caps && ret == -EPERM ? caps : strerror(-ret));
		return ret;
	}
mkdirs:
	if (mkdir(BW_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(BW_PIN_ROOT "/links", 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

struct bpf_link *bw_prog_attach(struct bpf_program *prog, int cg_fd)
{
	if (bpf_program__type(prog) == BPF_PROG_TYPE_CGROUP_SOCK_ADDR ||
	    bpf_program__type(prog) == BPF_PROG_TYPE_CGROUP_SOCK)
		return bpf_program__attach_cgroup(prog, cg_fd);
	return bpf_program__attach(prog);
}

/*
 * bw_cg_leave runs on every path component every process walks: it is
 * attached only while a profile in force needs it (bw_cg_moves_sync), never
 * with the rest of its object.
 */
bool bw_prog_on_demand(const struct bpf_program *prog)
{
	return !strcmp(bpf_program__name(prog), "bw_cg_leave");
}

/*
 * Attach and pin each program of obj that has no pinned link yet. cgroup
 * programs go on the cgroup2 root (cg_fd): they see every process and find
 * the governing policy themselves, like the LSM programs.
 */
static int attach_missing(struct bpf_object *obj, int cg_fd)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		char pin[PATH_MAX];
		struct bpf_link *link;
		int ret;

		if (!bpf_program__autoload(prog) || bw_prog_on_demand(prog))
			continue;
		snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", bpf_program__name(prog));
		if (!access(pin, F_OK))
			continue;
		link = bw_prog_attach(prog, cg_fd);
		if (!link) {
			ret = -errno;
			bw_err("cannot attach %s: %s", bpf_program__name(prog), strerror(-ret));
			return ret;
		}
		ret = bpf_link__pin(link, pin);
		bpf_link__destroy(link); /* the pin keeps it attached */
		if (ret) {
			bw_err("cannot pin %s: %s", pin, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static bool all_pinned(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		char pin[PATH_MAX];

		if (!bpf_program__autoload(prog) || bw_prog_on_demand(prog))
			continue;
		snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", bpf_program__name(prog));
		if (access(pin, F_OK))
			return false;
	}
	return true;
}

/*
 * What the loader asks of the kernel's BTF, found in one pass over its
 * types: each LSM hook a BPF program can attach to is a function
 * bpf_lsm_HOOK (kept sorted, for bsearch), kernels from 6.3 pass an idmap
 * first to inode_setattr (struct mnt_idmap), and kernels before 6.5 send
 * spliced pages to a socket through proto_ops.sendpage. btf__find_by_name_kind
 * walks every type: once per program, that was most of a warm start.
 */
static struct {
	bool read, have_btf, idmap, sendpage;
	const char **hooks; /* names after "bpf_lsm_", copied */
	size_t nhooks;
	int kept; /* bw_kfacts, when the facts came from it; else -1 */
} kernel_facts = {.kept = -1};

/*
 * The facts are kept for the rest of the boot in a pinned map, bw_kfacts:
 * a hook's name, or "@idmap", "@sendpage", to 1. Parsing the kernel's BTF
 * was 40% of the instructions of every agent's start. A pinned map, not a
 * file: no governed process reaches bpf() or the pins, so none can change
 * what the loader believes this kernel has. KFACTS_DONE is written last,
 * and names this layout.
 */
#define KFACTS_PIN  BW_PIN_ROOT "/bw_kfacts"
#define KFACTS_DONE "@complete-1"
#define KFACT_LEN   64

static bool kfact_get(int fd, const char *name)
{
	char key[KFACT_LEN] = {};
	__u8 v = 0;

	snprintf(key, sizeof(key), "%s", name);
	return !bpf_map_lookup_elem(fd, key, &v) && v;
}

static int kfact_put(int fd, const char *name)
{
	char key[KFACT_LEN] = {};
	__u8 one = 1;

	snprintf(key, sizeof(key), "%s", name);
	return bpf_map_update_elem(fd, key, &one, BPF_NOEXIST) ? -errno : 0;
}

static bool kernel_facts_from_pin(void)
{
	int fd = bpf_obj_get(KFACTS_PIN);

	if (fd < 0)
		return false;
	if (!kfact_get(fd, KFACTS_DONE)) {
		close(fd);
		return false;
	}
	kernel_facts.read = kernel_facts.have_btf = true;
	kernel_facts.idmap = kfact_get(fd, "@idmap");
	kernel_facts.sendpage = kfact_get(fd, "@sendpage");
	kernel_facts.kept = fd;
	return true;
}

/* Best effort: without the pin, the next agent reads the BTF again. */
static void kernel_facts_keep(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bw_kfacts", KFACT_LEN, 1,
				kernel_facts.nhooks + 4, NULL);
	size_t i;
	int ret = fd < 0 ? -errno : 0;

	for (i = 0; !ret && i < kernel_facts.nhooks; i++)
		ret = kfact_put(fd, kernel_facts.hooks[i]);
	if (!ret && kernel_facts.idmap)
		ret = kfact_put(fd, "@idmap");
	if (!ret && kernel_facts.sendpage)
		ret = kfact_put(fd, "@sendpage");
	if (!ret)
		ret = kfact_put(fd, KFACTS_DONE);
	/* The first start of a boot asks before it loads: the directory is not there yet. */
	if (!ret && mkdir(BW_PIN_ROOT, 0700) && errno != EEXIST)
		ret = -errno;
	if (!ret && bpf_obj_pin(fd, KFACTS_PIN))
		ret = -errno;
	if (ret)
		bw_dbg("cannot keep the kernel's facts in %s: %s", KFACTS_PIN, strerror(-ret));
	if (fd >= 0)
		close(fd);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void kernel_facts_read(void)
{
	/*
	 * Not kept: the parsed BTF is 5 MB or more of each agent's memory for
	 * its lifetime (docs/performance.md, "Memory per sandbox").
	 */
	struct btf *btf;
	size_t cap = 0;
	__u32 id, n;

	if (kernel_facts_from_pin())
		return;
	kernel_facts.read = true;
	btf = btf__load_vmlinux_btf();
	if (libbpf_get_error(btf))
		return; /* then nothing loads anyway */
	kernel_facts.have_btf = true;
	n = btf__type_cnt(btf);
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__str_by_offset(btf, t->name_off);

		if (btf_is_struct(t) && !strcmp(name, "mnt_idmap")) {
			kernel_facts.idmap = true;
		} else if (btf_is_struct(t) && !strcmp(name, "proto_ops")) {
			const struct btf_member *m = btf_members(t);
			__u16 i;

			for (i = 0; i < btf_vlen(t); i++, m++)
				if (!strcmp(btf__str_by_offset(btf, m->name_off), "sendpage"))
					kernel_facts.sendpage = true;
		} else if (btf_is_func(t) && !strncmp(name, "bpf_lsm_", 8)) {
			if (kernel_facts.nhooks == cap) {
				const char **more =
				    realloc(kernel_facts.hooks,
					    (cap = cap ? 2 * cap : 256) * sizeof(*more));

				if (!more)
					break; /* then hooks missing here read as missing: not
						  loaded */
				kernel_facts.hooks = more;
			}
			if (!(kernel_facts.hooks[kernel_facts.nhooks] = strdup(name + 8)))
				break;
			kernel_facts.nhooks++;
		}
	}
	btf__free(btf);
	qsort(kernel_facts.hooks, kernel_facts.nhooks, sizeof(*kernel_facts.hooks), cmp_name);
	kernel_facts_keep();
}

static bool kernel_has_idmap(void)
{
	if (!kernel_facts.read)
		kernel_facts_read();
	return kernel_facts.idmap;
}

static bool kernel_has_sendpage(void)
{
	if (!kernel_facts.read)
		kernel_facts_read();
	return kernel_facts.sendpage;
}

static bool kernel_has_hook(const char *hook)
{
	if (!kernel_facts.read)
		kernel_facts_read();
	if (kernel_facts.kept >= 0)
		return kfact_get(kernel_facts.kept, hook);
	/* Without BTF nothing loads: the load says why. */
	return !kernel_facts.have_btf || bsearch(&hook, kernel_facts.hooks, kernel_facts.nhooks,
						 sizeof(*kernel_facts.hooks), cmp_name);
}

/* Every BPF object the agent carries, in load order. */
static const struct bw_object {
	const char *name;
	const char *what; /* for messages */
	const void *(*elf)(size_t *size);
	unsigned needs; /* BW_NEED_*: BW_NEED_LSM needs BPF LSM too */
} bw_objects[] = {
    {"cgroup_bpf", "the cgroup tracking programs", cgroup_bpf__elf_bytes, BW_NEED_TRACING},
    {"net_bpf", "the network programs", net_bpf__elf_bytes, BW_NEED_NET},
    {"file_bpf", "the file hooks", file_bpf__elf_bytes, BW_NEED_LSM},
    {"exec_bpf", "the exec hooks", exec_bpf__elf_bytes, BW_NEED_LSM},
    {"sock_bpf", "the socket hooks", sock_bpf__elf_bytes, BW_NEED_LSM},
    {"ident_bpf", "the identity hooks", ident_bpf__elf_bytes, BW_NEED_LSM},
    {"ns_bpf", "the mount, chroot and user namespace hooks", ns_bpf__elf_bytes, BW_NEED_LSM},
    {"cgguard_bpf", "the cgroup migration and limit hooks", cgguard_bpf__elf_bytes, BW_NEED_LSM},
    {"guard_bpf", "the self-protection hooks", guard_bpf__elf_bytes, BW_NEED_LSM},
    {"receive_bpf", "the received-descriptor hook", receive_bpf__elf_bytes, BW_NEED_LSM},
};

/*
 * What each program of bpf/ns.bpf.c refuses, to say so when this kernel has
 * no hook for it: the other objects' hooks exist on every kernel with BPF
 * LSM, these not necessarily (path_chroot needs CONFIG_SECURITY_PATH,
 * userns_create came in 6.1).
 */
static const struct {
	const char *hook, *prog, *what;
} view_hooks[] = {
    {"sb_mount", "bw_sb_mount", "mount(2)"},
    {"sb_umount", "bw_sb_umount", "umount"},
    {"move_mount", "bw_move_mount", "move_mount"},
    {"sb_pivotroot", "bw_sb_pivotroot", "pivot_root"},
    {"path_chroot", "bw_path_chroot", "chroot"},
    {"userns_create", "bw_userns_create", "new user namespaces"},
    {"capable", "bw_capable",
     "fsopen, fspick, fsmount, open_tree clones, mount_setattr and setns into a mount "
     "namespace"},
};

/*
 * Does this kernel have the LSM hook prog is for (a function bpf_lsm_HOOK
 * in its BTF)? Some came later than the oldest kernel we support
 * (inode_set_acl in 6.2, file_ioctl_compat in 6.8); where they are missing,
 * what they would see goes through a hook that is there (an ACL through
 * inode_setxattr), or does not exist (no 32-bit ioctl hook: 32-bit ioctls
 * went through file_ioctl).
 */
static bool hook_exists(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);

	/* Without BTF nothing loads: the load says why. */
	return strncmp(sec, "lsm/", 4) || kernel_has_hook(sec + 4);
}

static void skip_missing_hooks(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		if (bpf_program__autoload(prog) && !hook_exists(prog))
			bpf_program__set_autoload(prog, false);
	}
}

/*
 * Only the inode_setattr program that matches this kernel's hook is loaded,
 * and the splice check of connected datagrams only where splice passes
 * sendpage (bpf/sock.bpf.c).
 */
static void pick_programs(struct bpf_object *obj)
{
	struct bpf_program *splice = bpf_object__find_program_by_name(obj, "bw_peer_splice");
	struct bpf_program *with = bpf_object__find_program_by_name(obj, "bw_setattr_idmap");
	struct bpf_program *without = bpf_object__find_program_by_name(obj, "bw_setattr_plain");
	bool idmap;

	if (splice)
		bpf_program__set_autoload(splice, kernel_has_sendpage());
	if (!with || !without)
		return;
	idmap = kernel_has_idmap();
	bpf_program__set_autoload(with, idmap);
	bpf_program__set_autoload(without, !idmap);
}

/*
 * Open one object, its maps to be reused from the pins. A program whose hook
 * this kernel lacks is not loaded (bw_view_unrefused says what goes unrefused).
 */
static struct bpf_object *open_object(const struct bw_object *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = BW_PIN_ROOT,
		    .object_name = o->name);
	struct bpf_object *obj;
	const void *elf;
	size_t size;

	elf = o->elf(&size);
	obj = bpf_object__open_mem(elf, size, &opts);
	if (obj) {
		pick_programs(obj);
		skip_missing_hooks(obj);
	}
	return obj;
}

/*
 * Once the LSM programs are pinned, a view hook's program is pinned too
 * unless this kernel lacks its hook (skip_missing_hooks): a look at the
 * pins, where reading the kernel's BTF (megabytes) was most of a warm
 * start's time.
 */
static bool view_hook_exists(size_t i)
{
	char pin[PATH_MAX];

	snprintf(pin, sizeof(pin), BW_PIN_ROOT "/links/%s", view_hooks[i].prog);
	if (!access(pin, F_OK))
		return true;
	if (!access(BW_PIN_ROOT "/links/bw_file_open", F_OK))
		return false;
	return kernel_has_hook(view_hooks[i].hook);
}

const char *bw_view_unrefused(void)
{
	static char msg[1024];
	size_t i, len = 0;
	int n;

	for (i = 0; i < sizeof(view_hooks) / sizeof(view_hooks[0]); i++) {
		if (view_hook_exists(i))
			continue;
		n = snprintf(msg + len, sizeof(msg) - len, "%s%s (no %s hook)", len ? ", " : "",
			     view_hooks[i].what, view_hooks[i].hook);
		if (n > 0)
			len = len + n < sizeof(msg) ? len + n : sizeof(msg) - 1;
	}
	return len ? msg : NULL;
}

size_t bw_objects_count(void)
{
	return sizeof(bw_objects) / sizeof(bw_objects[0]);
}

struct bpf_object *bw_object_open(size_t i, const char **what, unsigned *needs)
{
	libbpf_set_print(libbpf_print);
	*what = bw_objects[i].what;
	*needs = bw_objects[i].needs;
	return open_object(&bw_objects[i]);
}

/*
 * Objects bw_load_needs opened, for bw_load to use rather than open (and
 * parse) each one a second time in the same start.
 */
static struct bpf_object *opened[sizeof(bw_objects) / sizeof(bw_objects[0])];

static struct bpf_object *object_take(size_t i)
{
	struct bpf_object *obj = opened[i];

	opened[i] = NULL;
	return obj ? obj : open_object(&bw_objects[i]);
}

/* Load and attach what of one object is not pinned yet. */
static int load_object(size_t i, int cg_fd)
{
	const struct bw_object *o = &bw_objects[i];
	struct bpf_object *obj = object_take(i);
	const char *caps;
	int ret;

	if (!obj)
		return -errno;
	if (all_pinned(obj)) {
		ret = 0;
		goto out;
	}
	/* Say which capability is missing rather than relay the kernel's EPERM. */
	caps = bw_caps_missing(BW_NEED_BPF | o->needs);
	if (caps) {
		bw_err("cannot load %s: %s", o->what, caps);
		ret = -EPERM;
		goto out;
	}
	ret = bpf_object__load(obj);
	if (ret) {
		bw_err("cannot load %s: %s (run with -v for the verifier log; pins left by "
		       "another version: `bpfwarden reset`)",
		       o->what, strerror(-ret));
		goto out;
	}
	ret = attach_missing(obj, cg_fd);
out:
	bpf_object__close(obj);
	return ret;
}

int bw_policies_read(const struct bw_maps *m, struct bw_policy *all)
{
	static __u32 keys[BW_MAX_POLICIES];
	__u32 n = BW_MAX_POLICIES, out, id;
	int ret;

	ret = bpf_map_lookup_batch(m->policies, NULL, &out, keys, all, &n, NULL);
	if ((!ret || errno == ENOENT) && n == BW_MAX_POLICIES) {
		for (id = 0; id < n; id++)
			if (keys[id] != id)
				break;
		if (id == n)
			return 0;
	}
	/* A kernel without batch operations on arrays (before 5.6). */
	for (id = 0; id < BW_MAX_POLICIES; id++)
		if (bpf_map_lookup_elem(m->policies, &id, &all[id]))
			return -errno;
	return 0;
}

/*
 * Is bw_cg_leave wanted (some slot in use says `allow cgroup`)? Attach it,
 * or detach it, to match. A slot whose agent died stays in use, and its
 * cgroups governed, until another agent reclaims it: the program stays too.
 */
int bw_cg_moves_sync(struct bw_maps *m)
{
	static const char pin[] = BW_PIN_ROOT "/links/bw_cg_leave";
	const struct bw_object *o = NULL;
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_link *link;
	static struct bw_policy all[BW_MAX_POLICIES];
	bool need = false;
	uint32_t id;
	size_t i;
	int ret;

	ret = bw_policies_read(m, all);
	if (ret)
		return ret;
	for (id = 0; id < BW_MAX_POLICIES && !need; id++)
		need = all[id].in_use && all[id].ns[BW_NS_CGROUP] == BW_V_ALLOW;
	if (need == !access(pin, F_OK))
		return 0;
	if (!need) {
		bw_dbg("no profile in force says `allow cgroup`: detaching bw_cg_leave");
		return unlink(pin) && errno != ENOENT ? -errno : 0;
	}
	/* Without BPF LSM the profile's file rules would not have loaded. */
	for (i = 0; i < sizeof(bw_objects) / sizeof(bw_objects[0]); i++)
		if (!strcmp(bw_objects[i].name, "cgguard_bpf"))
			o = &bw_objects[i];
	obj = o ? open_object(o) : NULL;
	if (!obj)
		return -ENOENT;
	prog = bpf_object__find_program_by_name(obj, "bw_cg_leave");
	ret = prog ? bpf_object__load(obj) : -ENOENT;
	if (ret) {
		bw_err("cannot load %s for `allow cgroup`: %s", o->what, strerror(-ret));
		goto out;
	}
	link = bpf_program__attach(prog);
	if (!link) {
		ret = -errno;
		bw_err("cannot attach bw_cg_leave for `allow cgroup`: %s", strerror(-ret));
		goto out;
	}
	ret = bpf_link__pin(link, pin);
	bpf_link__destroy(link); /* the pin keeps it attached */
	if (ret)
		bw_err("cannot pin %s: %s", pin, strerror(-ret));
	else
		bw_dbg("a profile says `allow cgroup`: bw_cg_leave attached");
out:
	bpf_object__close(obj);
	return ret;
}

unsigned bw_load_needs(bool want_lsm)
{
	unsigned needs = 0;
	size_t i;

	for (i = 0; i < sizeof(bw_objects) / sizeof(bw_objects[0]); i++) {
		const struct bw_object *o = &bw_objects[i];
		struct bpf_object *obj;

		if (!want_lsm && (o->needs & BW_NEED_LSM))
			continue;
		obj = object_take(i);
		if (!obj || !all_pinned(obj))
			needs |= BW_NEED_BPF | o->needs;
		opened[i] = obj;
	}
	return needs;
}

int bw_lock(struct bw_maps *m)
{
	if (m->lock_fd < 0) {
		if (mkdir(BW_RUN_DIR, 0700) && errno != EEXIST)
			return -errno;
		m->lock_fd = open(BW_RUN_DIR "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (m->lock_fd < 0)
			return -errno;
	}
	return flock(m->lock_fd, LOCK_EX) ? -errno : 0;
}

/*
 * Before the lock goes: a decision that read the old generation and saw a
 * map half-written keeps nothing that outlives the change. The kernel adds
 * to the same counter, hence an atomic add through a mapping.
 */
static void dc_gen_bump(struct bw_maps *m)
{
	uint64_t *gen;

	if (m->dc_gen < 0)
		return;
	gen = mmap(NULL, sizeof(*gen), PROT_READ | PROT_WRITE, MAP_SHARED, m->dc_gen, 0);
	if (gen == MAP_FAILED) {
		uint32_t zero = 0;
		uint64_t v = 0;

		/* Not atomic with the kernel's adds, but the value moves on all the same. */
		bpf_map_lookup_elem(m->dc_gen, &zero, &v);
		v += 1ULL << 32;
		if (bpf_map_update_elem(m->dc_gen, &zero, &v, BPF_ANY))
			bw_err("cannot move the decision cache's generation on: %s",
			       strerror(errno));
		return;
	}
	__atomic_fetch_add(gen, 1, __ATOMIC_SEQ_CST);
	munmap(gen, sizeof(*gen));
}

void bw_unlock(struct bw_maps *m)
{
	dc_gen_bump(m);
	if (m->lock_fd >= 0)
		flock(m->lock_fd, LOCK_UN);
}

static int open_pin(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), BW_PIN_ROOT "/%s", name);
	return bpf_obj_get(path);
}

int bw_open_pinned(struct bw_maps *m)
{
	struct {
		int *fd;
		const char *name;
	} maps[] = {
	    {&m->cgroups, "bw_cgroups"},	 {&m->policies, "bw_policies"},
	    {&m->file_rules, "bw_file_rules"},	 {&m->inodes, "bw_inodes"},
	    {&m->exec_rules, "bw_exec_rules"},	 {&m->net_rules, "bw_net_rules"},
	    {&m->unix_rules, "bw_unix_rules"},	 {&m->rbufs, "bw_rbufs"},
	    {&m->counters, "bw_counters"},	 {&m->pinbits, "bw_pinbits"},
	    {&m->opstats, "bw_opstats"},	 {&m->pending, "bw_pending"},
	    {&m->positions, "bw_positions"},	 {&m->pos_pins, "bw_pos_pins"},
	    {&m->pos_dirs, "bw_pos_dirs"},	 {&m->posbits, "bw_posbits"},
	    {&m->cg_count, "bw_cg_count"},	 {&m->cg_limits, "bw_cg_limits"},
	    {&m->dc_gen, "bw_dc_gen"},		 {&m->govbits, "bw_govbits"},
	    {&m->slot_end, "bw_slot_end"},	 {&m->rawdevs, "bw_rawdevs"},
	    {&m->unix_places, "bw_unix_places"}, {&m->cg_select, "bw_cg_select"},
	};
	size_t i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		*maps[i].fd = open_pin(maps[i].name);
		if (*maps[i].fd < 0) {
			int ret = -errno;

			bw_maps_close(m);
			return ret;
		}
	}
	return 0;
}

/*
 * FNV-1a over 8-byte words (the tail bytes one by one): the objects are
 * megabytes, and a byte at a time was a seventh of a warm start.
 */
uint64_t bw_objects_hash(void)
{
	uint64_t h = 0xcbf29ce484222325ULL, w;
	size_t i, j, sz;

	for (i = 0; i < sizeof(bw_objects) / sizeof(bw_objects[0]); i++) {
		const unsigned char *b = bw_objects[i].elf(&sz);

		for (j = 0; j + sizeof(w) <= sz; j += sizeof(w)) {
			memcpy(&w, b + j, sizeof(w));
			h = (h ^ w) * 0x100000001b3ULL;
		}
		for (; j < sz; j++)
			h = (h ^ b[j]) * 0x100000001b3ULL;
	}
	return h;
}

static int unpin_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	/* Depth first: a directory is empty by the time it comes. Go on past failures. */
	if (remove(path) && errno != ENOENT)
		bw_dbg("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

int bw_unpin_all(const char *dir)
{
	if (nftw(dir, unpin_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT))
		return -errno;
	/* Still there: say why. */
	return access(dir, F_OK) || !rmdir(dir) ? 0 : -errno;
}

static bool any_links(void)
{
	DIR *d = opendir(BW_PIN_ROOT "/links");
	struct dirent *de;
	bool any = false;

	while (d && (de = readdir(d)))
		any |= de->d_name[0] != '.';
	if (d)
		closedir(d);
	return any;
}

/*
 * Pins left by another build of the agent would keep running their programs
 * against maps this build reads differently. With nothing governed they are
 * replaced; otherwise the user decides (detach, or `bpfwarden reset`).
 */
static int check_version(void)
{
	uint64_t want = bw_objects_hash(), have = 0;
	char path[] = BW_PIN_ROOT "/bw_version";
	__u32 zero = 0;
	int fd, ret = 0;

	fd = bpf_obj_get(path);
	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &zero, &have);
		close(fd);
		if (have == want)
			return 0;
	} else if (!any_links()) {
		goto create; /* nothing loaded yet */
	}
	fd = bpf_obj_get(BW_PIN_ROOT "/bw_cgroups");
	if (fd >= 0) {
		__u64 key;

		if (!bpf_map_get_next_key(fd, NULL, &key))
			ret = -EEXIST;
		close(fd);
	}
	if (ret) {
		bw_err("the programs pinned under %s come from another build of bpfwarden and "
		       "still govern cgroups: `bpfwarden upgrade` replaces them with this "
		       "build's without a gap; or detach them, or `bpfwarden reset` to drop them",
		       BW_PIN_ROOT);
		return ret;
	}
	bw_dbg("replacing BPF state pinned by another build (nothing governed)");
	bw_unpin_all(BW_PIN_ROOT);
	ret = ensure_bpffs();
	if (ret)
		return ret;
create:
	fd =
	    bpf_map_create(BPF_MAP_TYPE_ARRAY, "bw_version", sizeof(__u32), sizeof(__u64), 1, NULL);
	if (fd < 0) {
		const char *caps = bw_caps_missing(BW_NEED_BPF);

		ret = -errno;
		bw_err("cannot create the version map under %s: %s", BW_PIN_ROOT,
		       ret == -EPERM && caps ? caps : strerror(-ret));
		return ret;
	}
	bpf_map_update_elem(fd, &zero, &want, BPF_ANY);
	ret = bpf_obj_pin(fd, path) ? -errno : 0;
	close(fd);
	return ret;
}

int bw_gov_mark(const struct bw_maps *m, uint64_t cgroup_id)
{
	__u64 *bits = bw_bits_map(m->govbits);

	if (!bits) {
		int ret = -errno;

		bw_err("cannot map the governed-cgroup bitmap: %s", strerror(-ret));
		return ret;
	}
	bw_bits_set(bits, cgroup_id);
	bw_bits_unmap(bits);
	return 0;
}

int bw_load(struct bw_maps *m, bool want_lsm)
{
	int ret, cg_fd = -1;
	size_t i;

	libbpf_set_print(libbpf_print);
	ret = ensure_bpffs();
	if (ret)
		return ret;
	ret = bw_lock(m);
	if (ret)
		return ret;
	ret = check_version();
	if (!ret) {
		/* cgroup programs go on the cgroup2 root (attach_missing). */
		char root[PATH_MAX];

		ret = bw_cgroup_root(root, sizeof(root));
		if (!ret) {
			cg_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			ret = cg_fd < 0 ? -errno : 0;
		}
		if (ret)
			bw_err("cannot open the cgroup2 root for the network programs: %s",
			       strerror(-ret));
	}
	for (i = 0; !ret && i < sizeof(bw_objects) / sizeof(bw_objects[0]); i++)
		if (want_lsm || !(bw_objects[i].needs & BW_NEED_LSM))
			ret = load_object(i, cg_fd);
	if (cg_fd >= 0)
		close(cg_fd);
	if (!ret) {
		ret = bw_open_pinned(m);
		if (ret)
			bw_err("cannot open the pinned maps under %s: %s", BW_PIN_ROOT,
			       strerror(-ret));
	}
	bw_unlock(m);
	return ret;
}

void bw_maps_close(struct bw_maps *m)
{
	int *fds[] = {&m->cgroups,    &m->policies, &m->file_rules,  &m->exec_rules, &m->net_rules,
		      &m->unix_rules, &m->inodes,   &m->rbufs,	     &m->counters,   &m->pinbits,
		      &m->opstats,    &m->pending,  &m->positions,   &m->pos_pins,   &m->pos_dirs,
		      &m->posbits,    &m->cg_count, &m->cg_limits,   &m->dc_gen,     &m->govbits,
		      &m->slot_end,   &m->rawdevs,  &m->unix_places, &m->cg_select};
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
