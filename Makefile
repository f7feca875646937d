# Thin front door over CMake/Ninja: `make`, `make check`, `make demo`, `make rxe`.
BUILD ?= build
WERROR ?= ON
CMAKE_FLAGS ?=

# Building (all, so demo, check, bench, rxe too) starts with tools/deps.sh: the Debian
# packages, installed when missing as root, else the one apt-get line to run and a stop.
# `make check` asks for the tests' packages too, `make bench` also for the reference MPIs'
# compilers and headers (MPICH's and Open MPI's -dev packages) the compare scripts use.
DEPS = build
check: DEPS = check
bench: DEPS = bench

.PHONY: all check demo clean bench rxe sanitize tsan
all:
	@tools/deps.sh $(DEPS)
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRMPI_WERROR=$(WERROR) $(CMAKE_FLAGS)
	cmake --build $(BUILD)

# ASan + UBSan build in its own directory: the unit tests and the 2-rank MPI tests that
# tests/sanitize.list names (a few minutes on 2 cores).
SAN_BUILD ?= build-san
sanitize:
	cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRMPI_WERROR=$(WERROR) -DRMPI_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build $(SAN_BUILD)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=0:$(ASAN_OPTIONS) UBSAN_OPTIONS=print_stacktrace=1:$(UBSAN_OPTIONS) \
		ctest --output-on-failure --timeout 300 -L sanitize $(CTEST_FLAGS)

# ThreadSanitizer build in its own directory: only the programs of tests/tsan.list (the
# library, the launcher, the shm queue's and ring's unit tests, the threaded MPI tests). A
# race TSan sees makes the process exit 66, so the test fails.
TSAN_BUILD ?= build-tsan
TSAN_TARGETS = mpi mpiexec unit_net_shm_queue unit_net_shm_ring mpi_pt2pt_thread mpi_coll_shmcoll mpi_rma_asyncprog mpi_rma_cmasplit
tsan:
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRMPI_WERROR=$(WERROR) -DRMPI_SANITIZE_THREAD=ON $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD) --target $(TSAN_TARGETS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS=exitcode=66:second_deadlock_stack=1:$(TSAN_OPTIONS) \
		ctest --output-on-failure --timeout 300 -L tsan $(CTEST_FLAGS)

# rxe (a QEMU guest, minutes) has its own target.
check: all
	cd $(BUILD) && ctest --output-on-failure --timeout 300 -LE "rxe|net-variants|chan-variants|known-defect" $(CTEST_FLAGS)

# RailMPI over real verbs (rdma_rxe in a QEMU guest; tests/rxe/run.sh): installs QEMU and
# friends when missing (root), downloads a Debian kernel once into $(BUILD)/rxe.
rxe: all
	tests/rxe/run.sh --install-deps
	cd $(BUILD) && ctest --verbose -L rxe $(CTEST_FLAGS)

demo: all
	./examples/demo.sh $(BUILD)

bench: all
	cmake --build $(BUILD) --target bench

clean:
	rm -rf $(BUILD)
