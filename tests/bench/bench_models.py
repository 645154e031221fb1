#!/usr/bin/env python3
"""bench_models.py -- step times of the convolutional workloads (alexnet, vgg,
residual, deepq) and the Transformer in fathom at the small and full presets,
train and infer, next to a PyTorch reference of the same architectures (CPU,
same batch, same thread count), printing the fathom / PyTorch step-time ratio.

usage: bench_models.py FATHOM_BIN [--threads N] [--steps N] [--presets small,full]
       [--models alexnet,vgg,residual,deepq,transformer] [--rounds R] [--batch B]
       [--baseline OTHER_FATHOM_BIN] [--torch-malloc steady|glibc]

Each cell is measured in R rounds (default 3), fathom then PyTorch in each,
and the medians are printed: on a shared machine whose speed moves, a
single pair of runs can land on different sides of a slowdown. --baseline
adds another fathom build to every round (before FATHOM_BIN), and a line
with its own ratios: before and after measured in the same rounds.

The PyTorch side uses Debian's python3-torch (/usr/bin/python3); without it
the fathom times are printed alone. Step times are means over the steps after
the first (fathom's `run` summary; the same rule for PyTorch). What a step is:
  classifiers train: forward, softmax cross-entropy, backward, optimizer update
  classifiers infer: forward to the softmax
  deepq train: fathom acts 4 times (epsilon-greedy: mostly random early on),
               then the target network's forward and the online update; the
               PyTorch step is the target forward and the online update
  deepq infer: one forward over `batch` game states and the argmax
  transformer train: nn.Transformer (post-norm, dropout 0.1, batch first) with
               the shared embedding (scaled by sqrt(d_model), sinusoidal
               positions, dropout) tied to the output projection, cross
               entropy with label smoothing 0.1 ignoring padding, backward,
               Adam (0.9, 0.98, 1e-9); a copy-task batch with padding masks
  transformer infer: the encoder once, then greedy decoding of `len` tokens
               one at a time over cached keys and values, as fathom decodes
               (nn.Transformer's weights; its decoder layers applied by hand
               to the one new position, since it has no cache of its own)
PyTorch's allocator: by default (--torch-malloc steady) glibc's mmap and
trim thresholds are set to 1 GiB before PyTorch allocates (torch_malloc.py
says why: with glibc's defaults PyTorch's step time depends on the cells
run before it in the process, by up to 4x); --torch-malloc glibc keeps
glibc's defaults.
The architectures mirror models/alexnet.c, vgg.c, residual.c, deepq.c and
transformer.c (the preset tables are repeated below)."""
import json, subprocess, sys, time, argparse

import torch_malloc

ALEX = {"small": (128, 100, (32, 96, 192, 128, 128), 1024, 32), "full": (224, 1000, (64, 192, 384, 256, 256), 4096, 64),
        "tiny": (64, 10, (16, 48, 96, 64, 64), 256, 16)}
VGG = {"small": (64, 100, (16, 32, 64, 128, 128), 512, 8), "full": (224, 1000, (64, 128, 256, 512, 512), 4096, 8),
       "tiny": (32, 10, (16, 32, 64, 64, 64), 1024, 8)}
RES = {"small": (64, 100, 16, 16), "full": (224, 1000, 64, 16), "tiny": (32, 10, 8, 16)}
DQN = {"small": ((32, 64, 64), 512, 32), "full": ((32, 64, 64), 512, 32), "tiny": ((8, 16, 16), 64, 8)}
# vocab, d_model, heads, d_ff, layers, len
TFM = {"tiny": (16, 32, 4, 64, 2, 8), "small": (8000, 256, 8, 1024, 3, 32), "full": (37000, 512, 8, 2048, 6, 64)}


def fathom(bin_, model, preset, mode, steps, threads, batch=0):
    extra = ["--batch", str(batch)] if batch else []
    out = subprocess.run([bin_, "run", model, "--preset", preset, "--mode", mode, "--steps", str(steps),
                          "--threads", str(threads), "--format", "json"] + extra, check=True, capture_output=True,
                         text=True)
    lines = [json.loads(l) for l in out.stdout.splitlines()]
    return lines[0]["batch"], lines[-1]["mean_ms"], lines[-1]["mean_engine_ms"]


def torch_models():
    import torch
    import torch.nn as nn

    def alexnet(p):
        s, cls, w, fc, _ = p
        f = nn.Sequential(nn.Conv2d(3, w[0], 11, 4, 2), nn.ReLU(), nn.LocalResponseNorm(5, 5e-4, 0.75, 2.0), nn.MaxPool2d(3, 2),
                          nn.Conv2d(w[0], w[1], 5, 1, 2), nn.ReLU(), nn.LocalResponseNorm(5, 5e-4, 0.75, 2.0), nn.MaxPool2d(3, 2),
                          nn.Conv2d(w[1], w[2], 3, 1, 1), nn.ReLU(), nn.Conv2d(w[2], w[3], 3, 1, 1), nn.ReLU(),
                          nn.Conv2d(w[3], w[4], 3, 1, 1), nn.ReLU(), nn.MaxPool2d(3, 2), nn.Flatten())
        n = f(torch.zeros(1, 3, s, s)).shape[1]
        return nn.Sequential(f, nn.Linear(n, fc), nn.ReLU(), nn.Dropout(0.5), nn.Linear(fc, fc), nn.ReLU(), nn.Dropout(0.5),
                             nn.Linear(fc, cls)), (3, s, s), cls, ("adam", 1e-3)

    def vgg(p):
        s, cls, w, fc, _ = p
        L, c = [], 3
        for width, k in zip(w, (2, 2, 4, 4, 4)):
            for _ in range(k):
                L += [nn.Conv2d(c, width, 3, 1, 1), nn.ReLU()]
                c = width
            L.append(nn.MaxPool2d(2, 2))
        L.append(nn.Flatten())
        f = nn.Sequential(*L)
        n = f(torch.zeros(1, 3, s, s)).shape[1]
        return nn.Sequential(f, nn.Linear(n, fc), nn.ReLU(), nn.Dropout(0.5), nn.Linear(fc, fc), nn.ReLU(), nn.Dropout(0.5),
                             nn.Linear(fc, cls)), (3, s, s), cls, ("adam", 1e-4)

    class Block(nn.Module):
        def __init__(self, cin, width, stride, bottleneck):
            super().__init__()
            out = 4 * width if bottleneck else width
            def cb(i, o, k, s):
                return [nn.Conv2d(i, o, k, s, k // 2, bias=False), nn.BatchNorm2d(o, eps=1e-5, momentum=0.1)]
            if bottleneck:  # v1: the stride in the first 1x1, as He et al.
                L = cb(cin, width, 1, stride) + [nn.ReLU()] + cb(width, width, 3, 1) + [nn.ReLU()] + cb(width, out, 1, 1)
            else:
                L = cb(cin, width, 3, stride) + [nn.ReLU()] + cb(width, width, 3, 1)
            self.body = nn.Sequential(*L)
            self.proj = nn.Sequential(*cb(cin, out, 1, stride)) if stride != 1 or cin != out else None
            self.out = out
        def forward(self, x):
            return torch.relu(self.body(x) + (self.proj(x) if self.proj is not None else x))

    def resnet(p, depth=50):
        s, cls, w, _ = p
        blocks, bott = {18: ((2, 2, 2, 2), 0), 34: ((3, 4, 6, 3), 0), 50: ((3, 4, 6, 3), 1),
                        101: ((3, 4, 23, 3), 1), 152: ((3, 8, 36, 3), 1)}[depth]
        L = [nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        c = w
        for st, nb in enumerate(blocks):
            for b in range(nb):
                blk = Block(c, w << st, 2 if st > 0 and b == 0 else 1, bott)
                L.append(blk)
                c = blk.out
        L += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, cls)]
        return nn.Sequential(*L), (3, s, s), cls, ("momentum", 0.1 * 16 / 256)

    def dqn(p):
        w, fc, _ = p
        return nn.Sequential(nn.Conv2d(4, w[0], 8, 4), nn.ReLU(), nn.Conv2d(w[0], w[1], 4, 2), nn.ReLU(),
                             nn.Conv2d(w[1], w[2], 3, 1), nn.ReLU(), nn.Flatten(), nn.Linear(7 * 7 * w[2], fc), nn.ReLU(),
                             nn.Linear(fc, 4))

    return torch, nn, {"alexnet": alexnet, "vgg": vgg, "residual": resnet}, dqn


def torch_transformer(torch, nn, preset, mode, batch, steps):
    """Step times (s) of the Transformer: see the module docstring."""
    import math
    V, d, H, dff, N, T = TFM[preset]
    F = nn.functional
    train = mode == "train"
    tf = nn.Transformer(d, H, N, N, dff, dropout=0.1, batch_first=True)
    emb = nn.Embedding(V, d)
    nn.init.normal_(emb.weight, 0.0, d ** -0.5)
    pos = torch.arange(T, dtype=torch.float32)[:, None] / torch.pow(10000.0, torch.arange(0, d, 2) / d)[None, :]
    pe = torch.zeros(T, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos), torch.cos(pos)
    drop = nn.Dropout(0.1)
    # a copy-task batch: lengths in [T/2, T-1], then EOS (2), PAD (0) after
    g = torch.Generator().manual_seed(1)
    lens = torch.randint(T // 2, T, (batch,), generator=g)
    src = torch.randint(4, V, (batch, T), generator=g)
    ar = torch.arange(T)[None, :]
    src = torch.where(ar < lens[:, None], src, torch.where(ar == lens[:, None], 2, 0))
    tgt_in = torch.cat([torch.ones(batch, 1, dtype=torch.long), src[:, :-1]], 1)
    pad = src == 0
    embed = lambda ids, p: emb(ids) * math.sqrt(d) + p
    times = []
    if train:
        params = list(tf.parameters()) + list(emb.parameters())
        opt = torch.optim.Adam(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        causal = tf.generate_square_subsequent_mask(T)
        tf.train()
        for _ in range(steps):
            t0 = time.perf_counter()
            y = tf(drop(embed(src, pe)), drop(embed(tgt_in, pe)), tgt_mask=causal, src_key_padding_mask=pad,
                   memory_key_padding_mask=pad)
            logits = y.reshape(-1, d) @ emb.weight.t()
            loss = F.cross_entropy(logits, src.reshape(-1), ignore_index=0, label_smoothing=0.1)
            opt.zero_grad()
            loss.backward()
            opt.step()
            times.append(time.perf_counter() - t0)
        return times
    tf.eval()

    def heads(x):  # [B, t, d] -> [B*H, t, d/H]
        return x.reshape(batch, -1, H, d // H).transpose(1, 2).reshape(batch * H, -1, d // H)

    def attend(q, k, v, mask=None):  # q [B*H, 1, dk]; mask [B*H, 1, t] (True: hidden)
        s = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d // H)
        if mask is not None:
            s = s.masked_fill(mask, -1e9)
        o = torch.bmm(torch.softmax(s, -1), v)
        return o.reshape(batch, H, 1, d // H).transpose(1, 2).reshape(batch, 1, d)

    with torch.no_grad():
        for _ in range(steps):
            t0 = time.perf_counter()
            memory = tf.encoder(embed(src, pe), src_key_padding_mask=pad)
            mpad = pad[:, None, :].repeat_interleave(H, 0)
            cross = []
            for layer in tf.decoder.layers:  # the cross-attention keys and values, once
                w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
                kv = F.linear(memory, w[d:], b[d:])
                cross.append((heads(kv[..., :d]), heads(kv[..., d:])))
            cache = [None] * len(tf.decoder.layers)
            tok = torch.ones(batch, dtype=torch.long)
            for t in range(T):
                x = embed(tok[:, None], pe[t])
                for i, layer in enumerate(tf.decoder.layers):
                    sa = layer.self_attn
                    qkv = F.linear(x, sa.in_proj_weight, sa.in_proj_bias)
                    q, k, v = heads(qkv[..., :d]), heads(qkv[..., d:2 * d]), heads(qkv[..., 2 * d:])
                    if cache[i] is not None:
                        k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
                    cache[i] = (k, v)
                    x = layer.norm1(x + sa.out_proj(attend(q, k, v)))
                    ca = layer.multihead_attn
                    q = heads(F.linear(x, ca.in_proj_weight[:d], ca.in_proj_bias[:d]))
                    x = layer.norm2(x + ca.out_proj(attend(q, cross[i][0], cross[i][1], mpad)))
                    x = layer.norm3(x + layer.linear2(torch.relu(layer.linear1(x))))
                x = tf.decoder.norm(x)
                tok = (x[:, 0] @ emb.weight.t()).argmax(1)
            times.append(time.perf_counter() - t0)
    return times


def torch_time(torch, nn, builders, dqn, model, preset, mode, batch, steps, threads):
    torch.manual_seed(1)
    torch.set_num_threads(threads)
    times = []
    if model == "transformer":
        times = torch_transformer(torch, nn, preset, mode, batch, steps)
    elif model == "deepq":
        p = DQN[preset]
        online, target = dqn(p), dqn(p)
        x = torch.rand(batch, 4, 84, 84)
        if mode == "infer":
            online.eval()
            with torch.no_grad():
                for _ in range(steps):
                    t0 = time.perf_counter()
                    online(x).argmax(1)
                    times.append(time.perf_counter() - t0)
        else:
            opt = torch.optim.RMSprop(online.parameters(), lr=2.5e-4, alpha=0.95, eps=0.01)
            x2, r, nd = torch.rand(batch, 4, 84, 84), torch.zeros(batch), torch.ones(batch)
            onehot = nn.functional.one_hot(torch.randint(0, 4, (batch,)), 4).float()
            for _ in range(steps):
                t0 = time.perf_counter()
                with torch.no_grad():
                    y = r + 0.99 * nd * target(x2).max(1).values
                qa = (online(x) * onehot).sum(1)
                loss = nn.functional.huber_loss(qa, y, delta=1.0)
                opt.zero_grad()
                loss.backward()
                opt.step()
                times.append(time.perf_counter() - t0)
    else:
        table = {"alexnet": ALEX, "vgg": VGG, "residual": RES}[model]
        net, shape, cls, (optname, lr) = builders[model](table[preset])
        x = torch.randn(batch, *shape)
        y = torch.randint(0, cls, (batch,))
        if mode == "infer":
            net.eval()
            with torch.no_grad():
                for _ in range(steps):
                    t0 = time.perf_counter()
                    torch.softmax(net(x), 1)
                    times.append(time.perf_counter() - t0)
        else:
            net.train()
            opt = torch.optim.Adam(net.parameters(), lr) if optname == "adam" else torch.optim.SGD(net.parameters(), lr, momentum=0.9)
            for _ in range(steps):
                t0 = time.perf_counter()
                loss = nn.functional.cross_entropy(net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                times.append(time.perf_counter() - t0)
    rest = times[1:] if len(times) > 1 else times
    return 1e3 * sum(rest) / len(rest)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fathom")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--presets", default="small,full")
    ap.add_argument("--models", default="alexnet,vgg,residual,deepq")
    ap.add_argument("--modes", default="train,infer")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=0, help="a batch for every model (0: each preset's own)")
    ap.add_argument("--baseline", help="another fathom binary measured in the same rounds (a 'before' line)")
    ap.add_argument("--torch-malloc", choices=("steady", "glibc"), default="steady",
                    help="PyTorch's allocator state: glibc thresholds at 1 GiB (default) or glibc's defaults")
    a = ap.parse_args()
    if a.rounds < 1 or a.steps < 1 or a.threads < 1:
        ap.error("--rounds, --steps and --threads must be at least 1")
    if a.torch_malloc == "steady":
        err = torch_malloc.steady()
        if err:
            sys.exit(f"bench_models.py: {err} (try --torch-malloc glibc)")
    try:
        torch, nn, builders, dqn = torch_models()
        tv = torch.__version__
    except ImportError:
        torch = None
        tv = "not available (apt-get install python3-torch; run with /usr/bin/python3)"
    print(f"fathom vs PyTorch {tv}: {a.threads} threads, {a.steps} steps (first skipped), "
          f"median of {a.rounds} rounds, PyTorch allocator: {a.torch_malloc}")
    print("fathom ms: the whole step; engine ms: the part inside fathom's graph runs (the step less its data\n"
          "feeding and, for deepq, the game), which is what the PyTorch step times. ratio = fathom / torch\n"
          "(the median of the rounds' ratios; range: the lowest and highest).")
    print(f"{'model':9} {'preset':6} {'mode':6} {'batch':>5} {'fathom ms':>10} {'engine ms':>10} {'torch ms':>10} "
          f"{'ratio':>6} {'engine':>6}  range")
    med = lambda v: sorted(v)[len(v) // 2] if len(v) % 2 else 0.5 * (sorted(v)[len(v) // 2 - 1] + sorted(v)[len(v) // 2])
    worst = None
    for preset in a.presets.split(","):
        for model in a.models.split(","):
            for mode in a.modes.split(","):
                f, e, t, fb, eb = [], [], [], [], []
                for _ in range(a.rounds):
                    if a.baseline:
                        _, fms, ems = fathom(a.baseline, model, preset, mode, a.steps, a.threads, a.batch)
                        fb.append(fms)
                        eb.append(ems)
                    batch, fms, ems = fathom(a.fathom, model, preset, mode, a.steps, a.threads, a.batch)
                    f.append(fms)
                    e.append(ems)
                    if torch is not None:
                        t.append(torch_time(torch, nn, builders, dqn, model, preset, mode, batch, a.steps, a.threads))
                if torch is None:
                    print(f"{model:9} {preset:6} {mode:6} {batch:5} {med(f):10.1f} {med(e):10.1f} {'-':>10} {'-':>6} "
                          f"{'-':>6}", flush=True)
                    continue
                if a.baseline:
                    rb = [x / y for x, y in zip(fb, t)]
                    reb = [x / y for x, y in zip(eb, t)]
                    print(f"{model:9} {preset:6} {mode:6} {batch:5} {med(fb):10.1f} {med(eb):10.1f} {med(t):10.1f} "
                          f"{med(rb):6.2f} {med(reb):6.2f}  {min(rb):.2f}-{max(rb):.2f}  (baseline)", flush=True)
                r = [x / y for x, y in zip(f, t)]
                re_ = [x / y for x, y in zip(e, t)]
                ratio = med(r)
                if worst is None or ratio > worst[0]:
                    worst = (ratio, model, preset, mode)
                print(f"{model:9} {preset:6} {mode:6} {batch:5} {med(f):10.1f} {med(e):10.1f} {med(t):10.1f} "
                      f"{ratio:6.2f} {med(re_):6.2f}  {min(r):.2f}-{max(r):.2f}", flush=True)
    if worst:
        print(f"biggest gap: {worst[1]} {worst[2]} {worst[3]}: fathom/PyTorch = {worst[0]:.2f}")


if __name__ == "__main__":
    main()
