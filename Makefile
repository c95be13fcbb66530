# trex developer entry points. `make run` and `make test` install missing Debian packages first.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
CTEST_FLAGS ?=

.PHONY: all deps configure build build-trex run test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# `make run` needs only the trex executable: building the tests and benchmarks too took half of its time.
build-trex: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target trex

run: build-trex
	@bash scripts/run-main-job.sh $(BUILD_DIR)

# OMP_WAIT_POLICY=passive (unless set): with -j tests side by side on few cores, OpenMP threads that spin while
# waiting took the cores from the other test (two `trex run --quick` tests together: 84 s spinning, 46 s passive).
test: build
	@cd $(BUILD_DIR) && OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-passive} ctest --output-on-failure --no-tests=error -j $(JOBS) $(CTEST_FLAGS)

bench: build
	@bash bench/run-all.sh $(BUILD_DIR)

clean:
	@rm -rf $(BUILD_DIR)
