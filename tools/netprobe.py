#!/usr/bin/env python3
"""Measurements for tools/netlab, with nothing but python3: ICMP ping and one TCP stream.

  netprobe.py ping ADDR [--count N] [--interval S]
      ICMP echo over a raw socket (root); prints
      "rtt_ms min=.. median=.. avg=.. max=.. sent=N received=M".
  netprobe.py tcp-recv ADDR PORT [--clamp BYTES] [--warmup S] [--bins S]
      accepts one connection, reads to EOF and prints
      "tcp_mbit_s=.. bytes=.. seconds=..", counting only what arrives after the first
      WARMUP seconds (slow start excluded). --clamp sets TCP_WINDOW_CLAMP on the listening
      socket: the receive window, so the sender keeps at most that many bytes in flight.
      --bins S also prints "bins_mb_s=.." (MB/s received in each S-second bin after the
      warm-up, the partial last one left out) and their sd/mean: the variation one plain
      stream shows through a shaped rail, the floor for an MPI stream's bins.
      Prints "listening" once it accepts connections.
  netprobe.py tcp-send ADDR PORT [--seconds S]
      connects and sends for S seconds.
"""
import argparse
import os
import select
import socket
import statistics
import struct
import sys
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(args):
    """RTT from the send call to the kernel's receive stamp of the reply (SO_TIMESTAMPNS),
    so this process's own wake-up time on a busy machine is not counted."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    ident = os.getpid() & 0xFFFF
    payload = b"netlab-ping-" + b"x" * 44
    rtts = []
    # Sequence 0 is not counted: it pays for address resolution.
    for seq in range(0, args.count + 1):
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, checksum(hdr + payload), ident, seq) + payload
        t0 = time.time_ns()
        sock.sendto(pkt, (args.addr, 0))
        deadline = time.monotonic() + args.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([sock], [], [], left)
            if not r:
                break
            data, anc, _, _ = sock.recvmsg(2048, socket.CMSG_SPACE(16))
            t1 = time.time_ns()
            for level, typ, val in anc:
                if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(val) >= 16:
                    sec, nsec = struct.unpack("qq", val[:16])
                    t1 = sec * 1000000000 + nsec
            ihl = (data[0] & 0x0F) * 4
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
            if typ == 0 and rid == ident and rseq == seq:
                if seq > 0:
                    rtts.append((t1 - t0) / 1e6)
                break
        if seq < args.count:
            time.sleep(args.interval)
    if not rtts:
        print("rtt_ms sent=%d received=0" % args.count)
        return 1
    print("rtt_ms min=%.3f median=%.3f avg=%.3f max=%.3f sent=%d received=%d" % (
        min(rtts), statistics.median(rtts), statistics.mean(rtts), max(rtts), args.count, len(rtts)))
    return 0


def tcp_recv(args):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.clamp:
        # A fixed receive buffer stops autotuning, which would otherwise raise the clamp
        # along with the buffer; the buffer holds the clamped window with room to spare.
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * args.clamp)
        srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, args.clamp)
    srv.bind((args.addr, args.port))
    srv.listen(1)
    print("listening", flush=True)
    srv.settimeout(args.accept_timeout)
    conn, _ = srv.accept()
    if args.clamp:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * args.clamp)
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    first = None
    counted = 0
    t_warm = t_last = None
    bins = []
    while True:
        if args.clamp:
            # Set again before every read: Linux 6.x resets the clamp from the buffer size
            # whenever its payload/truesize ratio for the connection changes.
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, args.clamp)
        n = conn.recv_into(view)
        if n == 0:
            break
        now = time.perf_counter()
        if first is None:
            first = now
        if now - first >= args.warmup:
            if t_warm is None:
                t_warm = now
            else:
                counted += n
                if args.bins:
                    k = int((now - t_warm) / args.bins)
                    bins.extend([0] * (k + 1 - len(bins)))
                    bins[k] += n
            t_last = now
    conn.close()
    if t_warm is None or t_last <= t_warm:
        print("tcp_mbit_s=0 bytes=0 seconds=0 (the stream ended within the warm-up)")
        return 1
    secs = t_last - t_warm
    print("tcp_mbit_s=%.2f bytes=%d seconds=%.3f" % (counted * 8 / secs / 1e6, counted, secs))
    full = [b / args.bins / 1e6 for b in bins[:-1]]
    if len(full) >= 2:
        mean = statistics.mean(full)
        print("bins_mb_s=%s" % ",".join("%.1f" % b for b in full))
        print("bins_sd_mean=%.4f bins=%d mean_mb_s=%.2f" % (statistics.pstdev(full) / mean if mean else 0, len(full), mean))
    return 0


def tcp_send(args):
    sock = socket.create_connection((args.addr, args.port), timeout=10)
    sock.settimeout(None)
    chunk = b"\0" * (256 << 10)
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        sock.sendall(chunk)
    sock.shutdown(socket.SHUT_WR)
    sock.recv(1)
    sock.close()
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("ping")
    a.add_argument("addr")
    a.add_argument("--count", type=int, default=20)
    a.add_argument("--interval", type=float, default=0.05)
    a.add_argument("--timeout", type=float, default=2.0)
    a = sub.add_parser("tcp-recv")
    a.add_argument("addr")
    a.add_argument("port", type=int)
    a.add_argument("--clamp", type=int, default=0)
    a.add_argument("--warmup", type=float, default=0.5)
    a.add_argument("--bins", type=float, default=0)
    a.add_argument("--accept-timeout", type=float, default=30)
    a = sub.add_parser("tcp-send")
    a.add_argument("addr")
    a.add_argument("port", type=int)
    a.add_argument("--seconds", type=float, default=3)
    args = p.parse_args()
    return {"ping": ping, "tcp-recv": tcp_recv, "tcp-send": tcp_send}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
