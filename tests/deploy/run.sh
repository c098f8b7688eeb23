#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# deploy/ checked on the build host (`make deploytest`):
#   - the manifests against the Kubernetes schemas and strictly (validate.mjs),
#     and a manifest with unknown fields must fail that;
#   - the ConfigMap's profiles equal deploy/kubernetes/profiles/ and pass
#     `bpfwarden check`;
#   - install-hook.sh on a scratch node tree: the hook, hooks.d, NRI conf;
#   - the systemd unit with `systemd-analyze verify`;
#   - the image's files against the Debian packages it lists (check-image.py);
#   - the Prometheus alerting rules with promtool (checked and unit-tested);
#   - the logrotate configuration, run by logrotate against a running daemon.
# The Node modules come from tools/vm/fetch-containers.sh's cache.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BW_BUILD:-build}
CACHE=${BW_VM_CACHE:-/var/cache/bpfwarden-vm}
MODULES=$CACHE/containers/node/node_modules
passed=0 failed=0 skipped=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
skip() { echo "skip $1"; skipped=$((skipped + 1)); }

tools/vm/fetch-containers.sh --quiet >/dev/null || { echo "deploytest: cannot fetch the Node modules"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if node tests/deploy/validate.mjs "$MODULES" deploy/kubernetes/*.yaml >"$tmp/v" 2>&1; then
	ok "manifests: Kubernetes schemas and no unknown field ($(tail -1 "$tmp/v"))"
else
	cat "$tmp/v"
	fail "manifests"
fi
if node tests/deploy/validate.mjs "$MODULES" tests/deploy/bad.yaml >"$tmp/b" 2>&1; then
	fail "a manifest with unknown fields passed the strict check"
elif grep -q '"hostPid"' "$tmp/b" && grep -q '"capabilites"' "$tmp/b"; then
	ok "a manifest with hostPid and a misspelt field is refused"
else
	cat "$tmp/b"
	fail "the bad manifest failed for another reason"
fi

# The ConfigMap's profiles, as the daemon will read them.
mkdir "$tmp/cm"
/usr/bin/python3 - "$tmp/cm" deploy/kubernetes/bpfwarden.yaml <<'PY'
import sys, yaml
out = sys.argv[1]
for doc in yaml.safe_load_all(open(sys.argv[2])):
    if doc and doc.get("kind") == "ConfigMap" and doc["metadata"]["name"] == "bpfwarden-profiles":
        for name, text in doc["data"].items():
            open("%s/%s" % (out, name), "w").write(text)
PY
if diff -r "$tmp/cm" deploy/kubernetes/profiles >"$tmp/d"; then
	ok "the ConfigMap holds deploy/kubernetes/profiles/"
else
	cat "$tmp/d"
	fail "the ConfigMap and deploy/kubernetes/profiles/ differ"
fi
if "$BUILD/bpfwarden" check "$tmp"/cm/*.profile >"$tmp/c" 2>&1; then
	ok "bpfwarden check of the ConfigMap's profiles ($(ls "$tmp"/cm | wc -l) files)"
else
	cat "$tmp/c"
	fail "bpfwarden check of the ConfigMap's profiles"
fi

# The init container's script on a node tree made here.
node=$tmp/node
mkdir -p "$node/opt/bpfwarden/bin" "$node/opt/nri/bin" "$node/etc/nri" "$node/etc/containers/oci/hooks.d" \
	"$node/usr/share/containers/oci/hooks.d"
if BW_HOOK_BIN=$BUILD/bpfwarden-hook deploy/image/install-hook.sh "$node" >"$tmp/i" 2>&1 &&
	cmp -s "$BUILD/bpfwarden-hook" "$node/opt/bpfwarden/bin/bpfwarden-hook" &&
	/usr/bin/python3 -c 'import json,sys; n=json.load(open(sys.argv[1])); assert n["plugins"]==[{"type":"bpfwarden-hook"}]
for f in sys.argv[2:]:
    h=json.load(open(f)); assert h["stages"]==["createRuntime"] and h["hook"]["path"]=="/opt/bpfwarden/bin/bpfwarden-hook"' \
		"$node/etc/nri/conf.json" "$node/etc/containers/oci/hooks.d/bpfwarden.json" \
		"$node/usr/share/containers/oci/hooks.d/bpfwarden.json" &&
	[ "$(readlink "$node/opt/nri/bin/bpfwarden-hook")" = /opt/bpfwarden/bin/bpfwarden-hook ] &&
	grep -q base_runtime_spec "$tmp/i"; then
	ok "install-hook.sh: the hook, hooks.d, NRI v0.1, the containerd change printed"
else
	cat "$tmp/i"
	fail "install-hook.sh"
fi
# A foreign NRI configuration is left alone.
echo '{"version": "0.1", "plugins": [{"type": "other"}]}' >"$node/etc/nri/conf.json"
if BW_HOOK_BIN=$BUILD/bpfwarden-hook deploy/image/install-hook.sh "$node" >"$tmp/i" 2>&1 &&
	grep -q '"other"' "$node/etc/nri/conf.json" && ! grep -q bpfwarden "$node/etc/nri/conf.json" &&
	grep -q "add {" "$tmp/i"; then
	ok "install-hook.sh leaves another NRI configuration as it is and says what to add"
else
	cat "$tmp/i"
	fail "install-hook.sh with another NRI configuration"
fi

if command -v systemd-analyze >/dev/null; then
	sed "s#/usr/local/sbin/bpfwarden#$(realpath "$BUILD")/bpfwarden#" deploy/systemd/bpfwarden.service >"$tmp/bpfwarden.service"
	if systemd-analyze verify "$tmp/bpfwarden.service" >"$tmp/s" 2>&1 && ! [ -s "$tmp/s" ]; then
		ok "systemd-analyze verify deploy/systemd/bpfwarden.service"
	else
		cat "$tmp/s"
		fail "systemd-analyze verify deploy/systemd/bpfwarden.service"
	fi
	# The hardening: an exposure of at most 4.0 (what the unit's comments claim).
	if systemd-analyze security --offline=yes --threshold=40 "$tmp/bpfwarden.service" >"$tmp/s" 2>&1; then
		ok "systemd-analyze security: $(grep -o 'exposure level.*' "$tmp/s")"
	else
		tail -3 "$tmp/s"
		fail "systemd-analyze security: over 4.0"
	fi
else
	skip "deploy/systemd/bpfwarden.service: no systemd-analyze here"
fi
# The image as a scanner reads it: each ELF file of a listed Debian package.
if /usr/bin/python3 tests/deploy/check-image.py "$BUILD/bpfwarden-image.tar" >"$tmp/img" 2>&1; then
	ok "make image: $(tail -1 "$tmp/img")"
else
	cat "$tmp/img"
	fail "make image: the packages of its files"
fi

# The alerting rules: valid, and each fires on what it should and only then.
if promtool check rules deploy/prometheus/bpfwarden.rules.yml >"$tmp/p" 2>&1 &&
	(cd tests/deploy && promtool test rules bpfwarden.rules.test.yml) >>"$tmp/p" 2>&1; then
	ok "promtool: deploy/prometheus/bpfwarden.rules.yml checked and its unit tests pass"
else
	cat "$tmp/p"
	fail "promtool: deploy/prometheus/bpfwarden.rules.yml"
fi

# The shipped logrotate configuration against a running daemon (the network
# programs load on this kernel): the old log renamed whole, the reopened one
# written from the SIGHUP on.
lr=$tmp/lr
mkdir -p "$lr/pol"
printf 'profile lr\ndefault allow\nmatch cgroup=bwtest-nothing-*\n' >"$lr/pol/lr.profile"
"$BUILD/bpfwarden" daemon --policy-dir "$lr/pol" --log "$lr/audit.log" --socket "$lr/hook.sock" \
	2>"$lr/err" &
pid=$!
for _ in $(seq 300); do
	grep -qs "daemon started" "$lr/audit.log" && break
	sleep 0.2
done
sed -e "s#/var/log/bpfwarden/audit.log#$lr/audit.log#" \
	-e "s#systemctl reload bpfwarden.service#kill -HUP $pid#" deploy/logrotate/bpfwarden >"$lr/conf"
logrotate -f -s "$lr/state" "$lr/conf" >"$lr/out" 2>&1
for _ in $(seq 100); do
	grep -qs "log reopened on SIGHUP" "$lr/audit.log" && break
	sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
rc=$?
if grep -q "kill -HUP $pid" "$lr/conf" && grep -q "daemon started" "$lr/audit.log.1" &&
	! grep -q "log reopened" "$lr/audit.log.1" && grep -q "log reopened on SIGHUP" "$lr/audit.log" &&
	grep -q "daemon stopping" "$lr/audit.log" && ! grep -q "daemon started" "$lr/audit.log" &&
	[ "$rc" = 0 ] && [ "$(stat -c %a "$lr/audit.log")" = 600 ]; then
	ok "logrotate with deploy/logrotate/bpfwarden: the daemon's log rotated whole, reopened on SIGHUP"
else
	cat "$lr/err" "$lr/out"
	ls -l "$lr"
	fail "logrotate with deploy/logrotate/bpfwarden (daemon exit $rc)"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
