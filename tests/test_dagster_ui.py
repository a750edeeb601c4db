"""What a data engineer sees in the Dagster UI: every asset with owners, kinds, tags and a code
version, every check described (partitioned like its asset), every column described,
previews that fit the page, plots."""

from __future__ import annotations

import base64
from pathlib import Path

import dagster as dg
import pytest
from shard_runs import ShardRuns, materialize_domain
from ui_markdown import ui_problems

from assets.asset_info import with_defaults
from assets.checks import domain_checks
from assets.definitions import ASSETS, defs
from assets.factory import generated_traces
from assets.ingest import raw_traces
from assets.partitions import domain_partitions, shard_partitions
from assets.quality import staged_turn_features, trajectory_dedup, turn_features, turn_labels
from assets.resources import WorldtraceStorage
from assets.scrub import scrubbed_traces

REPO_ROOT = Path(__file__).resolve().parent.parent
PNG_MAGIC = b"\x89PNG"


def test_every_asset_has_owners_kinds_tags_and_a_code_version() -> None:
    specs = list(defs.resolve_all_asset_specs())
    assert specs
    for spec in specs:
        name = spec.key.to_user_string()
        assert spec.owners, name
        assert spec.kinds, name
        assert spec.tags.get("stage"), name
        assert spec.code_version and len(spec.code_version) == 12, name
        assert spec.description, name


def test_every_check_is_described_and_partitioned_like_its_asset() -> None:
    partitions = {key: asset.partitions_def for asset in ASSETS for key in asset.keys}
    checks = [(partitions[spec.asset_key], spec) for asset in with_defaults(ASSETS)
              for spec in asset.check_specs]
    checks += [(partitions[spec.asset_key], spec) for definition in domain_checks()
               for spec in definition.check_specs]
    assert len(checks) >= 17
    for partitions_def, spec in checks:
        assert spec.description and len(spec.description) > 20, spec.key
        assert spec.partitions_def == partitions_def, spec.key
    # the shard-local tables' checks: one result per domain x shard; turn_features' and
    # turn_labels': per domain; the others: unpartitioned
    assert {spec.partitions_def for _, spec in checks} == {shard_partitions, domain_partitions,
                                                           None}
    assert generated_traces.partitions_def == domain_partitions
    blocking = {spec.name for _, spec in checks if spec.blocking}
    assert {"schema", "weights_in_unit_interval", "nothing_left_to_scrub"} <= blocking


def test_jobs_for_the_common_runs() -> None:
    names = {job.name for job in defs.resolve_all_job_defs()}
    assert {"main_job", "domain_job", "domain_quality_job", "corpus_job", "ingest_job",
            "curate_job", "train_job", "shard_checks_job", "domain_checks_job"} <= names


@pytest.fixture(scope="module")
def web_run(traces_dir: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[ShardRuns, dg.ExecuteInProcessResult]:
    """The domain assets of the web fixtures, plus dedup, on a real instance."""
    data = tmp_path_factory.mktemp("ui")
    storage = WorldtraceStorage(data_dir=str(data), catalog=str(REPO_ROOT / "sources.example.toml"))
    domain_assets = [raw_traces, staged_turn_features, turn_features, turn_labels,
                     scrubbed_traces]
    result = materialize_domain([*domain_assets, *domain_checks(domain_assets)], "web", storage)
    assert result.success
    dedup = dg.materialize([trajectory_dedup], resources={"storage": storage})
    assert dedup.success
    return result, dedup


def _materializations(*results: ShardRuns | dg.ExecuteInProcessResult) -> dict[str, dict]:
    return {e.asset_key.to_user_string(): e.materialization.metadata
            for result in results for e in result.get_asset_materialization_events()}


def test_every_column_is_described_and_previews_fit(web_run) -> None:
    materializations = _materializations(*web_run)
    assert len(materializations) == 10  # staged_turn_features's too
    for name, metadata in materializations.items():
        columns = metadata["dagster/column_schema"].schema.columns
        undocumented = [c.name for c in columns if not c.description]
        assert undocumented == [], f"{name}: {undocumented}"
        header = metadata["preview"].value.splitlines()[0] if "preview" in metadata else "|"
        assert header.count("|") - 1 <= 5, name


def test_markdown_metadata_reads_in_the_ui_as_written(web_run) -> None:
    """Previews, example tables and plots render: no cell text read as an HTML tag, no image
    the browser cannot load."""
    problems = {f"{name}.{key}": ui_problems(value.value)
                for name, metadata in _materializations(*web_run).items()
                for key, value in metadata.items() if isinstance(value, dg.MarkdownMetadataValue)}
    assert len(problems) >= 10
    assert {key: found for key, found in problems.items() if found} == {}


def test_check_results_carry_their_domain_and_shard(web_run) -> None:
    evaluations = web_run[0].get_asset_check_evaluations()
    assert evaluations and all(e.passed for e in evaluations)
    # the shard-local tables' checks per domain x shard, turn_features' and turn_labels' per
    # domain
    assert {e.partition for e in evaluations} == {"web|0", "web"}
    assert {e.partition for e in evaluations if e.asset_key.to_user_string() in (
        "turn_features", "turn_labels")} == {"web"}


def test_plots_are_png_images(web_run) -> None:
    labels = _materializations(web_run[0])["turn_labels"]
    for key in ("category_plot", "weight_plot"):
        markdown = labels[key].value
        assert markdown.startswith("![plot](data:image/png;base64,")
        assert base64.b64decode(markdown.split(",", 1)[1].rstrip(")")).startswith(PNG_MAGIC)
    assert "removed_plot" in _materializations(web_run[1])["trajectory_dedup"]


def test_quarantine_metadata_describes_the_quarantine(web_run) -> None:
    quarantine = _materializations(web_run[0])["ingest_quarantine"]
    assert {"quarantined", "reasons", "share_of_records_read"} <= set(quarantine)
    assert "turns" not in quarantine and "per_source" not in quarantine


def test_generated_traces_description_and_sources_render() -> None:
    assert "`{data}/generated/<domain>/`" in generated_traces.specs_by_key[
        dg.AssetKey("generated_traces")].description
