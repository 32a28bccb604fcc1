"""The package names topics, not notebook numbers: renumbering a notebook must not touch src/posenc."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "posenc"
# The frozen copy of the notebooks' markdown that the subword tokenizer trains on: data, not prose about the
# notebooks, and frozen, so renumbering a notebook never changes it (and changing it would change the tokenizer).
FROZEN = {PACKAGE / "data" / "notebook_text.md"}
FILES = sorted(p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix in {".py", ".js", ".md", ".txt", ".json", ".toml"}
               and "__pycache__" not in p.parts and p not in FROZEN)

NOTEBOOK_NUMBER = [
    r"(?i)\bnotebooks?\s+\d{1,2}\b",         # "notebook 07", "notebooks 13 and 14", "Notebook 16's"
    r"\b\d{2}_[a-z]+(?:_[a-z]+)*\.ipynb\b",  # "15_real_pipeline.ipynb"
    r"\b\d{2}_(?:[a-z]+_)+[a-z]+\b",         # "16_stretching_context" without its suffix
    r"\[\d{2}\s+[A-Za-z]",                   # "[07 Heads and the causal mask]"
    r"(?i)\bnb\s?\d{1,2}\b",                 # "nb14", "NB 16"
    r"\b(?:0\d|1[0-7])'s\b",                  # "08's first cell", "(09's Exercise 1)"
]


def mentions(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(re.search(p, line) for p in NOTEBOOK_NUMBER)]


@pytest.mark.parametrize("pattern, line", [
    (0, "Checkers for notebooks 08 and 10"), (0, "Notebook 16's task"), (5, "(09's Exercise 1)"),
    (1, "see 15_real_pipeline.ipynb"), (2, "as 16_stretching_context shows"), (3, "[07 Heads and the causal mask]"),
    (4, "nb14 trains it")])
def test_each_pattern_finds_a_notebook_number(pattern, line):
    assert re.search(NOTEBOOK_NUMBER[pattern], line)
    assert mentions(line) == [line]


@pytest.mark.parametrize("line", ["torch.Size([10, 6])", "positions [0, 10)", "base 10,000", "the notebook's bug",
                                  "d_model = 16 and 14,050", "GPT-2's table",
                                  "2020's paper"])
def test_the_patterns_leave_other_numbers_alone(line):
    assert mentions(line) == []


def test_the_package_names_no_notebook_by_its_number():
    assert len(FILES) > 30  # the walk found the package
    found = {str(p.relative_to(ROOT)): hits for p in FILES if (hits := mentions(p.read_text(encoding="utf-8")))}
    assert not found, f"name the topic, not the notebook's number: {found}"



# The shape of the house: no import cycle, short modules, few checks, one home per name -----------------------------

MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The package's modules `path` imports, at its top or inside a function."""
    import ast
    import importlib.util

    name, found = module_name(path), set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else node.module or ""
            for alias in node.names:  # `from . import x` imports the module x; `from .x import y`, the module x
                candidates = [f"{base}.{alias.name}", base]
                found.add(next(c for c in candidates if c in NAMES or c == base))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {n for n in found if n in NAMES and n != name}


NAMES = {module_name(p) for p in MODULES}


def test_no_import_cycle_in_the_package():
    graph = {module_name(p): imports(p) for p in MODULES}
    assert graph["posenc.models.decoder"] >= {"posenc.attention", "posenc.positions"}  # the walk reads imports

    def cycle_from(start, path, seen):
        for nxt in sorted(graph[path[-1]]):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                if found := cycle_from(start, path + [nxt], seen):
                    return found
        return None

    cycles = [c for m in sorted(graph) if (c := cycle_from(m, [m], set()))]
    assert not cycles, f"import cycles: {cycles[:3]}"


def test_modules_are_short_and_the_check_primitives_shorter():
    lines = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in MODULES}
    assert lines["_checks.py"] <= 300
    assert max(lines.values()) <= 450, {k: v for k, v in lines.items() if v > 450}


def test_argument_checks_are_at_most_15_percent_of_the_code():
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_share", ROOT / "benchmarks" / "check_share.py")
    check_share = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_share)
    shares = [check_share.share(p) for p in check_share.package_files()]
    checks, code = sum(c for c, _ in shares), sum(n for _, n in shares)
    assert code > 2000 and checks >= 150  # it read the package, the check module included
    assert checks / code <= 0.15, f"{checks} check lines of {code} code lines: {checks / code:.1%}"


def test_each_public_name_has_one_home():
    import importlib
    import inspect

    homes = {}
    for name in sorted(NAMES):
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", []):
            obj = getattr(module, public)
            homes.setdefault(id(obj), []).append(f"{name}.{public}")
            if inspect.isclass(obj) or inspect.isfunction(obj):  # its __all__ is where it is defined
                assert obj.__module__ == name, f"{name}.__all__ lists {public}, defined in {obj.__module__}"
    shared = [places for places in homes.values() if len(places) > 1]
    assert not shared, f"in the __all__ of two modules: {shared}"


def test_an_explorer_imports_nothing_that_trains():
    for path in (PACKAGE / "explorers").glob("*.py"):
        assert not any(m.startswith("posenc.models") for m in imports(path)), path.name
