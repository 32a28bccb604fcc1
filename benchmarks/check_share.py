"""The share of check lines among the code lines of each core module: `python benchmarks/check_share.py [FILE ...]`.

    code lines   non-blank lines that are not only a comment and not part of a docstring
    check lines  code lines of an `if ...: raise` block (the test and the body), of any other `raise`, of an
                 `assert`, and of a call to a function imported from `_validate`, to `_validate.*` or to a function
                 named `check_*` / `_check_*` (a decorator such as `@checked(...)` included)

Default: the core modules and `_validate`, the one module of checks.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ["tokens", "embedding", "encoding", "builder", "attention", "schemes", "rope_scaling", "positions", "task",
        "models", "_validate"]


def check_share(source: str) -> tuple[int, int]:
    """(check lines, code lines) of one module's source."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    code = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                              tokenize.ENDMARKER):
            code.update(range(token.start[0], token.end[0] + 1))
    code -= docstrings

    checkers = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").endswith("_validate") for alias in node.names}
    checks = set()
    for node in ast.walk(tree):
        spans = []
        if isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body):
            spans.append((node.lineno, node.body[-1].end_lineno))
        elif isinstance(node, (ast.Raise, ast.Assert)):
            spans.append((node.lineno, node.end_lineno))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            if name in checkers or owner == "_validate" or name.startswith(("check_", "_check_")):
                spans.append((node.lineno, node.end_lineno))
        for first, last in spans:
            checks.update(range(first, last + 1))
    return len(checks & code), len(code)


def main(paths: list[str]) -> None:
    files = [Path(p) for p in paths] or [ROOT / "src" / "posenc" / f"{name}.py" for name in CORE]
    print(f"{'module':<16} {'check':>6} {'code':>6} {'share':>6}")
    for path in files:
        if path.exists():
            checks, code = check_share(path.read_text())
            print(f"{path.stem:<16} {checks:>6} {code:>6} {checks / max(code, 1):>6.0%}")


if __name__ == "__main__":
    main(sys.argv[1:])
