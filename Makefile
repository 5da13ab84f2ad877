# Thin wrapper over CMake. The two commands of the README:
#   make run    install missing packages, build, reproduce every hardware and paper result
#   make test   install missing packages, build, run the whole test suite (ctest)
# and two reliability checks (docs/fuzzing.md), each in a build folder of its own:
#   make fuzz      clang-15 libFuzzer targets of fuzz/ (ASan+UBSan), FUZZ_SECONDS per target
#   make sanitize  g++ ASan+UBSan build of the core, the CLI and the core tests; runs ctest
# and the speed work (docs/performance.md, docs/scale.md):
#   make bench        throughput beside a native binary32 dot product
#   make bench-check  the fast kernels against the reference stage path, 10^7 samples a preset
BUILD ?= build
JOBS  ?= $(shell nproc)
SHARED ?= $(abspath $(CURDIR)/../shared)

.PHONY: all deps build run test bench bench-check clean fuzz sanitize apps

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DMATCORE_SHARED_DIR=$(SHARED)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./scripts/reproduce.sh $(BUILD)/matcore $(SHARED)

test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure

bench: build
	./bench/run.sh $(BUILD)

# The fast kernels (core/src/engines/fast.cpp, the SIMD lanes) against the reference stage path on
# BENCH_CHECK_N random samples per preset and binary16-output variant, one by one and in batches
# (docs/performance.md): 10^7 each by default (about 25 minutes on 2 cores); CI runs 10^5.
BENCH_CHECK_N ?= 10000000
bench-check: build
	./$(BUILD)/bench_check $(BENCH_CHECK_N)

# The paper's applications on the Python module (docs/applications.md): regenerates
# docs/img/multiword-*.{csv,png} (about 20 minutes on 2 cores), docs/img/smd-*.{csv,png} (2 min)
# and docs/img/digits.{csv,png} (3 s).
apps: build
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 -m apps.multiword --out docs/img
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 -m apps.smd --out docs/img
	PYTHONPATH=$(BUILD)/python /usr/bin/python3 -m apps.digits --out docs/img

# libFuzzer targets (fuzz/, scripts/fuzz.sh): build-fuzz/, crash artifacts in build-fuzz/artifacts/;
# fails on any crash.
FUZZ_SECONDS ?= 30
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_BUILD=build-fuzz JOBS=$(JOBS) ./scripts/fuzz.sh

# ASan + UBSan (any UB aborts) Debug build of the core library, the CLI and the core tests
# (sc/ and hip_ref/ skipped), then ctest: about 6 min to build and 3 min to test on 2 cores.
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# Left out of the sanitizer run (each also runs in `make test`): the random-configuration and
# file round-trip feature tests (over 4 minutes each under ASan), the every-character file test
# (6 min under ASan), and the test that
# limits the address space to make thread creation fail and the one that validates K = 2^20 under a
# 2 GB address-space limit (ASan needs terabytes of address space),
# and the trace tests (they run matcore-sc: sc/ is not built here), and the RTL tests that run
# Verilated simulators (the simulators are not sanitized; the generator still runs, RtlGenerate).
SAN_EXCLUDE ?= ^FeatureRandom|^FeatureFiles|EveryCharacterIsChecked|ThreadsThatCannotBeCreated|OneVeryLongSampleFitsInBoundedMemory|^RobustTrace|RtlHwdata|RtlPaper|RtlRandom|RtlSpecials|RtlOverflow|RtlSensitivity|RtlTrace|RtlCost|RtlAlignNearest|^web\.browser
sanitize: deps
	CC=gcc CXX=g++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS="$(SAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DMATCORE_LTO=OFF -DMATCORE_CORE_ONLY=ON -DMATCORE_MPI=OFF -DMATCORE_SHARED_DIR=$(SHARED)
	cmake --build build-san -j $(JOBS)
	cd build-san && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest -j $(JOBS) --output-on-failure -E '$(SAN_EXCLUDE)'

clean:
	rm -rf $(BUILD)

include web/web.mk
