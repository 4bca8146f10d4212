"""Tensor and expert parallelism with the ranks on separate network stacks (netns_hosts.py):
the batch of test_tensor_parallel.py through `deepbatch run --tensor-parallel-size 2` on the
default model, and through `--expert-parallel-size 2` on a test-sized random deepseek2
model in V3's form, each rank in its own network namespace, every byte between them over
veth devices and a bridge, must give the single-process tokens and log probabilities
exactly. Prints the bytes each host received per output token. Skips (exit 77) with the
reason when namespaces cannot be made (not root, no iproute2)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netns_hosts import NetnsHosts, unavailable  # noqa: E402
from test_collective_faults import check  # noqa: E402
from test_tensor_parallel import arg_parser, compare, read_outputs, write_requests  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deepseek"))
from deepseek_models import Scratch  # noqa: E402 - the random-weight deepseek2 models
import test_expert_parallel  # noqa: E402


def received_per_token(hosts, before, tokens, label):
    """The bytes each host's interface received since `before`; prints them per output token."""
    received = [a[0] - b[0] for a, b in zip(hosts.interface_bytes(), before)]
    print(f"{label}: bytes received over the links: {received} ({max(received) / max(tokens, 1) / 1e3:.1f} kB per "
          f"output token into the busier host, the prompts' traffic included)")
    check(min(received) > 0, f"{label}: no bytes crossed the links")


def main():
    args = arg_parser().parse_args()
    why = unavailable()
    if why:
        print(f"SKIPPED: {why}")
        return 77
    model = os.path.join(args.source_dir, "models/SmolLM2-135M-Instruct.Q4_1.gguf")
    check(os.path.exists(model), f"{model} is missing: run scripts/setup.sh")
    with tempfile.TemporaryDirectory() as workdir, NetnsHosts(2) as hosts:
        write_requests(os.path.join(workdir, "in.jsonl"), args.requests)
        args.mpirun_extra = hosts.mpirun_args(2)
        before = hosts.interface_bytes()
        tokens = compare(args, model, "SmolLM2-135M Q4_1 over network namespaces", 2, workdir)
        received_per_token(hosts, before, tokens, "tensor parallel")
        args.work_dir = None
        with Scratch(args, "expert_parallel_netns") as scratch:
            deepseek = scratch.write_model("deepseek-v3-mini")
            before = hosts.interface_bytes()  # the single-process run sends nothing over the links
            one_out = test_expert_parallel.compare(args, deepseek, "deepseek-v3-mini over network namespaces", 2,
                                                   workdir)
            tokens = sum(len(record[1]) for record in read_outputs(one_out).values())
            received_per_token(hosts, before, tokens, "expert parallel")
    print("tensor and expert parallel over network namespaces: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
