"""Holds K concurrent streaming connections against `deepbatch serve` and reports how
many were served (response head received; first token received), and the server's
thread count, resident memory and open descriptors from /proc (when all K streams
were open, and the peaks). Not a test. Streams that finish stay open as idle
keep-alive connections until the server's idle timeout.

    python3 bench/server_connections.py --url http://127.0.0.1:8000 --pid PID -k 2000
    python3 bench/server_connections.py --binary build/deepbatch -k 2000   # starts its own server
"""
import argparse
import asyncio
import json
import os
import sys
import time
from urllib.parse import urlparse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e", "common"))


def proc_status(pid):
    """(threads, VmRSS in MiB, open fds) of process `pid`."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024, fds


async def one_stream(host, port, i, args, state, release):
    body = json.dumps({"prompt": f"Client {i} says", "max_tokens": args.max_tokens, "ignore_eos": True,
                       "stream": True}).encode()
    req = (f"POST /v1/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), args.connect_timeout)
    except (OSError, asyncio.TimeoutError):
        state["connect_failed"] += 1
        return
    state["connected"] += 1
    try:
        writer.write(req)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), args.hold)
        if not head.startswith(b"HTTP/1.1 200"):
            state["status_" + head[9:12].decode()] = state.get("status_" + head[9:12].decode(), 0) + 1
            return
        state["head"] += 1
        deadline = state["t0"] + args.hold
        buf = b""
        while b"data: {" not in buf:
            buf += await asyncio.wait_for(reader.read(4096), max(0.1, deadline - time.monotonic()))
        state["first_token"] += 1
        await release.wait()  # hold the connection open until the measurement is taken
    except (asyncio.TimeoutError, asyncio.IncompleteReadError, OSError):
        pass
    finally:
        writer.close()


async def run(args, host, port, pid):
    state = {"connected": 0, "connect_failed": 0, "head": 0, "first_token": 0, "t0": time.monotonic()}
    release = asyncio.Event()
    tasks = [asyncio.create_task(one_stream(host, port, i, args, state, release)) for i in range(args.k)]
    peak = [0, 0.0, 0]
    at_all_heads = None  # (seconds, threads, RSS MiB, fds) when every connection had its 200 stream head
    while time.monotonic() - state["t0"] < args.hold:
        await asyncio.sleep(0.5)
        now = proc_status(pid) if pid else (0, 0.0, 0)
        peak = [max(a, b) for a, b in zip(peak, now)]
        if at_all_heads is None and state["head"] + state["connect_failed"] >= args.k:
            at_all_heads = (time.monotonic() - state["t0"], *now)
        if state["first_token"] + state["connect_failed"] >= args.k:
            break
    elapsed = time.monotonic() - state["t0"]
    release.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return state, at_all_heads, peak, elapsed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", help="base URL of a running server")
    p.add_argument("--pid", type=int, help="its process id (for threads and RSS)")
    p.add_argument("--binary", help="start this deepbatch instead (with the default model)")
    p.add_argument("--source-dir", default=os.path.join(os.path.dirname(__file__), ".."))
    p.add_argument("-k", type=int, default=2000, help="concurrent streaming connections")
    p.add_argument("--hold", type=float, default=120, help="seconds to wait for every stream's first token")
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--connect-timeout", type=float, default=30)
    p.add_argument("--server-args", default="--max-num-seqs 256 --max-queued-requests 0 --kv-cache-memory 512M")
    args = p.parse_args()
    proc = None
    if args.binary:
        from server_fixture import start_server, stop_server
        proc, url = start_server(args.binary, args.source_dir, args.server_args.split())
        pid = proc.pid
    else:
        url, pid = args.url, args.pid
    try:
        u = urlparse(url)
        idle = proc_status(pid) if pid else None
        state, at_heads, peak, elapsed = asyncio.run(run(args, u.hostname, u.port, pid))
        print(f"connections: {args.k} opened, {state['connected']} connected, {state['connect_failed']} failed")
        print(f"served: {state['head']} got the 200 stream head, {state['first_token']} got their first token "
              f"within {elapsed:.1f} s")
        others = {k: v for k, v in state.items() if k.startswith("status_")}
        if others:
            print(f"other statuses: {others}")
        if pid:
            print(f"server idle: {idle[0]} threads, {idle[1]:.0f} MiB RSS, {idle[2]} fds")
            if at_heads:
                print(f"all {args.k} streams open after {at_heads[0]:.1f} s: {at_heads[1]} threads, "
                      f"{at_heads[2]:.0f} MiB RSS, {at_heads[3]} fds")
            print(f"peak: {peak[0]} threads, {peak[1]:.0f} MiB RSS, {peak[2]} fds")
    finally:
        if proc:
            stop_server(proc)


if __name__ == "__main__":
    main()
