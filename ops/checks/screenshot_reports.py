"""Render the four reference HTML pages and screenshot each in headless Chromium (PNG).

The walkthrough (`modebench walkthrough` then `evaluate`), a failed run (one response over the
size limit), a two-run comparison (the walkthrough against a collapsed copy whose second correct
mode per prompt is replaced by the first) and a trajectory (`modebench trajectory --html` over
three steps: the walkthrough, the collapsed copy, the walkthrough again). Pages and screenshots go to `--output` (default
`evidence/`): `report-<name>.png`, and `report-<name>.html` with `--keep-html`.

    python ops/checks/screenshot_reports.py --output evidence
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.render.chromium import Browser  # noqa: E402

from modebench.cli import main as cli  # noqa: E402
from modebench.streaming import evaluate_file  # noqa: E402
from modebench.walkthrough import bundle  # noqa: E402

RUN = {"model": {"id": "collapsed-copy", "revision": "0"}, "generation": {"temperature": 1.0},
       "prompt_condition": "registered_hints_v1"}  # fmt: skip


def _evaluate(root: Path, name: str, records: list[dict[str, object]]) -> Path:
    source = root / f"{name}.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    evaluate_file(source, root / f"{name}.json", run=RUN)
    return root / f"{name}.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(ROOT / "evidence"))
    parser.add_argument("--keep-html", action="store_true")
    args = parser.parse_args()
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="modebench-screens-") as scratch:
        root = Path(scratch)
        assert cli(["walkthrough", "--directory", str(root / "walk")]) == 0
        walkthrough = root / "walkthrough.json"
        cli(["evaluate", str(root / "walk" / "responses.jsonl"), "--run", str(root / "walk" / "run.json"),
             "--output", str(walkthrough), "--progress-every", "0"])  # fmt: skip
        records = [dict(r) for r in bundle()["records"]]
        collapsed = [
            {**r, "responses": [r["responses"][0], r["responses"][0], *r["responses"][2:]]} for r in records
        ]
        failing = [dict(r) for r in records]
        failing[1] = {**failing[1], "responses": ["x" * 131_073, *failing[1]["responses"][1:]]}
        pages = {
            "walkthrough": [walkthrough],
            "failed": [_evaluate(root, "failed", failing)],
            "comparison": [walkthrough, _evaluate(root, "collapsed", collapsed)],
        }
        collapsed_receipt = pages["comparison"][1]
        trajectory = [f"0={walkthrough}", f"100={collapsed_receipt}", f"200={walkthrough}"]
        with Browser() as browser:
            for name, receipts in [*pages.items(), ("trajectory", trajectory)]:
                html = root / f"report-{name}.html"
                if name == "trajectory":
                    cli(["trajectory", *map(str, receipts), "--html", str(html)])
                else:
                    cli(["report", *map(str, receipts), "--html", str(html)])
                page = browser.open(html)
                problems = page.console_errors() + page.requests()
                if problems:
                    raise SystemExit(f"{name}: {problems}")
                page.screenshot(output / f"report-{name}.png")
                if args.keep_html:
                    shutil.copy(html, output / html.name)
                print(f"{name}: {html.stat().st_size} bytes -> {output / f'report-{name}.png'}")


if __name__ == "__main__":
    main()
