"""The seed's Rust toy tagger, built and timed here: the peer bulk tagging is measured against.

The toy is a std-only Rust program inside a design note (shared/seeds/002_*.txt),
not part of this project. Its code is read from the note at run time, built with
cargo in a temporary directory and run as it is, with one line added: it prints
the mean tokens of the sentences it times, so that its sentences/s become tokens/s.
"""

import re
import shutil
import subprocess
from pathlib import Path
from typing import Optional

TIMED = re.compile(r"([\d.]+) sentences/s, one thread")
TOKENS = re.compile(r"([\d.]+) tokens per sentence")
# Added after the toy prints its speed: the timed sentences are `test`, (features, tags, words) each.
TOKENS_LINE = (
    'println!("{} tokens per sentence", test.iter().map(|(_, _, w)| w.len()).sum::<usize>() as f64'
    " / test.len() as f64);"
)


def toy_source(note: Path) -> str:
    """The Rust program of the note: from its first `const` to the brace that closes `main`."""
    lines = note.read_text(encoding="utf8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("const "))
    main = next(i for i, line in enumerate(lines) if line.startswith("fn main()"))
    last = next(i for i in range(main, len(lines)) if lines[i] == "}")
    code = lines[first : last + 1]
    timed = next(i for i, line in enumerate(code) if "sentences/s, one thread" in line)
    return "\n".join(code[: timed + 1] + [TOKENS_LINE] + code[timed + 1 :]) + "\n"


def build_toy(seeds: Path, work: Path) -> Optional[Path]:
    """The toy built with cargo under `work`: its binary, or None without cargo or the note."""
    notes = sorted(seeds.glob("002_*.txt"))
    if not notes or shutil.which("cargo") is None:
        return None
    project = work / "seed_toy"
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "Cargo.toml").write_text(
        '[package]\nname = "seed_toy"\nversion = "0.1.0"\nedition = "2021"\n\n[profile.release]\nopt-level = 3\n'
    )
    (project / "src" / "main.rs").write_text(toy_source(notes[0]))
    subprocess.run(["cargo", "build", "--release", "--quiet", "--offline"], cwd=project, check=True)
    return project / "target" / "release" / "seed_toy"


def run_toy(binary: Path) -> float:
    """Tokens/s of one run of the toy, as it times itself (its sentences/s times its tokens per sentence)."""
    out = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    return float(TIMED.search(out).group(1)) * float(TOKENS.search(out).group(1))
