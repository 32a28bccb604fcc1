"""The share of check lines among the code lines of each core module: `python benchmarks/check_share.py [files]`.

Code lines: non-blank lines that are not comments and not docstrings. Check lines: the lines of an
`if ...: raise ...` block (an `if` whose body is only `raise`), the lines of a call to `_validate.*`,
`check_*` or `_check_*` that stands as a statement or an assignment, and `assert` statements.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ["tokens", "embedding", "encoding", "builder", "attention", "schemes", "rope_scaling", "positions", "task",
        "models", "experiment", "stretch", "generation"]


def code_lines(source: str) -> set[int]:
    """Line numbers holding code: not blank, not only a comment, not part of a docstring."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                              tokenize.ENDMARKER):
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines - docstrings


def _is_check_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "_validate":
        return True
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name.startswith(("check_", "_check_"))


def check_lines(source: str) -> set[int]:
    lines = set()
    for node in ast.walk(ast.parse(source)):
        span = None
        if isinstance(node, ast.If) and all(isinstance(s, ast.Raise) for s in node.body) and not node.orelse:
            span = node
        elif isinstance(node, ast.Assert):
            span = node
        elif isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)) and _is_check_call(node.value):
            span = node
        if span is not None:
            lines.update(range(span.lineno, span.end_lineno + 1))
    return lines


def share(path: Path) -> tuple[int, int]:
    source = path.read_text()
    code = code_lines(source)
    return len(code), len(check_lines(source) & code)


def main(paths: list[str]) -> None:
    files = [Path(p) for p in paths] or [ROOT / "src" / "posenc" / f"{name}.py" for name in CORE]
    print(f"{'module':<16}{'code':>6}{'checks':>8}{'share':>8}")
    for path in files:
        if path.exists():
            code, checks = share(path)
            print(f"{path.stem:<16}{code:>6}{checks:>8}{checks / max(code, 1):>8.0%}")


if __name__ == "__main__":
    main(sys.argv[1:])
