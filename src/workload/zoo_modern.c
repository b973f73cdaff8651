/*
 * zoo_modern.c -- the zoo's newer models, written with the builder of
 * zoo_builder.h: EfficientNet-B0..B7, UNet, the SRGAN generator, ViT-B/16,
 * BERT-base and GPT-2 small.
 *
 * Every model is built at batch 1 in float32, op by op in the order of its
 * torch forward pass, with weights named after torch's module paths.  Each
 * follows one published definition (named above its build function); the
 * figures it must reproduce (parameters, MACs) are checked by
 * tests/test_zoo_modern.c.  Ops that are the identity at inference
 * (Dropout, stochastic depth) are left out, as torch.onnx.export leaves
 * them out.
 */
#include "zoo_builder.h"

#include <math.h>
#include <stdio.h>

/* ============================================================ shared parts */

/* Enter the child `index` of the container module `list` ("layer" 3 is
 * "layer.3"): two scope levels, since the builder pushes one at a time. */
static void push_child(zb *b, const char *list, int index)
{
    zb_push(b, "%s", list);
    zb_push(b, "%d", index);
}

static void pop_child(zb *b)
{
    zb_pop(b);
    zb_pop(b);
}

/* The name of the next child of an nn.Sequential being filled: "0", "1",
 * ... as *index counts up; buf holds it until the next call. */
static const char *next_child(char buf[12], int *index)
{
    snprintf(buf, 12, "%d", (*index)++);
    return buf;
}

/* A tensor the builder has no constructor for: an int64 graph input (token
 * ids; zb_input makes float ones) or an integer or bool constant, whose
 * values (ivalues) start as zeros for the caller to fill when with_values.
 * dims may be NULL for a scalar (rank 0).  Sticky like the zb_
 * constructors.  A NULL name gives "<scope>.const:<n>", as the builder
 * names its own constants. */
static int32_t raw_tensor(zb *b, const char *name, wl_tensor_kind kind, wl_dtype dtype, int rank,
                          const int64_t *dims, bool with_values)
{
    if (zb_failed(b))
        return -1;
    const char *full = name ? name
                            : as_arena_printf(&b->g->arena, "%s%sconst:%d", b->scope,
                                              b->scope[0] ? "." : "", (int)b->counter++);
    if (!full) {
        as_fail(b->st, AS_ENOMEM, "%s: out of memory naming a constant", b->g->source);
        return -1;
    }
    /* wl_add_tensor reads no dims at rank 0, but NULL would mean "unknown". */
    static const int64_t scalar_dims[1] = {1};
    int32_t t = wl_add_tensor(b->g, full, kind, dtype, rank, rank ? dims : scalar_dims, b->st);
    if (t < 0)
        return -1;
    if (with_values) {
        int64_t n = wl_tensor_elements(&b->g->tensors[t]);
        b->g->tensors[t].ivalues = as_arena_alloc(&b->g->arena, (size_t)n * sizeof(int64_t));
        if (!b->g->tensors[t].ivalues) {
            as_fail(b->st, AS_ENOMEM, "%s: out of memory for constant '%s'", b->g->source, full);
            return -1;
        }
    }
    if (kind == WL_TENSOR_INPUT && !wl_add_graph_input(b->g, t)) {
        as_fail(b->st, AS_ENOMEM, "%s: out of memory adding input '%s'", b->g->source, full);
        return -1;
    }
    return t;
}

/* The graph input `name`: int64 token ids of shape [1, seq]. */
static int32_t token_ids(zb *b, const char *name, int64_t seq)
{
    const int64_t dims[2] = {1, seq};
    return raw_tensor(b, name, WL_TENSOR_INPUT, WL_DTYPE_I64, 2, dims, false);
}

/* x[:, 0] of a [1, S, E] sequence: Gather of the rank-0 index 0 on axis 1,
 * giving [1, E] (the class token of ViT, the first token of BERT's pooler). */
static int32_t first_token(zb *b, int32_t x)
{
    int32_t in[2] = {x, raw_tensor(b, NULL, WL_TENSOR_CONSTANT, WL_DTYPE_I64, 0, NULL, true)};
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_GATHER);
    a.axis = 1;
    return zb_op(b, WL_OP_GATHER, NULL, 2, in, &a);
}

/* Close a model: the first failure of its constructors, if any (each op
 * is inferred as it is added; wl_zoo_build then indexes the whole graph). */
static as_code finish(const zb *b)
{
    return b->st->code;
}

/* ==================================================== transformer blocks */

/* The sizes of a transformer encoder or decoder. */
typedef struct transformer_dims {
    int64_t seq;   /* tokens */
    int64_t width; /* hidden size E */
    int64_t heads; /* E / heads per head */
    int64_t mlp;   /* feed-forward hidden size */
} transformer_dims;

/* How a source scales the attention scores by 1/sqrt(head_dim): BERT
 * multiplies the scores, GPT-2 divides them, and torch's
 * nn.MultiheadAttention (ViT) divides the queries before QK^T. */
typedef struct attention_style {
    bool scale_query;    /* scale q instead of the scores */
    wl_op_kind scale_op; /* WL_OP_MUL by 1/sqrt(d) or WL_OP_DIV by sqrt(d) */
} attention_style;

/* [1, S, E] -> [1, H, S, D] (Reshape + Transpose); keys go to [1, H, D, S]
 * at once, as the exporter fuses k.permute(0,2,1,3).transpose(-1,-2). */
static int32_t split_heads(zb *b, int32_t x, const transformer_dims *d, bool is_key)
{
    static const int64_t perm_qv[4] = {0, 2, 1, 3}, perm_k[4] = {0, 2, 3, 1};
    const int64_t dims[4] = {1, d->seq, d->heads, d->width / d->heads};
    return zb_transpose(b, zb_reshape(b, x, 4, dims), 4, is_key ? perm_k : perm_qv);
}

/* [1, H, S, D] -> [1, S, E]. */
static int32_t merge_heads(zb *b, int32_t x, const transformer_dims *d)
{
    static const int64_t perm[4] = {0, 2, 1, 3};
    const int64_t dims[3] = {1, d->seq, d->width};
    return zb_reshape(b, zb_transpose(b, x, 4, perm), 3, dims);
}

/* The packed projection [1, S, 3E] of GPT-2's c_attn and torch's in_proj,
 * split on the last axis into q, k, v of [1, S, E] each. */
static void split_qkv(zb *b, int32_t qkv, int64_t width, int32_t out[3])
{
    const int64_t sizes[3] = {width, width, width};
    int32_t in[2] = {qkv, zb_const_i64(b, 3, sizes)};
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_SPLIT);
    a.axis = 2;
    if (zb_op_multi(b, WL_OP_SPLIT, NULL, 2, in, 3, out, &a) < 0)
        out[0] = out[1] = out[2] = -1;
}

/* The two-input op of `kind` as module `name` of the scope (named by its
 * module path, like the BERT reference's qk and av matmul modules). */
static int32_t module_op2(zb *b, wl_op_kind kind, const char *name, int32_t x, int32_t y)
{
    int32_t in[2] = {x, y};
    return zb_op(b, kind, name, 2, in, NULL);
}

/*
 * Multi-head scaled dot-product attention of q, k, v ([1, S, E] each):
 * split heads, scores = q k^T scaled (see attention_style), masked where
 * the bool constant `mask` [1, 1, S, S] is false (-1: no mask; the masked
 * scores get float32's lowest value, as GPT-2 does), softmax, scores v,
 * merge heads.  The matmuls and the softmax are named as the modules "qk",
 * "av" and "softmax" of the BERT reference.  Returns [1, S, E].
 */
static int32_t attention(zb *b, const int32_t qkv[3], const transformer_dims *d,
                         const attention_style *style, int32_t mask)
{
    int32_t q = split_heads(b, qkv[0], d, false);
    int32_t k = split_heads(b, qkv[1], d, true);
    int32_t v = split_heads(b, qkv[2], d, false);
    double sqrt_head_dim = sqrt((double)(d->width / d->heads));
    int32_t scale =
        zb_const_f32(b, style->scale_op == WL_OP_MUL ? 1.0 / sqrt_head_dim : sqrt_head_dim);
    if (style->scale_query)
        q = zb_binary(b, style->scale_op, q, scale);
    int32_t s = module_op2(b, WL_OP_MATMUL, "qk", q, k);
    if (!style->scale_query)
        s = zb_binary(b, style->scale_op, s, scale);
    if (mask >= 0) {
        int32_t in[3] = {mask, s, zb_const_f32(b, -3.4028234663852886e38)};
        s = zb_op(b, WL_OP_WHERE, NULL, 3, in, NULL);
    }
    wl_attrs last_axis;
    wl_attrs_default(&last_axis, WL_OP_SOFTMAX);
    last_axis.axis = -1;
    s = zb_op(b, WL_OP_SOFTMAX, "softmax", 1, &s, &last_axis);
    return merge_heads(b, module_op2(b, WL_OP_MATMUL, "av", s, v), d);
}

/* ================================================================ BERT */

static const transformer_dims bert_dims = {.seq = 128, .width = 768, .heads = 12, .mlp = 3072};
static const attention_style bert_attention = {.scale_query = false, .scale_op = WL_OP_MUL};
#define BERT_LN_EPS 1e-12

/* One post-LN encoder layer of the BERT reference: q, k, v, attention,
 * proj, residual + ln_attn, intermediate + GELU (erf), output, residual +
 * ln_out. */
static int32_t bert_layer(zb *b, int32_t x)
{
    const transformer_dims *d = &bert_dims;
    zb_push(b, "attention");
    int32_t qkv[3];
    qkv[0] = zb_linear(b, "q", x, d->width, true);
    qkv[1] = zb_linear(b, "k", x, d->width, true);
    qkv[2] = zb_linear(b, "v", x, d->width, true);
    int32_t h = attention(b, qkv, d, &bert_attention, -1);
    h = zb_linear(b, "proj", h, d->width, true);
    zb_pop(b);
    x = zb_layernorm(b, "ln_attn", zb_add(b, x, h), BERT_LN_EPS);
    h = zb_linear(b, "intermediate", x, d->mlp, true);
    h = zb_as_module(b, "act", zb_gelu, h);
    h = zb_linear(b, "output", h, d->width, true);
    return zb_layernorm(b, "ln_out", zb_add(b, x, h), BERT_LN_EPS);
}

/*
 * BERT-base at sequence 128: the plain torch.nn definition behind
 * tests/data/models/bert_base_like.onnx (tests/data/reference/bert_base_like.txt).
 * Inputs input_ids, token_type_ids, position_ids (int64 [1, 128]); no
 * attention mask.  Word (30522), position (512) and token type (2)
 * embeddings, LayerNorm eps 1e-12, 12 layers, and a pooler (Linear + Tanh
 * on the first token).  Outputs: the sequence [1, 128, 768] and the pooled
 * [1, 768].  109,482,240 parameters, 11,174,215,680 MACs.
 */
as_code zoo_bert_base(wl_graph *g, as_status *st)
{
    zb b;
    zb_init(&b, g, st);
    const transformer_dims *d = &bert_dims;
    int32_t ids = token_ids(&b, "input_ids", d->seq);
    int32_t types = token_ids(&b, "token_type_ids", d->seq);
    int32_t positions = token_ids(&b, "position_ids", d->seq);
    int32_t x = zb_embedding(&b, "word_embeddings", ids, 30522, d->width);
    int32_t e = zb_embedding(&b, "position_embeddings", positions, 512, d->width);
    x = zb_add(&b, x, e);
    e = zb_embedding(&b, "token_type_embeddings", types, 2, d->width);
    x = zb_layernorm(&b, "emb_ln", zb_add(&b, x, e), BERT_LN_EPS);
    for (int i = 0; i < 12; i++) {
        push_child(&b, "layer", i);
        x = bert_layer(&b, x);
        pop_child(&b);
    }
    zb_output(&b, x);
    int32_t pooled = zb_linear(&b, "pooler", first_token(&b, x), d->width, true);
    zb_output(&b, zb_as_module(&b, "pooler_act", zb_tanh, pooled));
    return finish(&b);
}

/* =============================================================== GPT-2 */

#define GPT2_SEQ 128
static const transformer_dims gpt2_dims = {.seq = GPT2_SEQ, .width = 768, .heads = 12, .mlp = 3072};
static const attention_style gpt2_attention = {.scale_query = false, .scale_op = WL_OP_DIV};
#define GPT2_VOCAB 50257
#define GPT2_POSITIONS 1024

/* GPT-2's gelu_new, the tanh approximation, as HF writes it:
 * 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). */
static int32_t gelu_tanh(zb *b, int32_t x)
{
    int32_t half_x = zb_mul(b, x, zb_const_f32(b, 0.5));
    int32_t cube = zb_binary(b, WL_OP_POW, x, zb_const_f32(b, 3.0));
    int32_t inner = zb_add(b, x, zb_mul(b, cube, zb_const_f32(b, 0.044715)));
    inner = zb_mul(b, inner, zb_const_f32(b, 0.7978845608028654)); /* sqrt(2 / pi) */
    int32_t t = zb_tanh(b, inner);
    t = zb_add(b, t, zb_const_f32(b, 1.0));
    return zb_mul(b, half_x, t);
}

/* The causal mask [1, 1, S, S]: a bool constant, true on and below the
 * diagonal (HF keeps it as the buffer attn.bias, sliced to S; not a
 * parameter). */
static int32_t causal_mask(zb *b, int64_t seq)
{
    const int64_t dims[4] = {1, 1, seq, seq};
    int32_t t = raw_tensor(b, "causal_mask", WL_TENSOR_CONSTANT, WL_DTYPE_BOOL, 4, dims, true);
    if (t < 0)
        return -1;
    int64_t *allowed = b->g->tensors[t].ivalues;
    for (int64_t i = 0; i < seq; i++)
        for (int64_t j = 0; j <= i; j++)
            allowed[i * seq + j] = 1;
    return t;
}

/* One pre-LN GPT-2 block: ln_1, attn (c_attn split into q, k, v; causal
 * attention; c_proj), residual, ln_2, mlp (c_fc, gelu_new, c_proj),
 * residual. */
static int32_t gpt2_block(zb *b, int32_t x, int32_t mask)
{
    const transformer_dims *d = &gpt2_dims;
    int32_t h = zb_layernorm(b, "ln_1", x, ZB_NORM_EPS);
    zb_push(b, "attn");
    int32_t qkv[3];
    split_qkv(b, zb_linear(b, "c_attn", h, 3 * d->width, true), d->width, qkv);
    h = attention(b, qkv, d, &gpt2_attention, mask);
    h = zb_linear(b, "c_proj", h, d->width, true);
    zb_pop(b);
    x = zb_add(b, h, x);
    h = zb_layernorm(b, "ln_2", x, ZB_NORM_EPS);
    zb_push(b, "mlp");
    h = zb_linear(b, "c_fc", h, d->mlp, true);
    h = zb_as_module(b, "act", gelu_tanh, h);
    h = zb_linear(b, "c_proj", h, d->width, true);
    zb_pop(b);
    return zb_add(b, x, h);
}

/* The LM head tied to the token embedding: logits = x wte^T.  Written as
 * one Gemm (transB = 1) on the token rows, reading the very tensor the
 * embedding Gather reads, so that the parameter counts once and the
 * matmul keeps wte in the weight role (a Transpose of wte would turn the
 * largest operand of the model into an activation).  [1, S, E] ->
 * [1, S, vocab]. */
static int32_t tied_lm_head(zb *b, int32_t x, int32_t wte)
{
    const int64_t rows[2] = {-1, gpt2_dims.width};
    const int64_t logits[3] = {-1, gpt2_dims.seq, GPT2_VOCAB}; /* -1: the batch */
    zb_push(b, "lm_head");
    int32_t in[2] = {zb_reshape(b, x, 2, rows), wte};
    wl_attrs a;
    wl_attrs_default(&a, WL_OP_GEMM);
    a.trans_b = 1;
    int32_t y = zb_reshape(b, zb_op(b, WL_OP_GEMM, "", 2, in, &a), 3, logits); /* named "lm_head" */
    zb_pop(b);
    return y;
}

/*
 * GPT-2 small (HF GPT2LMHeadModel) at sequence 128: input_ids int64
 * [1, 128]; positions 0..127 as a constant; wte [50257, 768] + wpe
 * [1024, 768]; 12 pre-LN blocks of 12 heads (LN eps 1e-5); ln_f; the LM
 * head tied to wte.  Output: logits [1, 128, 50257].  124,439,808
 * parameters (HF's count, wte once); MACs
 * 12 * (128*768*2304 + 2*12*128*128*64 + 128*768*768 + 2*128*768*3072)
 * + 128*768*50257 = 16,114,089,984.
 */
as_code zoo_gpt2_small(wl_graph *g, as_status *st)
{
    zb b;
    zb_init(&b, g, st);
    const transformer_dims *d = &gpt2_dims;
    int64_t positions[GPT2_SEQ];
    for (int64_t i = 0; i < d->seq; i++)
        positions[i] = i;
    int32_t ids = token_ids(&b, "input_ids", d->seq);
    zb_push(&b, "transformer");
    int32_t x = zb_embedding(&b, "wte", ids, GPT2_VOCAB, d->width);
    int32_t wte = x < 0 ? -1 : g->ops[g->tensors[x].producer].inputs[0]; /* Gather(table, ids) */
    int32_t p =
        zb_embedding(&b, "wpe", zb_const_i64(&b, (int)d->seq, positions), GPT2_POSITIONS, d->width);
    x = zb_add(&b, x, p);
    int32_t mask = causal_mask(&b, d->seq);
    for (int i = 0; i < 12; i++) {
        push_child(&b, "h", i);
        x = gpt2_block(&b, x, mask);
        pop_child(&b);
    }
    x = zb_layernorm(&b, "ln_f", x, ZB_NORM_EPS);
    zb_pop(&b);
    zb_output(&b, tied_lm_head(&b, x, wte));
    return finish(&b);
}

/* ============================================================= ViT-B/16 */

static const transformer_dims vit_dims = {.seq = 197, .width = 768, .heads = 12, .mlp = 3072};
static const attention_style vit_attention = {.scale_query = true, .scale_op = WL_OP_DIV};
#define VIT_LN_EPS 1e-6

/* torch's nn.MultiheadAttention on x (self-attention): the packed
 * in_proj_weight / in_proj_bias (one MatMul + Add, 768 -> 2304), split
 * into q, k, v, attention, out_proj.  The batch-first transposes torch
 * adds around it move nothing at batch 1 and are left out. */
static int32_t vit_self_attention(zb *b, int32_t x)
{
    const transformer_dims *d = &vit_dims;
    const int64_t w_dims[2] = {d->width, 3 * d->width}, b_dims[1] = {3 * d->width};
    int32_t qkv = zb_matmul(b, x, zb_weight(b, "in_proj_weight", 2, w_dims));
    qkv = zb_add(b, qkv, zb_weight(b, "in_proj_bias", 1, b_dims));
    int32_t heads[3];
    split_qkv(b, qkv, d->width, heads);
    int32_t y = attention(b, heads, d, &vit_attention, -1);
    return zb_linear(b, "out_proj", y, d->width, true);
}

/* torchvision's EncoderBlock: x + attention(ln_1(x)), then
 * + mlp(ln_2(.)) with mlp = Linear "0", GELU "1", Linear "3". */
static int32_t vit_block(zb *b, int32_t input)
{
    int32_t x = zb_layernorm(b, "ln_1", input, VIT_LN_EPS);
    zb_push(b, "self_attention");
    x = vit_self_attention(b, x);
    zb_pop(b);
    x = zb_add(b, x, input);
    int32_t y = zb_layernorm(b, "ln_2", x, VIT_LN_EPS);
    zb_push(b, "mlp");
    y = zb_linear(b, "0", y, vit_dims.mlp, true);
    y = zb_as_module(b, "1", zb_gelu, y);
    y = zb_linear(b, "3", y, vit_dims.width, true);
    zb_pop(b);
    return zb_add(b, x, y);
}

/* class_token.expand(n, -1, -1) for the batch n of x [n, S, E]: Expand to
 * [n, 1, E], a shape computed from x as a dynamic-batch export does (Shape,
 * Slice, Concat; folded by inference), so that it follows wl_set_batch. */
static int32_t expand_to_batch(zb *b, int32_t token, int32_t x, int64_t width)
{
    const int64_t rest[2] = {1, width};
    int32_t parts[2];
    parts[0] = zb_slice(b, zb_unary(b, WL_OP_SHAPE, x), 0, 0, 1);
    parts[1] = zb_const_i64(b, 2, rest);
    int32_t in[2] = {token, zb_concat(b, 2, parts, 0)};
    return zb_op(b, WL_OP_EXPAND, NULL, 2, in, NULL);
}

/*
 * ViT-B/16 as torchvision 0.14 vit_b_16, 224x224: conv_proj 16x16/16 to
 * 768, flatten to 196 tokens, the class token concatenated in front (Expand
 * to the batch, then Concat), encoder.pos_embedding [1, 197, 768] added,
 * 12 encoder layers, encoder.ln, and heads.head 768 -> 1000 on the class
 * token.  86,567,656 parameters, 17,563,828,224 MACs (torchvision: 17.564
 * GFLOPS).
 */
as_code zoo_vit_b16(wl_graph *g, as_status *st)
{
    zb b;
    zb_init(&b, g, st);
    const transformer_dims *d = &vit_dims;
    const int64_t image[4] = {1, 3, 224, 224}, patches[3] = {1, d->width, d->seq - 1};
    static const int64_t to_tokens[3] = {0, 2, 1};
    const int64_t token_dims[3] = {1, 1, d->width}, seq_dims[3] = {1, d->seq, d->width};
    int32_t x =
        zb_conv2d(&b, "conv_proj", zb_input(&b, "input", 4, image), d->width, 16, 16, 0, 1, true);
    x = zb_transpose(&b, zb_reshape(&b, x, 3, patches), 3, to_tokens);
    int32_t cls[2] = {zb_weight(&b, "class_token", 3, token_dims), x};
    cls[0] = expand_to_batch(&b, cls[0], x, d->width);
    x = zb_concat(&b, 2, cls, 1);
    zb_push(&b, "encoder");
    x = zb_add(&b, x, zb_weight(&b, "pos_embedding", 3, seq_dims));
    zb_push(&b, "layers");
    for (int i = 0; i < 12; i++) {
        zb_push(&b, "encoder_layer_%d", i);
        x = vit_block(&b, x);
        zb_pop(&b);
    }
    zb_pop(&b);
    x = zb_layernorm(&b, "ln", x, VIT_LN_EPS);
    zb_pop(&b);
    zb_output(&b, zb_linear(&b, "heads.head", first_token(&b, x), 1000, true));
    return finish(&b);
}

/* ======================================================== EfficientNet */

/* A row of torchvision's inverted_residual_setting for EfficientNet
 * (before width and depth scaling). */
typedef struct mbconv_stage {
    int64_t expand_ratio, kernel, stride, in_ch, out_ch, layers;
} mbconv_stage;

static const mbconv_stage effnet_stages[] = {
    {1, 3, 1, 32, 16, 1},  {6, 3, 2, 16, 24, 2},   {6, 5, 2, 24, 40, 2},   {6, 3, 2, 40, 80, 3},
    {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4}, {6, 3, 1, 192, 320, 1},
};
#define EFFNET_N_STAGES ((int)(sizeof effnet_stages / sizeof effnet_stages[0]))

/* The compound scaling of B0..B7: (width, depth, resolution) and the BN
 * eps (B5..B7 use 1e-3; it changes no count). */
typedef struct effnet_variant {
    double width_mult, depth_mult;
    int64_t resolution;
    double bn_eps;
} effnet_variant;

static const effnet_variant effnet_variants[8] = {
    {1.0, 1.0, 224, 1e-5}, {1.0, 1.1, 240, 1e-5}, {1.1, 1.2, 288, 1e-5}, {1.2, 1.4, 300, 1e-5},
    {1.4, 1.8, 380, 1e-5}, {1.6, 2.2, 456, 1e-3}, {1.8, 2.6, 528, 1e-3}, {2.0, 3.1, 600, 1e-3},
};

/* torchvision's _make_divisible(v, 8): round to the nearest multiple of 8
 * (at least 8), and up once more if that lost over 10%. */
static int64_t make_divisible8(double v)
{
    int64_t r = (int64_t)(v + 4.0) / 8 * 8;
    if (r < 8)
        r = 8;
    if ((double)r < 0.9 * v)
        r += 8;
    return r;
}

/* torchvision's SqueezeExcitation as module `name` on x of ch channels:
 * avgpool, fc1 (1x1 conv to squeeze_ch), SiLU "activation", fc2 (back to
 * ch), Sigmoid "scale_activation", and the channel scale x * s. */
static int32_t squeeze_excitation(zb *b, const char *name, int32_t x, int64_t ch,
                                  int64_t squeeze_ch)
{
    zb_push(b, "%s", name);
    int32_t s = zb_as_module(b, "avgpool", zb_global_avgpool, x);
    s = zb_conv2d(b, "fc1", s, squeeze_ch, 1, 1, 0, 1, true);
    s = zb_as_module(b, "activation", zb_silu, s);
    s = zb_conv2d(b, "fc2", s, ch, 1, 1, 0, 1, true);
    s = zb_as_module(b, "scale_activation", zb_sigmoid, s);
    int32_t y = zb_mul(b, s, x);
    zb_pop(b);
    return y;
}

/*
 * One MBConv block (the current scope is "features.S.J"): module "block"
 * holds the 1x1 expansion (only when the ratio widens), the depthwise
 * kxk conv, squeeze-excitation (squeeze to max(1, in_ch / 4)) and the 1x1
 * projection without activation, numbered 0.. in that order; a residual
 * Add when the block keeps stride 1 and its channels.
 */
static int32_t mbconv(zb *b, int32_t input, int64_t in_ch, const mbconv_stage *cfg, int64_t out_ch,
                      int64_t stride, double eps)
{
    int64_t expanded = make_divisible8((double)(in_ch * cfg->expand_ratio));
    int64_t squeeze = in_ch / 4 > 1 ? in_ch / 4 : 1;
    int child = 0;
    char name[12];
    int32_t x = input;
    zb_push(b, "block");
    if (expanded != in_ch)
        x = zb_conv_norm_act(b, next_child(name, &child), x, expanded, 1, 1, 1, eps, zb_silu);
    x = zb_conv_norm_act(b, next_child(name, &child), x, expanded, cfg->kernel, stride, expanded,
                         eps, zb_silu);
    x = squeeze_excitation(b, next_child(name, &child), x, expanded, squeeze);
    x = zb_conv_norm_act(b, next_child(name, &child), x, out_ch, 1, 1, 1, eps, NULL);
    zb_pop(b);
    if (stride == 1 && in_ch == out_ch)
        x = zb_add(b, x, input);
    return x;
}

/*
 * EfficientNet-B<variant> as torchvision 0.14 builds it: features.0 a 3x3/2
 * stem, features.1..7 the seven MBConv stages (channels
 * make_divisible8(c * width), ceil(n * depth) blocks, the first of each
 * stage with the stage's stride), features.8 a 1x1 conv to 4x its input,
 * avgpool, flatten, classifier.1 Linear to 1000 (classifier.0 is Dropout).
 */
static as_code efficientnet(wl_graph *g, as_status *st, int variant)
{
    const effnet_variant *v = &effnet_variants[variant];
    zb b;
    zb_init(&b, g, st);
    const int64_t image[4] = {1, 3, v->resolution, v->resolution};
    int64_t ch = make_divisible8((double)effnet_stages[0].in_ch * v->width_mult);
    int32_t x = zb_input(&b, "input", 4, image);
    zb_push(&b, "features");
    x = zb_conv_norm_act(&b, "0", x, ch, 3, 2, 1, v->bn_eps, zb_silu);
    for (int s = 0; s < EFFNET_N_STAGES; s++) {
        const mbconv_stage *cfg = &effnet_stages[s];
        int64_t out_ch = make_divisible8((double)cfg->out_ch * v->width_mult);
        int64_t layers = (int64_t)ceil((double)cfg->layers * v->depth_mult);
        zb_push(&b, "%d", s + 1);
        for (int64_t j = 0; j < layers; j++) {
            zb_push(&b, "%lld", (long long)j);
            x = mbconv(&b, x, ch, cfg, out_ch, j == 0 ? cfg->stride : 1, v->bn_eps);
            zb_pop(&b);
            ch = out_ch;
        }
        zb_pop(&b);
    }
    char last[8];
    snprintf(last, sizeof last, "%d", EFFNET_N_STAGES + 1);
    x = zb_conv_norm_act(&b, last, x, 4 * ch, 1, 1, 1, v->bn_eps, zb_silu);
    zb_pop(&b);
    x = zb_flatten(&b, zb_as_module(&b, "avgpool", zb_global_avgpool, x), 1);
    zb_output(&b, zb_linear(&b, "classifier.1", x, 1000, true));
    return finish(&b);
}

/* The zoo's entry points zoo_efficientnet_b0 .. _b7. */
#define EFFICIENTNET_ENTRY(n)                                                                      \
    as_code zoo_efficientnet_b##n(wl_graph *g, as_status *st)                                      \
    {                                                                                              \
        return efficientnet(g, st, n);                                                             \
    }
EFFICIENTNET_ENTRY(0)
EFFICIENTNET_ENTRY(1)
EFFICIENTNET_ENTRY(2)
EFFICIENTNET_ENTRY(3)
EFFICIENTNET_ENTRY(4)
EFFICIENTNET_ENTRY(5)
EFFICIENTNET_ENTRY(6)
EFFICIENTNET_ENTRY(7)

/* ================================================================ UNet */

/* The UNet reference's double conv, the current scope: (3x3 conv without
 * bias "0"/"3", BatchNorm "1"/"4", ReLU "2"/"5") twice. */
static int32_t double_conv(zb *b, int32_t x, int64_t out_ch)
{
    int child = 0;
    char name[12];
    for (int i = 0; i < 2; i++) {
        x = zb_conv2d(b, next_child(name, &child), x, out_ch, 3, 1, 1, 1, false);
        x = zb_batchnorm(b, next_child(name, &child), x, ZB_NORM_EPS);
        x = zb_as_module(b, next_child(name, &child), zb_relu, x);
    }
    return x;
}

#define UNET_LEVELS 4

/* nn.MaxPool2d(2). */
static int32_t maxpool_2x2(zb *b, int32_t x)
{
    return zb_maxpool(b, x, 2, 2, 0, false);
}

/*
 * UNet: the plain torch.nn definition behind tests/data/models/unet.onnx
 * (tests/data/reference/unet.txt), input [1, 3, 256, 256], 2 classes.  inc = double conv
 * to 64; downs.i = MaxPool 2 ("0") + double conv ("1") doubling the
 * channels to 1024; ups.i = ConvTranspose 2x2/2 with bias halving them,
 * concatenated after the skip ([skip, up]) and up_convs.i = double conv;
 * outc = 1x1 conv with bias.  31,037,698 parameters, 48,171,581,440 MACs.
 */
as_code zoo_unet(wl_graph *g, as_status *st)
{
    zb b;
    zb_init(&b, g, st);
    static const int64_t image[4] = {1, 3, 256, 256};
    int32_t skip[UNET_LEVELS];
    int64_t ch = 64;
    int32_t x = zb_input(&b, "input", 4, image);
    zb_push(&b, "inc");
    x = double_conv(&b, x, ch);
    zb_pop(&b);
    for (int i = 0; i < UNET_LEVELS; i++) {
        skip[i] = x;
        ch *= 2;
        push_child(&b, "downs", i);
        x = zb_as_module(&b, "0", maxpool_2x2, x);
        zb_push(&b, "1");
        x = double_conv(&b, x, ch);
        zb_pop(&b);
        pop_child(&b);
    }
    for (int i = 0; i < UNET_LEVELS; i++) {
        char name[16];
        ch /= 2;
        snprintf(name, sizeof name, "ups.%d", i);
        int32_t parts[2] = {skip[UNET_LEVELS - 1 - i], -1};
        parts[1] = zb_conv_transpose2d(&b, name, x, ch, 2, 2, 0, 0, true);
        x = zb_concat(&b, 2, parts, 1);
        push_child(&b, "up_convs", i);
        x = double_conv(&b, x, ch);
        pop_child(&b);
    }
    zb_output(&b, zb_conv2d(&b, "outc", x, 2, 1, 1, 0, 1, true));
    return finish(&b);
}

/* ====================================================== SRGAN generator */

#define SRGAN_RES_BLOCKS 16
#define SRGAN_LR_SIZE 96

/* PReLU with one slope, as module `name`. */
static int32_t prelu1(zb *b, const char *name, int32_t x)
{
    return zb_prelu(b, name, x, 1);
}

/* nn.PixelShuffle(2): DepthToSpace, CRD. */
static int32_t pixel_shuffle2(zb *b, int32_t x)
{
    return zb_depth_to_space(b, x, 2);
}

/* A residual block "res_blocks.i": conv1 3x3 - bn1 - prelu - conv2 3x3 -
 * bn2, plus the input. */
static int32_t srgan_residual(zb *b, int32_t input)
{
    int32_t x = zb_conv2d(b, "conv1", input, 64, 3, 1, 1, 1, true);
    x = prelu1(b, "prelu", zb_batchnorm(b, "bn1", x, ZB_NORM_EPS));
    x = zb_conv2d(b, "conv2", x, 64, 3, 1, 1, 1, true);
    return zb_add(b, zb_batchnorm(b, "bn2", x, ZB_NORM_EPS), input);
}

/*
 * The SRGAN generator (SRResNet) of Ledig et al. 2017 for 4x upscaling, on
 * a low-resolution input [1, 3, 96, 96] (the paper's training crop):
 * head 9x9 conv 64 + PReLU; 16 residual blocks; body_tail 3x3 conv + BN
 * plus the head's output (long skip); two upsample blocks (3x3 conv 64 ->
 * 256, PixelShuffle(2) as DepthToSpace CRD, PReLU); tail 9x9 conv to 3;
 * Tanh.  Convs have biases; every PReLU has one slope.  Output
 * [1, 3, 384, 384].
 *
 * Parameters: head 3*64*81+64 + 1 = 15,617; residual block 2*(64*64*9+64)
 * + 2*128 + 1 = 74,113, x16 = 1,185,808; body_tail 36,928 + 128 = 37,056;
 * upsample 64*256*9+256 + 1 = 147,713, x2 = 295,426; tail 64*3*81+3 =
 * 15,555; total 1,549,462.
 * MACs: head 96^2*64*3*81 = 143,327,232; 33 3x3 64->64 convs at 96^2 of
 * 339,738,624 each = 11,211,374,592; upsample convs 96^2*256*64*9 =
 * 1,358,954,496 and 192^2*256*64*9 = 5,435,817,984; tail 384^2*3*64*81 =
 * 2,293,235,712; total 20,442,710,016.
 */
as_code zoo_srgan_generator(wl_graph *g, as_status *st)
{
    zb b;
    zb_init(&b, g, st);
    static const int64_t image[4] = {1, 3, SRGAN_LR_SIZE, SRGAN_LR_SIZE};
    int32_t x = zb_input(&b, "input", 4, image);
    x = zb_conv2d(&b, "head.0", x, 64, 9, 1, 4, 1, true);
    int32_t head = prelu1(&b, "head.1", x);
    x = head;
    for (int i = 0; i < SRGAN_RES_BLOCKS; i++) {
        push_child(&b, "res_blocks", i);
        x = srgan_residual(&b, x);
        pop_child(&b);
    }
    x = zb_conv2d(&b, "body_tail.0", x, 64, 3, 1, 1, 1, true);
    x = zb_add(&b, zb_batchnorm(&b, "body_tail.1", x, ZB_NORM_EPS), head);
    for (int i = 0; i < 2; i++) {
        push_child(&b, "upsample", i);
        x = zb_conv2d(&b, "0", x, 256, 3, 1, 1, 1, true);
        x = zb_as_module(&b, "1", pixel_shuffle2, x);
        x = prelu1(&b, "2", x);
        pop_child(&b);
    }
    x = zb_conv2d(&b, "tail", x, 3, 9, 1, 4, 1, true);
    zb_output(&b, zb_as_module(&b, "tanh", zb_tanh, x));
    return finish(&b);
}
