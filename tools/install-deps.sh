#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs everything bpfwarden needs to build and test on a fresh Debian 12
# machine, adding the bookworm-backports source for libbpf 1.4 and bpftool 7.5.
# git: `make test` clones the checkout elsewhere (tools/vm/test-checkout.sh);
# a minimal Debian 12 does not have it.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root (apt-get)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
list=/etc/apt/sources.list.d/bookworm-backports.list
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo 'deb http://deb.debian.org/debian bookworm-backports main' >"$list"
fi
apt-get update -qq

apt-get install -y -qq -t bookworm-backports libbpf-dev bpftool >/dev/null
apt-get install -y -qq \
	make gcc clang llvm pkg-config libelf-dev zlib1g-dev check libsubunit-dev \
	libclang-rt-14-dev qemu-system-x86 busybox-static cpio xz-utils kmod \
	python3 iproute2 zstd util-linux mount libmount-dev liburing-dev libseccomp2 python3-yaml git \
	python3-jsonschema >/dev/null
# The man pages and the completion are made from --help and docs/ (tools/man.py:
# lowdown turns Markdown into roff); man-db and groff render them in the tests.
apt-get install -y -qq --no-install-recommends lowdown man-db groff-base bash-completion >/dev/null
# The Debian package (debian/, tests/package/test-deb.sh): built and linted.
apt-get install -y -qq --no-install-recommends debhelper dpkg-dev lintian >/dev/null
# The image built from that package (deploy/image/Containerfile,
# tests/package/test-image.sh): a Debian base made by mmdebstrap from the
# archive, built and run by podman with runc (crun refuses this machine's
# mixed cgroup v1 and v2 mounts). With their recommends, as tested.
apt-get install -y -qq podman runc mmdebstrap >/dev/null
# promtool checks the daemon's metrics text (tests/k8s/) and the alerting rules
# (tests/deploy/); the server itself is not used. logrotate runs the shipped
# configuration against a daemon (tests/deploy/).
# apparmor_parser and aa-exec: AppArmor, a peer in the benchmarks (tools/bench/file-open.sh).
apt-get install -y -qq --no-install-recommends prometheus apparmor logrotate >/dev/null
# PostgreSQL 15, Redis 7 and nginx, real services learned and enforced in the guest
# (tests/integration/test_services.py runs its own server of each, as their users
# postgres and redis, on unix sockets in its scratch directory); no cluster of
# PostgreSQL's own. Where the machine starts services on install, redis-server's
# listens on 6379 of the host; the tests never reach it.
mkdir -p /etc/postgresql-common
if ! grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf; then
	echo 'create_main_cluster = false' >>/etc/postgresql-common/createcluster.conf
fi
apt-get install -y -qq --no-install-recommends postgresql-15 redis-server >/dev/null
# nginx, learned and enforced the same way with a configuration of the test's own
# (a port of 127.0.0.1 and a document root in the scratch directory). Where the
# machine starts services on install, Debian's site listens on port 80; the test
# never reaches it.
apt-get install -y -qq --no-install-recommends nginx >/dev/null
# CPython's own test suite (test_os, test_shutil, ...), learned and enforced in the
# guest (tests/integration/test_services.py) as the workload of a Python job.
apt-get install -y -qq --no-install-recommends libpython3.11-testsuite >/dev/null
# The Kubernetes node tests' stand-in for kubelet is a Node program (tests/k8s/cri.js),
# and the manifest checks (tests/deploy/) run on Node too. A Node of the machine's own
# (these machines have Node 20 with its npm) is kept; else Debian's (Node 18, npm 9).
# tools/vm/fetch-containers.sh installs the modules (@grpc/grpc-js, kubernetes-models,
# tests/k8s/package-lock.json) with npm ci from the npm registry.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	apt-get install -y -qq nodejs npm >/dev/null
fi
echo "install-deps: done (libbpf $(pkg-config --modversion libbpf), $(bpftool version | head -1))"
