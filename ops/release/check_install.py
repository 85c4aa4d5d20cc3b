"""Check a built wheel or sdist the way a user meets it: fresh venv, outside the checkout.

Builds nothing. Creates a virtual environment and an external working directory, installs the
artifact (``--profile data`` adds the ``data`` extra), checks that ``modebench`` is imported from
site-packages rather than this checkout, then runs walkthrough → evaluate → report, the public API
(grade, make_prompt, read_report, iter_results), ``py.typed``, the bundled data (data profile), and
resume / parallel equivalence. Exit 0 only if everything holds.

    python ops/release/check_install.py --artifact dist/modebench-0.5.0-py3-none-any.whl [--profile data]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import venv
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]

API_CHECK = textwrap.dedent(
    """
    import json, pathlib, sys
    import modebench
    from modebench.api import EvaluationOptions, Task, evaluate_file, grade, iter_results, make_prompt, read_report
    from modebench.api import InputError

    package = pathlib.Path(modebench.__file__).resolve().parent
    checkout = pathlib.Path(sys.argv[1]).resolve()
    assert "site-packages" in package.parts, package
    assert checkout not in package.parents, f"imported from the checkout: {package}"
    assert (package / "py.typed").is_file(), "py.typed missing"

    task = Task("t", 1, "countdown", "Use 1, 2, 3 exactly once to make 6.",
                {"verifier": "countdown", "numbers": [1, 2, 3], "target": 6})
    assert [m["role"] for m in make_prompt(task)] == ["system", "user"]
    assert grade(task, "1+2+3")["status"] == "correct"
    assert grade(task, "1+2-3")["status"] == "incorrect"
    assert grade(task, "x" * 200000)["status"] == "resource_limit"

    demo = pathlib.Path("demo")
    report = read_report(demo / "report.json")
    assert report.status == "completed" and len(report.cells) == 5, report
    assert all(cell.accuracy == 0.5 and cell.pcmd.d_mode == 1.0 for cell in report.cells)
    results = list(iter_results(demo / "report.json"))
    assert len(results) == 5 and all(r["pass_at_k"] == 1.0 for r in results)
    receipt = json.loads((demo / "report.json").read_text())
    assert receipt["software"]["git"] == {"commit": None, "dirty": None}, receipt["software"]["git"]

    # Resume and parallel equivalence on a larger copy of the walkthrough.
    records = [json.loads(line) for line in (demo / "responses.jsonl").read_text().splitlines()]
    with open("many.jsonl", "w") as handle:
        for copy in range(40):
            for record in records:
                handle.write(json.dumps(dict(record, id=f"{record['id']}#{copy}")) + "\\n")
    options = EvaluationOptions(min_defined_prompts=5)
    evaluate_file("many.jsonl", "serial.json", options=options)

    class Stop(Exception):
        pass

    def interrupt(event):
        if event["phase"] == "grading" and event["completed_prompts"] >= 50:
            raise Stop

    try:
        evaluate_file("many.jsonl", "resumed.json", options=options, progress=interrupt)
        raise AssertionError("interrupt did not happen")
    except Stop:
        pass
    evaluate_file("many.jsonl", "resumed.json", options=options, resume=True, workers=2)
    serial = json.loads(pathlib.Path("serial.json").read_text())
    resumed = json.loads(pathlib.Path("resumed.json").read_text())
    assert serial["cells"] == resumed["cells"]
    assert pathlib.Path("serial.json.work/results.jsonl").read_bytes() == pathlib.Path("resumed.json.work/results.jsonl").read_bytes()
    try:
        evaluate_file("many.jsonl", "serial.json")
        raise AssertionError("overwrote a receipt")
    except InputError:
        pass
    print("api: ok")
    """
)


def run(command: list[str], cwd: Path) -> str:
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stdout, done.stderr, sep="\n")
        raise SystemExit(f"failed: {' '.join(command)}")
    return done.stdout


# The installed bundled release ships its dataset card; an export loads with datasets as load_split does.
HUB_CHECK = """
from importlib import resources
import datasets
from modebench.data import load_split
card = resources.files("modebench._bundled_release").joinpath("README.md").read_text()
assert "config_name: level2_mathir" in card
loaded = datasets.load_dataset("hub-release", "level2_mathir", cache_dir="hf-datasets")
assert loaded["eval"].to_list() == load_split("hub-release/data", "level2_mathir", "eval").to_list()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifact", required=True, help="wheel (.whl) or sdist (.tar.gz) to install")
    parser.add_argument("--profile", choices=("core", "data"), default="core")
    args = parser.parse_args()
    artifact = Path(args.artifact).resolve()
    if not artifact.is_file():
        raise SystemExit(f"no such artifact: {artifact}")
    with tempfile.TemporaryDirectory(prefix="modebench-install-") as temp:
        root = Path(temp)
        env_dir, work = root / "venv", root / "work"
        work.mkdir()
        venv.create(env_dir, with_pip=True)
        python = str(env_dir / "bin" / "python")
        cli = str(env_dir / "bin" / "modebench")
        requirement = f"{artifact}[data]" if args.profile == "data" else str(artifact)
        run([python, "-m", "pip", "install", "--quiet", requirement], work)
        run([cli, "walkthrough", "--directory", "demo"], work)
        summary = json.loads(
            run(
                [
                    cli,
                    "evaluate",
                    "demo/responses.jsonl",
                    "--run",
                    "demo/run.json",
                    "--output",
                    "demo/report.json",
                    "--progress-every",
                    "0",
                ],
                work,
            )
        )
        assert summary["status"] == "completed" and summary["cells"] == 5, summary
        report = run([cli, "report", "demo/report.json"], work)
        assert report.count(" 4 0.5 1 2 1 false") == 5, report
        print(report)
        run([python, "-c", API_CHECK, str(CHECKOUT)], work)
        if args.profile == "data":
            shown = json.loads(
                run(
                    [cli, "datasets", "inspect", "--registry", "bundled", "--config", "level1_countdown"],
                    work,
                )
            )
            assert shown["id"] == "level1_countdown/eval/0" and "answer" not in shown, shown
            run(
                [
                    cli,
                    "prepare",
                    "--registry",
                    "bundled",
                    "--config",
                    "level2_mathir",
                    "--output",
                    "requests.jsonl",
                ],
                work,
            )
            lines = (work / "requests.jsonl").read_text().splitlines()
            assert lines and all("answer" not in json.loads(line) for line in lines)
            run([cli, "datasets", "export", "hub-release", "--registry", "bundled"], work)
            run([python, "-c", HUB_CHECK], work)
        print(f"check_install: {artifact.name} ({args.profile}) ok")


if __name__ == "__main__":
    sys.exit(main())
