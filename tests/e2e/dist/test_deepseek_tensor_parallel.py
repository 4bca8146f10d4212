"""Tensor parallelism for deepseek2, alone and with expert parallelism, under real mpirun
jobs: the batch of mixed completions requests of the tensor- and expert-parallel tests run
by one process, by 2 ranks (--tensor-parallel-size 2: each rank holds 2 of the 4 heads
and half of the dense and shared-expert FFN columns) and by 4 ranks (--tensor-parallel-size
2 x --expert-parallel-size 2: 4 + 4 routed experts, each half split by heads) must give
the same greedy tokens and log probabilities on test-sized random deepseek2 models in V2's
and V3's form (gather joins and the expert combine sum in one process's order). `serve` at
2 x 2 ranks, and at 2 tensor ranks alone on the V2-form model, must answer with the same text
and stop cleanly. Sizes the model cannot take
must fail fast with a clear message."""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "deepseek"))

from deepseek_models import Scratch  # noqa: E402 - the random-weight deepseek2 models
from test_expert_parallel import compare, expect_refused, serve_matches_run  # noqa: E402
from test_tensor_parallel import arg_parser, write_requests  # noqa: E402

TP2 = ("--tensor-parallel-size", "2")
TP2_EP2 = (*TP2, "--expert-parallel-size", "2")


def tp_reports(tp, ep):
    """The stderr lines of a T x E job: each tensor rank's heads (4 heads), each expert rank's experts (8)."""
    lines = [f"tensor parallel: rank {t} of {tp} holds attention heads [{t * 4 // tp}, {(t + 1) * 4 // tp}) of 4"
             for t in range(tp)]
    if ep > 1:
        lines += [f"expert parallel: rank {e} of {ep} holds routed experts [{e * 8 // ep}, {(e + 1) * 8 // ep}) of 8"
                  for e in range(ep)]
    return lines + [f"{'tensor and expert' if ep > 1 else 'tensor'} parallel: {tp * ep} ranks; KV pool"]


def main():
    ap = arg_parser()
    args = ap.parse_args()
    args.work_dir = None
    with Scratch(args, "deepseek_tensor_parallel") as scratch, tempfile.TemporaryDirectory() as workdir:
        write_requests(os.path.join(workdir, "in.jsonl"), args.requests)
        models = {}
        for shape in ("deepseek-v2-mini", "deepseek-v3-mini"):
            model = models[shape] = scratch.write_model(shape)
            one = compare(args, model, shape, 2, workdir, TP2, tp_reports(2, 1))
            compare(args, model, shape, 4, workdir, TP2_EP2, tp_reports(2, 2), one_out=one)
            if shape == "deepseek-v2-mini":
                serve_matches_run(args, model, 1, one, workdir, split_args=TP2, np=2)
            serve_matches_run(args, model, 2, one, workdir, split_args=TP2_EP2, np=4)
        expect_refused(args, models["deepseek-v2-mini"], 5, ("--tensor-parallel-size", "5"),
                       "--tensor-parallel-size 5 is above the model's 4 attention heads", workdir,
                       "--tensor-parallel-size 5 on 4 heads")
    print("deepseek tensor parallel: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
