"""Per-client reference loop: the TEST ORACLE (and the benchmark's baseline), not for experiments.

Each algorithm is written again, independently of :mod:`rules` and :mod:`communication`, as a plain Python
loop over clients and local steps that follows the cards' pseudocode line by line: one ``nn.Module`` call and
one ``torch.autograd.grad`` per client and step, gossip as explicit sums sum_l w_il z_l. It consumes the same
round plans (minibatch indices, participants) and mixing matrices as the engine, so the two must agree to
rounding error.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils import vector_to_parameters

from dfltheory.empirical.rules import EPS
from dfltheory.topology import graphs

SERVER = ("fedavg", "fedprox", "fedsam", "scaffold")
PUSH_SUM = ("dfedsgpsm", "sgp", "dfedsgpsm-s", "dfedpgp", "dfedpgp-pull")
PERSONAL = ("dfedpgp", "dfedpgp-pull")


class ReferenceRun:
    """State: python lists of per-client flat vectors. ``round(plan, W_at)`` runs one round of ``name``."""

    def __init__(self, name: str, module: nn.Module, loss, x_train, y_train, x0: torch.Tensor, m: int, K: int,
                 hp: dict | None = None, sequential: bool = False, topology=None):
        self.name, self.module, self.loss, self.K, self.m = name, module, loss, K, m
        self.x_train, self.y_train, self.seq = x_train, y_train, sequential
        self.hp = hp or {}
        self.topology = topology  # DFedSGPSM-S: the 'neighbour-selection' topology (seed, k)
        self.personal = personal_mask(module, self.hp.get("personal"))  # DFedPGP's v coordinates
        z = torch.zeros_like(x0)
        self.x = [x0.clone() for _ in range(m)]
        self.dual = [z.clone() for _ in range(m)]  # DFedADMM ghat_i^{t-1}
        self.c_local = [z.clone() for _ in range(m)]  # SCAFFOLD c_i
        self.c = z.clone()  # SCAFFOLD c
        self.agg_prev = [x0.clone() for _ in range(m)]  # DFedCata a_i^{t}
        self.w = [torch.ones(()) for _ in range(m)]  # push-sum weights w_i^t
        self.t = 0

    # -- one client's local phase --------------------------------------------------------------------------
    def grad(self, x, xb, yb):
        vector_to_parameters(x, self.module.parameters())
        params = list(self.module.parameters())
        g = torch.autograd.grad(self.loss(self.module(xb), yb), params)
        return torch.cat([t.reshape(-1) for t in g])

    def local(self, i: int, start: torch.Tensor, idx: torch.Tensor, lr: float) -> torch.Tensor:
        n, hp = self.name, self.hp
        if n in PERSONAL:
            return self._pgp_local(i, start, idx, lr)
        sam_default = {"dfedsam": 0.01, "dfedsam-mgs": 0.01, "dfedadmm-sam": 0.1, "fedsam": 0.1, "dfedsgpsm": 0.1,
                       "dfedsgpsm-s": 0.1}
        rho = hp.get("rho", sam_default[n]) if n in sam_default else None
        y, v = start.clone(), torch.zeros_like(start)
        for k in range(self.K):
            xb, yb = self.x_train[idx[k, i]], self.y_train[idx[k, i]]
            z = y / self.w[i] if n in PUSH_SUM else y  # de-biased point (dfedsgpsm line 5)
            g = self.grad(z, xb, yb)
            if rho is not None:  # SAM: gradient at z + rho g/||g||, same minibatch
                g = self.grad(z + rho * g / (g.norm() + EPS), xb, yb)
            if n in ("dfedavgm", "dfedsgpsm", "dfedsgpsm-s"):
                v = hp.get("momentum", 0.9) * v + g
                g = v
            elif n.startswith("dfedadmm"):
                g = g - self.dual[i] + (y - start) / hp.get("lam_pen", 0.1)
            elif n == "dfedcata":
                g = g + hp.get("lam_pen", 0.05) * (y - start)
            elif n == "fedprox":
                g = g + hp.get("mu", 0.01) * (y - start)
            elif n == "scaffold":
                g = g - self.c_local[i] + self.c
            y = y - lr * g
        return y

    def _pgp_local(self, i: int, start: torch.Tensor, idx: torch.Tensor, lr: float) -> torch.Tensor:
        """Card dfedpgp §3.1 lines 5-12: K_v steps v <- v - eta_v grad_v F_i(z_i^{t,0}, v), then the remaining steps
        u <- u - eta_u grad_u F_i(u / mu_i^t, v^{t+1})."""
        p, hp = self.personal, self.hp
        K_v = hp.get("K_v", 1)
        eta_v = lr * hp["lr_v"] / hp["lr"] if "lr_v" in hp else lr  # eta_v decayed like eta_u
        beta = hp.get("momentum", 0.0)  # the experiments' SGD momentum: one optimizer per phase (seed 003 L189)
        u, v = start[~p].clone(), start[p].clone()
        bu, bv = torch.zeros_like(u), torch.zeros_like(v)
        for k in range(self.K):
            point = torch.empty_like(start)
            point[~p], point[p] = u / self.w[i], v
            g = self.grad(point, self.x_train[idx[k, i]], self.y_train[idx[k, i]])
            part = g[p] if k < K_v else g[~p]  # the phase's optimizer: its parameters' gradient, clipped
            if hp.get("clip"):
                part = part * min(1.0, hp["clip"] / (float(part.norm()) + EPS))
            if k < K_v:
                bv = beta * bv + part
                v = v - eta_v * bv
            else:
                bu = beta * bu + part
                u = u - lr * bu
        out = torch.empty_like(start)
        out[~p], out[p] = u, v
        return out

    def _selected_P(self, z, idx):
        """Seed 000 eq. (2): out-neighbours drawn from the losses f_i of z_i / w_i on client i's last minibatch;
        p_ji = 1/|N_i^out| over the picks and i itself (card dfedsgpsm §5.1)."""
        f = []
        for i in range(self.m):
            vector_to_parameters(z[i] / self.w[i], self.module.parameters())
            with torch.no_grad():
                f.append(float(self.loss(self.module(self.x_train[idx[-1, i]]), self.y_train[idx[-1, i]])))
        topo = self.topology
        G = graphs.neighbour_selection(self.m, seed=topo.seed, k=topo.params["k"], t=self.t, losses=f)
        P = torch.zeros(self.m, self.m)
        for i in range(self.m):
            out = [i, *G.successors(i)]
            for j in out:
                P[j, i] = 1.0 / len(out)
        return P

    # -- one round -------------------------------------------------------------------------------------------
    def round(self, plan, W_at) -> None:
        n, m = self.name, self.m
        lr, idx, active = plan.lr, plan.idx, [int(a) for a in plan.active]
        if n == "dfedcata" and self.seq:
            return self._sequential(plan, W_at(0))
        z = list(self.x)
        for i in active:
            z[i] = self.local(i, self.x[i], idx, lr)
        if n.startswith("dfedadmm"):
            lam_pen = self.hp.get("lam_pen", 0.1)
            for i in range(m):
                old = self.dual[i]
                self.dual[i] = old - (z[i] - self.x[i]) / lam_pen  # line 15
                z[i] = z[i] - lam_pen * old  # line 16: message with the OLD dual
        if n in SERVER:
            avg = sum(z[i] for i in active) / len(active)
            if n == "scaffold":
                dc = []
                for i in active:
                    new = self.c_local[i] - self.c + (self.x[i] - z[i]) / (self.K * lr)
                    dc.append(new - self.c_local[i])
                    self.c_local[i] = new
                self.c = self.c + sum(dc) / m
            self.x = [avg.clone() for _ in range(m)]
        elif n in PUSH_SUM:  # lines 15-16: x_i = sum_j p_ij x_j, w_i = sum_j p_ij w_j
            P = self._selected_P(z, idx) if n == "dfedsgpsm-s" else W_at(0)
            self.x = self._gossip(P, z)
            if n in PERSONAL:  # v_i is never sent (dfedpgp §3.1)
                for i in range(m):
                    self.x[i][self.personal] = z[i][self.personal]
            self.w = [sum(P[i, j] * self.w[j] for j in range(m)) for i in range(m)]
        elif n == "dfedcata":
            W = W_at(0)
            beta, mode = self.hp.get("beta", 0.9), self.hp.get("mode", "A")
            a = self._gossip(W, z)
            self.x = [a[i] + beta * (a[i] - (z[i] if mode == "A" else self.agg_prev[i])) for i in range(m)]
            self.agg_prev = a
        elif n == "dpsgd":
            # Lian et al. 2017 Algorithm 1: x_{k+1/2,i} = sum_j W_ij x_{k,j}, then x_{k+1,i} = x_{k+1/2,i} - gamma
            # grad F_i(x_{k,i}; xi_{k,i}): the local step z_i - x_i, taken from the unmixed x_i, added to the mix
            mixed = self._gossip(W_at(0), self.x)
            self.x = [mixed[i] + (z[i] - self.x[i]) for i in range(m)]
        else:
            Q = self.hp.get("Q", 4) if n == "dfedsam-mgs" else 1
            for q in range(Q):
                z = self._gossip(W_at(q if self.hp.get("fresh_gossip") else 0), z)
            self.x = z
        self.t += 1

    @staticmethod
    def _gossip(W, z):
        m = len(z)
        out = []
        for i in range(m):
            acc = torch.zeros_like(z[0])
            for l in range(m):
                if W[i, l] != 0:
                    acc = acc + W[i, l] * z[l]
            out.append(acc)
        return out

    def _sequential(self, plan, W):
        beta, mode = self.hp.get("beta", 0.9), self.hp.get("mode", "A")
        for c in range(self.m):
            a = sum(W[c, l] * self.x[l] for l in range(self.m))
            y = a + beta * (a - (self.x[c] if mode == "A" else self.agg_prev[c]))
            self.agg_prev[c] = a
            self.x[c] = self.local(c, y, plan.idx, plan.lr)
        self.t += 1


def personal_mask(module: nn.Module, layers) -> torch.Tensor:
    """DFedPGP's personal coordinates: the parameters of ``layers`` (comma-separated names; default the last Linear)."""
    if layers is None:
        layers = [name for name, mod in module.named_modules() if isinstance(mod, nn.Linear)][-1:]
    elif isinstance(layers, str):
        layers = [] if layers == "none" else layers.split(",")
    return torch.cat([torch.full((p.numel(),), any(name.startswith(f"{layer}.") for layer in layers))
                      for name, p in module.named_parameters()])
