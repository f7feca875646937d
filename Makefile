# Thin front door over CMake/Ninja: `make`, `make check`, `make demo`.
BUILD ?= build
WERROR ?= ON
CMAKE_FLAGS ?=

.PHONY: all check demo clean bench
all: $(BUILD)/build.ninja
	cmake --build $(BUILD)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRMPI_WERROR=$(WERROR) $(CMAKE_FLAGS)

check: all
	cd $(BUILD) && ctest --output-on-failure --timeout 300 $(CTEST_FLAGS)

demo: all
	./examples/demo.sh $(BUILD)

bench: all
	cmake --build $(BUILD) --target bench

clean:
	rm -rf $(BUILD)
