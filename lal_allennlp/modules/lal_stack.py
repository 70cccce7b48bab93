"""
The encoder of Mrini et al. (2020), "Rethinking Self-Attention: Towards Interpretability in
Neural Parsing", sec. 3.1 and 4.1: partitioned self-attention layers (Kitaev & Klein 2018,
sec. 3; 3 layers, 8 heads, `d_kv` 64 in the paper) followed by one Label Attention Layer.

allennlp's `compose` encoder could chain the two, but each part would then need its own
`input_dim` written in the config, and the check that the label attention's content/position
split matches the self-attention's output would be lost; this small class fills in the label
attention's input dimension and makes that check.
"""
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.lazy import Lazy
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from lal_allennlp.modules.label_attention import LabelAttentionLayer
from lal_allennlp.modules.partitioned_transformer import PartitionedTransformerEncoder


@Seq2SeqEncoder.register("lal_stack", constructor="from_partial_objects")
class LabelAttentionStack(Seq2SeqEncoder):
    """
    Partitioned self-attention layers, then a Label Attention Layer.

    Registered as a `Seq2SeqEncoder` with name "lal_stack". From a config it is built by
    `from_partial_objects`, whose keys are `input_dim`, `self_attention` (the arguments of
    `partitioned_transformer` except `input_dim`) and `label_attention` (the arguments of
    `label_attention` except `input_dim`, which is the self-attention's `d_model`):

    ```jsonnet
    encoder: {
        type: "lal_stack",
        input_dim: 384,
        self_attention: { d_model: 1024, num_layers: 3, num_heads: 8, d_kv: 64 },
        label_attention: { num_heads: 112, d_kv: 128, d_proj: 128 },
    },
    ```

    Note that `partitioned_transformer` defaults to Kitaev & Klein's 8 layers; the Label
    Attention Layer paper uses `num_layers: 3`.

    # Parameters

    self_attention : `PartitionedTransformerEncoder`
    label_attention : `LabelAttentionLayer`
        Its input dimension must equal `self_attention`'s output dimension, and both must be
        partitioned or neither (a partitioned label attention reads the first half of its
        input as content and the second as position).
    """

    def __init__(
        self,
        self_attention: PartitionedTransformerEncoder,
        label_attention: LabelAttentionLayer,
    ) -> None:
        super().__init__()
        if label_attention.get_input_dim() != self_attention.get_output_dim():
            raise ConfigurationError(
                f"lal_stack: the label attention's input dimension "
                f"({label_attention.get_input_dim()}) must equal the self-attention's output "
                f"dimension (d_model = {self_attention.get_output_dim()})."
            )
        if label_attention.partitioned != self_attention.partitioned:
            raise ConfigurationError(
                f"lal_stack: label_attention.partitioned ({label_attention.partitioned}) must "
                f"equal self_attention.partitioned ({self_attention.partitioned}): only a "
                f"partitioned self-attention produces the [content ; position] halves a "
                f"partitioned label attention expects."
            )
        self.self_attention = self_attention
        self.label_attention = label_attention

    @classmethod
    def from_partial_objects(
        cls,
        input_dim: int,
        self_attention: Lazy[PartitionedTransformerEncoder],
        label_attention: Lazy[LabelAttentionLayer],
    ) -> "LabelAttentionStack":
        """
        # Parameters

        input_dim : `int`
            The embedder's output dimension.
        self_attention : `Lazy[PartitionedTransformerEncoder]`
            Built with `input_dim`.
        label_attention : `Lazy[LabelAttentionLayer]`
            Built with the self-attention's `d_model` as its `input_dim`.
        """
        built_self_attention = self_attention.construct(input_dim=input_dim)
        built_label_attention = label_attention.construct(
            input_dim=built_self_attention.get_output_dim()
        )
        return cls(built_self_attention, built_label_attention)

    @property
    def num_label_heads(self) -> int:
        """The number of label attention heads, `d_l`."""
        return self.label_attention.num_heads

    @property
    def output_partitions(self) -> int:
        """The span parser's `span_partitions`: `num_label_heads` when the heads are
        concatenated, else 1."""
        return self.label_attention.output_partitions

    def get_input_dim(self) -> int:
        return self.self_attention.get_input_dim()

    def get_output_dim(self) -> int:
        return self.label_attention.get_output_dim()

    def is_bidirectional(self) -> bool:
        return False

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        """
        `inputs`: `(batch_size, sequence_length, input_dim)`, `mask`:
        `(batch_size, sequence_length)`. Returns `(batch_size, sequence_length,
        get_output_dim())`, zero at padding. The label attention's weights of this forward are
        in `self.label_attention.last_attention`.
        """
        # shape (batch_size, sequence_length, d_model)
        encoded = self.self_attention(inputs, mask)
        # shape (batch_size, sequence_length, num_label_heads * d_proj)
        return self.label_attention(encoded, mask)
