# Every target bootstraps its own virtual environment, so a fresh machine needs only Python.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO ?= demo-run

.PHONY: demo check test test-fast quality lint typecheck release-files inventory bench dist check-install clean

# -qq below: setuptools reports every editable install of this layout (the bundled release is
# mapped from data/bundled) with an informational warning; errors still print and fail the build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -qq -e '.[dev]'
	touch $(STAMP)

## demo: the main job on the embedded default — walkthrough → evaluate → report
demo: $(STAMP)
	rm -rf $(DEMO)
	$(BIN)/modebench walkthrough --directory $(DEMO)
	$(BIN)/modebench evaluate $(DEMO)/responses.jsonl --run $(DEMO)/run.json --output $(DEMO)/report.json --progress-every 0
	$(BIN)/modebench report $(DEMO)/report.json

## check: the full test suite plus the quality gates (what CI runs)
check: test quality

# Tests run on every core (pytest-xdist); all tests of a file run on one worker (--dist loadfile), so
# a module's shared server, cluster or browser is started once. JOBS=1 runs them in this process.
JOBS ?= auto
PYTEST := $(BIN)/python -m pytest $(if $(filter 1,$(JOBS)),-p no:xdist,-n $(JOBS) --dist loadfile)
# pytest's exit code is kept and named (make itself would only say "Error 1"): 1 a test failed,
# 2 interrupted, 3 internal error, 4 usage error, 5 no test was collected (a failure too).
define run_pytest
	@code=0; $(PYTEST) $(1) || code=$$?; \
	if [ $$code -ne 0 ]; then \
		case $$code in 1) why="tests failed";; 2) why="interrupted";; 3) why="internal error";; \
		4) why="usage error";; 5) why="no tests were collected";; *) why="unexpected exit code";; esac; \
		echo "pytest exited with $$code ($$why)"; exit $$code; fi
endef

## test: the whole suite, the slowest ten tests listed at the end
test: $(STAMP)
	$(call run_pytest,--durations=10 $(PYTEST_ARGS))

## test-fast: the inner loop — the release inventory, then every test not marked slow (no servers, clusters, browsers; < 2 min)
test-fast: $(STAMP)
	$(BIN)/python ops/verify_release.py
	$(call run_pytest,-m "not slow" $(PYTEST_ARGS))

quality: lint typecheck release-files

## release-files: the release inventory matches the tree (refresh with `make inventory`)
release-files: $(STAMP)
	$(BIN)/python ops/release/verify_release.py

inventory: $(STAMP)
	$(BIN)/python ops/release/verify_release.py --refresh

# lint also types the example third-party domain package as strictly as modebench itself, and
# holds the import contract (pyproject's [tool.importlinter]) with no circle (docs/architecture.md)
lint: $(STAMP)
	$(BIN)/ruff check src tests ops examples
	$(BIN)/ruff format --check src tests ops examples
	$(BIN)/lint-imports
	$(BIN)/python ops/checks/import_cycles.py
	MYPYPATH=examples/domain-plugin/src:src $(BIN)/mypy --strict -p modebench_queens

typecheck: $(STAMP)
	$(BIN)/mypy --strict src/modebench examples/typed_client.py
	@if $(BIN)/mypy --strict examples/typed_client_wrong.py >/dev/null 2>&1; then \
		echo "examples/typed_client_wrong.py type-checked but must fail"; exit 1; \
	else echo "examples/typed_client_wrong.py is rejected by mypy, as it must be"; fi

## bench: every benchmark, then evidence/performance.json, then the evidence the other ops scripts write
## (conformance, generated-release and resource audits; minutes; not part of check)
bench: $(STAMP)
	$(BIN)/python ops/benchmarks/benchmark_grading.py
	$(BIN)/python ops/benchmarks/benchmark_worker.py
	$(BIN)/python ops/benchmarks/benchmark_evaluation.py --sizes 1000 10000 100000 --workers 1 2
	$(BIN)/python ops/benchmarks/benchmark_startup.py
	$(BIN)/python ops/benchmarks/benchmark_data_layer.py
	$(BIN)/python ops/benchmarks/record_performance.py
	$(BIN)/python ops/fidelity/conformance_report.py
	$(BIN)/python ops/release/verify_generated.py
	$(BIN)/python ops/release/audit_resources.py

## dist: the sdist, then the wheel built from that sdist
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

## check-install: install the wheel and the sdist in fresh venvs outside the checkout and exercise them
check-install: dist
	$(BIN)/python ops/release/check_install.py --artifact dist/modebench-*.whl --profile data
	$(BIN)/python ops/release/check_install.py --artifact dist/modebench-*.tar.gz --profile core

clean:
	rm -rf $(VENV) dist build $(DEMO) .pytest_cache .mypy_cache .ruff_cache
