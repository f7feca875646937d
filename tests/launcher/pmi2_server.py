#!/usr/bin/env python3
"""A scripted PMI-2 server, as Slurm's mpi/pmi2 plugin speaks it, for the PMI-2 client tests.

usage: pmi2_server.py MODE NRANKS [--listen ADDR:PORT LOCAL] PROGRAM [ARGS...]
       pmi2_server.py connect ADDR:PORT RANK NRANKS PROGRAM [ARGS...]
Starts NRANKS copies of PROGRAM with PMI_FD (one end of a socketpair), PMI_RANK, PMI_SIZE and
PMI_JOBID, serves them, and exits with the worst exit status of the ranks (128+N for a
signal). With --listen, only the ranks of the comma list LOCAL start here; the others are
started on other hosts by "connect", whose PMI_FD is a TCP connection to ADDR:PORT (the
server learns their rank from fullinit), so one server spans several hosts as Slurm's step
daemons do together. MODE "good" serves correctly (key-value space, fence, names; spawn is refused);
the other modes break the server at one point to check that the client says so and ends:
  badlen   the fullinit reply's length field is not a number
  hugelen  the fullinit reply announces 999999 bytes
  nosemi   the fullinit reply's last pair has no ';'
  nul      the fullinit reply holds a NUL byte
  close    the connection is closed after init
  silent   fullinit gets no reply at all (the client's RMPI_PMI_TIMEOUT must end it)
  pmi1     init is answered as a PMI-1-only server (pmi_version=1)
  wrongcmd fullinit is answered with another command
  words    the fullinit reply holds more pairs than the client accepts
"""
import os
import selectors
import socket
import subprocess
import sys
import time

JOBID = "pmi2test.0"
if sys.argv[1] == "connect":
    host, port = sys.argv[2].rsplit(":", 1)
    for attempt in range(100):  # the server on the other host may not listen yet
        try:
            sock = socket.create_connection((host, int(port)))
            break
        except OSError:
            if attempt == 99:
                raise
            time.sleep(0.1)
    sock.set_inheritable(True)
    os.environ.update(PMI_FD=str(sock.fileno()), PMI_RANK=sys.argv[3], PMI_SIZE=sys.argv[4], PMI_JOBID=JOBID)
    os.execvp(sys.argv[5], sys.argv[5:])
mode, n, prog = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
listener, local = None, list(range(n))
if prog[0] == "--listen":
    host, port = prog[1].rsplit(":", 1)
    listener = socket.create_server((host, int(port)))
    local = [int(r) for r in prog[2].split(",")]
    prog = prog[3:]
kvs, pending, names = {}, {}, {}
fence_waiters, finalized = [], set()
procs, conns = [], {}
sel = selectors.DefaultSelector()


def frame(body):
    return ("%-6d" % len(body)).encode() + body.encode()


class Conn:
    def __init__(self, sock, rank):
        self.sock, self.rank, self.buf, self.inited = sock, rank, b"", False

    def send(self, data):
        self.sock.sendall(data)

    def reply(self, body):
        self.send(frame(body))


def parse(body):
    pairs = {}
    for part in body.split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            pairs.setdefault(k, v)
    return pairs


def serve(c, body):
    p = parse(body)
    cmd = p.get("cmd")
    if cmd == "fullinit":
        if c.rank is None and p.get("pmirank", "").isdigit() and int(p["pmirank"]) not in conns:
            c.rank = int(p["pmirank"])  # a remote rank (connect)
            conns[c.rank] = c
        ok = "rank=%d;size=%d;appnum=-1;debugged=FALSE;pmiverbose=FALSE;" % (c.rank if c.rank is not None else -1, n)
        if mode == "silent":
            return
        if mode == "badlen":
            return c.send(b"abcdef" + ("cmd=fullinit-response;rc=0;" + ok).encode())
        if mode == "hugelen":
            return c.send(b"999999cmd=fullinit-response;")
        if mode == "nosemi":
            return c.reply("cmd=fullinit-response;rc=0;" + ok + "pmi-version=2")
        if mode == "nul":
            return c.reply("cmd=fullinit-response;rc=0;\0" + ok)
        if mode == "wrongcmd":
            return c.reply("cmd=kvs-get-response;rc=0;")
        if mode == "words":
            return c.reply("cmd=fullinit-response;rc=0;" + "x=1;" * 40 + ok)
        if str(c.rank) != p.get("pmirank") or p.get("pmijobid") != JOBID or p.get("threaded") is None:
            return c.reply("cmd=fullinit-response;rc=3;errmsg=bad fullinit;")
        return c.reply("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;" + ok)
    if cmd == "job-getid":
        return c.reply("cmd=job-getid-response;rc=0;jobid=%s;" % JOBID)
    if cmd == "kvs-put":
        pending[p["key"]] = p["value"]
        return c.reply("cmd=kvs-put-response;rc=0;")
    if cmd == "kvs-fence":
        fence_waiters.append(c)
        if len(fence_waiters) == n - len(finalized):
            kvs.update(pending)
            pending.clear()
            for w in fence_waiters:
                w.reply("cmd=kvs-fence-response;rc=0;")
            fence_waiters.clear()
        return
    if cmd == "kvs-get":
        if p.get("jobid") != JOBID:
            return c.reply("cmd=kvs-get-response;rc=1;found=FALSE;")
        v = kvs.get(p.get("key"))
        return c.reply("cmd=kvs-get-response;rc=0;" + ("found=TRUE;value=%s;" % v if v is not None else "found=FALSE;"))
    if cmd == "name-publish":
        if p["name"] in names:
            return c.reply("cmd=name-publish-response;rc=1;")
        names[p["name"]] = p["port"]
        return c.reply("cmd=name-publish-response;rc=0;")
    if cmd == "name-unpublish":
        rc = 0 if names.pop(p["name"], None) is not None else 1
        return c.reply("cmd=name-unpublish-response;rc=%d;" % rc)
    if cmd == "name-lookup":
        if p["name"] in names:
            return c.reply("cmd=name-lookup-response;rc=0;value=%s;" % names[p["name"]])
        return c.reply("cmd=name-lookup-response;rc=1;")
    if cmd == "spawn":
        # not served; the reason echoes what was parsed, in Slurm's order of pairs
        pairs = [kv.split("=", 1) for kv in body.split(";") if "=" in kv]
        keys = [k for k, _ in pairs]
        got = "ncmds=%s preput=%s subcmds=%d maxprocs=%s argv=%s" % (
            p.get("ncmds"), p.get("ppkey0"), keys.count("subcmd"),
            ",".join(v for k, v in pairs if k == "maxprocs"),
            ",".join(v for k, v in pairs if k.startswith("argv")))
        return c.reply("cmd=spawn-response;rc=14;errmsg=not served here (%s);" % got)
    if cmd == "finalize":
        c.reply("cmd=finalize-response;rc=0;")
        finalized.add(c.rank)
        return
    if cmd == "abort":
        print("server: rank %d aborts the job" % c.rank, flush=True)
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
        return
    print("server: unknown command %r" % body, file=sys.stderr, flush=True)
    c.reply("cmd=%s-response;rc=14;errmsg=unknown command;" % cmd)


def feed(c):
    try:
        data = c.sock.recv(65536)
    except OSError:
        data = b""
    if not data:
        sel.unregister(c.sock)
        c.sock.close()
        conns.pop(c.rank, None)
        if c.rank is not None and c.rank not in finalized and listener:
            print("server: remote rank %s closed its connection" % c.rank, flush=True)
            remote_failed.append(c.rank)
        return
    c.buf += data
    while True:
        if not c.inited:
            if b"\n" not in c.buf:
                return
            line, c.buf = c.buf.split(b"\n", 1)
            if line != b"cmd=init pmi_version=2 pmi_subversion=0":
                print("server: bad init line %r" % line, file=sys.stderr, flush=True)
            if mode == "pmi1":
                c.send(b"cmd=response_to_init rc=-1 pmi_version=1 pmi_subversion=1\n")
                continue
            c.send(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n")
            c.inited = True
            if mode == "close":
                sel.unregister(c.sock)
                c.sock.close()
                conns.pop(c.rank, None)
                return
            continue
        if len(c.buf) < 6:
            return
        ln = int(c.buf[:6])
        if len(c.buf) < 6 + ln:
            return
        body, c.buf = c.buf[6:6 + ln].decode(), c.buf[6 + ln:]
        serve(c, body)


remote_failed = []
for r in local:
    mine, theirs = socket.socketpair()
    env = dict(os.environ, PMI_FD=str(theirs.fileno()), PMI_RANK=str(r), PMI_SIZE=str(n), PMI_JOBID=JOBID)
    procs.append(subprocess.Popen(prog, env=env, pass_fds=[theirs.fileno()]))
    theirs.close()
    conns[r] = Conn(mine, r)
    sel.register(mine, selectors.EVENT_READ, conns[r])

if listener:
    sel.register(listener, selectors.EVENT_READ, None)
# with remote ranks: until every rank finalized or one failed
while any(pr.poll() is None for pr in procs) or (listener and len(finalized) < n and not remote_failed):
    for key, _ in sel.select(timeout=0.1):
        if key.data is None:
            s2, _ = listener.accept()
            c = Conn(s2, None)
            sel.register(s2, selectors.EVENT_READ, c)
        else:
            feed(key.data)
worst = 0
for pr in procs:
    rc = pr.wait()
    rc = 128 - rc if rc < 0 else rc
    worst = max(worst, rc)
sys.exit(worst or (1 if remote_failed else 0))
