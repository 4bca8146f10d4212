"""What LLM.generate and LLM.chat return, shaped like vLLM's RequestOutput."""
from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class Logprob:
    logprob: float
    rank: Optional[int] = None  # 1 = the most likely token (None for a sampled token outside the top ones)
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: List[int]
    cumulative_logprob: Optional[float]  # with SamplingParams.logprobs set, else None
    logprobs: Optional[List[Dict[int, Logprob]]]  # per token: the sampled one and the top ones
    finish_reason: Optional[str]  # "stop", "length", "abort", ...
    stop_reason: Optional[str] = None  # the stop string or token id that ended it

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput] = field(default_factory=list)
    finished: bool = True
