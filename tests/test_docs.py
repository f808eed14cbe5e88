"""The user documentation speaks of the project as it is now, builds without a broken link,
and its generated pages match the code and the benchmark results they come from."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HISTORY = re.compile(r"\bsessions?\b|not adopted|tried and not|tried, not", re.IGNORECASE)
MACHINE_PATHS = re.compile(r"\.\./shared|/work/|/tmp/")


def user_files():
    """What users read: README, docs, configs, the project file, and the package's docstrings and comments."""
    yield ROOT / "README.md"
    yield ROOT / "project.yml"
    yield from sorted((ROOT / "docs").glob("*.md"))
    yield from sorted((ROOT / "configs").glob("*.cfg"))
    for suffix in ("*.py", "*.pyx", "*.pxd"):
        yield from sorted((ROOT / "spacy_bioner").rglob(suffix))


def test_no_development_history_in_what_users_read():
    found = [
        f"{path.relative_to(ROOT)}:{i}: {line.strip()[:80]}"
        for path in user_files()
        for i, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert not found, "development history belongs in commit messages:\n" + "\n".join(found)


def test_no_machine_paths_in_user_docs():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "configs").glob("*.cfg"))]
    found = [
        f"{path.relative_to(ROOT)}:{i}"
        for path in docs
        for i, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1)
        if MACHINE_PATHS.search(line)
    ]
    assert not found, found


def test_readme_is_short_and_keeps_its_two_fresh_machine_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    assert len(readme.splitlines()) <= 300
    assert "pip install -e . && python -m spacy project run all ." in readme
    assert 'pip install -e ".[test]" && python -m pytest -q' in readme


def test_generated_pages_are_up_to_date():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_docs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(
    shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists(),
    reason="mkdocs is not installed",
)
def test_docs_build_strictly(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
