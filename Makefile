# Makefile: the two entry points of the README, wrapping CMake and CTest.
#   make run    build dkb and run the main job, `dkb bench` (SF=... to choose)
#   make test   build everything and run every test
# Other targets: build, test-asan (tests under ASan+UBSan), fuzz, bench-gen, clean.
BUILD ?= build
JOBS ?= $(shell nproc)
SF ?=

.PHONY: all deps build run test test-asan fuzz bench-gen clean
all: build

deps:
	@tools/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: `dkb bench` on the best backend here (CUDA with a GPU, else
# the CPU): generate TPC-H into data/sfSF if missing (SF 10 on a GPU, 1 on
# the CPU, unless SF is given), run the 22 baseline plans and the expert
# kernels through the harness, print the table, write bench-results/.
run: build
	$(BUILD)/dkb bench $(if $(SF),--sf $(SF))

test: build
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

# (the CUDA parts are compiled and tested by `make test`; ASan cannot watch
# device memory and the CUDA runtime is not built for it)
test-asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDKB_SANITIZE=ON -DDKB_CUDA=OFF >/dev/null
	@cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir build-asan -j $(JOBS) --output-on-failure

fuzz: deps
	tests/fuzz/run.sh

bench-gen: build
	bench/gen_bench.sh

clean:
	rm -rf $(BUILD) build-asan build-fuzz
