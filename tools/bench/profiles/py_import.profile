# py_import: the shipped python-sandbox's rules (profiles/python-sandbox.profile)
# for tools/bench/workloads.sh's import run, which also reads /proc/stat.
profile py_import
default deny
include "abstractions/base"
include "abstractions/python"
allow file rw /tmp/job/**
deny file rw /etc/shadow
deny file rw /etc/gshadow
deny file rw /etc/ssh/**
deny file rw /root/**
deny file rw /root/.ssh/**
allow exec /usr/bin/python3.11
allow file r /proc/stat
