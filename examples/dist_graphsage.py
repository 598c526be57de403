"""DGL's distributed GraphSAGE (examples/distributed/graphsage/node_classification.py) written
for graphloom: initialize -> DistGraph -> node_split -> NeighborSampler -> DataLoader -> DDP ->
train, evaluation reduced across trainers weighted by each trainer's count. Run by `graphloom
launch`, which starts every machine's servers and trainers:

    graphloom launch --ip-config ip.txt --part-config data/cora-2 --num-trainers 1 \\
        --token-file token -- .venv/bin/python examples/dist_graphsage.py --epochs 20

The only changes from DGL's script are the imports (graphloom.distributed for
dgl.distributed, graphloom.NeighborSampler / DataLoader for DGL's) and the model's layer
(graphloom.nn.GraphSAGE: DGL's mean SAGEConv layers on graphloom's blocks).
"""

import argparse
import gc
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import graphloom
import graphloom.distributed as gd
from graphloom.nn import GraphSAGE


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            predicted = model(batch.blocks, batch.input_features["feat"]).argmax(1)
            correct += int((predicted == batch.labels).sum())
            total += batch.batch_size
    pair = torch.tensor([correct, total], dtype=torch.float64)
    if dist.is_initialized():
        dist.all_reduce(pair)
    return (pair[0] / pair[1].clamp(min=1)).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--fanouts", default="10,25", help="input layer first, as DGL")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.003)
    args = parser.parse_args()

    gd.initialize()  # the cluster graphloom launch set, and torch.distributed (gloo)
    torch.manual_seed(0)
    g = gd.DistGraph()
    pb = g.get_partition_book()
    train_nid = gd.node_split(g.ndata["train_mask"], pb, force_even=True)
    valid_nid = gd.node_split(g.ndata["val_mask"], pb, force_even=True)
    test_nid = gd.node_split(g.ndata["test_mask"], pb, force_even=True)
    rank = dist.get_rank() if dist.is_initialized() else 0
    print(f"rank {rank}: part {pb.partid} of {pb.num_partitions()}, {len(train_nid)} training "
          f"nodes of {g.num_nodes()}")

    fanouts = [int(f) for f in args.fanouts.split(",")]
    sampler = graphloom.NeighborSampler(g, fanouts=fanouts)
    train = graphloom.DataLoader(g, train_nid, sampler, batch_size=args.batch_size, shuffle=True)
    valid = graphloom.DataLoader(g, valid_nid, sampler, batch_size=args.batch_size)
    test = graphloom.DataLoader(g, test_nid, sampler, batch_size=args.batch_size)
    in_feats = g.ndata["feat"].shape[1]
    model = GraphSAGE(in_feats, args.hidden, g.num_classes, len(fanouts))
    model = DistributedDataParallel(model) if dist.is_initialized() else model
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    join = model.join if dist.is_initialized() else __import__("contextlib").nullcontext
    for epoch in range(args.epochs):
        model.train()
        start, losses = time.time(), []
        with join():
            for batch in train:
                loss = F.cross_entropy(model(batch.blocks, batch.input_features["feat"]),
                                       batch.labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        accuracy = evaluate(model, valid)
        if rank == 0:
            print(f"epoch {epoch} loss {sum(losses) / max(len(losses), 1):.4f} valid accuracy "
                  f"{accuracy:.4f} ({time.time() - start:.2f} s)")
    accuracy = evaluate(model, test)
    if rank == 0:
        print(f"test accuracy {accuracy:.4f}")
    if dist.is_initialized():
        # Gloo drops a finished collective's tensors on its own thread, which takes the GIL for
        # them; one still at it when the interpreter shuts down aborts the process ("terminate
        # called without an active exception"). DDP's reducer holds the process group, so
        # destroy_process_group alone does not end Gloo's threads: the model goes first, while
        # the interpreter is alive, then a barrier lets the threads finish, and destroying the
        # group joins them (as examples/multiprocess_graphsage.py does). `join` is the model's
        # bound method: it goes too.
        del model, optimizer, join
        gc.collect()
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
