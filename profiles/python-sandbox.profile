# python-sandbox: run an untrusted Python 3.11 script with the interpreter,
# its libraries and one job directory, and nothing else.
#
#   TMPDIR=/tmp/job bpfwarden run --profile profiles/python-sandbox.profile \
#       -- python3.11 /tmp/job/main.py
#
# (TMPDIR sends the tempfile module to the job directory: /tmp itself is not
# writable here.)
#
# File rules match by path prefix: `r` is opening for read and listing a
# directory, `w` is every change to a file or directory entry. The most
# specific rule wins; at equal specificity deny wins; what no rule matches
# gets the category's default.

profile python-sandbox
mode enforce
# Deny by default for all three categories: file, exec and net.
default deny

# What every program and the Python interpreter need, read only.
include "abstractions/base"
include "abstractions/python"

# The job directory: the script, its inputs, its outputs, its temporary files.
allow file rw /tmp/job/**

# Secrets. The default already keeps these out of reach by path; naming them
# in deny rules also pins them by inode, so they stay denied when reached by
# another name (a hard link planted in /tmp/job, a bind mount, /proc/PID/root).
deny file rw /etc/shadow
deny file rw /etc/gshadow
deny file rw /etc/ssh/**
deny file rw /root/**
# Globs inside a path (/home/*/.ssh) are not supported: name each directory.
# /root/.ssh is inside /root/** already; it stays named so that relaxing the
# rule above cannot expose it.
deny file rw /root/.ssh/**

# Programs: the interpreter only (python3 is a symlink to it). No shell, no
# other binary, no memfd execution.
allow exec /usr/bin/python3.11

# Network: nothing, except this example of a local service on port 8080
# (localhost is 127.0.0.0/8 and ::1).
allow net connect tcp localhost:8080
