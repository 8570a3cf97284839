"""Table arithmetic of the cards' §10 not covered by ``tests/verify/test_claims.py``: DFedADMM's rounds-to-target
Tables 3-5 (card dfedadmm §9, §10.19; seed 004 L355-392), transcribed from the card as printed. ">N" means the target
was not reached in N rounds; it counts as N + 1 (slower than any printed number of rounds up to N)."""

import pytest

METHODS = ("FedAvg", "FedSAM", "D-PSGD", "DFedAvg", "DFedAvgM", "DFedSAM", "DFedADMM", "DFedADMM-SAM")
OURS = ("DFedADMM", "DFedADMM-SAM")

# one row per method (METHODS order); columns: Dir 0.3 x3, Dir 0.6 x3, IID x3 targets
TABLES = {
    "MNIST (Table 3)": (
        "60 >300 >300 76 194 >300 46 108 135",
        "41 135 201 55 121 177 33 68 98",
        "223 >300 >300 >300 >300 >300 227 >300 >300",
        "87 >300 >300 107 >300 >300 64 229 >300",
        "19 104 >300 26 67 258 19 53 283",
        "51 140 218 67 163 294 53 105 200",
        "19 115 >300 22 45 >300 18 53 >300",
        "16 32 40 21 30 41 16 25 32",
    ),
    "CIFAR-10 (Table 4)": (
        "113 154 >500 121 392 >500 143 243 >500",
        "120 141 392 111 211 399 128 195 329",
        "500 >500 >500 >500 >500 >500 499 >500 >500",
        "124 177 >500 138 >500 >500 190 >500 >500",
        "61 91 >500 61 217 >500 58 101 237",
        "145 182 473 146 281 >500 >237 >237 >237",
        "45 62 330 52 183 >500 60 236 >500",
        "63 72 167 53 95 165 50 67 125",
    ),
    "CIFAR-100 (Table 5)": (
        "98 381 >500 105 257 >500 126 >500 >500",
        "136 311 >500 147 261 >500 >500 >500 >500",
        "232 402 >500 261 386 >500 320 >500 >500",
        "57 111 268 61 95 212 66 135 391",
        "59 >500 >500 47 111 >500 65 >500 >500",
        "91 153 287 92 135 233 86 141 318",
        "42 67 123 33 42 72 28 40 54",
        "44 67 108 40 54 76 31 45 70",
    ),
}


def rounds(cell: str) -> int:
    return int(cell[1:]) + 1 if cell.startswith(">") else int(cell)


def winners(table: str) -> list[set[str]]:
    """Per column, the methods with the fewest rounds (ties kept)."""
    rows = {m: [rounds(c) for c in r.split()] for m, r in zip(METHODS, TABLES[table])}
    assert all(len(r) == 9 for r in rows.values())
    return [{m for m in METHODS if rows[m][j] == min(r[j] for r in rows.values())} for j in range(9)]


def test_dfedadmm_or_its_sam_variant_needs_the_fewest_rounds_in_all_27_columns():
    """Card dfedadmm §10.19: in every one of the 27 columns of Tables 3-5 the fewest rounds belong to DFedADMM or
    DFedADMM-SAM; DFedADMM-SAM alone in all 9 MNIST columns. Column winners as the card derives them: CIFAR-10,
    DFedADMM at Dir 0.3 @73, @75 and Dir 0.6 @75 and -SAM in the other 6; CIFAR-100, DFedADMM in 8 of 9 (tied with
    -SAM at Dir 0.3 @55) and -SAM alone at Dir 0.3 @58."""
    for table in TABLES:
        assert all(w <= set(OURS) for w in winners(table)), (table, winners(table))
    assert winners("MNIST (Table 3)") == [{"DFedADMM-SAM"}] * 9
    cifar10 = winners("CIFAR-10 (Table 4)")
    assert [j for j, w in enumerate(cifar10) if w == {"DFedADMM"}] == [0, 1, 3]
    assert all(w == {"DFedADMM-SAM"} for j, w in enumerate(cifar10) if j not in (0, 1, 3))
    cifar100 = winners("CIFAR-100 (Table 5)")
    assert cifar100[1] == set(OURS) and cifar100[2] == {"DFedADMM-SAM"}
    assert sum("DFedADMM" in w for w in cifar100) == 8


@pytest.mark.parametrize("table", list(TABLES))
def test_the_claim_is_not_vacuous_without_the_two_methods(table):
    """Without DFedADMM and DFedADMM-SAM the winners are spread over the baselines (the check can fail)."""
    rows = {m: [rounds(c) for c in r.split()] for m, r in zip(METHODS, TABLES[table]) if m not in OURS}
    best = {min(rows, key=lambda m: rows[m][j]) for j in range(9)}
    assert best <= set(METHODS) - set(OURS) and len(best) >= 2
