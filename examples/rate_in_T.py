"""Does DFedSAM converge at the rate its corollary states?

Corollary 4.1.1 of seed 001 runs DFedSAM with eta = c/(L sqrt(K T)) and rho = r/sqrt(T) and states
min_t E||grad f(x_bar^t)||^2 = O(1/sqrt(K T)). For each horizon T this trains DFedSAM with that schedule on a
least-squares problem with exact constants (ring of n clients) and fits the slope in log T of the measured
min_t ||grad f(x_bar^t)||^2 against the bound's (``dfedsam.cor4.1.1.derived``) and the stated -1/2
(:func:`dfltheory.verify.worked_example.rate_in_T`, DFedSAM's plan's worked example); writes ``rate_in_T.png`` and ``rate_in_T.json``.

    .venv/bin/python examples/rate_in_T.py [--n 16] [--T 25 50 100 200 400 800] [--out runs/rate_in_T]

About two minutes on two shared CPU cores at the defaults (1.4 min of CPU time). ``dfltheory report`` runs the
first four horizons only (section 7), so its fitted slopes differ from these: neither curve is a power of T.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dfltheory.figures import plot_rate_in_T
from dfltheory.figures.axes import save_figure
from dfltheory.verify.plans import plans
from dfltheory.verify.worked_example import rate_in_T


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--T", type=int, nargs="+", default=[25, 50, 100, 200, 400, 800])
    p.add_argument("--r", type=float, default=0.05, help="SAM radius constant: rho = r / sqrt(T)")
    p.add_argument("--out", default="runs/rate_in_T")
    args = p.parse_args(argv)
    out = Path(args.out)
    res = rate_in_T(plans()["dfedsam"].example, out, n=args.n, horizons=args.T, r=args.r)
    local = [("", "")] + [(f"{m:.2f}", f"{b:.2f}") for m, b in zip(*res["local_slopes"].values())]
    for row, (m, b) in zip(res["rows"], local):
        print(f"T = {row['T']:>5}  eta = {row['eta']:.3g}  measured = {row['measured']:.4g}  bound = {row['bound']:.4g}"
              + (f"  slopes from the previous T: measured {m}, bound {b}" if m else ""))
    s = res["slopes"]
    print(f"\nslope in log T: measured {s['measured']:.3f}, bound {s['bound']:.3f}, stated {s['stated']}")
    print(f"the bound's O(1/sqrt(KT)) term is its largest only from T = {res['T_leading']:.3g} on")
    (out / "rate_in_T.json").write_text(json.dumps(res, indent=1))
    save_figure(plot_rate_in_T(res), out / "rate_in_T.png")


if __name__ == "__main__":
    main()
