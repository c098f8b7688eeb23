# http-demo: the profile of http-demo.service (same directory), for the
# node agent's policy directory. The daemon governs the unit's cgroup from
# the first exec systemd makes in it; nothing in the unit file changes.
#
# Python's http.server, serving /srv/http-demo read-only on 127.0.0.1:8080.
# A compromised handler can neither read the host's secrets nor write
# anything, run a program or connect anywhere.

profile http-demo
mode enforce
default deny

include "abstractions/base"
include "abstractions/python"

# What it serves, and what it reads to name files' types (mimetypes) and
# its own address (socket.getfqdn at bind: the resolver's files; localhost
# is in /etc/hosts, so no DNS query is made).
allow file r /srv/http-demo/**
allow file r /etc/mime.types
allow file r /etc/hosts
allow file r /etc/host.conf
allow file r /etc/resolv.conf
allow file r /etc/gai.conf

# Deny rules pin the objects by inode: another name for them (a hard link
# put into /srv/http-demo, a bind mount) is denied too.
deny file rw /etc/shadow
deny file rw /etc/gshadow
deny file rw /etc/ssh/**
deny file rw /root/**

# The interpreter, and nothing else.
allow exec /usr/bin/python3.11

# Its listening socket; no connect rule: it reaches nothing.
allow net bind tcp 127.0.0.1:8080

# The unit's cgroup (systemd's path below the cgroup2 mount).
match cgroup=/system.slice/http-demo.service
