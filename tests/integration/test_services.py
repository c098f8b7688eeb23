#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Real services under the profiles learned from them (docs/learn.md).

PostgreSQL 15, Debian's: a cluster made with initdb, then one start (SQL,
a PL/pgSQL block, a stop) learned with `run --mode learn`, then two more
starts under the learned profile. Each start names its shared-memory
segments in /dev/shm anew, so the exact names learned are dead at the next
start: the profile must say /dev/shm/PostgreSQL.*, and the server must start,
answer, load a module it never loaded while learning (auto_explain, from
the library directory of plpgsql.so, which it did load) and stop with no
refusal. The same server, enforced, is then asked to
read a file it never read while learning (pg_read_file), a route an attacker
with SQL has; the control reads it with no sandbox.

Redis 7, Debian's: learned over one start that saves its first dump, then
two more starts under the learned profile that must load it back, with no
refusal: its reads of its own /proc/PID entries are learned as /proc/self.
Then a client asks it, as an attacker would, to drop a file outside its
state, load a shared object from its data directory and connect out: each
refused, and each done by the same server with no sandbox.

nginx, Debian's: learned while a client outside fetched three files of its
document root, then enforced while the client fetches files it never
fetched, one added since and one in a new subdirectory, across a reload and
a log rotation, with no refusal: the document root its configuration names
is a content root. Then what an attacker who can put a symlink in the
document root, or an alias in the configuration, would read is refused
(the control, unsandboxed, serves both).

CPython's own test suite (test_os, test_shutil, test_tempfile, test_glob,
test_fileio, test_pathlib, test_posixpath), learned over one run and then run
again under the learned profile: every test passes. Its temporary names are
new at every run, in the job's own TMPDIR (a job directory, as docs/learn.md
asks: /tmp itself is never a subtree rule), and its socket tests connect to
a listener of its own on a port the kernel picks anew at every run."""
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bwtest import BW, SCRATCH, Skipped, check, check_eq, main, write

S = SCRATCH
PG = "/usr/lib/postgresql/15/bin"
PG_LIB = "/usr/lib/postgresql/15/lib"


def as_postgres(args, **kw):
    return subprocess.run(["runuser", "-u", "postgres", "--"] + args, capture_output=True,
                          text=True, timeout=600, **kw)


def cluster():
    """A cluster of the postgres user's in S/pg, and the job of one start."""
    if not os.path.exists(PG + "/postgres"):
        raise Skipped("no PostgreSQL 15 in %s (tools/install-deps.sh installs it)" % PG)
    os.chmod(S, 0o755)
    d = S + "/pg"
    os.makedirs(d)
    pw = pwd.getpwnam("postgres")
    os.chown(d, pw.pw_uid, pw.pw_gid)
    r = as_postgres([PG + "/initdb", "-D", d + "/data", "-A", "trust"])
    check_eq(r.returncode, 0, "initdb (stderr %s)" % r.stderr)
    job = d + "/job.sh"
    write(job, "set -e\n"
          "%(pg)s/pg_ctl -D %(d)s/data -o \"-k %(d)s -c listen_addresses=''\" -w -l %(d)s/log "
          "start\n"
          "%(pg)s/psql -h %(d)s -d postgres -Atc \"create table if not exists t(x int); "
          "insert into t values (1); select count(*) from t;\"\n"
          "%(pg)s/psql -h %(d)s -d postgres -Atc \"do \\$\\$ begin perform 1; end \\$\\$; "
          "select 'plpgsql ok';\"\n"
          "%(pg)s/pg_ctl -D %(d)s/data -w stop\n" % {"pg": PG, "d": d})
    os.chmod(job, 0o644)
    return d, job


def events(log):
    import json
    with open(log) as f:
        return [json.loads(line) for line in f if line.strip()]


def report(name, rules):
    """One line for docs/learn.md's table: how many rules were learned, and
    how many of them stand for more than one object (a subtree or a
    prefix, each a widening)."""
    allows = [r for r in rules if r.startswith(("allow ", "deny "))]
    wide = [r for r in allows if r.split()[-1].endswith("*") or "/**" in r]
    print("# learned %s: %d rules, %d of them widened" % (name, len(allows), len(wide)),
          flush=True)


def test_postgresql_starts_again_under_its_learned_profile():
    d, job = cluster()
    out, log = S + "/pg.profile", S + "/learn.log"
    r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", log, "--",
                        "runuser", "-u", "postgres", "--", "sh", job],
                       capture_output=True, text=True, timeout=900)
    check_eq(r.returncode, 0, "the learning start (stdout %s, stderr %s)" % (r.stdout, r.stderr))
    with open(out) as f:
        learned = f.read()
    rules = [l for l in learned.splitlines() if l and not l.startswith("#")]
    report("postgresql", rules)
    check("allow file rw /dev/shm/PostgreSQL.*" in rules,
          "the segments as a name prefix:\n%s" % "\n".join(rules))
    check(not [l for l in rules if l.startswith("allow file") and "/dev/shm/PostgreSQL.1" in l
               or l.rstrip().endswith("/dev/shm/**")],
          "no dead segment names, no /dev/shm/**:\n%s" % "\n".join(rules))
    # Named after what the command line runs, past runuser; no comment names
    # the agent's own program, which only started the command.
    check_eq(rules[0], "profile job.sh", "the profile's name")
    check(os.path.realpath(BW) not in learned, "the agent's path in the profile:\n%s" % learned)
    check("allow exec lib %s/**" % PG_LIB in rules,
          "the server's library directory:\n%s" % "\n".join(rules))
    # The next starts also load a module the learning start never mapped.
    with open(job) as f:
        lines = f.read().splitlines(True)
    lines.insert(-1, "%s/psql -h %s -d postgres -Atc \"load 'auto_explain'; "
                 "select 'auto_explain ok';\"\n" % (PG, d))
    write(job, "".join(lines))
    # Two more starts: new segment names each time, all allowed by the prefix.
    for n in (2, 3):
        elog = S + "/enforce%d.log" % n
        r = subprocess.run([BW, "run", "--profile", out, "--log", elog, "--",
                            "runuser", "-u", "postgres", "--", "sh", job],
                           capture_output=True, text=True, timeout=900)
        check_eq(r.returncode, 0, "start %d under the learned profile (stdout %s, stderr %s, "
                 "server log %s)" % (n, r.stdout, r.stderr, open(d + "/log").read()[-2000:]))
        check_eq([l for l in r.stdout.splitlines()
                  if l in ("%d" % n, "plpgsql ok", "auto_explain ok")],
                 ["%d" % n, "plpgsql ok", "auto_explain ok"],
                 "what the server answered at start %d" % n)
        refused = [e for e in events(elog) if e["type"] == "deny"]
        check_eq(refused, [], "refusals at start %d" % n)


def test_postgresql_under_its_profile_reads_nothing_new():
    d, job = cluster()
    secret = S + "/not-the-database.txt"
    write(secret, "s3cr3t\n")
    os.chmod(secret, 0o644)
    out = S + "/pg.profile"
    r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", S + "/l.log",
                        "--", "runuser", "-u", "postgres", "--", "sh", job],
                       capture_output=True, text=True, timeout=900)
    check_eq(r.returncode, 0, "the learning start (stderr %s)" % r.stderr)
    ask = ("%(pg)s/pg_ctl -D %(d)s/data -o \"-k %(d)s -c listen_addresses=''\" -w -l %(d)s/log "
           "start >/dev/null\n"
           "%(pg)s/psql -h %(d)s -d postgres -Atc \"select pg_read_file('%(s)s')\" 2>&1\n"
           "%(pg)s/pg_ctl -D %(d)s/data -w stop >/dev/null\n" % {"pg": PG, "d": d, "s": secret})
    write(d + "/ask.sh", ask)
    os.chmod(d + "/ask.sh", 0o644)
    # The control: the same request with no sandbox reads the file.
    r = as_postgres(["sh", d + "/ask.sh"])
    check("s3cr3t" in r.stdout, "the control read the file: %s %s" % (r.stdout, r.stderr))
    # Under the learned profile the file was never read, so it is refused.
    write(S + "/ask.profile", open(out).read().replace(
        "allow file r %s/job.sh" % d, "allow file r %s/job.sh\nallow file r %s/ask.sh" % (d, d)))
    elog = S + "/ask.log"
    r = subprocess.run([BW, "run", "--profile", S + "/ask.profile", "--log", elog, "--",
                        "runuser", "-u", "postgres", "--", "sh", d + "/ask.sh"],
                       capture_output=True, text=True, timeout=900)
    check("s3cr3t" not in r.stdout and "Permission denied" in r.stdout,
          "pg_read_file under the profile: %s %s" % (r.stdout, r.stderr))
    refused = [e["path"] for e in events(elog) if e["type"] == "deny"]
    check_eq(refused, [secret], "the refusal logged")


def test_redis_reads_back_its_data_under_its_learned_profile():
    """Redis 7 learned over one start: no dump.rdb to load yet, then it saves
    one (temp-PID.rdb renamed into place). The next starts must load it:
    the counter goes on from where the last start left it. Then what a client
    asks of it as an attacker would (redis_attacked)."""
    if not os.path.exists("/usr/bin/redis-server"):
        raise Skipped("no redis-server (tools/install-deps.sh installs it)")
    os.chmod(S, 0o755)
    d = S + "/redis"
    os.makedirs(d + "/data")
    pw = pwd.getpwnam("redis")
    for p in (d, d + "/data"):
        os.chown(p, pw.pw_uid, pw.pw_gid)
    sock = d + "/redis.sock"
    job = d + "/job.sh"
    write(job, "redis-server --port 0 --unixsocket %(s)s --dir %(d)s/data --daemonize yes "
          "--pidfile %(d)s/redis.pid --logfile %(d)s/redis.log\n"
          "i=0; while [ ! -S %(s)s ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n"
          "redis-cli -s %(s)s incr counter\n"
          "redis-cli -s %(s)s bgsave >/dev/null\n"
          "i=0; while [ \"$(redis-cli -s %(s)s info persistence | grep -c "
          "'rdb_bgsave_in_progress:0')\" != 1 ] && [ $i -lt 100 ]; do sleep 0.1; "
          "i=$((i+1)); done\n"
          "redis-cli -s %(s)s shutdown save >/dev/null 2>&1\n"
          "i=0; while [ -e %(d)s/redis.pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n"
          % {"s": sock, "d": d})
    os.chmod(job, 0o644)
    out = S + "/redis.profile"
    r = subprocess.run([BW, "run", "--mode", "learn", "--output", out, "--log", S + "/l.log",
                        "--", "runuser", "-u", "redis", "--", "sh", job],
                       capture_output=True, text=True, timeout=900)
    check_eq((r.returncode, r.stdout.split()), (0, ["1"]),
             "the learning start (stderr %s)" % r.stderr)
    rules = [l for l in open(out).read().splitlines() if l and not l.startswith("#")]
    report("redis", rules)
    check("allow file rw %s/data/**" % d in rules, "its data read back:\n%s" % "\n".join(rules))
    # (PAM's pam_limits in runuser reads init's /proc/1/limits: not its own, and not per-run.)
    pids = [l for l in rules if l.split()[-1].startswith("/proc/") and
            l.split()[-1].split("/")[2].isdigit() and l.split()[-1].split("/")[2] != "1"]
    check("allow file r /proc/self/stat" in rules and not pids,
          "its own /proc entries as /proc/self:\n%s" % "\n".join(rules))
    for n in (2, 3):
        elog = S + "/enforce%d.log" % n
        r = subprocess.run([BW, "run", "--profile", out, "--log", elog, "--",
                            "runuser", "-u", "redis", "--", "sh", job],
                           capture_output=True, text=True, timeout=900)
        check_eq((r.returncode, r.stdout.split()), (0, ["%d" % n]),
                 "start %d under the learned profile (stderr %s, server log %s)"
                 % (n, r.stderr, open(d + "/redis.log").read()[-1500:]))
        # Its reads of its own /proc/PID/stat (about 8 a second) and smaps
        # were learned as /proc/self/...: allowed at every start, new PIDs.
        refused = [e["path"] for e in events(elog) if e["type"] == "deny"]
        check_eq(refused, [], "refusals at start %d" % n)
    redis_attacked(d, sock, out, pw)


def redis_attacked(d, sock, prof, pw):
    """What a client that can send commands gets from a server configured to
    let it (protected configs and MODULE on, as some deployments have them):
    the dump written outside the server's state (the classic
    `CONFIG SET dir` + `SAVE` file drop), a shared object loaded from where it
    writes (MODULE LOAD of a file in its data directory), a connection out
    (MIGRATE to a listener). Under the learned profile each is refused with an
    event; the same job with no sandbox does all three."""
    import shutil
    outside = d + "/outside"
    os.makedirs(outside)
    os.chown(outside, pw.pw_uid, pw.pw_gid)
    so = d + "/data/evil.so"  # any shared object: loading it is the route
    shutil.copy("/usr/lib/x86_64-linux-gnu/libz.so.1", so)
    os.chown(so, pw.pw_uid, pw.pw_gid)
    os.chmod(so, 0o755)  # Redis loads no module without the x bit
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(4)
    lst.settimeout(0.5)
    port = lst.getsockname()[1]

    def attack(name, sandbox):
        log = d + "/redis.log"  # the learned one: what this start adds is read below
        start = os.path.getsize(log)
        job = d + "/job.sh"  # the learned one, rewritten
        cli = "redis-cli -s %s " % sock
        write(job, "redis-server --port 0 --unixsocket %(s)s --dir %(d)s/data --daemonize yes "
              "--pidfile %(d)s/redis.pid --logfile %(log)s --enable-protected-configs yes "
              "--enable-module-command yes\n"
              "i=0; while [ ! -S %(s)s ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n"
              "%(c)sconfig set dir %(o)s\n%(c)sconfig set dbfilename evil.rdb\n%(c)ssave\n"
              "%(c)smodule load %(so)s\n%(c)smigrate 127.0.0.1 %(p)d counter 0 1000\n"
              "%(c)sshutdown nosave >/dev/null 2>&1\n"
              "i=0; while [ -e %(d)s/redis.pid ] && [ $i -lt 100 ]; do sleep 0.1; "
              "i=$((i+1)); done\n"
              % {"s": sock, "d": d, "log": log, "c": cli, "o": outside, "so": so, "p": port})
        os.chmod(job, 0o644)
        elog = d + "/%s-events.log" % name
        cmd = ["runuser", "-u", "redis", "--", "sh", job]
        if sandbox:
            cmd = [BW, "run", "--profile", prof, "--log", elog, "--"] + cmd
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        try:
            conn, _ = lst.accept()
            conn.close()
            reached = True
        except socket.timeout:
            reached = False
        with open(log) as f:
            f.seek(start)
            server = f.read()
        return r, server, reached, events(elog) if sandbox else []

    r, server, reached, evs = attack("attack", True)
    replies = [l for l in r.stdout.splitlines() if l]
    check(len(replies) == 5 and replies[2].startswith("ERR") and replies[4].startswith("IOERR"),
          "the replies under the profile: %r (stderr %s)" % (replies, r.stderr))
    check_eq(sorted(os.listdir(outside)), [], "files the server wrote outside its state")
    check("RedisModule_OnLoad" not in server and "evil.so" in server,
          "the module was never mapped:\n%s" % server[-1500:])
    check(not reached, "the listener was reached from the sandbox")
    refused = sorted((e["op"], e.get("path") or "%s:%s" % (e.get("addr"), e.get("port")))
                     for e in evs if e["type"] == "deny")
    check(len(refused) == 3 and refused[0] == ("connect", "127.0.0.1:%d" % port) and
          refused[1][0] == "create" and refused[1][1].startswith(outside + "/temp-") and
          refused[2] == ("mmap", so),
          "the refusals: %s\nserver: %s\nevents: %s" % (refused, server[-1500:], evs))

    r, server, reached, _ = attack("control", False)
    check(os.path.exists(outside + "/evil.rdb"), "the control drops its file (%r)" % r.stdout)
    check("RedisModule_OnLoad" in server, "the control maps the module:\n%s" % server[-1500:])
    check(reached, "the control reaches the listener")
    lst.close()


NGINX = "/usr/sbin/nginx"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    """(status, body) of GET path."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


class Nginx:
    """A site of its own in S/ng: configuration, document root, logs, temp."""

    def __init__(self):
        if not os.path.exists(NGINX):
            raise Skipped("no nginx (tools/install-deps.sh installs it)")
        os.chmod(S, 0o755)
        self.d = d = S + "/ng"
        self.www = d + "/www"
        self.port = free_port()
        for sub in ("www/docs", "www/img", "logs", "tmp"):
            os.makedirs(d + "/" + sub)
        for name in ("index.html", "about.html", "docs/guide.html", "app.js", "img/hero.jpg",
                     "pricing.html"):
            self.page(name)
        self.conf = d + "/nginx.conf"
        self.configure("")

    def page(self, name):
        write(self.www + "/" + name, "page %s\n" % name)
        os.chmod(self.www + "/" + name, 0o644)

    def configure(self, extra):
        temp = "".join("\t%s_temp_path %s/tmp/%s;\n" % (t, self.d, t)
                       for t in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        write(self.conf, "# %(d)s/www-old is where the site used to be\n"
              "user www-data;\nworker_processes 1;\npid %(d)s/nginx.pid;\n"
              "error_log %(d)s/logs/error.log;\n"
              "events { worker_connections 64; }\n"
              "http {\n\tinclude /etc/nginx/mime.types;\n"
              "\taccess_log %(d)s/logs/access.log;\n%(temp)s"
              "\tserver {\n\t\tlisten 127.0.0.1:%(port)d;\n\t\troot %(d)s/www;\n%(extra)s"
              "\t}\n}\n" % {"d": self.d, "port": self.port, "temp": temp, "extra": extra})
        os.chmod(self.conf, 0o644)

    def command(self):
        return [NGINX, "-e", self.d + "/logs/error.log", "-c", self.conf, "-p", self.d,
                "-g", "daemon off;"]

    def start(self, wrap):
        """The server in the foreground of wrap + its command, once it answers."""
        p = subprocess.Popen(wrap + self.command(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        # The agent loads its programs first: seconds in a guest without KVM.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return p
            except OSError:
                if p.poll() is not None:
                    break
                time.sleep(0.05)
        p.kill()
        out, err = p.communicate()
        log = self.d + "/logs/error.log"
        raise AssertionError("nginx did not answer (%s %s; error log %s)" % (
            out, err, open(log).read()[-1500:] if os.path.exists(log) else "none"))

    def master(self):
        return int(open(self.d + "/nginx.pid").read())

    def signal(self, sig, then=1.5):
        os.kill(self.master(), sig)
        time.sleep(then)

    def stop(self, p):
        self.signal(signal.SIGQUIT, 0)
        out, err = p.communicate(timeout=60)
        return p.returncode, err


def test_nginx_serves_its_document_root_under_its_learned_profile():
    ng = Nginx()
    www = ng.www
    out, llog = S + "/nginx.profile", S + "/nginx-learn.log"
    p = ng.start([BW, "run", "--mode", "learn", "--output", out, "--log", llog, "--"])
    for name in ("index.html", "about.html", "docs/guide.html"):
        check_eq(get(ng.port, "/" + name), (200, "page %s\n" % name), "learning: " + name)
    rc, err = ng.stop(p)
    check_eq(rc, 0, "the learning run (stderr %s)" % err)
    text = open(out).read()
    rules = [l for l in text.splitlines() if l and not l.startswith("#")]
    report("nginx", rules)
    check("allow file r %s/**" % www in rules and "profile nginx" in rules,
          "the document root its configuration names, as a content root:\n%s" % text)
    wide = [l for l in rules if l.endswith("/**") and l.startswith("allow file")]
    check_eq(wide, ["allow file r %s/**" % www], "the only subtree rules")

    # The next day's traffic: files never fetched, one added since, one in a
    # new subdirectory; a reload and a log rotation in the middle.
    elog = S + "/nginx-enforce.log"
    p = ng.start([BW, "run", "--profile", out, "--log", elog, "--"])
    ng.page("docs/new.html")
    os.makedirs(www + "/blog")
    os.chmod(www + "/blog", 0o755)
    ng.page("blog/first.html")
    varied = ["index.html", "about.html", "docs/guide.html", "app.js", "img/hero.jpg",
              "pricing.html", "docs/new.html", "blog/first.html"]
    for name in varied:
        check_eq(get(ng.port, "/" + name), (200, "page %s\n" % name), "enforced: " + name)
    ng.signal(signal.SIGHUP)  # reload: the configuration read again, new workers
    check_eq(get(ng.port, "/pricing.html")[0], 200, "after the reload")
    os.rename(ng.d + "/logs/access.log", ng.d + "/logs/access.log.1")
    ng.signal(signal.SIGUSR1)  # what logrotate's postrotate does
    check_eq(get(ng.port, "/app.js")[0], 200, "after the rotation")
    time.sleep(0.5)
    check("/app.js" in open(ng.d + "/logs/access.log").read(), "the new log written")
    refused = [(e["op"], e.get("path")) for e in events(elog) if e["type"] == "deny"]
    check_eq(refused, [], "refusals on the varied workload")

    # An attacker who can put a symlink in the document root, or an alias in
    # the configuration (a reload later), reads nothing outside it.
    secret = S + "/not-the-site.txt"
    write(secret, "s3cr3t\n")
    os.chmod(secret, 0o644)
    os.symlink(secret, www + "/leak.txt")
    ng.configure("\t\tlocation /etc-leak/ { alias /etc/; }\n")
    ng.signal(signal.SIGHUP)
    check_eq(get(ng.port, "/leak.txt")[0], 403, "a symlink out of the document root")
    check_eq(get(ng.port, "/etc-leak/hostname")[0], 403, "an alias on /etc")
    rc, err = ng.stop(p)
    check_eq(rc, 0, "the enforced server's exit (stderr %s)" % err)
    refused = sorted({e.get("path") for e in events(elog) if e["type"] == "deny"})
    check_eq(refused, ["/etc/hostname", secret], "the refusals logged")
    # The control: the same server with no sandbox serves both.
    p = ng.start([])
    check_eq(get(ng.port, "/leak.txt"), (200, "s3cr3t\n"), "control: the symlink")
    check_eq(get(ng.port, "/etc-leak/hostname"), (200, open("/etc/hostname").read()),
             "control: the alias")
    ng.stop(p)


PY_SUITE = ["test_os", "test_shutil", "test_tempfile", "test_glob", "test_fileio", "test_pathlib",
            "test_posixpath"]


def suite_run(args, tmp, log):
    """python3 -m test PY_SUITE under bpfwarden run ARGS; (result, names of
    the test cases skipped, names of those that failed or erred)."""
    import xml.etree.ElementTree as ET
    env = dict(os.environ, TMPDIR=tmp)
    junit = S + "/pyjob-results.xml"  # one name for both runs: the job writes it each time
    r = subprocess.run([BW, "run", "--log", log] + args + ["--", sys.executable, "-m", "test",
                        "--junit-xml", junit] + PY_SUITE, capture_output=True, text=True,
                       timeout=900, env=env, cwd=tmp)
    check("Tests result: SUCCESS" in r.stdout and r.returncode == 0,
          "the suite (rc %d): %s\nstderr: %s" % (r.returncode, r.stdout[-3000:],
                                                 r.stderr[-2000:]))
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    check(len(cases) > 1000, "test cases in %s: %d" % (junit, len(cases)))
    skipped = sorted(c.get("name") for c in cases if c.find("skipped") is not None)
    bad = sorted(c.get("name") for c in cases
                 if c.find("failure") is not None or c.find("error") is not None)
    return r, skipped, bad


def test_cpython_suite_passes_under_its_learned_profile():
    if not os.path.exists("/usr/lib/python3.11/test/test_os.py"):
        raise Skipped("no CPython test suite (tools/install-deps.sh installs "
                      "libpython3.11-testsuite)")
    tmp = S + "/pyjob"
    os.makedirs(tmp)
    out = S + "/py.profile"
    r, skipped_learning, bad = suite_run(["--mode", "learn", "--output", out], tmp,
                                         S + "/pylearn.log")
    check_eq(bad, [], "tests that failed while learning")
    with open(out) as f:
        rules = [l for l in f.read().splitlines() if l and not l.startswith("#")]
    report("cpython-tests", rules)
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        lo, hi = f.read().split()
    check("allow file rw %s/**" % tmp in rules, "the job's TMPDIR:\n%s" % "\n".join(rules))
    check("allow net connect tcp 127.0.0.1:%s-%s" % (lo, hi) in rules,
          "its own listener's ports:\n%s" % "\n".join(rules))
    check(not [l for l in rules if l.startswith("allow file") and
               (l.endswith(" /tmp/**") or "(deleted)" in l)],
          "no /tmp/**, no dead names of unnamed files:\n%s" % "\n".join(rules))

    log = S + "/pyenforce.log"
    r, skipped, bad = suite_run(["--profile", out], tmp, log)
    check_eq(bad, [], "tests that failed under the learned profile")
    # Left: a unix socket bound below the run's own test directory
    # (test_pathlib's test_is_socket_true, which skips on EPERM). A unix rule
    # names one socket, and that directory's name holds the PID.
    refused = [e for e in events(log) if e["type"] == "deny"]
    check(all(e["op"] == "bind" and e.get("family") == "unix" and
              e["unix"].startswith(tmp + "/test_python_") and e["unix"].endswith("/mysock")
              for e in refused) and len(refused) <= 2,
          "refusals under the learned profile: %s" % refused)
    more = sorted(set(skipped) - set(skipped_learning))
    check(len(more) == len(refused) and all(n.endswith(".test_is_socket_true") for n in more),
          "tests skipped under the learned profile only: %s (refusals: %s)" % (more, refused))

    # Nothing else: the host's secrets, and writes beside the job's directory.
    probe = ("import os\n"
             "for p, m in (('/etc/shadow', 'r'), (%r, 'w')):\n"
             "    try:\n        open(p, m)\n        print('opened', p)\n"
             "    except PermissionError:\n        print('refused', p)\n") % (S + "/beside")
    r = subprocess.run([BW, "run", "--profile", out, "--log", S + "/pyprobe.log", "--",
                        sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    check_eq(r.stdout.splitlines(), ["refused /etc/shadow", "refused %s/beside" % S],
             "outside the learned profile (stderr %s)" % r.stderr[-2000:])


TESTS = [
    test_postgresql_starts_again_under_its_learned_profile,
    test_postgresql_under_its_profile_reads_nothing_new,
    test_redis_reads_back_its_data_under_its_learned_profile,
    test_nginx_serves_its_document_root_under_its_learned_profile,
    test_cpython_suite_passes_under_its_learned_profile,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
