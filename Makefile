# visalign: two commands on a fresh Debian 12 machine.
#   make demo  - install missing packages, build, run the main job end to end (embedded SQLite store)
#   make test  - install missing packages, build, run the whole test suite
#   make fuzz  - build the libFuzzer harnesses (clang, ASan/UBSan) and run each FUZZ_SECONDS
BUILD ?= build
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory

.PHONY: all setup configure build demo test bench fuzz clean

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

# Fuzzing (docs/fuzzing.md): its own build dir; new inputs go to $(FUZZ_BUILD)/corpus/<name>, the
# committed seeds in tests/fuzz/corpus/<name> are only read; a crash leaves its input in
# $(FUZZ_BUILD)/artifacts/<name>/ and stops the run. FUZZERS picks harnesses (default: all).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2
FUZZERS ?= $(patsubst tests/fuzz/%_fuzzer.cc,%,$(wildcard tests/fuzz/*_fuzzer.cc))
fuzz:
	scripts/setup.sh --fuzz
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVISALIGN_FUZZ=ON \
	  -DVISALIGN_SANITIZE=address,undefined -DVISALIGN_BUILD_BENCH=OFF
	cmake --build $(FUZZ_BUILD) -j $(FUZZ_JOBS) --target $(addsuffix _fuzzer,$(FUZZERS))
	@for f in $(FUZZERS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$f $(FUZZ_BUILD)/artifacts/$$f; \
	  dict=tests/fuzz/$$f.dict; [ -f $$dict ] && dict_arg=-dict=$$dict || dict_arg=; \
	  echo "fuzz: $$f for $(FUZZ_SECONDS) s"; \
	  VISALIGN_DATA=$(CURDIR)/data $(FUZZ_BUILD)/tests/fuzz/$${f}_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$f/ $$dict_arg \
	    $(FUZZ_BUILD)/corpus/$$f tests/fuzz/corpus/$$f || exit 1; \
	done

clean:
	rm -rf $(BUILD)
