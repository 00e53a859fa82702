#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1 MCORE_DPA_USE_SDPA=1
torchrun --nproc-per-node 8 pretrain_gpt.py \
    --enable-hyper-connections --cuda-graph-scope attn \
    --num-layers=24 "--micro-batch-size" 2 \
    --yaml-cfg cfg.yaml
