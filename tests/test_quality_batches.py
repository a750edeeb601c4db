"""Reading turns by trajectory: rows_of keeps the rows a filter keeps, as slices."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from quality.batches import rows_of


@pytest.mark.parametrize("keep", [[], ["a"], ["b"], ["c"], ["a", "c"], ["a", "b", "c"],
                                  ["x"]])
def test_rows_of_is_a_filter(keep):
    ids = ["a", "a", "b", "c", "c", "c"]
    batch = pa.Table.from_batches([
        pa.record_batch({"trajectory_id": ids[:3], "text": ["1", "2", "3"]}),
        pa.record_batch({"trajectory_id": ids[3:], "text": ["4", None, "6"]})])
    value_set = pa.array(keep, pa.string())
    got = rows_of(batch, value_set)
    want = batch.filter(pc.is_in(batch["trajectory_id"], value_set=value_set))
    assert got.schema == want.schema
    assert got.to_pylist() == want.to_pylist()
