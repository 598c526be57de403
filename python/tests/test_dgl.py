"""MiniBatch.to_dgl() against DGL itself: the blocks' shapes, edges and ids as DGL reads them,
and DGL's own SAGEConv running on them. Skips, saying why, where dgl does not import (no DGL
release builds for this torch: DGL 2.1's graphbolt library exists for torch <= 2.2 only)."""

import pytest
import torch

import graphloom

try:
    import dgl
    from dgl.nn import SAGEConv

    DGL_IMPORT_ERROR = None
except Exception as error:  # ImportError, or DGL's FileNotFoundError for its graphbolt library
    DGL_IMPORT_ERROR = f"{type(error).__name__}: {error}"

# A per-test skip, not a module-level one: a file with nothing collected exits 5 (a failure).
pytestmark = pytest.mark.skipif(DGL_IMPORT_ERROR is not None,
                                reason=f"SKIPPED: dgl does not import here ({DGL_IMPORT_ERROR})")


def test_to_dgl_blocks_are_dgl_blocks_a_dgl_model_trains_on(planted):
    sampler = graphloom.NeighborSampler(planted, [5, 5])
    loader = graphloom.DataLoader(planted, planted.splits["train"], sampler, batch_size=64)
    batch = next(iter(loader))
    blocks = batch.to_dgl()
    assert len(blocks) == 2
    for block, mine in zip(blocks, batch.blocks):
        assert block.is_block
        assert block.num_dst_nodes() == mine.num_dst
        assert block.num_src_nodes() == mine.src_ids.numel()
        src, dst = block.edges()
        # Edges go source -> destination; a destination's in-edges are its CSC segment.
        assert torch.equal(dst, torch.repeat_interleave(torch.arange(mine.num_dst),
                                                        mine.indptr.diff()))
        assert torch.equal(src, mine.indices.long())
        assert torch.equal(block.srcdata[dgl.NID], mine.src_ids)
    assert torch.equal(blocks[0].srcdata["feat"], batch.input_features["feat"])
    assert torch.equal(blocks[-1].dstdata["label"], batch.labels)
    first, second = SAGEConv(16, 8, "mean"), SAGEConv(8, 3, "mean")
    logits = second(blocks[1], first(blocks[0], blocks[0].srcdata["feat"]).relu())
    assert logits.shape == (batch.seeds.numel(), 3)
    loss = torch.nn.functional.cross_entropy(logits, batch.labels)
    loss.backward()
    assert first.fc_neigh.weight.grad.abs().sum() > 0
