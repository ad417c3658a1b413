#!/usr/bin/env python3
"""fake_model_server.py: a scripted OpenAI-compatible chat completions server
for tests (python3 standard library only, loopback only, no network).

Usage:
    fake_model_server.py --script FILE --port-file F [--log FILE] [--cycle]

It binds 127.0.0.1 on a free port, writes the port number to --port-file
(atomically: written to F.tmp, then renamed, so a reader never sees a partial
number) and serves POST /v1/chat/completions and POST /chat/completions.
Each such request is answered with the next step of the script; after the
last step the last one repeats (with --cycle, or "cycle": true in the
script, the steps start over instead). Other paths get 404 and use no step.
The server exits on SIGTERM/SIGINT, and by itself when the process that
started it exits (its parent pid changes), so a crashed test leaves nothing
behind.

Script: a JSON file holding either a list of steps or an object
{"steps": [...], "cycle": false}. A step is an object; its keys:

  (none of hang/truncate/raw)  a normal reply:
      "status"        HTTP status, default 200
      "content"       the assistant message content (default "")
      "content_file"  read the content from this file instead (a relative
                      path is relative to the script's directory)
      "huge_bytes"    N: the content is N bytes (lines of 'x', each ending
                      in a newline)
      "finish_reason" default "stop"
      "usage"         the usage object, default {"prompt_tokens": request
                      body bytes // 4, "completion_tokens": content bytes // 4,
                      "total_tokens": ...}; null leaves usage out
      "retry_after"   sends a "Retry-After: N" header (any status)
      "message"       for a status other than 200: the error body's
                      error.message (default "scripted error <status>")
      "delay_s"       sleep this long before answering
  "raw": "TEXT"       send TEXT as the body as it is (with "status", default
                      200), e.g. a reply that is not JSON
  "hang": true        send the status line and headers (a Content-Length of
                      1000) and then nothing until the client goes away;
                      "hang": "dribble" sends one byte of the body per second
                      instead (a reply that never finishes); "hang_s" bounds
                      the hang (default 3600)
  "truncate": N       build the normal reply, announce its full
                      Content-Length, send only its first N bytes and close
                      the connection
  "close": true       close the connection without any answer

Log (--log): one JSON object per line per request, written and flushed as
the request arrives:
  {"n": 1, "step": 0, "method": "POST", "path": "/v1/chat/completions",
   "headers": {...}, "authorization": "present"|"absent",
   "authorization_scheme": "Bearer"|"other"|null, "body": <JSON or text>}
The Authorization header's value is never written: "headers" leaves it out
and "authorization" only says whether it was there.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


class Script:
    """The steps and the shared cursor."""

    def __init__(self, path, cycle):
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict):
            self.steps = data.get("steps", [])
            self.cycle = cycle or bool(data.get("cycle", False))
        else:
            self.steps = data
            self.cycle = cycle
        if not self.steps:
            raise SystemExit("fake_model_server: %s has no steps" % path)
        self.base_dir = os.path.dirname(os.path.abspath(path))
        self.next = 0
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            i = self.next
            self.next += 1
        if self.cycle:
            i %= len(self.steps)
        else:
            i = min(i, len(self.steps) - 1)
        return i, self.steps[i]


class Log:
    def __init__(self, path):
        self.f = open(path, "a", encoding="utf-8") if path else None
        self.lock = threading.Lock()
        self.n = 0

    def write(self, record):
        with self.lock:
            self.n += 1
            record["n"] = self.n
            if self.f:
                self.f.write(json.dumps(record) + "\n")
                self.f.flush()


def reply_content(step, base_dir):
    if "huge_bytes" in step:
        n = int(step["huge_bytes"])
        line = "x" * 79 + "\n"
        return (line * (n // len(line) + 1))[:n]
    if "content_file" in step:
        p = step["content_file"]
        if not os.path.isabs(p):
            p = os.path.join(base_dir, p)
        with open(p, "r", encoding="utf-8") as f:
            return f.read()
    return step.get("content", "")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-model/1"

    def log_message(self, fmt, *args):  # quiet: the request log is the record
        pass

    def do_GET(self):
        self.send_plain(404, b'{"error": {"message": "no such path"}}')

    def send_plain(self, status, body, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path not in CHAT_PATHS:
            self.send_plain(404, b'{"error": {"message": "no such path"}}')
            return
        srv = self.server
        index, step = srv.script.take()
        auth = self.headers.get("Authorization")
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = raw.decode("utf-8", "replace")
        srv.log.write({
            "step": index,
            "method": "POST",
            "path": self.path,
            "headers": {k: v for k, v in self.headers.items() if k.lower() != "authorization"},
            "authorization": "present" if auth is not None else "absent",
            "authorization_scheme": None if auth is None else ("Bearer" if auth.startswith("Bearer ") else "other"),
            "body": body,
        })
        self.answer(step, len(raw))

    def answer(self, step, request_bytes):
        if step.get("delay_s"):
            time.sleep(float(step["delay_s"]))
        if step.get("close"):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        status = int(step.get("status", 200))
        extra = {}
        if "retry_after" in step:
            extra["Retry-After"] = str(step["retry_after"])
        if step.get("hang"):
            self.hang(status, step)
            return
        if "raw" in step:
            self.send_plain(status, step["raw"].encode("utf-8"), extra)
            return
        if status == 200:
            content = reply_content(step, self.server.script.base_dir)
            doc = {
                "id": "fake-1",
                "object": "chat.completion",
                "model": "fake",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": step.get("finish_reason", "stop"),
                }],
            }
            usage = step.get("usage", "default")
            if usage == "default":
                pt, ct = request_bytes // 4, len(content.encode("utf-8")) // 4
                usage = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
            if usage is not None:
                doc["usage"] = usage
        else:
            doc = {"error": {"message": step.get("message", "scripted error %d" % status),
                             "type": "fake_error", "code": status}}
        body = json.dumps(doc).encode("utf-8")
        if "truncate" in step:
            n = max(0, min(int(step["truncate"]), len(body) - 1))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:n])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_plain(status, body, extra)

    def hang(self, status, step):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.flush()
        end = time.monotonic() + float(step.get("hang_s", 3600))
        dribble = step.get("hang") == "dribble"
        sent = 0
        try:
            while time.monotonic() < end:
                time.sleep(1.0 if dribble else 0.2)
                if dribble and sent < 999:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    sent += 1
                elif not dribble:
                    # Notice a client that went away: a zero-byte peek is EOF.
                    self.connection.setblocking(False)
                    try:
                        if self.connection.recv(1, socket.MSG_PEEK) == b"":
                            break
                    except BlockingIOError:
                        pass
                    finally:
                        self.connection.setblocking(True)
        except OSError:
            pass
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that went away (timeouts, cut replies) is expected."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            return
        sys.stderr.write("fake_model_server: %s: %r\n" % (client_address, exc))


def watch_parent(ppid):
    while True:
        time.sleep(0.5)
        if os.getppid() != ppid:
            os._exit(0)


def main():
    ap = argparse.ArgumentParser(description="scripted OpenAI-compatible chat completions server (tests)")
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--cycle", action="store_true", help="start the steps over after the last one")
    a = ap.parse_args()

    server = Server(("127.0.0.1", 0), Handler)
    server.script = Script(a.script, a.cycle)
    server.log = Log(a.log)

    tmp = a.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % server.server_address[1])
    os.replace(tmp, a.port_file)

    def stop(signum, frame):
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    server.serve_forever(poll_interval=0.1)


if __name__ == "__main__":
    sys.exit(main())
