"""Derive the served model from the pinned export: int8 weights AND int8 arithmetic.

  python requantize.py SOURCE.onnx OUT.onnx

The export stores its weights as int8 but turns them back into float32 at load (Cast + Mul in front
of every MatMul), so onnxruntime multiplies in float32: about 75 ms of CPU per 256-token chunk here.
This script:

1. folds those Cast + Mul pairs into float32 weights (onnxruntime's basic, hardware-independent
   graph optimisation, saved to a file);
2. removes the NaN guard PyTorch's exporter puts after every attention softmax (IsNaN + Where). It
   only fires on a row whose keys are all masked, and every text here has [CLS] and [SEP] unmasked;
3. quantises every MatMul with a weight operand dynamically: int8 weights per output channel,
   uint8 activations scaled per call (MatMulInteger, which uses VNNI / AVX2 integer kernels).

Per-channel weights matter: per-tensor scales gave a median cosine of 0.93 to the export's vectors,
per-channel 0.994 (services/rag/embedding/README.md has the figures). Deterministic: the same
pinned inputs and tools give the same bytes, which provision.sh checks against the manifest.
Exit codes: 0 ok, 1 failure.
"""

import logging
import os
import sys
import tempfile

import onnx
import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic


def fold(source, out):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = out
    ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def drop_softmax_nan_guards(model):
    graph = model.graph
    producer = {output: node for node in graph.node for output in node.output}
    dropped, rename = [], {}
    for node in graph.node:
        if node.op_type != "Where":
            continue
        guard = producer.get(node.input[0])
        softmax = producer.get(node.input[2])
        if guard is None or softmax is None or guard.op_type != "IsNaN" or softmax.op_type != "Softmax":
            continue
        if guard.input[0] != node.input[2]:
            continue
        dropped += [node, guard]
        rename[node.output[0]] = node.input[2]
    for node in dropped:
        graph.node.remove(node)
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
    return len(dropped) // 2


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 1
    source, out = argv[1], argv[2]
    # quantize_dynamic advises shape pre-processing on the root logger; this graph needs none.
    logging.getLogger().setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out))) as work:
        folded = os.path.join(work, "folded.onnx")
        unguarded = os.path.join(work, "unguarded.onnx")
        fold(source, folded)
        model = onnx.load(folded)
        removed = drop_softmax_nan_guards(model)
        if removed == 0:
            print("requantize: found no softmax NaN guard; is this the pinned export?", file=sys.stderr)
            return 1
        onnx.save(model, unguarded)
        quantize_dynamic(unguarded, out, weight_type=QuantType.QInt8, per_channel=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
