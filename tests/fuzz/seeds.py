#!/usr/bin/env python3
"""Seed inputs of the fuzz harnesses (tests/fuzz/*_corpus), one file per seed: valid
frames and scripts of every kind the harness reads, from which libFuzzer mutates. Run it
after changing a wire format; fuzzing adds its own finds to the corpus (README.md)."""
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))


def write(harness, name, data):
    d = os.path.join(here, harness + "_corpus")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# ---- core_frames: records op u8, len u16, bytes ----
def rec(op, b):
    return struct.pack("<BH", op, len(b)) + b


def hdr(t, flags=0):
    return struct.pack("<HBB", 0, t, flags)


EAGER, SHORT, RTS, CTS, FIN, SYNC_ACK = 1, 2, 3, 4, 5, 6
BUNDLE = 0xFE  # the VC's own: a bundle of frames (docs/wire/core.md)
ID1 = 0x100000001  # the first request id a fresh core hands out


def eager(ctx, src, tag, payload=b"", sreq=None):
    f = hdr(EAGER, 1 if sreq is not None else 0) + struct.pack("<Iii", ctx, src, tag)
    return f + (struct.pack("<Q", sreq) if sreq is not None else b"") + payload


def local(op, ctx, tag, flag, units):
    return rec(op, bytes([ctx - 8, tag, flag]) + struct.pack("<H", units))


def core_seeds():
    w = lambda n, *recs: write("core_frames", n, b"".join(recs))
    w("eager", rec(0, eager(8, 0, 1, b"hello")), local(2, 8, 1, 0, 1))
    w("eager-short", rec(0, eager(9, 0, 2, b"a")), rec(0, hdr(SHORT) + b"bcd"), local(2, 9, 3, 1, 4))
    w("sync", rec(0, eager(8, 0, 0, b"x", sreq=5)), local(2, 8, 0, 0, 1), rec(4, b""))
    rts = hdr(RTS) + struct.pack("<IiiQQQII", 10, 0, 1, 7, 20000, 0x1000, 1, 0) + struct.pack("<Q", 0x100000001)
    w("rts", rec(0, rts), local(2, 10, 1, 0, 2000))
    # a rendezvous send of ours, then the peer's CTS and FIN naming its id
    cts = hdr(CTS) + struct.pack("<IQQQQ", 1, ID1, 3, 0, 20000) + struct.pack("<Q", 0x100000001)
    w("cts-fin", local(3, 11, 2, 0, 2000), rec(4, b""), rec(0, cts), rec(0, hdr(FIN) + struct.pack("<IQ", 1, ID1)))
    w("sync-ack", local(3, 12, 0, 1, 1), rec(0, hdr(SYNC_ACK) + struct.pack("<IQ", 1, ID1)))
    pieces = (hdr(CTS, 4) + struct.pack("<IQQQQ", 1, ID1, 3, 0x2000, 100) + struct.pack("<Q", 0x100000001)
              + struct.pack("<II", 2, 0) + struct.pack("<QQQQ", 0x2000, 60, 0x3000, 40))
    w("cts-pieces", local(3, 11, 2, 0, 2000), rec(0, pieces))
    w("loopback", local(2, 8, 3, 1, 2000), local(3, 8, 1, 0, 2000), rec(4, b""), rec(4, b""),
      local(2, 9, 1, 0, 1), local(3, 9, 1, 1, 1), rec(5, b""))
    w("fin-unknown", rec(0, hdr(FIN) + struct.pack("<IQ", 1, 0x1234)))
    w("short-eager", rec(0, eager(8, 0, 1)[:6]))
    w("big-ctx", rec(0, eager(0x80000000, 0, 1, b"z")))
    w("psn-ahead", rec(1, struct.pack("<H", 7) + eager(8, 0, 1, b"q")[2:]))
    # bundles (VC type 0xfe, coalescing): records u32 length + a frame with its own PSN;
    # the harness stamps only the bundle's header, so the records carry PSNs 0, 1, 2
    def bundle(*frames):
        b = hdr(BUNDLE)
        for k, f in enumerate(frames):
            f = struct.pack("<H", k) + f[2:]
            b += struct.pack("<I", len(f)) + f
        return b
    w("bundle", rec(0, bundle(eager(8, 0, 1, b"one"), hdr(SHORT) + b"two", eager(8, 0, 2, b"three"))),
      local(2, 8, 3, 1, 1), local(2, 8, 3, 1, 1), local(2, 8, 2, 0, 1))
    w("bundle-bad-len", rec(0, hdr(BUNDLE) + struct.pack("<I", 99) + eager(8, 0, 1, b"x")))
    w("bundle-nested", rec(0, bundle(bundle(eager(8, 0, 1, b"x")))))


# ---- tcp_frames: the byte stream of an established connection ----
def tcp(t, ext=b"", payload=b"", flags=0):
    return struct.pack("<BBHI", t, flags, 0, len(payload) if t in (3, 5) else 0) + ext + payload


RKEY = 0x100000001  # the harness's placeholder for its region's rkey
REGION = 0x5a0000000000


def tcp_seeds():
    w = lambda n, *fr: write("tcp_frames", n, b"".join(fr))
    core = eager(8, 0, 1, b"payload")
    w("data", tcp(3, payload=core), tcp(3, payload=core[:4] + b"x" * 3000))
    w("get-resp", tcp(5, struct.pack("<QQ", 1, 0), b"g" * 4096))
    w("get-resp-split", tcp(5, struct.pack("<QQ", 1, 0), b"g" * 1000), tcp(5, struct.pack("<QQ", 1, 1000), b"h" * 3096))
    w("get-err", tcp(6, struct.pack("<QiI", 1, -14, 0)))
    w("get-req", tcp(4, struct.pack("<QQQQ", 9, REGION + 100, RKEY, 5000)))
    w("get-req-bad", tcp(4, struct.pack("<QQQQ", 9, REGION + 65000, RKEY, 5000)))
    put = struct.pack("<BBHI", 7, 1, 0, 0) + struct.pack("<QQQQ", 3, REGION, RKEY, 2000) + b"p" * 2000
    w("put", put, tcp(3, payload=core))
    w("put-refused", struct.pack("<BBHI", 7, 0, 0, 0) + struct.pack("<QQQQ", 4, REGION, RKEY + 1, 100) + b"q" * 100)
    w("put-ack", tcp(10, struct.pack("<QiI", 3, 0, 0)), tcp(8, struct.pack("<QiI", 3, -14, 0)))
    w("goodbye", tcp(3, payload=core), tcp(9))
    w("hello", tcp(1, b"RMTC" + bytes(28)))
    w("huge-data", struct.pack("<BBHI", 3, 0, 0, 0x7fffffff))


# ---- rma_am: byte 0 picks the window (even: 4 KiB static, odd: dynamic), then the message ----
MPI_SUM, MPI_REPLACE, MPI_NO_OP, MPI_INT, MPI_DOUBLE = 0x21, 0x3C, 0x3D, 0x209, 0x214


def am(kind, tag=0, lock=0, op=0, basic=0, disp=0, nbytes=0, segs=(), data=b""):
    h = struct.pack("<BBHiQQQQII", kind, 1, lock, tag, op, basic, disp, nbytes, len(segs), 0)
    return h + b"".join(struct.pack("<qQ", o, n) for o, n in segs) + data


def rma_seeds():
    w = lambda n, win, msg: write("rma_am", n, bytes([win]) + msg)
    w("put", 0, am(1, disp=8, nbytes=16, data=b"p" * 16))
    w("put-segs", 0, am(1, disp=0, nbytes=12, segs=((0, 4), (100, 8)), data=b"s" * 12))
    w("get", 0, am(2, tag=5, disp=100, nbytes=64))
    w("get-dynamic-out", 1, am(2, tag=6, disp=0x1000, nbytes=32))
    w("acc-sum", 0, am(3, op=MPI_SUM, basic=MPI_INT, disp=0, nbytes=16, data=struct.pack("<4i", 1, 2, 3, 4)))
    w("gacc-noop", 0, am(4, tag=7, op=MPI_NO_OP, basic=MPI_DOUBLE, disp=64, nbytes=8))
    w("gacc-replace", 0, am(4, tag=8, op=MPI_REPLACE, basic=MPI_DOUBLE, disp=64, nbytes=8, data=b"r" * 8))
    w("cas", 0, am(5, tag=9, disp=16, nbytes=8, data=b"n" * 8 + b"\0" * 8))
    for n, k in (("lock", 6), ("unlock", 7)):
        w(n + "-excl", 0, am(k, tag=10, lock=1))
        w(n + "-shared", 1, am(k, tag=11, lock=2))
    w("flush", 0, am(8, tag=12))
    w("post", 0, am(9))
    w("complete", 1, am(10))
    w("bad-version", 0, am(1)[:1] + b"\x07" + am(1)[2:])
    w("short", 0, am(2)[:20])


# ---- dpm_join: the partner's message in MPI_Comm_join ----
def dpm(cards, token=b"join", status=0, ctx=100, n=None):
    h = b"RMPIDPM1" + token.ljust(24, b"\0") + struct.pack("<III", status, ctx, len(cards) if n is None else n)
    return h + b"".join(c.ljust(1024, b"\0")[:1024] for c in cards)


def dpm_seeds():
    w = lambda n, msg: write("dpm_join", n, msg)
    card = b"1badcafe.0.ffffffff:tcp=A,lo@127.0.0.1/8:40000"
    w("join", dpm([card]))
    w("join-two-rails", dpm([b"1badcafe.3.12345678:tcp=L,eth0@10.0.0.2/24:5000,eth1@10.1.0.2/24:5001"]))
    w("join-streams", dpm([b"0badf00d.1.87654321:tcp=A,eth0#0@192.168.1.5/16:7000,eth0#1@192.168.1.5/16:7001"]))
    w("wrong-token", dpm([], token=b"0123456789abcdef", status=1))
    w("ctx-high", dpm([card], ctx=0xfffffffe))
    w("other-node", dpm([b"1badcafe.2.12345678:tcp=A,lo@127.0.0.1/8:40000"]))
    w("no-card", dpm([b"garbage"]))
    w("unterminated", dpm([b"x" * 1024]))
    w("short", dpm([card])[:30])


if __name__ == "__main__":
    core_seeds()
    tcp_seeds()
    rma_seeds()
    dpm_seeds()
    sys.exit(0)
