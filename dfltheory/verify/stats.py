"""Tests with stated power for the papers' comparisons (issue 22): the per-seed values of two arms, or of several arms
against their spectral gaps, become a p-value, a verdict and the smallest effect the data could have detected.

* **'a > b'** (a better than b): a two-sided t-test of d = mean_a - mean_b: *paired* where both arms ran the same
  problems (seed s of each arm has the same partition, initial model and graph: the claims' arms), on the n
  per-seed differences with n - 1 degrees of freedom; Welch's (unequal variances, Welch-Satterthwaite degrees of
  freedom) where they did not (a planted arm on other seeds). *agrees* when its Holm-adjusted p is below
  ``ALPHA`` and d > 0, *contradicted* when it is below and d < 0, else *inconclusive*, with the smallest
  detectable effect (t_{1 - a/2, df} + t_{power, df}) SE at a = ``ALPHA`` / (tests in the claim), Holm's
  strictest level, and power ``POWER``: a true difference this large would have been found 80 % of the time.
* **'a = b'** (about equal): two one-sided tests (TOST) of |d| < margin; *agrees* when the Holm-adjusted TOST p is
  below ``ALPHA`` (equivalence shown), *contradicted* when the one-sided test of |d| > margin in the observed
  direction is (a difference larger than the margin shown), else *inconclusive*; the detectable quantity is the
  smallest margin equivalence could be shown within at 80 % power if d were 0, (t_{1 - a, df} + t_{0.9, df}) SE.
* **Trends** (a metric against the spectral gap over k arms): the statistic is the mean over seeds of the per-seed
  Spearman rho (seed s's arm values against the gaps); its null distribution permutes the arms independently within
  every seed (exact under 'the metric does not depend on the arm'), Monte Carlo with a fixed generator. 'Follows
  the gap' agrees when the p-value is below ``ALPHA`` with rho > 0; 'does not follow it' agrees when the 1 - 2 a
  interval of the mean rho lies inside (-``RHO_MARGIN``, ``RHO_MARGIN``) and is contradicted when the metric
  follows the gap significantly.

A claim's verdict from its parts: *contradicted* if any part is, *agrees* if all agree, *not testable here* if all
parts are not testable (an arm diverged, a target no run reaches), else *inconclusive* (with how many parts agree).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

ALPHA = 0.05  # the level of every claim's family of tests (Holm)
POWER = 0.8  # the power of the smallest detectable effect
RHO_MARGIN = 0.5  # 'does not follow the gap': the mean per-seed rho is shown inside (-0.5, 0.5)
PERMUTATIONS = 20000  # Monte Carlo permutations of a trend test
VERDICTS = ("agrees", "contradicted", "inconclusive", "not testable here")


def _t():
    from scipy import stats

    return stats.t


def _clean(x) -> np.ndarray:
    x = np.asarray(x, float)
    if x.ndim != 1 or len(x) < 2 or not np.isfinite(x).all():
        raise ValueError(f"a test needs at least two finite values per arm, got {x.tolist()}")
    return x


def welch(a: Sequence[float], b: Sequence[float]) -> dict:
    """d = mean(a) - mean(b), its standard error, Welch's degrees of freedom and the two-sided p-value. Two arms with
    no spread at all (identical seeds) give p = 1 when equal and 0 when not."""
    a, b = _clean(a), _clean(b)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    d, se = float(a.mean() - b.mean()), math.sqrt(va + vb)
    if se == 0.0:
        return {"difference": d, "se": 0.0, "df": float(len(a) + len(b) - 2), "p": 1.0 if d == 0 else 0.0}
    df = (va + vb) ** 2 / ((va**2 / (len(a) - 1) if va else 0.0) + (vb**2 / (len(b) - 1) if vb else 0.0))
    p = 2 * float(_t().sf(abs(d) / se, df))
    return {"difference": d, "se": se, "df": float(df), "p": min(1.0, p)}


def paired(a: Sequence[float], b: Sequence[float]) -> dict:
    """d = mean(a - b) over pairs (the same problem, seed by seed), its standard error, n - 1 degrees of freedom and
    the two-sided p-value of the paired t-test; no spread in the differences gives p = 1 when d = 0 and 0 when not."""
    a, b = _clean(a), _clean(b)
    if len(a) != len(b):
        raise ValueError(f"a paired test needs as many values in both arms, got {len(a)} and {len(b)}")
    diff = a - b
    d, se = float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))
    if se == 0.0:
        return {"difference": d, "se": 0.0, "df": float(len(diff) - 1), "p": 1.0 if d == 0 else 0.0}
    return {"difference": d, "se": se, "df": float(len(diff) - 1),
            "p": min(1.0, 2 * float(_t().sf(abs(d) / se, len(diff) - 1)))}


def one_sided(d: float, se: float, df: float, bound: float, above: bool) -> float:
    """p of the one-sided test of 'true difference > bound' (``above``) or '< bound' given d, SE and df."""
    if se == 0.0:
        return 0.0 if (d > bound if above else d < bound) else 1.0
    z = (d - bound) / se
    return float(_t().sf(z if above else -z, df))


def holm(p: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error at the level compared with)."""
    p = np.asarray(p, float)
    order = np.argsort(p)
    adj, running = np.empty_like(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adj[i] = running
    return adj.tolist()


def detectable(se: float, df: float, alpha: float, power: float = POWER, sided: int = 2) -> float:
    """The smallest true difference a test at ``alpha`` detects with probability ``power`` (normal-theory t
    approximation): (t_{1 - alpha/sided, df} + t_{power, df}) SE."""
    t = _t()
    return float((t.ppf(1 - alpha / sided, df) + t.ppf(power, df)) * se)


def pair_test(a: Sequence[float], b: Sequence[float], relation: str, sign: int = 1, margin: float | None = None,
              pair: bool = False) -> dict:
    """The raw test of one pair (before Holm): {"test", "difference" (in the metric's own sign), "se", "df", "p"
    (the p-value the verdict uses: t for '>', TOST for '='), "p_beyond" ('=': |d| > margin), "margin"}.
    ``sign`` -1 where smaller is better: d is then taken of the negated values. ``pair``: value i of both arms
    comes from the same problem (seed i), and the paired t-test is used; Welch's otherwise."""
    test = paired if pair else welch
    w = test(sign * np.asarray(a, float), sign * np.asarray(b, float))
    kind = "paired t" if pair else "Welch t"
    out = {"difference": sign * w["difference"], "se": w["se"], "df": w["df"]}
    if relation == ">":
        return {**out, "test": f"{kind}, two-sided", "p": w["p"], "signed": w["difference"]}
    if relation == "=":
        if margin is None or margin <= 0:
            raise ValueError(f"an equivalence claim needs a margin > 0, got {margin!r}")
        d, se, df = w["difference"], w["se"], w["df"]
        p_equiv = max(one_sided(d, se, df, -margin, True), one_sided(d, se, df, margin, False))
        p_beyond = one_sided(d, se, df, margin, True) if d >= 0 else one_sided(d, se, df, -margin, False)
        return {**out, "test": f"TOST ({kind}), margin {margin:g}", "p": p_equiv, "p_beyond": p_beyond,
                "margin": margin,
                "signed": d}
    raise ValueError(f"relation must be '>' or '=', got {relation!r}")


def pair_verdict(test: dict, relation: str, p_adjusted: float, p_beyond_adjusted: float | None, tests: int,
                 alpha: float = ALPHA) -> dict:
    """The verdict of a pair from its Holm-adjusted p-values, with the smallest detectable effect (module docstring)
    at Holm's strictest level alpha / ``tests``."""
    strict = alpha / max(1, tests)
    if relation == ">":
        mde = detectable(test["se"], test["df"], strict)
        if p_adjusted < alpha:
            verdict = "agrees" if test["signed"] > 0 else "contradicted"
        else:
            verdict = "inconclusive"
    else:
        mde = detectable(test["se"], test["df"], 2 * strict, power=0.9, sided=2)  # TOST: one-sided at strict
        if p_adjusted < alpha:
            verdict = "agrees"
        elif p_beyond_adjusted is not None and p_beyond_adjusted < alpha:
            verdict = "contradicted"
        else:
            verdict = "inconclusive"
    return {"p_holm": p_adjusted, "detectable": mde, "verdict": verdict}


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None where x or y is constant (undefined)."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def trend_test(gaps: Sequence[float], values: np.ndarray, permutations: int = PERMUTATIONS, seed: int = 0) -> dict:
    """The mean over seeds of Spearman's rho between ``gaps`` (k arms) and each row of ``values`` (seeds x arms,
    signed so that larger is better), its two-sided permutation p-value (arms permuted within each seed) and the
    1 - 2 ALPHA t-interval of the mean rho over seeds."""
    from scipy.stats import rankdata

    V = np.asarray(values, float)
    if V.ndim != 2 or V.shape[1] != len(gaps) or V.shape[0] < 2 or not np.isfinite(V).all():
        raise ValueError(f"a trend test needs finite values of shape (seeds >= 2, {len(gaps)} arms), got {V.shape}")
    g = rankdata(gaps)
    if np.ptp(g) == 0:
        return {"rho": None, "p": None, "interval": None, "seeds": V.shape[0]}
    R = np.apply_along_axis(rankdata, 1, V)
    gz = (g - g.mean()) / np.linalg.norm(g - g.mean())

    def mean_rho(ranks):  # (..., seeds, arms) -> (...,); a seed with a constant metric counts as rho = 0
        c = ranks - ranks.mean(-1, keepdims=True)
        norm = np.linalg.norm(c, axis=-1)
        return np.mean(np.where(norm > 0, (c @ gz) / np.where(norm > 0, norm, 1.0), 0.0), axis=-1)

    observed = float(mean_rho(R))
    rng = np.random.default_rng(seed)
    idx = np.argsort(rng.random((permutations, *R.shape)), axis=-1)
    null = mean_rho(np.take_along_axis(np.broadcast_to(R, idx.shape), idx, -1))
    p = float((np.sum(np.abs(null) >= abs(observed) - 1e-12) + 1) / (permutations + 1))
    per_seed = [(r - r.mean()) @ gz / np.linalg.norm(r - r.mean()) if np.ptp(r) else 0.0 for r in R]
    half = float(_t().ppf(1 - ALPHA, len(per_seed) - 1) * np.std(per_seed, ddof=1) / math.sqrt(len(per_seed)))
    return {"rho": observed, "p": p, "interval": [observed - half, observed + half], "seeds": V.shape[0]}


def trend_verdict(test: dict, relation: str, p_adjusted: float | None, alpha: float = ALPHA) -> str:
    """'>' agrees when the metric follows the gap significantly; '=' agrees when the interval of the mean rho lies
    inside (-RHO_MARGIN, RHO_MARGIN) and is contradicted when the metric follows the gap significantly."""
    if test["rho"] is None:
        return "not testable here"
    follows = p_adjusted is not None and p_adjusted < alpha
    if relation == ">":
        return ("agrees" if test["rho"] > 0 else "contradicted") if follows else "inconclusive"
    if relation == "=":
        if follows and test["rho"] > 0:
            return "contradicted"
        lo, hi = test["interval"]
        return "agrees" if -RHO_MARGIN < lo and hi < RHO_MARGIN else "inconclusive"
    raise ValueError(f"relation must be '>' or '=', got {relation!r}")


def claim_verdict(parts: Sequence[str]) -> str:
    """The claim's verdict from its parts' (module docstring)."""
    if not parts:
        return "not testable here"
    if "contradicted" in parts:
        return "contradicted"
    if all(v == "agrees" for v in parts):
        return "agrees"
    if all(v == "not testable here" for v in parts):
        return "not testable here"
    return "inconclusive"
