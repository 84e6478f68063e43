#!/usr/bin/env python3
"""Generate LangGraph programs from a seed and run each under the real `langgraph`.

Used by `tests/it/graph_differential.rs` (read its module docs for what each defect kind means
and how the two sides are compared). For every program `i` this writes `OUT/p{i}/graph.py` (the
program, as a student would write it) and `OUT/p{i}/truth.json` (what LangGraph did with it),
then one line `OUT/summary.json`.

The program is run, never only read: its own `graph.py` is executed with `StateGraph` replaced
by a subclass that wraps every node and router so that it records what it received (the keys it
read and whether they were present), what it returned and in which superstep. Routers decide
on input keys (`mode_*`), loop counters (`count_*`) and flags (`flag_*`) written by nodes; every
combination of the input keys' values is run (a counter no node writes is such an input: it
starts at 0 and at its threshold), so every router outcome the program allows is exercised, and two runs of one router on the same input see the same value.

Usage: langgraph_oracle.py --seed N --count N --out DIR
Exit 3 when `langgraph` cannot be imported (the caller says so loudly).
"""

import argparse
import itertools
import json
import os
import random
import sys
import threading

try:
    import langgraph.graph as lg_graph
    from langgraph.errors import GraphRecursionError, InvalidUpdateError
    from langgraph.graph import StateGraph as _RealStateGraph
except ImportError as e:  # the caller turns this into a loud skip or a failure
    print("langgraph is not installed: %s" % e, file=sys.stderr)
    sys.exit(3)

RECURSION_LIMIT = 50
# Programs with more input combinations than this are left out: every combination must run, or
# a node that only some combination reaches would be labelled unreachable.
MAX_COMBOS = 128


# ---------------------------------------------------------------------------------------------
# generator


class Program:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        # node -> dict(writes: {key: expr}, reads: [key], whole: None|kind, log: bool)
        self.spec = {}
        self.plain = []  # (from, to)
        self.joins = []  # ([from...], to)
        self.routers = []  # dict(name, sources, kind, key, cases, default, style, threshold)
        self.entries = []  # ("edge"|"entry_point", node)
        self.cond_entry = None  # router name on START
        self.modes = {}  # input key -> values
        self.counters = []
        self.declared = {"repo_url": "str"}
        self.reducer = None  # "operator.add" | "merge" | None
        self.flags = {}
        # a dict field under a merging reducer: None, or the node that writes it and the keys
        # it puts into it (`{"info": {"k0": [...]}}`)
        self.info = None


def gen_program(seed):
    rng = random.Random(seed)
    p = Program(rng)
    k = rng.randint(3, 9)
    p.nodes = ["n%d" % i for i in range(k)]
    p.reducer = rng.choice(["operator.add", "operator.add", "merge", None])
    if p.reducer:
        p.declared["log"] = "Annotated[list, %s]" % p.reducer
    # the dict field's choices come from a generator of their own, so programs without it are
    # the ones the seed made before it was added
    irng = random.Random(seed * 7 + 3)
    if irng.random() < 0.25:
        p.declared["info"] = "Annotated[dict, %s]" % irng.choice(["operator.or_", "operator.ior"])
        keys = ["k0"] + (["k1"] if irng.random() < 0.5 else [])
        p.info = {"writer": p.nodes[0] if irng.random() < 0.8 else None, "keys": keys,
                  "in_input": irng.random() < 0.7}
    outs = ["out_%d" % i for i in range(rng.randint(1, 3))]
    for o in outs:
        p.declared[o] = "str"
    for n in p.nodes:
        p.spec[n] = {"writes": {}, "reads": [], "whole": None, "log": p.reducer is not None}
    # entries
    p.entries.append((rng.choice(["edge", "entry_point"]), p.nodes[0]))
    if rng.random() < 0.15:
        p.entries.append((rng.choice(["edge", "entry_point"]), rng.choice(p.nodes[1:])))
    counter = itertools.count()

    def new_mode(nvals):
        key = "mode_%d" % len(p.modes)
        p.modes[key] = ["v%d" % i for i in range(nvals)]
        p.declared[key] = "str"
        return key

    def outcome(i, allow_back=False):
        """A target for node i: a later node, END, or (loops) an earlier one."""
        r = rng.random()
        if r < 0.2:
            return "END"
        later = p.nodes[i + 1 :]
        if allow_back or not later:
            pool = p.nodes[: i + 1] if allow_back else []
            pool = pool + later
            return rng.choice(pool) if pool else "END"
        return rng.choice(later)

    def add_router(sources, i, kind=None):
        name = "route_%d" % next(counter)
        if kind is None and p.info and irng.random() < 0.35:
            kind = "dictguard"
        kind = kind or rng.choice(["free", "free", "guard", "counter"])
        style = rng.choice(["direct", "direct", "map", "list_map"])
        r = {"name": name, "sources": sources, "kind": kind, "style": style}
        if kind == "free":
            nvals = rng.randint(2, 3)
            r["key"] = new_mode(nvals)
            cases = []
            for v in p.modes[r["key"]]:
                if rng.random() < 0.2 and len(p.nodes) > i + 2:
                    tgts = rng.sample(p.nodes[i + 1 :], 2)
                    cases.append((v, tgts))
                else:
                    cases.append((v, [outcome(i, allow_back=rng.random() < 0.15)]))
            r["cases"] = cases
            if any(len(c[1]) > 1 for c in cases):
                r["style"] = rng.choice(["direct", "send"])
        elif kind == "dictguard":
            # a route taken only when one key of the dict field holds items
            r["key"] = "info"
            r["sub"] = irng.choice(["k0", "k1", "k2"])
            r["test"] = irng.choice(["any(v for v in items)", "items", "len(items) > 0"])
            r["cases"] = [(True, [outcome(i)]), (False, [outcome(i)])]
        elif kind == "guard":
            key = "flag_%d" % len(p.flags)
            declared = rng.random() < 0.8
            if declared:
                p.declared[key] = "bool"
            writer = rng.choice(p.nodes + [None]) if rng.random() < 0.9 else None
            p.flags[key] = writer
            if writer:
                if p.modes and rng.random() < 0.6:
                    m = rng.choice(sorted(p.modes))
                    p.spec[writer]["writes"][key] = 'state["%s"] == "v0"' % m
                else:
                    p.spec[writer]["writes"][key] = "True"
            r["key"] = key
            r["cases"] = [(True, [outcome(i)]), (False, [outcome(i)])]
        else:  # counter: a loop back to an ancestor, exit forward
            key = "count_%d" % len(p.counters)
            p.counters.append(key)
            p.declared[key] = "int"
            head = rng.randint(0, i)
            threshold = rng.randint(1, 3)
            r["key"] = key
            r["threshold"] = threshold
            r["cases"] = [("lt", [p.nodes[head]]), ("ge", [outcome(i)])]
            # who writes the counter: a node of the loop (head..i), one outside, or nobody
            how = rng.choice(["inc", "inc", "inc", "const_low", "const_high", "outside", "none"])
            loop_nodes = p.nodes[head : i + 1]
            if how in ("inc", "const_low", "const_high"):
                w = rng.choice(loop_nodes)
                p.spec[w]["writes"][key] = {
                    "inc": 'state["%s"] + 1' % key,
                    "const_low": "1" if threshold > 1 else "0",
                    "const_high": str(threshold + 1),
                }[how]
            elif how == "outside" and p.nodes[i + 1 :]:
                p.spec[rng.choice(p.nodes[i + 1 :])]["writes"][key] = 'state["%s"] + 1' % key
        p.routers.append(r)
        return r

    for i, n in enumerate(p.nodes):
        last = i == len(p.nodes) - 1
        r = rng.random()
        if last:
            if r < 0.6:
                p.plain.append((n, "END"))
            elif r < 0.8:
                add_router([n], i, kind=rng.choice(["counter", "free"]))
            continue
        if r < 0.45:
            for t in rng.sample(p.nodes[i + 1 :], min(len(p.nodes) - i - 1, rng.choice([1, 1, 2]))):
                p.plain.append((n, t))
        elif r < 0.85:
            add_router([n], i)
        elif r < 0.93:
            p.plain.append((n, rng.choice(p.nodes[i + 1 :])))
            add_router([n], i)
        else:
            p.plain.append((n, "END"))
    # a join, sometimes with a plain edge beside one of its legs
    if len(p.nodes) >= 4 and rng.random() < 0.35:
        c = rng.randint(2, len(p.nodes) - 1)
        a, b = rng.sample(p.nodes[:c], 2)
        p.joins.append(([a, b], p.nodes[c]))
        if rng.random() < 0.4:
            p.plain.append((rng.choice([a, b]), p.nodes[c]))
    # most nodes get an incoming edge (a generated graph is mostly connected)
    targets = {t for _, t in p.plain} | {t for _, t in p.joins}
    for r in p.routers:
        for _, ts in r["cases"]:
            targets.update(ts)
    for i, n in enumerate(p.nodes[1:], start=1):
        if n not in targets and rng.random() < 0.85:
            plain_sources = [m for m in p.nodes[:i] if not any(n2 == m for r in p.routers for n2 in r["sources"])]
            p.plain.append((rng.choice(plain_sources or p.nodes[:i]), n))
    # one router attached to two nodes (its runs are correlated)
    if len(p.routers) and rng.random() < 0.2:
        r = rng.choice([x for x in p.routers if x["kind"] != "counter"] or p.routers)
        if r["kind"] != "counter":
            src_index = p.nodes.index(r["sources"][0])
            others = [x for x in p.nodes[:src_index] if x not in r["sources"]]
            if others:
                r["sources"].append(rng.choice(others))
    # a conditional entry
    if rng.random() < 0.1:
        r = add_router(["START"], -1, kind="free")
        p.cond_entry = r["name"]
    # an orphan
    if rng.random() < 0.12:
        o = "n%d" % len(p.nodes)
        p.nodes.append(o)
        p.spec[o] = {"writes": {}, "reads": [], "whole": None, "log": p.reducer is not None}
        p.plain.append((o, rng.choice(p.nodes[:-1])))
    # node writes and reads
    for n in p.nodes:
        s = p.spec[n]
        if rng.random() < 0.35:
            s["writes"][rng.choice(outs)] = '"%s"' % n
        if rng.random() < 0.08:
            s["writes"]["extra_%s" % n] = '"x"'  # undeclared
        if p.info and n != p.nodes[0] and irng.random() < 0.2:
            s["reads"].append('info["%s"]' % irng.choice(["k0", "k1", "k2"]))
        if rng.random() < 0.25:
            choice = rng.random()
            if choice < 0.3:
                key = rng.choice(outs)
            elif choice < 0.5:
                key = "repo_url"
            elif choice < 0.7:
                key = "missing_%d" % rng.randint(0, 2)
                if rng.random() < 0.5:
                    p.declared[key] = "str"
            else:
                writers = [m for m in p.nodes if any(k.startswith("extra_") for k in p.spec[m]["writes"])]
                key = "extra_%s" % writers[0] if writers else "repo_url"
            s["reads"].append(key)
        if rng.random() < 0.12:
            s["whole"] = rng.choice(["return_state", "resend", "resend_plus", "dict_state", "spread"])
    return p


def render(p):
    L = []
    L.append("import operator")
    L.append("from typing import Annotated, TypedDict")
    L.append("")
    L.append("from langgraph.graph import END, START, StateGraph")
    L.append("from langgraph.types import Send")
    L.append("")
    L.append("")
    if p.reducer == "merge":
        L += ["def merge(left, right):", "    return left + right", "", ""]
    L.append("class State(TypedDict):")
    for k, t in p.declared.items():
        L.append("    %s: %s" % (k, t))
    L += ["", ""]
    for n in p.nodes:
        s = p.spec[n]
        L.append("def %s(state):" % n)
        for j, k in enumerate(s["reads"]):
            if k.startswith("info["):
                L.append('    seen_%d = state.get("info", {}).get(%s)' % (j, k[len("info["):-1]))
            else:
                L.append('    seen_%d = state.get("%s")' % (j, k))
        w = s["whole"]
        if w == "return_state":
            L.append("    return state")
        elif w == "dict_state":
            L.append("    return dict(state)")
        elif w == "spread":
            L.append('    return {**state, "repo_url": "%s"}' % n)
        elif w in ("resend", "resend_plus") and p.reducer:
            tail = ' + ["%s"]' % n if w == "resend_plus" else ""
            items = ['"log": state["log"]%s' % tail] + ['"%s": %s' % kv for kv in s["writes"].items()]
            L.append("    return {%s}" % ", ".join(items))
        else:
            items = (['"log": ["%s"]' % n] if s["log"] else []) + ['"%s": %s' % kv for kv in s["writes"].items()]
            if p.info and p.info["writer"] == n:
                items.append('"info": {%s}' % ", ".join('"%s": ["%s"]' % (k, n) for k in p.info["keys"]))
            L.append("    return {%s}" % ", ".join(items))
        L += ["", ""]
    for r in p.routers:
        label = lambda o: ("o_" + o.lower()) if r["style"] == "map" else o
        L.append("def %s(state):" % r["name"])

        def ret(targets):
            if len(targets) > 1:
                if r["style"] == "send":
                    return "return [%s]" % ", ".join('Send("%s", state)' % t for t in targets)
                return "return [%s]" % ", ".join('"%s"' % t for t in targets)
            t = targets[0]
            if t == "END" and r["style"] != "map":
                return "return END"
            return 'return "%s"' % label(t)

        if r["kind"] == "free":
            for v, targets in r["cases"][:-1]:
                L.append('    if state["%s"] == "%s":' % (r["key"], v))
                L.append("        " + ret(targets))
            L.append("    " + ret(r["cases"][-1][1]))
        elif r["kind"] == "dictguard":
            L.append('    items = state.get("info", {}).get("%s", [])' % r["sub"])
            L.append("    if %s:" % r["test"])
            L.append("        " + ret(r["cases"][0][1]))
            L.append("    " + ret(r["cases"][1][1]))
        elif r["kind"] == "guard":
            L.append('    if state.get("%s"):' % r["key"])
            L.append("        " + ret(r["cases"][0][1]))
            L.append("    " + ret(r["cases"][1][1]))
        else:
            L.append('    if state["%s"] < %d:' % (r["key"], r["threshold"]))
            L.append("        " + ret(r["cases"][0][1]))
            L.append("    " + ret(r["cases"][1][1]))
        L += ["", ""]
    L.append("g = StateGraph(State)")
    for n in p.nodes:
        L.append('g.add_node("%s", %s)' % (n, n))
    for kind, n in p.entries:
        if kind == "edge":
            L.append('g.add_edge(START, "%s")' % n)
        else:
            L.append('g.set_entry_point("%s")' % n)
    for a, b in p.plain:
        L.append('g.add_edge("%s", %s)' % (a, "END" if b == "END" else '"%s"' % b))
    for froms, to in p.joins:
        L.append("g.add_edge([%s], \"%s\")" % (", ".join('"%s"' % f for f in froms), to))
    for r in p.routers:
        targets = []
        for _, ts in r["cases"]:
            for t in ts:
                if t not in targets:
                    targets.append(t)
        for src in r["sources"]:
            s = "START" if src == "START" else '"%s"' % src
            if r["style"] == "map" and all(len(ts) == 1 for _, ts in r["cases"]):
                mp = ", ".join('"o_%s": %s' % (t.lower(), "END" if t == "END" else '"%s"' % t) for t in targets)
                L.append("g.add_conditional_edges(%s, %s, {%s})" % (s, r["name"], mp))
            elif r["style"] == "list_map" and all(len(ts) == 1 for _, ts in r["cases"]):
                lst = ", ".join("END" if t == "END" else '"%s"' % t for t in targets)
                L.append("g.add_conditional_edges(%s, %s, [%s])" % (s, r["name"], lst))
            else:
                L.append("g.add_conditional_edges(%s, %s)" % (s, r["name"]))
    L.append("app = g.compile()")
    L += ["", ""]
    inputs = {"repo_url": "https://example.com/repo"}
    if p.reducer:
        inputs["log"] = []
    for m, vals in p.modes.items():
        inputs[m] = vals[0]
    for c in p.counters:
        inputs[c] = 0
    if p.info and p.info["in_input"]:
        inputs["info"] = {}
    L.append("def main():")
    L.append("    return app.invoke(%s)" % json.dumps(inputs))
    L.append("")
    # map style labels must match what the router returns
    src = "\n".join(L)
    return src, inputs


# ---------------------------------------------------------------------------------------------
# oracle


class Recording(dict):
    """The state a node or router receives: records every key it reads."""

    def __init__(self, data, reads):
        super().__init__(data)
        self._reads = reads

    def __getitem__(self, k):
        self._reads.append((k, dict.__contains__(self, k)))
        return self._sub(k, dict.__getitem__(self, k))

    def get(self, k, default=None):
        self._reads.append((k, dict.__contains__(self, k)))
        return self._sub(k, dict.get(self, k, default))

    def _sub(self, k, v):
        # the dict field's own reads are recorded as `info["k"]`
        if k == "info" and isinstance(v, dict) and not isinstance(v, SubRecording):
            return SubRecording(v, self._reads, k)
        return v


class SubRecording(dict):
    """A dict field's value: records the keys read from it as `field["key"]`."""

    def __init__(self, data, reads, field):
        super().__init__(data)
        self._reads = reads
        self._field = field

    def __getitem__(self, k):
        self._reads.append(('%s["%s"]' % (self._field, k), dict.__contains__(self, k)))
        return dict.__getitem__(self, k)

    def get(self, k, default=None):
        self._reads.append(('%s["%s"]' % (self._field, k), dict.__contains__(self, k)))
        return dict.get(self, k, default)


def seen_keys_of(state):
    """The keys of a state, with the dict field's own keys as `info["k"]`."""
    keys = sorted(state)
    info = dict.get(state, "info") if isinstance(state, dict) else None
    if isinstance(info, dict):
        keys += ['info["%s"]' % k for k in sorted(info)]
    return keys


class Explosion(Exception):
    """More node runs than any bounded generated program makes: the run would not end."""


MAX_TASKS = 600


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.events = []  # (kind, name, step, reads, input, output)
        self.strip = set()

    def wrap_node(self, name, f):
        rec = self

        def node(state, config):
            reads = []
            step = (config.get("metadata") or {}).get("langgraph_step")
            with rec.lock:
                if len(rec.events) > MAX_TASKS:
                    raise Explosion()
            before = state.get("log")
            out = f(Recording(state, reads))
            if isinstance(out, Recording):
                out = dict(out)
            if isinstance(out, dict) and rec.strip:
                out = {k: v for k, v in out.items() if k not in rec.strip}
            doubles = False
            if isinstance(out, dict) and isinstance(out.get("log"), list) and isinstance(before, list):
                u = out["log"]
                if len(u) > 5000:
                    raise Explosion()
                # The list doubles when the node re-sends the value it received while that value
                # holds items. Comparing the update with the value it received is not enough:
                # `{"log": ["n0"]}` looks like a re-send when the log already was ["n0"] (a loop
                # ran n0 before). So the node is asked again, with the same state except that
                # the list holds markers no node writes: it re-sends the current value exactly
                # when the markers come back at the head of its update (the stubs are pure).
                if before:
                    markers = ["__probe_%d__" % i for i in range(len(before))]
                    probe = dict(state)
                    probe["log"] = list(markers)
                    again = f(Recording(probe, []))
                    if isinstance(again, Recording):
                        again = dict(again)
                    v = again.get("log") if isinstance(again, dict) else None
                    doubles = isinstance(v, list) and v[: len(markers)] == markers
            keys = sorted(out) if isinstance(out, dict) else None
            with rec.lock:
                rec.events.append(("node", name, step, reads, seen_keys_of(state), (keys, doubles)))
            return out

        node.__name__ = getattr(f, "__name__", name)
        return node

    def wrap_router(self, source, f):
        rec = self

        def router(state, config):
            reads = []
            step = (config.get("metadata") or {}).get("langgraph_step")
            out = f(Recording(state, reads))
            with rec.lock:
                rec.events.append(("router", source, step, reads, seen_keys_of(state), None))
            return out

        router.__name__ = getattr(f, "__name__", "router")
        return router


def load(src, recorder):
    """Executes the program with StateGraph wrapped; returns (compiled app, builder)."""

    class Recorded(_RealStateGraph):
        def add_node(self, node, action=None, **kw):
            if isinstance(node, str) and action is not None:
                action = recorder.wrap_node(node, action)
            return super().add_node(node, action, **kw)

        def add_conditional_edges(self, source, path, path_map=None):
            return super().add_conditional_edges(source, recorder.wrap_router(source, path), path_map)

    saved = lg_graph.StateGraph
    lg_graph.StateGraph = Recorded
    try:
        ns = {"__name__": "student_graph"}
        exec(compile(src, "graph.py", "exec"), ns)
    finally:
        lg_graph.StateGraph = saved
    return ns["app"], ns["g"]


def sccs(nodes, edges):
    succ = {n: set() for n in nodes}
    for a, b in edges:
        if a in succ and b in succ:
            succ[a].add(b)
    reach = {}
    for n in nodes:
        seen, stack = set(), list(succ[n])
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack.extend(succ[x])
        reach[n] = seen
    return {n for n in nodes if n in reach[n]}


def run_program(p, src, inputs):
    truth_runs = []
    # Every input key the graph only reads is the caller's to choose: the modes take each of
    # their values, and a counter that no node writes (so the graph never changes it) starts
    # at 0 and at its router's threshold, so both of its router's outcomes are exercised. A
    # counter some node writes is the graph's own and starts at the 0 the invocation gives.
    vary = dict(p.modes)
    for r in p.routers:
        if r["kind"] == "counter" and not any(r["key"] in p.spec[n]["writes"] for n in p.nodes):
            vary[r["key"]] = [0, r["threshold"]]
    combos = list(itertools.product(*[[(m, v) for v in vals] for m, vals in vary.items()]))
    if len(combos) > MAX_COMBOS:
        return None, ["%d input combinations (more than %d)" % (len(combos), MAX_COMBOS)]
    concurrent = set()
    concurrent_keys = set()
    strip = set()
    errors = []
    runs = []  # per combo: dict(node -> [steps]), recursion(bool), events
    rec = Recorder()
    app, builder = load(src, rec)
    for combo in combos:
        inp = dict(inputs)
        inp.update(dict(combo))
        for attempt in range(6):
            rec.events = []
            rec.strip = set(strip)
            outcome = "ok"
            try:
                for values in app.stream(inp, {"recursion_limit": RECURSION_LIMIT}, stream_mode="values"):
                    if isinstance(values, dict):
                        rec.events.append(("state", None, None, [], seen_keys_of(values), None))
            except (GraphRecursionError, Explosion):
                outcome = "recursion"
            except InvalidUpdateError as e:
                msg = str(e)
                key = msg.split("At key '", 1)[1].split("'", 1)[0] if "At key '" in msg else None
                if key is None or key in strip:
                    errors.append("invalid update without a key: %s" % msg[:200])
                    outcome = "error"
                    break
                last = max((ev[2] or 0) for ev in rec.events if ev[0] == "node")
                for ev in rec.events:
                    if ev[0] == "node" and ev[2] == last and key in (ev[5][0] or []):
                        concurrent.add(ev[1])
                concurrent_keys.add(key)
                strip.add(key)
                continue
            except Exception as e:  # a generator bug: the program is left out
                errors.append("%s: %s" % (type(e).__name__, str(e)[:300]))
                outcome = "error"
            break
        if outcome == "error":
            return None, errors
        runs.append((outcome, rec.events, builder))
    channels = set(builder.channels.keys()) if hasattr(builder, "channels") else set(p.declared)
    nodes = list(p.nodes)
    static_edges = list(p.plain)
    for froms, to in p.joins:
        static_edges += [(f, to) for f in froms]
    for r in p.routers:
        for src_ in r["sources"]:
            for _, ts in r["cases"]:
                static_edges += [(src_, t) for t in ts]
    cyclic = sccs(nodes, static_edges)
    ran = set()
    dup = set()
    loop_nodes = set()
    undeclared = set()
    doubled = set()
    seen_keys = {}  # reader -> {key: ever present}
    reads_any = set()  # keys present in some input of some function
    for outcome, events, _ in runs:
        steps = {}
        for kind, name, step, reads, inp, out in events:
            if kind == "node":
                ran.add(name)
                steps.setdefault(name, set()).add(step)
                keys, doubles = out
                for k in keys or []:
                    if k not in channels:
                        undeclared.add(name)
                if doubles:
                    doubled.add(name)
            reader = name
            for k, present in reads:
                seen_keys.setdefault(reader, {}).setdefault(k, False)
                if present:
                    seen_keys[reader][k] = True
            reads_any.update(k for k in inp)
        for n, st in steps.items():
            if len(st) >= 2 and n not in cyclic:
                dup.add(n)
        if outcome == "recursion":
            counts = {}
            for ev in events:
                if ev[0] == "node":
                    counts[ev[1]] = counts.get(ev[1], 0) + 1
            top = max(counts.values())
            loop_nodes.update(n for n, c in counts.items() if c >= max(3, top // 2))
    unreachable = [n for n in nodes if n not in ran]
    # static: nodes that never ran but whose code returns an undeclared key
    for n in nodes:
        if n not in ran and any(k not in channels for k in p.spec[n]["writes"]):
            undeclared.add(n)
    # unknown keys: a reader that runs and never sees the key; a reader that never runs, when
    # no function ever sees the key in any run
    unknown, unknown_dont_care = set(), set()
    readers = {}
    for n in nodes:
        for k in p.spec[n]["reads"]:
            # a read of a key the node writes itself (read-modify-write) is not counted
            if k not in p.spec[n]["writes"]:
                readers.setdefault(n, set()).add(k)
    for r in p.routers:
        if r["kind"] in ("guard",):
            for s in r["sources"]:
                if s != "START":
                    readers.setdefault(s + " (router)", set()).add(r["key"])
        if r["kind"] == "dictguard":
            for s in r["sources"]:
                if s != "START":
                    readers.setdefault(s + " (router)", set()).add('info["%s"]' % r["sub"])
    for reader, keys in readers.items():
        base = reader.split(" (router)")[0]
        for k in keys:
            # A key whose writes were dropped after LangGraph refused them (InvalidUpdateError,
            # see `strip`) is absent only because the oracle dropped it: real LangGraph stops
            # the run there, so what a reader of it would see is not observed.
            if k in strip:
                unknown_dont_care.add(base)
                continue
            # A router sees the update of the node it is attached to (LangGraph evaluates it on
            # the state with that node's writes applied), and generated nodes write their keys
            # on every run: a router reading a key its own node writes always finds it, even
            # when no run reaches the node (then no run could show it).
            if reader.endswith("(router)") and k in p.spec[base]["writes"]:
                continue
            want = "router" if reader.endswith("(router)") else "node"
            got = [
                present
                for _, evs, _ in runs
                for kind, name, _step, reads, _inp, _out in evs
                if kind == want and name == base
                for kk, present in reads
                if kk == k
            ]
            if got:
                if not any(got):
                    unknown.add(base)
            elif k not in reads_any:
                unknown.add(base)
            else:
                unknown_dont_care.add(base)
    control_exact = not any(
        r["key"] in strip for r in p.routers
    )
    truth = {
        "duplicate_execution": sorted(dup),
        "unreachable_node": sorted(unreachable),
        "unbounded_loop": sorted(loop_nodes),
        "undeclared_state_key": sorted(undeclared),
        "unknown_state_key": sorted(unknown),
        "unknown_state_key_dont_care": sorted(unknown_dont_care - unknown),
        "whole_state_return": sorted(doubled),
        "whole_state_return_dont_care": sorted(n for n in nodes if n not in ran),
        "concurrent_write": sorted(concurrent),
        "concurrent_keys": sorted(concurrent_keys),
        "control_exact": control_exact,
        "combos": len(combos),
    }
    return truth, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import langgraph  # noqa: F401
    from importlib.metadata import version

    made = 0
    left_out = []
    i = 0
    while made < args.count and i < args.count * 3:
        seed = args.seed * 1_000_003 + i
        i += 1
        p = gen_program(seed)
        src, inputs = render(p)
        try:
            truth, errors = run_program(p, src, inputs)
        except Exception as e:  # compile-time refusal (e.g. a dangling edge): not a program
            left_out.append({"seed": seed, "why": "%s: %s" % (type(e).__name__, str(e)[:200])})
            continue
        if truth is None:
            left_out.append({"seed": seed, "why": "; ".join(errors)[:300]})
            continue
        d = os.path.join(args.out, "p%d" % made)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "graph.py"), "w") as f:
            f.write(src)
        truth["seed"] = seed
        with open(os.path.join(d, "truth.json"), "w") as f:
            json.dump(truth, f, indent=1)
        made += 1
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"programs": made, "left_out": left_out, "langgraph": version("langgraph")}, f, indent=1)
    print("%d programs, %d left out, langgraph %s" % (made, len(left_out), version("langgraph")))


if __name__ == "__main__":
    main()
