profile python-sandbox
mode enforce
default deny file
default deny exec
default allow net
on-deny log
match namespace=ci pod=runner-* container=job
include "abstractions/net"
include "common"
allow file r   /usr/lib/python3/**
allow file rw  /tmp/job/**
deny  file rw  /etc/shadow
allow file wr  "/tmp/with space/\"q\"\\"
allow exec     /usr/bin/python3.11
allow exec memfd
allow net connect tcp 127.0.0.1:8080
allow net connect udp 10.0.0.0/8:53
allow net connect tcp [::1]:8000-8100
deny  net connect tcp 169.254.169.254:*
allow net connect unix /run/app.sock
allow net connect unix @abstract-name
allow net bind tcp 0.0.0.0:9000
allow net bind udp *:*
deny net connect tcp [::ffff:10.0.0.0/104]:1-2
allow mount
deny chroot
allow userns
deny userns
