#!/usr/bin/env python3
"""Regenerates data/clip/open_clip_pretrained.json: open_clip's pretrained table (model -> tag -> Hub file, preprocessing).

Usage: scripts/open_clip_pretrained.py OPEN_CLIP_SRC_DIR COMMIT > data/clip/open_clip_pretrained.json

OPEN_CLIP_SRC_DIR is open_clip's src/open_clip/ in a local checkout of mlfoundations/open_clip and COMMIT the commit
it is (recorded in the file). The script reads pretrained.py and constants.py as text and evaluates only their
literal assignments (dicts, tuples, strings, numbers, the constants, and calls of the module's small `_*cfg(url, hf_hub,
**kwargs)` helpers, whose returned dict literal is evaluated with the call's arguments); it imports and runs none of
open_clip. Like pretrained.py it adds `<model>-quickgelu` for every model with quick_gelu tags. Needs only the Python
standard library.
"""
import ast
import json
import os
import sys


class Evaluator:
    def __init__(self, constants):
        self.names = dict(constants)
        self.helpers = {}

    def helper(self, fn):
        """A module-level `def _xcfg(url='', hf_hub='', **kwargs): return {...}`."""
        body = [s for s in fn.body if not isinstance(s, ast.Expr)]
        if len(body) != 1 or not isinstance(body[0], ast.Return):
            return
        defaults = dict(zip([a.arg for a in fn.args.args][-len(fn.args.defaults):],
                            [self.eval(d) for d in fn.args.defaults]))
        self.helpers[fn.name] = (defaults, fn.args.kwarg.arg if fn.args.kwarg else None, body[0].value)

    def call(self, node):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        if name == "dict" and not node.args:
            return kwargs
        if name in self.helpers:
            defaults, kwarg_name, returned = self.helpers[name]
            scope = dict(defaults)
            params = list(defaults)
            for i, a in enumerate(node.args):
                scope[params[i]] = self.eval(a)
            extra = {k: v for k, v in kwargs.items() if k not in defaults}
            scope.update({k: v for k, v in kwargs.items() if k in defaults})
            if kwarg_name:
                scope[kwarg_name] = extra
            saved = self.names
            self.names = {**saved, **scope}
            try:
                return self.eval(returned)
            finally:
                self.names = saved
        raise ValueError(f"unsupported call at line {node.lineno}")

    def eval(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Tuple, ast.List)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.Name):
            return self.names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.eval(node.operand)
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    out.update(self.eval(v))
                else:
                    out[self.eval(k)] = self.eval(v)
            return out
        if isinstance(node, ast.Call):
            return self.call(node)
        raise ValueError(f"unsupported expression at line {node.lineno}")


def literal_assignments(path, evaluator):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    values = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            evaluator.helper(stmt)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            values[name] = evaluator.eval(stmt.value)  # anything but a literal stops the script
            evaluator.names[name] = values[name]
    return values


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, commit = sys.argv[1], sys.argv[2]
    constants = literal_assignments(os.path.join(src, "constants.py"), Evaluator({}))
    evaluator = Evaluator(constants)
    table = literal_assignments(os.path.join(src, "pretrained.py"), evaluator)["_PRETRAINED"]
    quickgelu = {}
    for model, tags in table.items():
        tagged = {t: cfg for t, cfg in tags.items() if cfg.get("quick_gelu", False)}
        if tagged:
            quickgelu[model + "-quickgelu"] = tagged
    table.update(quickgelu)
    json.dump({"source": f"mlfoundations/open_clip@{commit} src/open_clip/pretrained.py (MIT License, data/clip/LICENSE)",
               "models": table}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
