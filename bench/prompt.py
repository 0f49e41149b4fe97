"""Prompt budget: the system prompt and the tool declarations of the first request, minicode vs pi.

Both agents send one task to the scripted server from an empty workspace; the first request
each one sends is taken apart into its system prompt and its `tools` array, and counted:

- with minicode's own token estimate (`minicode.tokens`: ASCII/4, the budget's measure;
  the tools as `estimate_tools` sees them for minicode, as compact JSON for pi);
- with a real tokenizer, `o200k_base` from the npm package gpt-tokenizer, when it is found
  (`--tokenizer DIR` or $TOKENIZER_DIR: a directory whose node_modules holds it; needs
  node); otherwise that column is skipped with a message. Tools are counted as the compact
  JSON that goes over the wire — a server renders them into its own template, so this is
  an approximation for both agents alike.

Target: minicode's system prompt + every tool declared by default ≤ 1,500 estimated tokens (issue 27).

    .venv/bin/python bench/prompt.py [--pi PATH | --no-pi] [--tokenizer DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ROOT, FakeOpenAI, Reply, add_pi_option, find_pi, minicode_agent, pi_agent, run_child  # noqa: E402

sys.path.insert(0, str(ROOT / "src"))

from minicode.agent.prompt import PROMPT_BUDGET_TOKENS  # noqa: E402
from minicode.provider.types import ToolSpec  # noqa: E402
from minicode.tokens import estimate_text, estimate_tools  # noqa: E402

_COUNT_JS = """
const dir = process.argv[1];
const t = require(require.resolve('gpt-tokenizer/encoding/o200k_base', {paths: [dir]}));
let s = ''; process.stdin.on('data', d => s += d);
process.stdin.on('end', () => console.log(JSON.stringify(JSON.parse(s).map(x => t.encode(x).length))));
"""


def first_request(agent: Any, server: FakeOpenAI) -> dict[str, Any]:
    server.script(Reply.text("ok"))
    before = len(server.requests)
    run = run_child(agent, "say hello", server)
    if run.returncode != 0 or len(server.requests) <= before:
        raise SystemExit(f"{agent.name} sent no request (exit {run.returncode})")
    return server.requests[before].body


def parts(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    system = next(m for m in body["messages"] if m["role"] in ("system", "developer"))
    content = system["content"]
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content)
    return content, list(body.get("tools", []))


def estimate(system: str, tools: list[dict[str, Any]]) -> tuple[int, int]:
    specs = [ToolSpec(t["function"]["name"], t["function"].get("description", ""), t["function"]["parameters"])
             for t in tools]
    return estimate_text(system), estimate_tools(specs)


def real_counts(tokenizer: str | None, system: str, tools: list[dict[str, Any]]) -> tuple[int, int] | None:
    if tokenizer is None:
        return None
    texts = [system, json.dumps(tools, separators=(",", ":"), ensure_ascii=False)]
    r = subprocess.run(["node", "-e", _COUNT_JS, tokenizer], input=json.dumps(texts),
                       capture_output=True, text=True, check=True)
    counted = json.loads(r.stdout)
    return counted[0], counted[1]


def find_tokenizer(option: str | None) -> str | None:
    where = option or os.environ.get("TOKENIZER_DIR")
    if where and shutil.which("node") and (Path(where) / "node_modules" / "gpt-tokenizer").is_dir():
        return where
    print("o200k_base: gpt-tokenizer not found — real token counts are skipped (npm install gpt-tokenizer "
          "in a directory and pass --tokenizer DIR or set TOKENIZER_DIR)")
    return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_pi_option(p)
    p.add_argument("--tokenizer", metavar="DIR", help="directory whose node_modules holds gpt-tokenizer")
    args = p.parse_args()
    pi = find_pi(args.pi, args.no_pi)
    tokenizer = find_tokenizer(args.tokenizer)
    rows = []
    with FakeOpenAI() as server, tempfile.TemporaryDirectory() as tmp:
        agents = [minicode_agent(Path(tmp), server)] + ([pi_agent(Path(tmp), server, pi)] if pi else [])
        for agent in agents:
            system, tools = parts(first_request(agent, server))
            rows.append((agent.name, len(tools), estimate(system, tools), real_counts(tokenizer, system, tools)))
    print(f"\n{'':9} {'tools':>5}   estimate: system + tools = total   o200k_base: system + tools = total")
    for name, count, (sys_est, tools_est), real in rows:
        real_text = f"{real[0]:6,} + {real[1]:5,} = {sum(real):5,}" if real else "   (skipped)"
        print(f"{name:9} {count:5}   {sys_est:15,} + {tools_est:5,} = {sys_est + tools_est:5,}   {real_text:>29}")
    used = sum(rows[0][2])
    print(f"minicode budget: {used:,} of {PROMPT_BUDGET_TOKENS:,} estimated tokens"
          f" ({'OK' if used <= PROMPT_BUDGET_TOKENS else 'OVER'}; room {PROMPT_BUDGET_TOKENS - used:,})")
    if len(rows) > 1:
        print(f"ratio minicode/pi (estimate): {used / sum(rows[1][2]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
