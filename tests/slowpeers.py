#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Slow and idle HTTP clients, as an unprivileged user could hold them.

    slowpeers.py HOST PORT N --from ADDR[,ADDR...] --seconds S

Holds N connections to HOST:PORT, spread over the source addresses given:
half of them idle, the other half sending a request one byte every 5 s (its
headers never end).  A connection the server cuts is opened again (at most N
a second).  Prints "ready" once N were opened (past the server's
per-address limit they push each other out), and at the end (S seconds, or
a SIGTERM before) "opened O cut C held H": connections opened, cut by the
server, still held.
"""
import argparse
import resource
import selectors
import signal
import socket
import time

REQ = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4096


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("n", type=int)
    ap.add_argument("--from", dest="src", default="127.0.0.1")
    ap.add_argument("--seconds", type=float, default=10)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, a.n + 256), hard))
    srcs = a.src.split(",")
    sel = selectors.DefaultSelector()
    conns = {}  # sock -> [slot, bytes sent, next send time]
    opened = cut = 0
    missing = list(range(a.n))

    def open_one(slot):
        nonlocal opened
        s = socket.socket()
        s.bind((srcs[slot % len(srcs)], 0))
        s.setblocking(False)
        try:
            s.connect((a.host, a.port))
        except BlockingIOError:
            pass
        conns[s] = [slot, 0, time.monotonic() + 1]
        sel.register(s, selectors.EVENT_READ)
        opened += 1

    end = time.monotonic() + a.seconds
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ready = False
    budget, refill = 0, 0.0
    while time.monotonic() < end and not stop:
        if time.monotonic() >= refill:  # N a second, a tenth every 0.1 s
            budget, refill = max(1, a.n // 10), time.monotonic() + 0.1
        while missing and budget:
            open_one(missing.pop())
            budget -= 1
        if not ready and opened >= a.n:
            print("ready", flush=True)
            ready = True
        for key, _ in sel.select(0.1):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                sel.unregister(s)
                slot = conns.pop(s)[0]
                s.close()
                cut += 1
                missing.append(slot)
        now = time.monotonic()
        for s, st in list(conns.items()):
            if st[0] % 2 == 0 or now < st[2] or st[1] >= len(REQ):
                continue
            try:
                s.send(REQ[st[1]:st[1] + 1])
                st[1] += 1
            except OSError:
                pass
            st[2] = now + 5
    print("opened %d cut %d held %d" % (opened, cut, len(conns)), flush=True)


if __name__ == "__main__":
    main()
