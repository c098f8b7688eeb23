# SPDX-License-Identifier: GPL-2.0-only
# bpfwarden build. Everything lands in $(BUILD); `make V=1` shows full commands.

BUILD ?= build
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
FUZZ_SECONDS ?= 20
PREFIX ?= /usr/local
# Where `make install` puts the node agent's systemd unit.
UNITDIR ?= $(PREFIX)/lib/systemd/system

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-format-truncation -Werror
CFLAGS += -D_GNU_SOURCE -Iinclude -Ipolicy -Iuser -Iuser/learn -Iuser/daemon -Ihook -I$(BUILD)
# The agent finds profiles/ at run time (user/libdir.c); only the unit tests,
# which run where they were built, name it at compile time.
UNIT_CFLAGS := -DBW_PROFILE_LIBDIR='"$(abspath profiles)"'
LIBBPF_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf) -lelf -lz
# libmount reads /proc/self/mountinfo for us (user/mounts.c).
CFLAGS += $(shell pkg-config --cflags mount 2>/dev/null)
MOUNT_LIBS := $(shell pkg-config --libs mount 2>/dev/null || echo -lmount)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)

# The version: VERSION, and the commit (".dirty" with uncommitted changes)
# when built from a git checkout; a tarball, which has no .git, gets VERSION.
GIT_REV := $(if $(wildcard .git),$(shell git rev-parse --short=12 HEAD 2>/dev/null))
GIT_DIRTY := $(if $(GIT_REV),$(shell git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo .dirty))
BW_VERSION := $(shell cat VERSION 2>/dev/null || echo unknown)$(if $(GIT_REV),+git.$(GIT_REV)$(GIT_DIRTY))

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -Wno-unused-function \
	-I$(BUILD) -Iinclude -Ibpf

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

POLICY_SRCS := $(wildcard policy/*.c)
POLICY_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(POLICY_SRCS))
USER_SRCS := $(wildcard user/*.c user/learn/*.c user/daemon/*.c)
USER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(USER_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(UNIT_SRCS))
# Agent objects the unit tests may exercise (pure C, no BPF calls made): the
# profile writer is user/learn/ but for its glue to the agent (agent.c).
UNIT_USER_OBJS := $(filter $(BUILD)/user/compile.o $(BUILD)/user/jsonw.o $(BUILD)/user/cgroup.o \
	$(BUILD)/user/mounts.o $(BUILD)/user/util.o $(BUILD)/user/cli.o $(BUILD)/user/cmd_check.o \
	$(BUILD)/user/pins.o $(BUILD)/user/positions.o $(BUILD)/user/bits.o $(BUILD)/user/event_line.o $(BUILD)/user/libdir.o \
	$(BUILD)/user/explain.o,$(USER_OBJS)) \
	$(filter-out $(BUILD)/user/learn/agent.o,$(filter $(BUILD)/user/learn/%.o,$(USER_OBJS)))
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPERS := $(patsubst tests/helpers/%.c,$(BUILD)/tests/%,$(HELPER_SRCS))
# Shared libraries the tests load (LD_PRELOAD, dlopen): tests/helpers/lib/X.c -> libX.so.
HELPER_LIB_SRCS := $(wildcard tests/helpers/lib/*.c)
HELPER_LIBS := $(patsubst tests/helpers/lib/%.c,$(BUILD)/tests/lib%.so,$(HELPER_LIB_SRCS))

AGENT := $(BUILD)/bpfwarden
# The runtime hook: small, no libbpf (hook/main.c); its codec, selection rules
# and JSON reader are the daemon's too.
HOOK_LIB_SRCS := hook/json.c hook/proto.c hook/select.c hook/runtime.c hook/cgid.c
HOOK_LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(HOOK_LIB_SRCS))
HOOK := $(BUILD)/bpfwarden-hook

# Man pages and the bash completion, made from the programs' own --help and
# from docs/ (tools/man.py; lowdown turns the Markdown into roff).
MAN_PAGES := $(BUILD)/man/bpfwarden.8 $(BUILD)/man/bpfwarden-hook.8 $(BUILD)/man/bpfwarden-profile.5
COMPLETION := $(BUILD)/completion/bpfwarden

.DELETE_ON_ERROR:
.SECONDARY: $(BPF_OBJS) $(SKELS)
.PHONY: FORCE all agent hook image deploytest helpers unit fuzz check hosttest vmtest vmtest-net checkouttest \
	test deps demo bench bench-tools install clean format vmlinux man packagetest

all: agent hook helpers

agent: $(AGENT)

hook: $(HOOK)

man: $(MAN_PAGES) $(COMPLETION)

$(MAN_PAGES) $(COMPLETION) &: $(AGENT) $(HOOK) tools/man.py $(wildcard docs/man/*.md) \
		docs/profile-language.md docs/operations.md
	$(call msg,MAN,$(BUILD)/man $(BUILD)/completion)
	$(Q)python3 tools/man.py $(AGENT) $(HOOK) $(BUILD)

deps:
	tools/install-deps.sh

$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# The identity hooks and the cgroup tracking set bitmap bits with atomic ORs
# (BPF ISA v3, kernels >= 5.12).
$(BUILD)/bpf/ident.bpf.o $(BUILD)/bpf/cgroup.bpf.o: BPF_CFLAGS += -mcpu=v3

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(BUILD)/policy/%.o: policy/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# Rewritten only when the version changes, so that it rebuilds only what includes it.
$(BUILD)/version.h: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)printf '#define BW_VERSION "%s"\n' '$(BW_VERSION)' > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/user/%.o: user/%.c | $(SKELS) $(BUILD)/version.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/hook/%.o: hook/%.c | $(BUILD)/version.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# Static: the DaemonSet copies it onto nodes whose C library is not the image's.
$(HOOK): $(BUILD)/hook/main.o $(HOOK_LIB_OBJS) $(BUILD)/user/jsonw.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -static $^ -lm -o $@

# The agent's container image, without a registry (deploy/image/build.py).
IMAGE := $(BUILD)/bpfwarden-image.tar
$(IMAGE): $(AGENT) $(HOOK) deploy/image/build.py deploy/image/install-hook.sh tools/oci.py
	$(call msg,IMAGE,$@)
	$(Q)/usr/bin/python3 deploy/image/build.py $(BUILD) $(shell cat VERSION) $@

image: $(IMAGE)

# The manifests against the Kubernetes schemas, strictly; their profiles checked.
deploytest: all $(IMAGE)
	$(call msg,TEST,deploy/)
	$(Q)tests/deploy/run.sh

$(BUILD)/libbwpolicy.a: $(POLICY_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(AGENT): $(USER_OBJS) $(HOOK_LIB_OBJS) $(BUILD)/libbwpolicy.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) $(MOUNT_LIBS) -lm -o $@

$(BUILD)/tests/unit/%.o: tests/unit/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(UNIT_CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/unit_tests: $(UNIT_OBJS) $(UNIT_USER_OBJS) $(HOOK_LIB_OBJS) $(BUILD)/libbwpolicy.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(CHECK_LIBS) $(MOUNT_LIBS) $(LIBBPF_LIBS) -o $@

# sysloop is static: the exec benchmark runs it again, and a dynamic program
# would time its libraries' opens and mappings over the guest's 9p root.
$(BUILD)/tests/%: tests/helpers/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -o $@ $(if $(findstring uring,$*),-luring) $(if $(filter sysloop,$*),-static)

$(BUILD)/tests/lib%.so: tests/helpers/lib/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -shared -fPIC $< -o $@

helpers: $(HELPERS) $(HELPER_LIBS)

# Host tests: need the right to create BPF maps, no BPF program.
TRIE_TEST := $(BUILD)/tests/trie_agrees
$(TRIE_TEST): tests/host/trie_agrees.c $(BUILD)/user/compile.o $(BUILD)/user/pins.o \
		$(BUILD)/user/positions.o $(BUILD)/user/bits.o $(BUILD)/user/mounts.o $(BUILD)/user/util.o \
		$(BUILD)/libbwpolicy.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) $(MOUNT_LIBS) -o $@

unit: $(BUILD)/tests/unit_tests
	$(call msg,TEST,unit)
	$(Q)BW_TEST_PROFILES=$(abspath tests/unit/profiles) BW_TEST_DOCS=$(abspath docs) \
		BW_TEST_FIXTURES=$(abspath tests/unit/fixtures) \
		$(BUILD)/tests/unit_tests
	$(call msg,TEST,the events schema against docs/events.md)
	$(Q)/usr/bin/python3 tests/unit/check_schema.py

# The compiler runs too, with its planning of pins (pure C: no libbpf called).
FUZZ_SRCS := tests/fuzz/fuzz_profile.c $(POLICY_SRCS) user/compile.c user/util.c
$(BUILD)/fuzz/fuzz_profile: $(FUZZ_SRCS) $(wildcard include/*.h policy/*.h user/*.h)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-D_GNU_SOURCE -Iinclude -Ipolicy -Iuser $(shell pkg-config --cflags mount 2>/dev/null) $(FUZZ_SRCS) $(LIBBPF_LIBS) $(MOUNT_LIBS) -o $@

# What the hook and the daemon read from a runtime and from each other.
FUZZ_HOOK_SRCS := tests/fuzz/fuzz_hook.c hook/json.c hook/proto.c hook/select.c hook/runtime.c
$(BUILD)/fuzz/fuzz_hook: $(FUZZ_HOOK_SRCS) $(wildcard hook/*.h)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-D_GNU_SOURCE -Ihook $(FUZZ_HOOK_SRCS) -lm -o $@

fuzz: $(BUILD)/fuzz/fuzz_profile $(BUILD)/fuzz/fuzz_hook
	$(call msg,FUZZ,profiles $(FUZZ_SECONDS)s)
	$(Q)mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/hook-corpus
	$(Q)$(BUILD)/fuzz/fuzz_profile -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
		-print_final_stats=0 $(BUILD)/fuzz/corpus tests/fuzz/seeds 2>$(BUILD)/fuzz/log || \
		{ tail -50 $(BUILD)/fuzz/log; exit 1; }
	$(Q)grep -E '^(#[0-9]+ *DONE|Done)' $(BUILD)/fuzz/log | tail -1
	$(call msg,FUZZ,the hook's readers $(FUZZ_SECONDS)s)
	$(Q)$(BUILD)/fuzz/fuzz_hook -max_total_time=$(FUZZ_SECONDS) -max_len=16384 \
		-print_final_stats=0 $(BUILD)/fuzz/hook-corpus tests/fuzz/hook-seeds \
		2>$(BUILD)/fuzz/hook-log || { tail -50 $(BUILD)/fuzz/hook-log; exit 1; }
	$(Q)grep -E '^(#[0-9]+ *DONE|Done)' $(BUILD)/fuzz/hook-log | tail -1

check: unit fuzz

# The network suite natively: the build host's kernel has no usable BPF LSM,
# so there the cgroup programs enforce network rules alone. The command-line
# suite too: there the agent must tell a missing capability from the kernel's
# refusal.
hosttest: all man $(TRIE_TEST)
	$(call msg,TEST,the man pages and the completion against --help)
	$(Q)/usr/bin/python3 tests/integration/test_man.py
	$(call msg,TEST,the kernel's LPM trie against the compiler's lookup)
	$(Q)$(TRIE_TEST)
	$(call msg,TEST,network rules on the host kernel $(shell uname -r))
	$(Q)/usr/bin/python3 tests/integration/test_net.py
	$(call msg,TEST,network doors on the host kernel $(shell uname -r))
	$(Q)/usr/bin/python3 tests/escape/test_netdoors.py
	$(call msg,TEST,the network verdict cache on the host kernel $(shell uname -r))
	$(Q)/usr/bin/python3 tests/escape/test_netcache.py
	$(call msg,TEST,the command line on the host kernel)
	$(Q)/usr/bin/python3 tests/integration/test_cli.py

vmtest: all image
	tools/vm/run-tests.sh

# The network-only tier on 6.1 and 6.12: guests booted without bpf in lsm=,
# as most distributions boot, running the suites hosttest runs natively.
vmtest-net: all image
	BW_VM_KARGS="lsm=lockdown,capability,landlock" BW_VM_SUITE=tests/integration/run-network.sh \
		BW_VM_TAG=net tools/vm/run-tests.sh --timeout 1200

# Fresh clones of this tree under /tmp, /var/tmp and $HOME, built and run
# there, on the host and in the guest (docs/testing.md).
checkouttest:
	tools/vm/test-checkout.sh

# The Debian package built, linted, unpacked and run in a guest on each kernel.
packagetest:
	tests/package/test-deb.sh

test: check hosttest deploytest vmtest vmtest-net checkouttest packagetest

demo: all
	tools/demo.sh

# The benchmark suite (tools/bench/run.sh, docs/performance.md): not a test.
# Its floor (tools/bench/floor.c): empty programs on the agent's hooks.
FLOOR := $(BUILD)/bench/floor
$(FLOOR): tools/bench/floor.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(LIBBPF_LIBS) -o $@

# Its event producer (tools/bench/evpace.c, for events.sh).
EVPACE := $(BUILD)/bench/evpace
$(EVPACE): tools/bench/evpace.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -o $@

bench-tools: $(FLOOR) $(EVPACE)

bench: all bench-tools
	tools/bench/run.sh

# The agent finds its profile library at $(PREFIX)/share/bpfwarden/profiles
# from $(PREFIX)/sbin (user/libdir.c).
# `bpfwarden selftest` finds its corpus there (user/cmd_selftest.c): the
# route tests and their Python harness.
SELFTEST_DIR = $(PREFIX)/share/bpfwarden/selftest
SELFTEST_FILES = $(wildcard tests/escape/*.py tools/vm/modload.sh) \
	$(filter-out tests/integration/test_%.py,$(wildcard tests/integration/*.py))
# The programs the corpus runs go to $(PREFIX)/libexec/bpfwarden/tests, where
# selftest looks for them: ELF files are not architecture-independent data.
SELFTEST_HELPERS = $(addprefix $(BUILD)/tests/,cgop dcroute fsop idroute mountop openhammer \
	libbwmark.so)
install: agent hook man $(SELFTEST_HELPERS)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -D -m 755 $(AGENT) $(DESTDIR)$(PREFIX)/sbin/bpfwarden
	$(Q)install -D -m 755 $(HOOK) $(DESTDIR)$(PREFIX)/sbin/bpfwarden-hook
	$(Q)for f in $(MAN_PAGES); do \
		install -D -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man$${f##*.}/$${f##*/} || exit 1; done
	$(Q)install -D -m 644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/bpfwarden
	$(Q)mkdir -p $(DESTDIR)$(UNITDIR)
	$(Q)sed 's|/usr/local/sbin/|$(PREFIX)/sbin/|g' deploy/systemd/bpfwarden.service \
		>$(DESTDIR)$(UNITDIR)/bpfwarden.service
	$(Q)cd profiles && find . -type f -exec install -D -m 644 {} \
		$(DESTDIR)$(PREFIX)/share/bpfwarden/profiles/{} \;
	$(Q)install -D -m 644 deploy/prometheus/bpfwarden.rules.yml \
		$(DESTDIR)$(PREFIX)/share/bpfwarden/prometheus/bpfwarden.rules.yml
	$(Q)install -D -m 644 deploy/logrotate/bpfwarden \
		$(DESTDIR)$(PREFIX)/share/bpfwarden/logrotate/bpfwarden
	$(call msg,INSTALL,$(DESTDIR)$(SELFTEST_DIR) (the escape corpus of bpfwarden selftest))
	$(Q)for f in $(SELFTEST_FILES); do \
		install -D -m $$(test -x $$f && echo 755 || echo 644) $$f \
			$(DESTDIR)$(SELFTEST_DIR)/$$f || exit 1; done
	$(Q)for f in $(SELFTEST_HELPERS); do \
		install -D -m $$(case $$f in *.so) echo 644;; *) echo 755;; esac) $$f \
			$(DESTDIR)$(PREFIX)/libexec/bpfwarden/tests/$${f##*/} || exit 1; done

format:
	clang-format -i $(wildcard hook/*.c hook/*.h include/*.h bpf/*.c bpf/*.h user/*.c user/*.h user/learn/*.c user/learn/*.h user/daemon/*.c user/daemon/*.h policy/*.c policy/*.h tests/unit/*.c tests/helpers/*.c tests/helpers/lib/*.c tests/fuzz/*.c tests/host/*.c tools/bench/*.c)

clean:
	rm -rf $(BUILD)

-include $(wildcard $(BUILD)/*/*.d $(BUILD)/*/*/*.d)
