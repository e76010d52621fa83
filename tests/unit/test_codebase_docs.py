"""The docs hold together: a README a newcomer reads in ten minutes that links every
page under docs/, links that resolve, every test a page names (`tests/...py::test_x`)
there to run, and every citation of the cost rules in code naming a rule or section
that docs/cost-rules.md has."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
RULES = ROOT / "docs" / "cost-rules.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")
NAMED_TEST = re.compile(r"`(tests/[\w/.-]+\.py)((?:::\w+)*)`")
PRODUCT = ("shared", "functions", "costtracker", "cdk", "bench", "tests")


def _pages() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md"))


def _code_files() -> list[Path]:
    return [p for d in PRODUCT for p in (ROOT / d).rglob("*.py") if "__pycache__" not in p.parts]


def test_the_readme_is_short_and_links_every_docs_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    linked = {target.split("#")[0] for target in LINK.findall(text)}
    missing = [p.name for p in _pages() if f"docs/{p.name}" not in linked]
    assert missing == []


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in [README, ROOT / "CONTRIBUTING.md", *_pages()]:
        for target in LINK.findall(page.read_text()):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def test_code_cites_the_cost_rules_page_by_rules_and_sections_it_has() -> None:
    rules_text = RULES.read_text()
    sections = set(re.findall(r"^## (.+)$", rules_text, re.M))
    numbered = {int(n) for n in re.findall(r"^ ?(\d+)\. \*\*", rules_text, re.M)}
    assert numbered == set(range(1, 14))
    unknown = []
    for path in _code_files():
        text = re.sub(r"\s*\n\s*(#\s*)?", " ", path.read_text())  # a citation may wrap
        unknown += [
            f"{path.name}: {s}"
            for s in re.findall(r'cost-rules\.md "([^"]+)"', text)
            if s not in sections
        ]
        unknown += [
            f"{path.name}: rule {n}"
            for n in re.findall(r"\bcost rules? (\d+)", text)
            if int(n) not in numbered
        ]
    assert unknown == []


def test_nothing_cites_a_spec_outside_the_project() -> None:
    """The product's own words live in docs/cost-rules.md; "SPEC" is not a file here."""
    cited = [
        str(p.relative_to(ROOT))
        for p in [README, *_pages(), *_code_files()]
        if p != RULES
        and p.name != "test_focus13.py"
        and p != Path(__file__).resolve()
        and "SPEC" in p.read_text()
    ]
    assert cited == []


def _defined_names(source: str) -> set[str]:
    """Names a test id can use: test functions, classes and their methods."""
    return set(re.findall(r"^\s*(?:async )?(?:def|class) (\w+)", source, re.M))


def test_every_test_the_docs_name_exists() -> None:
    """A sentence that says which test shows it must name a file (and test) that is there."""
    missing = []
    for page in [README, ROOT / "CONTRIBUTING.md", *_pages()]:
        for path, names in NAMED_TEST.findall(page.read_text()):
            target = ROOT / path
            wanted = set(names.split("::")[1:])
            if not target.is_file() or not wanted <= _defined_names(target.read_text()):
                missing.append(f"{page.relative_to(ROOT)}: {path}{names}")
    assert missing == []


def test_the_named_test_check_sees_a_missing_file_and_a_missing_test() -> None:
    """The check above reads both forms a page uses, so it cannot pass by matching nothing."""
    text = "(`tests/unit/test_codebase_docs.py::test_nowhere`, `tests/unit/test_gone.py`)"
    found = NAMED_TEST.findall(text)
    assert found == [
        ("tests/unit/test_codebase_docs.py", "::test_nowhere"),
        ("tests/unit/test_gone.py", ""),
    ]
    assert "test_nowhere" not in _defined_names(Path(__file__).read_text())
    assert not (ROOT / "tests/unit/test_gone.py").exists()
