"""
Intel MKL's kernels on an AMD CPU, side by side: MKL as shipped (`LAL_MKL_VENDOR_OVERRIDE=0`, the
default: its vendor check sends any non-Intel CPU to generic kernels) against the opt-in vendor
override (`LAL_MKL_VENDOR_OVERRIDE=1`: the shim of `lal_allennlp/_compat/import_hook.py` lets MKL
choose by the instruction sets the CPU reports).

The choice is made once per process, before torch is loaded, so each setting runs in its own
child process, and the children take turns: `--rounds` children of each, alternating, the two
settings going first in turn. Each child reports:

- MKL's code path (`mkl_serv_cpu_detect()` of torch's library: 0 is the generic one);
- training steps and parsing of a training config (`config_timing.py`: `--batches` batches of
  16 sentences; `--parse-sentences` dev sentences through the predictor), seconds, on
  `--threads` threads;
- then matrix products of MiniLM's shapes in a training batch (688 word pieces, 384 and 1,536
  wide), GFLOP/s on `--threads` threads and on one, the median of 30.

The report gives each measure per setting (the median over the children) and the ratio. On an
Intel CPU, or where the install could not build the shim, both settings are the same code.
Each child's line gives the loaded shim, so a run where the override did not load shows it.

    python benchmarks/mkl_kernels_speed.py [--config training_config/lal_minilm_cpu_joint.jsonnet]
        [--rounds 2] [--batches 6] [--parse-sentences 96] [--threads 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from config_timing import add_arguments  # benchmarks/config_timing.py

SWITCH = "LAL_MKL_VENDOR_OVERRIDE"
SETTINGS = ("0", "1")
GEMM_SHAPES = ((688, 384, 1536), (688, 1536, 384), (688, 384, 384))


def mkl_code_path() -> int:
    """MKL's CPU code path in this process (0: generic kernels), or -1 where torch's library
    does not export MKL's detection function."""
    import ctypes

    import torch

    library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    try:
        return int(library.mkl_serv_cpu_detect())
    except AttributeError:
        return -1


def gemm_rates(threads: int) -> dict:
    """GFLOP/s of `torch.mm` on each of `GEMM_SHAPES`, the median of 30 after 3 warm-ups."""
    import torch

    torch.set_num_threads(threads)
    rates = {}
    for m, k, n in GEMM_SHAPES:
        a, b = torch.randn(m, k), torch.randn(k, n)
        for _ in range(3):
            torch.mm(a, b)
        times = []
        for _ in range(30):
            start = time.perf_counter()
            torch.mm(a, b)
            times.append(time.perf_counter() - start)
        rates[f"{m}x{k}x{n}"] = 2 * m * k * n / statistics.median(times) / 1e9
    return rates


def child(args: argparse.Namespace) -> None:
    """One setting (the environment's): measures everything and prints one JSON line."""
    from config_timing import ConfigTiming

    from lal_allennlp._compat.import_hook import loaded_mkl_shim

    report = {
        "setting": os.environ.get(SWITCH, "0"),
        "shim": loaded_mkl_shim(),
        "code_path": mkl_code_path(),
    }
    # The parser first, on the thread count it trains with from the start (a training process
    # never changes it), then the products alone.
    bench = ConfigTiming(args)  # sets args.threads threads
    bench.warm()
    for phase, run in (("train", bench.train), ("parse", bench.parse)):
        start = time.perf_counter()
        run()
        report[phase] = time.perf_counter() - start
    report["summary"] = bench.summary(1)
    report["gemm_n"] = gemm_rates(args.threads)
    report["gemm_1"] = gemm_rates(1)
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from timing import load_average  # benchmarks/timing.py

    command = [sys.executable, os.path.abspath(__file__), "--child"] + sys.argv[1:]
    reports = {setting: [] for setting in SETTINGS}
    print(f"load {load_average()}")
    for round_number in range(args.rounds):
        # the two settings take turns at going first
        for setting in SETTINGS if round_number % 2 == 0 else SETTINGS[::-1]:
            env = dict(os.environ, **{SWITCH: setting})
            output = subprocess.run(
                command, env=env, check=True, capture_output=True, text=True
            ).stdout
            report = json.loads(output.strip().splitlines()[-1])
            reports[setting].append(report)
            print(f"round {round_number + 1} {SWITCH}={setting}: MKL code path "
                  f"{report['code_path']}, "
                  f"shim {report['shim']}, train {report['train']:.2f} s, "
                  f"parse {report['parse']:.2f} s", flush=True)
    print(f"\n{reports['1'][0]['summary']} per child, {args.rounds} children per setting, "
          f"{args.threads} threads; load {load_average()}\n")

    def median(setting, *keys):
        values = []
        for report in reports[setting]:
            value = report
            for key in keys:
                value = value[key]
            values.append(value)
        return statistics.median(values)

    print(f"| measure | MKL as shipped (`{SWITCH}=0`) | vendor override (`=1`) | speed-up |")
    print("|---|---:|---:|---:|")
    for threads, key in ((args.threads, "gemm_n"), (1, "gemm_1")):
        for shape in reports["1"][0][key]:
            shipped, shim = median("0", key, shape), median("1", key, shape)
            print(f"| `mm` {shape}, {threads} thread(s), GFLOP/s | {shipped:.0f} | {shim:.0f} "
                  f"| {shim / shipped:.2f}x |")
    for phase, what in (("train", "training steps"), ("parse", "parsing")):
        shipped, shim = median("0", phase), median("1", phase)
        print(f"| {what}, s | {shipped:.2f} | {shim:.2f} | {shipped / shim:.2f}x |")


if __name__ == "__main__":
    main()
