# mlsetup - build, check, release.
#
#   make            build/mlsetup (optimized, with debug info)
#   make check      AddressSanitizer/UBSan build + shims + all unit and CLI
#                   tests; ends with "N passed, N failed, N skipped"
#   make shims      fake libnvidia-ml.so.1 / libcuda.so.1 into build/shims/
#   make shims-windows  the same as nvml.dll / nvcuda.dll, and win_probe.exe,
#                   into build/shims-windows/ (zig; not part of check)
#   make launchers  the Windows script launchers into build/launcher/ (zig)
#   make fuzz       build the libFuzzer targets into build/fuzz/ (clang)
#   make fuzz-smoke each fuzz target for a few seconds on its corpus (CI)
#   make fuzz-long  every fuzz target, one CPU-hour in all (FUZZ_SECONDS per
#                   target): executions and findings per target
#   make valgrind   run the detect CLI tests' commands under valgrind
#   make check-windows  the unit tests built for x86_64-windows-gnu (zig,
#                   the Windows release objects and libraries) and the
#                   platform/windows/ smoke test, under wine
#                   (tests/windows/run.sh); ends with "N passed, N failed,
#                   N skipped"
#   make torch-builds  regenerate manifests/torch-builds.json (package index)
#   make e2e-matrix every torch release from 2.6.0 x GPU classes sm_70..sm_121:
#                   mlsetup audit against cuobjdump (tests/e2e/matrix.py;
#                   network; MATRIX_FLAGS="--store DIR" keeps the wheels)
#   make release    dist/: mlsetup-x86_64-linux-gnu, mlsetup-aarch64-linux-gnu
#                   (zig, glibc 2.17, static libraries from Debian's sources),
#                   mlsetup-x86_64-windows-gnu.exe (zig, UCRT, fully static),
#                   install.sh, install.ps1, SHA256SUMS; RELEASE_URL=URL names
#                   the release in install.sh and install.ps1. See
#                   packaging/release/.
#   make release-check  the CLI suite against the x86_64 release binary, the
#                   glibc 2.17 / NEEDED checks, the aarch64 binary under
#                   qemu-user, then check-windows, where a missing wine
#                   or zig fails (tools: packaging/release-deps.sh)
#   make clean
#
# Dependencies come from the distribution (packaging/deps.sh) and are found
# with pkg-config; the release build makes its own (packaging/release/).

CC      ?= cc
PKGS    := libcurl libarchive openssl libcjson libgit2 libzstd liblz4 libdeflate libutf8proc zlib
TESTPKGS := cmocka
PKG_CONFIG ?= pkg-config

# Package name hints for the "missing dependency" message.
hint_libcurl    := libcurl4-openssl-dev / libcurl-devel
hint_libarchive := libarchive-dev / libarchive-devel
hint_openssl    := libssl-dev / openssl-devel
hint_libcjson   := libcjson-dev / cjson-devel
hint_libgit2    := libgit2-dev / libgit2-devel
hint_libzstd    := libzstd-dev / libzstd-devel
hint_liblz4     := liblz4-dev / lz4-devel
hint_libdeflate := libdeflate-dev / libdeflate-devel
hint_libutf8proc := libutf8proc-dev / utf8proc-devel
hint_zlib       := zlib1g-dev / zlib-devel
hint_cmocka     := libcmocka-dev / libcmocka-devel

define check_pkg
$(if $(shell $(PKG_CONFIG) --exists $(1) && echo yes),,$(error missing dependency '$(1)' (Debian / Fedora package: $(hint_$(1))); run packaging/deps.sh))
endef

ifeq ($(filter clean release release-bins,$(MAKECMDGOALS)),)
$(foreach p,$(PKGS),$(call check_pkg,$(p)))
endif

DEP_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
DEP_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -ldl -lpthread

GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -Iinclude $(WARN) $(DEP_CFLAGS) -DML_GIT_COMMIT='"$(GIT_COMMIT)"'
CFLAGS  ?= -O2 -g
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

PLATFORM_SRC := platform/linux/os.c platform/os_common.c platform/random.c
LIB_SRC := $(sort $(wildcard src/core/*.c src/detect/*.c src/pkg/*.c src/plan/*.c src/fetch/*.c \
	src/env/*.c src/verify/*.c src/report/*.c src/install/*.c) $(PLATFORM_SRC))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
HDRS    := $(wildcard include/mlsetup/*.h src/*/*.h platform/*.h)

# Shipped manifests, interpreter pins, selection rules, the CUDA toolkit ->
# minimum driver table and the table of known torch builds, compiled in.
EMBED_FILES := $(sort $(wildcard manifests/*.txt manifests/windows/*.txt)) manifests/python.json \
	manifests/selection.json \
	manifests/drivers.json manifests/torch-builds.json manifests/cuda-libraries.json \
	manifests/torch-index.json manifests/resolver.json
GEN_SRC := build/gen/embedded.c
LIB_SRC += $(GEN_SRC)

# The smoke tests' code, compiled in as well: the kernel image, its portable
# PTX and their description (src/verify/make_kernel_image.sh writes them from
# saxpy.cu; building needs no CUDA toolkit) and the torch smoke script.
EMBED_FILES += src/verify/saxpy.fatbin src/verify/saxpy_portable.ptx src/verify/saxpy.desc \
	src/verify/torch_smoke.py

# The install script `mlsetup bundle` writes into every bundle.
EMBED_FILES += packaging/bundle-install.sh

REL_OBJ  := $(patsubst %.c,build/obj/%.o,$(LIB_SRC) $(CLI_SRC))
SAN_LIB_OBJ := $(patsubst %.c,build/asan/obj/%.o,$(LIB_SRC))
SAN_CLI_OBJ := $(patsubst %.c,build/asan/obj/%.o,$(CLI_SRC))

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,build/asan/tests/%,$(UNIT_SRC))

# The release build's cache (packaging/release/lib.sh): its pinned zig builds
# the Windows programs below.
REL_CACHE := $(or $(MLSETUP_RELEASE_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mlsetup-release)
ZIG_VERSION := $(shell sed -n 's/^ziglang==\([0-9][0-9.]*\).*/\1/p' packaging/release/zig.txt | head -n 1)
ZIG_CACHED := $(wildcard $(REL_CACHE)/zig/$(ZIG_VERSION)/ziglang/zig)

# Windows script launchers (platform/windows/launcher/launcher.c, a
# program of its own; src/env/winlauncher.c appends a script to one). Built
# with zig, without the C runtime. Only the Windows mlsetup.exe embeds them (its embedded files add $(LAUNCHERS)): a
# Linux mlsetup never lays out a Windows environment, so the Linux build
# needs no zig. `make check` builds them, the stub interpreter and
# mkwinlauncher for tests/cli/t0921 when the pinned zig is already in the
# release cache (sh packaging/release/toolchain.sh puts it there); without
# it t0921 says so and skips.
LAUNCHERS := build/launcher/launcher-console.exe build/launcher/launcher-gui.exe
LAUNCHER_TEST := $(LAUNCHERS) build/launcher/stub-python.exe build/launcher/stub-pythonw.exe
LAUNCHER_CFLAGS := -std=c11 -Os -Wall -Wextra -Werror -fno-stack-protector
MKWINLAUNCHER := build/asan/helpers/mkwinlauncher

SHIMS := build/shims/libnvidia-ml.so.1 build/shims/libcuda.so.1 build/shims/nvidia-smi
SHIM_CFLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -fPIC -Wall -Wextra -Werror \
	$(shell $(PKG_CONFIG) --cflags libcjson 2>/dev/null)
SHIM_LIBS := $(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null) -lpthread

.PHONY: all check shims shims-windows launchers unit fuzz fuzz-smoke fuzz-long valgrind clean e2e \
	e2e-matrix release release-bins release-check torch-builds check-windows
all: build/mlsetup

build/mlsetup: $(REL_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(DEP_LIBS)

# Regenerated when an embedded file, the script or the list (Makefile) changes.
$(GEN_SRC): $(EMBED_FILES) manifests/embed.sh Makefile
	@mkdir -p $(dir $@)
	sh manifests/embed.sh $@ $(EMBED_FILES)

# mlsetup.exe's embedded files add the script launchers its Windows
# environments are written with (src/env/winlauncher.c).
GEN_SRC_WIN := build/gen/embedded_windows.c
$(GEN_SRC_WIN): $(EMBED_FILES) $(LAUNCHERS) manifests/embed.sh Makefile
	@mkdir -p $(dir $@)
	sh manifests/embed.sh $@ $(EMBED_FILES) $(LAUNCHERS)

build/obj/build/gen/%.o: build/gen/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -c -o $@ $<

build/asan/obj/build/gen/%.o: build/gen/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

build/obj/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -c -o $@ $<

build/asan/obj/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

build/asan/mlsetup: $(SAN_LIB_OBJ) $(SAN_CLI_OBJ)
	$(CC) $(SAN) -o $@ $^ $(DEP_LIBS)

build/asan/tests/%: tests/unit/%.c $(SAN_LIB_OBJ) $(HDRS)
	$(call check_pkg,cmocka)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) $$($(PKG_CONFIG) --cflags cmocka) -o $@ $< \
		$(SAN_LIB_OBJ) $(DEP_LIBS) $$($(PKG_CONFIG) --libs cmocka)

shims: $(SHIMS)

build/shims/libnvidia-ml.so.1: tests/shims/fake_nvml.c tests/shims/fake_common.c tests/shims/fake_common.h
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_CFLAGS) -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ \
		tests/shims/fake_nvml.c tests/shims/fake_common.c $(SHIM_LIBS)

build/shims/libcuda.so.1: tests/shims/fake_cuda.c tests/shims/fake_common.c tests/shims/fake_common.h
	@mkdir -p $(dir $@)
	$(CC) $(SHIM_CFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ \
		tests/shims/fake_cuda.c tests/shims/fake_common.c $(SHIM_LIBS)

build/shims/nvidia-smi: tests/shims/fake-nvidia-smi
	@mkdir -p build/shims/bin
	cp $< build/shims/bin/nvidia-smi && chmod +x build/shims/bin/nvidia-smi && touch $@

# The fake driver as Windows DLLs, for tests under wine, built with the
# release build's pinned zig (packaging/release/toolchain.sh fetches it into
# the release cache once; its compilation cache is shared with the release
# build). cJSON is compiled from the Debian source package the release
# build pins and verifies (packaging/release/sources.sh): one C file, so
# this needs no prebuilt Windows library and works whether or not the
# Windows dependency prefix has been built. CJSON_HIDE_SYMBOLS keeps cJSON
# out of the DLLs' exports. tests/shims/README.md, "Windows".
WIN_CC = z=$$(sh packaging/release/toolchain.sh) && \
	ZIG_GLOBAL_CACHE_DIR=$(REL_CACHE)/zig-cache ZIG_LOCAL_CACHE_DIR=$(REL_CACHE)/zig-cache \
	"$$z" cc -target x86_64-windows-gnu
SHIMS_WIN := build/shims-windows/nvml.dll build/shims-windows/nvcuda.dll \
	build/shims-windows/win_probe.exe
WIN_CJSON := build/shims-windows/src/cjson
WIN_SHIM_CFLAGS := -std=c11 -O1 -Wall -Wextra -Werror -DCJSON_HIDE_SYMBOLS -I$(WIN_CJSON)

shims-windows: $(SHIMS_WIN)

$(WIN_CJSON)/cJSON.c: packaging/release/deps.lock
	sh packaging/release/sources.sh extract cjson $(WIN_CJSON)
	touch $@

build/shims-windows/nvml.dll: tests/shims/fake_nvml.c tests/shims/fake_common.c \
		tests/shims/fake_common.h $(WIN_CJSON)/cJSON.c
	$(WIN_CC) $(WIN_SHIM_CFLAGS) -shared -o $@ \
		tests/shims/fake_nvml.c tests/shims/fake_common.c $(WIN_CJSON)/cJSON.c

build/shims-windows/nvcuda.dll: tests/shims/fake_cuda.c tests/shims/fake_common.c \
		tests/shims/fake_common.h $(WIN_CJSON)/cJSON.c
	$(WIN_CC) $(WIN_SHIM_CFLAGS) -shared -o $@ \
		tests/shims/fake_cuda.c tests/shims/fake_common.c $(WIN_CJSON)/cJSON.c

build/shims-windows/win_probe.exe: tests/shims/win_probe.c
	@mkdir -p $(dir $@)
	$(WIN_CC) -std=c11 -O1 -Wall -Wextra -Werror -o $@ $< -lshell32

launchers: $(LAUNCHERS)

# Compiled with the Windows headers, linked with -nostdlib: the entry point
# is launcher_main, the imports kernel32 (and user32 for the GUI's message
# box). /Brepro: the PE timestamp is a hash of the contents, so the same
# source gives the same bytes.
build/launcher/launcher-console.o: platform/windows/launcher/launcher.c
	@mkdir -p $(dir $@)
	$(WIN_CC) $(LAUNCHER_CFLAGS) -c -o $@ $<

build/launcher/launcher-gui.o: platform/windows/launcher/launcher.c
	@mkdir -p $(dir $@)
	$(WIN_CC) $(LAUNCHER_CFLAGS) -DML_LAUNCHER_GUI -c -o $@ $<

build/launcher/launcher-console.exe: build/launcher/launcher-console.o
	$(WIN_CC) -s -nostdlib -Wl,/Brepro -Wl,--subsystem,console -Wl,--entry,launcher_main -o $@ $< -lkernel32

build/launcher/launcher-gui.exe: build/launcher/launcher-gui.o
	$(WIN_CC) -s -nostdlib -Wl,/Brepro -Wl,--subsystem,windows -Wl,--entry,launcher_main -o $@ $< \
		-lkernel32 -luser32

# The simulated interpreter the launcher test runs (console and GUI).
build/launcher/stub-python.exe: tests/helpers/stub_python.c
	@mkdir -p $(dir $@)
	$(WIN_CC) -std=c11 -O1 -Wall -Wextra -Werror -o $@ $< -lshell32

build/launcher/stub-pythonw.exe: tests/helpers/stub_python.c
	@mkdir -p $(dir $@)
	$(WIN_CC) -std=c11 -O1 -Wall -Wextra -Werror -Wl,--subsystem,windows -o $@ $< -lshell32

$(MKWINLAUNCHER): tests/helpers/mkwinlauncher.c $(SAN_LIB_OBJ) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) -o $@ $< $(SAN_LIB_OBJ) $(DEP_LIBS)

unit: $(UNIT_BIN)

check: build/asan/mlsetup $(UNIT_BIN) $(SHIMS) $(MKWINLAUNCHER) $(if $(ZIG_CACHED),$(LAUNCHER_TEST))
	@sh tests/run-tests.sh build/asan

valgrind: build/mlsetup $(SHIMS)
	@sh tests/valgrind.sh build/mlsetup

# libFuzzer targets (tests/fuzz/README.md). The library is compiled once
# with coverage instrumentation and the sanitizers into build/fuzz/obj/;
# each target links it with libFuzzer's main. fuzz-smoke runs each for
# FUZZ_SECONDS (default 3) on its corpus (.ci/run does, after check);
# fuzz-long for at least one CPU-hour in all (FUZZ_SECONDS per target,
# default 3600 / targets). Both: tests/fuzz/run.sh; findings in
# build/fuzz/findings/.
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
FUZZ_CFLAGS := $(BASE_CFLAGS) -O1 -g -fno-omit-frame-pointer
FUZZ_LIB_OBJ := $(patsubst %.c,build/fuzz/obj/%.o,$(LIB_SRC))
.SECONDARY: $(FUZZ_LIB_OBJ)
fuzz: $(FUZZ_BIN)
build/fuzz/obj/%.o: %.c $(HDRS) Makefile | build/fuzz/.toolchain
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<
build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_tmp.h $(FUZZ_LIB_OBJ) $(HDRS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(FUZZ_LIB_OBJ) $(DEP_LIBS)
# clang must link -fsanitize=fuzzer (Debian: clang and libclang-rt-dev).
build/fuzz/.toolchain:
	@mkdir -p $(dir $@)
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >$@.c
	@clang -fsanitize=fuzzer -o $@.bin $@.c || { echo "make fuzz needs clang with \
	libFuzzer (clang -fsanitize=fuzzer): run packaging/deps.sh" >&2; rm -f $@.c; exit 1; }
	@rm -f $@.c $@.bin && touch $@
fuzz-smoke: $(FUZZ_BIN)
	FUZZ_SECONDS='$(FUZZ_SECONDS)' sh tests/fuzz/run.sh smoke
fuzz-long: $(FUZZ_BIN)
	FUZZ_SECONDS='$(FUZZ_SECONDS)' sh tests/fuzz/run.sh long

# Regenerates manifests/torch-builds.json from the package index: one wheel
# per torch build downloaded (~0.5-0.9 GB each, deleted after), audited with
# build/mlsetup; builds already in the table are kept without a download;
# the variant indexes' builds derived again from each release's arch table.
# TORCH_BUILDS_FLAGS: e.g. --full (audit everything again), --local DIR,
# "--offline --local DIR" (no index: audited entries kept, derived ones
# from the wheels in DIR).
torch-builds: build/mlsetup
	python3 manifests/make_torch_builds.py --mlsetup build/mlsetup \
		-o manifests/torch-builds.json $(TORCH_BUILDS_FLAGS)

# The main job on real packages (network, ~20 GB disk); not part of check.
e2e: build/mlsetup $(SHIMS)
	sh tests/e2e/run.sh

# The GPU truth matrix (tests/e2e/matrix.py): every torch release on the
# package index from 2.6.0 on, each stack audited for sm_70 ... sm_121 and
# judged against cuobjdump; writes tests/e2e/matrix.md, matrix.json and
# crosscheck/torch-X.md. Network and disk: ~3 GB per stack, deleted after
# use unless MATRIX_FLAGS="--store DIR" keeps the wheels for re-runs
# (~24 GB for the 14 releases of today); also --only 2.15.0,... Not part
# of check.
e2e-matrix: build/mlsetup
	python3 tests/e2e/matrix.py --mlsetup build/mlsetup $(MATRIX_FLAGS)

clean:
	rm -rf build dist

# --- release --------------------------------------------------------------
# packaging/release/build-deps.sh builds the libraries for each target into
# a cache outside the clone and writes build/release/<target>/deps.mk (the
# prefix and the zig wrappers); the rules below compile the same sources as
# build/mlsetup with them, into position-independent executables (ASLR)
# with stack canaries. Paths of this machine are mapped away and the
# binaries stripped, so the same inputs give the same bytes.
RELEASE_TARGETS := x86_64-linux-gnu aarch64-linux-gnu x86_64-windows-gnu
RELEASE_URL ?=
# zig's glibc headers are 2.43's, where (with _GNU_SOURCE) strchr() and
# friends return const char * for a const argument (C23): code that writes
# through such a result is reported, but does not stop the release build.
REL_CFLAGS := -std=c11 -D_GNU_SOURCE -Iinclude $(WARN) -O2 -fstack-protector-strong -DML_RELEASE_BUILD \
	-Wno-error=incompatible-pointer-types-discards-qualifiers \
	-DML_GIT_COMMIT='"$(GIT_COMMIT)"' -ffile-prefix-map=$(CURDIR)=.

# Per kind of target: Linux binaries are position-independent executables
# over platform/linux/os.c that dlopen() through glibc's libdl; the Windows
# one (mlsetup.exe, UCRT) uses platform/windows/ (compat.h, force-included,
# maps the POSIX calls of src/ onto the wide Win32 API), is linked fully
# static and needs these system DLLs besides what the libraries' .pc files
# name.
WIN_SRC := $(sort $(wildcard platform/windows/*.c)) platform/os_common.c platform/random.c
WIN_HDRS := $(wildcard platform/windows/*.h platform/windows/include/*.h platform/windows/include/*/*.h)
rel_win = $(findstring windows,$(1))
rel_exe = build/release/$(1)/mlsetup$(if $(call rel_win,$(1)),.exe)
rel_src = $(filter-out $(PLATFORM_SRC) $(if $(call rel_win,$(1)),$(GEN_SRC)),$(LIB_SRC)) \
	$(if $(call rel_win,$(1)),$(WIN_SRC) $(GEN_SRC_WIN),$(PLATFORM_SRC)) $(CLI_SRC)
rel_tflags = $(if $(call rel_win,$(1)),-include platform/windows/compat.h -Iplatform/windows/include \
	-DUNICODE -D_UNICODE -D_FILE_OFFSET_BITS=64,-fPIE)
rel_ldflags = $(if $(call rel_win,$(1)),-static -s,-pie -s)
rel_syslibs = $(if $(call rel_win,$(1)),-lsetupapi -lbcrypt -lshell32 -ladvapi32 -lws2_32,-ldl -lpthread)

-include $(wildcard $(RELEASE_TARGETS:%=build/release/%/deps.mk))

define release_target
REL_PC_$(1) := PKG_CONFIG_LIBDIR=$$(REL_PREFIX_$(1))/lib/pkgconfig PKG_CONFIG_PATH= $$(PKG_CONFIG) --static
REL_DEP_CFLAGS_$(1) := $$(if $$(REL_PREFIX_$(1)),$$(shell $$(REL_PC_$(1)) --cflags $$(PKGS)))
REL_DEP_LIBS_$(1) := $$(if $$(REL_PREFIX_$(1)),$$(shell $$(REL_PC_$(1)) --libs $$(PKGS)))
REL_OBJ_$(1) := $$(patsubst %.c,build/release/$(1)/obj/%.o,$$(call rel_src,$(1)))

build/release/$(1)/obj/%.o: %.c $$(HDRS) $$(WIN_HDRS) Makefile build/release/$(1)/deps.mk build/release/$(1)/mlsetup-release.h
	@mkdir -p $$(dir $$@)
	$$(REL_TOOLS_$(1))/zcc $$(REL_CFLAGS) $$(call rel_tflags,$(1)) -Ibuild/release/$(1) $$(REL_DEP_CFLAGS_$(1)) -c -o $$@ $$<

$$(call rel_exe,$(1)): $$(REL_OBJ_$(1))
	$$(REL_TOOLS_$(1))/zcc $$(call rel_ldflags,$(1)) -o $$@ $$^ $$(REL_DEP_LIBS_$(1)) $$(call rel_syslibs,$(1))
endef
$(foreach t,$(RELEASE_TARGETS),$(eval $(call release_target,$(t))))

release:
	MLSETUP_RELEASE_PKGS="$(PKGS)" sh packaging/release/build-deps.sh $(RELEASE_TARGETS)
	$(MAKE) release-bins
	sh packaging/release/dist.sh "$(RELEASE_URL)" $(RELEASE_TARGETS)

release-bins: $(foreach t,$(RELEASE_TARGETS),$(call rel_exe,$(t)))

# The Windows tests of the suite (t0920, t0921, t0930) need the fake driver
# DLLs, the launchers and their test helper; under release-check they may
# not skip.
release-check: release $(SHIMS) shims-windows $(LAUNCHER_TEST) $(MKWINLAUNCHER)
	sh packaging/release/check.sh $(RELEASE_TARGETS)
	MLSETUP_RELEASE_CHECK=1 $(MAKE) check-windows

# The unit tests for Windows, under wine: each tests/unit/test_*.c built
# with the release zig against the Windows release objects (the same ones
# mlsetup.exe is linked from, without the CLI's) and the Windows libraries'
# prefix (packaging/release/build-deps.sh x86_64-windows-gnu writes its
# deps.mk; cmocka is among them). tests/windows/run.sh runs the
# compatibility smoke test, then these through tests/run-tests.sh under
# wine; a test that only means something on Linux skips and says why.
# MLSETUP_RELEASE_CHECK=1 (release-check) makes a missing zig or wine a
# failure instead of a skip.
WIN_T := x86_64-windows-gnu
WIN_UNIT_DIR := build/release/$(WIN_T)/unit
WIN_UNIT_BIN := $(patsubst tests/unit/%.c,$(WIN_UNIT_DIR)/tests/%.exe,$(UNIT_SRC))
WIN_LIB_OBJ := $(filter-out $(patsubst %.c,build/release/$(WIN_T)/obj/%.o,$(CLI_SRC)),$(REL_OBJ_$(WIN_T)))

$(WIN_UNIT_DIR)/tests/%.exe: tests/unit/%.c tests/unit/env_testutil.h $(WIN_LIB_OBJ) $(HDRS) $(WIN_HDRS)
	$(if $(REL_PREFIX_$(WIN_T)),,$(error no Windows libraries (build/release/$(WIN_T)/deps.mk): run packaging/release/build-deps.sh $(WIN_T)))
	@mkdir -p $(dir $@)
	$(REL_TOOLS_$(WIN_T))/zcc $(REL_CFLAGS) $(call rel_tflags,$(WIN_T)) -Ibuild/release/$(WIN_T) \
		$(REL_DEP_CFLAGS_$(WIN_T)) $$($(REL_PC_$(WIN_T)) --cflags cmocka) -static -o $@ $< $(WIN_LIB_OBJ) \
		$(REL_DEP_LIBS_$(WIN_T)) $$($(REL_PC_$(WIN_T)) --libs cmocka) $(call rel_syslibs,$(WIN_T))

WIN_HAVE_LIBS := $(REL_PREFIX_$(WIN_T))
check-windows: $(if $(WIN_HAVE_LIBS),$(WIN_UNIT_BIN) $(SHIMS_WIN))
ifeq ($(WIN_HAVE_LIBS),)
	@echo "check-windows: no Windows libraries (build/release/$(WIN_T)/deps.mk; make release" \
		"builds them): only the compat smoke test runs" >&2
	@$(if $(MLSETUP_RELEASE_CHECK),exit 1)
endif
	@ZIG=$(REL_CACHE)/zig/$(ZIG_VERSION)/ziglang/zig sh tests/windows/run.sh $(if $(WIN_HAVE_LIBS),$(WIN_UNIT_DIR))
