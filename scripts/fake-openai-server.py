#!/usr/bin/env python3
"""A fake OpenAI-compatible chat completions server for benchmarks (no dependencies).

POST /v1/chat/completions answers after --latency-ms with a valid answer for what the request
asks (the Python twin of tests/llm_support/mod.rs):

- a vision request (its schema has `diagram_type`) gets a diagram analysis;
- a judge request gets an opinion: persona from the latest message beginning "You are the X"
  (else a one-value `judge` enum, else the system message), criterion from "criterion `id`"
  (else a one-value `criterion_id` enum), cited_evidence from the question's "Its own evidence
  ids: a, b." (kept to the schema's enum when it has one);
- `response_format` requests get the JSON in `message.content`, `tools` requests get one tool
  call carrying it. Every answer has a `usage` block: prompt tokens estimated as characters / 4
  of the schema and the messages' text, plus 85 + 170 per 512-px tile of each PNG image.

With --cache the server plays a provider's prefix cache: a request's `cached_tokens` are the
longest prefix (schema first, then the messages, as providers lay them out) it shares with a
request whose answer was already sent, in blocks of 128 tokens from 1024 up; 0 otherwise.

GET /stats returns JSON counters: requests, answered, errors, by mode, in flight now, the most
in flight at once, first/last arrival times, prompt and cached tokens. With --log FILE every
request appends one line `arrival_s,done_s,persona,criterion` (seconds since the server started)
for timeline analysis; with --dump DIR every request body is written to DIR/NNNN.json.

Binds 127.0.0.1 only. One thread per connection (ThreadingHTTPServer, HTTP/1.1 keep-alive),
so the number of concurrent requests is bounded only by the client's connections.

Usage: scripts/fake-openai-server.py --port 8089 --latency-ms 1000 [--log requests.csv]
       [--dump DIR] [--cache]
       (--port 0 picks a free port; the chosen port is printed as "listening on PORT")
"""

import argparse
import base64
import json
import math
import os
import struct
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
    "prompt_tokens": 0,
    "cached_tokens": 0,
}
CACHE = []  # canonical prompts of answered requests (with --cache)
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


def messages_text(body):
    return [text_of(m) for m in body.get("messages") or []]


def persona_of(body, schema):
    for t in reversed(messages_text(body)):
        m = re.match(r"You are the (\w+)", t)
        if m and m.group(1) in PERSONAS:
            return m.group(1)
    judges = enum_of(schema, "judge")
    return judges[0] if len(judges) == 1 else "TechLead"


def criterion_of(body, schema):
    for t in reversed(messages_text(body)):
        m = re.search(r"criterion `([^`]+)`", t)
        if m:
            return m.group(1)
    criteria = enum_of(schema, "criterion_id")
    return criteria[0] if len(criteria) == 1 else ""


def opinion(body):
    schema = schema_of(body)
    if "diagram_type" in schema.get("properties", {}):
        return {
            "diagram_type": "langgraph_state_machine",
            "shows_parallel_detectives": True,
            "shows_evidence_aggregation": True,
            "shows_parallel_judges": True,
            "shows_synthesis": True,
            "flow_description": "START fans out to the detectives, which join at an "
            "aggregator; three judges run in parallel into the Chief Justice.",
        }
    persona = persona_of(body, schema)
    criterion = criterion_of(body, schema)
    allowed = enum_of(schema, "cited_evidence")
    cited = []
    for t in reversed(messages_text(body)):
        m = re.search(r"Its own evidence ids: ([^\n]*?)\.(?:\s|$)", t)
        if m:
            own = [i.strip() for i in m.group(1).split(",") if i.strip() and " " not in i.strip()]
            cited = [i for i in own if not allowed or i in allowed][:2]
            break
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


def image_tokens(url):
    """85 + 170 per 512-px tile of a PNG data URL (OpenAI's high-detail estimate)."""
    try:
        head = base64.b64decode(url.split(",", 1)[1][:48])
        w, h = struct.unpack(">II", head[16:24])
    except (ValueError, IndexError, struct.error):
        return 85
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def canonical(body):
    """The prompt as a provider lays it out: the schema, then each message."""
    parts = [json.dumps(schema_of(body), sort_keys=True)]
    for m in body.get("messages") or []:
        parts.append(f"<|{m.get('role')}|>{text_of(m)}")
    return "\n".join(parts)


def prompt_tokens(body):
    tokens = len(canonical(body)) // 4
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list):
            for p in content:
                if isinstance(p, dict) and p.get("type") == "image_url":
                    tokens += image_tokens(p.get("image_url", {}).get("url", ""))
    return max(tokens, 1)


def cached_tokens(prompt):
    best = 0
    with LOCK:
        seen = list(CACHE)
    for other in seen:
        n = len(os.path.commonprefix([prompt, other]))
        best = max(best, n)
    tokens = best // 4
    return (tokens // 128) * 128 if tokens >= 1024 else 0


def completion(body, content, prompt=1000, cached=0):
    model = body.get("model", "bench-model")
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": 80,
        "total_tokens": prompt + 80,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
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
    dump_dir = None
    cache = False

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
            seq = STATS["requests"]
            STATS["prompt_bytes"] += len(raw)
            STATS["in_flight"] += 1
            STATS["max_in_flight"] = max(STATS["max_in_flight"], STATS["in_flight"])
            if STATS["first_arrival_s"] is None:
                STATS["first_arrival_s"] = round(arrival, 3)
        try:
            try:
                body = json.loads(raw)
                answer = opinion(body)
                prompt = canonical(body)
                tokens = prompt_tokens(body)
                cached = cached_tokens(prompt) if self.cache else 0
                if self.dump_dir is not None:
                    with open(os.path.join(self.dump_dir, f"{seq:04d}.json"), "wb") as f:
                        f.write(raw)
            except (ValueError, AttributeError, TypeError) as e:
                with LOCK:
                    STATS["errors"] += 1
                self.send_json(400, {"error": {"message": f"bad request body: {e}"}})
                return
            time.sleep(self.latency)
            mode, value = completion(body, json.dumps(answer), tokens, cached)
            self.send_json(200, value)
            done = time.monotonic() - START
            with LOCK:
                if self.cache:
                    CACHE.append(prompt)
                STATS["prompt_tokens"] += tokens
                STATS["cached_tokens"] += cached
                STATS["answered"] += 1
                STATS[mode] += 1
                STATS["last_done_s"] = round(done, 3)
                if self.log_file is not None:
                    self.log_file.write(
                        f"{arrival:.3f},{done:.3f},{answer.get('judge', 'vision')},"
                        f"{answer.get('criterion_id', '')}\n"
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
    ap.add_argument("--dump", help="write every request body to this directory (NNNN.json)")
    ap.add_argument("--cache", action="store_true", help="simulate a provider's prefix cache")
    args = ap.parse_args()
    if args.latency_ms < 0:
        ap.error("--latency-ms must be >= 0")
    Handler.latency = args.latency_ms / 1000.0
    if args.log:
        Handler.log_file = open(args.log, "a", buffering=1)
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        Handler.dump_dir = args.dump
    Handler.cache = args.cache
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
