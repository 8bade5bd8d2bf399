#!/usr/bin/env python3
"""Writes registry/data/layouts.csv: what the bulk registry data lacks of an architecture (the
expert layout of a mixture of experts, latent, sliding-window and linear attention), keyed by
the shape the registry rows carry (model_type, layers, hidden size, FFN size, vocabulary),
read from published config.json files.

Source of the config.json files: NVIDIA's ai-dynamo/aiconfigurator repository, which ships the
Hugging Face config.json of the models it plans for (fetched into a local mirror; pass its git
directory). GLM-4.5-Air's layout is Zhipu's own slime training recipe (no config.json for it in
that repository); DeepSeek-V2's and DeepSeek-V2-Lite's are DeepSeek's inference configs. Reference parameter counts are the registry's own rows (hf_models.csv).

Usage: scripts/layouts.py <aiconfigurator git dir> > registry/data/layouts.csv
"""
import csv
import json
import subprocess
import sys

AIC = "ai-dynamo/aiconfigurator"
NEW = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
NEW_DIR = "aic-core/src/aiconfigurator_core/model_configs"
OLD_DIR = "src/aiconfigurator/model_configs"

# (registry model_type, reference registry id for the parameter count, commit, directory,
#  config file stem). The model_type is the registry's, which for multimodal re-packs differs
#  from the text config's (qwen3_vl_moe vs qwen3_vl_moe_text).
CONFIGS = [
    ("qwen3_moe", "Qwen/Qwen3-30B-A3B", NEW, NEW_DIR, "Qwen--Qwen3-30B-A3B"),
    ("qwen3_moe", "Qwen/Qwen3-235B-A22B", NEW, NEW_DIR, "Qwen--Qwen3-235B-A22B"),
    ("qwen3_moe", "Qwen/Qwen3-Coder-480B-A35B-Instruct", NEW, NEW_DIR,
     "Qwen--Qwen3-Coder-480B-A35B-Instruct"),
    ("qwen3_vl_moe", "Qwen/Qwen3-VL-30B-A3B-Instruct", NEW, NEW_DIR,
     "Qwen--Qwen3-VL-30B-A3B-Instruct"),
    ("qwen3_vl_moe", "Qwen/Qwen3-VL-235B-A22B-Instruct", NEW, NEW_DIR,
     "Qwen--Qwen3-VL-235B-A22B-Instruct"),
    ("qwen3_5_moe", "Qwen/Qwen3.5-35B-A3B", NEW, NEW_DIR, "Qwen--Qwen3.5-35B-A3B"),
    ("qwen3_5_moe_text", "Qwen/Qwen3.5-35B-A3B", NEW, NEW_DIR, "Qwen--Qwen3.5-35B-A3B"),
    ("qwen3_5_moe", "Qwen/Qwen3.5-122B-A10B", NEW, NEW_DIR, "Qwen--Qwen3.5-122B-A10B"),
    ("qwen3_5_moe", "Qwen/Qwen3.5-397B-A17B", NEW, NEW_DIR, "Qwen--Qwen3.5-397B-A17B"),
    ("qwen3_next", "Qwen/Qwen3-Next-80B-A3B-Instruct",
     "1b7cfb10a6fa06880ad7911db5ddb949882ff76a", OLD_DIR, "Qwen--Qwen3-Next-80B-A3B-Thinking"),
    ("gpt_oss", "openai/gpt-oss-20b", NEW, NEW_DIR, "openai--gpt-oss-20b"),
    ("gpt_oss", "openai/gpt-oss-120b", NEW, NEW_DIR, "openai--gpt-oss-120b"),
    ("deepseek_v3", "deepseek-ai/DeepSeek-V3", NEW, NEW_DIR, "deepseek-ai--DeepSeek-V3"),
    ("deepseek_v32", "deepseek-ai/DeepSeek-V3.2", NEW, NEW_DIR, "deepseek-ai--DeepSeek-V3.2"),
    ("kimi_k2", "moonshotai/Kimi-K2-Instruct", NEW, NEW_DIR, "moonshotai--Kimi-K2-Instruct"),
    ("kimi_k25", "moonshotai/Kimi-K2.5", NEW, NEW_DIR, "moonshotai--Kimi-K2.5"),
    # NVIDIA's NVFP4 re-packs of Kimi K2.x declare model_type deepseek_v3.
    ("deepseek_v3", "moonshotai/Kimi-K2-Instruct", NEW, NEW_DIR, "nvidia--Kimi-K2.5-NVFP4"),
    ("glm_moe_dsa", "zai-org/GLM-5", NEW, NEW_DIR, "zai-org--GLM-5"),
    ("glm4_moe", "zai-org/GLM-4.7", "19d098add98ab8ba2366c94795e9e886cdcc915c", OLD_DIR,
     "zai-org--GLM-4.7-FP8"),
    ("glm4_moe_lite", "zai-org/GLM-4.7-Flash", "19d098add98ab8ba2366c94795e9e886cdcc915c",
     OLD_DIR, "zai-org--GLM-4.7-Flash"),
    ("minimax_m2", "MiniMaxAI/MiniMax-M2.5", NEW, NEW_DIR, "MiniMaxAI--MiniMax-M2.5"),
    ("mixtral", "RedHatAI/Mixtral-8x7B-Instruct-v0.1", NEW, NEW_DIR,
     "mistralai--Mixtral-8x7B-v0.1"),
    ("mixtral", "MaziyarPanahi/Mixtral-8x22B-Instruct-v0.1-AWQ", NEW, NEW_DIR,
     "mistralai--Mixtral-8x22B-v0.1"),
    ("llama4", "unsloth/Llama-4-Scout-17B-16E-Instruct", NEW, NEW_DIR,
     "meta-llama--Llama-4-Scout-17B-16E-Instruct"),
    # StepFun Step-3.7-Flash: 288 experts, 8 KV heads (the bulk row copies the 64 attention
    # heads), a 512-token window on 33 of 45 layers.
    ("step3p7", "stepfun-ai/Step-3.7-Flash", NEW, NEW_DIR, "stepfun-ai--Step-3.7-Flash"),
    # Dense layouts: Qwen3.5/3.6/3.8-27B's Gated DeltaNet layers.
    ("qwen3_5", "Qwen/Qwen3.5-27B", NEW, NEW_DIR, "Qwen--Qwen3.5-27B"),
    ("qwen3_5_text", "Qwen/Qwen3.5-27B", NEW, NEW_DIR, "Qwen--Qwen3.5-27B"),
]

# GLM-4.5-Air: THUDM/slime scripts/models/glm4.5-106B-A12B.sh (Zhipu's RL framework; Megatron
# arguments): N_DENSE_LAYERS=1, N_MOE_LAYERS=45, --hidden-size 4096, --ffn-hidden-size 10944,
# --num-attention-heads 96, --num-query-groups 8, --kv-channels 128, --moe-ffn-hidden-size
# 1408, --moe-shared-expert-intermediate-size 1408, --num-experts 128, --moe-router-topk 8,
# --vocab-size 151552, untied embeddings.
GLM45_AIR = dict(model_type="glm4_moe", hidden_size=4096, num_hidden_layers=46,
                 vocab_size=151552, num_attention_heads=96, num_key_value_heads=8, head_dim=128,
                 intermediate_size=10944, moe_intermediate_size=1408, n_routed_experts=128,
                 n_shared_experts=1, first_k_dense_replace=1)
SLIME = ("https://github.com/THUDM/slime/blob/0b0c277d5b4cc66efc3b6db269e2e5184e8f3b1e/"
         "scripts/models/glm4.5-106B-A12B.sh")

# DeepSeek-V2 (236B) and DeepSeek-V2-Lite (16B): DeepSeek's own inference configs in the
# deepseek-ai/DeepSeek-V3 repository (inference/configs/config_236B.json, config_16B.json),
# written with that code's keys (dim, inter_dim, moe_inter_dim, n_layers, n_dense_layers,
# n_heads, n_routed_experts, n_shared_experts, n_activated_experts, q_lora_rank 0 = none,
# kv_lora_rank, qk_nope/rope_head_dim, v_head_dim); its model.py keeps the embedding and the
# output head apart (untied). Transcribed here with the Hugging Face keys the functions below
# read.
DEEPSEEK_V3_REPO = "https://github.com/deepseek-ai/DeepSeek-V3/blob/9b4e9788e4a3a731f7567338ed15d3ec549ce03b"
DEEPSEEK_V2 = dict(model_type="deepseek_v2", hidden_size=5120, num_hidden_layers=60,
                   vocab_size=102400, num_attention_heads=128, intermediate_size=12288,
                   moe_intermediate_size=1536, n_routed_experts=160, n_shared_experts=2,
                   num_experts_per_tok=6, first_k_dense_replace=1, q_lora_rank=1536,
                   kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                   v_head_dim=128)
DEEPSEEK_V2_LITE = dict(model_type="deepseek_v2", hidden_size=2048, num_hidden_layers=27,
                        vocab_size=102400, num_attention_heads=16, intermediate_size=10944,
                        moe_intermediate_size=1408, n_routed_experts=64, n_shared_experts=2,
                        num_experts_per_tok=6, first_k_dense_replace=1, q_lora_rank=None,
                        kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                        v_head_dim=128)

COLUMNS = ["architecture", "layers", "hidden", "intermediate", "vocab", "experts",
           "experts_active", "moe_layers", "params", "active_params", "kv_lora_rank",
           "qk_rope_dim", "window", "local_layers", "linear_layers", "linear_state", "kv_heads",
           "reference", "source"]


def linear_layout(t):
    """Gated DeltaNet layers (Qwen3-Next, Qwen3.5): how many, and the bytes of one layer's
    state per sequence: the recurrent state (value heads x key dim x value dim, in
    `mamba_ssm_dtype`, float32 where the config says so, else 16 bit) and the convolution
    state ((kernel - 1) x (2 x key heads x key dim + value heads x value dim), 16 bit)."""
    types = t.get("layer_types") or []
    layers = t["num_hidden_layers"]
    interval = t.get("full_attention_interval")
    if types:
        linear = sum(1 for x in types if x == "linear_attention")
    elif interval and t.get("linear_num_value_heads"):
        linear = sum(1 for i in range(layers) if (i + 1) % interval != 0)
    else:
        return "", ""
    if not linear:
        return "", ""
    kh, kd = t["linear_num_key_heads"], t["linear_key_head_dim"]
    vh, vd = t["linear_num_value_heads"], t["linear_value_head_dim"]
    ssm = 4 if t.get("mamba_ssm_dtype") == "float32" else 2
    conv = (t.get("linear_conv_kernel_dim", 4) - 1) * (2 * kh * kd + vh * vd) * 2
    return linear, vh * kd * vd * ssm + conv


def attention_params(t, layer, layers):
    """Weights of one layer's attention (biases left out: under 0.1 %)."""
    h = t["hidden_size"]
    heads = t["num_attention_heads"]
    types = t.get("layer_types") or []
    interval = t.get("full_attention_interval")
    linear = (layer < len(types) and types[layer] == "linear_attention") or (
        not types and interval and (layer + 1) % interval != 0)
    if linear:
        # Gated DeltaNet (Qwen3-Next / Qwen3.5): q, k, v, z, b, a projections and the output.
        kd = t["linear_num_key_heads"] * t["linear_key_head_dim"]
        vd = t["linear_num_value_heads"] * t["linear_value_head_dim"]
        return h * (2 * kd + 2 * vd + 2 * t["linear_num_value_heads"]) + vd * h
    if t.get("kv_lora_rank"):
        nope, rope, v = t["qk_nope_head_dim"], t["qk_rope_head_dim"], t["v_head_dim"]
        q_lora = t.get("q_lora_rank")
        q = h * q_lora + q_lora * heads * (nope + rope) if q_lora else h * heads * (nope + rope)
        kv = h * (t["kv_lora_rank"] + rope) + t["kv_lora_rank"] * heads * (nope + v)
        return q + kv + heads * v * h
    hd = t.get("head_dim") or h // heads
    kv = t.get("num_key_value_heads") or heads
    gate = 2 if t.get("attn_output_gate") else 1
    return h * heads * hd * gate + 2 * h * kv * hd + heads * hd * h


def active_params(t, experts_active, moe_layer_set):
    """Parameters one token reads in the main model (multi-token-prediction layers, which
    only speculative decoding runs, left out): embeddings and output layer, attention, dense
    MLPs, and per MoE layer the router, the shared experts and the experts it picks."""
    h, layers, vocab = t["hidden_size"], t["num_hidden_layers"], t["vocab_size"]
    tied = t.get("tie_word_embeddings", False)
    total = vocab * h * (1 if tied else 2)
    inter = t.get("moe_intermediate_size") or t["intermediate_size"]
    dense = t.get("intermediate_size_mlp") or t.get("intermediate_size") or 0
    experts = t.get("num_experts") or t.get("num_local_experts") or t.get("n_routed_experts")
    shared = (t.get("shared_expert_intermediate_size") or 0) + (
        t.get("n_shared_experts") or 0) * inter
    if t.get("model_type", "").startswith("llama4"):
        shared = inter  # one shared expert of the routed experts' size
    # Norms: two per layer, Qwen3's per-head q/k norms, the final norm.
    hd = t.get("head_dim") or h // t["num_attention_heads"]
    qk_norm = t.get("use_qk_norm") or t.get("model_type", "").startswith("qwen3")
    total += layers * (2 * h + (2 * hd if qk_norm else 0)) + h
    for layer in range(layers):
        total += attention_params(t, layer, layers)
        if layer in moe_layer_set:
            total += experts * h + 3 * h * (experts_active * inter + shared)
        else:
            total += 3 * h * dense
    return total


def moe_layers(t, layers):
    """The indices of the layers with routed experts."""
    freq = t.get("moe_layer_freq")
    if isinstance(freq, list):
        return {i for i, f in enumerate(freq) if f}
    first = t.get("first_k_dense_replace") or 0
    step = t.get("interleave_moe_layer_step") or t.get("decoder_sparse_step") or 1
    only = set(t.get("mlp_only_layers") or [])
    freq = freq or 1
    return {i for i in range(layers)
            if i >= first and i % freq == 0 and (i + 1) % step == 0 and i not in only}


def row_of(git, arch, ref, commit, directory, stem, registry):
    path = f"{directory}/{stem}_config.json"
    c = json.loads(subprocess.check_output(["git", "-C", git, "show", f"{commit}:{path}"]))
    t = c.get("text_config", c)
    layers = t["num_hidden_layers"]
    experts = t.get("num_experts") or t.get("num_local_experts") or t.get("n_routed_experts")
    inter = (t.get("moe_intermediate_size") or t["intermediate_size"]) if experts \
        else t["intermediate_size"]
    window = local = ""
    types = t.get("layer_types")
    if t.get("sliding_window") and types:
        local = sum(1 for x in types if x == "sliding_attention")
        window = t["sliding_window"] if local else ""
        local = local or ""
    sparse = moe_layers(t, layers) if experts else set()
    linear, state = linear_layout(t)
    return dict(
        linear_layers=linear, linear_state=state,
        architecture=arch, layers=layers, hidden=t["hidden_size"], intermediate=inter,
        vocab=t["vocab_size"], experts=experts or "",
        experts_active=t["num_experts_per_tok"] if experts else "",
        moe_layers=len(sparse) if experts else "", params=registry[ref]["parameters_raw"],
        active_params=active_params(t, t.get("num_experts_per_tok", 0), sparse),
        kv_lora_rank=t.get("kv_lora_rank") or "", qk_rope_dim=t.get("qk_rope_head_dim") or "",
        window=window, local_layers=local, reference=ref,
        kv_heads="" if t.get("kv_lora_rank") else (t.get("num_key_value_heads") or ""),
        source=f"https://github.com/{AIC}/blob/{commit}/{path}",
    )


def deepseek_v2_row(t, ref, config):
    layers = t["num_hidden_layers"]
    sparse = moe_layers(t, layers)
    return dict(architecture=t["model_type"], layers=layers, hidden=t["hidden_size"],
                intermediate=t["moe_intermediate_size"], vocab=t["vocab_size"],
                experts=t["n_routed_experts"], experts_active=t["num_experts_per_tok"],
                moe_layers=len(sparse),
                active_params=active_params(t, t["num_experts_per_tok"], sparse),
                kv_lora_rank=t["kv_lora_rank"], qk_rope_dim=t["qk_rope_head_dim"],
                reference=ref, source=f"{DEEPSEEK_V3_REPO}/inference/configs/{config}")


def extra_rows():
    return [
        dict(architecture="glm4_moe", layers=46, hidden=4096, intermediate=1408,
             vocab=151552, experts=128, experts_active=8, moe_layers=45,
             active_params=active_params(GLM45_AIR, 8, set(range(1, 46))), kv_heads=8,
             reference="zai-org/GLM-4.5-Air", source=SLIME),
        deepseek_v2_row(DEEPSEEK_V2, "deepseek-ai/DeepSeek-V2", "config_236B.json"),
        deepseek_v2_row(DEEPSEEK_V2_LITE, "deepseek-ai/DeepSeek-V2-Lite", "config_16B.json"),
    ]


def main():
    git = sys.argv[1]
    registry = {r["hf_id"]: r for r in csv.DictReader(open("registry/data/hf_models.csv"))}
    rows = [row_of(git, *spec, registry) for spec in CONFIGS]
    for extra in extra_rows():
        rows.append(dict(dict(kv_lora_rank="", qk_rope_dim="", window="", local_layers="",
                              linear_layers="", linear_state="", kv_heads=""),
                         **extra, params=registry[extra["reference"]]["parameters_raw"]))
    w = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)


main()
