"""
`lal-serve MODEL_ARCHIVE [--host 127.0.0.1] [--port 8000]`: a trained parser behind a web page
(`http://HOST:PORT/`) and a JSON API (`POST /parse`, `GET /health`, OpenAPI at `/docs`); see
`lal_allennlp/serving/app.py`. Concurrent requests are parsed in batches of up to
`--max-batch` sentences, collected over `--batch-window-ms`; `--no-batching` parses each
request on its own.

By default the server listens on 127.0.0.1 only: it has no authentication, so give
`--host 0.0.0.0` only on a network you trust.
"""
import argparse
import sys
from typing import Optional, Sequence

from lal_allennlp.models.span_parser_base import EMBEDDER_PRECISIONS
from lal_allennlp.serving.app import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_SENTENCES,
    DEFAULT_MAX_WORDS,
)


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lal-serve",
        description="Serve a trained parser: a web page at / and a JSON API (POST /parse, "
        "GET /health, OpenAPI docs at /docs).",
    )
    parser.add_argument("archive", help="a model.tar.gz written by `allennlp train`")
    parser.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1 (this machine)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-batch", type=int, default=32,
                        help="most sentences parsed together (default 32)")
    parser.add_argument("--forward-batch", type=int, default=8,
                        help="sentences per pass through the model within a batch, sorted by "
                        "length (default 8)")
    parser.add_argument("--batch-window-ms", type=float, default=5.0,
                        help="how long a request waits for others to share its batch (default 5)")
    parser.add_argument("--no-batching", action="store_true",
                        help="parse each request on its own, one after another")
    parser.add_argument("--max-words", type=int, default=DEFAULT_MAX_WORDS,
                        help=f"longest sentence accepted (default {DEFAULT_MAX_WORDS})")
    parser.add_argument("--max-sentences", type=int, default=DEFAULT_MAX_SENTENCES,
                        help=f"most sentences per request (default {DEFAULT_MAX_SENTENCES})")
    parser.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES,
                        help=f"largest request body (default {DEFAULT_MAX_BODY_BYTES})")
    parser.add_argument("--cuda-device", type=int, default=-1, help="GPU number; -1: the CPU")
    parser.add_argument("--precision", choices=EMBEDDER_PRECISIONS,
                        help="a span parser's transformer precision (default: the archive's); "
                        "bfloat16 is faster on CPUs with AVX-512 BF16 or AMX, slower elsewhere; "
                        "auto picks it only where it is native")
    parser.add_argument("--log-level", default="warning",
                        choices=("critical", "error", "warning", "info", "debug"))
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_argument_parser().parse_args(argv)
    for name in ("max_batch", "forward_batch", "max_words", "max_sentences", "max_body_bytes"):
        if getattr(args, name) < 1:
            print(f"lal-serve: --{name.replace('_', '-')} must be at least 1", file=sys.stderr)
            return 2
    if args.batch_window_ms < 0:
        print("lal-serve: --batch-window-ms must be at least 0", file=sys.stderr)
        return 2

    import uvicorn

    from lal_allennlp.api import Parser
    from lal_allennlp.serving.app import create_app

    try:
        parser = Parser.load(
            args.archive,
            cuda_device=args.cuda_device,
            max_words=args.max_words,
            precision=args.precision,
        )
    except (FileNotFoundError, ValueError) as error:
        print(f"lal-serve: {error}", file=sys.stderr)
        return 2
    parser.predictor.raise_limit = "start lal-serve with a higher --max-words"
    app = create_app(
        parser,
        model_name=args.archive,
        max_batch=args.max_batch,
        forward_batch=args.forward_batch,
        batch_window=args.batch_window_ms / 1000,
        batching=not args.no_batching,
        max_sentences=args.max_sentences,
        max_body_bytes=args.max_body_bytes,
    )
    print(f"lal-serve: http://{args.host}:{args.port}/ (Ctrl-C stops)", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
