#!/usr/bin/env python3
"""A fake OpenAI-compatible chat completions server for benchmarks (no dependencies).

POST /v1/chat/completions answers after --latency-ms with a valid judge opinion for the
persona and criterion the request asks about (the Python twin of tests/llm_support/mod.rs):

- persona: the `judge` enum of the answer schema, else "You are the X" in the system message;
- criterion: the `criterion_id` enum of the schema, else the first `backticked` word of the
  last user message;
- cited_evidence: the criterion's own ids listed in the last message ("Its own evidence ids:
  a, b.") when the schema allows them, else the first id of the schema's enum;
- `response_format` requests get the JSON in `message.content`, `tools` requests get one tool
  call carrying it. Every answer has a `usage` block.

GET /stats returns JSON counters: requests, answered, errors, by mode, in flight now, the most
in flight at once, first/last arrival times. With --log FILE every request appends one line
`arrival_s,done_s,persona,criterion` (seconds since the server started) for timeline analysis.

Binds 127.0.0.1 only. One thread per connection (ThreadingHTTPServer, HTTP/1.1 keep-alive),
so the number of concurrent requests is bounded only by the client's connections.

Usage: scripts/fake-openai-server.py --port 8089 --latency-ms 1000 [--log requests.csv]
       (--port 0 picks a free port; the chosen port is printed as "listening on PORT")
"""

import argparse
import json
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

START = time.monotonic()
LOCK = threading.Lock()
STATS = {
    "requests": 0,
    "answered": 0,
    "errors": 0,
    "json_schema": 0,
    "tool_call": 0,
    "in_flight": 0,
    "max_in_flight": 0,
    "first_arrival_s": None,
    "last_done_s": None,
    "prompt_bytes": 0,
}
PERSONAS = ("Prosecutor", "Defense", "TechLead")
SCORES = {"Prosecutor": 2, "Defense": 4, "TechLead": 3}


def text_of(message):
    """The text of a chat message (string content or a list of text parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def schema_of(body):
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        return rf.get("json_schema", {}).get("schema", {}) or {}
    tools = body.get("tools") or []
    if tools:
        return tools[0].get("function", {}).get("parameters", {}) or {}
    return {}


def enum_of(schema, prop):
    p = schema.get("properties", {}).get(prop, {})
    if prop == "cited_evidence":
        p = p.get("items", {})
    e = p.get("enum")
    return e if isinstance(e, list) else []


def opinion(body):
    messages = body.get("messages") or []
    system = next((text_of(m) for m in messages if m.get("role") == "system"), "")
    last = text_of(messages[-1]) if messages else ""
    schema = schema_of(body)

    judges = enum_of(schema, "judge")
    persona = judges[0] if judges else None
    if persona is None:
        m = re.match(r"You are the (\w+)", system)
        persona = m.group(1) if m and m.group(1) in PERSONAS else "TechLead"

    criteria = enum_of(schema, "criterion_id")
    criterion = criteria[0] if criteria else None
    if criterion is None:
        m = re.search(r"`([^`]+)`", last)
        criterion = m.group(1) if m else ""

    allowed = enum_of(schema, "cited_evidence")
    cited = []
    m = re.search(r"Its own evidence ids: ([^\n]*?)\.(?:\s|$)", last)
    if m:
        own = [i.strip() for i in m.group(1).split(",")]
        cited = [i for i in own if i in allowed][:2]
    if not cited and allowed:
        cited = [allowed[0]]

    return {
        "judge": persona,
        "criterion_id": criterion,
        "score": SCORES.get(persona, 3),
        "argument": (
            f"As the {persona} I find that the evidence for {criterion} shows the detectives "
            "fan out from START but the judges run in sequence, which only partly meets the "
            "pattern described by the rubric."
        ),
        "cited_evidence": cited,
    }


def completion(body, content):
    model = body.get("model", "bench-model")
    usage = {"prompt_tokens": 1000, "completion_tokens": 80, "total_tokens": 1080}
    tools = body.get("tools") or []
    if tools and not body.get("response_format"):
        name = tools[0].get("function", {}).get("name", "answer")
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": name, "arguments": content},
                }
            ],
        }
        finish, mode = "tool_calls", "tool_call"
    else:
        message = {"role": "assistant", "content": content}
        finish, mode = "stop", "json_schema"
    return mode, {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1"
    latency = 1.0
    log_file = None

    def log_message(self, fmt, *args):  # quiet: one line per request would flood the bench
        pass

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/") == "/stats":
            with LOCK:
                snapshot = dict(STATS)
            self.send_json(200, snapshot)
        else:
            self.send_json(404, {"error": {"message": f"no route GET {self.path}"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_json(404, {"error": {"message": f"no route POST {self.path}"}})
            return
        arrival = time.monotonic() - START
        with LOCK:
            STATS["requests"] += 1
            STATS["prompt_bytes"] += len(raw)
            STATS["in_flight"] += 1
            STATS["max_in_flight"] = max(STATS["max_in_flight"], STATS["in_flight"])
            if STATS["first_arrival_s"] is None:
                STATS["first_arrival_s"] = round(arrival, 3)
        try:
            try:
                body = json.loads(raw)
                answer = opinion(body)
            except (ValueError, AttributeError, TypeError) as e:
                with LOCK:
                    STATS["errors"] += 1
                self.send_json(400, {"error": {"message": f"bad request body: {e}"}})
                return
            time.sleep(self.latency)
            mode, value = completion(body, json.dumps(answer))
            self.send_json(200, value)
            done = time.monotonic() - START
            with LOCK:
                STATS["answered"] += 1
                STATS[mode] += 1
                STATS["last_done_s"] = round(done, 3)
                if self.log_file is not None:
                    self.log_file.write(
                        f"{arrival:.3f},{done:.3f},{answer['judge']},{answer['criterion_id']}\n"
                    )
        finally:
            with LOCK:
                STATS["in_flight"] -= 1


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=8089, help="TCP port (0: any free port)")
    ap.add_argument("--latency-ms", type=int, default=1000, help="delay before each answer")
    ap.add_argument("--log", help="append one CSV line per request to this file")
    args = ap.parse_args()
    if args.latency_ms < 0:
        ap.error("--latency-ms must be >= 0")
    Handler.latency = args.latency_ms / 1000.0
    if args.log:
        Handler.log_file = open(args.log, "a", buffering=1)
    try:
        httpd = Server(("127.0.0.1", args.port), Handler)
    except OSError as e:
        print(f"fake-openai-server: cannot listen on 127.0.0.1:{args.port}: {e}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    print(f"listening on {httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
        with LOCK:
            print(json.dumps(STATS), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
