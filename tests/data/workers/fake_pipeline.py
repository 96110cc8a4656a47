"""A fake pipeline for scripts/workers/diffusers_worker.py (its VISALIGN_PIPELINE_FACTORY seam), so
the worker's protocol layer is tested without diffusers: each image is the reference server's
answer for the prompt (VISALIGN_FAKE_URL), which is the prompt's correct image; without that
variable (the documentation's examples) a mid-grey PNG. Switches, for the failure tests
(environment variables):
  VISALIGN_FAKE_LOG         append "start <index> <CUDA_VISIBLE_DEVICES>", "image <index>", "exit <index>"
  VISALIGN_FAKE_CRASH_ONCE  a marker file: the first image of all dies (os._exit) and creates it
  VISALIGN_FAKE_CRASH_ALWAYS  every image dies
  VISALIGN_FAKE_GARBAGE     write this line to the real stdout before every answer
  VISALIGN_FAKE_SLOW_START  seconds to sleep while "loading"
  VISALIGN_FAKE_REFUSE      prompts containing it are refused as a safety checker refuses them
"""

import atexit
import base64
import json
import os
import struct
import time
import urllib.request
import zlib


def log(event):
    path = os.environ.get("VISALIGN_FAKE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{event} {os.environ.get('VISALIGN_WORKER_INDEX')} {os.environ.get('CUDA_VISIBLE_DEVICES', '-')}\n")


class Png:
    def __init__(self, data):
        self.data = data

    def save(self, path, format=None):
        with open(path, "wb") as f:
            f.write(self.data)


def grey_png(width, height):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * (3 * width) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def load(model, device, dtype):
    time.sleep(float(os.environ.get("VISALIGN_FAKE_SLOW_START", "0")))
    url = os.environ.get("VISALIGN_FAKE_URL")
    log("start")
    atexit.register(log, "exit")

    def generate(prompt, seed, width, height, params):
        if os.environ.get("VISALIGN_FAKE_CRASH_ALWAYS"):
            os._exit(3)
        marker = os.environ.get("VISALIGN_FAKE_CRASH_ONCE")
        if marker and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(3)
        garbage = os.environ.get("VISALIGN_FAKE_GARBAGE")
        if garbage:
            os.write(1, (garbage + "\n").encode())
        refuse = os.environ.get("VISALIGN_FAKE_REFUSE")
        if refuse and refuse in prompt:
            return {"refused": "nsfw_content_detected"}
        if not url:
            return Png(grey_png(width or 64, height or 64))
        body = {"prompt": prompt}
        if width and height:
            body["size"] = f"{width}x{height}"
        req = urllib.request.Request(url + "/v1/images/generations", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            answer = json.load(r)
        log("image")
        return Png(base64.b64decode(answer["data"][0]["b64_json"]))

    return generate
