"""Tests with stated power for the papers' comparisons (issues 22 and 34): the per-seed values of two arms, or of
several arms against their spectral gaps, become a p-value, a verdict and the smallest effect the data could have
detected.

* **'a > b'** (a better than b): a two-sided t-test of d = mean_a - mean_b: *paired* where both arms ran the same
  problems (seed s of each arm has the same partition, initial model and graph: the claims' arms), on the n
  per-seed differences with n - 1 degrees of freedom; Welch's (unequal variances, Welch-Satterthwaite degrees of
  freedom) where they did not (a planted arm on other seeds). *agrees* when its Holm-adjusted p is below
  ``ALPHA`` and d > 0, *contradicted* when it is below and d < 0. Otherwise, where the paper printed both numbers
  (its effect e > 0): *paper's effect excluded* when the one-sided test of 'true d >= e' is rejected (Holm inside
  the claim), *underpowered* when the smallest detectable effect exceeds e, else *inconclusive*; without a printed
  effect, *inconclusive*. The smallest detectable effect is (t_{1 - a/2, df} + t_{power, df}) SE at
  a = ``ALPHA`` / (tests in the claim), Holm's strictest level, and power ``POWER``: a true difference this large
  would have been found 80 % of the time.
* **'a = b'** (about equal): two one-sided tests (TOST) of |d| < margin; *agrees* when the Holm-adjusted TOST p is
  below ``ALPHA`` (equivalence shown), *contradicted* when the one-sided test of |d| > margin in the observed
  direction is (a difference larger than the margin shown), *underpowered* when the smallest margin equivalence
  could be shown within at 80 % power if d were 0, (t_{1 - a, df} + t_{0.9, df}) SE, exceeds the margin, else
  *inconclusive*.
* **Trends 'follows the gap'** (a metric against the spectral gap over k arms): the statistic is the mean over seeds
  of the per-seed Spearman rho (seed s's arm values against the gaps); its null distribution permutes the arms
  independently within every seed (exact under 'the metric does not depend on the arm'), Monte Carlo with a fixed
  generator. It agrees when the p-value is below ``ALPHA`` with rho > 0 and is contradicted when below with rho < 0.
* **Trends 'does not follow the gap'** are tested on the *inversions the paper names* (arm a above arm b although
  a's gap is smaller: DFedCata's WS and ER above Full, Exp below Grid): each a '>' pair; the trend agrees when at
  least one inversion is shown (Holm over the inversions), and is contradicted when every inversion is shown
  reversed (an intersection-union test: each at ``ALPHA``), else inconclusive. A rank correlation cannot test this
  claim: the paper's own Table III has rho ~ +0.6 against the gap (the ring is far below the rest), and the earlier
  rule 'rho inside (-0.5, 0.5)' called the paper's own numbers "contradicted" (issue 34).

A claim's verdict from its parts: *contradicted* if any part is, *agrees* if all agree, *not testable here* if all
parts are not testable (an arm diverged, a target no run reaches); else *paper's effect excluded* if a part is,
*underpowered* if every part that is neither agreeing nor untestable is, else *inconclusive*.

**Family-wise policy.** Each claim is one family: Holm at ``ALPHA`` over its tests, as each paper states each claim
on its own. Across the claims of one run, :func:`holm` over the deciding p-value of every part of every claim gives
each part and claim a *study-wide* verdict (``verdict_study``): a call that survives it is one of the run's
family-wise 5 % (at most a 5 % chance that any call of the whole run is wrong under the nulls). The calls it can
overturn (:data:`DECIDED`) are every rejection: *agrees* and *contradicted* (deciding p: the t-test or TOST, the test
beyond the margin for a contradicted 'a = b', a trend's own p) and *paper's effect excluded* (deciding p: the
one-sided p of 'true d >= e'); an overturned agrees or contradicted becomes *inconclusive*, an overturned excluded
*underpowered* or *inconclusive* as the part's power gives (:func:`open_verdict`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

ALPHA = 0.05  # the level of every claim's family of tests (Holm)
POWER = 0.8  # the power of the smallest detectable effect
PERMUTATIONS = 20000  # Monte Carlo permutations of a trend test
EXCLUDED, UNDERPOWERED = "paper's effect excluded", "underpowered"
VERDICTS = ("agrees", "contradicted", EXCLUDED, UNDERPOWERED, "inconclusive", "not testable here")
DECIDED = ("agrees", "contradicted", EXCLUDED)  # the calls (each a rejection) a study-wide correction can overturn


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
              pair: bool = False, paper_effect: float | None = None) -> dict:
    """The raw test of one pair (before Holm): {"test", "difference" (in the metric's own sign), "se", "df", "p"
    (the p-value the verdict uses: t for '>', TOST for '='), "p_beyond" ('=': |d| > margin), "margin",
    "paper_effect" and "p_excluded" ('>' with the paper's effect e > 0, in the better direction: the one-sided p of
    'true d >= e')}. ``sign`` -1 where smaller is better: d is then taken of the negated values. ``pair``: value i
    of both arms comes from the same problem (seed i), and the paired t-test is used; Welch's otherwise."""
    test = paired if pair else welch
    w = test(sign * np.asarray(a, float), sign * np.asarray(b, float))
    kind = "paired t" if pair else "Welch t"
    out = {"difference": sign * w["difference"], "se": w["se"], "df": w["df"]}
    d, se, df = w["difference"], w["se"], w["df"]
    if relation == ">":
        out = {**out, "test": f"{kind}, two-sided", "p": w["p"], "signed": d}
        if paper_effect is not None and paper_effect > 0:
            out.update(paper_effect=float(paper_effect), p_excluded=one_sided(d, se, df, paper_effect, False))
        return out
    if relation == "=":
        if margin is None or margin <= 0:
            raise ValueError(f"an equivalence claim needs a margin > 0, got {margin!r}")
        p_equiv = max(one_sided(d, se, df, -margin, True), one_sided(d, se, df, margin, False))
        p_beyond = one_sided(d, se, df, margin, True) if d >= 0 else one_sided(d, se, df, -margin, False)
        return {**out, "test": f"TOST ({kind}), margin {margin:g}", "p": p_equiv, "p_beyond": p_beyond,
                "margin": margin, "signed": d}
    raise ValueError(f"relation must be '>' or '=', got {relation!r}")


def pair_verdict(test: dict, relation: str, p_adjusted: float, p_beyond_adjusted: float | None, tests: int,
                 alpha: float = ALPHA, p_excluded_adjusted: float | None = None) -> dict:
    """The verdict of a pair from its Holm-adjusted p-values (module docstring), with the smallest detectable effect
    at Holm's strictest level alpha / ``tests``; ``p_excluded_adjusted``: the Holm-adjusted p of 'true d >= the
    paper's effect' (None: the paper printed no effect)."""
    strict = alpha / max(1, tests)
    if relation == ">":
        mde = detectable(test["se"], test["df"], strict)
        effect = test.get("paper_effect")
        if p_adjusted < alpha:
            verdict = "agrees" if test["signed"] > 0 else "contradicted"
        elif effect is None:
            verdict = "inconclusive"
        elif p_excluded_adjusted is not None and p_excluded_adjusted < alpha:
            verdict = EXCLUDED
        else:
            verdict = UNDERPOWERED if mde > effect else "inconclusive"
    else:
        mde = detectable(test["se"], test["df"], 2 * strict, power=0.9, sided=2)  # TOST: one-sided at strict
        if p_adjusted < alpha:
            verdict = "agrees"
        elif p_beyond_adjusted is not None and p_beyond_adjusted < alpha:
            verdict = "contradicted"
        else:
            verdict = UNDERPOWERED if mde > test["margin"] else "inconclusive"
    return {"p_holm": p_adjusted, "detectable": mde, "verdict": verdict}


def deciding_p(part: dict) -> float | None:
    """The raw p-value of the test that made (or would make) a part's call: the t-test or TOST, the test of a
    difference beyond the margin for a contradicted 'a = b', the one-sided test of 'true d >= the paper's effect'
    for a 'paper's effect excluded', a trend's own p (None: not tested)."""
    if part.get("verdict") == "not testable here":
        return None
    if part.get("relation") == "=" and part.get("verdict") == "contradicted" and "p_beyond" in part:
        return part["p_beyond"]
    if part.get("verdict") == EXCLUDED and "p_excluded" in part:
        return part["p_excluded"]
    return part.get("p", part.get("p_value"))


def open_verdict(part: dict) -> str:
    """The verdict of a '>' pair that shows nothing: *underpowered* where its smallest detectable effect exceeds the
    paper's effect, else *inconclusive* (no paper's effect: inconclusive)."""
    effect, mde = part.get("paper_effect"), part.get("detectable")
    return UNDERPOWERED if effect is not None and mde is not None and mde > effect else "inconclusive"


def study_verdict(verdict: str, p_study: float | None, alpha: float = ALPHA, part: dict | None = None) -> str:
    """A part's verdict under the study-wide correction: a call of :data:`DECIDED` ('agrees', 'contradicted',
    "paper's effect excluded") stands only where its study-wide Holm p (of :func:`deciding_p`) is below ``alpha``;
    an overturned 'agrees' or 'contradicted' becomes 'inconclusive', an overturned excluded the part's
    :func:`open_verdict` (``part``: the part's test; None: inconclusive); every other verdict is kept."""
    if verdict in DECIDED and (p_study is None or p_study >= alpha):
        return open_verdict(part) if verdict == EXCLUDED and part is not None else "inconclusive"
    return verdict


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
    """'follows the gap' ('>'): agrees when the metric follows the gap significantly, contradicted when it falls
    with it significantly; 'does not follow' is judged on the paper's inversions (:func:`inversion_verdict`)."""
    if relation != ">":
        raise ValueError(f"a rank trend tests relation '>' only, got {relation!r}; 'does not follow the gap' is "
                         "tested on the paper's inversions (inversion_verdict)")
    if test["rho"] is None:
        return "not testable here"
    if p_adjusted is not None and p_adjusted < alpha:
        return "agrees" if test["rho"] > 0 else "contradicted"
    return "inconclusive"


def inversion_test(tests: Sequence[dict], alpha: float = ALPHA) -> dict:
    """'The metric does not follow the gap', from the '>' pair tests of the paper's inversions (a above b although
    a's gap is smaller): Holm over them; agrees when one inversion is shown (its Holm p below ``alpha``, d > 0),
    contradicted when every one is shown reversed (each p below ``alpha``, d < 0: an intersection-union test),
    else inconclusive. Returns {"p_value" (the deciding p: Holm's smallest for 'shown', the largest for 'all
    reversed'), "p_holm" per inversion, "verdict"}."""
    if not tests:
        return {"p_value": None, "p_holm": [], "verdict": "not testable here"}
    adjusted = holm([t["p"] for t in tests])
    shown = [p for t, p in zip(tests, adjusted) if t["signed"] > 0]
    if shown and min(shown) < alpha:
        return {"p_value": min(shown), "p_holm": adjusted, "verdict": "agrees"}
    if all(t["signed"] < 0 for t in tests) and max(t["p"] for t in tests) < alpha:
        return {"p_value": max(t["p"] for t in tests), "p_holm": adjusted, "verdict": "contradicted"}
    return {"p_value": min(adjusted), "p_holm": adjusted, "verdict": "inconclusive"}


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
    if EXCLUDED in parts:
        return EXCLUDED
    open_ = [v for v in parts if v not in ("agrees", "not testable here")]
    return UNDERPOWERED if open_ and all(v == UNDERPOWERED for v in open_) else "inconclusive"
