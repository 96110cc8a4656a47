# visalign: two commands on a fresh Debian 12 machine.
#   make demo  - install missing packages, build, run the main job end to end (embedded SQLite store)
#   make test  - install missing packages, build, run the whole test suite
BUILD ?= build
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory

.PHONY: all setup configure build demo test bench clean

all: build

setup:
	scripts/setup.sh

configure: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	scripts/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@echo "Benchmark programs are in $(BUILD)/bench/; see docs/performance.md for the commands."

clean:
	rm -rf $(BUILD)
