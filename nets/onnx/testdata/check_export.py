#!/usr/bin/python3
"""Outside check of a model Canopy exported (run by export_test.go).

usage: check_export.py MODEL.onnx CASE.json [MODEL.onnx CASE.json ...]

1. onnx.checker.check_model(full_check=True) and onnx.shape_inference with
   strict_mode: the model is valid ONNX and every shape is inferable.
2. A small numpy evaluator written here (float64, independent of Canopy's
   code) runs the graph on the inputs in CASE.json and compares with the
   outputs Canopy computed, within the tolerance given there.

CASE.json: {"batch": B, "inputs": {"obs": [...], ...}, "outputs":
{"policy": [...], "value": [...], ...}, "tol": 1e-5}: every graph input
flattened (its shape is [B] + the model's), and the outputs to compare. Prints one line per check; exits 1 on any
disagreement, 3 when python3-onnx or numpy is missing.
"""
import json
import sys

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper, shape_inference
except ImportError as e:  # the Go test skips with this reason
    print("missing python package:", e)
    sys.exit(3)


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv(x, w, b, a):
    if a.get("group", 1) != 1:
        raise ValueError("group != 1")
    n, c, h, wd = x.shape
    co, ci, kh, kw = w.shape
    pads = a.get("pads", [0, 0, 0, 0])
    st = a.get("strides", [1, 1])
    dl = a.get("dilations", [1, 1])
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]))
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - dl[0] * (kh - 1) - 1) // st[0] + 1
    ow = (xp.shape[3] - dl[1] * (kw - 1) - 1) // st[1] + 1
    out = np.zeros((n, co, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dl[0]:i * dl[0] + st[0] * (oh - 1) + 1:st[0],
                       j * dl[1]:j * dl[1] + st[1] * (ow - 1) + 1:st[1]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def run(model, feeds):
    env = {}
    for t in model.graph.initializer:
        v = numpy_helper.to_array(t)
        env[t.name] = v.astype(np.float64) if v.dtype == np.float32 else v
    env.update(feeds)
    for node in model.graph.node:
        a = attrs(node)
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Conv":
            y = conv(x[0], x[1], x[2] if len(x) > 2 else None, a)
        elif op == "BatchNormalization":
            s, bias, mean, var = (v.reshape(1, -1, 1, 1) for v in x[1:5])
            y = (x[0] - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * s + bias
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-x[0]))
        elif op == "Mul":
            y = x[0] * x[1]
        elif op == "Slice":
            sl = [slice(None)] * x[0].ndim
            for st, en, ax in zip(x[1], x[2], x[3]):
                sl[int(ax)] = slice(int(st), int(en))
            y = x[0][tuple(sl)]
        elif op == "Reshape":
            y = x[0].reshape([int(d) for d in x[1]])
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "Unsqueeze":
            y = np.expand_dims(x[0], tuple(int(d) for d in x[1]))
        elif op == "Split":
            cuts = np.cumsum([int(d) for d in x[1]])[:-1]
            for name, part in zip(node.output, np.split(x[0], cuts, axis=a.get("axis", 0))):
                env[name] = part
            continue
        elif op == "Gemm":
            A = x[0].T if a.get("transA", 0) else x[0]
            B = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * (A @ B)
            if len(x) > 2 and x[2] is not None:
                y = y + a.get("beta", 1.0) * x[2]
        else:
            raise ValueError("numpy evaluator: no op " + op)
        env[node.output[0]] = y
    return {o.name: env[o.name] for o in model.graph.output}


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        print(__doc__)
        return 2
    bad = 0
    for model_path, case_path in zip(args[::2], args[1::2]):
        print("== %s" % model_path)
        bad += check(model_path, case_path)
    return 1 if bad else 0


def check(model_path, case_path):
    model = onnx.load(model_path)
    with open(case_path) as f:
        case = json.load(f)
    onnx.checker.check_model(model, full_check=True)
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    shapes = {}
    for v in list(inferred.graph.value_info) + list(inferred.graph.output):
        dims = [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
        shapes[v.name] = dims
    missing = [o for n in model.graph.node for o in n.output if o not in shapes]
    if missing:
        print("shape inference left these values without a shape:", missing)
        return 1
    print("onnx.checker full_check and strict shape inference: ok (%d values)" % len(shapes))
    feeds = {}
    for inp in model.graph.input:
        dims = [d.dim_value for d in inp.type.tensor_type.shape.dim[1:]]
        x = np.array(case["inputs"][inp.name], dtype=np.float32).reshape([case["batch"]] + dims)
        feeds[inp.name] = x.astype(np.float64)
    got = run(model, feeds)
    bad = 0
    for name, want in case["outputs"].items():
        y = got[name].reshape(-1)
        w = np.array(want, dtype=np.float64)
        if y.shape != w.shape:
            print("%s: numpy gives %d values, expected %d FAIL" % (name, y.size, w.size))
            bad += 1
            continue
        err = np.max(np.abs(y - w))
        ok = err <= case["tol"]
        bad += not ok
        print("%s: max |numpy - expected| = %.3g (tol %g) %s" % (name, err, case["tol"], "ok" if ok else "FAIL"))
    return bad


if __name__ == "__main__":
    sys.exit(main())
