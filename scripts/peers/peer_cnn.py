#!/usr/bin/python3
"""PyTorch peer of maple's CNN scenarios, for measuring maple's CPU time
against PyTorch's on the same work (docs/design.md, "CNN kernels").

  fedavg: scenarios/benchmarks/cnn-fmnist.yaml — McMahan et al.'s CNN,
          100 clients (IID or Dirichlet(0.3) label skew), 10 drawn per round,
          each 10 local SGD steps (lr 0.05) on mini-batches of 10 distinct
          images, the 10 models averaged with equal weights, test accuracy on
          the 10 000 test images at the start and every 5 rounds, 30 rounds.
  dpsgd:  scenarios/dp/dp-sgd-cnn.yaml, centralized curve — Papernot et al.'s
          tanh CNN, DP-SGD on Poisson batches (q = 2048/60000), per-example
          gradients (the direct per-example products, from each layer's
          input and output gradient) clipped to C = 0.1, N(0, (zC)^2) noise,
          divided by 2048, SGD with momentum 0.9 and lr 4, test accuracy at
          the start and every 25 steps, 293 steps.

  bench:  the workloads of algorithms/loss's CNN benchmarks (BenchmarkCNNStep,
          BenchmarkCNNEvaluate, BenchmarkCNNClippedGradSum) on random images:
          an SGD step on 10 images, the forward pass of 64, DP-SGD's clipped
          sum over 64 and their plain batch gradient; CPU time per call.

The same architectures, PyTorch's default initialization (the same
distributions as maple's, drawn from torch's generator), the same steps,
batch sizes and evaluations; float32 (PyTorch's default) or float64 (maple's)
with --dtype. Run it with one thread, alternating with maple:

  OMP_NUM_THREADS=1 /usr/bin/python3 scripts/peers/peer_cnn.py --task fedavg --partition iid
  OMP_NUM_THREADS=1 /usr/bin/python3 scripts/peers/peer_cnn.py --task dpsgd

It prints the loop's wall and CPU time and the final accuracy. It needs
Debian's python3-torch, python3-numpy and dataset-fashion-mnist.
"""
import argparse
import gzip
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

FMNIST = "/usr/share/datasets/fashion-mnist/"


def read_idx(name):
    """Returns the array of an IDX file (big-endian dimensions, unsigned bytes)."""
    with gzip.open(FMNIST + name, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def fashion_mnist(dtype):
    """Training and test images as N×1×28×28 tensors scaled to [0, 1]."""
    def images(name):
        return torch.from_numpy(read_idx(name).astype(np.float64) / 255.0).to(dtype).unsqueeze(1)

    def labels(name):
        return torch.from_numpy(read_idx(name).astype(np.int64))
    return (images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz"),
            images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz"))


def mcmahan_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(), nn.Linear(512, 10))


def papernot_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 16, 8, stride=2, padding=3), nn.Tanh(), nn.MaxPool2d(2, 1),
        nn.Conv2d(16, 32, 4, stride=2), nn.Tanh(), nn.MaxPool2d(2, 1),
        nn.Flatten(), nn.Linear(512, 32), nn.Tanh(), nn.Linear(32, 10))


@torch.no_grad()
def accuracy(model, xt, yt):
    correct = 0
    for lo in range(0, len(yt), 1000):
        correct += (model(xt[lo:lo + 1000]).argmax(1) == yt[lo:lo + 1000]).sum().item()
    return correct / len(yt)


def deal(y, kind, clients, rng):
    """IID: equal shares of a permutation; dirichlet: for each class, shares
    of its images drawn from Dirichlet(0.3), redrawn until every client holds
    at least 10 (the scenario's rule; not maple's draws)."""
    perm = rng.permutation(len(y))
    if kind == "iid":
        return np.array_split(perm, clients)
    while True:
        parts = [[] for _ in range(clients)]
        for c in range(10):
            pool = perm[y[perm] == c]
            cuts = (np.cumsum(rng.dirichlet(0.3 * np.ones(clients))) * len(pool)).astype(int)[:-1]
            for k, piece in enumerate(np.split(pool, cuts)):
                parts[k].append(piece)
        parts = [np.concatenate(p) for p in parts]
        if min(len(p) for p in parts) >= 10:
            return parts


def fedavg(args, data):
    x, y, xt, yt = data
    rng = np.random.default_rng(args.seed)
    parts = deal(y.numpy(), args.partition, 100, rng)
    torch.manual_seed(args.seed)
    model, local = mcmahan_cnn().to(args.dtype), mcmahan_cnn().to(args.dtype)
    opt = torch.optim.SGD(local.parameters(), lr=0.05)
    global_w = nn.utils.parameters_to_vector(model.parameters()).detach().clone()
    curve = [(0, accuracy(model, xt, yt))]  # maple evaluates the initial model too
    for rnd in range(1, args.rounds + 1):
        total = torch.zeros_like(global_w)
        for k in rng.choice(100, size=10, replace=False):
            nn.utils.vector_to_parameters(global_w.clone(), local.parameters())
            own = parts[k]
            for _ in range(10):
                b = torch.from_numpy(own[rng.choice(len(own), size=10, replace=False)])
                opt.zero_grad(set_to_none=True)
                F.cross_entropy(local(x[b]), y[b]).backward()
                opt.step()
            total += nn.utils.parameters_to_vector(local.parameters()).detach()
        global_w = total / 10
        if rnd % 5 == 0 or rnd == args.rounds:
            nn.utils.vector_to_parameters(global_w.clone(), model.parameters())
            curve.append((rnd, accuracy(model, xt, yt)))
    return curve


def per_example_grads(model, xb, yb):
    """Each parameter's per-example gradients (n × its shape): one batched
    backward pass keeping every conv's and dense layer's input and output
    gradient, then the direct per-example products."""
    inputs, grads = {}, {}
    layers = [m for m in model if isinstance(m, (nn.Conv2d, nn.Linear))]
    hooks = []
    for m in layers:
        hooks.append(m.register_forward_hook(lambda m, i, o: inputs.__setitem__(m, i[0].detach())))
        hooks.append(m.register_full_backward_hook(lambda m, gi, go: grads.__setitem__(m, go[0].detach())))
    loss = F.cross_entropy(model(xb), yb, reduction="sum")
    loss.backward()
    for h in hooks:
        h.remove()
    out = []
    for m in layers:
        a, g = inputs[m], grads[m]
        if isinstance(m, nn.Linear):
            out.append((m.weight, torch.einsum("no,ni->noi", g, a)))
            out.append((m.bias, g))
        else:
            cols = F.unfold(a, m.kernel_size, padding=m.padding, stride=m.stride)  # n × K × P
            g = g.flatten(2)                                                      # n × Cout × P
            out.append((m.weight, torch.einsum("ncp,nkp->nck", g, cols).reshape(len(xb), *m.weight.shape)))
            out.append((m.bias, g.sum(2)))
    return out


def dpsgd(args, data):
    x, y, xt, yt = data
    torch.manual_seed(args.seed)
    model = papernot_cnn().to(args.dtype)
    opt = torch.optim.SGD(model.parameters(), lr=4.0, momentum=0.9)
    q, clip, z, batch = 2048 / len(y), 0.1, 1.15, 2048
    curve = [(0, accuracy(model, xt, yt))]
    for step in range(1, args.steps + 1):
        idx = torch.nonzero(torch.rand(len(y)) < q).squeeze(1)
        opt.zero_grad(set_to_none=True)
        pairs = []
        for lo in range(0, len(idx), 256):
            b = idx[lo:lo + 256]
            pairs.append(per_example_grads(model, x[b], y[b]))
        for p in model.parameters():
            p.grad = None
        sq = torch.cat([sum(g.flatten(1).pow(2).sum(1) for _, g in part) for part in pairs])
        scale = (clip / sq.sqrt()).clamp(max=1.0)
        lo = 0
        for part in pairs:
            s = scale[lo:lo + len(part[0][1])]
            lo += len(part[0][1])
            for p, g in part:
                c = torch.einsum("n,n...->...", s, g)
                p.grad = c if p.grad is None else p.grad + c
        for p in model.parameters():
            p.grad = (p.grad + torch.normal(0.0, z * clip, p.shape, dtype=args.dtype)) / batch
        opt.step()
        if step % 25 == 0 or step == args.steps:
            curve.append((step, accuracy(model, xt, yt)))
    return curve


def bench(args):
    torch.manual_seed(args.seed)
    x = torch.rand(64, 1, 28, 28, dtype=args.dtype)
    y = torch.randint(0, 10, (64,))
    rows = []

    def timed(name, fn, reps):
        fn()
        t = time.process_time()
        for _ in range(reps):
            fn()
        rows.append("%s %.2f ms" % (name, 1000 * (time.process_time() - t) / reps))

    for name, make in (("mcmahan-cnn", mcmahan_cnn), ("papernot-cnn", papernot_cnn)):
        model = make().to(args.dtype)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[:10]), y[:10]).backward()
            opt.step()

        def forward():
            with torch.no_grad():
                model(x).argmax(1)
        timed(name + " step of 10", step, 10)
        timed(name + " forward of 64", forward, 10)
    model = papernot_cnn().to(args.dtype)

    def clipped():
        pairs = per_example_grads(model, x, y)
        sq = sum(g.flatten(1).pow(2).sum(1) for _, g in pairs)
        scale = (0.1 / sq.sqrt()).clamp(max=1.0)
        return [torch.einsum("n,n...->...", scale, g) for _, g in pairs]

    def grad():
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y, reduction="sum").backward()
    timed("papernot-cnn clipped sum of 64", clipped, 10)
    timed("papernot-cnn batch gradient of 64", grad, 10)
    print("; ".join(rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=["fedavg", "dpsgd", "bench"], required=True)
    ap.add_argument("--partition", choices=["iid", "dirichlet"], default="iid")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--steps", type=int, default=293)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.dtype = getattr(torch, args.dtype)
    torch.set_num_threads(args.threads)
    if args.task == "bench":
        bench(args)
        return
    data = fashion_mnist(args.dtype)
    wall, cpu = time.perf_counter(), time.process_time()
    curve = fedavg(args, data) if args.task == "fedavg" else dpsgd(args, data)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print("%s %s %s: loop wall %.1f s, CPU %.1f s; accuracy %s" % (
        args.task, args.partition if args.task == "fedavg" else "centralized", args.dtype,
        wall, cpu, " ".join("%d:%.4f" % c for c in curve)))


if __name__ == "__main__":
    main()
