"""The quality stage: turn features, turn labels with loss weights, trajectory dedup.

Plain Python and SQL (no Dagster here; assets/ wires these entry points):

- features.py   `compute_turn_features(turns_path, out_path, config) -> FeatureStats`
                (observation_sets.py, max_jaccard.py, corpus_frequency.py, patterns.py,
                turn_features.sql); over a domain's shards: sharded.py
                `features_for_domain` (its steps: corpus_columns.py, domain_order.py)
- labels.py     `load_policy(path) -> Policy`, `label_turns(features_path, out_path, policy)
                -> LabelStats`, `examples_markdown(labels_path, turns_path)` (policy.toml,
                labels.sql)
- dedup.py      `dedup_trajectories(trajectories_path(s), turns_path(s), out_dir, config)
                -> DedupStats` (dedup_candidates.sql)
- shingles.py, minhash.py   word n-gram hashing and MinHash signatures (datasketch-exact)
- scrub.py      `scrub_partition(...)`: secrets and personal data replaced (secrets.py)
- split.py      `split_trajectories(...)`: the train / bench pools, then decontamination
                (decontaminate.py): the curation step the bench and training both read
- stage.py      `run_quality_stage(data_dir, out_dir, domains, workers)`: all of it
- tables.py     the tables this stage builds (sources/tables.py: the registry)

How well the rules agree with planted truth and with people is measured by `grading/`.
"""
