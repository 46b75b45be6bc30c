"""The package's source as text: checks no linter rule of ours makes."""

import ast
import collections
import pathlib

import ascjax

PACKAGE = pathlib.Path(ascjax.__file__).parent


def _top_level_names(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def test_no_module_binds_a_top_level_name_twice():
    """A second ``def _number`` in cli.py silently replaced the first, the type of compare's
    --rtol / --atol / --error-ratio (ruff's F811 flags only a redefinition of an unused
    name). Every module binds each top-level name once."""
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50
    twice = {}
    for path in modules:
        counts = collections.Counter(_top_level_names(ast.parse(path.read_text())))
        if repeated := sorted(n for n, c in counts.items() if c > 1):
            twice[str(path.relative_to(PACKAGE))] = repeated
    assert not twice
    # the check sees what it is for: the two definitions that broke compare
    broken = ast.parse("def _number(text):\n    pass\n\n\ndef _number(kind, within):\n    pass\n")
    assert _top_level_names(broken) == ["_number", "_number"]
