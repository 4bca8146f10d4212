"""A fake OpenAI-compatible streaming server whose latency grows with the offered load
in a known way, so a capacity search against it has a known answer.

Model: at each request's arrival the server estimates the offered rate R as
(n - 1) / span over the n arrivals of the last --window seconds (this one included;
R = 0 when n < 2), exact for evenly spaced arrivals. It then waits TTFT = a * R before
the first token and streams max_tokens tokens (--max-tokens caps it) --gap seconds
apart. With a TTFT SLO limit L the highest rate that meets it is therefore L / a.
With --slow-every N, every N-th request (the 1st, the N+1-th, ...) waits --slow seconds
more before its first token: a rare outlier, as a cold cache or a GC pause makes one.

It serves GET /v1/models and POST /v1/chat/completions and /v1/completions with
"stream": true as server-sent events in OpenAI's chunk format: one chunk per token
(choices[0].delta.content, or choices[0].text for completions), a last chunk with
finish_reason "length", a usage chunk when stream_options.include_usage is set (its
prompt_tokens count the prompt's words), then `data: [DONE]`. The body is sent with
chunked transfer encoding, one HTTP chunk per event, so a client sees every token when
it is written.

It binds 127.0.0.1 on a port the system picks, prints "port N" on stdout, and exits by
itself after --idle-exit seconds without a request or --lifetime seconds in all.

usage: python3 fake_server.py [--a 0.02] [--window 2] [--gap 0.02] [--max-tokens 64]
                              [--slow-every 0] [--slow 5] [--idle-exit 30] [--lifetime 300]
"""
import argparse
import collections
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "fake-model"


class RateEstimator:
    """The offered rate from the arrival times of the last `window` seconds."""

    def __init__(self, window):
        self.window = window
        self.arrivals = collections.deque()
        self.lock = threading.Lock()
        self.last_arrival = time.monotonic()

    def arrive(self):
        """Records an arrival now; returns the rate estimate including it (req/s)."""
        now = time.monotonic()
        with self.lock:
            self.last_arrival = now
            self.arrivals.append(now)
            while self.arrivals[0] < now - self.window:
                self.arrivals.popleft()
            n = len(self.arrivals)
            return (n - 1) / (now - self.arrivals[0]) if n >= 2 and now > self.arrivals[0] else 0.0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked transfer encoding needs 1.1

    def setup(self):
        super().setup()
        # Each event is a small write; without this Nagle's algorithm may hold one back
        # until the client acknowledges the previous one, adding delay to the gaps.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):  # quiet: a load test sends thousands of requests
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def do_GET(self):
        if self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "fake"}]})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self):
        rate = self.server.rates.arrive()
        extra = self.server.outlier_delay()
        chat = self.path == "/v1/chat/completions"
        if not chat and self.path != "/v1/completions":
            return self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            tokens = min(int(req.get("max_tokens", 16)), self.server.max_tokens)
            prompt = req.get("prompt") or " ".join(str(m.get("content", "")) for m in req.get("messages", []))
        except (ValueError, TypeError, AttributeError) as e:
            return self.send_json(400, {"error": {"message": f"bad request: {e}", "type": "invalid_request"}})
        if not req.get("stream"):
            return self.send_json(400, {"error": {"message": "only stream=true is served", "type": "invalid_request"}})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            self.stream(chat, req, len(str(prompt).split()), tokens, self.server.a * rate + extra)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up

    def event(self, obj):
        data = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))  # one HTTP chunk, one write

    def stream(self, chat, req, prompt_tokens, tokens, ttft):
        kind = "chat.completion.chunk" if chat else "text_completion"
        base = {"id": "fake-1", "object": kind, "created": int(time.time()), "model": MODEL}

        def chunk(text, finish=None):
            body = {"delta": {"content": text}} if chat else {"text": text}
            return dict(base, choices=[dict(index=0, finish_reason=finish, **body)])

        time.sleep(ttft)
        for i in range(tokens):
            if i:
                time.sleep(self.server.gap)
            self.event(chunk(f" t{i}"))
        self.event(chunk("", "length"))
        if (req.get("stream_options") or {}).get("include_usage"):
            self.event(dict(base, choices=[], usage={"prompt_tokens": prompt_tokens, "completion_tokens": tokens,
                                                     "total_tokens": prompt_tokens + tokens}))
        self.event(b"[DONE]")
        self.wfile.write(b"0\r\n\r\n")


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # bursts of connections must not be refused

    def __init__(self, a, window, gap, max_tokens, slow_every=0, slow=0.0):
        super().__init__(("127.0.0.1", 0), Handler)
        self.a, self.gap, self.max_tokens = a, gap, max_tokens
        self.rates = RateEstimator(window)
        self.slow_every, self.slow = slow_every, slow
        self.posts = 0
        self.posts_lock = threading.Lock()

    def outlier_delay(self):
        """Counts a request; the extra TTFT seconds it gets (--slow for every --slow-every-th)."""
        with self.posts_lock:
            self.posts += 1
            return self.slow if self.slow_every > 0 and (self.posts - 1) % self.slow_every == 0 else 0.0


def stop_when_idle(server, idle_exit, lifetime):
    """Shuts `server` down after idle_exit s without an arrival or lifetime s in all."""
    start = time.monotonic()
    while True:
        time.sleep(0.5)
        now = time.monotonic()
        if now - server.rates.last_arrival > idle_exit or now - start > lifetime:
            server.shutdown()
            return


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", type=float, default=0.02, help="seconds of TTFT per req/s of offered rate")
    p.add_argument("--window", type=float, default=2.0, help="seconds of arrivals the rate is estimated over")
    p.add_argument("--gap", type=float, default=0.02, help="seconds between streamed tokens")
    p.add_argument("--max-tokens", type=int, default=64, help="most tokens streamed per request")
    p.add_argument("--slow-every", type=int, default=0, help="every N-th request is slow (0: none)")
    p.add_argument("--slow", type=float, default=5.0, help="extra TTFT seconds of a slow request")
    p.add_argument("--idle-exit", type=float, default=30.0, help="exit after this many seconds without a request")
    p.add_argument("--lifetime", type=float, default=300.0, help="exit after this many seconds in all")
    args = p.parse_args()
    server = FakeServer(args.a, args.window, args.gap, args.max_tokens, args.slow_every, args.slow)
    threading.Thread(target=stop_when_idle, args=(server, args.idle_exit, args.lifetime), daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
