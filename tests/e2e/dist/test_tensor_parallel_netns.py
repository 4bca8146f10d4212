"""Tensor parallelism with the ranks on separate network stacks (netns_hosts.py): the batch
of test_tensor_parallel.py through `deepbatch run --tensor-parallel-size 2`, each rank in
its own network namespace, every byte between them over veth devices and a bridge, must
give the single-process tokens and log probabilities exactly. Prints the bytes each host
received per output token. Skips (exit 77) with the reason when namespaces cannot be
made (not root, no iproute2)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netns_hosts import NetnsHosts, unavailable  # noqa: E402
from test_collective_faults import check  # noqa: E402
from test_tensor_parallel import arg_parser, compare, write_requests  # noqa: E402


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
        received = [a[0] - b[0] for a, b in zip(hosts.interface_bytes(), before)]
        print(f"bytes received over the links: {received} ({max(received) / max(tokens, 1) / 1e3:.1f} kB per "
              f"output token into the busier host, the prompts' traffic included)")
        check(min(received) > 0, "no bytes crossed the links")
    print("tensor parallel over network namespaces: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
