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
refusal: its reads of its own /proc/PID entries are learned as /proc/self."""
import os
import pwd
import subprocess
import sys

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
    the counter goes on from where the last start left it."""
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


TESTS = [
    test_postgresql_starts_again_under_its_learned_profile,
    test_postgresql_under_its_profile_reads_nothing_new,
    test_redis_reads_back_its_data_under_its_learned_profile,
]

if __name__ == "__main__":
    sys.exit(main(TESTS, sys.argv))
