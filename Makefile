# People and .ci/run use the same targets.
PY ?= .venv/bin/python

.PHONY: install lint type test check

install:
	python3 -m venv .venv
	$(PY) -m pip install -q -e '.[dev]'

lint:
	$(PY) -m ruff check src tests bench examples
	$(PY) -m ruff format --check src tests bench examples
	.venv/bin/lint-imports

type:
	$(PY) -m mypy

test:
	$(PY) -m pytest -n 4 --dist worksteal

check: lint type test
