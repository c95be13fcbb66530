"""A replay chat-completions server for bench/trex_harness.bench.sh: answers every request of an OpenAI-compatible
client with the response recorded for that item, so that another harness scores exactly the responses that
`trex eval --responses` scores.

  python3 replay_server.py RESPONSES_DIR BENCHMARKS_DIR PORT_FILE
RESPONSES_DIR holds <variant>.jsonl files (bench/oracle_responses.py). The request's `model` names
"<variant>.<benchmark>" (benchmark b4o_feasible or b4o_orgeval); the item is the one whose problem statement the
request's messages contain (every statement of a benchmark is unique; checked at start). No recorded response
gives an empty completion. Listens on 127.0.0.1, a free port written to PORT_FILE; stops on SIGTERM.
"""
import glob
import http.server
import json
import os
import sys
import threading

FILES = {"b4o_feasible": "bench4opt_feasible.jsonl", "b4o_orgeval": "bench4opt_orgeval.jsonl"}


def main():
    responses_dir, data_dir, port_file = sys.argv[1:4]
    problems = {}
    for bench, name in FILES.items():
        with open(os.path.join(data_dir, name), encoding="utf-8") as f:
            recs = [json.loads(line) for line in f if line.strip()]
        if len({r["problem"] for r in recs}) != len(recs):
            raise SystemExit(f"{name}: problem statements are not unique; the replay cannot tell items apart")
        problems[bench] = [(r["problem"], r["id"]) for r in recs]
    answers = {}
    for path in glob.glob(os.path.join(responses_dir, "*.jsonl")):
        variant = os.path.basename(path)[:-len(".jsonl")]
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                answers[(variant, r["benchmark"], r["id"])] = r["response"]
    lock = threading.Lock()
    served = {"hits": 0, "misses": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            model = str(body.get("model", ""))
            variant, _, bench = model.rpartition(".")
            text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
            item = next((i for p, i in problems.get(bench, []) if p in text), None)
            content = answers.get((variant, bench, item), "")
            with lock:
                served["hits" if content else "misses"] += 1
            out = json.dumps({"id": "replay", "object": "chat.completion", "created": 0, "model": model,
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": content}}],
                              "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    import signal
    signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=server.shutdown).start())
    server.serve_forever()
    print(f"replay server: {served['hits']} responses served, {served['misses']} requests without one",
          file=sys.stderr)


if __name__ == "__main__":
    main()
