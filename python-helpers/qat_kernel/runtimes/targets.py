"""Which target a request means, for TVM and the C runner alike: presets and toolchain checks, the config's
`targets` entries, and the folder a target's build goes to.

TVM 0.27 refuses CLI target strings ("llvm -mcpu=..."): targets are JSON dicts. Presets:
  x86-64   {"kind": "llvm", "mcpu": <host cpu from LLVM>} (plain {"kind": "llvm"} when LLVM does
           not name the host cpu); built with the host's C++ compiler, runs here.
  aarch64  {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}, linked with
           tvm.support.cc.cross_compiler("aarch64-linux-gnu-g++") (Debian g++-aarch64-linux-gnu).
  cuda     {"kind": "cuda", "arch": "sm_XY" of GPU 0}, host code for llvm; kernels compiled by nvcc
           (TVM_CUDA_COMPILE_MODE=nvcc) or NVRTC (needs the cuda-python bindings).
A target may also be given as a TVM target dict or its JSON text ("llvm" and "cuda" alone work too).
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from qat_kernel.pipeline.config import Config
from qat_kernel.rpc.errors import ConfigInvalid, ToolchainMissing, TvmBuildError

PRESETS = ("x86-64", "aarch64", "cuda")
AARCH64_CXX = "aarch64-linux-gnu-g++"
AARCH64_INSTALL = "apt-get install -y g++-aarch64-linux-gnu"
X86_CXX = "x86_64-linux-gnu-g++"
X86_INSTALL = "apt-get install -y g++-x86-64-linux-gnu"
HOST_CXX_INSTALL = "apt-get install -y g++"
CUDA_INSTALL = "apt-get install -y nvidia-cuda-toolkit"

# TVM target options whose value is a list (TVM 0.27 rejects a plain string for them).
LIST_OPTIONS = {"mattr", "keys", "libs", "cl-opt"}

# ELF e_machine values
ELF_MACHINES = {3: "x86", 62: "x86_64", 183: "aarch64", 40: "arm", 243: "riscv"}


@dataclass
class ResolvedTarget:
    preset: str | None
    target: dict[str, Any]  # TVM target JSON dict
    device: str  # "cpu" | "cuda"
    arch: str  # ELF machine name of the artifact: "x86_64", "aarch64", ...
    cross_compiler: str | None  # C++ compiler used to link the shared library (None: TVM's default)
    runnable_here: bool
    env: dict[str, str] = field(default_factory=dict)  # environment set while compiling
    notes: list[str] = field(default_factory=list)

    def tvm_target(self):
        import tvm

        return tvm.target.Target(self.target)

    def fcompile(self):
        if self.cross_compiler is None:
            return None
        from tvm.support import cc

        return cc.cross_compiler(self.cross_compiler)


def host_arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def host_cpu() -> str | None:
    """LLVM's name for this machine's CPU (e.g. znver4, sapphirerapids), or None."""
    try:
        from tvm.target import codegen

        cpu = str(codegen.llvm_get_system_cpu())
    except Exception:  # noqa: BLE001 - an LLVM-less TVM build
        return None
    return None if not cpu or cpu == "generic" else cpu


def _llvm_host_target() -> tuple[dict[str, Any], list[str]]:
    notes = []
    cpu = host_cpu()
    target = {"kind": "llvm"}
    if cpu:
        candidate = {"kind": "llvm", "mcpu": cpu}
        try:
            import tvm

            tvm.target.Target(candidate)
            target = candidate
            notes.append(
                f"built for this CPU (mcpu={cpu}): it may not run on older x86-64 CPUs; the "
                'target {"kind": "llvm"} builds a portable library'
            )
        except Exception as exc:  # noqa: BLE001
            notes.append(f"LLVM rejected -mcpu={cpu} ({exc}); using plain llvm")
    else:
        notes.append("LLVM did not name the host cpu; using plain llvm")
    return target, notes


def _require(compiler: str, install: str, what: str) -> str:
    path = shutil.which(compiler)
    if path is None:
        raise ToolchainMissing(
            f"{what}: {compiler} is not on PATH. Install it with: {install}", install=install, package=compiler
        )
    return path


def _host_cxx() -> str:
    cxx = os.environ.get("CXX") or "g++"
    if shutil.which(cxx) is None:
        raise ToolchainMissing(
            f"Building a TVM library needs a C++ compiler to link it; {cxx} is not on "
            f"PATH. Install it with: {HOST_CXX_INSTALL}",
            install=HOST_CXX_INSTALL,
            package="g++",
        )
    return cxx


def cuda_arch_here() -> str | None:
    """sm_XY of GPU 0, or None when no CUDA GPU is visible."""
    try:
        import tvm
        from tvm.runtime import Device

        dev = cast(Device, tvm.cuda(0))  # typed as tvm_ffi's base Device; it is TVM's, with exist/compute_version
        if not dev.exist:
            return None
        return "sm_" + str(dev.compute_version).replace(".", "")
    except Exception:  # noqa: BLE001
        return None


def _cuda_compiler_env() -> tuple[dict[str, str], str]:
    """Which CUDA compiler TVM will use: nvcc when present, else NVRTC through cuda-python."""
    if shutil.which("nvcc"):
        return {"TVM_CUDA_COMPILE_MODE": "nvcc"}, "nvcc"
    try:
        importlib.import_module("cuda.bindings.nvrtc")  # cuda-python, an optional package

        return {}, "nvrtc"
    except Exception:  # noqa: BLE001
        pass
    raise ToolchainMissing(
        "The cuda target needs a CUDA compiler: nvcc is not on PATH and NVRTC's Python "
        f"bindings (cuda-python) are not installed. Install the CUDA toolkit: {CUDA_INSTALL}",
        install=CUDA_INSTALL,
        package="nvcc",
    )


def _parse(target: Any) -> tuple[str | None, dict[str, Any]]:  # JSON from the request or the config
    if isinstance(target, dict):
        return None, dict(target)
    if not isinstance(target, str) or not target.strip():
        raise TvmBuildError(f"Unknown target {target!r}: use one of {', '.join(PRESETS)} or a TVM target dict")
    text = target.strip()
    if text in PRESETS or text in ("x86_64", "arm64"):
        return {"x86_64": "x86-64", "arm64": "aarch64"}.get(text, text), {}
    if text.startswith("{"):
        try:
            return None, json.loads(text)
        except json.JSONDecodeError as exc:
            raise TvmBuildError(f"Target JSON does not parse: {exc}") from exc
    if text in ("llvm", "cuda"):
        return None, {"kind": text}
    raise TvmBuildError(
        f"Unknown target {text!r}: use one of {', '.join(PRESETS)} or a TVM target dict "
        "(TVM 0.27 no longer accepts 'llvm -mcpu=...' strings)"
    )


def resolve_target(target: str | dict[str, Any]) -> ResolvedTarget:
    """A preset name, TVM target dict or JSON text -> what to build with; raises ToolchainMissing
    when this machine lacks what the target needs to build."""
    preset, spec = _parse(target)
    here = host_arch()
    if preset == "x86-64":
        if here == "x86_64":
            _host_cxx()
            spec, notes = _llvm_host_target()
            return ResolvedTarget(preset, spec, "cpu", "x86_64", None, True, notes=notes)
        _require(X86_CXX, X86_INSTALL, "Cross-building for x86-64")
        return ResolvedTarget(preset, {"kind": "llvm", "mtriple": "x86_64-linux-gnu"}, "cpu", "x86_64", X86_CXX, False)
    if preset == "aarch64":
        spec = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}
        if here == "aarch64":
            _host_cxx()
            return ResolvedTarget(preset, spec, "cpu", "aarch64", None, True)
        _require(AARCH64_CXX, AARCH64_INSTALL, "Cross-building for aarch64")
        return ResolvedTarget(
            preset,
            spec,
            "cpu",
            "aarch64",
            AARCH64_CXX,
            False,
            notes=["cross-compiled: run it on the board (TVM RPC) or under qemu-aarch64"],
        )
    if preset == "cuda" or spec.get("kind") == "cuda":
        env, compiler = _cuda_compiler_env()
        arch = spec.get("arch") or cuda_arch_here()
        gpu = cuda_arch_here() is not None
        if arch is None:
            raise ToolchainMissing(
                "The cuda target needs a CUDA GPU to detect its architecture (none is visible: no driver "
                'or no GPU). To build without one, give the arch: {"kind": "cuda", "arch": "sm_90"}.',
                install="install the NVIDIA driver and CUDA toolkit (" + CUDA_INSTALL + ")",
                package="cuda",
            )
        spec = {**spec, "kind": "cuda", "arch": arch}
        if "host" not in spec:
            spec["host"], _ = _llvm_host_target()
        _host_cxx()
        notes = [f"CUDA kernels compiled with {compiler}"]
        if not gpu:
            notes.append("no CUDA GPU here: built only, cannot run on this machine")
        return ResolvedTarget(preset, spec, "cuda", host_arch(), None, gpu, env=env, notes=notes)
    if spec.get("kind") != "llvm":
        raise TvmBuildError(f"Unsupported target kind {spec.get('kind')!r}: use llvm or cuda")
    triple = str(spec.get("mtriple", ""))
    arch = triple.split("-")[0] if triple else here
    arch = {"arm64": "aarch64", "amd64": "x86_64"}.get(arch, arch)
    if arch == here:
        _host_cxx()
        return ResolvedTarget(None, spec, "cpu", arch, None, True)
    if arch == "aarch64":
        _require(AARCH64_CXX, AARCH64_INSTALL, "Cross-building for aarch64")
        return ResolvedTarget(None, spec, "cpu", arch, AARCH64_CXX, False)
    cxx = f"{triple}-g++"
    _require(cxx, f"apt-get install -y g++-{arch.replace('_', '-')}-linux-gnu", f"Cross-building for {triple}")
    return ResolvedTarget(None, spec, "cpu", arch, cxx, False)


def elf_machine(path: str | Path) -> str | None:
    """The ELF header's e_machine as a name (x86_64, aarch64, ...), or None if not an ELF file."""
    with open(path, "rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    order = "little" if head[5] == 1 else "big"
    machine = int.from_bytes(head[18:20], order)
    return ELF_MACHINES.get(machine, f"e_machine={machine}")


# ------------------------------------------------------------------------------ the config's targets


def parse_target_string(text: str):
    """A config's `tvm` string -> what resolve_target takes: a preset name, "llvm"/"cuda",
    JSON text, or a TVM CLI string ("llvm -mcpu=cortex-a72 -mattr=+neon,+dotprod"), which TVM 0.27 no
    longer parses, converted to its dict form ({"kind": "llvm", "mcpu": ..., "mattr": [...]}).
    Raises ValueError when the string cannot be read."""
    text = text.strip()
    if not text:
        raise ValueError("empty target")
    if text in PRESETS or text in ("x86_64", "arm64") or text.startswith("{"):
        return text
    tokens = shlex.split(text)
    kind, options = tokens[0], tokens[1:]
    if kind.startswith("-"):
        raise ValueError(f"{text!r} does not start with a target kind (llvm, cuda, ...)")
    spec: dict[str, Any] = {"kind": kind}
    for token in options:
        if not token.startswith("-"):
            raise ValueError(f"{token!r} in {text!r} is not a -key=value option")
        key, eq, value = token.lstrip("-").partition("=")
        if not key:
            raise ValueError(f"empty option in {text!r}")
        if not eq:
            spec[key] = True
        elif key in LIST_OPTIONS:
            spec[key] = [v for v in value.split(",") if v]
        elif re.fullmatch(r"-?\d+", value):
            spec[key] = int(value)
        elif value.lower() in ("true", "false"):
            spec[key] = value.lower() == "true"
        else:
            spec[key] = value
    return spec if len(spec) > 1 else kind


def config_target(cfg: Config, name: str):
    """(what to build for, where it came from, YAML path): a config `targets` entry named `name`
    first, else a preset. ConfigInvalid(path="targets") when it is neither."""
    entries = cfg.get("targets") or []
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("name") == name:
            value = entry.get("tvm")
            path = f"targets.{i}.tvm"
            if isinstance(value, dict):
                return dict(value), "config", path
            try:
                return parse_target_string(str(value)), "config", path
            except ValueError as exc:
                raise ConfigInvalid(f"{path}: cannot read target {value!r}: {exc}", path=path) from exc
    if name in PRESETS:
        return name, "preset", None
    names = [str(e["name"]) for e in entries if isinstance(e, dict) and e.get("name") is not None]
    known = f"targets in {cfg.path.name}: {', '.join(names)}" if names else f"no targets in {cfg.path.name}"
    raise ConfigInvalid(
        f"Unknown target {name!r}: not a preset ({', '.join(PRESETS)}) and not a name under targets ({known})",
        path="targets",
    )


def config_rpc(cfg: Config, name: str) -> tuple[str, str] | None:
    """(host:port, YAML path) of the `rpc` of the config's target entry named `name`, else None."""
    for i, entry in enumerate(cfg.get("targets") or []):
        if isinstance(entry, dict) and entry.get("name") == name:
            return (str(entry["rpc"]), f"targets.{i}.rpc") if entry.get("rpc") else None
    return None


def resolve_config(cfg: Config, name: str):
    """(spec, source, ResolvedTarget) of the config's target `name`. Raises ToolchainMissing (packageMissing,
    with the install command) when this machine cannot build for it, ConfigInvalid for a target TVM does not
    take."""
    spec, source, path = config_target(cfg, name)
    where = path or "targets"
    try:
        resolved = resolve_target(spec)  # ToolchainMissing (a PackageMissing) goes out as it is
    except TvmBuildError as exc:
        raise ConfigInvalid(f"{where}: {exc.message}", path=where) from exc
    try:
        resolved.tvm_target()  # TVM's own check of the options (names and types)
    except Exception as exc:  # noqa: BLE001 - tvm.target.Target rejecting an option
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigInvalid(f"{where}: TVM rejects the target {json.dumps(spec)}: {first}", path=where) from exc
    return spec, source, resolved


def arch_of(spec: str | dict[str, Any]) -> str:
    """The architecture a target spec builds for, read without TVM (the C runner's target)."""
    if spec == "aarch64":
        return "aarch64"
    if isinstance(spec, dict) and spec.get("mtriple"):
        arch: str = spec["mtriple"].split("-")[0]
        return {"arm64": "aarch64"}.get(arch, arch)
    return host_arch()


def out_dir(cfg: Config, kind: str, name: str) -> Path:
    """<config folder>/out/<kind>-<target name> (tvm-..., deploy-...), the name made safe for a folder."""
    return cfg.out(f"{kind}-" + re.sub(r"[^A-Za-z0-9._-]+", "_", name))
