#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Routes past the sandbox's cgroup through the host's kernel: knobs that make
the kernel run a program of the sandbox's choosing in the root cgroup
(core_pattern, modprobe and a module request, binfmt_misc, a cgroup v1
release_agent), raw views of memory and of the kernel (/proc/kcore,
/dev/mem, I/O ports, tracefs, system-wide perf events), kernel modules and
reboot, and mounts that would change the host's view (the BPF file system
that holds the pins, a bind mount over a program the host runs).

No profile allows these (the rule is `builtin:host-kernel`), so each route
runs under a profile that allows everything else (`default allow` and
`allow mount`), where it must be refused with one event naming what was
reached; its control is the same program outside bpfwarden, which must get
through: the route is real on this kernel. Controls change nothing of the
node for long: a knob is written with the value it already has, and where
only a change proves the route (a module helper that runs) the route is
tried in the test VM only.
"""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from escape import (BW, SCRATCH, check, check_eq, denials, events, got_through,  # noqa: E402
                    main, wait_governed,  # noqa: E402
                    need_modules, outcome_lines, profile, read, refused, run, skip, wait_for,
                    write)
from bwtest import Result, attach, make_cgroup, remove_cgroup, stop  # noqa: E402
from test_mounts import SECRET, steps  # noqa: E402

S = SCRATCH
PERMISSIVE = "default allow\nallow mount\n"
HOST_RULE = "builtin:host-kernel"
IN_VM = bool(os.environ.get("BW_VM_KERNEL"))


def permissive():
    return profile(PERMISSIVE, name="permissive")


def plain(cmd):
    """The control: cmd outside bpfwarden, in a fresh cgroup nothing governs."""
    start = make_cgroup("bwesc-plain")
    proc = subprocess.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', start] +
                          list(cmd), capture_output=True, text=True, timeout=120)
    return Result(proc, os.path.join(S, "no-agent.log"))


def host_refused(r, errno_name, obj, what, key="path", op=None):
    """refused() by the host rule; op: the event's op, when not an open."""
    e = refused(r, errno_name, obj, what, key=key)
    check_eq(e["rule"], HOST_RULE, what + ": the rule")
    check_eq(e["op"], op or "open", what + ": the op")
    return e


def through(cmd, what, last=None):
    r = plain(cmd)
    got_through(r, what)
    if last:
        check_eq(outcome_lines(r)[-1], last, what + ": what the route got")
    return r


def knob_route(path, what):
    """A knob written under the permissive profile is refused and keeps its
    value; outside, the same write (of the value it has) goes through."""
    if not os.path.exists(path):
        skip("%s is not on this kernel" % path)
    before = read(path)
    value = before.rstrip("\n") or "\n"
    r = run(permissive(), steps(["write", path, "|%s/helper %%p" % S]))
    host_refused(r, "EACCES", path, what)
    check_eq(read(path), before, what + ": the knob is unchanged")
    through(steps(["write", path, value]), what)
    check_eq(read(path), before, what + ": the control wrote the same value")


def test_core_pattern_pipe():
    """kernel.core_pattern set to a pipe: the kernel would run the sandbox's
    program as root in the root cgroup at the next crash, anyone's."""
    knob_route("/proc/sys/kernel/core_pattern", "core_pattern")


def test_modprobe_helper_path():
    """kernel.modprobe pointed at the sandbox's program: the next module request
    of any process runs it."""
    knob_route("/proc/sys/kernel/modprobe", "kernel.modprobe")


def test_helper_knobs_through_another_procfs():
    """The same knobs through a procfs the sandbox mounts itself (`allow mount`,
    its own mount namespace), and the uevent helper's twin in sysfs: the
    objects are told by their file system and names, not by the path used."""
    os.makedirs(S + "/p")
    os.makedirs(S + "/s")
    knobs = ["kernel/core_pattern", "kernel/modprobe", "kernel/poweroff_cmd",
             "kernel/usermodehelper/bset"]
    route = steps(["mount-fs", "proc", S + "/p"], ["mount-fs", "sysfs", S + "/s"],
                  *[["?write", S + "/p/sys/" + k, "|%s/helper" % S] for k in knobs])
    before = [read("/proc/sys/" + k) for k in knobs]
    r = run(permissive(), route)
    check_eq(outcome_lines(r), ["OK", "OK"] + ["ERR EACCES"] * len(knobs),
             "the mounts made, every knob refused (stderr %s)" % r.stderr.strip())
    for k, b in zip(knobs, before):
        named = [e for e in denials(r.events) if e.get("path") == S + "/p/sys/" + k]
        check(len(named) == 1 and named[0]["rule"] == HOST_RULE,
              "one host-rule event for %s: %r" % (k, denials(r.events)))
        check_eq(read("/proc/sys/" + k), b, k + " is unchanged")
    if os.path.exists("/sys/kernel/uevent_helper"):
        r = run(permissive(), steps(["mount-fs", "sysfs", S + "/s"],
                                    ["write", S + "/s/kernel/uevent_helper", S + "/helper"]))
        host_refused(r, "EACCES", S + "/s/kernel/uevent_helper", "uevent_helper")
    # The control: the knobs are writable outside, by the procfs the host sees.
    through(steps(*[["write", "/proc/sys/" + k, b.rstrip("\n") or "\n"]
                    for k, b in zip(knobs, before)]), "the knobs outside")


def test_module_request_runs_the_modprobe_helper():
    """socket(AF_ALG) asks the kernel for a module, and the kernel runs its
    modprobe helper as root in the root cgroup. With the helper pointed at a
    program that leaves a mark, a request from outside leaves it; from the
    sandbox the request is refused and nothing runs."""
    if not IN_VM:
        skip("the control points the node's modprobe helper elsewhere: run in the test VM")
    if os.path.isdir("/sys/module/af_alg"):
        skip("af_alg is loaded: socket(AF_ALG) requests no module")
    mark = S + "/helper-ran"
    helper = S + "/helper"
    write(helper, "#!/bin/sh\necho \"$*\" >> %s\n" % mark)
    os.chmod(helper, 0o755)
    before = read("/proc/sys/kernel/modprobe")
    write("/proc/sys/kernel/modprobe", helper)
    try:
        r = run(permissive(), steps(["af-alg"]))
        check(not os.path.exists(mark), "the helper ran for the sandbox")
        named = [e for e in denials(r.events) if e.get("module", "").startswith("net-pf-38")]
        check(len(named) == 1 and named[0]["op"] == "module" and named[0]["rule"] == HOST_RULE,
              "one module event for net-pf-38: %r" % denials(r.events))
        r = plain(steps(["af-alg"]))
        wait_for(lambda: os.path.exists(mark), timeout=10, what="the helper of the control")
        check("net-pf-38" in read(mark), "the helper asked for AF_ALG: %r" % read(mark))
    finally:
        write("/proc/sys/kernel/modprobe", before)


def binfmt_misc():
    """The binfmt_misc file system's register file, mounted if need be."""
    reg = "/proc/sys/fs/binfmt_misc/register"
    if os.path.exists(reg):
        return reg
    if "binfmt_misc" not in read("/proc/filesystems"):
        if not IN_VM:
            skip("this kernel has no binfmt_misc loaded")
        need_modules("binfmt_misc")
    m = subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", "/proc/sys/fs/binfmt_misc"],
                       capture_output=True, text=True)
    if not os.path.exists(reg):
        skip("cannot mount binfmt_misc: %s" % m.stderr.strip())
    return reg


def test_binfmt_misc_handler():
    """A binfmt_misc handler registered for files ending .bwt: the host's next
    exec of such a file runs the sandbox's program as the handler, outside."""
    reg = binfmt_misc()
    entry = os.path.join(os.path.dirname(reg), "bwtest")
    rule = ":bwtest:E::bwt::%s/helper:" % S
    r = run(permissive(), steps(["write", reg, rule]))
    host_refused(r, "EACCES", reg, "binfmt_misc register")
    check(not os.path.exists(entry), "the handler was registered")
    try:
        through(steps(["write", reg, rule]), "binfmt_misc register")
        check(os.path.exists(entry), "the control registered its handler")
    finally:
        if os.path.exists(entry):
            write(entry, "-1")


def test_cgroup_v1_release_agent():
    """A cgroup v1 hierarchy mounted by the sandbox (`allow mount`) and its
    release_agent set: the kernel runs it when the hierarchy's last task leaves."""
    os.makedirs(S + "/cg1")
    route = steps(["mount-fs", "cgroup", S + "/cg1", "none,name=bwtest"],
                  ["write", S + "/cg1/release_agent", S + "/helper"])
    r = run(permissive(), route)
    check_eq(outcome_lines(r)[0], "OK", "the sandbox mounts the hierarchy (%s)" % r.stderr)
    host_refused(r, "EACCES", S + "/cg1/release_agent", "release_agent")
    through(steps(["unshare-m"], ["private", "/"]) + [";"] + route[1:], "release_agent")


def test_raw_memory():
    """/proc/kcore (all of memory as an ELF core), and /dev/mem by a node of
    the sandbox's own making on a tmpfs of its own (where device nodes work):
    the bytes of every process and of the page cache."""
    os.makedirs(S + "/d")
    node = S + "/d/m"
    route = steps(["?peek", "/proc/kcore"], ["mount-fs", "tmpfs", S + "/d"],
                  ["mknod-c", node, "1", "1"], ["peek", node])
    r = run(permissive(), route)
    check_eq(outcome_lines(r), ["ERR EACCES", "OK", "OK", "ERR EACCES"],
             "kcore refused, the node made, mem refused (stderr %s)" % r.stderr.strip())
    for path in ("/proc/kcore", node):
        named = [e for e in denials(r.events) if e.get("path") == path]
        check(len(named) == 1 and named[0]["rule"] == HOST_RULE,
              "one host-rule event for %s: %r" % (path, denials(r.events)))
    r = through(steps(["unshare-m"], ["private", "/"]) + [";"] + route[1:], "raw memory")
    check(outcome_lines(r)[0].startswith("OK"), "kcore read outside: %r" % outcome_lines(r))


def test_host_privileges():
    """Privileges over the whole host, each by its own call: I/O ports (iopl),
    loading a kernel module (finit_module) and reboot's (CAP_SYS_BOOT, also
    kexec's)."""
    for step, cap in (("iopl", "CAP_SYS_RAWIO"), ("finit-module", "CAP_SYS_MODULE"),
                      ("reboot-cad-off", "CAP_SYS_BOOT")):
        r = run(permissive(), steps([step]))
        host_refused(r, "EPERM", cap, step, key="capability", op="capability")
        through(steps([step]), step)


def tracefs():
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.exists(d + "/uprobe_events"):
            return d
    subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"],
                   capture_output=True)
    if os.path.exists("/sys/kernel/tracing/uprobe_events"):
        return "/sys/kernel/tracing"
    skip("no tracefs with uprobe_events")


def test_tracefs_uprobe():
    """A uprobe written to tracefs copies another process's write() buffers into
    the trace; the sandbox's own tracefs mount reaches the same file system."""
    d = tracefs()
    before = read(d + "/uprobe_events")
    r = run(permissive(), steps(["write", d + "/uprobe_events", ""]))
    host_refused(r, "EACCES", d + "/uprobe_events", "uprobe_events")
    os.makedirs(S + "/t")
    r = run(permissive(), steps(["mount-fs", "tracefs", S + "/t"], ["peek", S + "/t/trace"]))
    host_refused(r, "EACCES", S + "/t/trace", "the trace by another tracefs mount")
    check_eq(read(d + "/uprobe_events"), before, "uprobe_events unchanged")
    through(steps(["peek", d + "/trace"]), "tracefs")


def test_perf_event_on_a_whole_cpu():
    """A perf event on all of a CPU sees every process that runs there."""
    r = run(permissive(), steps(["perf-cpu"]))
    host_refused(r, "EACCES", "cpu", "perf on CPU 0", key="scope", op="perf")
    through(steps(["perf-cpu"]), "perf on CPU 0")


def test_remount_of_a_file_system_the_host_mounted():
    """A superblock remount (not a bind remount) changes the file system for
    every mount of it: from the sandbox's own namespace, under `allow mount`,
    a read-only remount of a file system the host mounted too would make it
    read-only for the host. By mount(2) and by fspick + fsconfig. The
    sandbox's own file systems it may remount."""
    m, own = S + "/m", S + "/own"
    for d in (m, own):
        os.makedirs(d)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", m], check=True)
    try:
        r = run(permissive(), steps(["remount-sb", m, "ro"]))
        host_refused(r, "EPERM", m, "remount of the host's file system", op="mount")
        r = run(permissive(), steps(["fspick", m], ["fsconfig-flag", "ro"], ["reconfigure"]))
        host_refused(r, "EPERM", "fspick", "fsconfig reconfigure of the host's file system",
                     key="op", op="fspick")
        write(m + "/still-writable", "yes\n")
        r = run(permissive(), steps(["mount-fs", "tmpfs", own], ["remount-sb", own, "ro"],
                                    ["fspick", own], ["fsconfig-flag", "rw"], ["reconfigure"]))
        got_through(r, "the sandbox's own file system remounted")
        r = through(steps(["unshare-m"], ["private", "/"], ["remount-sb", m, "ro"],
                          ["?write", m + "/still-writable", "x"], ["remount-sb", m, "rw"]),
                    "remount outside")
        check_eq(outcome_lines(r)[3], "ERR EROFS", "the remount reached the host's mount")
    finally:
        subprocess.run(["umount", "-l", m], capture_output=True)


def links():
    return sorted(os.listdir("/sys/fs/bpf/bpfwarden/links"))


def bpffs_mounted():
    with open("/proc/self/mountinfo") as f:
        return any(l.split(" - ")[1].startswith("bpf ") and l.split()[4] == "/sys/fs/bpf"
                   for l in f)


def is_shared(path):
    """Is the mount at path in a peer group (mountinfo's shared:N)?"""
    with open("/proc/self/mountinfo") as f:
        for l in f:
            fields = l.split(" - ")[0].split()
            if fields[4] == path:
                return any(x.startswith("shared:") for x in fields[6:])
    return False


def test_unmount_the_pins_from_the_host_namespace():
    """A service governed where it runs, in the host's mount namespace, with a
    profile that allows mounts: unmounting the BPF file system there would drop
    the pins, the only references to the links, and disarm every sandbox on the
    host. Refused, as every mount change in the host's namespace; under `run`
    the same unmount is the sandbox's own namespace's business and leaves the
    host's pins and links as they were."""
    secret = S + "/secret"
    write(secret, "topsecret\n")
    prof = profile(PERMISSIVE + "deny file rw %s\n" % secret, name="mounts")
    cg = make_cgroup("bwesc-host")
    log = S + "/attach.log"
    agent = attach(cg, prof, log)
    try:
        before = links()
        proc = subprocess.run(["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg] +
                              steps(["umount-l", "/sys/fs/bpf"], ["read", secret]),
                              capture_output=True, text=True, timeout=120)
    finally:
        stop(agent)
        remove_cgroup(cg)
    r = Result(proc, log)
    host_refused(r, "EPERM", "/sys/fs/bpf", "umount of the pins' file system", op="umount")
    check(bpffs_mounted(), "the BPF file system is still mounted on the host")
    check_eq(links(), before, "the links")
    # Under run: the sandbox's own namespace. The unmount goes through there,
    # the host keeps its pins, and the sandbox is still refused its secret.
    r = run(prof, steps(["umount-l", "/sys/fs/bpf"], ["?read", secret], ["umount-l", "/proc"]))
    check_eq(outcome_lines(r), ["OK", "ERR EACCES", "OK"],
             "run: unmounted in its own namespace, the secret still refused")
    check(bpffs_mounted(), "the BPF file system is still mounted on the host after run")
    check_eq(links(), before, "the links after run")
    check(os.path.exists("/proc/self"), "the host's /proc is still mounted")


def test_unmount_propagating_from_a_copy_of_the_host_namespace():
    """The service in the host's namespace makes a namespace of its own
    (`unshare -m` needs no permission) without cutting its propagation: its
    mounts are peers of the host's shared mounts, and an unmount there
    unmounts the host's. Refused for every mount whose peers are in another
    namespace; the control shows the propagation is real with a tmpfs of the
    test's own (the pins' file system is not a thing to lose in a control)."""
    shared = S + "/shared"
    os.makedirs(shared)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", shared], check=True)
    subprocess.run(["mount", "--make-shared", shared], check=True)
    bpffs_was_shared = is_shared("/sys/fs/bpf")
    subprocess.run(["mount", "--make-shared", "/sys/fs/bpf"], check=True)
    prof = profile(PERMISSIVE, name="mounts")
    cg = make_cgroup("bwesc-host")
    log = S + "/attach.log"
    try:
        agent = attach(cg, prof, log)
        try:
            before = links()
            proc = subprocess.run(
                ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg] +
                steps(["unshare-m"], ["?umount-l", shared], ["umount-l", "/sys/fs/bpf"]),
                capture_output=True, text=True, timeout=120)
        finally:
            stop(agent)
            remove_cgroup(cg)
        r = Result(proc, log)
        check_eq(outcome_lines(r), ["OK", "ERR EPERM", "ERR EPERM"],
                 "both unmounts refused (stderr %s)" % r.stderr.strip())
        for path in (shared, "/sys/fs/bpf"):
            named = [e for e in denials(r.events) if e.get("path") == path]
            check(len(named) == 1 and named[0]["rule"] == HOST_RULE and
                  named[0]["op"] == "umount",
                  "one host-rule umount event for %s: %r" % (path, denials(r.events)))
        check(bpffs_mounted(), "the BPF file system is still mounted on the host")
        check_eq(links(), before, "the links")
        check(os.path.ismount(shared), "the host's tmpfs is still mounted")
        through(steps(["unshare-m"], ["umount-l", shared]), "an unmount in a copy")
        check(not os.path.ismount(shared), "the control's unmount reached the host")
    finally:
        subprocess.run(["umount", "-l", shared], capture_output=True)
        if not bpffs_was_shared:
            subprocess.run(["mount", "--make-private", "/sys/fs/bpf"], capture_output=True)


def test_bind_over_a_program_the_host_runs():
    """Under `allow mount`, a bind mount over a program the host runs later:
    with `run` the mount is in the sandbox's own namespace, so the host still
    runs its own program; the sandbox itself sees its bind (the route is real)."""
    tool = S + "/tool"
    write(tool, "#!/bin/sh\necho host-tool\n")
    os.chmod(tool, 0o755)
    write(S + "/evil", "#!/bin/sh\necho evil-ran\n")
    os.chmod(S + "/evil", 0o755)
    r = run(permissive(), steps(["bind", S + "/evil", tool], ["exec", tool, "tool"]))
    check_eq(outcome_lines(r)[0], "OK", "the bind in the sandbox (%s)" % r.stderr.strip())
    check("evil-ran" in r.stdout, "the sandbox sees its own bind: %r" % r.stdout)
    out = subprocess.run([tool], capture_output=True, text=True).stdout
    check_eq(out, "host-tool\n", "the host runs its own program")



def test_host_code_abstraction():
    """Code the host's own daemons run later, planted from a sandbox whose
    profile allows every write but includes abstractions/host-code: a cron
    job made in /etc/cron.d, an existing one rewritten there and through
    another name of the directory (the bind mount's source), a program made
    in /usr/local/bin. Each is refused (EACCES) with one event of the
    abstraction's rule; under `default allow` alone each gets through. The
    two directories are a tmpfs of the test's bound over the host's, which
    the guest sees read-only."""
    if not IN_VM:
        skip("binds over /etc/cron.d and /usr/local/bin: the test VM only")
    t = S + "/hc"
    os.makedirs(t)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", t], check=True)
    binds = []
    try:
        for d, over in (("cron.d", "/etc/cron.d"), ("bin", "/usr/local/bin")):
            os.makedirs(os.path.join(t, d))
            subprocess.run(["mount", "--bind", os.path.join(t, d), over], check=True)
            binds.append(over)
        job = S + "/job"
        write(job, "* * * * * root " + S + "/payload\n")
        routes = (
            (["copy", job, "/etc/cron.d/bwtest"], "/etc/cron.d/bwtest", "a new cron job"),
            (["write", "/etc/cron.d/existing", "changed"], "/etc/cron.d/existing",
             "a cron job rewritten"),
            (["write", t + "/cron.d/existing", "changed"], t + "/cron.d/existing",
             "a cron job rewritten by another name"),
            (["copy", "/usr/bin/busybox", "/usr/local/bin/ls"], "/usr/local/bin/ls",
             "a program in /usr/local/bin"))
        # One run tries every route ("?": on after a refusal); each start pays the scan.
        cmd = steps(*[["?" + c[0]] + c[1:] for c, _, _ in routes])
        write("/etc/cron.d/existing", "* * * * * root true\n")
        r = run(profile('default allow\ninclude "abstractions/host-code"\n', name="host-code"),
                cmd)
        check_eq(outcome_lines(r), ["ERR EACCES"] * len(routes), "every route refused")
        for _, obj, what in routes:
            named = [e for e in denials(r.events) if e.get("path") == obj]
            check(len(named) == 1 and "abstractions/host-code:" in named[0]["rule"],
                  "%s: one event of the abstraction's rule names %s: %r"
                  % (what, obj, denials(r.events)))
        check_eq(read("/etc/cron.d/existing"), "* * * * * root true\n", "the cron job unchanged")
        check(not os.path.exists("/etc/cron.d/bwtest") and
              not os.path.exists("/usr/local/bin/ls"), "nothing made")
        r = run(profile("default allow\n", name="allow-all"), cmd)
        check_eq(outcome_lines(r), ["OK"] * len(routes), "every route through without it")
        check_eq(denials(r.events), [], "no refusal without it")
    finally:
        for over in reversed(binds):
            subprocess.run(["umount", over])
        subprocess.run(["umount", t])


def sh(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True, check=True).stdout.strip()


def image(path, mib, partitioned=False):
    """A disk image of mib MiB; partitioned: one Linux partition from sector 2048 on."""
    with open(path, "wb") as f:
        f.truncate(mib << 20)
        if partitioned:
            start = 2048
            f.seek(446)
            f.write(struct.pack("<B3sB3sII", 0, b"\0" * 3, 0x83, b"\0" * 3, start,
                                (mib << 20) // 512 - start))
            f.seek(510)
            f.write(b"\x55\xaa")
    return path


def ext4_with_secret(dev, mnt):
    """An ext4 file system on dev, mounted at mnt, holding the secret, on the disk."""
    sh("mkfs.ext4", "-q", "-F", dev)
    os.makedirs(mnt, exist_ok=True)
    sh("mount", dev, mnt)
    write(mnt + "/key", SECRET + "\n")
    sh("sync")
    write("/proc/sys/vm/drop_caches", "3")


def rawdevs_listed():
    """The devices bw_rawdevs holds now, as (major, minor)."""
    out = sh("bpftool", "-j", "map", "dump", "pinned", "/sys/fs/bpf/bpfwarden/bw_rawdevs")
    devs = set()
    for e in json.loads(out):
        k = bytes(int(b, 16) for b in e["key"])
        d = struct.unpack("<I", k)[0]
        devs.add((d >> 20, d & 0xfffff))
    return devs


def numbers(dev):
    st = os.stat(dev)
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def test_raw_block_devices():
    """The bytes of the host's files read from the block device under them:
    a mounted partition, the whole disk holding it, a node the sandbox makes
    for that disk, active swap (other processes' memory), and a file system
    mounted after the sandbox started. Each open is refused by the host rule
    (EACCES, one event naming the device by the sandbox's path); a device
    that holds nothing mounted is the profile's to decide, and the controls
    outside find the secret (or the swap signature) in each."""
    if not IN_VM:
        skip("makes loop devices, mounts and swap: run in the test VM")
    need_modules("loop", "ext4")
    disk = sh("losetup", "-f", "--show", "-P", image(S + "/disk.img", 48, partitioned=True))
    part = disk + "p1"
    swap = sh("losetup", "-f", "--show", image(S + "/swap.img", 16))
    spare = sh("losetup", "-f", "--show", image(S + "/spare.img", 8))
    late = sh("losetup", "-f", "--show", image(S + "/late.img", 16))
    mnts = (S + "/rawmnt", S + "/latemnt")
    swapped = False
    try:
        wait_for(lambda: os.path.exists(part), timeout=10, what=part)
        ext4_with_secret(part, mnts[0])
        sh("mkswap", swap)
        sh("swapon", swap)
        swapped = True
        with open(spare, "r+b") as f:
            f.seek(4096)
            f.write((SECRET + "\n").encode())
        for dev, what in ((part, "a mounted partition"), (disk, "the disk of a mounted partition"),
                          (swap, "active swap")):
            r = run(permissive(), steps(["scan", dev, SECRET]))
            host_refused(r, "EACCES", dev, what)
        os.makedirs(S + "/d")
        node = S + "/d/disk"
        ma, mi = numbers(disk)
        r = run(permissive(), steps(["mount-fs", "tmpfs", S + "/d"],
                                    ["mknod-b", node, str(ma), str(mi)], ["scan", node, SECRET]))
        check_eq(outcome_lines(r), ["OK", "OK", "ERR EACCES"],
                 "the sandbox's own node of the disk (stderr %s)" % r.stderr.strip())
        named = [e for e in denials(r.events) if e.get("path") == node]
        check(len(named) == 1 and named[0]["rule"] == HOST_RULE,
              "one host-rule event for %s: %r" % (node, denials(r.events)))
        r = run(permissive(), steps(["scan", spare, SECRET]))
        check_eq(outcome_lines(r), ["OK found"], "a device holding nothing mounted, allowed")
        # Mounted once the sandbox runs: listed from the agent's next look at its mounts.
        flag = S + "/late.flag"
        log = S + "/late.log"
        write(log, "")
        p = subprocess.Popen([BW, "run", "--profile", permissive(), "--log", log, "--", "sh",
                              "-c", 'while [ ! -e "$0" ]; do sleep 0.1; done; exec "$@"', flag] +
                             steps(["scan", late, SECRET]), stdout=subprocess.PIPE, text=True)
        try:
            wait_governed(p, log)
            ext4_with_secret(late, mnts[1])
            wait_for(lambda: numbers(late) in rawdevs_listed(), timeout=30,
                     what="the late file system's device listed")
            write(flag, "")
            out, _ = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        check_eq([l for l in out.splitlines() if l.startswith(("OK", "ERR"))], ["ERR EACCES"],
                 "a file system mounted after the sandbox started")
        named = [e for e in denials(events(log)) if e.get("path") == late]
        check(len(named) == 1 and named[0]["rule"] == HOST_RULE,
              "one host-rule event for %s: %r" % (late, denials(events(log))))
        for dev in (part, disk, late):
            through(steps(["scan", dev, SECRET]), "reading %s outside" % dev, last="OK found")
        through(steps(["scan", swap, "SWAPSPACE2"]), "the swap outside", last="OK found")
    finally:
        if swapped:
            subprocess.run(["swapoff", swap], capture_output=True)
        for m in mnts:
            subprocess.run(["umount", m], capture_output=True)
        for dev in (disk, swap, spare, late):
            subprocess.run(["losetup", "-d", dev], capture_output=True)


TESTS = [
    test_core_pattern_pipe,
    test_modprobe_helper_path,
    test_helper_knobs_through_another_procfs,
    test_module_request_runs_the_modprobe_helper,
    test_binfmt_misc_handler,
    test_cgroup_v1_release_agent,
    test_raw_memory,
    test_raw_block_devices,
    test_host_privileges,
    test_tracefs_uprobe,
    test_perf_event_on_a_whole_cpu,
    test_remount_of_a_file_system_the_host_mounted,
    test_unmount_the_pins_from_the_host_namespace,
    test_unmount_propagating_from_a_copy_of_the_host_namespace,
    test_bind_over_a_program_the_host_runs,
    test_host_code_abstraction,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
