"""Permission checks: time per bash/edit check for everyday and hostile commands.

The parser and matcher run before every side-effect call, on text the model chose. This
prints the median time of one ``PermissionPolicy.check`` per case and, for the size-scaled
cases, the ratio between a 4x larger input and the base — about 4 means linear; a
quadratic scan would show about 16.

    .venv/bin/python bench/permissions.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from minicode.permissions.policy import PermissionPolicy
from minicode.permissions.rules import Effect, Origin, SourcedRule, parse_rule

ALLOW = ["bash(pytest *)", "bash(git status)", "bash(cat *)", "bash(echo *)", "bash(npm run test *)",
         "write(logs/**)", "edit(src/**)"]
DENY = ["bash(rm *)", "bash(git push *)", "bash(* --force)"]

EVERYDAY = {
    "pytest -q": "pytest -q tests/",
    "compound, 5 commands": "git status && pytest -q 2>&1 | tee logs/x && echo done; cat a",
    "denied in $(…)": "echo $(rm -rf x)",
    "heredoc commit": "git commit -m \"$(cat <<'EOF'\nfix: thing\n\nbody\nEOF\n)\"",
}


def _scaled(n: int) -> dict[str, str]:
    return {
        "heredoc lines": "cat > f <<'EOF'\n" + "line of text\n" * n + "EOF",
        "chained commands": "; ".join(["pytest -q"] * (n // 10)),
        "unquoted [ run": "echo " + "[" * n,
        "unquoted { run": "echo " + "{" * n + "}",
        "unclear long word": "echo $((x)) " + "a" * n,
        "quoted argument": "echo '" + "x " * n + "'",
    }


def _median_ms(policy: PermissionPolicy, tool: str, args: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        policy.check(tool, args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    rules = [SourcedRule(parse_rule(r), Effect.ALLOW, Origin.CONFIG) for r in ALLOW]
    rules += [SourcedRule(parse_rule(r), Effect.DENY, Origin.CONFIG) for r in DENY]
    with tempfile.TemporaryDirectory() as ws:
        policy = PermissionPolicy(Path(ws), rules)
        print("everyday checks (median of", runs, "runs)")
        for name, command in EVERYDAY.items():
            print(f"  {name:28s} {_median_ms(policy, 'bash', {'command': command}, runs):8.3f} ms")
        print(f"  {'edit src/app/x.py':28s} {_median_ms(policy, 'edit', {'path': 'src/app/x.py'}, runs):8.3f} ms")
        print("size scaling (n = 4,000 and 16,000 units; ratio ~4 = linear)")
        small, large = _scaled(4000), _scaled(16000)
        for name in small:
            a = _median_ms(policy, "bash", {"command": small[name]}, max(3, runs // 3))
            b = _median_ms(policy, "bash", {"command": large[name]}, max(3, runs // 3))
            print(f"  {name:28s} {a:8.2f} ms → {b:8.2f} ms   ratio {b / a:4.1f}")


if __name__ == "__main__":
    main()
