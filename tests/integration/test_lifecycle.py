#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The policy's life while processes run under it (docs/operations.md):
replacing a governed cgroup's profile (`attach --replace`) is atomic for
each decision; `bpfwarden upgrade` replaces the pinned programs with no gap;
enforcement outlives a SIGKILLed agent, and a new agent takes the state over.
Each runs openhammer (tests/helpers) in the governed cgroup meanwhile."""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import (BW, BUILD, RUNTIME_RULES, SCRATCH, attach, check, check_eq, cgroup_root,
                    events, lsm_active, main, make_cgroup, profile, read, remove_cgroup, skip,
                    stop, wait_for, write)

S = SCRATCH + "/life"
HAMMER = os.path.join(BUILD, "tests", "openhammer")
PINS = "/sys/fs/bpf/bpfwarden"


def need_lsm():
    if not lsm_active():
        skip("BPF LSM is not active on this kernel")


def one_cpu():
    """Run on the first CPU this process may use (a preexec_fn)."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def hammer(cg, files, cpu=None):
    """openhammer FILES in cgroup cg, started and opening; cpu: a preexec_fn.
    The CPU is set again after the move: on 6.1 entering a cgroup with the
    cpuset controller resets a task's affinity to the cpuset's CPUs, and the
    hammer ran on the other vCPU (both vCPUs then hung in the upgrade)."""
    pin = "taskset -c %d " % min(os.sched_getaffinity(0)) if cpu else ""
    h = subprocess.Popen(["sh", "-c", 'echo $$ > %s/cgroup.procs && exec %s"$0" "$@"' % (cg, pin),
                          HAMMER] + files, stdout=subprocess.PIPE, text=True, preexec_fn=cpu)
    check_eq(h.stdout.readline(), "ready\n", "openhammer started")
    return h


def hammer_counts(h):
    """Stop openhammer; {file: (ok, eacces, other)}."""
    h.send_signal(signal.SIGTERM)
    out, _ = h.communicate(timeout=30)
    check_eq(h.returncode, 0, "openhammer exit status (%s)" % out)
    counts = {}
    for line in out.splitlines():
        path, ok, eacces, other = line.split()
        counts[os.path.basename(path)] = (int(ok), int(eacces), int(other))
    return counts


def test_profile_swap_is_atomic():
    """A hundred `attach --replace` between profiles A and B while openhammer
    opens four files in the cgroup. Per file, under A and under B:
      c   allowed (A: its allow rule under `default deny`; B: `default allow`)
      d   denied  (A: `default deny`; B: its deny rule, and its inode pin)
      f1  allowed in A only, f2 allowed in B only.
    A decision made from a mix of the two (one's rules with the other's
    default) would deny c or allow d: neither ever happens. f1 and f2 must
    each be seen both ways, proving that the swaps happened under load.
    Opening f1 then f2 is two decisions, a swap may fall between them: their
    pairs are no test of atomicity, and are not checked."""
    need_lsm()
    for name in ("c", "d", "f1", "f2"):
        write("%s/%s" % (S, name), name + "\n")
    files = ["%s/%s" % (S, n) for n in ("c", "d", "f1", "f2")]
    a = profile(RUNTIME_RULES + "default deny\nallow file r %s/c\nallow file r %s/f1\n"
                % (S, S), name="a")
    b = profile("default allow\ndeny file r %s/d\ndeny file r %s/f1\n" % (S, S), name="b")
    cg = make_cgroup("bwtest-swap")
    agents, h = [], None
    swaps = int(os.environ.get("BW_SWAPS", "100"))
    try:
        agents.append(attach(cg, a, "%s/agent0.log" % S))
        h = hammer(cg, files)
        for i in range(1, swaps + 1):
            log = "%s/agent%d.log" % (S, i)
            new = attach(cg, b if i % 2 else a, log, replace=True)
            check("replaced the profile of policy slot" in read(log),
                  "swap %d took the cgroup over:\n%s" % (i, read(log)))
            # The replaced agent sees it at its next turn, and exits.
            check_eq(agents[-1].wait(timeout=30), 0, "exit status of the replaced agent")
            agents.append(new)
        counts = hammer_counts(h)
        h = None
        check_eq(counts["c"][1:], (0, 0), "c, allowed under A and B, refused (ok, eacces, "
                 "other: %r)" % (counts["c"],))
        check_eq((counts["d"][0], counts["d"][2]), (0, 0),
                 "d, refused under A and B, opened or failed otherwise (%r)" % (counts["d"],))
        for f in ("f1", "f2"):
            ok, eacces, other = counts[f]
            check(ok > 0 and eacces > 0 and other == 0,
                  "%s seen under both profiles (ok, eacces, other: %r)" % (f, counts[f]))
        # The last profile is B (100 swaps from A): only its slot is in use.
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        slots = [l for l in st.splitlines() if "agent pid" in l and "denied" in l]
        check_eq(len(slots), 1, "policy slots in use after the swaps:\n" + st)
        check("agent pid %d " % agents[-1].pid in slots[0], "the last agent's slot:\n" + st)
        print("  %d swaps under load: %s" % (swaps, counts))
    finally:
        if h:
            h.kill()
            h.wait()
        for ag in agents:
            stop(ag)
        remove_cgroup(cg)


def bpftool(*args):
    r = subprocess.run(["bpftool", "-j"] + list(args), capture_output=True, text=True)
    check_eq(r.returncode, 0, "bpftool %s: %s" % (" ".join(args), r.stderr))
    return json.loads(r.stdout)


def pinned_links():
    """{pin name: (link id, program id, link type)} of every pinned link."""
    # One listing with the pins' names (-f): `link show pinned PATH` exits
    # 255 for some LSM links on 6.12 (bpftool 7.5) after printing them.
    out = {}
    for ln in bpftool("-f", "link", "show"):
        for pin in ln.get("pinned", []):
            if os.path.dirname(pin) == PINS + "/links":
                out[os.path.basename(pin)] = (ln["id"], ln["prog_id"], ln["type"])
    check_eq(sorted(out), sorted(os.listdir(PINS + "/links")), "pinned links listed")
    return out


def pinned_hash():
    value = bpftool("map", "dump", "pinned", PINS + "/bw_version")[0]["value"]
    return "%016x" % int.from_bytes(bytes(int(x, 16) for x in value), "little")


def test_upgrade_replaces_programs_without_a_gap():
    """`bpfwarden upgrade` under load. "A newer build" is this build, with the
    pinned state stamped as another's (bw_version set to another hash): what
    the loader then sees is exactly what a newer agent sees. Every pinned
    program must be replaced (new program ids), denied opens in the governed
    cgroup never succeed meanwhile, allowed ones never fail, and the running
    agent keeps receiving events."""
    need_lsm()
    write(S + "/secret", "s\n")
    write(S + "/open", "o\n")
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    cg = make_cgroup("bwtest-upgrade")
    log = S + "/agent.log"
    agent, h = None, None
    try:
        agent = attach(cg, p, log)
        # The hammer and the upgrade share one vCPU. Under QEMU's TCG a vCPU
        # once trapped on the int3 that text_poke_bp puts on a hook's call
        # while the upgrade re-attached it, and the kernel found no patch in
        # progress (6.12: "Oops: int3" in bpf_lsm_inode_permission, a panic);
        # on hardware the kernel's sync of every CPU rules that out. On one
        # vCPU the hammer still runs between the steps of the upgrade.
        h = hammer(cg, [S + "/secret", S + "/open"], cpu=one_cpu)
        this = subprocess.run([BW, "--version"], capture_output=True, text=True).stdout
        this = this.split("BPF objects ")[1].rstrip(")\n")
        before = pinned_links()
        check(any(n.startswith("bw_file") for n in before), "file hooks pinned: %r" % before)
        # Another build's pinned state: a new agent of this build refuses it.
        r = subprocess.run(["bpftool", "map", "update", "pinned", PINS + "/bw_version",
                            "key", "0", "0", "0", "0", "value", "1", "2", "3", "4", "5", "6",
                            "7", "8"], capture_output=True, text=True)
        check_eq(r.returncode, 0, "bpftool map update bw_version: " + r.stderr)
        other = make_cgroup("bwtest-upgrade-other")
        r = subprocess.run([BW, "attach", "--cgroup", other, "--profile", p],
                           capture_output=True, text=True, timeout=60)
        os.rmdir(other)
        check(r.returncode != 0 and "bpfwarden upgrade" in r.stderr,
              "another build's pins refused, naming upgrade (%d): %s" % (r.returncode, r.stderr))
        u = subprocess.run([BW, "upgrade"], capture_output=True, text=True, timeout=120,
                           preexec_fn=one_cpu)
        check_eq(u.returncode, 0, "upgrade exit status (%s)" % u.stderr)
        check(u.stdout.startswith("upgraded BPF objects 0807060504030201 -> %s:" % this),
              "upgrade says from what to what: %r" % u.stdout)
        after = pinned_links()
        check_eq(sorted(after), sorted(before), "the same hooks pinned")
        same_prog = [n for n in before if before[n][1] == after[n][1]]
        check_eq(same_prog, [], "programs not replaced")
        # cgroup links are updated in place; tracing links (LSM, tp_btf) cannot
        # be: a new link is attached, then the old one dropped.
        in_place = sorted(n for n in before if before[n][0] == after[n][0])
        cgroup_links = sorted(n for n in before if before[n][2] == "cgroup")
        check(cgroup_links, "cgroup links pinned: %r" % before)
        check_eq(in_place, cgroup_links, "links updated in place")
        check_eq(before["bw_file_open"][2], "tracing", "the LSM link's type")
        # The old programs go with their last link.
        old_ids = set(v[1] for v in before.values())

        def old_gone():
            return not old_ids & set(pr["id"] for pr in bpftool("prog", "show"))
        wait_for(old_gone, what="the old build's programs to be freed")
        check_eq(pinned_hash(), this, "bw_version after the upgrade")
        n_before = sum(1 for e in events(log) if e["type"] == "deny")
        counts = hammer_counts(h)
        h = None
        check_eq(counts["secret"][0], 0, "denied opens that succeeded (%r)" % (counts,))
        check(counts["secret"][1] > 0 and counts["open"][0] > 0, "the loop ran: %r" % counts)
        check_eq(counts["open"][1:], (0, 0), "allowed opens refused (%r)" % (counts,))
        # The agent's ring buffer is the same map: events go on reaching it.
        cmd = "echo $$ > %s/cgroup.procs && exec cat %s/secret" % (cg, S)
        subprocess.run(["sh", "-c", cmd], capture_output=True)
        wait_for(lambda: sum(1 for e in events(log) if e["type"] == "deny"
                             or e["type"] == "lost") > n_before, what="events after upgrade")
        # A fresh agent of this build takes the pins as its own again.
        r = subprocess.run([BW, "run", "--profile", p, "--", "true"], capture_output=True,
                           text=True, timeout=60)
        check_eq(r.returncode, 0, "run after the upgrade (%s)" % r.stderr)
        # This build's own pins: a second upgrade changes nothing.
        again = subprocess.run([BW, "upgrade"], capture_output=True, text=True, timeout=120)
        check(again.returncode == 0 and "nothing to upgrade" in again.stdout,
              "a second upgrade (%d): %s%s" % (again.returncode, again.stdout, again.stderr))
        check_eq(pinned_links(), after, "links after a second upgrade")
        print("  %s; opens meanwhile: %s" % (u.stdout.strip(), counts))
    finally:
        if h:
            h.kill()
            h.wait()
        if agent:
            stop(agent)
        remove_cgroup(cg)


def map_bytes(value):
    """A bpftool -j key or value as bytes (hex strings, or numbers with BTF)."""
    return bytes(int(x, 16) if isinstance(x, str) else x for x in value)


def gov_words_full(words=(0, 5000, 16383)):
    """Whether these words of bw_govbits have every bit set (`upgrade` sets them all)."""
    full = []
    for w in words:
        e = bpftool("map", "lookup", "pinned", PINS + "/bw_govbits", "key",
                    *hexbytes(w.to_bytes(4, "little")))
        full.append(map_bytes(e["value"]) == b"\xff" * 8)
    return all(full)


def hexbytes(b):
    return ["0x%02x" % x for x in b]


def test_governed_cgroup_filter_and_an_older_builds_entries():
    """bw_governing tests a cgroup's bit in bw_govbits before it looks the
    cgroup up (bpf/maps.bpf.h): a clear bit is "not governed". This build
    sets the bit before every entry it makes; an older build's agents do
    not, and go on running after `upgrade`. Such an entry (made here with
    bpftool, no bit) is not seen before the upgrade (the control: the
    bitmap is really in the way), and is seen once `upgrade` has set every
    bit: a process in that cgroup is refused again. Until `reset`."""
    need_lsm()
    check_eq(subprocess.run([BW, "reset"], capture_output=True).returncode, 0, "reset")
    write(S + "/secret", "s\n")
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    cg = make_cgroup("bwtest-filter")
    bare = make_cgroup("bwtest-filter-bare")
    log = S + "/filter.log"
    agent = None
    cat = "echo $$ > %%s/cgroup.procs && exec cat %s/secret" % S

    def cat_in(c):
        return subprocess.run(["sh", "-c", cat % c], capture_output=True, text=True)
    try:
        agent = attach(cg, p, log)
        check(not gov_words_full(), "bw_govbits after a load into fresh state is not full")
        check(cat_in(cg).returncode != 0, "the governed cgroup refuses the secret")
        key = os.stat(cg).st_ino.to_bytes(8, "little")
        entry = bpftool("map", "lookup", "pinned", PINS + "/bw_cgroups", "key",
                        *hexbytes(key))
        value = map_bytes(entry["value"])
        # What an older build's agent makes: the entry, no bit.
        bare_key = os.stat(bare).st_ino.to_bytes(8, "little")
        r = subprocess.run(["bpftool", "map", "update", "pinned", PINS + "/bw_cgroups", "key"]
                           + hexbytes(bare_key) + ["value"] + hexbytes(value) + ["noexist"],
                           capture_output=True, text=True)
        check_eq(r.returncode, 0, "bpftool map update bw_cgroups: " + r.stderr)
        r = cat_in(bare)
        check_eq(r.returncode, 0, "control: an entry without its bit is not seen (%s)"
                 % r.stderr.strip())
        r = subprocess.run(["bpftool", "map", "update", "pinned", PINS + "/bw_version",
                            "key", "0", "0", "0", "0", "value", "1", "2", "3", "4", "5", "6",
                            "7", "8"], capture_output=True, text=True)
        check_eq(r.returncode, 0, "bpftool map update bw_version: " + r.stderr)
        u = subprocess.run([BW, "upgrade"], capture_output=True, text=True, timeout=120)
        check_eq(u.returncode, 0, "upgrade exit status (%s)" % u.stderr)
        check(gov_words_full(), "every bit of bw_govbits set by upgrade")
        r = cat_in(bare)
        check(r.returncode != 0 and "Permission denied" in r.stderr,
              "an older build's entry governs once upgrade set every bit (%d: %s)"
              % (r.returncode, r.stderr.strip()))
        check(cat_in(cg).returncode != 0, "the governed cgroup still refuses the secret")
        # Full until reset, which makes the maps anew.
        subprocess.run(["bpftool", "map", "delete", "pinned", PINS + "/bw_cgroups", "key"]
                       + hexbytes(bare_key), capture_output=True)
        stop(agent)
        agent = None
        r = subprocess.run([BW, "run", "--profile", p, "--", "true"], capture_output=True,
                           text=True, timeout=60)
        check_eq(r.returncode, 0, "run after the upgrade (%s)" % r.stderr)
        check(gov_words_full(), "bw_govbits still full once nothing is governed")
        check_eq(subprocess.run([BW, "reset"], capture_output=True).returncode, 0, "reset")
        r = subprocess.run([BW, "run", "--profile", p, "--", "true"], capture_output=True,
                           text=True, timeout=180)
        check_eq(r.returncode, 0, "run after reset (%s)" % r.stderr)
        check(not gov_words_full(), "bw_govbits after reset and a load is not full")
    finally:
        subprocess.run(["bpftool", "map", "delete", "pinned", PINS + "/bw_cgroups", "key"]
                       + hexbytes(os.stat(bare).st_ino.to_bytes(8, "little")),
                       capture_output=True)
        if agent:
            stop(agent)
        remove_cgroup(cg)
        remove_cgroup(bare)


def test_enforcement_survives_sigkill_and_is_taken_over():
    """SIGKILL of the agent leaves the cgroup governed (the pins hold the
    programs and the policy); `attach --replace` from a new agent takes the
    cgroup over, its events reach the new agent, the dead agent's slot is
    released, and the new agent lets the cgroup go on SIGTERM."""
    need_lsm()
    write(S + "/secret", "s\n")
    write(S + "/open", "o\n")
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    cg = make_cgroup("bwtest-kill")
    agent = new = h = None

    def in_cgroup(path):
        cmd = "echo $$ > %s/cgroup.procs && exec %s read %s" % (cg, os.path.join(
            BUILD, "tests", "fsop"), path)
        return subprocess.run(["sh", "-c", cmd], capture_output=True, text=True).stdout.strip()
    try:
        agent = attach(cg, p, S + "/old.log")
        h = hammer(cg, [S + "/secret", S + "/open"])
        agent.kill()
        agent.wait(timeout=30)
        check_eq(in_cgroup(S + "/secret"), "ERR EACCES", "denied after SIGKILL of the agent")
        check_eq(in_cgroup(S + "/open"), "OK", "allowed after SIGKILL of the agent")
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        check("/bwtest-kill" in st and "agent pid %d" % agent.pid in st,
              "status shows the cgroup governed by the dead agent's slot:\n" + st)
        r = subprocess.run([BW, "attach", "--cgroup", cg, "--profile", p],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and "--replace" in r.stderr,
              "a plain attach is refused, naming --replace: " + r.stderr)
        new = attach(cg, p, S + "/new.log", replace=True)
        check("replaced the profile of policy slot" in read(S + "/new.log"),
              "the new agent took the cgroup over")
        check_eq(in_cgroup(S + "/secret"), "ERR EACCES", "denied under the new agent")
        wait_for(lambda: any(e["type"] == "deny" and e["path"] == S + "/secret"
                             for e in events(S + "/new.log")), what="the new agent's event")
        st = subprocess.run([BW, "status"], capture_output=True, text=True).stdout
        check("agent pid %d " % agent.pid not in st, "the dead agent's slot released:\n" + st)
        counts = hammer_counts(h)
        h = None
        check_eq(counts["secret"][0], 0, "denied opens that succeeded (%r)" % (counts,))
        check_eq(counts["open"][1:], (0, 0), "allowed opens refused (%r)" % (counts,))
        stop(new)
        check_eq(new.returncode, 0, "the new agent's exit status")
        check_eq(in_cgroup(S + "/secret"), "OK", "the cgroup let go by the new agent")
    finally:
        if h:
            h.kill()
            h.wait()
        for ag in (agent, new):
            if ag and ag.poll() is None:
                ag.kill()
                ag.wait()
        subprocess.run([BW, "detach", "--cgroup", cg], capture_output=True)
        remove_cgroup(cg)


def switches(pid):
    """Voluntary context switches of every thread of pid so far: how often it slept."""
    n = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        for line in read("/proc/%d/task/%s/status" % (pid, tid)).splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                n += int(line.split()[1])
    return n


IDLE_SECONDS = 3
IDLE_MAX = 5  # the 200 ms tick it had made 15 in 3 s


def check_idle(pid, what):
    """pid sleeps through IDLE_SECONDS without waking up but a handful of times."""
    time.sleep(1)  # what it does right after starting
    before = switches(pid)
    time.sleep(IDLE_SECONDS)
    n = switches(pid) - before
    print("  %s: %d voluntary context switches in %d s" % (what, n, IDLE_SECONDS))
    check(n <= IDLE_MAX, "%s woke up %d times in %d s idle (at most %d)"
          % (what, n, IDLE_SECONDS, IDLE_MAX))


def exits_within(agent, seconds, what):
    """agent exits 0 within seconds (emulated guests are slow: a bound, not a speed)."""
    t = time.monotonic()
    try:
        rc = agent.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        check(False, "%s: the agent still runs after %d s" % (what, seconds))
    check_eq(rc, 0, "%s: the agent's exit status" % what)
    return time.monotonic() - t


def idle_cgroup(name):
    """A cgroup with one process asleep in it (nothing for the agent to see)."""
    cg = make_cgroup(name)
    sleeper = subprocess.Popen(["sh", "-c", 'echo $$ > %s/cgroup.procs && exec sleep 600' % cg])
    wait_for(lambda: str(sleeper.pid) in read(cg + "/cgroup.procs"), what="the sleeper")
    return cg, sleeper


def test_idle_agent_sleeps_and_still_wakes():
    """An attached agent with nothing to report does not wake up (no tick):
    a handful of voluntary context switches in 3 s. It still wakes for what
    happens: a denial's event is logged, a throttled one's `lost` record
    follows without any further event (the recheck after events), and
    SIGTERM ends it, letting the cgroup go."""
    need_lsm()
    write(S + "/secret", "s\n")
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    cg, sleeper = idle_cgroup("bwtest-idle")
    log = S + "/idle.log"
    agent = subprocess.Popen([BW, "attach", "--cgroup", cg, "--profile", p, "--log", log,
                              "--event-rate", "2"], stderr=subprocess.PIPE, text=True)
    fsop = os.path.join(BUILD, "tests", "fsop")

    def in_cgroup(n):
        """n reads of the secret by one process in the cgroup, at once."""
        cmd = "echo $$ > %s/cgroup.procs && exec %s -" % (cg, fsop)
        return subprocess.run(["sh", "-c", cmd], input="read %s/secret\n" % S * n,
                              capture_output=True, text=True).stdout.split()
    try:
        wait_for(lambda: os.path.exists(log) and "governing" in read(log), timeout=180,
                 what="attach")
        check_idle(agent.pid, "idle attach")
        # 20 denials at once at 2 events a second: most are throttled.
        check_eq(set(in_cgroup(20)), {"ERR", "EACCES"}, "denied in the governed cgroup")
        wait_for(lambda: any(e["type"] == "deny" for e in events(log)), timeout=10,
                 what="the deny event of an idle agent")
        wait_for(lambda: sum(e.get("count", 0) for e in events(log) if e["type"] == "lost"
                             and e.get("reason") == "throttled") >= 1, timeout=10,
                 what="the throttled events' lost record")
        check_idle(agent.pid, "attach idle again after events")
        agent.send_signal(signal.SIGTERM)
        exits_within(agent, 10, "SIGTERM")
        check_eq(in_cgroup(1), ["OK"], "the cgroup let go on SIGTERM")
    finally:
        stop(agent)
        sleeper.kill()
        sleeper.wait()
        remove_cgroup(cg)


def test_idle_agent_ends_on_detach_and_rmdir():
    """An idle agent whose cgroup is detached (`bpfwarden detach`, which
    nudges it) or removed (inotify on the parent) ends at once, saying so.
    A sibling cgroup's removal does not end it."""
    need_lsm()
    os.makedirs(S, exist_ok=True)
    p = profile("default allow\ndeny file r %s/secret\n" % S)
    cg, sleeper = idle_cgroup("bwtest-idle-detach")
    agents = []
    try:
        agents.append(attach(cg, p, S + "/detach.log"))
        check_idle(agents[-1].pid, "idle attach")
        r = subprocess.run([BW, "detach", "--cgroup", cg], capture_output=True, text=True)
        check_eq(r.returncode, 0, "detach exit status (%s)" % r.stderr)
        took = exits_within(agents[-1], 10, "detach")
        check("detached by another command" in read(S + "/detach.log"), "the agent says why")
        print("  attach ended %.2f s after detach" % took)

        sleeper.kill()
        sleeper.wait()
        empty = make_cgroup("bwtest-idle-rmdir")
        sibling = make_cgroup("bwtest-idle-sibling")
        agents.append(attach(empty, p, S + "/rmdir.log"))
        os.rmdir(sibling)
        time.sleep(1)
        check(agents[-1].poll() is None, "a sibling's removal does not end the agent")
        check_idle(agents[-1].pid, "idle attach on an empty cgroup")
        os.rmdir(empty)
        took = exits_within(agents[-1], 10, "rmdir")
        check("cgroup removed" in read(S + "/rmdir.log"), "the agent says why")
        print("  attach ended %.2f s after rmdir" % took)
    finally:
        for ag in agents:
            stop(ag)
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
        for name in ("bwtest-idle-detach", "bwtest-idle-rmdir", "bwtest-idle-sibling"):
            remove_cgroup(os.path.join(cgroup_root(), name))


def test_idle_learn_ends_at_its_duration():
    """`learn --duration 3` on an idle cgroup sleeps until its deadline, not
    a tick: it ends after 3 s, and not much later."""
    need_lsm()
    os.makedirs(S, exist_ok=True)
    cg, sleeper = idle_cgroup("bwtest-idle-learn")
    log = S + "/learn.log"
    try:
        t = time.monotonic()
        learn = subprocess.Popen([BW, "learn", "--cgroup", cg, "--duration", "3", "--output",
                                  S + "/learned.profile", "--log", log],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

        def governing():
            if learn.poll() is not None:
                check(False, "learn exited %r: %s" % (learn.returncode, learn.stderr.read()))
            return os.path.exists(log) and "governing" in read(log)
        wait_for(governing, timeout=180, what="learn")
        started = time.monotonic()
        exits_within(learn, 30, "--duration 3")
        took = time.monotonic() - started
        print("  learn ended %.2f s after governing (%.2f s after start)"
              % (took, time.monotonic() - t))
        check(time.monotonic() - t >= 3, "learn ended before its duration")
        check(took < 8, "learn ended %.2f s after it started governing (3 s asked)" % took)
    finally:
        sleeper.kill()
        sleeper.wait()
        remove_cgroup(cg)


def test_idle_daemon_sleeps_and_still_wakes():
    """The node agent with nothing to do does not wake up either; it still
    loads a profile put in its policy directory (inotify) and stops on
    SIGTERM."""
    need_lsm()
    pol = S + "/policy"
    os.makedirs(pol)
    write(pol + "/a.profile", "profile idle-a\ndefault allow\n")
    log = S + "/daemon.log"
    d = subprocess.Popen([BW, "daemon", "--policy-dir", pol, "--log", log, "--socket",
                          S + "/hook.sock", "--runtime-state", S + "/nostate"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: os.path.exists(log) and "daemon started" in read(log), timeout=180,
                 what="the daemon")
        check_idle(d.pid, "idle daemon")
        write(pol + "/b.profile", "profile idle-b\ndefault allow\n")
        wait_for(lambda: "profile idle-b loaded" in read(log), timeout=10,
                 what="the new profile loaded")
        check_idle(d.pid, "daemon idle again")
        d.send_signal(signal.SIGTERM)
        exits_within(d, 10, "SIGTERM to the daemon")
    finally:
        stop(d)


TESTS = [
    test_profile_swap_is_atomic,
    test_upgrade_replaces_programs_without_a_gap,
    test_governed_cgroup_filter_and_an_older_builds_entries,
    test_enforcement_survives_sigkill_and_is_taken_over,
    test_idle_agent_sleeps_and_still_wakes,
    test_idle_agent_ends_on_detach_and_rmdir,
    test_idle_learn_ends_at_its_duration,
    test_idle_daemon_sleeps_and_still_wakes,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
