"""benchmarks/validate_planted.py on real trace files: the trajectories the readers find are
grouped by domain, and planting swaps a few observations for another trajectory's, seeded,
touching nothing else."""

from __future__ import annotations

from benchmarks.validate_planted import plant, trace_file_episodes


def test_planting_on_real_traces(traces_dir, realdev_dir):
    paths = [traces_dir / "android", realdev_dir / "android", realdev_dir / "terminal"]
    by_domain = trace_file_episodes(paths, per_domain=50)
    assert set(by_domain) == {"android", "terminal"}
    assert all(len(found) >= 2 for found in by_domain.values())
    episodes, keys = plant(by_domain, planted=2, seed=0)
    assert len(keys) == 4 and len(episodes) == sum(len(f) for f in by_domain.values())
    originals = {e.trajectory_id: e for found in by_domain.values() for e in found}
    changed = 0
    for episode in episodes:
        before = originals[episode.trajectory_id]
        for new, old in zip(episode.steps, before.steps, strict=True):
            if (episode.trajectory_id, new.turn_index) in keys:
                changed += 1
                assert new.observation != old.observation and new.action == old.action
                donors = [e for e in by_domain[episode.domain]
                          if e.trajectory_id != episode.trajectory_id
                          and any(s.observation == new.observation for s in e.steps)]
                assert donors, "a planted observation comes from another trajectory"
            else:
                assert new == old
    assert changed == 4
    again, same_keys = plant(trace_file_episodes(paths, per_domain=50), planted=2, seed=0)
    assert same_keys == keys and again == episodes
    assert plant(by_domain, planted=2, seed=1)[1] != keys
