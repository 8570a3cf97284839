"""Does training depend on the topology the way DFedSAM's Theorem 4.1 says?

DFedSAM (and DFedSAM-MGS with Q gossip steps) on a least-squares problem whose L, sigma_g, sigma_l and f* are
exact, on ring, torus, exponential and complete graphs of n clients, at the largest step size the theorem
admits (:func:`dfltheory.verify.worked_example.topology_sweep`). Prints the measured min_t ||grad f(x_bar^t)||^2
and the bound, each relative to the complete graph; writes ``topology_sweep.png`` and ``topology_sweep.json``.

    .venv/bin/python examples/topology_sweep.py [--n 16] [--rounds 100] [--out runs/topology_sweep]

About 50 seconds on two shared CPU cores at the defaults (the size of ``dfltheory report``'s section 6), two
minutes at --n 64 --rounds 200 (the README's table).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dfltheory.figures import plot_topology_sweep
from dfltheory.figures.axes import save_figure
from dfltheory.verify.plans import plans
from dfltheory.verify.worked_example import topology_sweep


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--rounds", type=int, default=100)
    p.add_argument("--out", default="runs/topology_sweep")
    args = p.parse_args(argv)
    out = Path(args.out)
    res = topology_sweep(plans()["dfedsam"].example, out, n=args.n, rounds=args.rounds)
    print(f"eta = {res['eta']:.4g} (the largest {res['theorem']} admits), T = {res['rounds']}")
    print(f"{'topology':<12} {'Q':>2} {'lambda':>8} {'measured':>10} {'consensus':>10} {'bound':>10} "
          f"{'measured / full':>16} {'bound / full':>13}")
    for r in res["rows"]:
        print(f"{r['topology']:<12} {r['Q']:>2} {r['lambda']:>8.4f} {r['measured']:>10.4g} {r['final_consensus']:>10.3g} "
              f"{r['bound']:>10.4g} {r['measured_ratio']:>16.3g} {r['bound_ratio']:>13.3g}")
    (out / "topology_sweep.json").write_text(json.dumps(res, indent=1))
    save_figure(plot_topology_sweep(res), out / "topology_sweep.png")


if __name__ == "__main__":
    main()
