"""Workspaces the benchmarks run on, written into a folder of the caller's.

Run: python -m benchmarks.workspace resnet18 <dest> <side>   ResNet-18 (torchvision's layout, random weights)
                                                                on seeded random 3 x side x side images
     python -m benchmarks.workspace cifar <dest>             a copy of examples/cifar without its outputs
Prints the folder's configs, one path a line."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cifar_copy(dest: Path) -> Path:
    shutil.copytree(REPO / "examples" / "cifar", dest, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return dest


def main(argv: list[str]) -> int:
    kind, dest = argv[0], Path(argv[1])
    if kind == "resnet18":
        from benchmarks.build_bench import write_resnet_workspace

        write_resnet_workspace(dest, int(argv[2]))
    elif kind == "cifar":
        cifar_copy(dest)
    else:
        raise SystemExit(f"unknown workspace {kind!r}: resnet18 or cifar")
    for config in sorted(dest.glob("*.qat.yaml")):
        print(config)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
