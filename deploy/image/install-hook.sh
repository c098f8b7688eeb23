#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# install-hook.sh HOST: the DaemonSet's init container. Installs
# bpfwarden-hook (a static binary) on the node, mounted at HOST, and
# registers it with the runtimes that read hooks from files:
#
#   CRI-O, podman   HOST/usr/share/containers/oci/hooks.d/bpfwarden.json and
#                   HOST/etc/containers/oci/hooks.d/bpfwarden.json (createRuntime)
#   containerd 1.6  HOST/etc/nri/conf.json (NRI v0.1), HOST/opt/nri/bin/bpfwarden-hook
#
# It never restarts a runtime. For containerd without NRI, it prints the
# base_runtime_spec change that calls the hook as an OCI hook instead.
set -eu

host=${1:?usage: install-hook.sh HOST}
hook=/opt/bpfwarden/bin/bpfwarden-hook

cp "${BW_HOOK_BIN:-/usr/bin/bpfwarden-hook}" "$host$hook.new"
chmod 0755 "$host$hook.new"
mv "$host$hook.new" "$host$hook"
echo "install-hook: $hook installed"

# podman 4.3 (containers-common 0.50) and CRI-O read /usr/share's directory
# by default, later podman both (a file in /etc overrides one of the same
# name in /usr/share): written to each that the node has.
for dir in /usr/share/containers/oci/hooks.d /etc/containers/oci/hooks.d; do
	[ -d "$host$dir" ] || continue
	cat >"$host$dir/bpfwarden.json.new" <<JSON
{
  "version": "1.0.0",
  "hook": {"path": "$hook", "args": ["bpfwarden-hook"], "timeout": 30},
  "when": {"always": true},
  "stages": ["createRuntime"]
}
JSON
	mv "$host$dir/bpfwarden.json.new" "$host$dir/bpfwarden.json"
	echo "install-hook: CRI-O/podman hook $dir/bpfwarden.json written"
done

if [ -d "$host/opt/nri/bin" ] && [ -d "$host/etc/nri" ]; then
	ln -sf "$hook" "$host/opt/nri/bin/bpfwarden-hook"
	conf=$host/etc/nri/conf.json
	if [ ! -e "$conf" ]; then
		echo '{"version": "0.1", "plugins": [{"type": "bpfwarden-hook"}]}' >"$conf.new"
		mv "$conf.new" "$conf"
		echo "install-hook: NRI v0.1 plugin registered in /etc/nri/conf.json"
	elif grep -q '"bpfwarden-hook"' "$conf"; then
		echo "install-hook: /etc/nri/conf.json lists bpfwarden-hook already"
	else
		echo "install-hook: /etc/nri/conf.json exists and does not list bpfwarden-hook:"
		echo "install-hook: add {\"type\": \"bpfwarden-hook\"} to its \"plugins\" yourself"
	fi
fi

cat <<TEXT
install-hook: containerd can call the hook as an OCI createRuntime hook instead
install-hook: of NRI (not applied here; it takes a containerd restart):
install-hook:   ctr oci spec > /etc/containerd/bpfwarden-spec.json, add to it
install-hook:     "hooks": {"createRuntime": [{"path": "$hook", "args": ["bpfwarden-hook"], "timeout": 30}]}
install-hook:   and in /etc/containerd/config.toml, for each runtime:
install-hook:     [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
install-hook:       base_runtime_spec = "/etc/containerd/bpfwarden-spec.json"
install-hook:       pod_annotations = ["bpfwarden.io/*"]
TEXT
