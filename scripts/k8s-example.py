#!/usr/bin/env python3
"""The Kubernetes example of docs/sidecar.md, for scripts/test-container's kubernetes phase.

    k8s-example.py spec DOCS                     the example's respdecode container as JSON: args, port, probe and
                                                 metrics paths, token mount, and what in it disagrees with itself
    k8s-example.py ask SPEC TOKEN BODY PID OUT   from inside the network namespace of process PID (the pod), as the
                                                 kubelet and Prometheus would: the probes without the token, /metrics
                                                 without and with it, POST /decode of BODY with it; writes
                                                 OUT/k8s.json and OUT/capture.http.k8s (the lines)
    k8s-example.py verdict OUT/k8s.json          what is wrong in the answers, or nothing
"""
import ctypes
import json
import os
import re
import socket
import sys
import time


def spec(docs):
    text = open(docs).read()
    section = text.split("### Kubernetes with the HTTP API", 1)[1]
    yaml = section.split("```yaml", 1)[1].split("```", 1)[0]
    container = yaml.split("- name: respdecode", 1)[1]
    args = json.loads(re.search(r"args: (\[.*?\])", container, re.S).group(1))
    port_name, port = re.search(r"- \{ name: (\w+), containerPort: (\d+) \}", container).groups()

    def probe(kind):
        return re.search(kind + r":\s*\n\s*httpGet: \{ path: (\S+), port: (\w+) \}", container).groups()

    ready, live = probe("readinessProbe"), probe("livenessProbe")
    annotations = dict(re.findall(r'prometheus\.io/(\w+): "?([^"\n]+?)"?\n', yaml))
    token_path = args[args.index("--auth-token-file") + 1]
    mount = re.search(r"- \{ name: respdecode-token, mountPath: (\S+), readOnly: true \}", container).group(1)
    problems = []
    if ready[1] != port_name or live[1] != port_name:
        problems.append("a probe names another port")
    if annotations.get("port") != port:
        problems.append(f"prometheus.io/port {annotations.get('port')} is not {port}")
    if annotations.get("scrape") != "true":
        problems.append("prometheus.io/scrape is not true")
    if not token_path.startswith(mount + "/"):
        problems.append(f"the token {token_path} is not in the mount {mount}")
    if f":{port}" not in args[args.index("--http") + 1]:
        problems.append(f"--http does not listen on {port}")
    print(json.dumps({"args": args, "port": int(port), "ready": ready[0], "live": live[0],
                      "metrics": annotations.get("path", "/metrics"), "mount": mount,
                      "token": token_path[len(mount) + 1:], "problems": problems}))


def ask(spec_text, token_file, body_file, pid, out):
    spec = json.loads(spec_text)
    token = open(token_file).read().strip()
    body = open(body_file, "rb").read()
    # Into the pod's network namespace, as the kubelet's probes reach the pod (setns(2) through libc: Debian 12's
    # Python 3.11 has no os.setns).
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(os.open(f"/proc/{pid}/ns/net", os.O_RDONLY), 0x40000000) != 0:  # CLONE_NEWNET
        sys.exit(f"setns: {os.strerror(ctypes.get_errno())}")

    def request(method, path, data=b"", auth=True):
        head = f"{method} {path} HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n"
        if auth:
            head += f"Authorization: Bearer {token}\r\n"
        if data:
            head += f"Content-Length: {len(data)}\r\n"
        s = socket.create_connection(("127.0.0.1", spec["port"]), timeout=10)
        s.sendall(head.encode() + b"\r\n" + data)
        answer = b"".join(iter(lambda: s.recv(65536), b""))
        head_bytes, rest = answer.split(b"\r\n\r\n", 1)
        status = int(head_bytes.split(b" ", 2)[1])
        if b"transfer-encoding: chunked" in head_bytes.lower():
            chunks = b""
            while rest:
                size, rest = rest.split(b"\r\n", 1)
                n = int(size, 16)
                if n == 0:
                    break
                chunks, rest = chunks + rest[:n], rest[n + 2:]
            rest = chunks
        return status, rest

    for _ in range(100):
        try:
            request("GET", spec["live"], auth=False)
            break
        except OSError:
            time.sleep(0.1)
    results = {
        "readiness " + spec["ready"]: request("GET", spec["ready"], auth=False)[0],
        "liveness " + spec["live"]: request("GET", spec["live"], auth=False)[0],
        "metrics without the token": request("GET", spec["metrics"], auth=False)[0],
        "metrics with the token": request("GET", spec["metrics"])[0],
    }
    status, lines = request("POST", "/decode", body)
    results["POST /decode"] = status
    with open(os.path.join(out, "capture.http.k8s"), "wb") as f:
        f.write(lines)
    metrics = request("GET", spec["metrics"])[1]
    with open(os.path.join(out, "k8s.json"), "w") as f:
        json.dump({"results": results, "counted": b"respdecode_records_total" in metrics}, f)


def verdict(path):
    answers = json.load(open(path))
    wanted = {"metrics without the token": 401}
    wrong = [f"{what}: {status}" for what, status in answers["results"].items() if status != wanted.get(what, 200)]
    if not answers["counted"]:
        wrong.append("/metrics has no respdecode_records_total after a decode")
    print("; ".join(wrong))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "spec":
        spec(sys.argv[2])
    elif command == "ask":
        ask(*sys.argv[2:7])
    elif command == "verdict":
        verdict(sys.argv[2])
    else:
        sys.exit(__doc__)
