#!/usr/bin/env bash
# RailMPI over real verbs: boot a Debian kernel in QEMU (TCG, no KVM needed), load
# rdma_rxe (soft-RoCE) on the guest's eth0, share the host root read-only over virtio-9p and
# run tests/rxe/guest.sh there: 2-rank ping-pong, 4 MiB rendezvous (read and write) and the
# registration-cache test over RMPI_NET=ofi, RMPI_OFI_PROVIDER='verbs;ofi_rxm', every byte
# checked. Slow (minutes): ctest label rxe, `make rxe`; not part of `make check`.
#
# usage: run.sh [--install-deps] [BUILD_DIR]      (BUILD_DIR default: build)
# env:   RMPI_RXE_CACHE   downloads, kernel tree, initramfs, serial log (default BUILD_DIR/rxe)
#        RMPI_RXE_KERNEL  Debian kernel package (default: what linux-image-amd64 depends on)
#        RMPI_RXE_TIMEOUT seconds for the whole guest run (default 900)
#        RMPI_RXE_ENV     extra KEY=VALUE words given to every rank (e.g. FI_LOG_LEVEL=warn)
# exit:  0 PASS, 1 FAIL, 77 skipped (tools missing)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
deps="qemu-system-x86 busybox-static kmod cpio iproute2 ibverbs-utils ibverbs-providers rdma-core libfabric-bin"

if [ "${1:-}" = --install-deps ]; then
  shift
  need=""
  for p in $deps; do dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"; done
  if [ -n "$need" ]; then
    [ "$(id -u)" = 0 ] || { echo "rxe: needs root to install$need"; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null || exit 1
  fi
  [ $# = 0 ] && exit 0
fi

build=$(cd "${1:-$src/build}" && pwd) || exit 1
cache=${RMPI_RXE_CACHE:-$build/rxe}
mkdir -p "$cache" && cache=$(cd "$cache" && pwd)
limit=${RMPI_RXE_TIMEOUT:-900}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

for t in qemu-system-x86_64 busybox cpio depmod modprobe dpkg-deb; do
  command -v "$t" >/dev/null || { echo "skip: $t not found (make rxe installs: $deps)"; exit 77; }
done
bb=$(command -v busybox)
ldd "$bb" 2>&1 | grep -q 'not a dynamic' || { echo "skip: $bb is not static (install busybox-static)"; exit 77; }
for f in "$build/bin/mpiexec" "$build/examples/pingpong" "$build/tests/mpi/pt2pt/sizes" \
         "$build/tests/mpi/pt2pt/regcache" "$build/bench/pt2pt"; do
  [ -x "$f" ] || { echo "FAIL: $f not built (run ninja -C $build)"; exit 1; }
done

# 1. kernel: download once, extract vmlinuz and modules, depmod.
t0=$(now)
pkg=${RMPI_RXE_KERNEL:-}
if [ -z "$pkg" ] && [ -s "$cache/kernel.pkg" ]; then
  pkg=$(cat "$cache/kernel.pkg")
fi
if [ -z "$pkg" ]; then
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  [ -n "$pkg" ] || { apt-get update -qq; pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'); }
  [ -n "$pkg" ] || { echo "FAIL: no linux-image-amd64 in apt (set RMPI_RXE_KERNEL)"; exit 1; }
fi
kver=${pkg#linux-image-}
tree=$cache/kernel/$kver
if [ ! -s "$tree/vmlinuz" ] || [ ! -s "$tree/lib/modules/$kver/modules.dep" ]; then
  mkdir -p "$cache/deb"
  deb=$(ls "$cache/deb/${pkg}_"*.deb 2>/dev/null | head -n1)
  if [ -z "$deb" ]; then
    echo "rxe: downloading $pkg"
    (cd "$cache/deb" && apt-get download "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed') ||
      { echo "FAIL: apt-get download $pkg"; exit 1; }
    deb=$(ls "$cache/deb/${pkg}_"*.deb 2>/dev/null | head -n1)
    [ -n "$deb" ] || { echo "FAIL: apt-get download $pkg left no .deb"; exit 1; }
  fi
  rm -rf "$tree.tmp" && mkdir -p "$tree.tmp"
  dpkg-deb -x "$deb" "$tree.tmp" || { echo "FAIL: dpkg-deb -x $deb"; exit 1; }
  cp "$tree.tmp/boot/vmlinuz-$kver" "$tree.tmp/vmlinuz"
  depmod -b "$tree.tmp" "$kver" || { echo "FAIL: depmod"; exit 1; }
  rm -rf "$tree" && mv "$tree.tmp" "$tree"
fi
echo "$pkg" >"$cache/kernel.pkg"
echo "rxe: kernel $pkg ($(basename "$(ls "$cache/deb/${pkg}_"*.deb 2>/dev/null | head -n1)" .deb)), ready in $(since "$t0")s"

# 2. initramfs: busybox, /init, the modules (dependencies resolved by modprobe on the tree).
mods="crc32_generic virtio_pci virtio_net 9pnet_virtio 9p rdma_rxe ib_uverbs rdma_ucm"
irfs=$cache/initramfs-$kver.cpio.gz
if [ ! -s "$irfs" ] || [ "$here/init" -nt "$irfs" ] || [ "$0" -nt "$irfs" ]; then
  root=$cache/initramfs.d
  rm -rf "$root" && mkdir -p "$root"/{bin,lib/modules,proc,sys,dev,host,tmp}
  cp "$bb" "$root/bin/busybox" && cp "$here/init" "$root/init" && chmod +x "$root/init"
  : >"$root/modules.list"
  for m in $mods; do
    modprobe -d "$tree" -S "$kver" --show-depends "$m" || { echo "FAIL: module $m not in $pkg"; exit 1; }
  done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
    cp "$ko" "$root/lib/modules/" && basename "$ko" >>"$root/modules.list"
  done
  [ -s "$root/modules.list" ] || { echo "FAIL: no modules"; exit 1; }
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$irfs.tmp" && mv "$irfs.tmp" "$irfs"
  echo "rxe: initramfs with $(wc -l <"$root/modules.list") modules: $(tr '\n' ' ' <"$root/modules.list")"
fi

# 3. boot and run; the guest prints RXE lines on the serial console.
log=$cache/serial.log
echo "rxe: booting (TCG, timeout ${limit}s); serial log $log"
t1=$(now)
timeout --foreground -k 10 "$limit" qemu-system-x86_64 -accel tcg -m 2G -smp 2 -nographic -no-reboot \
  -kernel "$tree/vmlinuz" -initrd "$irfs" \
  -append "console=ttyS0 panic=-1 loglevel=4 -- $here/guest.sh $build ${RMPI_RXE_ENV:-}" \
  -netdev user,id=n0 -device virtio-net-pci,netdev=n0 \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  </dev/null >"$log" 2>&1
qrc=$?
wall=$(since "$t1")
tr -d '\r' <"$log" | grep -E '^(rxe|RXE)' | sed 's/^/  /'
ready=$(tr -d '\r' <"$log" | sed -n 's/^rxe-init: ready at \([0-9.]*\)s.*/\1/p')
echo "rxe: guest boot to the host root ${ready:-?}s (guest clock), whole QEMU run ${wall}s"
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
  echo "rxe: last lines of the serial log:"; tail -n 40 "$log"
  echo "FAIL: QEMU timed out after ${limit}s"; exit 1
fi
if tr -d '\r' <"$log" | grep -q '^RXE-RESULT: PASS'; then
  echo "PASS: RailMPI over verbs;ofi_rxm on rdma_rxe ($pkg)"; exit 0
fi
echo "rxe: last lines of the serial log:"; tail -n 60 "$log"
echo "FAIL: no RXE-RESULT: PASS in the serial log (QEMU exit $qrc)"
exit 1
