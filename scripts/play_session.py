#!/usr/bin/env python3
"""Plays one scripted Hues and Cues session against a running `visalign serve` through its JSON API
(what the page does: consent, profile, the colour-vision plates, every item, completion), using only
the standard library. For `make demo` (scripts/demo.sh) and for trying a study's settings.

    scripts/play_session.py http://127.0.0.1:PORT [--seed N]

Answers are drawn at random (seeded); the attention check is answered as instructed. Prints one
line per item and the completion code."""
import argparse
import http.cookiejar
import json
import random
import sys
import urllib.error
import urllib.request


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def call(path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(args.url + path, data=data, headers={"Content-Type": "application/json"})
        try:
            with opener.open(req) as res:
                return json.load(res)
        except urllib.error.HTTPError as e:
            sys.exit(f"play_session: {path}: HTTP {e.code}: {e.read().decode()}")

    study = call("/api/study")
    call("/api/session", {"consent": True, "params": {"PROLIFIC_PID": "demo-participant", "STUDY_ID": "demo-study"}})
    profile = call("/api/profile", {"language": "en", "gender": "prefer-not-to-say", "age_range": "30-39",
                                    "colorblind": "no", "metadata": {"user_agent": "scripts/play_session.py"}})
    if profile["cvd_screen"]:
        plates = call("/api/screen")["plates"]
        call("/api/screen", {"answers": [None] * len(plates)})
    item = call("/api/next")
    while not item["done"]:
        if item["kind"] == "attention":
            cell = item["cell"]
            label = "attention check"
        else:
            cell = f"{'ABCDEFGHIJKLMNOP'[rng.randrange(16)]}{rng.randrange(1, 31)}"
            label = f"{item['word']} ({item['category']})"
        item_no = item["index"] + 1
        nxt = call("/api/answer", {"index": item["index"], "coordinate": cell, "client_id": f"demo-{args.seed}-{item_no}"})
        reveal = nxt.get("reveal")
        shown = f"; {reveal['answers']} earlier answers revealed" if reveal else ""
        print(f"item {item_no}/{item['total']}: {label} -> {cell}{shown}")
        item = nxt
    print(f"completed: code {item['code'] or '(none)'}, redirect {item['redirect'] or '(none)'}; "
          f"{study['words_per_participant']} words per participant")


if __name__ == "__main__":
    main()
