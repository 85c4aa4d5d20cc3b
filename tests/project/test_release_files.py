"""Release files: citation metadata, licenses, and the layout rules the project keeps."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

import modebench

ROOT = Path(__file__).resolve().parents[2]


def test_citation_cff_is_valid() -> None:
    data = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert data["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "type", "license", "version"):
        assert data.get(key), key
    assert data["type"] in ("software", "dataset")
    assert data["version"] == modebench.__version__
    assert all(isinstance(a, dict) and (a.get("name") or a.get("family-names")) for a in data["authors"])
    paper = data["references"][0]
    assert paper["type"] == "conference-paper" and len(paper["authors"]) == 5


def test_licenses_present() -> None:
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    assert "CC BY 4.0" in (ROOT / "DATA_LICENSE").read_text()


def test_readme_quick_start_has_exactly_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```(?:sh|bash)?\n(.*?)```", section, re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make check"]


def test_shared_code_never_branches_on_a_domain_name() -> None:
    package = ROOT / "src" / "modebench"
    names = "countdown|graph_coloring|python_factors|mathir|pantry_plan|pantry"
    # Any comparison with a domain-name literal, on either side.
    pattern = re.compile(rf"""(==|!=)\s*['"]({names})['"]|['"]({names})['"]\s*(==|!=)""")
    offenders = []
    for path in package.rglob("*.py"):
        if "domains" in path.relative_to(package).parts[:1]:
            continue
        if pattern.search(path.read_text(encoding="utf-8")):
            offenders.append(path.name)
    assert offenders == []


def test_shared_code_looks_domains_up_in_the_one_registry() -> None:
    # Membership in the closed built-in tuple would shut third-party plug-ins out: shared code asks
    # modebench.domains (is_registered / is_certified) instead.
    package = ROOT / "src" / "modebench"
    pattern = re.compile(r"\bin\s+DOMAINS\b")
    offenders = [
        path.name
        for path in package.rglob("*.py")
        if path.relative_to(package).parts[0] not in ("domains", "contracts.py")
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_source_cites_only_documents_in_this_repository() -> None:
    # A reader of the repository has docs/, not the specification it was written from: a cited
    # document is a path under docs/ that exists, never a bare spec name or a spec/ path.
    package = ROOT / "src" / "modebench"
    spec_names = re.compile(r"(?<![\w/])(?:spec/[\w./-]+|(?:evaluation|datasets|cli|api|metrics)\.md)\b")
    cited = re.compile(r"docs/[\w./-]*\.md\b")
    bad = []
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        bad += [f"{path.relative_to(package)}: {name}" for name in spec_names.findall(text)]
        bad += [
            f"{path.relative_to(package)}: {name}"
            for name in cited.findall(text)
            if not (ROOT / name).is_file()
        ]
    assert bad == []


def test_model_text_is_never_evaluated_in_the_parent() -> None:
    # Only the domain plug-ins (run inside the worker) may compile candidate text.
    package = ROOT / "src" / "modebench"
    banned = re.compile(r"\b(eval|exec|sympify|parse_expr)\(")
    offenders = [
        path.name
        for path in package.rglob("*.py")
        if "domains" not in path.relative_to(package).parts[:1]
        and banned.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
