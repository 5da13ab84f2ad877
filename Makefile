# Thin wrapper over CMake. The two commands of the README:
#   make run    install missing packages, build, reproduce every hardware and paper result
#   make test   install missing packages, build, run the whole test suite (ctest)
BUILD ?= build
JOBS  ?= $(shell nproc)
SHARED ?= $(abspath $(CURDIR)/../shared)

.PHONY: all deps build run test bench clean

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

clean:
	rm -rf $(BUILD)
