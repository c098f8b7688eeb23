# SPDX-License-Identifier: GPL-2.0-only
"""What kubelet does on a node, as much as the tests need: run a pod, run a
container in it, read its log and status, take it all down. Requests go
through the CRI API to containerd (tests/k8s/cri.js, one Node process for a
whole test run), so pods get the annotations and labels a real kubelet gives
them, and the runtime calls bpfwarden-hook exactly as it would on a node.
"""
import json
import os
import subprocess
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("BW_VM_CACHE", "/var/cache/bpfwarden-vm")
RUN = os.environ.get("BW_K8S_RUN", "/run/bw-k8s")
DATA = os.environ.get("BW_K8S_DATA", "/tmp/bw-k8s")
IMAGE = "localhost/bw-busybox:1"


class CRIError(Exception):
    def __init__(self, method, msg, code):
        super().__init__("%s: %s (gRPC code %s)" % (method, msg, code))
        self.msg = msg
        self.code = code


def node(*args):
    """tests/k8s/node.sh up MODE | down."""
    p = subprocess.run([os.path.join(HERE, "node.sh")] + list(args), capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("node.sh %s failed: %s%s" % (" ".join(args), p.stdout, p.stderr))


class Kubelet:
    def __init__(self):
        env = dict(os.environ, NODE_PATH=os.path.join(CACHE, "containers", "node", "node_modules"))
        self.proc = subprocess.Popen(["node", os.path.join(HERE, "cri.js"),
                                      os.path.join(RUN, "containerd.sock")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=env)
        self.next_id = 0
        self.pods = []

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)

    def call(self, method, request, timeout=120):
        start = time.time()
        try:
            return self._call(method, request, timeout)
        finally:
            if os.environ.get("BW_K8S_TRACE"):
                print("  cri %s %.2fs" % (method, time.time() - start), flush=True)

    def _call(self, method, request, timeout):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, "method": method,
                                          "request": request, "timeout": timeout}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the CRI client (cri.js) died")
        reply = json.loads(line)
        if "error" in reply:
            raise CRIError(method, reply["error"], reply.get("code"))
        return reply["response"]

    def run_pod(self, name, namespace="default", annotations=None, labels=None, privileged=False):
        """RunPodSandbox as kubelet would: its metadata, labels and annotations."""
        uid = str(uuid.uuid4())
        logdir = os.path.join(DATA, "logs", "%s_%s_%s" % (namespace, name, uid))
        os.makedirs(logdir, exist_ok=True)
        lab = {"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": namespace,
               "io.kubernetes.pod.uid": uid}
        lab.update(labels or {})
        config = {
            "metadata": {"name": name, "uid": uid, "namespace": namespace, "attempt": 0},
            # The node's network, hence its UTS namespace: no hostname of its own.
            "log_directory": logdir,
            "labels": lab,
            "annotations": dict(annotations or {}),
            "linux": {"cgroup_parent": "/kubepods/besteffort/pod" + uid,
                      "security_context": {"namespace_options": {"network": "NODE"},
                                           "privileged": privileged}},
        }
        pod_id = self.call("RunPodSandbox", {"config": config})["pod_sandbox_id"]
        pod = {"id": pod_id, "config": config, "uid": uid, "name": name,
               "namespace": namespace, "logdir": logdir, "containers": []}
        self.pods.append(pod)
        return pod

    def create(self, pod, name, command, mounts=(), annotations=None, privileged=False,
               image=IMAGE):
        config = {
            "metadata": {"name": name, "attempt": 0},
            "image": {"image": image},
            "command": list(command),
            "log_path": name + ".log",
            "labels": {"io.kubernetes.container.name": name,
                       "io.kubernetes.pod.name": pod["name"],
                       "io.kubernetes.pod.namespace": pod["namespace"],
                       "io.kubernetes.pod.uid": pod["uid"]},
            "annotations": dict(annotations or {}),
            "mounts": [{"container_path": c, "host_path": h, "readonly": ro}
                       for c, h, ro in mounts],
            "linux": {"security_context": {"privileged": privileged}},
        }
        cid = self.call("CreateContainer", {"pod_sandbox_id": pod["id"], "config": config,
                                            "sandbox_config": pod["config"]})["container_id"]
        pod["containers"].append(cid)
        return cid

    def start(self, cid):
        self.call("StartContainer", {"container_id": cid})

    def status(self, cid):
        return self.call("ContainerStatus", {"container_id": cid})["status"]

    def wait_exit(self, cid, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            st = self.status(cid)
            if st["state"] == "CONTAINER_EXITED":
                return st
            time.sleep(0.2)
        raise RuntimeError("container %s did not exit in %ds" % (cid[:12], timeout))

    def exec_sync(self, cid, command, timeout=60):
        """ExecSync, what `kubectl exec` without a terminal asks: (exit code,
        output lines, error lines)."""
        r = self.call("ExecSync", {"container_id": cid, "cmd": list(command),
                                   "timeout": timeout}, timeout=timeout + 60)

        def lines(b):
            # cri.js writes a bytes field as Node writes a Buffer in JSON.
            data = bytes(b["data"]) if isinstance(b, dict) else (b or b"")
            return data.decode(errors="replace").splitlines()
        return r["exit_code"], lines(r["stdout"]), lines(r["stderr"])

    def log(self, pod, name):
        """The container's output, as the CRI log format's message parts."""
        out = []
        try:
            with open(os.path.join(pod["logdir"], name + ".log")) as f:
                for line in f:
                    parts = line.rstrip("\n").split(" ", 3)
                    if len(parts) == 4:
                        out.append(parts[3])
        except FileNotFoundError:
            pass
        return out

    def run(self, pod, name, command, timeout=60, **kw):
        """Create, start, wait: (exit code, output lines)."""
        cid = self.create(pod, name, command, **kw)
        self.start(cid)
        st = self.wait_exit(cid, timeout)
        # The log is written by the shim, a moment after the exit.
        time.sleep(0.2)
        return st["exit_code"], self.log(pod, name), cid

    def done(self, pod):
        """A test is done with a pod: its containers are stopped, the pod is
        left as it is (removing a sandbox takes seconds under TCG, and the
        guest goes away after the run)."""
        for cid in pod["containers"]:
            try:
                self.call("StopContainer", {"container_id": cid, "timeout": 0})
            except CRIError:
                pass

    def remove_pod(self, pod):
        for cid in pod["containers"]:
            try:
                self.call("StopContainer", {"container_id": cid, "timeout": 0})
                self.call("RemoveContainer", {"container_id": cid})
            except CRIError:
                pass
        try:
            self.call("StopPodSandbox", {"pod_sandbox_id": pod["id"]})
            self.call("RemovePodSandbox", {"pod_sandbox_id": pod["id"]})
        except CRIError:
            pass
        self.pods.remove(pod)
