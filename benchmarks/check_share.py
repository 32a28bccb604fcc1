"""The share of argument checks among the package's code lines: `python benchmarks/check_share.py [FILE ...]`.

    code lines   non-blank lines that are not only a comment and not part of a docstring
    check lines  every code line of `_checks`, the module of check primitives; elsewhere, the code lines of an
                 `if ...: raise` block (the test and the body), of any other `raise`, of an `assert`, and of a call
                 to a function imported from `_checks`, to `_checks.*` or to a function named `check_*` /
                 `_check_*` (a decorator such as `@checked(...)` included)

Default: every module of `src/posenc` but the exercise checkers (`exercises/`, whose whole job is judging answers),
one line each, and the package's total, which tests/test_package_layout.py holds at 15% at most.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "posenc"
CHECKS = PACKAGE / "_checks.py"


def package_files() -> list[Path]:
    """Every Python file of the package but the exercise checkers."""
    return sorted(p for p in PACKAGE.rglob("*.py") if "exercises" not in p.relative_to(PACKAGE).parts)


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
                and (node.module or "").endswith("_checks") for alias in node.names}
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
            if name in checkers or owner == "_checks" or name.startswith(("check_", "_check_")):
                spans.append((node.lineno, node.end_lineno))
        for first, last in spans:
            checks.update(range(first, last + 1))
    return len(checks & code), len(code)


def share(path: Path) -> tuple[int, int]:
    """(check lines, code lines) of one file: all of _checks counts as checks."""
    checks, code = check_share(path.read_text())
    return (code, code) if path == CHECKS else (checks, code)


def main(paths: list[str]) -> None:
    files = [Path(p).resolve() for p in paths] or package_files()
    total_checks = total_code = 0
    print(f"{'module':<36} {'check':>6} {'code':>6} {'share':>6}")
    for path in files:
        checks, code = share(path)
        total_checks, total_code = total_checks + checks, total_code + code
        name = path.relative_to(PACKAGE) if path.is_relative_to(PACKAGE) else path
        print(f"{str(name):<36} {checks:>6} {code:>6} {checks / max(code, 1):>6.0%}")
    print(f"{'total':<36} {total_checks:>6} {total_code:>6} {total_checks / max(total_code, 1):>6.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
