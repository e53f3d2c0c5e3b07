# SPDX-License-Identifier: GPL-2.0-only
# xputop — one `make` builds the monitor, the injection library and the BPF skeletons.
#
#   make                 build into $(OUTPUT) (default build/)
#   make STATIC=1        link libbpf, libelf, zlib and ncurses statically (libiberty
#                        always is)
#                        (a binary that also runs on other distributions, e.g. the GPU machine)
#   make SAN=1           build with AddressSanitizer + UndefinedBehaviorSanitizer
#   make VMLINUX_H=path  use this vmlinux.h instead of dumping the running kernel's BTF
#   make OUTPUT=dir      out-of-tree build
#   make deps            install the build and test dependencies (root; apt)
#   make check           deps + build + the whole test suite (root), then all of it
#                        again built with ASan + UBSan in $(OUTPUT)-san (tests/run:
#                        one suite or unit binary: tests/run build tests/cli/cli.sh)
#   make run ARGS=...    deps + build + start xputop (root)
#   make bench           build, then the CPU-side benchmarks against perf, bpftrace, top and
#                        addr2line (root; about 12 minutes; bench/RESULTS.md)
#   make install         install under PREFIX (default /usr/local); DESTDIR=dir stages it
#   make uninstall       remove what make install put there (same PREFIX and DESTDIR)

OUTPUT ?= build
override OUTPUT := $(patsubst %/,%,$(OUTPUT))
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
PKG_CONFIG ?= pkg-config
CUDA_HOME ?= /usr/local/cuda
VMLINUX_H ?=
# A build directory remembers how it was configured, so a later plain
# `make OUTPUT=dir ...` (the install test, a rebuild) keeps its sanitizers or
# static linking instead of rebuilding it half one way, half the other.
-include $(OUTPUT)/config.mk
STATIC ?= 0
SAN ?= 0
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(shell mkdir -p $(OUTPUT) && printf 'STATIC ?= %s\nSAN ?= %s\n' '$(STATIC)' '$(SAN)' > $(OUTPUT)/config.mk.tmp && \
	(cmp -s $(OUTPUT)/config.mk.tmp $(OUTPUT)/config.mk && rm -f $(OUTPUT)/config.mk.tmp || \
	 mv -f $(OUTPUT)/config.mk.tmp $(OUTPUT)/config.mk))
endif
VERSION := 0.1.0

# Where make install puts things.  XPU_LIBDIR and XPU_DATADIR are also
# compiled into xputop (core/util/install.c), which finds its injection library and
# themes there, or under DESTDIR when it runs from a staged copy.
PREFIX ?= /usr/local
override PREFIX := $(patsubst %/,%,$(PREFIX))
BINDIR ?= $(PREFIX)/sbin
XPU_LIBDIR ?= $(PREFIX)/lib/xputop
XPU_DATADIR ?= $(PREFIX)/share/xputop
MANDIR ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
ifeq ($(origin BASHCOMPDIR),undefined)
BASHCOMPDIR := $(shell $(PKG_CONFIG) --define-variable=prefix=$(PREFIX) --variable=completionsdir \
	bash-completion 2>/dev/null)
BASHCOMPDIR := $(or $(BASHCOMPDIR),$(PREFIX)/share/bash-completion/completions)
endif
DESTDIR ?=

ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

CFLAGS ?= -O2 -g
# core/ is one folder per stage of the pipeline and per service beside it
# (docs/architecture.md); each is on the include path, and tests/cli/layers.sh
# keeps who may include whom.
CORE_DIRS := util symbols stream models session sources outputs settings app
XCFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Iinject \
	-D_GNU_SOURCE -DXPU_VERSION='"$(VERSION)"' -MMD -MP -I$(OUTPUT) $(addprefix -Icore/,$(CORE_DIRS)) -Ibpf \
	-fno-omit-frame-pointer
LDFLAGS ?=

# The injection library is never sanitized: it runs inside other people's
# programs, which do not carry the sanitizers' runtime.
INJECT_CFLAGS := $(XCFLAGS)
ifeq ($(SAN),1)
XCFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined
SANLD := -fsanitize=address,undefined
endif

# Libraries are found through pkg-config.  A missing one stops any goal that
# builds, naming the package to install (make deps installs them all); deps,
# check and run install them first, clean and uninstall need none.
PKGS := libbpf libelf libdw zlib ncursesw libprotobuf-c $(if $(filter 1,$(STATIC)),,libmicrohttpd libcurl)
DEB_libbpf := libbpf-dev
DEB_libelf := libelf-dev
DEB_libdw := libdw-dev
DEB_zlib := zlib1g-dev
DEB_ncursesw := libncurses-dev
DEB_libmicrohttpd := libmicrohttpd-dev
DEB_libprotobuf-c := libprotobuf-c-dev protobuf-c-compiler
DEB_libcurl := libcurl4-openssl-dev
ifneq ($(filter-out deps check run clean uninstall,$(or $(MAKECMDGOALS),all)),)
ifeq ($(shell command -v $(PKG_CONFIG) 2>/dev/null),)
$(error xputop: $(PKG_CONFIG) is missing: run 'sudo make deps', or install pkg-config)
endif
MISSING_PKGS := $(strip $(foreach p,$(PKGS),$(if $(shell $(PKG_CONFIG) --exists $(p) && echo y),,$(p))))
ifneq ($(MISSING_PKGS),)
$(error xputop: pkg-config cannot find $(MISSING_PKGS): run 'sudo make deps', or install \
	$(foreach p,$(MISSING_PKGS),$(DEB_$(p))) (Debian/Ubuntu names))
endif
endif
# libiberty (the demangler binutils and gdb use) comes as a static library
# only, without a pkg-config file: it is looked for where the compiler looks.
LIBIBERTY_A := $(abspath $(shell $(CC) -print-file-name=libiberty.a))
ifneq ($(filter-out deps check run clean uninstall,$(or $(MAKECMDGOALS),all)),)
ifeq ($(wildcard $(LIBIBERTY_A)),)
$(error xputop: libiberty.a is missing: run 'sudo make deps', or install libiberty-dev (Debian/Ubuntu name))
endif
endif
XCFLAGS += $(shell $(PKG_CONFIG) --cflags libbpf libelf libdw zlib 2>/dev/null)
DW_LIBS := $(shell $(PKG_CONFIG) --libs libdw libelf zlib 2>/dev/null)

# libbpf is always linked statically: Debian's 1.1 is what the code is written
# against, and the binary must not depend on the version a target machine has.
LIBBPF_A := $(shell $(PKG_CONFIG) --variable=libdir libbpf 2>/dev/null)/libbpf.a
NCURSES_CFLAGS := $(shell $(PKG_CONFIG) --cflags ncursesw 2>/dev/null)
# The exporters' libraries (libmicrohttpd for --prometheus) come with TLS
# stacks that do not link statically: a STATIC=1 xputop is built without
# them, and its --prometheus says so.
ifeq ($(STATIC),1)
XCFLAGS += -DXPU_NO_EXPORTERS
EXPORT_LIBS := -Wl,-Bstatic -lprotobuf-c -Wl,-Bdynamic
LIBS := $(LIBBPF_A) $(LIBIBERTY_A) -Wl,-Bstatic -ldw -lelf -lz -llzma -lbz2 -lzstd -lncursesw -ltinfo -lprotobuf-c \
	-Wl,-Bdynamic -lm
else
EXPORT_LIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd libprotobuf-c libcurl 2>/dev/null)
LIBS := $(LIBBPF_A) $(LIBIBERTY_A) $(DW_LIBS) $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null) \
	$(EXPORT_LIBS) -lm
endif
# libstdc++: the symbolizer's tests resolve C++ names in it.
CORE_LIBS := $(LIBBPF_A) $(LIBIBERTY_A) $(DW_LIBS) $(EXPORT_LIBS) -llzma -lbz2 -lstdc++ -lm

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

# The program's own files (struct app, core/app/app.h): they start the TUI,
# so the core library, its tests and the fuzzers leave them out.
APP_SRCS := $(addprefix core/app/,main.c events.c loop.c outputs.c role.c start.c)
CORE_SRCS := $(filter-out $(APP_SRCS),$(foreach d,$(CORE_DIRS),$(wildcard core/$(d)/*.c)))
# pprof's profile.proto, compiled by protoc-c into $(OUTPUT)/profile.pb-c.[ch]
PROTO_C := $(OUTPUT)/profile.pb-c.c
PROTO_H := $(OUTPUT)/profile.pb-c.h
CORE_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(CORE_SRCS)) $(OUTPUT)/core/profile.pb-c.o
TUI_SRCS := $(wildcard tui/*.c)
TUI_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(TUI_SRCS))
APP_OBJS := $(patsubst %.c,$(OUTPUT)/%.o,$(APP_SRCS))
LIBCORE := $(OUTPUT)/libxpucore.a

INJECT_SRCS := $(wildcard inject/*.c)
INJECT_OBJS := $(patsubst %.c,$(OUTPUT)/%.pic.o,$(INJECT_SRCS))
INJECT_LIB := $(OUTPUT)/libxputop_inject.so
HAVE_CUPTI := $(shell test -f $(CUDA_HOME)/include/cupti.h && echo 1)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
# The injection library with CUPTI replaced by a stand-in, for GPU tests
# without a GPU.
FAKE_INJECT_LIB := $(OUTPUT)/tests/libxputop_inject_fake.so
FAKE_INJECT_OBJS := $(filter-out %/cupti.pic.o,$(INJECT_OBJS)) $(OUTPUT)/tests/fake_cupti.pic.o
# A stand-in CUDA runtime whose launch calls the driver, for the launch-only
# probes' nested-launch test (tests/fake/fake_cudart.c).
FAKE_CUDART := $(OUTPUT)/tests/fake_cudart/libcudart.so.13
# NVIDIA's management library replaced by a stand-in, as a current driver
# has it and as an old one (unversioned functions only) did.
FAKE_NVML_LIBS := $(OUTPUT)/tests/libfake_nvml.so $(OUTPUT)/tests/libfake_nvml_v1.so
# A stand-in libcupti.so.13 under the real injection library, and the
# program that drives both (tests/bpf/cupti.sh): with the CUDA toolkit's
# CUPTI headers only, like the library.
STAND_CUPTI := $(OUTPUT)/tests/stand/libcupti.so.13
PROG_SRCS := $(wildcard tests/progs/*.c)
ifneq ($(HAVE_CUPTI),1)
PROG_SRCS := $(filter-out tests/progs/cupti_standin.c,$(PROG_SRCS))
endif
PROG_BINS := $(patsubst tests/progs/%.c,$(OUTPUT)/tests/progs/%,$(PROG_SRCS))
# C++ ones: exceptions thrown through probed functions (tests/bpf/stitch.sh).
PROG_CXX_SRCS := $(wildcard tests/progs/*.cc)
PROG_BINS += $(patsubst tests/progs/%.cc,$(OUTPUT)/tests/progs/%,$(PROG_CXX_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))

PROGS := $(OUTPUT)/xputop
ifeq ($(HAVE_CUPTI),1)
PROGS += $(INJECT_LIB)
endif

COMPLETION := $(OUTPUT)/xputop.bash
UNIT := $(OUTPUT)/xputop.service
THEMES := $(wildcard themes/*.theme)

.PHONY: all tests check deps run clean bench fuzz install uninstall FORCE
.DELETE_ON_ERROR:
# Keep the BPF objects and skeletons: they are not throwaway intermediates.
.SECONDARY: $(BPF_OBJS) $(SKELS) $(OUTPUT)/vmlinux.h

all: $(PROGS) $(COMPLETION) $(UNIT) tests $(BENCH_BINS)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/core $(OUTPUT)/tui $(OUTPUT)/inject $(OUTPUT)/tests $(OUTPUT)/tests/progs \
		$(OUTPUT)/bench:
	@mkdir -p $@

# ---- BPF: vmlinux.h -> .bpf.o -> .skel.h ----
ifeq ($(VMLINUX_H),)
$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	@test -r /sys/kernel/btf/vmlinux || { echo "xputop: no kernel BTF at /sys/kernel/btf/vmlinux: build with VMLINUX_H=path/to/vmlinux.h" >&2; exit 1; }
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@
else
$(OUTPUT)/vmlinux.h: $(VMLINUX_H) | $(OUTPUT)
	cp $(VMLINUX_H) $@
endif

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)/bpf
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -Ibpf -MMD -MP -c $< -o $@
	$(LLVM_STRIP) -g $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@

# ---- user space ----
# The installation directories compiled into xputop, rewritten only when they
# change, so that a new PREFIX rebuilds just what uses them.
$(OUTPUT)/install_dirs.h: FORCE | $(OUTPUT)
	@printf '#define XPU_BINDIR "%s"\n#define XPU_LIBDIR "%s"\n#define XPU_DATADIR "%s"\n' \
		'$(BINDIR)' '$(XPU_LIBDIR)' '$(XPU_DATADIR)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
FORCE:
$(OUTPUT)/core/util/install.o $(OUTPUT)/fuzz/core/util/install.o: $(OUTPUT)/install_dirs.h

$(PROTO_C) $(PROTO_H): core/outputs/profile.proto | $(OUTPUT)
	protoc-c --c_out=$(OUTPUT) -Icore/outputs $<
$(OUTPUT)/core/profile.pb-c.o: $(PROTO_C) | $(OUTPUT)/core
	$(CC) $(CFLAGS) $(XCFLAGS) -c $< -o $@
$(OUTPUT)/core/outputs/pprof.o $(OUTPUT)/fuzz/core/outputs/pprof.o: $(PROTO_H)

$(OUTPUT)/core/%.o: core/%.c | $(OUTPUT)/core $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -c $< -o $@
# The program starts the TUI (tui/tui.h, which no curses type crosses).
$(APP_OBJS): XCFLAGS += -Itui

$(OUTPUT)/tui/%.o: tui/%.c | $(OUTPUT)/tui
	$(CC) $(CFLAGS) $(XCFLAGS) -Itui $(NCURSES_CFLAGS) -c $< -o $@

$(LIBCORE): $(CORE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(OUTPUT)/xputop: $(APP_OBJS) $(TUI_OBJS) $(LIBCORE)
	$(CC) $(CFLAGS) $(SANLD) $(LDFLAGS) $^ $(LIBS) -o $@

# ---- the CUPTI injection library (no libbpf, no ncurses) ----
$(OUTPUT)/inject/%.pic.o: inject/%.c | $(OUTPUT)/inject
	$(CC) $(CFLAGS) $(INJECT_CFLAGS) -fPIC -fvisibility=hidden -Iinject -I$(CUDA_HOME)/include -c $< -o $@

$(INJECT_LIB): $(INJECT_OBJS)
	$(CC) $(CFLAGS) -shared -Wl,-z,defs -Wl,--exclude-libs,ALL $^ -ldl -lpthread -o $@

# ---- benchmark tools, linked against the core (bench/run.sh runs them) ----
$(OUTPUT)/bench/%: bench/%.c $(LIBCORE) | $(OUTPUT)/bench
	$(CC) $(CFLAGS) $(XCFLAGS) $< $(LIBCORE) $(SANLD) $(CORE_LIBS) -o $@

bench: all
	bench/run.sh $(OUTPUT)

# ---- tests ----
tests: $(UNIT_BINS) $(PROG_BINS) $(FAKE_INJECT_LIB) $(FAKE_CUDART) $(FAKE_NVML_LIBS)
ifeq ($(HAVE_CUPTI),1)
tests: $(STAND_CUPTI)
endif

$(FAKE_CUDART): tests/fake/fake_cudart.c
	@mkdir -p $(@D)
	$(CC) -O0 -g -fno-omit-frame-pointer -fPIC -shared $< -ldl -o $@

$(OUTPUT)/tests/fake_cupti.pic.o: tests/fake/fake_cupti.c | $(OUTPUT)/tests
	$(CC) $(CFLAGS) $(INJECT_CFLAGS) -fPIC -fvisibility=hidden -Iinject -c $< -o $@

$(FAKE_INJECT_LIB): $(FAKE_INJECT_OBJS)
	$(CC) $(CFLAGS) -shared -Wl,-z,defs $^ -ldl -lpthread -o $@

# Never sanitized, like the library it serves; frame pointers and unwind
# tables kept, so that stacks taken in the library's callbacks cross it.
# CUPTI_LIB gives the headers' functions default visibility.
$(STAND_CUPTI): tests/fake/stand_cupti.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer -fPIC -shared \
		-fvisibility=hidden -DCUPTI_LIB -I$(CUDA_HOME)/include -Wl,-soname,libcupti.so.13 -Wl,-z,defs \
		$< -lpthread -o $@

$(OUTPUT)/tests/libfake_nvml.so: tests/fake/fake_nvml.c | $(OUTPUT)/tests
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -fvisibility=hidden -shared \
		-Wl,-z,defs $< -lpthread -o $@

$(OUTPUT)/tests/libfake_nvml_v1.so: tests/fake/fake_nvml.c | $(OUTPUT)/tests
	$(CC) $(CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -fvisibility=hidden -shared \
		-Wl,-z,defs -DFAKE_NVML_V1 $< -lpthread -o $@

$(OUTPUT)/tests/test_%: tests/unit/test_%.c tests/unit/check.h $(LIBCORE) | $(OUTPUT)/tests
	$(CC) $(CFLAGS) $(XCFLAGS) -Itests/unit -Iinject $< $(LIBCORE) $(SANLD) $(CORE_LIBS) -o $@

# Unit tests of the injection library compile its sources in (sanitized
# with SAN=1, unlike the library itself); CUPTI and the agent stay out.
INJECT_UNIT_SRCS := $(filter-out inject/cupti.c inject/inject.c,$(INJECT_SRCS))
$(OUTPUT)/tests/test_inject_%: tests/unit/test_inject_%.c tests/unit/check.h $(INJECT_UNIT_SRCS) | $(OUTPUT)/tests
	$(CC) $(CFLAGS) $(XCFLAGS) -Itests/unit -Iinject $< $(INJECT_UNIT_SRCS) $(SANLD) -ldl -lpthread -o $@

# The estimator's accuracy test samples with the library's own schedule.
$(OUTPUT)/tests/test_gpu_estimates: tests/unit/test_gpu_estimates.c tests/unit/check.h inject/sched.c $(LIBCORE) | $(OUTPUT)/tests
	$(CC) $(CFLAGS) $(XCFLAGS) -Itests/unit -Iinject $< inject/sched.c $(LIBCORE) $(SANLD) $(CORE_LIBS) -lm -o $@

# TUI unit tests link the front-end too (a shorter stem, so this rule wins).
$(OUTPUT)/tests/test_tui_%: tests/unit/test_tui_%.c tests/unit/check.h $(TUI_OBJS) $(LIBCORE) | $(OUTPUT)/tests
	$(CC) $(CFLAGS) $(XCFLAGS) -Itests/unit -Itui $(NCURSES_CFLAGS) $< $(TUI_OBJS) $(LIBCORE) \
		$(SANLD) $(LIBS) -o $@

# The own-time sampler's test (tests/bpf/own.sh): a stand-in for CUDA's
# code, named like CUPTI so the sampler counts it as CUDA's, and a driver of
# the sampler linked with the core.
OWN_CUDA := $(OUTPUT)/tests/own/libcupti.so.99
OWN_COUNTS := $(OUTPUT)/tests/own_counts
tests: $(OWN_CUDA) $(OWN_COUNTS)
$(OWN_CUDA): tests/fake/own_cuda.c
	@mkdir -p $(@D)
	$(CC) -O0 -g -fPIC -shared $< -o $@
$(OWN_COUNTS): tests/bpf/own_counts.c $(LIBCORE) | $(OUTPUT)/tests
	$(CC) $(CFLAGS) $(XCFLAGS) $< $(LIBCORE) $(SANLD) $(CORE_LIBS) -o $@

# Test programs keep frame pointers in every function (gcc 12 drops them in
# leaves at -O1 even with -mno-omit-leaf-frame-pointer) and their own names,
# so stack tests can look for them.
CUDART_LDFLAGS := -L$(CUDA_HOME)/lib64 -Wl,-rpath=$(CUDA_HOME)/lib64 -lcudart
$(OUTPUT)/tests/progs/%: tests/progs/%.c | $(OUTPUT)/tests/progs
	$(CC) -O0 -g -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -MMD -MP \
		-D_GNU_SOURCE -Ibpf -I$(CUDA_HOME)/include $< -o $@ \
		$(if $(findstring cuda,$*),$(CUDART_LDFLAGS)) -lpthread -ldl

$(OUTPUT)/tests/progs/%: tests/progs/%.cc | $(OUTPUT)/tests/progs
	$(CXX) -O0 -g -fno-omit-frame-pointer -fno-inline -MMD -MP -D_GNU_SOURCE $< -o $@ -ldl

# ---- fuzzing (libFuzzer; tests/fuzz/README.md) ----
# The core again, built by clang with coverage and ASan + UBSan, in its own
# directory; each tests/fuzz/fuzz_NAME.c links it into $(OUTPUT)/fuzz/fuzz_NAME.
# With STATIC=1 elfutils and the compression libraries are linked statically,
# so the fuzzers also run where they are not installed.
FUZZ_OUT := $(OUTPUT)/fuzz
# pointer-overflow is recoverable only so that tests/fuzz/ubsan.supp can hold
# back a known report; UBSAN_OPTIONS=halt_on_error=1 keeps every other fatal.
# These come after XCFLAGS, whose SAN=1 flags would make it fatal again.
FUZZ_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fsanitize-recover=pointer-overflow
FUZZ_CORE_OBJS := $(patsubst core/%.c,$(FUZZ_OUT)/core/%.o,$(CORE_SRCS))
FUZZ_LIBCORE := $(FUZZ_OUT)/libxpucore.a
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_OUT)/%,$(FUZZ_SRCS))
ifeq ($(STATIC),1)
FUZZ_LIBS := $(LIBBPF_A) $(LIBIBERTY_A) -Wl,-Bstatic -ldw -lelf -lz -llzma -lbz2 -lzstd -lprotobuf-c -Wl,-Bdynamic \
	-lstdc++ -lm
else
FUZZ_LIBS := $(CORE_LIBS)
endif

fuzz: $(FUZZ_BINS) $(FUZZ_OUT)/wire_seeds $(FUZZ_OUT)/nvml_seeds

$(FUZZ_OUT)/core/%.o: core/%.c | $(SKELS)
	@mkdir -p $(@D)
	$(CLANG) $(XCFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIBCORE): $(FUZZ_CORE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIBCORE)
	$(CLANG) $(XCFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Itests/fuzz $< $(FUZZ_LIBCORE) \
		$(FUZZ_LIBS) -o $@

# Writes the wire decoder's seeds with the injection library's own code.
$(FUZZ_OUT)/wire_seeds: tests/fuzz/wire_seeds.c core/sources/gpu_wire.c $(INJECT_UNIT_SRCS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(INJECT_CFLAGS) $^ -lpthread -o $@

# Writes fuzz_nvml's seeds with the NVML layer's own code.
$(FUZZ_OUT)/nvml_seeds: tests/fuzz/nvml_seeds.c $(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) $< $(LIBCORE) $(SANLD) $(CORE_LIBS) -o $@

# check and run install the dependencies first, then build in a fresh make so
# that pkg-config sees what was just installed.
# The fuzzers carry the sanitizers whatever the pass, so they are built and
# run once, in the first (40 s of fuzzing a harness).  tests/run says what
# else each pass leaves out.  Both run the suites in two lanes, with the
# quiet ones (CPU time, rates, memory) in a third of their own; the few
# checks of a rate or deadline allow for the sanitizers' cost (T_SLOW in
# tests/lib.sh).
NPROC := $(shell nproc 2> /dev/null || echo 2)
# The last lines say how long each part took and why anything failed: CI
# shows a run's end first.
check: deps
	@mkdir -p $(OUTPUT) && date +%s > $(OUTPUT)/check-t0
	$(MAKE) --no-print-directory -j$(NPROC) all fuzz
	$(MAKE) --no-print-directory -j$(NPROC) OUTPUT=$(OUTPUT)-san SAN=1 all
	@# Both passes run whatever the first gives; check fails if either failed.
	@t0=$$(cat $(OUTPUT)/check-t0); t1=$$(date +%s); \
	XPU_TEST_DIGEST=$(OUTPUT)/check.digest XPU_FUZZ_SECONDS=40 tests/run $(OUTPUT); plain=$$?; t2=$$(date +%s); \
	echo "== the same suite again, built with AddressSanitizer + UndefinedBehaviorSanitizer"; \
	XPU_TEST_DIGEST=$(OUTPUT)/check-san.digest XPU_FUZZ=0 tests/run $(OUTPUT)-san; san=$$?; t3=$$(date +%s); \
	echo "== make check: builds $$((t1 - t0)) s, plain pass $$((t2 - t1)) s, sanitizer pass $$((t3 - t2)) s"; \
	[ $$plain -eq 0 ] || echo "make check: the plain pass failed"; \
	[ $$san -eq 0 ] || echo "make check: the sanitizer pass failed"; \
	for d in check check-san; do [ -s $(OUTPUT)/$$d.digest ] && { echo "-- $$d:"; cat $(OUTPUT)/$$d.digest; }; done; \
	[ $$plain -eq 0 ] && [ $$san -eq 0 ]

deps:
	.ci/setup

# ---- install ----
# The bash completion: the options as the table of settings lists them
# (core/settings/settings_table.c), the columns --sort takes in each view,
# the directories and the themes installed with them.
$(COMPLETION): docs/completion/xputop.bash.in $(OUTPUT)/xputop $(OUTPUT)/install_dirs.h $(THEMES)
	$(OUTPUT)/xputop --list-options > $@.options
	$(OUTPUT)/xputop --list-sort-columns > $@.sort
	sed -e '/^@OPTIONS@$$/{r $@.options' -e 'd;}' -e '/^@SORT@$$/{r $@.sort' -e 'd;}' \
		-e 's|@BINDIR@|$(BINDIR)|' \
		-e 's|@DATADIR@|$(XPU_DATADIR)|' -e 's|@THEMES@|$(notdir $(THEMES:.theme=))|' $< > $@.tmp
	rm -f $@.options $@.sort
	mv -f $@.tmp $@

# The node agent's systemd unit (docs/node-agent.md), pointing at the
# installed xputop.
$(UNIT): docs/xputop.service.in $(OUTPUT)/install_dirs.h
	sed -e 's|@BINDIR@|$(BINDIR)|g' $< > $@.tmp
	mv -f $@.tmp $@

install: $(PROGS) $(COMPLETION) $(UNIT)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(XPU_LIBDIR) $(DESTDIR)$(XPU_DATADIR)/themes \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 755 $(OUTPUT)/xputop $(DESTDIR)$(BINDIR)/xputop
ifeq ($(HAVE_CUPTI),1)
	install -m 644 $(INJECT_LIB) $(DESTDIR)$(XPU_LIBDIR)/libxputop_inject.so
else
	@echo "xputop: no CUDA toolkit in $(CUDA_HOME) (CUDA_HOME=dir): the injection library is not" \
		"installed; the GPU view will show launches only" >&2
endif
	install -m 644 $(THEMES) $(DESTDIR)$(XPU_DATADIR)/themes/
	install -m 644 man/xputop.8 $(DESTDIR)$(MANDIR)/man8/xputop.8
	install -m 644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/xputop
	install -m 644 $(UNIT) $(DESTDIR)$(SYSTEMDUNITDIR)/xputop.service
	install -m 644 docs/grafana-dashboard.json $(DESTDIR)$(XPU_DATADIR)/grafana-dashboard.json

# Removes only what install put there, then xputop's own directories if
# nothing else is left in them.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/xputop $(DESTDIR)$(XPU_LIBDIR)/libxputop_inject.so \
		$(addprefix $(DESTDIR)$(XPU_DATADIR)/,$(THEMES)) $(DESTDIR)$(MANDIR)/man8/xputop.8 \
		$(DESTDIR)$(BASHCOMPDIR)/xputop $(DESTDIR)$(SYSTEMDUNITDIR)/xputop.service \
		$(DESTDIR)$(XPU_DATADIR)/grafana-dashboard.json
	@for d in $(DESTDIR)$(XPU_LIBDIR) $(DESTDIR)$(XPU_DATADIR)/themes $(DESTDIR)$(XPU_DATADIR); do \
		rmdir "$$d" 2> /dev/null || :; \
	done

run: deps
	$(MAKE) --no-print-directory $(PROGS)
	$(OUTPUT)/xputop $(ARGS)

clean:
	rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/*/*.d $(OUTPUT)/core/*/*.d $(OUTPUT)/tests/*.d $(OUTPUT)/tests/progs/*.d \
	$(OUTPUT)/fuzz/core/*/*.d)
