"""Every file in training_config/ builds on fixture data and runs a forward pass."""
import json
import re
from pathlib import Path

import _jsonnet
import pytest
from allennlp.common import Params
from allennlp.common.plugins import import_plugins
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.optimizers import Optimizer

from tests.conftest import FIXTURES_ROOT, REPO_ROOT, minilm_dir

# allennlp-models registers `biaffine_parser` (the biaffine config's model), which the tests
# below name; `allennlp train` imports it the same way.
import_plugins()

CONFIGS = sorted((REPO_ROOT / "training_config").glob("*.jsonnet"))
MINILM_HIDDEN = 384


def _ext_vars() -> dict:
    train, dev = str(FIXTURES_ROOT / "ptb" / "train"), str(FIXTURES_ROOT / "ptb" / "dev")
    return {
        "TRAIN_PATH": train,
        "DEV_PATH": dev,
        # The confidence grid validates and fits temperatures on a split of train.
        "CALIBRATION_PATH": dev,
        "PTB_TRAIN": train,
        "PTB_DEV": dev,
        # The CTB 5.1 split of the hand-written CTB files (`#train`, `#dev`).
        "CTB_DIR": str(FIXTURES_ROOT / "ctb" / "ctb51"),
        # Sinica-style trees; the config selects `[:8000]` and `[8000:]` of them.
        "SINICA_TREES": str(FIXTURES_ROOT / "sinica" / "sample.trees"),
        # Dependency files named like the fixture tree files (joint span configs).
        "DEPS_DIR": str(FIXTURES_ROOT / "ptb" / "deps"),
        "PTB_DEPS": str(FIXTURES_ROOT / "ptb" / "deps"),
        # The unsupervised configs read several comma-separated corpora.
        "TRAIN_PATHS": f"{train},{FIXTURES_ROOT / 'ptb' / 'one_per_line.trees'}",
        "MINILM_DIR": minilm_dir(),
        # Large-model configs are built with the small local MiniLM in place of their model.
        "TRANSFORMER_MODEL": minilm_dir(),
        # Dependency configs: the fixture dependency files (CoNLL-U, CoNLL-X, Malt-TAB).
        "DEP_TRAIN": str(FIXTURES_ROOT / "ptb" / "deps" / "wsj_9001-9002"),
        "DEP_DEV": str(FIXTURES_ROOT / "ptb" / "deps" / "wsj_9003.dp"),
        # The Chinese dependency configs, given a sentence selection of one file as with GSD.
        "ZH_TRAIN": str(FIXTURES_ROOT / "ptb" / "deps" / "wsj_9001-9002"),
        "ZH_DEV": str(FIXTURES_ROOT / "ptb" / "deps" / "wsj_9003.dp") + "[1:]",
        "ZH_TEST": str(FIXTURES_ROOT / "ptb" / "deps" / "wsj_9003.dp") + "[:1]",
        "GLOVE_PATH": "",
        "CUDA_DEVICE": "-1",
    }


def test_every_config_is_built_here():
    # The exact set: a config added, renamed or removed must be listed here, so that a glob
    # that silently matches nothing (or a stray file) cannot pass.
    assert {config.name for config in CONFIGS} == {
        "biaffine_ewt_cpu.jsonnet",
        "biaffine_gsd_cpu.jsonnet",
        "joint_minilm_cpu.jsonnet",
        "kk_factored_charlstm_ptb.jsonnet",
        "kk_factored_minilm_cpu.jsonnet",
        "kk_factored_minilm_cpu_joint.jsonnet",
        "kk_factored_transformer_ptb.jsonnet",
        "kk_factored_transformer_ptb_joint.jsonnet",
        "kk_factored_words_charconcat_cpu.jsonnet",
        "kk_factored_words_charlstm_cpu.jsonnet",
        "kk_factored_words_cpu.jsonnet",
        "kk_factored_words_pos_cpu.jsonnet",
        "lal_ablation_nopfl_nord.jsonnet",
        "lal_ablation_nopfl_rd.jsonnet",
        "lal_ablation_noqv_conc.jsonnet",
        "lal_ablation_noqv_noconc.jsonnet",
        "lal_ablation_pfl_rd.jsonnet",
        "lal_ablation_qv_noconc.jsonnet",
        "lal_bert_chinese_ctb.jsonnet",
        "lal_minilm_cpu.jsonnet",
        "lal_minilm_cpu_bf16.jsonnet",
        "lal_minilm_cpu_joint.jsonnet",
        "lal_minilm_cpu_joint_fast.jsonnet",
        "lal_xlnet_ptb.jsonnet",
        "lal_xlnet_ptb_joint.jsonnet",
        "lal_xlnet_ptb_multi_gpu.jsonnet",
        "sinica_charlstm_cpu.jsonnet",
        "span_parser_minilm_cpu.jsonnet",
        "span_parser_transformer_gpu.jsonnet",
        "stack_attention_ewt_cpu.jsonnet",
        "stack_attention_ewt_layers1.jsonnet",
        "stack_attention_ewt_layers2.jsonnet",
        "stack_attention_ewt_layers4.jsonnet",
        "stack_attention_ewt_no_popped.jsonnet",
        "stack_attention_ewt_no_pos.jsonnet",
        "stack_attention_ewt_no_pushed.jsonnet",
        "stack_attention_ewt_seq2seq.jsonnet",
        "stack_attention_gsd_cpu.jsonnet",
        "stack_attention_ptb.jsonnet",
        "stack_attention_ptb_cpu.jsonnet",
        "tree_transformer_lm_cpu.jsonnet",
        "tree_transformer_lm_cpu_curve.jsonnet",
        "tree_transformer_lm_gpu.jsonnet",
        "transformer_lm_cpu.jsonnet",
        "tree_transformer_minilm_cpu.jsonnet",
    }
    # One builder library, imported by the configs.
    assert sorted(p.name for p in (REPO_ROOT / "training_config").glob("*.libsonnet")) == [
        "parsers.libsonnet"
    ]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_config_builds_and_runs_forward(config: Path):
    params = Params.from_file(str(config), ext_vars=_ext_vars())
    embedders = params["model"]["text_field_embedder"]["token_embedders"]
    uses_transformer = any(e["type"] == "lal_transformer" for e in embedders.values())
    encoder = params["model"]["encoder"]
    for key in ("input_dim", "input_size"):
        if uses_transformer and key in encoder and encoder[key] != MINILM_HIDDEN:
            # The config is shaped for a larger transformer; resize its encoder for MiniLM.
            encoder[key] = MINILM_HIDDEN
    if params["trainer"].get("cuda_device", -1) >= 0:
        assert params["trainer"].get("use_amp", False), "GPU configs train in mixed precision"
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))[:4]
    assert instances
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    batch = Batch(instances)
    batch.index_instances(vocab)
    output = model(**batch.as_tensor_dict())
    assert output["loss"].requires_grad
    trainer = params.pop("trainer").as_dict()
    # Constituency parsers are chosen on dev EVALB F1, dependency parsers on dev LAS; the
    # unsupervised parser on dev perplexity (its dev trees are scored, never used to choose).
    if isinstance(model, Model.by_name("tree_transformer_lm")):
        assert trainer["validation_metric"] == "-perplexity"
    elif isinstance(
        model, (Model.by_name("stack_attention_parser"), Model.by_name("biaffine_parser"))
    ):
        assert trainer["validation_metric"] == "+LAS"
    else:
        assert trainer["validation_metric"] == "+evalb_f1"
    # Every parameter group of the optimiser names parameters that exist (a regex matching
    # nothing would silently train those weights at the default learning rate).
    names = [name for name, _ in model.named_parameters()]
    for regexes, _ in trainer.get("optimizer", {}).get("parameter_groups", []):
        for regex in regexes:
            assert any(re.search(regex, name) for name in names), f"{regex} matches nothing"
    if "optimizer" in trainer:
        # Builds: no parameter is in two groups.
        Optimizer.from_params(
            model_parameters=list(model.named_parameters()), params=Params(trainer["optimizer"])
        )
    callbacks = trainer.get("callbacks", [])
    if any(callback["type"] == "time_budget" for callback in callbacks):
        # The budget sets the learning rate itself; a scheduler would fight it.
        assert "learning_rate_scheduler" not in trainer
    for callback in callbacks:
        TrainerCallback.from_params(params=Params(callback), serialization_dir="unused")


def test_every_pretrained_transformer_is_this_packages_embedder_and_indexer():
    """A config with a pretrained transformer names the `lal_transformer` embedder (its
    precision, packing, long inputs, fast dropout) and indexer, not AllenNLP's names (which
    resolve to the same classes only for archives written before they existed)."""
    with_transformer = []
    for config in CONFIGS:
        text = json.dumps(json.loads(_jsonnet.evaluate_file(str(config), ext_vars=_ext_vars())))
        assert "pretrained_transformer" not in text, config.name
        assert "embedder_precision" not in text, config.name
        if '"lal_transformer"' in text:
            with_transformer.append(config.name)
            params = json.loads(text)
            for reader in ("dataset_reader", "validation_dataset_reader"):
                if reader in params:
                    indexers = params[reader]["token_indexers"]
                    assert indexers["tokens"]["type"] == "lal_transformer", (config.name, reader)
            tokens = params["model"]["text_field_embedder"]["token_embedders"]["tokens"]
            assert tokens["type"] == "lal_transformer", config.name
    # The span, joint span and Tree Transformer encoder families over MiniLM, BERT or XLNet.
    assert len(with_transformer) == 22
    assert "tree_transformer_minilm_cpu.jsonnet" in with_transformer
    assert "lal_minilm_cpu_joint.jsonnet" in with_transformer


def test_the_precision_is_the_embedders():
    def tokens_embedder(name):
        config = REPO_ROOT / "training_config" / name
        params = json.loads(_jsonnet.evaluate_file(str(config), ext_vars=_ext_vars()))
        return params["model"]["text_field_embedder"]["token_embedders"]["tokens"]

    assert tokens_embedder("lal_minilm_cpu_joint.jsonnet")["precision"] == "auto"
    assert tokens_embedder("lal_minilm_cpu_bf16.jsonnet")["precision"] == "bfloat16"
    assert "precision" not in tokens_embedder("lal_minilm_cpu.jsonnet")


@pytest.mark.parametrize("frozen_layers", [0, 2])
def test_frozen_layers_fix_the_embeddings_and_the_lowest_layers(frozen_layers):
    params = Params.from_file(
        str(REPO_ROOT / "training_config" / "lal_minilm_cpu.jsonnet"), ext_vars=_ext_vars()
    )
    optimizer_params = json.loads(_jsonnet.evaluate_snippet(
        "optimizer",
        f"(import 'parsers.libsonnet').optimizer(1e-3, 3e-4, frozen_layers={frozen_layers})",
        jpathdir=str(REPO_ROOT / "training_config"),
    ))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))[:4]
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    optimizer = Optimizer.from_params(
        model_parameters=list(model.named_parameters()), params=Params(optimizer_params)
    )
    frozen = re.compile(
        r"transformer_model\.(embeddings\.|encoder\.layer\.(%s)\.)"
        % "|".join(str(i) for i in range(frozen_layers))
        if frozen_layers else r"transformer_model\.embeddings\."
    )
    named = dict(model.named_parameters())
    assert {n for n, p in named.items() if not p.requires_grad} == {
        n for n in named if frozen.search(n)
    }
    transformer_lr = {
        id(p) for group in optimizer.param_groups if group["lr"] == 3e-4 for p in group["params"]
    }
    assert transformer_lr == {
        id(p) for n, p in named.items() if "transformer_model" in n and p.requires_grad
    }
    batch = Batch(instances)
    batch.index_instances(vocab)
    model(**batch.as_tensor_dict())["loss"].backward()
    layer = f"transformer_model.encoder.layer.{frozen_layers}.attention.self.query.weight"
    assert next(p.grad for n, p in named.items() if n.endswith(layer)) is not None
    assert all(p.grad is None for n, p in named.items() if frozen.search(n))


def test_the_fast_joint_config_differs_in_its_two_sizes_only():
    def flat(value, prefix=""):
        if not isinstance(value, dict):
            return {prefix.rstrip("."): value}
        pairs = [flat(item, f"{prefix}{key}.") for key, item in value.items()]
        return {key: item for pair in pairs for key, item in pair.items()}

    configs = [
        flat(json.loads(_jsonnet.evaluate_file(
            str(REPO_ROOT / "training_config" / name), ext_vars=_ext_vars()
        )))
        for name in ("lal_minilm_cpu_joint.jsonnet", "lal_minilm_cpu_joint_fast.jsonnet")
    ]
    layers = "model.text_field_embedder.token_embedders.tokens.transformer_kwargs.num_hidden_layers"
    changed = {key for key in configs[0].keys() | configs[1].keys()
               if configs[0].get(key) != configs[1].get(key)}
    assert changed == {layers, "model.dependency_label_dim"}
    assert (configs[0][layers], configs[1][layers]) == (4, 3)
    assert (configs[0]["model.dependency_label_dim"], configs[1]["model.dependency_label_dim"]) == (
        64, 32
    )
