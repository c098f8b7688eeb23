# c_build: what tools/bench/workloads.sh needs to compile C files with gcc in
# /tmp/bench-src (the compiler, its headers, temporary files), and nothing else.
profile c_build
default deny
include "abstractions/base"
include "abstractions/shell"

allow file r /usr/bin/gcc-12
allow file r /usr/bin/x86_64-linux-gnu-gcc-12
allow exec /usr/bin/x86_64-linux-gnu-gcc-12
allow file r /usr/bin/x86_64-linux-gnu-as
allow exec /usr/bin/x86_64-linux-gnu-as
allow file r /usr/lib/gcc/**
allow exec /usr/lib/gcc/**
allow file r /usr/include/**
allow file r /usr/lib/linux/**
allow file r /usr/local/include/**
allow file rw /tmp/**
allow file r /proc/stat

deny file rw /etc/shadow
