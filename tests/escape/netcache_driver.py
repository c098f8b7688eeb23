# SPDX-License-Identifier: GPL-2.0-only
"""The hostile program of test_netcache.py: runs in a governed cgroup and
takes commands on standard input, one per line, answering each on standard
output (escape.py's convention: "OK" or "ERR <errno name>", details on lines
starting with "#"):

    tcp ADDR PORT N     N connects; the outcome of the last, after "# k of N got through"
    udp ADDR PORT N     N unconnected datagrams, likewise
    bind ADDR PORT N    N binds of a TCP socket, likewise
    hammer T PORT...    T threads connecting to 127.0.0.1 at each PORT in turn, nonstop
                        (nothing listens there: ECONNREFUSED is a connect that got through)
    phase               a new phase of the hammer; prints, as JSON, what the connects
                        started in the phase before met: {port: [through, eperm, other]}
    stop                stops the hammer

Counted by phase of their start, so that what a phase reports began after
the command that opened it, whatever was in flight then.
"""
import errno
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
from net_driver import attempt, bind, tcp, udp  # noqa: E402


class Hammer:
    def __init__(self, threads, ports):
        self.ports = ports
        self.phase = 0
        self.counts = {}  # phase -> {port: [through, eperm, other]}
        self.busy = [None] * threads  # the phase each thread's connect in flight began in
        self.lock = threading.Lock()
        self.done = False
        self.threads = [threading.Thread(target=self.loop, args=(i,), daemon=True)
                        for i in range(threads)]
        for t in self.threads:
            t.start()

    def loop(self, i):
        n = len(self.ports)
        k = i * n // len(self.busy)
        while not self.done:
            port = self.ports[k % n]
            k += 1
            with self.lock:
                ph = self.phase
                self.busy[i] = ph
            try:
                tcp("127.0.0.1", port)
                kind = 0
            except OSError as e:
                kind = 0 if e.errno == errno.ECONNREFUSED else 1 if e.errno == errno.EPERM else 2
            with self.lock:
                self.counts.setdefault(ph, {}).setdefault(port, [0, 0, 0])[kind] += 1
                self.busy[i] = None

    def next_phase(self):
        with self.lock:
            old = self.phase
            self.phase += 1
        while True:
            with self.lock:
                if old not in self.busy:
                    return self.counts.pop(old, {})
            time.sleep(0.001)

    def stop(self):
        self.done = True
        for t in self.threads:
            t.join()


def main():
    hammer = None
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] in ("tcp", "udp", "bind"):
            fn = {"tcp": tcp, "udp": udp, "bind": bind}[cmd[0]]
            outs = [attempt(lambda: fn(cmd[1], int(cmd[2]))) for _ in range(int(cmd[3]))]
            print("# %d of %d got through" % (outs.count("OK"), len(outs)))
            print(outs[-1])
        elif cmd[0] == "hammer":
            hammer = Hammer(int(cmd[1]), [int(p) for p in cmd[2:]])
            print("OK")
        elif cmd[0] == "phase":
            print(json.dumps(hammer.next_phase()))
        elif cmd[0] == "stop":
            hammer.stop()
            print("OK")
        sys.stdout.flush()


main()
