"""Features read from disk from Python (load_dataset(feature_storage="disk")): loaders gather
the same rows as from memory, through each cache policy, with the bytes and hits counted; the
options are refused by name where they do not apply."""

import pytest
import torch

import graphloom


def _first_epoch(dataset, seed=3):
    sampler = graphloom.NeighborSampler(dataset, [5, 5])
    loader = graphloom.DataLoader(dataset, dataset.splits["train"], sampler, batch_size=64,
                                  shuffle=True, seed=seed)
    return [(batch.input_nodes, batch.input_features["feat"], batch.labels) for batch in loader]


@pytest.mark.parametrize("policy", [None, "sieve", "s3-fifo", "lru", "clock", "degree"])
def test_disk_storage_gathers_the_rows_memory_does(planted_dir, policy):
    memory = graphloom.load_dataset(planted_dir, feature_storage="memory")
    disk = graphloom.load_dataset(planted_dir, feature_storage="disk", cache_policy=policy,
                                  cache_size="16K" if policy else 0)
    assert memory.feature_counters() == {}
    want, got = _first_epoch(memory), _first_epoch(disk)
    assert len(got) == len(want) > 1
    for (nodes, rows, labels), (want_nodes, want_rows, want_labels) in zip(got, want):
        assert torch.equal(nodes, want_nodes)
        assert torch.equal(rows, want_rows)
        assert torch.equal(labels, want_labels)
    counters = disk.feature_counters()
    assert counters["disk_bytes"] > 0
    if policy is None:
        assert "cache_hits" not in counters
    else:  # 16 KB of 64-byte rows: 256 of the 600 nodes
        assert counters["cache_hits"] > 0 and counters["cache_misses"] > 0
    assert disk.feature_counters()["disk_bytes"] == 0  # counted since the last call


def test_disk_storage_options_are_refused_by_name(planted_dir, tmp_path):
    for kwargs, field in [(dict(feature_storage="ssd"), "feature_storage"),
                          (dict(cache_policy="sieve", cache_size="1M"), "cache_policy"),
                          (dict(feature_storage="disk", cache_policy="sieve"), "cache_size"),
                          (dict(feature_storage="disk", cache_policy="fifo", cache_size="1M"),
                           "cache_policy")]:
        with pytest.raises(graphloom.OptionError) as error:
            graphloom.load_dataset(planted_dir, **kwargs)
        assert error.value.field == field, kwargs
    encoded = tmp_path / "int8"
    graphloom.convert(planted_dir, encoded, feature_dtype="int8")
    with pytest.raises(graphloom.OptionError, match="float32") as error:
        graphloom.load_dataset(encoded, feature_storage="disk")
    assert error.value.field == "feature_storage"
