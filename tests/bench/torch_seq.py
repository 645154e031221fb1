#!/usr/bin/env python3
"""PyTorch references for fathom's sequence and generative workloads.

Same architecture, sizes, batch and loss as models/seq2seq.c, memnet.c,
speech.c and autoenc.c (see fathom-workloads(7)); the natural PyTorch idiom
where it does the same arithmetic. Prints one JSON object per line:
{"model":..,"preset":..,"mode":..,"step_ms":[..],"median_ms":..,"loss":..}

usage: torch_seq.py MODEL PRESET MODE [--steps K] [--min-ms MS] [--warmup W] [--threads N] [--cpu]
                    [--torch-malloc steady|glibc]
(--cpu: the process's CPU time per step instead of the clock's; --torch-malloc:
glibc's mmap and trim thresholds at 1 GiB, the default, or glibc's defaults:
see torch_malloc.py)
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch_malloc
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {
    # (mirrors of the C preset tables)
    "seq2seq": {"tiny": dict(sv=64, tv=64, emb=16, units=16, layers=3, src=6, tgt=8, samples=16, batch=8),
                "small": dict(sv=4000, tv=4000, emb=128, units=128, layers=3, src=10, tgt=15, samples=256, batch=32),
                "full": dict(sv=40000, tv=40000, emb=256, units=256, layers=3, src=20, tgt=25, samples=512, batch=64)},
    "memnet": {"tiny": dict(emb=20, hops=3, mem=10, vocab=20, sent=6, batch=32),
               "small": dict(emb=20, hops=3, mem=50, vocab=20, sent=6, batch=32),
               "full": dict(emb=20, hops=3, mem=50, vocab=20, sent=6, batch=32)},
    "speech": {"tiny": dict(frames=24, context=2, hidden=64, labels=5, batch=4),
               "small": dict(frames=200, context=0, hidden=512, labels=20, batch=16),
               "full": dict(frames=1566, context=0, hidden=1024, labels=75, batch=32)},
    "autoenc": {"tiny": dict(hidden=128, latent=10, batch=32),
                "small": dict(hidden=500, latent=20, batch=128),
                "full": dict(hidden=500, latent=20, batch=128)},
}


# ---- seq2seq -----------------------------------------------------------------
class LSTMCell(nn.Module):
    """TF's BasicLSTMCell: W [x, h] + b split into i, j, f, o; forget bias 1."""

    def __init__(self, inp, units):
        super().__init__()
        self.lin = nn.Linear(inp + units, 4 * units)

    def forward(self, x, c, h):
        i, j, f, o = self.lin(torch.cat([x, h], 1)).chunk(4, 1)
        c = c * torch.sigmoid(f + 1.0) + torch.sigmoid(i) * torch.tanh(j)
        return c, torch.tanh(c) * torch.sigmoid(o)


class Seq2Seq(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        U, E, L = p["units"], p["emb"], p["layers"]
        self.emb_src = nn.Embedding(p["sv"], E)
        self.emb_tgt = nn.Embedding(p["tv"], E)
        self.enc = nn.ModuleList([LSTMCell(E if l == 0 else U, U) for l in range(L)])
        self.dec = nn.ModuleList([LSTMCell(U, U) for l in range(L)])
        self.w1 = nn.Linear(U, U, bias=False)
        self.wq = nn.Linear(2 * L * U, U)
        self.v = nn.Linear(U, 1, bias=False)
        self.din = nn.Linear(E + U, U)
        self.dout = nn.Linear(2 * U, U)
        self.proj_w = nn.Parameter(torch.randn(p["tv"], U) * 0.01)
        self.proj_b = nn.Parameter(torch.zeros(p["tv"]))

    def encode(self, src):  # src [Ts, B]
        B, U, L = src.shape[1], self.p["units"], self.p["layers"]
        c = [torch.zeros(B, U) for _ in range(L)]
        h = [torch.zeros(B, U) for _ in range(L)]
        xs = self.emb_src(src)
        outs = []
        for t in range(src.shape[0]):
            x = xs[t]
            for l in range(L):
                c[l], h[l] = self.enc[l](x, c[l], h[l])
                x = h[l]
            outs.append(x)
        states = torch.stack(outs, 0)  # [Ts, B, U]
        return c, h, states, self.w1(states), states.transpose(0, 1)

    def attend(self, c, h, hidden, states_bm):
        q = torch.cat([t for l in range(len(c)) for t in (c[l], h[l])], 1)
        e = self.v(torch.tanh(hidden + self.wq(q))).squeeze(2).t()  # [B, Ts]
        a = torch.softmax(e, 1)
        return torch.bmm(a.unsqueeze(1), states_bm).squeeze(1)

    def decode_step(self, x, attns, c, h, hidden, states_bm):
        x = self.din(torch.cat([x, attns], 1))
        for l in range(len(c)):
            c[l], h[l] = self.dec[l](x, c[l], h[l])
            x = h[l]
        attns = self.attend(c, h, hidden, states_bm)
        return self.dout(torch.cat([x, attns], 1)), attns

    def train_loss(self, src, dec_in, targets):
        c, h, states, hidden, states_bm = self.encode(src)
        attns = torch.zeros(src.shape[1], self.p["units"])
        xs = self.emb_tgt(dec_in)
        outs = []
        for t in range(dec_in.shape[0]):
            o, attns = self.decode_step(xs[t], attns, c, h, hidden, states_bm)
            outs.append(o)
        return sampled_softmax(self.proj_w, self.proj_b, torch.cat(outs, 0), targets.reshape(-1), self.p["samples"])

    @torch.no_grad()
    def greedy(self, src, T):
        c, h, states, hidden, states_bm = self.encode(src)
        B = src.shape[1]
        attns = torch.zeros(B, self.p["units"])
        x = self.emb_tgt(torch.full((B,), 1, dtype=torch.long))
        preds = []
        for t in range(T):
            o, attns = self.decode_step(x, attns, c, h, hidden, states_bm)
            pred = torch.argmax(F.linear(o, self.proj_w, self.proj_b), 1)
            preds.append(pred)
            x = self.emb_tgt(pred)
        return torch.stack(preds, 0)


def sampled_softmax(w, b, inputs, labels, S):
    """TF's sampled_softmax_loss: S shared log-uniform candidates, logits
    corrected by log Q, softmax cross-entropy with the true class first."""
    V = w.shape[0]
    u = torch.rand(S)
    cand = (torch.exp(u * math.log(V + 1)) - 1).long().clamp_(0, V - 1)
    q = lambda ids: torch.log((torch.log((ids + 2).double() / (ids + 1).double()) / math.log(V + 1)) * S).float()
    true_logit = (inputs * w[labels]).sum(1) + b[labels] - q(labels)
    samp_logit = inputs @ w[cand].t() + b[cand] - q(cand)
    samp_logit = samp_logit.masked_fill(cand.unsqueeze(0) == labels.unsqueeze(1), -1e30)
    logits = torch.cat([true_logit.unsqueeze(1), samp_logit], 1)
    return F.cross_entropy(logits, torch.zeros(len(labels), dtype=torch.long))


# ---- memnet ------------------------------------------------------------------
class MemN2N(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        V, D, M, K = p["vocab"], p["emb"], p["mem"], p["hops"]
        self.E = nn.ParameterList([nn.Parameter(torch.randn(V, D) * 0.1) for _ in range(K + 1)])
        self.T = nn.ParameterList([nn.Parameter(torch.randn(M, D) * 0.1) for _ in range(K + 1)])
        J = p["sent"]
        pe = torch.empty(J, D)
        for j in range(1, J + 1):
            for k in range(1, D + 1):
                pe[j - 1, k - 1] = (1 - j / J) - (k / D) * (1 - 2 * j / J)
        self.register_buffer("pe", pe)

    def forward(self, stories, query):
        K = self.p["hops"]
        mem = [(F.embedding(stories, self.E[k]) * self.pe).sum(2) + self.T[k] for k in range(K + 1)]
        u = (F.embedding(query, self.E[0]) * self.pe).sum(1)
        for k in range(K):
            p = torch.softmax(torch.bmm(mem[k], u.unsqueeze(2)).squeeze(2), 1)
            u = u + torch.bmm(p.unsqueeze(1), mem[k + 1]).squeeze(1)
        return u @ self.E[K].t()


# ---- speech ------------------------------------------------------------------
class DeepSpeech(nn.Module):
    def __init__(self, p):
        super().__init__()
        H, W = p["hidden"], 26 * (2 * p["context"] + 1)
        self.fc1, self.fc2, self.fc3 = nn.Linear(W, H), nn.Linear(H, H), nn.Linear(H, H)
        self.w4 = nn.Linear(H, H)
        self.uf = nn.Linear(H, H, bias=False)
        self.ub = nn.Linear(H, H, bias=False)
        self.fc5 = nn.Linear(H, H)
        self.out = nn.Linear(H, 62)

    def forward(self, x):  # x [T, N, W]
        g = lambda t: torch.clamp(t, 0, 20)
        T = x.shape[0]
        h = g(self.fc3(g(self.fc2(g(self.fc1(x))))))
        x4 = self.w4(h)
        hf, hb = [None] * T, [None] * T
        for t in range(T):
            hf[t] = g(x4[t] + self.uf(hf[t - 1])) if t else g(x4[t])
        for t in reversed(range(T)):
            hb[t] = g(x4[t] + self.ub(hb[t + 1])) if t < T - 1 else g(x4[t])
        h4 = torch.stack(hf, 0) + torch.stack(hb, 0)
        return self.out(g(self.fc5(h4)))  # [T, N, 62]


# ---- autoenc -----------------------------------------------------------------
class VAE(nn.Module):
    def __init__(self, p):
        super().__init__()
        H, Z = p["hidden"], p["latent"]
        self.h, self.mu, self.lv = nn.Linear(784, H), nn.Linear(H, Z), nn.Linear(H, Z)
        self.dh, self.dx = nn.Linear(Z, H), nn.Linear(H, 784)

    def forward(self, x):
        h = torch.tanh(self.h(x))
        mu, lv = self.mu(h), self.lv(h)
        z = mu + torch.exp(0.5 * lv) * torch.randn_like(mu)
        return self.dx(torch.tanh(self.dh(z))), mu, lv


def make(model, preset, mode):
    """Returns (step function, module) for one workload."""
    p = PRESETS[model][preset]
    B = p["batch"]
    g = torch.Generator().manual_seed(42)
    if model == "seq2seq":
        m = Seq2Seq(p)
        src = torch.randint(4, p["sv"], (p["src"], B), generator=g)
        dec_in = torch.randint(4, p["tv"], (p["tgt"], B), generator=g)
        tgt = torch.randint(4, p["tv"], (p["tgt"], B), generator=g)
        if mode == "infer":
            return lambda: (m.greedy(src, p["tgt"]), float("nan"))[1], m
        opt = torch.optim.SGD(m.parameters(), lr=0.5)

        def step():
            opt.zero_grad()
            loss = m.train_loss(src, dec_in, tgt)
            loss.backward()
            nn.utils.clip_grad_norm_(m.parameters(), 5.0)
            opt.step()
            return loss.item()
        return step, m
    if model == "memnet":
        m = MemN2N(p)
        stories = torch.randint(0, p["vocab"], (B, p["mem"], p["sent"]), generator=g)
        query = torch.randint(0, p["vocab"], (B, p["sent"]), generator=g)
        ans = torch.randint(1, p["vocab"], (B,), generator=g)
        if mode == "infer":
            def infer():
                with torch.no_grad():
                    torch.argmax(m(stories, query), 1)
                return float("nan")
            return infer, m
        opt = torch.optim.Adam(m.parameters(), lr=0.01, eps=1e-8)

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(m(stories, query), ans)
            loss.backward()
            with torch.no_grad():
                for k, prm in enumerate(m.parameters()):
                    prm.grad.copy_(prm.grad * torch.clamp(40.0 / (prm.grad.norm() + 1e-12), max=1.0))
                    prm.grad.add_(torch.randn_like(prm.grad) * 1e-3)
                for e in m.E:
                    e.grad[0].zero_()
            opt.step()
            return loss.item()
        return step, m
    if model == "speech":
        m = DeepSpeech(p)
        T, W = p["frames"], 26 * (2 * p["context"] + 1)
        x = torch.randn(T, B, W, generator=g)
        L = p["labels"]
        labels = torch.randint(0, 61, (B, L), generator=g)
        label_len = torch.full((B,), L, dtype=torch.long)
        seq_len = torch.full((B,), T, dtype=torch.long)
        if mode == "infer":
            def infer():
                with torch.no_grad():
                    best = torch.argmax(m(x), 2)  # greedy CTC: argmax, collapse, drop blanks
                    keep = (best != 61) & torch.cat([torch.ones(1, B, dtype=torch.bool), best[1:] != best[:-1]], 0)
                    [best[:, n][keep[:, n]] for n in range(B)]
                return float("nan")
            return infer, m
        opt = torch.optim.SGD(m.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            lp = F.log_softmax(m(x), 2)
            loss = F.ctc_loss(lp, labels, seq_len, label_len, blank=61, reduction="sum") / B
            loss.backward()
            nn.utils.clip_grad_norm_(m.parameters(), 5.0)  # as speech.c
            opt.step()
            return loss.item()
        return step, m
    if model == "autoenc":
        m = VAE(p)
        x = torch.rand(B, 784, generator=g)
        if mode == "infer":
            def infer():
                with torch.no_grad():
                    torch.sigmoid(m(x)[0])
                return float("nan")
            return infer, m
        opt = torch.optim.Adam(m.parameters(), lr=1e-3, eps=1e-8)

        def step():
            opt.zero_grad()
            logits, mu, lv = m(x)
            rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / B
            kl = -0.5 * torch.sum(1 + lv - mu * mu - torch.exp(lv)) / B
            loss = rec + kl
            loss.backward()
            opt.step()
            return loss.item()
        return step, m
    raise SystemExit(f"unknown model {model}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("preset")
    ap.add_argument("mode")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--min-ms", type=float, default=0, help="time steps until they took this long, at least --steps")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--torch-malloc", choices=("steady", "glibc"), default="steady")
    a = ap.parse_args()
    if a.torch_malloc == "steady":
        err = torch_malloc.steady()
        if err:
            raise SystemExit(f"torch_seq.py: {err} (try --torch-malloc glibc)")
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(42)
    step, m = make(a.model, a.preset, a.mode)
    m.train(a.mode == "train")
    loss = float("nan")
    for _ in range(a.warmup):
        loss = step()
    clock = time.process_time if a.cpu else time.perf_counter
    times = []
    while len(times) < a.steps or (sum(times) < a.min_ms and len(times) < 4096):
        t = clock()
        loss = step()
        times.append((clock() - t) * 1e3)
    print(json.dumps({"model": a.model, "preset": a.preset, "mode": a.mode, "threads": torch.get_num_threads(),
                      "torch": torch.__version__, "params": sum(p.numel() for p in m.parameters()),
                      "step_ms": times, "median_ms": statistics.median(times),
                      "loss": None if math.isnan(loss) else loss}))


if __name__ == "__main__":
    sys.exit(main())
