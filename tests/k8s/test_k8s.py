# SPDX-License-Identifier: GPL-2.0-only
"""The Kubernetes node agent against a real container runtime, in the VM.

containerd 1.6 and runc 1.1 (tools/vm/fetch-containers.sh) run pods that
tests/k8s/kubelet.py asks for through the CRI API, as kubelet would;
bpfwarden-hook is called by the runtime as an OCI createRuntime hook
(containerd's base_runtime_spec) or as an NRI v0.1 plugin, and `bpfwarden
daemon` governs what the pods select. Every test runs once per way the hook
is called (test_hook_*, test_nri_*).
"""
import calendar
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

import bwtest  # noqa: E402
from bwtest import BW, Failure, check, check_eq, skip  # noqa: E402
import kubelet  # noqa: E402

DATA = kubelet.DATA
POLICY = os.path.join(DATA, "policy")       # the ConfigMap volume
VOLUME = os.path.join(DATA, "volume")       # a hostPath volume
LOG = os.path.join(DATA, "daemon.log")
LEARNED = os.path.join(DATA, "learned")     # the daemon's --learn-dir
STATE = os.path.join(kubelet.RUN, "state", "io.containerd.runtime.v2.task")
METRICS = "127.0.0.1:9464"

WEB = """profile web
default allow
deny file rw /etc/shadow
deny file rw /data/secret/**
"""
# A workload that manages cgroups inside its container (a nested runtime).
NESTED = WEB.replace("profile web", "profile nested") + "allow cgroup\n"
# Nothing but what the workload needs: runc's own setup must not meet it.
STRICT = """profile strict
default deny
allow file r /bin/**
allow file r /etc/motd
allow file rw /dev/null
allow exec /bin/**
deny file rw /etc/shadow
"""
# kubectl exec into a default-deny container: runc's init lists /proc/self/fd.
STRICT_EXEC = STRICT.replace("profile strict", "profile strict-exec") + "allow file r /proc/**\n"
# Ends a container at its first denial.
KILLER = """profile killer
default allow
deny file rw /etc/shadow
on-deny kill
"""
# Learns what the containers of namespace learn named app do.
LEARNER = """profile learner
mode learn
default deny
match namespace=learn container=app
"""
BATCH = """profile batch
default allow
deny file rw /etc/hostname
match namespace=ci container=job
"""

def wait_for(pred, timeout=120, what="condition"):
    """bwtest.wait_for with room for a guest on a busy host (every step is seconds under TCG)."""
    bwtest.wait_for(pred, timeout=timeout, what=what)


state = {"mode": None, "kubelet": None, "daemon": None, "generation": 0}


def profiles(**changed):
    """The node's policy directory: these profiles, some of them changed."""
    files = {"web": WEB, "nested": NESTED, "batch": BATCH, "strict": STRICT,
             "strict-exec": STRICT_EXEC, "killer": KILLER}
    files.update(changed)
    return {name + ".profile": text for name, text in files.items()}


def configmap(files):
    """Write the policy directory the way kubelet updates a ConfigMap volume:
    a new timestamped directory, then `..data` swapped to it in one rename."""
    os.makedirs(POLICY, exist_ok=True)
    state["generation"] += 1
    new = os.path.join(POLICY, "..%d" % state["generation"])
    os.makedirs(new)
    for name, text in files.items():
        with open(os.path.join(new, name), "w") as f:
            f.write(text)
    tmp = os.path.join(POLICY, "..data_tmp")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.basename(new), tmp)
    os.rename(tmp, os.path.join(POLICY, "..data"))
    for name in files:
        link = os.path.join(POLICY, name)
        if not os.path.lexists(link):
            os.symlink(os.path.join("..data", name), link)


def log_events():
    return bwtest.events(LOG)


def start_daemon():
    state["daemon"] = subprocess.Popen(
        [BW, "daemon", "--policy-dir", POLICY, "--log", LOG, "--metrics-addr", METRICS,
         "--runtime-state", STATE, "--learn-dir", LEARNED], stdout=subprocess.DEVNULL, stderr=open(LOG + ".err", "a"))
    wait_for(lambda: os.path.exists("/run/bpfwarden/hook.sock")
             and any(e.get("msg", "").startswith("daemon started") for e in log_events()[-20:]),
             timeout=180, what="the daemon to start")


def stop_daemon(sig=signal.SIGTERM):
    d = state["daemon"]
    if d and d.poll() is None:
        d.send_signal(sig)
        d.wait(timeout=90)
    state["daemon"] = None
    wait_for(lambda: not os.path.exists("/run/bpfwarden/hook.sock") or sig == signal.SIGKILL,
             timeout=60, what="the daemon's socket to go")
    if os.path.exists("/run/bpfwarden/hook.sock"):
        os.unlink("/run/bpfwarden/hook.sock")


def node(mode):
    """containerd calling bpfwarden-hook in this mode, and the daemon, both running."""
    if state["mode"] == mode and state["daemon"] and state["daemon"].poll() is None:
        return state["kubelet"]
    teardown()
    os.makedirs(DATA, exist_ok=True)
    configmap(profiles())
    kubelet.node("up", mode)
    state["mode"] = mode
    state["kubelet"] = kubelet.Kubelet()
    start_daemon()
    return state["kubelet"]


def teardown():
    if state["kubelet"]:
        state["kubelet"].close()
        state["kubelet"] = None
    stop_daemon()
    if state["mode"]:
        kubelet.node("down")
        state["mode"] = None


def deny_events(pod, path=None):
    """The deny events of this pod (by its uid: pod names repeat from test to test)."""
    return [e for e in log_events() if e["type"] == "deny"
            and e.get("k8s", {}).get("uid") == pod["uid"]
            and (path is None or e.get("path") == path)]


def check_identity(ev, pod, container, cid):
    k = ev.get("k8s")
    check(k is not None, "no k8s object in %s" % ev)
    check_eq(k["namespace"], pod["namespace"], "k8s.namespace")
    check_eq(k["pod"], pod["name"], "k8s.pod")
    check_eq(k["uid"], pod["uid"], "k8s.uid")
    check_eq(k["container"], container, "k8s.container")
    check_eq(k["container_id"], cid, "k8s.container_id")
    check_eq(k["image"], kubelet.IMAGE, "k8s.image")


# Each test takes the kubelet of its mode.

def first_instruction(k):
    """The container's very first command is a denied open: it fails, and the
    deny event names the pod."""
    pod = k.run_pod("web-1", annotations={"bpfwarden.io/profile": "web"})
    rc, out, cid = k.run(pod, "app", ["/bin/cat", "/etc/shadow"])
    check(rc != 0, "cat /etc/shadow succeeded in a governed container: %s" % out)
    check(any("Permission denied" in line for line in out), "no EACCES in %s" % out)
    wait_for(lambda: deny_events(pod, "/etc/shadow"), what="the deny event")
    ev = deny_events(pod, "/etc/shadow")[0]
    check_identity(ev, pod, "app", cid)
    check_eq(ev["profile"], "web", "profile")
    check_eq(ev["proc"]["comm"], "cat", "the denied process")
    k.done(pod)


def default_deny(k):
    """A profile that denies by default: the container starts (the runtime's
    setup of it is not the workload's) and gets only what it allows."""
    pod = k.run_pod("strict-1", annotations={"bpfwarden.io/profile": "strict"})
    rc, out, cid = k.run(pod, "app", ["/bin/sh", "-c",
                                      "cat /etc/motd; cat /etc/hostname; cat /etc/shadow; echo rc=$?"])
    # stdout and stderr reach the CRI log through two pipes: their lines' order is not kept.
    check("a file the profiles allow" in out, "the allowed read: %s" % out)
    check("cat: can't open '/etc/hostname': Permission denied" in out,
          "the default's refusal: %s" % out)
    check("rc=1" in out and "bw-image" not in out, "denied reads succeeded: %s" % out)
    wait_for(lambda: deny_events(pod, "/etc/hostname"), what="the default's deny event")
    check_eq(deny_events(pod, "/etc/hostname")[0]["rule"], "default", "the deciding rule")
    k.done(pod)


def refused_start(k, pod, command, why, what):
    """Container app of pod is made but does not start, for the reason why."""
    cid = k.create(pod, "app", command)
    try:
        k.start(cid)
    except kubelet.CRIError as e:
        check(why in e.msg, "why %s did not start: %s" % (what, e.msg))
        return
    raise Failure("%s started" % what)


def unselected_untouched(k):
    """An unselected pod is untouched; one that names a profile the node does
    not have does not start."""
    ghost = k.run_pod("ghost-1", annotations={"bpfwarden.io/profile": "nope"})
    refused_start(k, ghost, ["/bin/true"], "profile nope is not loaded",
                  "a container selecting a missing profile")
    pod = k.run_pod("plain-1")
    rc, out, _ = k.run(pod, "app", ["/bin/cat", "/etc/shadow"])
    check_eq(rc, 0, "exit status of an unselected container (output %s)" % out)
    check_eq(out, ["root:*:19000:0:99999:7:::"], "its output")
    check(not deny_events(pod), "events for an unselected pod")
    k.done(pod)


def match_line_selects(k):
    """A profile's match line selects by namespace and container name."""
    pod = k.run_pod("runner-7", namespace="ci")
    rc, out, cid = k.run(pod, "job", ["/bin/cat", "/etc/hostname"])
    check(rc != 0, "the match line did not select ci/job: %s" % out)
    rc, out, _ = k.run(pod, "sidecar", ["/bin/cat", "/etc/hostname"])
    check_eq(rc, 0, "the sidecar is not selected (%s)" % out)
    wait_for(lambda: deny_events(pod, "/etc/hostname"), what="the deny event")
    check_identity(deny_events(pod)[0], pod, "job", cid)
    k.done(pod)


def daemon_down(k):
    """Fail closed: with the daemon down a selected container does not start;
    unselected ones and kube-system's do."""
    stop_daemon()
    try:
        pod = k.run_pod("web-down", annotations={"bpfwarden.io/profile": "web"})
        refused_start(k, pod, ["/bin/cat", "/etc/shadow"], "daemon cannot be reached",
                      "a selected container with the daemon down")
        plain = k.run_pod("plain-down")
        rc, out, _ = k.run(plain, "app", ["/bin/cat", "/etc/motd"])
        check_eq(rc, 0, "an unselected container with the daemon down (%s)" % out)
        ks = k.run_pod("dns-down", namespace="kube-system",
                       annotations={"bpfwarden.io/profile": "web"})
        rc, out, _ = k.run(ks, "app", ["/bin/cat", "/etc/motd"])
        check_eq(rc, 0, "a kube-system container with the daemon down (%s)" % out)
        for p in (pod, plain, ks):
            k.done(p)
    finally:
        start_daemon()


def exec_into(k):
    """kubectl exec into a governed container (ExecSync): runc joins the
    container's namespaces before its cgroup, so no mount or namespace of
    its is asked of the profile; what it runs is governed, with the pod's
    identity. runc's init runs governed too: a profile that denies by
    default must let it read /proc (it lists its descriptors to close them)."""
    pod = k.run_pod("web-exec", annotations={"bpfwarden.io/profile": "web"})
    cid = k.create(pod, "app", ["/bin/sleep", "600"])
    k.start(cid)
    rc, out, err = k.exec_sync(cid, ["/bin/cat", "/etc/motd"])
    check_eq(rc, 0, "exec of an allowed read (%s %s)" % (out, err))
    rc, out, err = k.exec_sync(cid, ["/bin/cat", "/etc/shadow"])
    check(rc != 0 and any("Permission denied" in line for line in err),
          "exec of a denied read: rc %d %s %s" % (rc, out, err))
    wait_for(lambda: deny_events(pod, "/etc/shadow"), what="the deny event")
    check_identity(deny_events(pod, "/etc/shadow")[0], pod, "app", cid)
    strict = k.run_pod("strict-exec", annotations={"bpfwarden.io/profile": "strict"})
    scid = k.create(strict, "app", ["/bin/sleep", "600"])
    k.start(scid)
    try:
        k.exec_sync(scid, ["/bin/cat", "/etc/motd"])
        raise Failure("exec into a default-deny container that does not allow /proc ran")
    except kubelet.CRIError as e:
        check("/proc/self/fd: permission denied" in e.msg, "why the exec failed: %s" % e.msg)
    wait_for(lambda: [e for e in deny_events(strict) if e["proc"]["comm"] == "runc:[2:INIT]"
                      and e["path"].startswith("/proc/") and e["path"].endswith("/fd")],
             what="the deny event of runc's init")
    allowed = k.run_pod("strict-exec-2", annotations={"bpfwarden.io/profile": "strict-exec"})
    acid = k.create(allowed, "app", ["/bin/sleep", "600"])
    k.start(acid)
    rc, out, err = k.exec_sync(acid, ["/bin/cat", "/etc/motd"])
    check_eq((rc, out), (0, ["a file the profiles allow"]), "exec with /proc allowed (%s)" % err)
    rc, out, err = k.exec_sync(acid, ["/bin/cat", "/etc/hostname"])
    check(rc != 0, "a read the profile does not allow, through exec: %s" % out)
    for p in (pod, strict, allowed):
        k.done(p)

# One line a turn, written with one echo: a log read between the two checks
# of a turn still ends with a whole turn (two lines, one a check, could end
# half way through the next turn and be read in the wrong order).
LOOP = ("i=0; while [ $i -lt 600 ]; do "
        "if cat /etc/shadow >/dev/null 2>&1; then s=shadow-read; else s=shadow-denied; fi; "
        "if cat /etc/motd >/dev/null 2>&1; then m=motd-read; else m=motd-denied; fi; "
        "echo \"$s $m\"; i=$((i+1)); sleep 0.3; done")


def last_turn(k, pod, name):
    """The two outcomes of the loop's last whole turn."""
    lines = [l for l in k.log(pod, name) if l.startswith("shadow-")]
    return lines[-1].split() if lines else []


def turns(k, pod, name):
    return [w for l in k.log(pod, name) for w in l.split()]


def event_time(e):
    """An event's ts (RFC 3339, UTC, ns) in seconds since the epoch."""
    ts = e["ts"]
    return calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + ts[19:-1])


def restart(k):
    """Enforcement goes on while the daemon is down; after its restart the
    events of the container carry its identity again, and the denials made
    while it was down (left in its former slot's ring buffer) are logged,
    with the container's identity too."""
    pod = k.run_pod("web-long", annotations={"bpfwarden.io/profile": "web"})
    cid = k.create(pod, "loop", ["/bin/sh", "-c", LOOP])
    k.start(cid)
    wait_for(lambda: "shadow-denied" in turns(k, pod, "loop"), what="the loop's first turn")
    stop_daemon(signal.SIGKILL)
    down = time.time()
    n = len(k.log(pod, "loop"))
    wait_for(lambda: len(k.log(pod, "loop")) > n + 2, what="more turns with the daemon down")
    check("shadow-read" not in turns(k, pod, "loop"), "/etc/shadow read while the daemon was down")
    mark = len(log_events())
    up = time.time()
    start_daemon()
    wait_for(lambda: any(e["type"] == "deny" for e in log_events()[mark:]),
             what="a deny event after the restart")
    ev = [e for e in log_events()[mark:] if e["type"] == "deny"][0]
    check_identity(ev, pod, "loop", cid)

    def made_while_down():
        return [e for e in log_events()[mark:] if e["type"] == "deny" and
                e.get("path") == "/etc/shadow" and down < event_time(e) < up]
    wait_for(lambda: len(made_while_down()) >= 2, what="the denials made while the daemon was down")
    for e in made_while_down():
        check_identity(e, pod, "loop", cid)
    check("shadow-read" not in turns(k, pod, "loop"), "/etc/shadow read after the restart")
    k.done(pod)


def child_cgroup(k):
    """A cgroup made inside the container is governed as the container is (moving
    into it takes `allow cgroup`)."""
    pod = k.run_pod("web-cg", annotations={"bpfwarden.io/profile": "nested"}, privileged=True)
    # Below its own cgroup, whether or not the runtime gave it a cgroup namespace.
    script = ("cg=$(sed -n 's/^0:://p' /proc/self/cgroup); cg=${cg%/}; "
              "mkdir /sys/fs/cgroup$cg/inner && echo $$ > /sys/fs/cgroup$cg/inner/cgroup.procs && "
              "cat /proc/self/cgroup && cat /etc/shadow; echo rc=$?")
    rc, out, cid = k.run(pod, "app", ["/bin/sh", "-c", script], privileged=True)
    check(any(line.startswith("0::") and line.endswith("/inner") for line in out),
          "the shell did not move into its own cgroup: %s" % out)
    check("rc=1" in out, "/etc/shadow readable from a child cgroup: %s" % out)
    wait_for(lambda: deny_events(pod, "/etc/shadow"), what="the deny event")
    ev = deny_events(pod, "/etc/shadow")[0]
    check(ev["cgroup"]["path"].endswith("/%s/inner" % cid), "cgroup path %s" % ev["cgroup"]["path"])
    check_identity(ev, pod, "app", cid)
    k.done(pod)


def volume_and_hard_link(k):
    """A denied file of a volume, reached by a second bind mount of the volume
    or through a hard link made outside the denied directory, is refused:
    its pins were resolved in the container's own root."""
    shutil.rmtree(VOLUME, ignore_errors=True)
    os.makedirs(os.path.join(VOLUME, "secret"))
    os.makedirs(os.path.join(VOLUME, "pub"))
    with open(os.path.join(VOLUME, "secret", "key"), "w") as f:
        f.write("s3cr3t\n")
    os.link(os.path.join(VOLUME, "secret", "key"), os.path.join(VOLUME, "pub", "alias"))
    with open(os.path.join(VOLUME, "pub", "readme"), "w") as f:
        f.write("public\n")
    pod = k.run_pod("web-vol", annotations={"bpfwarden.io/profile": "web"})
    script = ("for f in /data/pub/readme /data/secret/key /mnt/secret/key /data/pub/alias; do "
              "if cat $f >/dev/null 2>&1; then echo $f read; else echo $f denied; fi; done")
    rc, out, cid = k.run(pod, "app", ["/bin/sh", "-c", script],
                         mounts=[("/data", VOLUME, False), ("/mnt", VOLUME, True)])
    check_eq(out, ["/data/pub/readme read", "/data/secret/key denied", "/mnt/secret/key denied",
                   "/data/pub/alias denied"], "reads through the volume")
    wait_for(lambda: len(deny_events(pod)) >= 3, what="three deny events")
    by_inode = [e for e in deny_events(pod) if e.get("by_inode")]
    check(by_inode, "no deny decided by an inode pin: %s" % deny_events(pod))
    k.done(pod)


def late_denied_directory(k):
    """A denied directory that appears after the container started (made on the
    node, in its hostPath volume) is followed in the container's own view: a
    file in it stays refused through a second bind mount of the volume and
    through a hard link made afterwards outside it. The controls read a public
    file by the same routes, so the routes themselves are open."""
    shutil.rmtree(VOLUME, ignore_errors=True)
    os.makedirs(os.path.join(VOLUME, "pub"))
    with open(os.path.join(VOLUME, "pub", "readme"), "w") as f:
        f.write("public\n")
    def entries():
        text = scrape()
        return {m: metric(text, "bpfwarden_map_entries", map=m) for m in ("positions", "pos_pins")}
    # The containers of earlier cases are let go as their cgroups go, a moment
    # after they stop: counted from before that, theirs leaving and this
    # container's coming would look like nothing stored.
    wait_for(lambda: governed(scrape()) == 0, what="the earlier containers let go")
    before = entries()
    pod = k.run_pod("web-late", annotations={"bpfwarden.io/profile": "web"})
    files = ["/data/pub/readme", "/mnt/pub/readme", "/data/pub/plain",
             "/data/secret/key", "/mnt/secret/key", "/data/pub/alias"]
    script = ("while [ ! -e /data/go ]; do sleep 0.2; done; for f in %s; do "
              "if cat $f >/dev/null 2>&1; then echo $f read; else echo $f denied; fi; done; "
              "echo end; exec sleep 600" % " ".join(files))
    cid = k.create(pod, "app", ["/bin/sh", "-c", script],
                   mounts=[("/data", VOLUME, False), ("/mnt", VOLUME, True)])
    k.start(cid)
    # Governed since the hook: now the node makes the denied directory and its names.
    os.makedirs(os.path.join(VOLUME, "secret"))
    with open(os.path.join(VOLUME, "secret", "key"), "w") as f:
        f.write("s3cr3t\n")
    os.link(os.path.join(VOLUME, "secret", "key"), os.path.join(VOLUME, "pub", "alias"))
    os.link(os.path.join(VOLUME, "pub", "readme"), os.path.join(VOLUME, "pub", "plain"))
    open(os.path.join(VOLUME, "go"), "w").close()
    wait_for(lambda: "end" in k.log(pod, "app"), what="the container's reads")
    check_eq(k.log(pod, "app"),
             ["/data/pub/readme read", "/mnt/pub/readme read", "/data/pub/plain read",
              "/data/secret/key denied", "/mnt/secret/key denied", "/data/pub/alias denied",
              "end"], "reads of a directory made after the start")
    wait_for(lambda: len(deny_events(pod)) >= 3, what="three deny events")
    by_inode = [e["path"] for e in deny_events(pod) if e.get("by_inode")]
    check("/mnt/secret/key" in by_inode and "/data/pub/alias" in by_inode,
          "the other names were not decided by the kernel's pins: %s" % deny_events(pod))
    # The container sleeps after its reads: its positions are still its own.
    during = entries()
    print("  positions and pins: before %s, during %s" % (before, during))
    check(all(during[m] > before[m] for m in before), "no positions stored")
    # Gone with its cgroup: the container's positions leave the shared maps.
    k.done(pod)
    wait_for(lambda: all(entries()[m] <= before[m] for m in before),
             what="the container's positions taken back (before %s, during %s)" % (before, during))


def profile_edit(k):
    """Editing the profile changes what a running container may do; a broken
    edit changes nothing and says why."""
    pod = k.run_pod("web-edit", annotations={"bpfwarden.io/profile": "web"})
    cid = k.create(pod, "loop", ["/bin/sh", "-c", LOOP])
    k.start(cid)
    wait_for(lambda: last_turn(k, pod, "loop") == ["shadow-denied", "motd-read"],
             what="the loop under the first version")
    configmap(profiles(web=WEB + "deny file r /etc/motd\n"))
    wait_for(lambda: last_turn(k, pod, "loop") == ["shadow-denied", "motd-denied"],
             what="/etc/motd denied after the edit")
    mark = len(log_events())
    configmap(profiles(web=WEB + "deny file r /etc/motd\nallow file frobnicate /\n"))
    wait_for(lambda: any("not loaded" in e.get("msg", "") for e in log_events()[mark:]),
             what="the broken edit's agent event")
    msg = [e["msg"] for e in log_events()[mark:] if "not loaded" in e.get("msg", "")][0]
    check("web.profile:6" in msg, "the error does not say where: %s" % msg)
    n = len(k.log(pod, "loop"))
    wait_for(lambda: len(k.log(pod, "loop")) >= n + 2, what="more turns")
    check_eq(last_turn(k, pod, "loop"), ["shadow-denied", "motd-denied"],
             "enforcement after the broken edit")
    configmap(profiles())
    wait_for(lambda: last_turn(k, pod, "loop") == ["shadow-denied", "motd-read"],
             what="/etc/motd readable again")
    k.done(pod)


def log_reopen(k):
    """SIGHUP reopens --log FILE: what logrotate does, then the daemon writes the new file."""
    rotated = LOG + ".1"
    os.rename(LOG, rotated)
    state["daemon"].send_signal(signal.SIGHUP)
    wait_for(lambda: any("log reopened" in e.get("msg", "") for e in log_events()),
             what="the daemon writing the new log")
    with open(rotated) as f:
        check(all(line.endswith("\n") for line in f), "a partial line in the rotated log")


def scrape():
    with urllib.request.urlopen("http://%s/metrics" % METRICS, timeout=10) as r:
        check_eq(r.status, 200, "metrics status")
        return r.read().decode()


def metric(text, name, missing=None, **labels):
    """A sample's value; a counter not yet counted is absent: missing then."""
    want = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith(name + "{"):
            lab = line[len(name) + 1:line.index("}")]
            if ",".join(sorted(lab.split(","))) == want:
                return float(line.rsplit(" ", 1)[1])
    if missing is not None:
        return missing
    raise Failure("no %s{%s} in the metrics" % (name, want))


def governed(text):
    """Containers the daemon governs, whatever their profile."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("bpfwarden_governed_containers{"))


def metrics(k):
    """The endpoint answers, promtool accepts it, and its counters move."""
    before = scrape()
    promtool = shutil.which("promtool")
    if promtool:
        p = subprocess.run([promtool, "check", "metrics"], input=before, capture_output=True,
                           text=True)
        check(p.returncode == 0, "promtool check metrics: %s%s" % (p.stdout, p.stderr))
    opens = metric(before, "bpfwarden_decisions_total", 0, profile="web", op="open",
                   mode="enforce", verdict="deny")
    allowed = metric(before, "bpfwarden_decisions_total", 0, profile="web", op="open",
                     mode="enforce", verdict="allow")
    refused = metric(before, "bpfwarden_refusals_total", profile="web", result="denied")
    # Governed from their first exec: the daemon answers "pending".
    hooks = metric(before, "bpfwarden_hook_requests_total", result="pending")
    pod = k.run_pod("web-metrics", annotations={"bpfwarden.io/profile": "web"})
    cid = k.create(pod, "app", ["/bin/sh", "-c", "cat /etc/shadow; echo done; sleep 600"])
    k.start(cid)
    wait_for(lambda: "done" in k.log(pod, "app"), what="the container's denied read")
    after = scrape()
    check(metric(after, "bpfwarden_decisions_total", profile="web", op="open", mode="enforce",
                 verdict="deny") > opens, "the denied opens did not move")
    # The shell's own opens (its libraries, /bin/cat) are allowed ones.
    check(metric(after, "bpfwarden_decisions_total", profile="web", op="open", mode="enforce",
                 verdict="allow") > allowed, "the allowed opens did not move")
    check(metric(after, "bpfwarden_refusals_total", profile="web", result="denied") > refused,
          "the refusals did not move")
    check(metric(after, "bpfwarden_hook_requests_total", result="pending") > hooks,
          "hook requests did not move")
    check(metric(after, "bpfwarden_governed_containers", profile="web") >= 1,
          "no governed container counted")
    # The fill of each shared map; the loaded profiles' rules are in theirs.
    for m in ("cgroups", "pending", "inodes", "unix_rules", "unix_places", "file_rules",
              "exec_rules", "net_rules", "positions", "pos_pins", "pos_dirs"):
        n, cap = (metric(after, "bpfwarden_map_entries", map=m),
                  metric(after, "bpfwarden_map_capacity", map=m))
        check(0 <= n <= cap and cap > 0, "map %s: %s entries of %s" % (m, n, cap))
    check(metric(after, "bpfwarden_map_entries", map="file_rules") > 0, "no file rules counted")
    with urllib.request.urlopen("http://%s/healthz" % METRICS, timeout=10) as r:
        check_eq(r.read(), b"ok\n", "/healthz")
    # Its pins (made in its root) leave the shared map once it is gone.
    pins = metric(after, "bpfwarden_map_entries", map="inodes")
    pins_before = metric(before, "bpfwarden_map_entries", map="inodes")
    check(pins > pins_before, "no pins for the container (%d, before %d)" % (pins, pins_before))
    k.done(pod)
    wait_for(lambda: metric(scrape(), "bpfwarden_map_entries", map="inodes") <= pins_before,
             what="the container's pins to go (%d with it, %d before)" % (pins, pins_before))
    if not promtool:
        skip("promtool is not installed (package prometheus): the text was not checked")


def agent_image(k):
    """The agent's own image (make image), loaded without a registry, runs:
    the agent finds its profile library in it, and the init container's
    script installs the static hook on a node tree."""
    image_tar = os.path.join(bwtest.BUILD, "bpfwarden-image.tar")
    if not os.path.exists(image_tar):
        skip("no %s: run make image" % image_tar)
    with open(os.path.join(bwtest.REPO, "VERSION")) as f:
        image = "localhost/bpfwarden:" + f.read().strip()
    p = subprocess.run([os.path.join(kubelet.CACHE, "containers", "bin", "ctr"), "--address",
                        os.path.join(kubelet.RUN, "containerd.sock"), "-n", "k8s.io", "images",
                        "import", image_tar], capture_output=True, text=True)
    check(p.returncode == 0, "ctr images import: %s%s" % (p.stdout, p.stderr))
    node_tree = os.path.join(DATA, "node")
    shutil.rmtree(node_tree, ignore_errors=True)
    for d in ("opt/bpfwarden/bin", "opt/nri/bin", "etc/nri", "etc/containers/oci/hooks.d"):
        os.makedirs(os.path.join(node_tree, d))
    pod = k.run_pod("bpfwarden-x1", namespace="bpfwarden")
    rc, out, _ = k.run(pod, "check", ["/usr/bin/bpfwarden", "check",
                                      "/usr/share/bpfwarden/profiles/python-sandbox.profile"],
                       image=image)
    check_eq(rc, 0, "bpfwarden check in the image (%s)" % out)
    rc, out, _ = k.run(pod, "install-hook", ["/usr/lib/bpfwarden/install-hook.sh", "/host"],
                       image=image, mounts=[("/host", node_tree, False)])
    check_eq(rc, 0, "install-hook.sh in the image (%s)" % out)
    hook = os.path.join(node_tree, "opt", "bpfwarden", "bin", "bpfwarden-hook")
    p = subprocess.run([hook, "invoke"], input='{"version":"0.1","state":"delete","id":"x"}',
                       capture_output=True, text=True)
    check(p.returncode == 0 and json.loads(p.stdout)["plugin"] == "bpfwarden-hook",
          "the installed hook answers NRI: %r %r" % (p.stdout, p.stderr))
    k.done(pod)


def on_deny_kill(k):
    """`on-deny kill`: a container's first denial ends the whole container
    (its cgroup.kill: the shell that would have slept on is killed too, a
    moment after the denial, as the agent reads it), with an agent record
    naming its cgroup; a container of the same profile in another pod that
    did nothing denied keeps running."""
    calm = k.run_pod("killer-calm", annotations={"bpfwarden.io/profile": "killer"})
    calm_id = k.create(calm, "app", ["/bin/sleep", "600"])
    k.start(calm_id)
    pod = k.run_pod("killer-1", annotations={"bpfwarden.io/profile": "killer"})
    start = time.time()
    rc, out, cid = k.run(pod, "app", ["/bin/sh", "-c", "cat /etc/shadow; echo after; sleep 600"],
                         timeout=120)
    check(time.time() - start < 100, "the container ran on after its denial")
    check_eq(rc, 137, "the container's exit status (output %s)" % out)
    wait_for(lambda: any(e.get("msg", "").startswith(
        "on-deny kill: killed every process of the governed cgroup") and
        e.get("msg", "").endswith(cid) for e in log_events()),
        what="the agent record of the kill")
    check_eq(k.status(calm_id).get("state"), "CONTAINER_RUNNING",
             "the container of the other pod")
    k.done(pod)
    k.done(calm)


def learn_containers(k):
    """A profile in learn mode: each container it governs gets a learned
    profile in the daemon's --learn-dir (NAMESPACE_POD_CONTAINER.profile),
    written once the container is gone. Two replicas that read different
    files give two profiles that merge (`profile merge`) into one under
    which, enforcing, the same commands run again with nothing refused,
    while a read neither made is refused (the learned profile is not
    wider than what was used)."""
    configmap(profiles(learner=LEARNER))
    try:
        wait_for(lambda: any(e.get("msg", "").startswith("profile learner")
                             for e in log_events()[-30:]), what="the learn profile loaded")
        files = []
        for name, path in (("learn-a", "/etc/motd"), ("learn-b", "/etc/hostname")):
            pod = k.run_pod(name, namespace="learn")
            rc, out, _ = k.run(pod, "app", ["/bin/cat", path])
            check_eq(rc, 0, "cat %s while learning (%s)" % (path, out))
            k.done(pod)
            files.append(os.path.join(LEARNED, "learn_%s_app.profile" % name))
        for f in files:
            wait_for(lambda: os.path.exists(f), what="the learned profile %s" % f)
            r = subprocess.run([BW, "check", f], capture_output=True, text=True)
            check_eq(r.returncode, 0, "bpfwarden check %s (%s)" % (f, r.stdout + r.stderr))
        merged = os.path.join(DATA, "merged.profile")
        r = subprocess.run([BW, "profile", "merge"] + files + ["--name", "learned", "-o", merged],
                           capture_output=True, text=True)
        check_eq(r.returncode, 0, "profile merge (%s)" % (r.stdout + r.stderr))
        text = open(merged).read().replace("mode learn\n", "mode enforce\n")
        configmap(profiles(learned=text))
        wait_for(lambda: any(e.get("msg", "").startswith("profile learned")
                             for e in log_events()[-30:]), what="the merged profile loaded")
        for name, path, ok in (("learn-c", "/etc/motd", True), ("learn-d", "/etc/hostname", True),
                               ("learn-e", "/etc/passwd", False)):
            pod = k.run_pod(name, namespace="learn")
            rc, out, _ = k.run(pod, "app", ["/bin/cat", path])
            check_eq(rc == 0, ok, "cat %s under the merged profile, enforcing (rc %d, %s)"
                     % (path, rc, out))
            if ok:
                check(not deny_events(pod), "denials of %s under the merged profile: %r"
                      % (name, deny_events(pod)))
            else:
                wait_for(lambda: deny_events(pod, path), what="the deny event of %s" % path)
            k.done(pod)
    finally:
        configmap(profiles())


CASES = [first_instruction, default_deny, unselected_untouched, match_line_selects, daemon_down, restart,
         exec_into, child_cgroup, volume_and_hard_link, late_denied_directory, profile_edit, log_reopen,
         metrics, agent_image, learn_containers, on_deny_kill]


def make(mode, case):
    def t():
        if not shutil.which("node"):
            skip("no node: the stand-in kubelet (tests/k8s/cri.js) needs Node")
        cache = os.environ.get("BW_VM_CACHE", "/var/cache/bpfwarden-vm")
        if not os.path.exists(os.path.join(cache, "containers", "bin", "complete")):
            skip("no containerd in %s: run tools/vm/fetch-containers.sh" % cache)
        case(node(mode))
    t.__name__ = "test_%s_%s" % (mode, case.__name__)
    return t


# How the hook is called matters to these; the rest run in hook mode only.
NRI_CASES = [first_instruction, default_deny, unselected_untouched, daemon_down, restart, volume_and_hard_link,
             late_denied_directory]
TESTS = [make("hook", case) for case in CASES] + [make("nri", case) for case in NRI_CASES]

if __name__ == "__main__":
    try:
        rc = bwtest.main(TESTS, sys.argv)
    finally:
        teardown()
    sys.exit(rc)
