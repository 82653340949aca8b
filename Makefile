# Thin wrapper over CMake/Ninja/CTest. `make demo` and `make test` do all set-up themselves.
BUILD_DIR ?= build
BUILD_TYPE ?= Dev
JOBS ?= $(shell nproc)
DEB_PACKAGES := cmake g++ ninja-build ccache pkg-config libboost-dev libssh-dev libsqlite3-dev \
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps configure build demo test test-unit bench format tidy clean

# Installs only the Debian packages that are missing; does nothing when all are present.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	else echo "deps: all present"; fi

configure:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	$(BUILD_DIR)/bin/orchestrate demo

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

test-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L unit

bench: build
	$(BUILD_DIR)/bin/bench_brain

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

tidy: configure
	git ls-files '*.cpp' | grep -v '^tests/' | xargs clang-tidy -p $(BUILD_DIR) --quiet

clean:
	rm -rf $(BUILD_DIR)
