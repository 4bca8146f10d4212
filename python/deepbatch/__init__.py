"""deepbatch from Python: batch inference over GGUF models, shaped like vLLM's API.

    from deepbatch import LLM, SamplingParams

    llm = LLM(model="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    for out in llm.generate(["The capital of France is"], SamplingParams(max_tokens=16)):
        print(out.outputs[0].text)
"""
from .async_llm import AsyncLLM
from .llm import LLM
from .outputs import CompletionOutput, Logprob, RequestOutput
from .sampling_params import SamplingParams

__all__ = ["LLM", "AsyncLLM", "SamplingParams", "RequestOutput", "CompletionOutput", "Logprob"]
