"""
SuPar's CRF constituency parser on a GPU with a transformer of the same shape as
`gpu_speed.py`'s, to put beside our figures: training throughput (sentences/s of SuPar's own
training loop, `CRFConstituencyParser._train`: forward, the CRF loss, backward, gradient
clipping, AdamW, the schedule), parsing throughput (its own `_predict`: forward, CKY on the
GPU, trees) and the peak GPU memory of each.

Run with a Python that has SuPar 1.1.4 and transformers (its own venv, or the packages on
`PYTHONPATH`), on one-tree-per-line data (`benchmarks/peers_accuracy.py` writes
`WORK_DIR/data/train.trees`; `benchmarks/gpu_bundle.sh` puts wsj_0001-0199 in its bundle):

    SUPAR_PYTHON benchmarks/supar_gpu_speed.py TREES [--encoder bert-large] \\
        [--tokenizer-dir DIR] [--batch-words 2400] [--output supar_gpu_speed.json]

The parser's settings are the ones our CPU comparisons give SuPar
(`peer_configs/supar_crf_con_minilm.ini`: SuPar's own settings for a BERT encoder, the
mean of its last 4 layers, span MLP 500, label MLP 100, lr 5e-5, x20 for the new layers,
CRF loss, CKY decoding without MBR), with the encoder a BERT of `--encoder`'s shape and
**random weights** saved to a temporary directory (SuPar loads its encoder with
`from_pretrained`), and the WordPiece vocabulary of `--tokenizer-dir`. SuPar batches by
words: `--batch-words 2400` is about our 100 sentences of PTB (24 words a sentence). SuPar
1.1.4 has no mixed precision; `--autocast-parse bf16` adds a parse row under a bfloat16
autocast around its model, which is our doing, not a SuPar option. Each phase runs once
untimed (every batch shape seen once), then is timed over a second pass.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from typing import Any, Dict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gpu_speed import (  # noqa: E402
    ENCODERS,
    default_tokenizer_dir,
    make_transformer_dir,
    peak_gib,
    reset_memory,
    sync,
)
from peers_worker import _supar_compat  # noqa: E402

SUPAR_CONFIG = os.path.join(HERE, "peer_configs", "supar_crf_con_minilm.ini")


def random_transformer(encoder: str, tokenizer_dir: str, out_dir: str, seed: int) -> Dict:
    """`gpu_speed.make_transformer_dir` plus random weights saved beside the configuration."""
    import torch
    from transformers import BertConfig, BertModel

    shape = make_transformer_dir(encoder, tokenizer_dir, out_dir)
    torch.manual_seed(seed)
    BertModel(BertConfig.from_pretrained(out_dir)).save_pretrained(out_dir)
    return shape


def timed_second_pass(run, device) -> float:
    run()  # untimed: every batch shape once
    sync(device)
    start = time.perf_counter()
    run()
    sync(device)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("trees", help="one bracketed tree per line")
    parser.add_argument("--encoder", choices=sorted(ENCODERS), default="bert-large")
    parser.add_argument("--tokenizer-dir", default=default_tokenizer_dir())
    parser.add_argument("--batch-words", type=int, default=2400)
    parser.add_argument("--no-training", action="store_true")
    parser.add_argument("--autocast-parse", choices=["bf16", "fp16"], nargs="*", default=[])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--output")
    args = parser.parse_args()

    _supar_compat()
    import supar
    import torch
    import transformers
    from supar import CRFConstituencyParser
    from supar.utils import Config, Dataset
    from supar.utils.logging import init_logger, logger

    init_logger(logger, verbose=False)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch_device = torch.device(device)
    header: Dict[str, Any] = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "device": torch.cuda.get_device_name() if device == "cuda" else platform.processor(),
        "torch": torch.__version__,
        "supar": getattr(supar, "__version__", "1.1.x"),
        "transformers": transformers.__version__,
        "command": " ".join(["python"] + sys.argv),
        "batch_words": args.batch_words,
        "weights": "random (saved from a configuration)",
    }
    rows = []

    def save() -> None:
        print(json.dumps(rows[-1]), flush=True)
        if args.output:
            with open(args.output, "w") as out:
                json.dump({**header, "results": rows}, out, indent=1)

    with tempfile.TemporaryDirectory() as work:
        bert_dir = os.path.join(work, "bert")
        header["transformer"] = random_transformer(
            args.encoder, args.tokenizer_dir, bert_dir, args.seed
        )
        torch.manual_seed(args.seed)
        # What SuPar's command line hands `build` and `train` (supar/cmds/cmd.py).
        config = Config.load(
            conf=SUPAR_CONFIG,
            path=os.path.join(work, "model"),
            device="0" if device == "cuda" else "-1",
            seed=args.seed,
            threads=16,
            local_rank=-1,
            mode="train",
            feat=None,
            build=True,
            checkpoint=False,
            encoder="bert",
            bert=bert_dir,
            embed="",
            unk="unk",
            n_embed=100,
            max_len=None,
            buckets=32,
            train=args.trees,
            dev=args.trees,
            test=args.trees,
            mbr=False,
            prob=False,
            verbose=False,
            delete={"TOP", "S1", "-NONE-", ",", ":", "``", "''", ".", "?", "!", ""},
            equal={"ADVP": "PRT"},
        )
        supar_parser = CRFConstituencyParser.build(**config)
        parameters = sum(p.numel() for p in supar_parser.model.parameters())
        common = {"system": "SuPar 1.1.4 CRF constituency", "parameters": parameters}

        if not args.no_training:
            supar_parser.transform.train()
            train = Dataset(supar_parser.transform, args.trees, **config).build(
                args.batch_words, config.buckets, True
            )
            words = sum(len(s.values[0]) for s in train.sentences)  # values: words, tags, ...
            steps = 2 * len(train.loader)
            rate = config.lr_rate  # the new layers' learning rate, a multiple of the encoder's
            optimizer = transformers.AdamW(  # torch's AdamW (`_supar_compat`), as SuPar builds it
                [
                    {"params": p, "lr": config.lr * (1 if n.startswith("encoder") else rate)}
                    for n, p in supar_parser.model.named_parameters()
                ],
                config.lr,
            )
            supar_parser.optimizer = optimizer
            supar_parser.scheduler = transformers.get_linear_schedule_with_warmup(
                optimizer, int(steps * config.warmup), steps
            )
            reset_memory(torch_device)
            seconds = timed_second_pass(lambda: supar_parser._train(train.loader), torch_device)
            rows.append({
                **common,
                "phase": "train",
                "precision": "fp32",
                "sentences": len(train),
                "words": words,
                "batches": len(train.loader),
                "seconds": seconds,
                "sentences_per_s": len(train) / seconds,
                "words_per_s": words / seconds,
                "peak_gib": peak_gib(torch_device),
            })
            save()
            del optimizer, supar_parser.optimizer, supar_parser.scheduler
            supar_parser.model.zero_grad(set_to_none=True)

        supar_parser.transform.eval()
        data = Dataset(supar_parser.transform, args.trees).build(args.batch_words, 8)
        words = sum(len(s.values[0]) for s in data.sentences)
        for precision in ["fp32"] + list(args.autocast_parse):
            dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]

            def parse() -> None:
                enabled = dtype is not None
                with torch.autocast(device, dtype=dtype or torch.float32, enabled=enabled):
                    trees = supar_parser._predict(data.loader)["trees"]
                assert len(trees) == len(data)

            reset_memory(torch_device)
            row = {**common, "phase": "parse", "sentences": len(data), "words": words,
                   "batches": len(data.loader)}
            row["precision"] = precision if precision == "fp32" else (
                f"{precision} autocast around SuPar's model (not a SuPar option)"
            )
            try:
                seconds = timed_second_pass(parse, torch_device)
            except Exception as error:  # a what-if row: say why it did not run
                row["error"] = f"{type(error).__name__}: {error}"
            else:
                row.update(seconds=seconds, sentences_per_s=len(data) / seconds,
                           words_per_s=words / seconds, peak_gib=peak_gib(torch_device))
            rows.append(row)
            save()

    print()
    print(f"{header['date']}  {header['device']}  torch {header['torch']}  "
          f"transformers {header['transformers']}  encoder {header['transformer']}")
    print("| phase | precision | params | batches | sentences/s | words/s | peak GiB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in rows:
        if "error" in row:
            print(f"| {row['phase']} | {row['precision']} | | | {row['error']} | | |")
            continue
        print(f"| {row['phase']} | {row['precision']} | {row['parameters'] / 1e6:.0f}M "
              f"| {row['batches']} | {row['sentences_per_s']:.1f} | {row['words_per_s']:.0f} "
              f"| {row['peak_gib']:.2f} |")


if __name__ == "__main__":
    main()
