# Thin wrapper over CMake/Ninja/CTest. `make demo` and `make test` do all set-up themselves.
BUILD_DIR ?= build
BUILD_TYPE ?= Dev
JOBS ?= $(shell nproc)
# libslurm-dev: spank.h for the Slurm lab's pyxis stand-in (testkit/pyxis_standin), built with the rest.
# python3: the configure step finds it for the docs' names check (tests/docs), before test-deps
# runs; Debian's npm brings it too, but a machine with an npm of its own may lack it.
DEB_PACKAGES := cmake g++ ninja-build ccache pkg-config libboost-dev libssh-dev libsqlite3-dev \
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libssl-dev libmimalloc-dev libslurm-dev python3
# What the server runs at run time (rsync, ssh, sha256sum, find ...): the list in
# server/required_programs.cpp, which `orchestrate serve` and `demo` check at start; a test
# (tests/unit/server/required_programs_test.cpp) keeps the two in agreement.
RUN_PACKAGES := dash rsync coreutils findutils openssh-client tar
LAB_PACKAGES := slurmctld slurmd slurm-client munge openssh-server openssh-client rsync
# The libFuzzer build (tests/fuzz/README.md): clang, its fuzzer and sanitizer runtimes, and llvm
# for llvm-symbolizer (source lines in crash reports).
FUZZ_PACKAGES := clang libclang-rt-14-dev llvm
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 120
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps job-user node-deps apt-node page-deps test-deps openapi-deps kube-schema-deps \
  lab-deps configure build demo-build demo test test-unit flaky-check bench format tidy clean

# $(call apt_install_missing,TARGET,PACKAGES): installs those of PACKAGES that are not installed
# (nothing when all are), without recommends. While it does, Debian's policy-rc.d hook (made
# only if the machine has none, removed afterwards) keeps the packages from starting system-wide
# daemons (munge, sshd, slurmctld, slurmd).
define apt_install_missing
	@missing=""; for p in $(2); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    trap '$(SUDO) rm -f /usr/sbin/policy-rc.d' EXIT; trap 'exit 130' INT TERM; \
	    printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee /usr/sbin/policy-rc.d >/dev/null && $(SUDO) chmod 755 /usr/sbin/policy-rc.d; \
	  fi; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "$(1): all present"; fi
endef

# Installs only the Debian packages that are missing (to build, and to run the server and the
# demo), and the npm packages the status page embeds, and makes the jobs' user; does nothing
# when all are present.
deps: page-deps job-user
	$(call apt_install_missing,deps,$(DEB_PACKAGES) $(RUN_PACKAGES))

# The unprivileged user a root server runs local sites' jobs as (`local: {run_as:
# orchestrate-job}`; a root server refuses local sites without it; docs/security.md, "The
# host"): a system user with no home and no login shell, made only when missing.
JOB_USER := orchestrate-job
job-user:
	@if id -u $(JOB_USER) >/dev/null 2>&1; then echo "job-user: $(JOB_USER) present"; \
	else $(SUDO) useradd --system --no-create-home --home-dir /nonexistent \
	  --shell /usr/sbin/nologin $(JOB_USER) && echo "job-user: made $(JOB_USER)"; fi

# npm, for what the page and its browser tests take from the npm registry: Debian's nodejs and
# npm, unless this machine has an npm already.
node-deps:
	@if command -v npm >/dev/null 2>&1; then echo "node-deps: npm present"; \
	else $(MAKE) --no-print-directory apt-node; fi
apt-node:
	$(call apt_install_missing,apt-node,nodejs npm)

# uPlot for the status page's charts, pinned with its integrity hash by web/page/package-lock.json
# (npm ci checks it); the build embeds it into the binary (web/page/README.md).
page-deps: web/page/node_modules/.package-lock.json
web/page/node_modules/.package-lock.json: web/page/package-lock.json | node-deps
	cd web/page && npm ci --no-audit --no-fund --loglevel=error

# What the tests use beyond the lab: Debian's chromium for the browser tests (tests/browser,
# ctest label browser), driven headless by playwright-core (pinned by
# tests/browser/package-lock.json), promtool (Debian's prometheus) to lint GET /metrics, and
# Debian's python3-torch for the tests that run a real PyTorch trainer (examples/pytorch,
# examples/python) and python3-pytest for the Python client's own tests (python/tests).
# openapi-deps: the OpenAPI 3.1 validator of tests/openapi (pinned by its package-lock.json),
# which a unit test runs on the server's document. kube-schema-deps: kubernetes-models, the
# validators of Kubernetes' API schemas that tests/kube_schema checks the Kubernetes adapter's
# manifests with (pinned by its package-lock.json).
TEST_PACKAGES := chromium prometheus python3-torch python3-pytest
test-deps: tests/browser/node_modules/.package-lock.json openapi-deps kube-schema-deps
	$(call apt_install_missing,test-deps,$(TEST_PACKAGES))
tests/browser/node_modules/.package-lock.json: tests/browser/package-lock.json | node-deps
	cd tests/browser && npm ci --no-audit --no-fund --loglevel=error
openapi-deps: tests/openapi/node_modules/.package-lock.json
tests/openapi/node_modules/.package-lock.json: tests/openapi/package-lock.json | node-deps
	cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error
kube-schema-deps: tests/kube_schema/node_modules/.package-lock.json
tests/kube_schema/node_modules/.package-lock.json: tests/kube_schema/package-lock.json | node-deps
	cd tests/kube_schema && npm ci --no-audit --no-fund --loglevel=error

# What the Slurm lab of the tests needs (tests/lab/slurm): real Slurm daemons and OpenSSH.
lab-deps: deps
	$(call apt_install_missing,lab-deps,$(LAB_PACKAGES))

configure:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(FUZZ_CMAKE_ARGS)

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# `make demo` builds only what the demo runs: the `orchestrate` executable (server and CLI), the
# agent that runs each task beside it, and the toy trainer the demo's job runs; not the tests and
# benchmarks that `make build` and `make test` add (README.md, "The two commands", has its time).
DEMO_TARGETS := orchestrate orchestrate-agent toy_trainer
demo-build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS)

demo: demo-build
	$(BUILD_DIR)/bin/orchestrate demo

# The fuzz targets run a few seconds each over their seeds as ctests (label fuzz).
test: FUZZ_CMAKE_ARGS = -DORCH_FUZZ_BIN_DIR=$(abspath $(FUZZ_BUILD_DIR))/bin
test: fuzz-build build lab-deps test-deps
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

test-unit: build openapi-deps kube-schema-deps
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L unit

# Flaky tests: builds, then runs the ctest labels integration and slurm FLAKY_RUNS times
# (FLAKY_LOAD=1: beside a parallel build that loads the CPUs) and lists every test that failed
# at least once, exiting 1 when there is one (tests/flaky_check.sh; logs in
# $(BUILD_DIR)/flaky-check/). FLAKY_LABELS picks other labels: make flaky-check FLAKY_LABELS=slurm
FLAKY_RUNS ?= 3
FLAKY_LOAD ?= 0
FLAKY_LABELS ?= integration|slurm
flaky-check: build lab-deps test-deps
	FLAKY_RUNS='$(FLAKY_RUNS)' FLAKY_LOAD='$(FLAKY_LOAD)' FLAKY_LABELS='$(FLAKY_LABELS)' \
	  JOBS='$(JOBS)' tests/flaky_check.sh $(BUILD_DIR)

.PHONY: fuzz-deps fuzz-build fuzz
fuzz-deps:
	$(call apt_install_missing,fuzz-deps,$(FUZZ_PACKAGES))

# Only the fuzz targets and the libraries they test, with clang, ASan and UBSan.
fuzz-build: deps fuzz-deps
	cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCMAKE_CXX_COMPILER=clang++ -DORCH_FUZZ=ON
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS)

# Every fuzz target for FUZZ_SECONDS over a copy of its seeds; findings in $(FUZZ_BUILD_DIR)/work.
fuzz: fuzz-build
	rm -rf $(FUZZ_BUILD_DIR)/work
	tests/fuzz/run_fuzzers.sh $(FUZZ_BUILD_DIR)/bin $(FUZZ_SECONDS) $(FUZZ_BUILD_DIR)/work

# Record figures from a Release build: make bench BUILD_TYPE=Release BUILD_DIR=build-release
bench: build
	$(BUILD_DIR)/bin/bench_brain
	$(BUILD_DIR)/bin/bench_agent
	$(BUILD_DIR)/bin/bench_rest

# Issue 3's figures on the real Slurm lab (as root, about 3 minutes); not part of `make bench`.
.PHONY: bench-slurm
bench-slurm: build lab-deps
	$(BUILD_DIR)/bin/bench_slurm

# Issue 5's replication throughput on the real Slurm lab (as root, about 3 minutes); not part of
# `make bench`.
.PHONY: bench-transfer
bench-transfer: build lab-deps
	$(BUILD_DIR)/bin/bench_transfer

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

tidy: configure
	git ls-files '*.cpp' | grep -v '^tests/' | xargs clang-tidy -p $(BUILD_DIR) --quiet

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR)
