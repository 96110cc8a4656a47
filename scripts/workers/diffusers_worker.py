#!/usr/bin/env python3
"""A visalign worker (`--backend worker`) over Hugging Face diffusers' AutoPipelineForText2Image.

The model loads once; then each request line on stdin becomes one image (docs/backends.md,
"Worker protocol"):

    visalign -> {"id", "prompt", "seed", "width", "height", "out", "params"}
    worker   -> {"id", "ok": true}   or   {"id", "ok": false, "error", "retryable"[, "refused": true]}

after a first line {"ready": true, "model": ..., "device": ..., "dtype": ...}. Only protocol lines go
to stdout; everything else (diffusers' progress bars, warnings) goes to stderr, which visalign keeps
in <store>/tmp/worker-<i>.log. Each request gets its own seeded torch.Generator, so an image depends
only on (prompt, seed, size, params), not on what the worker made before. "params" are keyword
arguments of the pipeline call (num_inference_steps, guidance_scale, negative_prompt, ...).

Tested models (their recommended settings as --param):
    black-forest-labs/FLUX.1-dev            --dtype bfloat16  --param num_inference_steps=28 --param guidance_scale=3.5
    stabilityai/stable-diffusion-xl-base-1.0 --dtype float16  --param num_inference_steps=30
    stabilityai/stable-diffusion-3.5-large  --dtype bfloat16  --param num_inference_steps=28 --param guidance_scale=3.5
    Qwen/Qwen-Image                         --dtype bfloat16  --param num_inference_steps=50 --param true_cfg_scale=4.0
    Efficient-Large-Model/Sana_1600M_1024px_diffusers --dtype bfloat16 --param num_inference_steps=20

    visalign violin generate --dataset violin-demo --run flux-dev --backend worker --gpus 0,1 --size 1024x1024 \
        --cmd 'python3 scripts/workers/diffusers_worker.py --model black-forest-labs/FLUX.1-dev --dtype bfloat16'

The seam: the pipeline is built by `load_pipeline(model, device, dtype)`, which returns a callable
`generate(prompt, seed, width, height, params) -> image` (an object with `.save(path)`, e.g. a PIL
image; or a dict {"refused": reason} when the pipeline's safety checker withheld it). Setting the
environment variable VISALIGN_PIPELINE_FACTORY=module:function (the module found on sys.path or
as a file path) replaces load_pipeline by that function; visalign's tests use it to run this
worker's protocol layer with a fake pipeline, since diffusers is not installed there.
"""

import argparse
import importlib
import importlib.util
import json
import os
import sys
import traceback

# Exceptions that say the request may succeed when asked again (e.g. out of GPU memory for now).
RETRYABLE_NAMES = ("OutOfMemoryError", "CUDAError", "TimeoutError", "ConnectionError")


def load_pipeline(model, device, dtype):
    """The real pipeline: diffusers' AutoPipelineForText2Image on `device`."""
    import torch
    from diffusers import AutoPipelineForText2Image

    torch_dtype = getattr(torch, dtype) if dtype != "auto" else "auto"
    pipe = AutoPipelineForText2Image.from_pretrained(model, torch_dtype=torch_dtype).to(device)
    pipe.set_progress_bar_config(file=sys.stderr)

    def generate(prompt, seed, width, height, params):
        kwargs = dict(params)
        if width is not None:
            kwargs["width"] = width
        if height is not None:
            kwargs["height"] = height
        if seed is not None:
            kwargs["generator"] = torch.Generator(device=device).manual_seed(int(seed))
        result = pipe(prompt=prompt, num_images_per_prompt=1, **kwargs)
        nsfw = getattr(result, "nsfw_content_detected", None)
        if nsfw and nsfw[0]:
            return {"refused": "the pipeline's safety checker flagged the image (nsfw_content_detected)"}
        return result.images[0]

    return generate


def pipeline_factory():
    """load_pipeline, or the function VISALIGN_PIPELINE_FACTORY names (module:function)."""
    spec = os.environ.get("VISALIGN_PIPELINE_FACTORY", "")
    if not spec:
        return load_pipeline
    module_name, _, function = spec.rpartition(":")
    if not module_name or not function:
        raise SystemExit(f"VISALIGN_PIPELINE_FACTORY={spec!r}: expected module:function")
    if module_name.endswith(".py") or os.sep in module_name:
        loader = importlib.util.spec_from_file_location("visalign_pipeline_factory", module_name)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, function)


def answer(out, line):
    out.write(json.dumps(line) + "\n")
    out.flush()


def serve(generate, stdin, out, model, device, dtype):
    """The protocol loop: one answer line per request line, until stdin closes."""
    answer(out, {"ready": True, "model": model, "device": device, "dtype": dtype,
                 "worker_index": os.environ.get("VISALIGN_WORKER_INDEX"),
                 "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")})
    for raw in stdin:
        if not raw.strip():
            continue
        try:
            request = json.loads(raw)
            request_id = request["id"]
        except (ValueError, KeyError, TypeError) as e:
            answer(out, {"id": None, "ok": False, "error": f"unreadable request: {e}", "retryable": False})
            continue
        try:
            image = generate(request["prompt"], request.get("seed"), request.get("width"), request.get("height"),
                             request.get("params") or {})
            if isinstance(image, dict) and "refused" in image:
                answer(out, {"id": request_id, "ok": False, "refused": True, "error": str(image["refused"]),
                             "retryable": False})
                continue
            image.save(request["out"], format="PNG")
            answer(out, {"id": request_id, "ok": True})
        except Exception as e:  # one image failed; the worker goes on
            traceback.print_exc(file=sys.stderr)
            retryable = type(e).__name__ in RETRYABLE_NAMES or "out of memory" in str(e).lower()
            answer(out, {"id": request_id, "ok": False, "error": f"{type(e).__name__}: {e}", "retryable": retryable})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="Hugging Face model id or local folder")
    parser.add_argument("--device", default="cuda", help="torch device (CUDA_VISIBLE_DEVICES picks the GPU)")
    parser.add_argument("--dtype", default="bfloat16", help="torch dtype: bfloat16, float16, float32 or auto")
    args = parser.parse_args(argv)
    # Protocol lines only on stdout: anything a library prints goes to stderr instead.
    protocol = sys.stdout
    sys.stdout = sys.stderr
    generate = pipeline_factory()(args.model, args.device, args.dtype)
    serve(generate, sys.stdin, protocol, args.model, args.device, args.dtype)


if __name__ == "__main__":
    main()
