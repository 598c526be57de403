"""DGL's multi-GPU GraphSAGE node classification (examples/multigpu/node_classification_sage.py)
written for graphloom, on CPU processes: one trainer per process under torchrun, the model in
DistributedDataParallel over Gloo, each rank sampling its share of the training nodes with
graphloom's DataLoader, and accuracy reduced across ranks weighted by each rank's count.

    torchrun --standalone --nproc-per-node 2 examples/multiprocess_graphsage.py --data DIR

The model is DGL's GraphSAGE (mean SAGEConv layers) on graphloom's blocks
(graphloom.nn.GraphSAGE, plain PyTorch).
"""

import argparse
import gc
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import graphloom
from graphloom.nn import GraphSAGE


def evaluate(model, loader):
    """This rank's accuracy over its share, and the share's size."""
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            predicted = model(batch.blocks, batch.input_features["feat"]).argmax(1)
            correct += int((predicted == batch.labels).sum())
            total += batch.batch_size
    return correct / max(total, 1), total


def reduced_accuracy(accuracy, count):
    """DGL's weighted reduce: sum of accuracy x count over ranks, divided by the total."""
    pair = torch.tensor([accuracy * count, count], dtype=torch.float64)
    dist.all_reduce(pair)
    return (pair[0] / pair[1]).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="graphloom dataset directory")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--fanouts", default="10,10,10", help="input layer first, as DGL")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.003)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # every rank starts from the same parameters
    torch.set_num_threads(1)
    dataset = graphloom.load_dataset(args.data)
    fanouts = [int(f) for f in args.fanouts.split(",")]
    sampler = graphloom.NeighborSampler(dataset.graph, fanouts=fanouts)

    def loader(split, shuffle):
        # rank / world_size default to torch.distributed's: each rank takes its share.
        return graphloom.DataLoader(dataset, dataset.splits[split], sampler,
                                    batch_size=args.batch_size, shuffle=shuffle, seed=0)

    train, valid, test = loader("train", True), loader("valid", False), loader("test", False)
    model = DistributedDataParallel(GraphSAGE(dataset.node_features["feat"].shape[1], args.hidden,
                                         dataset.num_classes, len(fanouts)))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        start, total_loss, steps = time.time(), 0.0, 0
        # Ranks may get one batch more or less: Join lets the shorter ones wait.
        with model.join():
            for batch in train:
                loss = F.cross_entropy(model(batch.blocks, batch.input_features["feat"]),
                                       batch.labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total_loss, steps = total_loss + loss.item(), steps + 1
        accuracy = reduced_accuracy(*evaluate(model.module, valid))
        if rank == 0:
            print(f"epoch {epoch} loss {total_loss / max(steps, 1):.4f} valid accuracy "
                  f"{accuracy:.4f} ({time.time() - start:.2f} s, {world} trainers)")
    accuracy = reduced_accuracy(*evaluate(model.module, test))
    if rank == 0:
        print(f"test accuracy {accuracy:.4f}")
    # Gloo drops a finished collective's tensors on its own thread, which takes the GIL for
    # them; one that is still at it when the interpreter shuts down aborts the process
    # ("terminate called without an active exception"). DDP's reducer holds the process group
    # (and its last buckets' work), so destroy_process_group alone does not end Gloo's threads:
    # the model goes first, while the interpreter is alive, then a barrier (no Python tensors)
    # lets the threads finish, and destroying the group joins them.
    del model, optimizer
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
