"""Release stage: every published table -> dataset_release (releases/<name>-<version>/).

Parquet shards per table and domain, a datasets.DatasetDict, a dataset card with Hugging Face
front matter and the statistics, a manifest with the SHA-256 of every file (release/).
Built over whatever published tables exist when it runs; a release is never overwritten: the
same version again is checked to be byte-identical to the one on disk, else refused.
"""

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from assets.asset_info import asset_info
from assets.resources import WorldtraceStorage
from assets.table_metadata import reads, records_table
from bench.tables import LEADERBOARD
from release import default_releases_dir
from release.build import ReleaseConfig, build_release
from release.manifest import MANIFEST, RELEASE_CODE, verify_release
from release.published import PUBLISHED
from sources.schema import DOMAINS

# What the release reads: every published table, the tables its exports join, the leaderboard.
PUBLISHED_TABLES = [*dict.fromkeys(t for p in PUBLISHED for t in (p.table, *p.needs)),
                    LEADERBOARD]

_RELATIVE_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+\.png)\)")


class ReleaseSettings(dg.Config):
    """Name and version of the release, where releases go (default: $WORLDTRACE_RELEASES,
    else `releases/` beside the data directory), and licenses per source (SOURCE: LICENSE)."""

    name: str = "worldtrace"
    version: str = "0.1.0"
    releases_dir: str = ""
    licenses: dict[str, str] = {}


def releases_root(settings: ReleaseSettings, storage: WorldtraceStorage) -> Path:
    return Path(settings.releases_dir) if settings.releases_dir else default_releases_dir(
        storage.data_path)


@dg.asset(group_name="release", deps=reads(*PUBLISHED_TABLES),
          **asset_info("release", kinds={"parquet", "huggingface", "markdown"},
                       code=RELEASE_CODE, pii="scrubbed"),
          check_specs=[dg.AssetCheckSpec(
              "release_verifies", asset="dataset_release", blocking=True,
              description="Re-hashing every file of the release matches manifest.json (and "
                          "the manifest its manifest.sha256): nothing changed after the build.")])
def dataset_release(context: dg.AssetExecutionContext, config: ReleaseSettings,
                    storage: WorldtraceStorage
                    ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """A versioned, reproducible dataset release of every published table, scrubbed: Parquet
    shards (one per table and domain), a datasets.DatasetDict, a dataset card (README.md with
    Hugging Face front matter and the statistics) and a manifest of SHA-256 hashes, under
    `releases/<name>-<version>/`. An existing release is kept when a rebuild is byte-identical
    and refused when it differs (release.build.build_release: the same rule as the CLI's)."""
    release = ReleaseConfig(name=config.name, version=config.version,
                            licenses=dict(config.licenses))
    root = releases_root(config, storage)
    target = root / release.folder_name
    stats = build_release(storage.data_path, root, release, log=context.log.info)
    if not stats.kept:
        context.log.info(f"{target}: {stats.files} files, {stats.bytes / 1e6:.1f} MB")
    problems = verify_release(target)
    content = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    files = content["files"]
    domains = [d for d in DOMAINS if any(d in splits for splits in content["rows"].values())]
    rows = [{"config": config_name, **{d: splits.get(d, "-") for d in domains},
             "total": sum(splits.values())}
            for config_name, splits in content["rows"].items()]
    yield dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(target)),
        "kept_existing": stats.kept,
        "files": len(files),
        "megabytes": round(sum(f["bytes"] for f in files.values()) / 1e6, 2),
        "rows": dg.MetadataValue.md(records_table(rows)),
        "code_version": content["code_version"],
        "policy_hash": content["policy"]["hash"],
        "rescrubbed_in_release": dg.MetadataValue.json(content["rescrubbed_in_release"]),
        "card": dg.MetadataValue.md(card_for_the_ui(target)),
        "settings": dg.MetadataValue.json(config.model_dump()),
    })
    yield dg.AssetCheckResult(
        check_name="release_verifies", passed=not problems,
        description="every file matches the manifest",
        metadata={"differences": "; ".join(problems) or "none", "files": len(files)})


def card_for_the_ui(target: Path) -> str:
    """The release's README.md as the UI can show it: without the front matter, and each image
    the card links relative to its folder (`plots/categories.png`, right on the Hub) inlined
    as a data URI, since the UI serves no file of the release and would show a broken link."""
    text = (target / "README.md").read_text(encoding="utf-8")
    text = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text

    def inline(match: re.Match[str]) -> str:
        image = target / match["src"]
        if match["src"].startswith(("http://", "https://", "data:")) or not image.is_file():
            return match[0]
        encoded = base64.b64encode(image.read_bytes()).decode()
        return f"![{match['alt']}](data:image/png;base64,{encoded})"

    return _RELATIVE_IMAGE.sub(inline, text)
