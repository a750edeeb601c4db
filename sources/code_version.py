"""The one code-version rule: a short sha256 over the code that builds something, each file
keyed by its path relative to the repository, so the same checkout gives the same version
anywhere. Dagster shows it as an asset's code version (assets/asset_info.py) and a release
records it in its manifest (release/manifest.py): where both describe the same code, they are
the same string.

What a part stands for: a module, its file and the .sql / .toml files beside it (the queries and
policies it loads); a package or a folder, every .py / .sql / .toml file under it; a file,
itself.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parent.parent
CODE_VERSION_CHARS = 12
DATA_SUFFIXES = (".sql", ".toml")
CODE_SUFFIXES = (".py", *DATA_SUFFIXES)


def code_files(*parts: ModuleType | Path) -> set[Path]:
    """The files the parts stand for (resolved)."""
    files: set[Path] = set()
    for part in parts:
        path = Path(part.__file__) if isinstance(part, ModuleType) else Path(part)
        path = path.resolve()
        if isinstance(part, ModuleType) and path.name == "__init__.py":
            path = path.parent
        if path.is_dir():
            files.update(p for p in path.rglob("*")
                         if p.suffix in CODE_SUFFIXES and "__pycache__" not in p.parts)
        elif isinstance(part, ModuleType):
            files.add(path)
            files.update(p for p in path.parent.iterdir() if p.suffix in DATA_SUFFIXES)
        else:
            files.add(path)
    return files


def code_version(*parts: ModuleType | Path) -> str:
    """Short sha256 over the parts' files, in path order, each keyed by its path relative to
    the repository root (its name when outside it)."""
    digest = hashlib.sha256()
    for path in sorted(code_files(*parts), key=_key):
        digest.update(_key(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:CODE_VERSION_CHARS]


def _key(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else path.name
