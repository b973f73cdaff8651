#!/usr/bin/env python3
"""Export the modern reference networks (Swin-T, ConvNeXt-Tiny, BERT-base,
GPT-2 small) to ONNX the way a user would, strip their weights, and write
the torch ground truth the C tests check.  An offline tool: never run by
the build or the tests; its outputs are committed.

    /usr/bin/python3 scripts/export_modern.py [--out-dir tests/data]

Needs Debian 12's python3-torch (1.13.1), python3-torchvision (0.14.1)
and python3-onnx (1.12.0).

Swin-T and ConvNeXt-Tiny are torchvision's own definitions
(torchvision.models.swin_t, convnext_tiny), untouched.

BERT-base and GPT-2 small are RE-IMPLEMENTATIONS: Hugging Face
`transformers` is not packaged in Debian, so the classes below transcribe
the forward passes of transformers' BertModel and GPT2LMHeadModel
(modeling_bert.py, modeling_gpt2.py, v4.25, the release contemporary with
torch 1.13) line by line in plain torch, so that the exported graphs carry
the op patterns a real Hugging Face export has: shape arithmetic
(Shape/Gather/Unsqueeze/Concat), the extended attention mask
(1 - mask) * finfo.min, erf GELU (BERT), Conv1D as addmm, the split of
c_attn, the causal mask sliced from a registered bool buffer and applied
with torch.where, gelu_new (tanh formula with pow) and the tied LM head
(GPT-2).  Inputs are those of transformers.onnx's default/causal-lm
features: input_ids, attention_mask (and token_type_ids for BERT), batch 1,
sequence 128.

Export: torch.onnx.export with the defaults a user gets (eval mode,
constant folding on, no dynamic axes), at torch 1.13's default opset (14)
and, but for Swin-T, again at opset 17 (`*.opset17.onnx`, where
LayerNormalization is one op); BERT and GPT-2 also with symbolic batch and
sequence axes as transformers.onnx exports them (`*.dynamic.onnx`, opset
14; the reference file's `dims` line gives the values).  Stripping: every float initializer keeps its name, type and dims and
loses its data; integer initializers and Constant nodes keep theirs.  No
value_info: a reader must infer every intermediate shape.

Ground truth, two independent ways that must agree to the MAC:
 1. torch: a TorchDispatchMode counts the MACs of every aten convolution,
    mm, addmm, bmm and baddbmm the forward pass executes (Conv, Linear,
    Conv1D and the attention matmuls QK^T and A.V -- and nothing else).
 2. ONNX: a small interpreter (run_node, torch kernels) runs the full
    export, its output must equal the model's; then per Conv / Gemm /
    MatMul node the MACs of the shapes its operands had.
The per-layer table of the reference file is (2); the total is asserted
equal to (1).  `params` in the reference file is what the file carries: the
float initializer elements read by some node (constant folding turns
Swin's relative-position-bias gather into a new initializer, and GPT-2's
tied LM head into a transposed copy of the token embedding); torch's
trainable parameter count is written beside it as a comment.
"""
import argparse
import io
import math
import os
import sys

import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torchvision
from torch.utils._python_dispatch import TorchDispatchMode

SEQ = 128


# --------------------------------------------------------------------------
# BERT-base: transformers.models.bert.modeling_bert (v4.25), transcribed.
# --------------------------------------------------------------------------
class BertConfig:
    vocab_size = 30522
    hidden_size = 768
    num_hidden_layers = 12
    num_attention_heads = 12
    intermediate_size = 3072
    max_position_embeddings = 512
    type_vocab_size = 2
    layer_norm_eps = 1e-12
    pad_token_id = 0


class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size,
                                            padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids",
                             torch.arange(config.max_position_embeddings).expand((1, -1)))
        self.register_buffer("token_type_ids",
                             torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)

    def forward(self, input_ids, token_type_ids=None, position_ids=None,
                past_key_values_length=0):
        input_shape = input_ids.size()
        seq_length = input_shape[1]
        if position_ids is None:
            position_ids = self.position_ids[:, past_key_values_length:seq_length +
                                             past_key_values_length]
        if token_type_ids is None:
            buffered = self.token_type_ids[:, :seq_length]
            token_type_ids = buffered.expand(input_shape[0], seq_length)
        inputs_embeds = self.word_embeddings(input_ids)
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings = inputs_embeds + token_type_embeddings
        position_embeddings = self.position_embeddings(position_ids)
        embeddings += position_embeddings
        embeddings = self.LayerNorm(embeddings)
        embeddings = self.dropout(embeddings)
        return embeddings


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.hidden_size // config.num_attention_heads
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(config.hidden_size, self.all_head_size)
        self.key = nn.Linear(config.hidden_size, self.all_head_size)
        self.value = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(0.1)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)
        return context_layer


class BertSelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states, attention_mask=None):
        self_outputs = self.self(hidden_states, attention_mask)
        return self.output(self_outputs, hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)

    def forward(self, hidden_states):
        # ACT2FN["gelu"] = GELUActivation: nn.functional.gelu (erf form)
        return nn.functional.gelu(self.dense(hidden_states))


class BertOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, attention_mask=None):
        attention_output = self.attention(hidden_states, attention_mask)
        intermediate_output = self.intermediate(attention_output)
        return self.output(intermediate_output, attention_output)


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])

    def forward(self, hidden_states, attention_mask=None):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, attention_mask)
        return hidden_states


class BertPooler(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        first_token_tensor = hidden_states[:, 0]
        return self.activation(self.dense(first_token_tensor))


class BertModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config)

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def get_extended_attention_mask(self, attention_mask, input_shape):
        extended_attention_mask = attention_mask[:, None, None, :]
        extended_attention_mask = extended_attention_mask.to(dtype=self.dtype)
        extended_attention_mask = (1.0 - extended_attention_mask) * torch.finfo(self.dtype).min
        return extended_attention_mask

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        input_shape = input_ids.size()
        batch_size, seq_length = input_shape
        if attention_mask is None:
            attention_mask = torch.ones((batch_size, seq_length), device=input_ids.device)
        if token_type_ids is None:
            buffered = self.embeddings.token_type_ids[:, :seq_length]
            token_type_ids = buffered.expand(batch_size, seq_length)
        extended_attention_mask = self.get_extended_attention_mask(attention_mask, input_shape)
        embedding_output = self.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
        sequence_output = self.encoder(embedding_output, extended_attention_mask)
        pooled_output = self.pooler(sequence_output)
        return sequence_output, pooled_output


# --------------------------------------------------------------------------
# GPT-2 small: transformers.models.gpt2.modeling_gpt2 (v4.25), transcribed.
# --------------------------------------------------------------------------
class GPT2Config:
    vocab_size = 50257
    n_positions = 1024
    n_embd = 768
    n_layer = 12
    n_head = 12
    n_inner = None
    layer_norm_epsilon = 1e-5


class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: a linear layer with transposed
    weights, run as addmm."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        w = torch.empty(nx, nf)
        nn.init.normal_(w, std=0.02)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        x = x.view(size_out)
        return x


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                               (input + 0.044715 * torch.pow(input, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        max_positions = config.n_positions
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.embed_dim = config.n_embd
        self.num_heads = config.n_head
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.scale_attn_weights = True
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full(
                [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length, :key_length].to(
            torch.bool)
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, attention_mask=None):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output, _ = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)
        return attn_output


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        self.c_fc = Conv1D(intermediate_size, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, intermediate_size)
        self.act = NewGELUActivation()
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return self.dropout(hidden_states)


class GPT2Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        inner_dim = config.n_inner if config.n_inner is not None else 4 * config.n_embd
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(inner_dim, config)

    def forward(self, hidden_states, attention_mask=None):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states, attention_mask=attention_mask)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return residual + feed_forward_hidden_states


class GPT2Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_dim = config.n_embd
        self.wte = nn.Embedding(config.vocab_size, self.embed_dim)
        self.wpe = nn.Embedding(config.n_positions, self.embed_dim)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([GPT2Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=config.layer_norm_epsilon)

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def forward(self, input_ids, attention_mask=None):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        batch_size = input_ids.shape[0]
        device = input_ids.device
        past_length = 0
        position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long,
                                    device=device)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        if attention_mask is not None:
            attention_mask = attention_mask.view(batch_size, -1)
            attention_mask = attention_mask[:, None, None, :]
            attention_mask = attention_mask.to(dtype=self.dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(self.dtype).min
        inputs_embeds = self.wte(input_ids)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        hidden_states = self.drop(hidden_states)
        output_shape = input_shape + (hidden_states.size(-1),)
        for block in self.h:
            hidden_states = block(hidden_states, attention_mask=attention_mask)
        hidden_states = self.ln_f(hidden_states)
        return hidden_states.view(output_shape)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tie_weights()

    def forward(self, input_ids, attention_mask=None):
        hidden_states = self.transformer(input_ids, attention_mask=attention_mask)
        return self.lm_head(hidden_states)


# --------------------------------------------------------------------------
# Ground truth (1): MACs of the aten ops torch executes.
# --------------------------------------------------------------------------
class MacCounter(TorchDispatchMode):
    """Counts the multiply-accumulates of every convolution and matrix
    product torch runs: out elements x reduction length."""

    def __init__(self):
        super().__init__()
        self.macs = 0
        self.by_op = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        macs = 0
        if name == "convolution":
            w, groups = args[1], args[8]
            macs = out.numel() * (w.shape[1]) * math.prod(w.shape[2:])
            assert w.shape[0] % groups == 0
        elif name in ("mm", "bmm"):
            macs = out.numel() * args[0].shape[-1]
        elif name in ("addmm", "baddbmm"):
            macs = out.numel() * args[1].shape[-1]
        elif name in ("matmul", "linear", "conv2d", "einsum", "dot", "mv", "addmv"):
            raise RuntimeError("unexpected undecomposed %s" % name)
        if macs:
            self.macs += macs
            self.by_op[name] = self.by_op.get(name, 0) + macs
        return out


def torch_macs(model, inputs):
    counter = MacCounter()
    with torch.no_grad(), counter:
        model(*inputs)
    return counter.macs, counter.by_op


# --------------------------------------------------------------------------
# Ground truth (2): MACs per ONNX node, from the shapes the full export's
# values take when the graph runs.  onnx.shape_inference cannot infer Swin's
# shapes (its Reshape targets are computed at run time from Shape, Mod and
# ScatterND), so a small interpreter runs the ONNX graph with torch kernels;
# its output must equal the torch model's, which checks every shape on the
# way.
# --------------------------------------------------------------------------
DTYPES = {1: torch.float32, 6: torch.int32, 7: torch.int64, 9: torch.bool, 11: torch.float64}


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def run_node(n, x):
    """The outputs of ONNX node n on input tensors x (None for an absent
    optional input), for the ops these exports contain."""
    op = n.op_type
    if op == "Constant":
        return [torch.from_numpy(onnx.numpy_helper.to_array(attr(n, "value")).copy())]
    if op in ("Identity", "Dropout"):
        return [x[0]]
    if op in ("Add", "Sub", "Mul", "Pow", "Equal"):
        f = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Pow": torch.pow,
             "Equal": torch.eq}[op]
        r = f(x[0], x[1])
        return [r if op in ("Pow", "Equal") else r.to(x[0].dtype)]
    if op == "Div":
        if x[0].dtype.is_floating_point:
            return [x[0] / x[1]]
        return [torch.div(x[0], x[1], rounding_mode="trunc")]
    if op == "Mod":
        return [torch.fmod(x[0], x[1]) if attr(n, "fmod", 0) else torch.remainder(x[0], x[1])]
    if op in ("Sqrt", "Erf", "Tanh", "Not"):
        return [{"Sqrt": torch.sqrt, "Erf": torch.erf, "Tanh": torch.tanh,
                 "Not": torch.logical_not}[op](x[0])]
    if op == "Cast":
        return [x[0].to(DTYPES[attr(n, "to")])]
    if op == "Shape":
        return [torch.tensor(list(x[0].shape), dtype=torch.int64)]
    if op == "Unsqueeze":
        r = x[0]
        axes = [int(a) for a in x[1].tolist()]
        rank = r.dim() + len(axes)
        for a in sorted(a % rank for a in axes):
            r = r.unsqueeze(a)
        return [r]
    if op == "Squeeze":
        if len(x) > 1 and x[1] is not None:
            r = x[0]
            for a in sorted((int(a) % r.dim() for a in x[1].tolist()), reverse=True):
                r = r.squeeze(a)
            return [r]
        return [x[0].squeeze()]
    if op == "Concat":
        return [torch.cat(x, dim=attr(n, "axis"))]
    if op == "Gather":
        axis = attr(n, "axis", 0)
        idx = x[1].long()
        idx = torch.where(idx < 0, idx + x[0].shape[axis], idx)
        return [torch.index_select(x[0], axis, idx.reshape(-1)).reshape(
            x[0].shape[:axis % x[0].dim()] + idx.shape + x[0].shape[axis % x[0].dim() + 1:])]
    if op == "Slice":
        data, starts, ends = x[0], x[1].tolist(), x[2].tolist()
        axes = x[3].tolist() if len(x) > 3 and x[3] is not None else list(range(len(starts)))
        steps = x[4].tolist() if len(x) > 4 and x[4] is not None else [1] * len(starts)
        for st, en, ax, sp in zip(starts, ends, axes, steps):
            d = data.shape[ax]
            st, en = st + d if st < 0 else st, en + d if en < 0 else en
            if sp > 0:
                st, en = max(0, min(d, st)), max(0, min(d, en))
            else:
                st, en = max(-1, min(d - 1, st)), max(-1, min(d - 1, en))
            data = torch.index_select(data, ax, torch.arange(st, en, sp, dtype=torch.long))
        return [data]
    if op == "Reshape":
        shape = x[1].tolist()
        shape = [x[0].shape[i] if s == 0 and not attr(n, "allowzero", 0) else s
                 for i, s in enumerate(shape)]
        return [x[0].reshape(shape)]
    if op == "Transpose":
        return [x[0].permute(attr(n, "perm"))]
    if op == "Flatten":
        axis = attr(n, "axis", 1)
        return [x[0].reshape(math.prod(x[0].shape[:axis]), -1)]
    if op == "ConstantOfShape":
        v = attr(n, "value")
        v = torch.from_numpy(onnx.numpy_helper.to_array(v).copy()) if v is not None else \
            torch.zeros(1)
        return [v.reshape(()).expand(x[0].tolist()).clone()]
    if op == "Expand":
        shape = torch.broadcast_shapes(x[0].shape, tuple(x[1].tolist()))
        return [x[0].expand(shape).clone()]
    if op == "Where":
        return [torch.where(x[0].bool(), x[1], x[2])]
    if op == "Range":
        return [torch.arange(x[0].item(), x[1].item(), x[2].item(), dtype=x[0].dtype)]
    if op == "ScatterND":
        data, indices, updates = x[0].clone(), x[1].long(), x[2]
        k = indices.shape[-1]
        flat_idx = indices.reshape(-1, k)
        flat_upd = updates.reshape((flat_idx.shape[0],) + data.shape[k:])
        for i in range(flat_idx.shape[0]):
            data[tuple(flat_idx[i].tolist())] = flat_upd[i]
        return [data]
    if op == "Pad":
        pads = x[1].tolist()
        assert attr(n, "mode", b"constant") in (b"constant", "constant")
        value = x[2].item() if len(x) > 2 and x[2] is not None else 0
        r = x[0].dim()
        torch_pads = []
        for ax in reversed(range(r)):
            torch_pads += [pads[ax], pads[ax + r]]
        return [torch.nn.functional.pad(x[0], torch_pads, value=value)]
    if op == "ReduceMean":
        axes = attr(n, "axes")
        return [x[0].mean(dim=axes, keepdim=bool(attr(n, "keepdims", 1)))]
    if op == "Softmax":
        return [torch.softmax(x[0], dim=attr(n, "axis", -1))]
    if op == "LayerNormalization":
        axis = attr(n, "axis", -1) % x[0].dim()
        return [torch.nn.functional.layer_norm(x[0], x[0].shape[axis:], x[1],
                                               x[2] if len(x) > 2 else None,
                                               eps=attr(n, "epsilon", 1e-5))]
    if op == "Split":
        axis = attr(n, "axis", 0)
        return list(torch.split(x[0], x[1].tolist(), dim=axis))
    if op == "MatMul":
        return [torch.matmul(x[0], x[1])]
    if op == "Gemm":
        a = x[0].t() if attr(n, "transA", 0) else x[0]
        b = x[1].t() if attr(n, "transB", 0) else x[1]
        r = attr(n, "alpha", 1.0) * (a @ b)
        if len(x) > 2 and x[2] is not None:
            r = r + attr(n, "beta", 1.0) * x[2]
        return [r]
    if op == "Conv":
        k = len(attr(n, "kernel_shape"))
        assert k == 2
        pads = attr(n, "pads", [0] * 4)
        assert pads[:2] == pads[2:], "asymmetric conv padding not needed here"
        return [torch.nn.functional.conv2d(x[0], x[1], x[2] if len(x) > 2 else None,
                                           stride=attr(n, "strides", [1, 1]), padding=pads[:2],
                                           dilation=attr(n, "dilations", [1, 1]),
                                           groups=attr(n, "group", 1))]
    if op == "GlobalAveragePool":
        return [x[0].mean(dim=tuple(range(2, x[0].dim())), keepdim=True)]
    raise NotImplementedError("interpreter: op %s (%s)" % (op, n.name))


def run_onnx(model, inputs):
    """Every value of the full (weighted) model, run on `inputs`."""
    values = {i.name: torch.from_numpy(onnx.numpy_helper.to_array(i).copy())
              for i in model.graph.initializer}
    for vi, t in zip(model.graph.input, inputs):
        values[vi.name] = t
    with torch.no_grad():
        for n in model.graph.node:
            outs = run_node(n, [values[i] if i else None for i in n.input])
            for name, t in zip(n.output, outs):
                values[name] = t
    return values


def onnx_layers(model, inputs, expected):
    """Every Conv / ConvTranspose / Gemm / MatMul node with its MACs and
    operand shapes, in file order, and the shapes of all values."""
    values = run_onnx(model, inputs)
    got = [values[o.name] for o in model.graph.output]
    for g, e in zip(got, expected):
        if g.shape != e.shape or not torch.allclose(g, e, rtol=1e-3, atol=1e-3):
            sys.exit("interpreter output differs from torch: %s vs %s, max |diff| %g" %
                     (tuple(g.shape), tuple(e.shape), (g - e).abs().max().item()))
    shapes = {k: list(v.shape) for k, v in values.items()}
    layers = []
    for n in model.graph.node:
        out = shapes[n.output[0]]
        ins = [shapes[i] for i in n.input if i]
        if n.op_type == "Conv":
            macs = math.prod(out) * math.prod(ins[1][1:])
        elif n.op_type == "MatMul":
            macs = math.prod(out) * ins[0][-1]
        elif n.op_type == "Gemm":
            macs = math.prod(out) * (ins[0][0] if attr(n, "transA", 0) else ins[0][1])
        else:
            continue
        layers.append((n.op_type, macs, ins[0], ins[1], out, n.name))
    return layers, shapes


def max_ws_bf16(model, shapes):
    """The largest compute node's activation inputs + outputs, at 2 bytes
    an element (initializers and Constant outputs are not activations)."""
    consts = {i.name for i in model.graph.initializer}
    consts |= {n.output[0] for n in model.graph.node if n.op_type == "Constant"}
    best = 0
    for n in model.graph.node:
        if n.op_type not in ("Conv", "ConvTranspose", "Gemm", "MatMul"):
            continue
        names = []
        for i in n.input:
            if i and i not in consts and i not in names:
                names.append(i)
        ws = sum(math.prod(shapes[i]) for i in names) + sum(math.prod(shapes[o]) for o in n.output)
        best = max(best, 2 * ws)
    return best


def initializer_params(model):
    used = {i for n in model.graph.node for i in n.input}
    return sum(math.prod(i.dims) for i in model.graph.initializer
               if i.name in used and i.data_type in (onnx.TensorProto.FLOAT,
                                                       onnx.TensorProto.FLOAT16,
                                                       onnx.TensorProto.BFLOAT16,
                                                       onnx.TensorProto.DOUBLE))


def strip(model):
    """Float initializers keep name, type and dims; their data goes.  So
    does the data of integer and bool initializers of more than 65,536
    elements (GPT-2's 1024x1024 causal-mask buffer in the dynamic export, 1
    MB): accelsearch keeps no values that large (WL_MAX_FOLD_ELEMS)."""
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
              onnx.TensorProto.DOUBLE)
    for init in model.graph.initializer:
        if init.data_type in floats or math.prod(init.dims) > 65536:
            for field in ("raw_data", "float_data", "double_data", "int32_data", "int64_data"):
                init.ClearField(field)
    return model


def shape_str(s):
    return "x".join(str(d) for d in s) if s else "-"


# --------------------------------------------------------------------------
# The models and their export.
# --------------------------------------------------------------------------
def make_models():
    torch.manual_seed(0)
    ids = torch.randint(0, 30522, (1, SEQ), dtype=torch.long)
    mask = torch.ones(1, SEQ, dtype=torch.long)
    ttype = torch.zeros(1, SEQ, dtype=torch.long)
    image = torch.randn(1, 3, 224, 224)
    # name, builder, inputs, input names, output names, source, published
    # MACs (torchvision's GFLOPS, which count MACs), published params
    # (torchvision's num_params; Hugging Face's bert-base-uncased and gpt2),
    # variants (None: torch's default opset, 14; 17; "dynamic": opset 14 with
    # symbolic batch and sequence, as transformers.onnx exports; the
    # reference file then says which values to give them).  Swin-T only at
    # the default: its
    # 6,500 nodes make a 1.3 MB file, and opset 17 changes only LayerNorm,
    # which ConvNeXt's opset-17 export covers.
    return [
        ("swin_t", torchvision.models.swin_t, (image,), ["input"], ["output"],
         "torchvision.models.swin_t() 0.14.1, 224x224", 4.49e9, 28288354, (None,)),
        ("convnext_tiny", torchvision.models.convnext_tiny, (image,), ["input"], ["output"],
         "torchvision.models.convnext_tiny() 0.14.1, 224x224", 4.46e9, 28589128, (None, 17)),
        ("bert_base_hf", lambda: BertModel(BertConfig()), (ids, mask, ttype),
         ["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state", "pooler_output"],
         "re-implementation of transformers BertModel (bert-base-uncased), seq 128", None,
         109482240, (None, 17, "dynamic")),
        ("gpt2_hf", lambda: GPT2LMHeadModel(GPT2Config()), (ids, mask),
         ["input_ids", "attention_mask"], ["logits"],
         "re-implementation of transformers GPT2LMHeadModel (gpt2), seq 128", None, 124439808,
         (None, 17, "dynamic")),
    ]


def export_one(name, build, inputs, in_names, out_names, source, published, published_params,
               opset, out_dir):
    model = build().eval()
    # Fresh-init weights repeat (LayerNorm's ones, layer scale's 1e-6) and the
    # exporter merges equal initializers; trained weights never repeat, so
    # give every parameter seeded random values first.
    torch.manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    torch_params = sum(p.numel() for p in model.parameters())
    macs_torch, by_op = torch_macs(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    buf = io.BytesIO()
    kwargs = {"opset_version": opset} if isinstance(opset, int) else {}
    if opset == "dynamic":
        axes = {n: {0: "batch", 1: "sequence"} for n in in_names}
        for n, e in zip(out_names, expected):
            axes[n] = {0: "batch", 1: "sequence"} if e.dim() >= 3 else {0: "batch"}
        kwargs["dynamic_axes"] = axes
    with torch.no_grad():
        torch.onnx.export(model, inputs, buf, input_names=in_names, output_names=out_names,
                          **kwargs)
    full = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(full)
    layers, shapes = onnx_layers(full, inputs, expected)
    macs_onnx = sum(l[1] for l in layers)
    if macs_onnx != macs_torch:
        sys.exit("%s: ONNX MACs %d != torch MACs %d (%s)" % (name, macs_onnx, macs_torch, by_op))
    if published and abs(macs_torch / published - 1) > 0.006:
        sys.exit("%s: %d MACs, torchvision publishes %.2f G" % (name, macs_torch, published / 1e9))
    if torch_params != published_params:
        sys.exit("%s: %d params, published %d" % (name, torch_params, published_params))
    ws = max_ws_bf16(full, shapes)
    params = initializer_params(full)
    stem = name if opset is None else "%s.%s" % (
        name, opset if opset == "dynamic" else "opset%d" % opset)
    stripped = strip(full)
    fname = stem + ".onnx"
    onnx.save(stripped, os.path.join(out_dir, "models", fname))
    out_shape = shapes[full.graph.output[0].name]
    opset_used = next(o.version for o in full.opset_import if o.domain in ("", "ai.onnx"))
    lines = [
        "# generated by scripts/export_modern.py: %s, torch %s, opset %d" %
        (source, torch.__version__, opset_used),
        "# torch: %d MACs (%s), %d trainable params%s" %
        (macs_torch, ", ".join("%s %d" % kv for kv in sorted(by_op.items())), torch_params,
         "; torchvision publishes %.2f GFLOPS (MACs)" % (published / 1e9) if published else ""),
        "file " + fname,
    ] + (["dims batch=%d,sequence=%d" % tuple(inputs[0].shape)] if opset == "dynamic" else []) + [
        "params %d" % params,
        "macs %d" % macs_torch,
        "max_ws_bf16 %d" % ws,
        "nodes %d" % len(full.graph.node),
        "output " + shape_str(out_shape),
    ]
    for op, macs, a, b, o, node in layers:
        lines.append("layer %s %d %s %s %s %s" % (op, macs, shape_str(a), shape_str(b),
                                                  shape_str(o), node))
    with open(os.path.join(out_dir, "reference", stem + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: %d MACs, %d params in file (torch %d), %d nodes, %d compute layers, %d bytes" %
          (fname, macs_torch, params, torch_params, len(full.graph.node), len(layers),
           os.path.getsize(os.path.join(out_dir, "models", fname))), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                      "data"))
    ap.add_argument("--only", default=None, help="export only this model")
    args = ap.parse_args()
    for name, build, inputs, in_names, out_names, source, published, published_params, \
            opsets in make_models():
        if args.only and args.only != name:
            continue
        for opset in opsets:
            export_one(name, build, inputs, in_names, out_names, source, published,
                       published_params, opset, args.out_dir)


if __name__ == "__main__":
    main()
